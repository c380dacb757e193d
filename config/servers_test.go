package config

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolsearch/toolsearch/mcp/upstream"
)

// parseServersOf reads the servers of a config document as Load does before its own checks.
func parseServersOf(doc string) (*upstream.Config, error) {
	f, err := ParseFile("", []byte(doc))
	if err != nil {
		return nil, fmt.Errorf("%w: %w", upstream.ErrConfig, err)
	}
	return parseServers(f)
}

func TestParseServers(t *testing.T) {
	tests := []struct {
		name    string
		doc     string
		servers int
		problem string // "" when valid
	}{
		{"command", `{"mcpServers": {"a": {"command": "npx", "args": ["-y", "x"], "env": {"K": "v"}, "cwd": "/tmp"}}}`, 1, ""},
		{"url", `{"mcpServers": {"a": {"url": "https://example.com/mcp", "headers": {"X": "y"}}}}`, 1, ""},
		{"typed", `{"mcpServers": {"a": {"type": "stdio", "command": "x"}, "b": {"type": "streamable-http", "url": "http://127.0.0.1:1/mcp"}}}`, 2, ""},
		{"client keys tolerated", `{"mcpServers": {"a": {"command": "x", "autoApprove": [], "timeout": 60}}}`, 1, ""},
		{"comments and commas", "{\n// servers\n\"mcpServers\": {\"a\": {\"command\": \"x\",},},}", 1, ""},
		{"no section", `{"tools": {"toolSearch": true}}`, 0, ""},
		{"empty", ``, 0, ""},
		{"neither", `{"mcpServers": {"a": {"args": ["x"]}}}`, 0, `server "a": needs "command" or "url"`},
		{"both", `{"mcpServers": {"a": {"command": "x", "url": "https://e"}}}`, 0, `has both "command" and "url"`},
		{"sse", `{"mcpServers": {"a": {"type": "sse", "url": "https://e/sse"}}}`, 0, `type "sse"`},
		{"unknown type", `{"mcpServers": {"a": {"type": "websocket", "url": "wss://e"}}}`, 0, `unknown type "websocket"`},
		{"http without url", `{"mcpServers": {"a": {"type": "http", "command": "x"}}}`, 0, `type "http" needs "url"`},
		{"stdio with url", `{"mcpServers": {"a": {"type": "stdio", "url": "https://e"}}}`, 0, `type "stdio" needs "command"`},
		{"headers on command", `{"mcpServers": {"a": {"command": "x", "headers": {"A": "b"}}}}`, 0, `"headers" apply to a "url" server only`},
		{"args on url", `{"mcpServers": {"a": {"url": "https://e", "args": ["x"]}}}`, 0, `apply to a "command" server only`},
		{"relative url", `{"mcpServers": {"a": {"url": "/mcp"}}}`, 0, "must be an absolute http or https URL"},
		{"ftp url", `{"mcpServers": {"a": {"url": "ftp://e/mcp"}}}`, 0, "must be an absolute http or https URL"},
		{"section not an object", `{"mcpServers": ["a"]}`, 0, "must be an object of servers"},
		{"server not an object", `{"mcpServers": {"a": "npx x"}}`, 0, `server "a"`},
		{"wrong field type", `{"mcpServers": {"a": {"command": "x", "args": "y"}}}`, 0, `server "a"`},
		{"not JSON", `{"mcpServers": `, 0, "mcp config"},
		{"instance cap", `{"mcpServers": {"a": {"command": "x", "isolation": "per-client", "maxInstances": 1000}}}`, 1, ""},
		{"negative instance cap", `{"mcpServers": {"a": {"command": "x", "isolation": "per-client", "maxInstances": -1}}}`, 0,
			`server "a": "maxInstances" must be between 0 (the default) and 1000, not -1`},
		{"huge instance cap", `{"mcpServers": {"a": {"command": "x", "isolation": "per-client", "maxInstances": 1001}}}`, 0,
			`"maxInstances" must be between 0 (the default) and 1000, not 1001`},
		{"instance cap of a shared server", `{"mcpServers": {"a": {"command": "x", "maxInstances": 4}}}`, 0,
			`server "a": "maxInstances" applies to an "isolation": "per-client" server only`},
		{"every problem at once", `{"mcpServers": {"a": {}, "b": {"type": "sse", "url": "https://e"}}}`, 0, `server "a": needs "command" or "url"; server "b"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cfg, err := parseServersOf(tc.doc)
			if tc.problem != "" {
				require.ErrorIs(t, err, upstream.ErrConfig)
				assert.Contains(t, err.Error(), tc.problem)
				return
			}
			require.NoError(t, err)
			assert.Len(t, cfg.Servers, tc.servers)
		})
	}
}

func TestLoadMissingOrInvalid(t *testing.T) {
	_, err := Load(t.Context(), filepath.Join(t.TempDir(), "missing.json"))
	require.ErrorIs(t, err, os.ErrNotExist, "a missing server list is an error, never an empty list")
	require.ErrorIs(t, err, ErrNotFound)

	path := filepath.Join(t.TempDir(), "config.json")
	require.NoError(t, os.WriteFile(path, []byte(`{"mcpServers": {"a": {}}}`), 0o600))
	_, err = Load(t.Context(), path)
	require.ErrorIs(t, err, ErrInvalid)
	var cerr *Error
	require.ErrorAs(t, err, &cerr)
	assert.Equal(t, path, cerr.Path)
	assert.Equal(t, path+`: mcpServers.a needs "command" (a program to start) or "url" (a streamable HTTP endpoint)`, err.Error())

	// What upstream refuses is still its error, inside ours.
	require.NoError(t, os.WriteFile(path, []byte(`{"mcpServers": {"a": {"command": "x", "isolation": "per-process"}}}`), 0o600))
	_, err = Load(t.Context(), path)
	require.ErrorIs(t, err, ErrInvalid)
	require.ErrorIs(t, err, upstream.ErrConfig)
}

func TestParseTrusted(t *testing.T) {
	cfg, err := parseServersOf(`{"mcpServers": {"docs": {"command": "docs-server", "trusted": true}, "web": {"command": "web"}}}`)
	require.NoError(t, err)
	assert.True(t, cfg.Servers["docs"].Trusted)
	assert.False(t, cfg.Servers["web"].Trusted)
}
