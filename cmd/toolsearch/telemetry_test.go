package main

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestMCPServeHealthMetricsAndStatus serves over HTTP with a token and --metrics, and reads /healthz, /readyz and
// /metrics, and `mcp status`, from the outside.
func TestMCPServeHealthMetricsAndStatus(t *testing.T) {
	cfg := upstreamConfig(t, "tools")
	for _, k := range []string{"OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_TRACES_EXPORTER", "OTEL_METRICS_EXPORTER"} {
		t.Setenv(k, "")
	}
	const token = "a-long-random-secret-for-the-test"
	t.Setenv(tokenEnv, token)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	errb := &lockedBuffer{}
	exited := make(chan int, 1)
	go func() {
		exited <- run(ctx, []string{"mcp", "serve", "--config", cfg, "--http", "127.0.0.1:0", "--metrics"},
			strings.NewReader(""), &lockedBuffer{}, errb)
	}()
	addr := regexp.MustCompile(`at (http://127\.0\.0\.1:\d+)/mcp`)
	require.Eventually(t, func() bool { return addr.MatchString(errb.String()) }, time.Minute, 20*time.Millisecond, errb.String())
	base := addr.FindStringSubmatch(errb.String())[1]

	get := func(path string, auth bool) (int, string) {
		req, err := http.NewRequest(http.MethodGet, base+path, nil)
		require.NoError(t, err)
		if auth {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		res, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		defer res.Body.Close()
		body, _ := io.ReadAll(res.Body)
		return res.StatusCode, string(body)
	}
	code, body := get("/healthz", false)
	assert.Equal(t, http.StatusOK, code, body)
	code, _ = get("/readyz", false)
	assert.Equal(t, http.StatusUnauthorized, code)
	code, _ = get("/metrics", false)
	assert.Equal(t, http.StatusUnauthorized, code, "/metrics is behind the same token as /mcp")

	require.Eventually(t, func() bool {
		code, _ := get("/readyz", true)
		return code == http.StatusOK
	}, time.Minute, 50*time.Millisecond)
	code, body = get("/readyz", true)
	require.Equal(t, http.StatusOK, code)
	var h struct {
		Ready   bool `json:"ready"`
		Servers []struct {
			Name, State string
			Tools       int
		} `json:"servers"`
	}
	require.NoError(t, json.Unmarshal([]byte(body), &h))
	assert.True(t, h.Ready)
	require.Len(t, h.Servers, 2)
	assert.Equal(t, "github", h.Servers[0].Name)
	assert.Equal(t, "ready", h.Servers[0].State)
	assert.Equal(t, 2, h.Servers[0].Tools)

	code, body = get("/metrics", true)
	require.Equal(t, http.StatusOK, code)
	assert.Contains(t, body, `toolsearch_mcp_servers{toolsearch_mcp_state="ready"} 2`)
	assert.Contains(t, body, "# TYPE toolsearch_mcp_start_duration_seconds histogram")

	out := &lockedBuffer{}
	serr := &lockedBuffer{}
	assert.Equal(t, exitOK, run(ctx, []string{"mcp", "status", "--url", base + "/mcp"}, strings.NewReader(""), out, serr), serr.String())
	assert.Contains(t, out.String(), base+": ready (tools mode, 2 server(s))")
	assert.Regexp(t, `github\s+ready\s+2 tool\(s\)`, out.String())
	assert.Regexp(t, `mail\s+ready`, out.String())

	t.Setenv(tokenEnv, "")
	serr = &lockedBuffer{}
	assert.Equal(t, exitFailure, run(ctx, []string{"mcp", "status", "--url", base}, strings.NewReader(""), &lockedBuffer{}, serr))
	assert.Contains(t, serr.String(), "wants its bearer token")

	cancel()
	select {
	case code := <-exited:
		assert.Equal(t, exitOK, code, errb.String())
	case <-time.After(30 * time.Second):
		t.Fatal("serve did not stop when its context ended")
	}
	assert.NotContains(t, errb.String(), token)
}

func TestMCPStatusUnreachableAndUsage(t *testing.T) {
	code, _, stderr := runCLI(t, "", "mcp", "status", "--url", "http://127.0.0.1:1")
	assert.Equal(t, exitFailure, code)
	assert.Contains(t, stderr, "cannot be reached")
	code, _, stderr = runCLI(t, "", "mcp", "status", "extra")
	assert.Equal(t, exitUsage, code)
	assert.Contains(t, stderr, `unexpected argument "extra"`)
	code, _, stderr = runCLI(t, "", "mcp", "serve", "--metrics")
	assert.Equal(t, exitUsage, code)
	assert.Contains(t, stderr, "needs --http")
}

func TestMCPServeRefusesAnUnsupportedExporter(t *testing.T) {
	cfg := upstreamConfig(t, "tools")
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:1")
	t.Setenv("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc")
	code, _, stderr := runCLI(t, "", "mcp", "serve", "--config", cfg)
	assert.Equal(t, exitFailure, code)
	assert.Contains(t, stderr, "http/protobuf")
}
