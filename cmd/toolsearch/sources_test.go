package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolsearch/toolsearch/mcp/upstream"
)

// search, describe and call against an MCP config: the upstreams are this test binary playing MCP servers (see
// mcp_test.go), started from the config as a user's MCP client would start them.
func TestCommandsAgainstMCPConfig(t *testing.T) {
	cfg := upstreamConfig(t, "tools")

	code, stdout, stderr := runCLI(t, "", "search", "--mcp-config", cfg, "--json", "--limit", "2", "create an issue on github")
	require.Equal(t, exitOK, code, stderr)
	var line searchLine
	require.NoError(t, json.Unmarshal([]byte(stdout), &line))
	require.NotEmpty(t, line.Hits)
	assert.Equal(t, "mcp:github:create_issue", line.Hits[0].ID)

	code, stdout, stderr = runCLI(t, "", "describe", "--mcp-config", cfg, "--json", "mcp:mail:send_email")
	require.Equal(t, exitOK, code, stderr)
	var desc struct {
		ID         string
		Input      string
		Parameters json.RawMessage
	}
	require.NoError(t, json.Unmarshal([]byte(stdout), &desc))
	assert.Equal(t, "mcp:mail:send_email", desc.ID)
	assert.Equal(t, "unknown", desc.Input, "MCP schemas are untrusted: no hint")
	assert.Contains(t, string(desc.Parameters), `"title"`)

	// A real call: the upstream server answers, no dry run.
	code, stdout, stderr = runCLI(t, "", "call", "--mcp-config", cfg, "--json", "--args", `{"title":"crash on login"}`, "create_issue")
	require.Equal(t, exitOK, code, stderr)
	assert.Contains(t, stdout, "created issue: crash on login")
	assert.NotContains(t, stdout, "dryRun")

	// Arguments are still validated against the server's schema before the server sees them.
	code, _, stderr = runCLI(t, "", "call", "--mcp-config", cfg, "--args", `{}`, "create_issue")
	assert.Equal(t, exitFailure, code)
	assert.Contains(t, stderr, "title")
}

func TestMCPConfigErrors(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "none.json")
	code, _, stderr := runCLI(t, "", "search", "--mcp-config", missing, "x")
	assert.Equal(t, exitFailure, code)
	assert.Contains(t, stderr, "none.json")

	// A server that cannot start is reported; the command still answers from the servers that did.
	cfg := writeFile(t, "broken.json", `{"mcpServers": {"gone": {"command": "/nonexistent/binary"}}}`)
	code, stdout, stderr := runCLI(t, "", "search", "--mcp-config", cfg, "anything")
	assert.Equal(t, exitOK, code, stderr)
	assert.Contains(t, stderr, `mcp server "gone" is unavailable`)
	assert.Equal(t, "no matching tools", strings.TrimSpace(stdout))
}

// A server that never answers: with --start-timeout the command waits that long, says what it is waiting for,
// and answers from the servers that did start; a server's own startTimeoutMs bounds its attempts without a flag.
func TestMCPConfigStartTimeout(t *testing.T) {
	cfg := writeFile(t, "hung.json", fmt.Sprintf(`{"mcpServers": {
  "hung": {"command": "sleep", "args": ["60"]},
  "mail": {"command": %q, "args": ["-test.run=^$"], "env": {%q: "mail"}},
}}`, os.Args[0], upstreamEnv))
	began := time.Now()
	code, stdout, stderr := runCLI(t, "", "search", "--mcp-config", cfg, "--start-timeout", "3s", "--json", "send an email")
	require.Equal(t, exitOK, code, stderr)
	assert.Less(t, time.Since(began), 20*time.Second)
	assert.Contains(t, stdout, "mcp:mail:send_email")
	assert.Contains(t, stderr, "mcp: starting 2 server(s): hung, mail")
	assert.Contains(t, stderr, "mcp: still starting after 2s: hung")
	assert.Contains(t, stderr, `mcp server "hung" did not start within --start-timeout 3s; its tools are left out`)

	perServer := writeFile(t, "hung.json", `{"mcpServers": {"hung": {"command": "sleep", "args": ["60"], "startTimeoutMs": 500}}}`)
	code, _, stderr = runCLI(t, "", "describe", "--mcp-config", perServer, "anything")
	assert.Equal(t, exitFailure, code)
	assert.Contains(t, stderr, `mcp server "hung" is unavailable: start: no answer within 500ms`)

	for _, args := range [][]string{
		{"search", "--catalog", cfg, "--start-timeout", "1s", "x"},
		{"call", "--mcp-config", cfg, "--start-timeout", "-1s", "x"},
	} {
		code, _, stderr := runCLI(t, "", args...)
		assert.Equal(t, exitUsage, code, args)
		assert.Contains(t, stderr, "--start-timeout", args)
	}
}

func TestCheckNesting(t *testing.T) {
	require.NoError(t, checkNesting(func(string) string { return "" }))
	err := checkNesting(func(name string) string {
		if name == nestingEnv {
			return "4242"
		}
		return ""
	})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "refusing to start MCP servers")
	assert.Contains(t, err.Error(), "pid 4242")
	assert.Equal(t, strconv.Itoa(os.Getpid()), childEnv()[nestingEnv])
}

// A server that missed --start-timeout is said to have missed it whichever timer fired first: the wait's (it is
// still starting) or its own start deadline, which is the same one (it has just failed by it).
func TestUnreadyLine(t *testing.T) {
	startErr := &upstream.ServerError{Server: "hung", Op: "start",
		Err: fmt.Errorf("no answer within 3s: %w", context.DeadlineExceeded)}
	leftOut := `mcp server "hung" did not start within --start-timeout 3s; its tools are left out`
	for _, tc := range []struct {
		name    string
		st      upstream.Status
		timeout time.Duration
		want    string
	}{
		{"ready", upstream.Status{Name: "hung", State: upstream.StateReady}, 3 * time.Second, ""},
		{"lazy", upstream.Status{Name: "hung", State: upstream.StateIdle}, 3 * time.Second, ""},
		{"still starting", upstream.Status{Name: "hung", State: upstream.StateStarting}, 3 * time.Second, leftOut},
		{"failed by the same deadline", upstream.Status{Name: "hung", State: upstream.StateFailed, Err: startErr},
			3 * time.Second, leftOut},
		{"failed by its own deadline, no flag", upstream.Status{Name: "hung", State: upstream.StateFailed, Err: startErr},
			0, `mcp server "hung" is unavailable: start: no answer within 3s: context deadline exceeded`},
		{"failed otherwise", upstream.Status{Name: "hung", State: upstream.StateFailed,
			Err: &upstream.ServerError{Server: "hung", Op: "start", Err: errors.New("exec: no such file")}},
			3 * time.Second, `mcp server "hung" is unavailable: start: exec: no such file`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, unreadyLine(tc.st, tc.timeout))
		})
	}
}
