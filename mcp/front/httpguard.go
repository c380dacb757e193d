package front

import (
	"crypto/sha256"
	"crypto/subtle"
	"net"
	"net/http"
	"net/url"
	"strings"
)

// guard lets a request reach the front's HTTP handler only when it may: a browser origin that is neither
// loopback nor allowed gets 403 (the MCP transport asks servers to validate Origin, so that a web page cannot
// drive a local server through the user's browser), and, with a token set, a request without
// "Authorization: Bearer <token>" gets 401. The token is compared by its SHA-256 in constant time, so neither
// its bytes nor its length show in the timing; it never appears in a response or a log.
func guard(next http.Handler, token string, allowedOrigins []string) http.Handler {
	allowed := map[string]bool{}
	for _, o := range allowedOrigins {
		allowed[strings.ToLower(strings.TrimRight(o, "/"))] = true
	}
	want := sha256.Sum256([]byte(token))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if origin := r.Header.Get("Origin"); origin != "" && !originAllowed(origin, allowed) {
			http.Error(w, "Forbidden: requests from this origin are not allowed", http.StatusForbidden)
			return
		}
		if token != "" {
			got, ok := bearerToken(r.Header.Get("Authorization"))
			sum := sha256.Sum256([]byte(got))
			if subtle.ConstantTimeCompare(sum[:], want[:]) != 1 || !ok {
				w.Header().Set("WWW-Authenticate", `Bearer realm="toolsearch"`)
				http.Error(w, "Unauthorized: send Authorization: Bearer <token>", http.StatusUnauthorized)
				return
			}
		}
		next.ServeHTTP(w, r)
	})
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
