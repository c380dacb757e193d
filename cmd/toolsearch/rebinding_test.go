package main

import (
	"context"
	"io"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestMCPServeRefusesForeignHost: a loopback front without a token answers a request whose Host is not this
// machine's (a page that rebound its own name to 127.0.0.1) with 403, on every path it serves, and the same
// requests addressed to localhost or 127.0.0.1 as usual.
func TestMCPServeRefusesForeignHost(t *testing.T) {
	cfg := upstreamConfig(t, "tools")
	for _, k := range []string{"OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_TRACES_EXPORTER", "OTEL_METRICS_EXPORTER"} {
		t.Setenv(k, "")
	}
	t.Setenv(tokenEnv, "")
	ctx, cancel := context.WithCancel(context.Background())
	errb := &lockedBuffer{}
	exited := make(chan int, 1)
	go func() {
		exited <- run(ctx, []string{"mcp", "serve", "--config", cfg, "--http", "127.0.0.1:0", "--metrics"},
			strings.NewReader(""), &lockedBuffer{}, errb)
	}()
	t.Cleanup(func() {
		cancel()
		<-exited
	})
	addr := regexp.MustCompile(`at (http://127\.0\.0\.1:(\d+))/mcp`)
	require.Eventually(t, func() bool { return addr.MatchString(errb.String()) }, time.Minute, 20*time.Millisecond, errb.String())
	m := addr.FindStringSubmatch(errb.String())
	base, port := m[1], m[2]

	get := func(method, path, host string) (int, string) {
		req, err := http.NewRequest(method, base+path, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ping"}`))
		require.NoError(t, err)
		req.Host = host
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		res, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		defer res.Body.Close()
		body, _ := io.ReadAll(res.Body)
		return res.StatusCode, string(body)
	}
	require.Eventually(t, func() bool {
		code, _ := get(http.MethodGet, "/readyz", "127.0.0.1:"+port)
		return code == http.StatusOK
	}, time.Minute, 50*time.Millisecond)
	for _, path := range []string{"/readyz", "/metrics", "/healthz", "/mcp", "/nothing-here"} {
		method := http.MethodGet
		if path == "/mcp" {
			method = http.MethodPost
		}
		for _, host := range []string{"evil.example", "evil.example:" + port, "127.0.0.1.evil.example:" + port, "localhost.evil.example"} {
			code, body := get(method, path, host)
			assert.Equal(t, http.StatusForbidden, code, "%s %s with Host %s: %s", method, path, host, body)
			assert.NotContains(t, body, "github", "nothing of the servers is told")
			assert.Contains(t, body, "addressed to this machine", "our own check refused it, not only the SDK's")
		}
		for _, host := range []string{"localhost:" + port, "127.0.0.1:" + port} {
			code, body := get(method, path, host)
			assert.NotEqual(t, http.StatusForbidden, code, "%s %s with Host %s: %s", method, path, host, body)
		}
	}
	code, body := get(http.MethodGet, "/metrics", "localhost:"+port)
	assert.Equal(t, http.StatusOK, code, body)
}
