package front

import (
	"context"
	"net"
	"net/http"
	"net/url"
	"strings"
)

// guard lets a request reach the front's HTTP handler only when it may: a browser origin that is neither
// loopback nor allowed gets 403 (the MCP transport asks servers to validate Origin, so that a web page cannot
// drive a local server through the user's browser), and, with tokens set (BearerToken, Profiles), a request
// without "Authorization: Bearer <one of them>" gets 401. Tokens are compared by their SHA-256 in constant time
// (see tokenSet); none ever appears in a response or a log. The token a request presented reaches the SDK as its
// identity (withIdentity), which fixes a session's profile.
func guard(next http.Handler, tokens *tokenSet, allowedOrigins []string) http.Handler {
	allowed := map[string]bool{}
	for _, o := range allowedOrigins {
		allowed[strings.ToLower(strings.TrimRight(o, "/"))] = true
	}
	if tokens.required() {
		next = withIdentity(next)
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if origin := r.Header.Get("Origin"); origin != "" && !originAllowed(origin, allowed) {
			http.Error(w, "Forbidden: requests from this origin are not allowed", http.StatusForbidden)
			return
		}
		if tokens.required() {
			got, ok := bearerToken(r.Header.Get("Authorization"))
			entry, found := tokens.match(got)
			if !ok || !found {
				w.Header().Set("WWW-Authenticate", `Bearer realm="toolsearch"`)
				http.Error(w, "Unauthorized: send Authorization: Bearer <token>", http.StatusUnauthorized)
				return
			}
			r = r.WithContext(context.WithValue(r.Context(), profileKey{}, entry))
		}
		next.ServeHTTP(w, r)
	})
}

// GuardHost puts h behind the front's DNS-rebinding check: a request that reached a loopback address with a
// Host that is neither loopback nor in ServerOptions.AllowedHosts gets 403. Handler, HealthHandler and Protect
// apply it already; `mcp serve` wraps its whole mux in it too, so that a path added later is covered. A request
// not served by net/http's server (no local address in its context: a handler called directly) is not checked.
func (s *Server) GuardHost(h http.Handler) http.Handler {
	allowed := map[string]bool{}
	for _, name := range s.opts.AllowedHosts {
		allowed[strings.ToLower(strings.Trim(strings.TrimSpace(name), "[]"))] = true
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if rebound(r, allowed) {
			http.Error(w, "Forbidden: this server answers only requests addressed to this machine (Host: localhost "+
				"or a loopback address)", http.StatusForbidden)
			return
		}
		h.ServeHTTP(w, r)
	})
}

// rebound reports a request that reached a loopback address under a name that is not loopback's: what a page
// sends after rebinding its own name to 127.0.0.1 (the browser keeps the page's name as Host, and its Origin is
// the page's own, so an Origin check alone passes a same-origin fetch).
func rebound(r *http.Request, allowed map[string]bool) bool {
	local, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr)
	if !ok {
		return false
	}
	host, _, err := net.SplitHostPort(local.String())
	if ip := net.ParseIP(host); err != nil || ip == nil || !ip.IsLoopback() {
		return false
	}
	name := r.Host
	if h, _, err := net.SplitHostPort(name); err == nil {
		name = h
	}
	name = strings.ToLower(strings.Trim(name, "[]"))
	return !isLoopbackHost(name) && !allowed[name]
}

// bearerToken reads "Bearer <token>" (the scheme is case-insensitive).
func bearerToken(header string) (string, bool) {
	scheme, token, ok := strings.Cut(header, " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return "", false
	}
	token = strings.TrimSpace(token)
	return token, token != ""
}

// originAllowed accepts loopback origins (a page served from this machine) and the configured ones.
func originAllowed(origin string, allowed map[string]bool) bool {
	if allowed[strings.ToLower(origin)] {
		return true
	}
	u, err := url.Parse(origin)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") {
		return false
	}
	return isLoopbackHost(u.Hostname())
}

func isLoopbackHost(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// IsLoopbackAddr reports whether a listen address ("127.0.0.1:8931", "[::1]:0", "localhost:8931") can be reached
// only from this machine. An address without a host (":8931") listens on every interface, so it is not.
func IsLoopbackAddr(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	return isLoopbackHost(host)
}
