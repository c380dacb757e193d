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

// A result larger than what a model is shown in one tool result still prints whole (within the result limit):
// the CLI reads the code result from Details, not from the cut text.
func TestRunPrintsLargeResults(t *testing.T) {
	code, stdout, stderr := runCLI(t, "return 'x'.repeat(300000)", "run", "-")
	require.Equal(t, exitOK, code, stderr)
	var out struct {
		OK    bool
		Value string
	}
	require.NoError(t, json.Unmarshal([]byte(stdout), &out), stdout[:min(len(stdout), 200)])
	assert.True(t, out.OK)
	assert.Len(t, out.Value, 300000)
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
		{"NUL in the source", "return 1\x00; while (true) {}", nil, "syntax"},
		{"faked out of memory", "throw Object.assign(new Error('out of memory'), {name: 'InternalError'})", nil, "exception"},
		{"bytecode", "const b = await import('qjs:bjson'); return b.read(new ArrayBuffer(8), 0, 8)", nil, "exception"},
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
		"memory unit":     {"run", "--memory", "64MB", "-"},
		"bad timeout":     {"run", "--timeout", "10", "-"},
		"negative calls":  {"run", "--max-calls", "-1", "-"},
		"missing config":  {"run", "--config", filepath.Join(t.TempDir(), "nope.json"), "-"},
		"bad config":      {"run", "--config", writeFile(t, "bad.json5", "{tools: {toolSearch: {mdoe: 'x'}}}"), "-"},
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

// The limit flags take the config's ranges: above the old 64 MiB cap up to the config's maximum, out-of-range
// values clamped with a warning that names the value used, and the config file's limits as the base.
func TestRunLimitsAreTheConfigs(t *testing.T) {
	alloc := "return new Uint8Array(100 << 20).length" // 100 MiB: more than the default 64 MiB
	code, stdout, stderr := runCLI(t, alloc, "run", "--memory", "256MiB", "-")
	require.Equal(t, exitOK, code, stderr+stdout)
	assert.Contains(t, stdout, `"value":104857600`)
	assert.Empty(t, stderr)

	code, stdout, _ = runCLI(t, alloc, "run", "-")
	assert.Equal(t, exitFailure, code, "the default is 64 MiB")
	assert.Contains(t, stdout, `"kind":"memory"`)

	code, stdout, stderr = runCLI(t, "return 1", "run", "--memory", "2GiB", "--timeout", "10ms", "-")
	require.Equal(t, exitOK, code, stderr+stdout)
	assert.Contains(t, stderr, "toolsearch run: warning: --memory: codeMemoryBytes 2147483648 is above its maximum 1073741824: it will be clamped to 1073741824")
	assert.Contains(t, stderr, "toolsearch run: warning: --timeout: codeTimeoutMs 10 is below its minimum 1000: it will be clamped to 1000")

	code, _, stderr = runCLI(t, "return 1", "run", "--memory", "lots", "-")
	assert.Equal(t, exitUsage, code)
	assert.Contains(t, stderr, `--memory must be a size in bytes, or with KiB, MiB or GiB, such as 64MiB (codeMemoryBytes, 16777216–1073741824 bytes), got "lots"`)

	cfg := writeFile(t, "config.json5", "{ tools: { toolSearch: { codeMemoryBytes: 0x10000000, codeMaxCalls: 1 } } }")
	code, stdout, stderr = runCLI(t, alloc, "run", "--config", cfg, "-")
	require.Equal(t, exitOK, code, "256 MiB from the file: %s%s", stderr, stdout)
	code, stdout, _ = runCLI(t, "await openclaw.tools.search('a'); await openclaw.tools.search('b')", "run", "--config", cfg, "-")
	assert.Equal(t, exitFailure, code)
	assert.Contains(t, stdout, `"kind":"calls"`, "codeMaxCalls 1 from the file")
	code, stdout, _ = runCLI(t, "await openclaw.tools.search('a'); await openclaw.tools.search('b')", "run", "--config", cfg, "--max-calls", "5", "-")
	assert.Equal(t, exitOK, code, "a flag overrides the file: %s", stdout)
}
