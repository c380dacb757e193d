package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"reflect"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolsearch/toolsearch/config"
	"github.com/toolsearch/toolsearch/mcp/upstream"
	"github.com/toolsearch/toolsearch/runtime"
)

// everyKeyConfig is a config file that sets every key toolsearch reads: every key of tools.toolSearch (from
// runtime.ConfigKeys, so a new key is in it), every field of a server entry (checked against upstream.ServerConfig
// below), every policy key and a profile, and keys toolsearch ignores, so that there are warnings to compare.
func everyKeyConfig(t *testing.T) string {
	t.Helper()
	toolSearch := map[string]any{}
	for _, k := range runtime.ConfigKeys() {
		switch k.Type {
		case runtime.ConfigBoolean:
			toolSearch[k.Name] = true
		case runtime.ConfigEnum:
			toolSearch[k.Name] = k.Values[1] // not the default, so that a default taken instead shows
		case runtime.ConfigInteger:
			toolSearch[k.Name] = k.Max + 1 // clamped, with a warning
			if k.MaxKey != "" {
				toolSearch[k.Name] = k.Min
			}
		case runtime.ConfigPath:
			toolSearch[k.Name] = t.TempDir() + "/pins.json"
		case runtime.ConfigSelectors:
			toolSearch[k.Name] = []string{"mcp:web:get_*"}
		}
	}
	ts, err := json.Marshal(toolSearch)
	require.NoError(t, err)
	dir := t.TempDir()
	file := fmt.Sprintf(`{
  // comments and JSON5 as users write them
  mcpServers: {
    notes: {command: "node", args: ["server.js"], env: {ROOT: "${HOME}", MODE: "${NOTES_MODE:-ro}"}, cwd: %q,
      type: "stdio", disabled: false, trusted: true, startTimeoutMs: 20000, lazy: false,
      isolation: "per-client", maxInstances: 4,
      disabledTools: ["delete_*"], excludeTools: ["wipe"], autoApprove: ["read_*"], alwaysAllow: ["list_*"],
      visible: ["read_notes"],
      timeout: 60, // Cline's, ignored with a warning
    },
    web: {url: "https://mcp.example.com/mcp", headers: {Authorization: "Bearer ${WEB_TOKEN}"}, type: "http"},
    old: {command: "old-server", disabled: true},
  },
  tools: {
    toolSearch: %s,
    allow: ["server:notes", "server:web", "group:readers"],
    deny: ["mcp:web:drop_*"],
    ask: ["annotation:destructive"],
    groups: {readers: ["mcp:notes:read_*", "mcp:web:get_*"]},
    profiles: {ci: {token: "${EVERY_KEY_CI_TOKEN}", allow: ["group:readers"], deny: ["mcp:web:get_secret"], ask: ["*"]}},
    exec: {security: "full"}, // OpenClaw's, not ours: no warning
  },
  mcpServer: {}, // a typo: a warning
}`, dir, ts)
	for _, field := range reflect.VisibleFields(reflect.TypeFor[upstream.ServerConfig]()) {
		name, _, _ := strings.Cut(field.Tag.Get("json"), ",")
		require.Regexp(t, `[{ ]`+name+`: `, file, "the file sets %s", name)
	}
	return writeFile(t, "config.json5", file)
}

// TestLoadGivesWhatServeGets: a Go program that calls config.Load gets the servers, Tool Search settings,
// policy, profiles and warnings that `toolsearch mcp serve` builds from the same file, taken where the command
// hands them to the runtime and the front.
func TestLoadGivesWhatServeGets(t *testing.T) {
	path := everyKeyConfig(t)
	t.Setenv("EVERY_KEY_CI_TOKEN", "ci-secret")
	type served struct {
		lc  *config.Config
		cfg runtime.Config
	}
	var got *served
	defer func(old func(context.Context, *config.Config, runtime.Config, serveFlags, io.Reader, io.Writer, io.Writer) int) {
		serve = old
	}(serve)
	serve = func(_ context.Context, lc *config.Config, cfg runtime.Config, _ serveFlags, _ io.Reader, _, _ io.Writer) int {
		got = &served{lc, cfg}
		return exitOK
	}
	code, _, stderr := runCLI(t, "", "mcp", "serve", "--config", path, "--http", "127.0.0.1:0", "--token", "server-token")
	require.Equal(t, exitOK, code, stderr)
	require.NotNil(t, got, "mcp serve reached the point where it starts the servers")

	lib, err := config.Load(t.Context(), path)
	require.NoError(t, err)
	assert.Equal(t, lib.Servers, got.lc.Servers, "servers")
	assert.Len(t, lib.Servers.Servers, 3)
	assert.Equal(t, lib.ToolSearch, got.cfg, "tools.toolSearch, resolved and clamped")
	assert.Equal(t, runtime.ModeTools, lib.ToolSearch.Mode)
	require.NotNil(t, lib.Policy)
	assert.Equal(t, lib.Policy, got.lc.Policy, "policy")
	require.NoError(t, config.ResolveProfileTokens(lib.Profiles, func(k string) string {
		return map[string]string{"EVERY_KEY_CI_TOKEN": "ci-secret"}[k]
	}))
	assert.Equal(t, lib.Profiles, got.lc.Profiles, "profiles, their tokens resolved as serve resolves them")
	require.Len(t, lib.Profiles, 1)

	assert.Equal(t, lib.Warnings, got.lc.Warnings, "warnings")
	assert.GreaterOrEqual(t, len(lib.Warnings), 3, "clamps, the ignored timeout, the typo")
	for _, w := range lib.Warnings {
		assert.Contains(t, stderr, "toolsearch mcp serve: "+path+": warning: "+w+"\n", "serve prints every warning")
	}
}
