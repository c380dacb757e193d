package front

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolsearch/toolsearch/runtime"
)

// TestGuardHostRefusesRebinding: on a loopback listener, Handler, HealthHandler (both paths) and Protect refuse a
// Host that is not loopback's with 403, before the SDK or anything else reads the request; AllowedHosts admits a
// reverse proxy's name.
func TestGuardHostRefusesRebinding(t *testing.T) {
	src := startSource(t, inMemoryConfig("repo"), fastOptions(nil), map[string]dialFunc{"repo": newFakeServer(0).dial})
	rt := newTestRuntime(t, runtime.ModeOff)
	srv, err := NewServer(t.Context(), rt, src, &ServerOptions{AllowedHosts: []string{"proxy.internal"}})
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, srv.Close()) })
	mux := http.NewServeMux()
	mux.Handle("/mcp", srv.Handler())
	mux.Handle("/healthz", srv.HealthHandler())
	mux.Handle("/readyz", srv.HealthHandler())
	mux.Handle("/metrics", srv.Protect(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		_, _ = io.WriteString(w, "tool_calls_total 1")
	})))
	ts := httptest.NewServer(mux) // listens on 127.0.0.1
	t.Cleanup(ts.Close)

	status := func(path, host string) int {
		req, err := http.NewRequest(http.MethodGet, ts.URL+path, nil)
		require.NoError(t, err)
		req.Host = host
		res, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		defer res.Body.Close()
		body, _ := io.ReadAll(res.Body)
		if res.StatusCode == http.StatusForbidden {
			assert.True(t, strings.Contains(string(body), "addressed to this machine"), "%s", body)
		}
		return res.StatusCode
	}
	for _, path := range []string{"/mcp", "/healthz", "/readyz", "/metrics"} {
		for _, host := range []string{"evil.example", "evil.example:80", "127.0.0.1.nip.io", "[::2]:1"} {
			assert.Equal(t, http.StatusForbidden, status(path, host), "%s with Host %s", path, host)
		}
		for _, host := range []string{"127.0.0.1", "localhost:9", "[::1]:9", "proxy.internal:443"} {
			assert.NotEqual(t, http.StatusForbidden, status(path, host), "%s with Host %s", path, host)
		}
	}
	assert.Equal(t, http.StatusOK, status("/readyz", "localhost"))
}
