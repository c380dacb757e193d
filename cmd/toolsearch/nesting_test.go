package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolsearch/toolsearch/mcp/upstream"
)

// A config that starts toolsearch inside itself: directly (the binary itself, skipped before it starts) and
// through a shell script (which only the nesting marker can see). Each command ends promptly with the healthy
// server's tools and says what it refused; without the marker the wrapped one would start toolsearch inside
// toolsearch without end.
func TestConfigThatStartsToolsearchInsideItself(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	requireShell(t)
	dir := t.TempDir()
	bin := filepath.Join(dir, "toolsearch")
	out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput()
	require.NoError(t, err, "go build: %s", out)
	mail := fmt.Sprintf(`"mail": {"command": %q, "args": ["-test.run=^$"], "env": {%q: "mail"}}`, os.Args[0], upstreamEnv)

	direct := filepath.Join(dir, "direct.json")
	require.NoError(t, os.WriteFile(direct, fmt.Appendf(nil,
		`{"mcpServers": {"self": {"command": %q, "args": ["mcp", "serve", "--config", %q]}, %s}}`, bin, direct, mail), 0o600))
	wrapped := filepath.Join(dir, "wrapped.json")
	script := filepath.Join(dir, "toolsearch-wrapper.sh")
	require.NoError(t, os.WriteFile(script, fmt.Appendf(nil, "#!/bin/sh\nexec %q mcp serve --config %q\n", bin, wrapped), 0o700))
	require.NoError(t, os.WriteFile(wrapped, fmt.Appendf(nil,
		`{"mcpServers": {"wrapped": {"command": %q}, %s}}`, script, mail), 0o600))

	search := func(t *testing.T, cfg string) (string, string) {
		ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, bin, "search", "--mcp-config", cfg, "--json", "send an email")
		var stdout, stderr lockedBuffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		began := time.Now()
		require.NoError(t, cmd.Run(), stderr.String())
		assert.Less(t, time.Since(began), 30*time.Second, "it recursed until a timeout: %s", stderr.String())
		return stdout.String(), stderr.String()
	}

	t.Run("direct", func(t *testing.T) {
		stdout, stderr := search(t, direct)
		assert.Contains(t, stdout, "mcp:mail:send_email")
		assert.Contains(t, stderr, `warning: skipping server "self": it is this toolsearch`)
	})
	t.Run("through a script", func(t *testing.T) {
		stdout, stderr := search(t, wrapped)
		assert.Contains(t, stdout, "mcp:mail:send_email")
		assert.Contains(t, stderr, `mcp server "wrapped" is unavailable: start:`)
		assert.Contains(t, stderr, "refusing to start MCP servers: this toolsearch was started by toolsearch (pid ")
		assert.Contains(t, stderr, "from the config", "the whole reason fits the quoted stderr line")
	})
	t.Run("mcp serve through a script", func(t *testing.T) {
		// The client here is not toolsearch: the served toolsearch starts normally, and the one its wrapper
		// starts refuses.
		src, tools := client(t, upstream.ServerConfig{Command: bin, Args: []string{"mcp", "serve", "--config", wrapped, "--mode", "tools", "--verbose"}})
		// mcp serve answers at once and its servers join when ready.
		awaitTool(t, tools, "send an email", "mcp:mail:send_email")
		assert.Equal(t, upstream.StateReady, src.Status()[0].State)
	})
}

func requireShell(t *testing.T) {
	t.Helper()
	if _, err := os.Stat("/bin/sh"); err != nil {
		t.Skip("needs /bin/sh for the wrapper script")
	}
}
