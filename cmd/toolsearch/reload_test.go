package main

import (
	"context"
	"fmt"
	"os"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A server whose entry is broken fails; fixing its entry in the file restarts it with the new entry, while mcp
// serve and its client keep running; `toolsearch mcp restart NAME` retries a server at once over HTTP.
func TestMCPServeReloadsAChangedEntryAndRestartsByName(t *testing.T) {
	entries := func(github string) string {
		return fmt.Sprintf(`{
  mcpServers: {
    github: %s,
    mail: {command: %q, args: ["-test.run=^$"], env: {%q: "mail"}},
  },
  tools: {toolSearch: {mode: "tools"}},
}`, github, os.Args[0], upstreamEnv)
	}
	broken := `{command: "/nonexistent/github-mcp-server"}`
	fixed := fmt.Sprintf(`{command: %q, args: ["-test.run=^$"], env: {%q: "github"}}`, os.Args[0], upstreamEnv)
	cfg := writeFile(t, "config.json", entries(broken))

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	stderr := &lockedBuffer{}
	exited := make(chan int, 1)
	go func() {
		exited <- run(ctx, []string{"mcp", "serve", "--config", cfg, "--http", "127.0.0.1:0"}, strings.NewReader(""), &lockedBuffer{}, stderr)
	}()
	addr := regexp.MustCompile(`at (http://127\.0\.0\.1:\d+)/mcp`)
	waitFor := func(what string, n int) {
		t.Helper()
		require.Eventually(t, func() bool { return strings.Count(stderr.String(), what) >= n }, time.Minute,
			20*time.Millisecond, "%q %d time(s) on stderr: %s", what, n, stderr.String())
	}
	waitFor("mcp: github: failed: start: the program \"/nonexistent/github-mcp-server\" (command) cannot be run", 1)
	waitFor("mcp: mail: ready", 1)
	base := addr.FindStringSubmatch(stderr.String())[1]

	require.NoError(t, os.WriteFile(cfg, []byte(entries(fixed)), 0o600))
	waitFor("re-read "+cfg+" (it changed): restarting github", 1)
	waitFor("mcp: github: ready", 1)
	assert.Equal(t, 1, strings.Count(stderr.String(), "mcp: mail: ready"), "the unchanged server was left alone")

	var out, errOut lockedBuffer
	require.Equal(t, exitOK, run(ctx, []string{"mcp", "restart", "--url", base, "mail"}, strings.NewReader(""), &out, &errOut), errOut.String())
	assert.Equal(t, "mail: restarting\n", out.String())
	waitFor("mcp: mail: ready", 2)

	// SIGHUP re-reads the file too (mcp serve registered for it before it said it serves).
	require.NoError(t, syscall.Kill(os.Getpid(), syscall.SIGHUP))
	waitFor("re-read "+cfg+" (SIGHUP): no server's entry changed", 1)

	errOut = lockedBuffer{}
	assert.Equal(t, exitFailure, run(ctx, []string{"mcp", "restart", "--url", base, "gitlab"}, strings.NewReader(""), &out, &errOut))
	assert.Contains(t, errOut.String(), `mcp server "gitlab": restart: no such server`)

	cancel()
	select {
	case code := <-exited:
		assert.Equal(t, exitOK, code, stderr.String())
	case <-time.After(30 * time.Second):
		t.Fatal("serve did not stop when its context ended")
	}
}
