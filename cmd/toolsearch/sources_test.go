package main

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
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
