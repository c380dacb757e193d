package front

import (
	"encoding/json"
	"net/http"
	"time"

	"github.com/toolsearch/toolsearch/mcp/internal/seam"
)

// Health is what /readyz answers: whether the front is ready, and where each upstream server is.
type Health struct {
	// Ready is true when every server is ready (or idle: a lazy server's tools come from its schema cache and
	// it starts at its first call), so that every tool is there to be called.
	Ready bool `json:"ready"`
	// Mode is the runtime's mode (code, tools, directory or off).
	Mode    string         `json:"mode"`
	Servers []ServerHealth `json:"servers"`
}

// ServerHealth is one upstream server in a Health.
type ServerHealth struct {
	Name  string `json:"name"`
	State string `json:"state"` // idle, starting, ready, failed, retrying or closed
	Tools int    `json:"tools"`
	// Reason says why a server that is not ready is not, or why its last attempt failed.
	Reason    string     `json:"reason,omitempty"`
	Since     time.Time  `json:"since"`
	NextRetry *time.Time `json:"nextRetry,omitempty"`
}

// Health reports where every upstream server is now.
func (s *Server) Health() Health {
	h := Health{Ready: true, Mode: string(s.rt.Mode()), Servers: []ServerHealth{}}
	if s.up == nil {
		return h
	}
	for _, st := range s.up.Status().Servers {
		sh := ServerHealth{Name: st.Server.Name(), State: string(st.State), Tools: st.Tools, Since: st.Since.UTC()}
		if st.State != seam.StateReady {
			sh.Reason = st.Reason
		}
		if !st.NextRetry.IsZero() && st.State == seam.StateFailed {
			next := st.NextRetry.UTC()
			sh.NextRetry = &next
		}
		if st.State != seam.StateReady && st.State != seam.StateIdle {
			h.Ready = false
		}
		h.Servers = append(h.Servers, sh)
	}
	return h
}

// HealthHandler serves GET /healthz, which answers 200 {"status":"ok"} while the process serves, and GET
// /readyz, which answers the Health as JSON: 200 when Ready, 503 otherwise. Mount it at both paths; other
// paths are 404. /healthz asks for nothing, so that a probe without credentials can reach it; /readyz names the
// servers and why they failed, so it takes the same bearer token and origin checks as Handler (see Protect).
func (s *Server) HealthHandler() http.Handler {
	ready := s.Protect(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := s.Health()
		status := http.StatusOK
		if !h.Ready {
			status = http.StatusServiceUnavailable
		}
		writeJSON(w, status, h)
	}))
	return s.GuardHost(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
			return
		}
		switch r.URL.Path {
		case "/healthz":
			writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
		case "/readyz":
			ready.ServeHTTP(w, r)
		default:
			http.NotFound(w, r)
		}
	}))
}

// Protect puts h behind the checks of Handler's own: no browser origin that is not allowed, and
// ServerOptions.BearerToken when one is set. A profile's token never opens it: /metrics and /readyz name every
// server and tool, including those a profile may not see, so with Profiles and no BearerToken every request is
// refused (401). `mcp serve` serves /metrics and /readyz through it.
func (s *Server) Protect(h http.Handler) http.Handler {
	if len(s.opts.Profiles) > 0 && s.opts.BearerToken == "" {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("WWW-Authenticate", "Bearer")
			http.Error(w, "Unauthorized: this endpoint takes the server's own bearer token, which is not set; "+
				"a profile's token does not open it", http.StatusUnauthorized)
		})
	}
	return s.GuardHost(guard(h, newTokenSet(s.opts.BearerToken, nil), s.opts.AllowedOrigins))
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}
