package main

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const runCatalog = `[
  {"name": "create_issue", "description": "Create a GitHub issue in a repository.", "server": "github",
   "inputSchema": {"type": "object", "properties": {"title": {"type": "string"}}, "required": ["title"]}},
  {"name": "web_search", "description": "Search the web for pages.",
   "inputSchema": {"type": "object", "properties": {"query": {"type": "string"}}, "required": ["query"]}}
]`

func TestRunSearchesAndCallsThroughTheRuntime(t *testing.T) {
	catalogFile := writeFile(t, "catalog.json", runCatalog)
	script := writeFile(t, "script.js", `
		const [hit] = await openclaw.tools.search("open a github issue", {limit: 1});
		console.log("found", hit.id);
		const r = await openclaw.tools.call(hit.id, {title: "bug"});
		return {id: hit.id, echoed: r.result.details};`)
	code, stdout, stderr := runCLI(t, "", "run", "--catalog", catalogFile, script)
	require.Equal(t, exitOK, code, stderr)

	var out struct {
		OK        bool
		Value     json.RawMessage
		Logs      []string
		Telemetry struct{ CatalogSize, SearchCount, CallCount int }
		Usage     struct {
			Fuel, MemoryBytes uint64
			WallMs            int64
		}
	}
	require.NoError(t, json.Unmarshal([]byte(stdout), &out), stdout)
	assert.True(t, out.OK)
	assert.JSONEq(t, `{"id":"mcp:github:create_issue","echoed":{"title":"bug"}}`, string(out.Value))
	assert.Equal(t, []string{"found mcp:github:create_issue"}, out.Logs)
	assert.Equal(t, 2, out.Telemetry.CatalogSize)
	assert.Equal(t, 1, out.Telemetry.SearchCount)
	assert.Equal(t, 1, out.Telemetry.CallCount)
	assert.Positive(t, out.Usage.Fuel)
	assert.Positive(t, out.Usage.MemoryBytes)
}

func TestRunReportsScriptFailures(t *testing.T) {
	for _, tc := range []struct {
		name, script string
		args         []string
		kind         string
	}{
		{"syntax", "let x = ;", nil, "syntax"},
		{"exception", "throw new Error('boom')", nil, "exception"},
		{"timeout", "while (true) {}", []string{"--timeout", "1s"}, "timeout"},
		{"fuel", "for (;;) {}", []string{"--fuel", "100000"}, "fuel"},
		{"memory", "return new Uint8Array(64 << 20).length", []string{"--memory", "16777216"}, "memory"},
		{"stack", "function f() { return f() } return f()", nil, "stack"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, stdout, stderr := runCLI(t, tc.script, append(append([]string{"run"}, tc.args...), "-")...)
			require.Equal(t, exitFailure, code, stderr)
			var out struct {
				OK    bool
				Error struct{ Kind, Message string }
			}
			require.NoError(t, json.Unmarshal([]byte(stdout), &out), stdout)
			assert.False(t, out.OK)
			assert.Equal(t, tc.kind, out.Error.Kind, out.Error.Message)
			assert.NotEmpty(t, out.Error.Message)
		})
	}
}

func TestRunUsageErrors(t *testing.T) {
	for name, args := range map[string][]string{
		"no script":       {"run"},
		"two scripts":     {"run", "a.js", "b.js"},
		"bad fuel":        {"run", "--fuel", "lots", "-"},
		"zero memory":     {"run", "--memory", "0", "-"},
		"unknown flag":    {"run", "--frobnicate", "-"},
		"missing file":    {"run", filepath.Join(t.TempDir(), "nope.js")},
		"missing catalog": {"run", "--catalog", filepath.Join(t.TempDir(), "nope.json"), "-"},
		"bad catalog":     {"run", "--catalog", writeFile(t, "bad.json", "{"), "-"},
	} {
		t.Run(name, func(t *testing.T) {
			code, stdout, stderr := runCLI(t, "return 1", args...)
			assert.Equal(t, exitUsage, code)
			assert.Empty(t, stdout)
			assert.Equal(t, 1, strings.Count(strings.TrimSpace(stderr), "\n")+1, "one line: %q", stderr)
		})
	}
	code, stdout, _ := runCLI(t, "", "run", "--help")
	assert.Equal(t, exitOK, code)
	assert.Contains(t, stdout, "usage: toolsearch run")
}
