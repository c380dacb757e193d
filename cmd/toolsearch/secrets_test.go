package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolsearch/toolsearch/catalog"
	"github.com/toolsearch/toolsearch/mcp/front"
	"github.com/toolsearch/toolsearch/mcp/upstream"
	"github.com/toolsearch/toolsearch/runtime"
)

// secretUpstream is a streamable HTTP MCP server that wants "Bearer <token>" and quotes it wherever it can: in
// its tool's description and result, and in the body of its 401 when the token is wrong.
func secretUpstream(t *testing.T, token string) string {
	ctx := context.Background()
	rt, err := runtime.New(ctx, &runtime.Options{Config: runtime.Config{Mode: runtime.ModeOff}})
	require.NoError(t, err)
	whoami := catalog.Tool{Source: catalog.SourceOpenClaw, SourceName: "remote", Name: "whoami",
		Description: "Tells who you are: you authenticate as Bearer " + token,
		Parameters:  json.RawMessage(`{"type":"object"}`),
		Handler: catalog.HandlerFunc(func(context.Context, json.RawMessage) (*catalog.Result, error) {
			return &catalog.Result{Content: []catalog.Content{{Type: "text", Text: "you are Bearer " + token}}}, nil
		})}
	srv, err := front.NewServer(ctx, rt, nil, &front.ServerOptions{Name: "remote", Tools: []catalog.Tool{whoami}})
	require.NoError(t, err)
	handler := srv.Handler()
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if got := r.Header.Get("Authorization"); got != "Bearer "+token {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusUnauthorized)
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":1,"error":{"code":-32001,"message":"unknown credentials: %s"}}`, got)
			return
		}
		handler.ServeHTTP(w, r)
	}))
	t.Cleanup(func() {
		ts.Close()
		srv.Close()
		rt.Close(ctx)
	})
	return ts.URL
}

// A header secret reaches its server and nothing any command prints: search, describe, call, config get and
// set, and mcp serve with --verbose, whatever the server echoes back.
func TestHeaderSecretsNeverPrinted(t *testing.T) {
	const token = "ghp_CliSecretToken0123456789"
	const wrong = "ghp_CliWrongToken9876543210"
	const literal = "sk-literal-key-0123456789"
	const other = "sk-other-key-0123456789"
	t.Setenv("TS_CLI_TOKEN", token)
	t.Setenv("TS_CLI_WRONG", wrong)
	url := secretUpstream(t, token)
	cfg := writeFile(t, "remote.json", fmt.Sprintf(`{
  "mcpServers": {
    "remote": {"url": %q, "headers": {"Authorization": "Bearer ${TS_CLI_TOKEN}", "X-Api-Key": %q}},
    "wrong": {"url": %[1]q, "headers": {"Authorization": "Bearer ${TS_CLI_WRONG}"}},
  },
  "tools": {"toolSearch": {"mode": "tools"}},
}`, url, literal))

	var printed strings.Builder
	runAll := func(stdin string, args ...string) (int, string) {
		code, stdout, stderr := runCLI(t, stdin, args...)
		printed.WriteString(stdout + stderr)
		return code, stdout + stderr
	}
	code, out := runAll("", "search", "--mcp-config", cfg, "whoami")
	require.Equal(t, exitOK, code, out)
	assert.Contains(t, out, "mcp:remote:whoami")
	assert.Contains(t, out, `mcp server "wrong" is unavailable`)
	code, out = runAll("", "describe", "--mcp-config", cfg, "mcp:remote:whoami")
	require.Equal(t, exitOK, code, out)
	assert.Contains(t, out, "you authenticate as "+upstream.Redacted)
	code, out = runAll("", "call", "--mcp-config", cfg, "mcp:remote:whoami")
	require.Equal(t, exitOK, code, out)
	assert.Contains(t, out, "you are "+upstream.Redacted)

	code, out = runAll("", "config", "get", "--config", cfg, "mcpServers")
	require.Equal(t, exitOK, code, out)
	assert.Contains(t, out, `"Bearer ${TS_CLI_TOKEN}"`, "an environment reference is shown as written")
	code, out = runAll("", "config", "get", "--config", cfg, "mcpServers.remote.headers.X-Api-Key")
	require.Equal(t, exitOK, code, out)
	assert.Equal(t, `"`+upstream.Redacted+`"`, strings.TrimSpace(out))
	code, out = runAll("", "config", "set", "--config", cfg, "mcpServers.remote.headers.X-Other", other)
	require.Equal(t, exitOK, code, out)

	// mcp serve, verbose: every run and call is logged, the servers' stderr forwarded.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	stderr := &lockedBuffer{}
	exited := make(chan int, 1)
	go func() {
		exited <- run(ctx, []string{"mcp", "serve", "--config", cfg, "--http", "127.0.0.1:0", "--verbose"},
			strings.NewReader(""), &lockedBuffer{}, stderr)
	}()
	addr := regexp.MustCompile(`(http://127\.0\.0\.1:\d+/mcp)`)
	require.Eventually(t, func() bool { return addr.MatchString(stderr.String()) }, time.Minute, 20*time.Millisecond,
		"no address on stderr: %s", stderr.String())
	_, tools := client(t, upstream.ServerConfig{URL: addr.FindStringSubmatch(stderr.String())[1]})
	for _, c := range []struct {
		tool string
		args map[string]any
	}{
		{"tool_search", map[string]any{"query": "whoami"}},
		{"tool_describe", map[string]any{"id": "mcp:remote:whoami"}},
		{"tool_call", map[string]any{"id": "mcp:remote:whoami"}},
	} {
		text, isErr := callTool(t, tools, c.tool, c.args)
		require.False(t, isErr, text)
		printed.WriteString(text)
	}
	cancel()
	select {
	case <-exited:
	case <-time.After(30 * time.Second):
		t.Fatal("serve did not stop")
	}
	printed.WriteString(stderr.String())

	require.Contains(t, printed.String(), upstream.Redacted)
	for _, secret := range []string{token, wrong, literal, other} {
		assert.NotContains(t, printed.String(), secret)
	}
}
