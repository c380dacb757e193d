package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolsearch/toolsearch/runtime"
)

func configCLI(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	code = run(context.Background(), append([]string{"config"}, args...), strings.NewReader(""), &out, &errb)
	return code, out.String(), errb.String()
}

const cliConfig = `{
  // Tool Search
  "tools": {
    "toolSearch": false, // off for now
  },
}
`

func TestConfigSetAndGet(t *testing.T) {
	path := filepath.Join(t.TempDir(), "config.json")
	require.NoError(t, os.WriteFile(path, []byte(cliConfig), 0o600))

	code, out, errOut := configCLI(t, "set", "--config", path, "tools.toolSearch", "true")
	require.Equal(t, exitOK, code, errOut)
	assert.Contains(t, out, "tools.toolSearch = true")

	code, out, errOut = configCLI(t, "set", "tools.toolSearch.mode", "tools", "--config", path)
	require.Equal(t, exitOK, code, errOut)
	assert.Contains(t, out, `tools.toolSearch.mode = "tools"`)

	data, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Contains(t, string(data), "// Tool Search", "comments survive edits")
	assert.Contains(t, string(data), "// off for now")

	code, out, _ = configCLI(t, "get", "--config="+path, "tools.toolSearch.mode")
	require.Equal(t, exitOK, code)
	assert.Equal(t, "\"tools\"\n", out)

	code, out, _ = configCLI(t, "get", "--config", path, "tools.toolSearch")
	require.Equal(t, exitOK, code)
	assert.JSONEq(t, `{"enabled": true, "mode": "tools"}`, out)

	code, out, _ = configCLI(t, "get", "--config", path, "--resolved", "tools.toolSearch")
	require.Equal(t, exitOK, code)
	assert.JSONEq(t, `{"enabled":true,"mode":"tools","codeTimeoutMs":10000,"searchDefaultLimit":8,"maxSearchLimit":20,
		"codeFuel":2000000000,"codeMemoryBytes":67108864,"codeMaxOutputBytes":65536,"codeMaxCalls":100,
		"maxResultBytes":100000,"approvalTimeoutMs":300000}`, out)

	code, out, _ = configCLI(t, "get", "--config", path, "--resolved", "tools.toolSearch.maxSearchLimit")
	require.Equal(t, exitOK, code)
	assert.Equal(t, "20\n", out)
}

func TestConfigSetBadValueLeavesFileUntouched(t *testing.T) {
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"tools.toolSearch.codeTimeoutMs", "-5"}, "codeTimeoutMs must be a positive integer from 1000 to 60000 (ms), for example 10000 (got -5)"},
		{[]string{"tools.toolSearch.codeTimeoutMs", "soon"}, `codeTimeoutMs must be a positive integer from 1000 to 60000 (ms), for example 10000 (got "soon")`},
		{[]string{"tools.toolSearch.mode", "turbo"}, `mode must be one of code, tools, directory, off (got "turbo")`},
		{[]string{"tools.toolSearch.maxSearchLimit", "2.5"}, "maxSearchLimit must be a positive integer from 1 to 50 (hits), for example 20 (got 2.5)"},
		{[]string{"tools.toolSearch.moed", "tools"}, `unknown key "moed"`},
		{[]string{"tools.toolSearch", "maybe"}, `must be true, false or an object such as {mode: "tools"} (got "maybe")`},
	}
	for _, tt := range tests {
		path := filepath.Join(t.TempDir(), "config.json")
		require.NoError(t, os.WriteFile(path, []byte(cliConfig), 0o600))
		code, out, errOut := configCLI(t, append([]string{"set", "--config", path}, tt.args...)...)
		assert.Equal(t, exitFailure, code, tt.args)
		assert.Empty(t, out)
		assert.Contains(t, errOut, tt.want)
		assert.Contains(t, errOut, "is unchanged")
		assert.Equal(t, 1, strings.Count(errOut, "\n"), "one line: %q", errOut)
		data, err := os.ReadFile(path)
		require.NoError(t, err)
		assert.Equal(t, cliConfig, string(data), "the file is untouched")
	}
}

func TestConfigPathFromEnvironment(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("TOOLSEARCH_CONFIG", "")
	t.Setenv("XDG_CONFIG_HOME", dir)
	code, _, errOut := configCLI(t, "set", "tools.toolSearch.mode", "directory")
	require.Equal(t, exitOK, code, errOut)
	xdgPath := filepath.Join(dir, "toolsearch", "config.json")
	data, err := os.ReadFile(xdgPath)
	require.NoError(t, err, "created on first set under $XDG_CONFIG_HOME")
	var v map[string]any
	require.NoError(t, json.Unmarshal(data, &v))

	explicit := filepath.Join(t.TempDir(), "explicit.json")
	t.Setenv("TOOLSEARCH_CONFIG", explicit)
	code, _, errOut = configCLI(t, "set", "tools.toolSearch", "true")
	require.Equal(t, exitOK, code, errOut)
	_, err = os.Stat(explicit)
	require.NoError(t, err, "$TOOLSEARCH_CONFIG wins over $XDG_CONFIG_HOME")

	code, out, _ := configCLI(t, "get", "--resolved", "tools.toolSearch.mode")
	require.Equal(t, exitOK, code)
	assert.Equal(t, "\"code\"\n", out)
}

func TestConfigGetMissing(t *testing.T) {
	path := filepath.Join(t.TempDir(), "none.json")
	for _, args := range [][]string{{"tools.toolSearch"}, {"--resolved", "tools.toolSearch"}} {
		code, out, errOut := configCLI(t, append([]string{"get", "--config", path}, args...)...)
		assert.Equal(t, exitFailure, code)
		assert.Empty(t, out)
		assert.Contains(t, errOut, "config file not found: "+path)
	}
	_, err := os.Stat(path)
	assert.True(t, os.IsNotExist(err), "get never creates the file")

	require.NoError(t, os.WriteFile(path, []byte(`{tools: {}}`), 0o600))
	code, _, errOut := configCLI(t, "get", "--config", path, "tools.toolSearch")
	assert.Equal(t, exitFailure, code)
	assert.Contains(t, errOut, "tools.toolSearch is not set in "+path, "a missing key is not a missing file")
}

func TestConfigGetResolvedReportsBadFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "config.json")
	require.NoError(t, os.WriteFile(path, []byte(`{"tools": {"toolSearch": {"codeTimeoutMs": 0, "mode": "tools"}}}`), 0o600))
	code, out, errOut := configCLI(t, "get", "--config", path, "--resolved", "tools.toolSearch.codeTimeoutMs")
	assert.Equal(t, exitFailure, code)
	assert.Equal(t, "10000\n", out)
	assert.Contains(t, errOut, "codeTimeoutMs must be a positive integer from 1000 to 60000 (ms), for example 10000 (got 0)")
}

func TestConfigUsage(t *testing.T) {
	tests := []struct {
		args []string
		want string
	}{
		{nil, "a subcommand is required"},
		{[]string{"frob"}, `unknown subcommand "frob"`},
		{[]string{"get"}, "takes exactly one KEY"},
		{[]string{"get", "a", "b"}, "takes exactly one KEY"},
		{[]string{"set", "a"}, "takes a KEY and a VALUE"},
		{[]string{"set", "--resolved", "a", "b"}, "--resolved only applies to get"},
		{[]string{"get", "--bogus", "a"}, "unknown flag --bogus"},
		{[]string{"get", "--config"}, "--config needs a FILE"},
		{[]string{"get", "--resolved", "tools.other"}, "--resolved applies to tools.toolSearch"},
		{[]string{"get", "--resolved", "tools.toolSearch.nope"}, `unknown key "nope" of tools.toolSearch: did you mean "mode"?`},
		{[]string{"get", "tools.toolSearch.maxSearchLimt"}, `unknown key "maxSearchLimt" of tools.toolSearch: did you mean "maxSearchLimit"?`},
		{[]string{"keys", "x"}, "takes no arguments"},
		{[]string{"get", "a..b"}, "empty segment"},
	}
	t.Setenv("TOOLSEARCH_CONFIG", filepath.Join(t.TempDir(), "c.json"))
	for _, tt := range tests {
		code, out, errOut := configCLI(t, tt.args...)
		assert.Equal(t, exitUsage, code, "%v", tt.args)
		assert.Empty(t, out)
		assert.Contains(t, errOut, tt.want, "%v", tt.args)
		assert.Contains(t, errOut, "toolsearch config --help")
		assert.Equal(t, 1, strings.Count(errOut, "\n"), "one-line hint: %q", errOut)
	}
	for _, help := range [][]string{{"--help"}, {"get", "--help"}, {"set", "-h"}} {
		code, out, _ := configCLI(t, help...)
		assert.Equal(t, exitOK, code)
		assert.Contains(t, out, "usage: toolsearch config get")
	}
	var out bytes.Buffer
	run(context.Background(), []string{"help"}, strings.NewReader(""), &out, &out)
	assert.Contains(t, out.String(), "config")
}

// TestConfigMistakes: every way to get the config wrong is named with the key and the fix, and a refused edit
// leaves the file as it was.
func TestConfigMistakes(t *testing.T) {
	tests := []struct {
		name    string
		file    string // "" means cliConfig
		args    []string
		code    int
		stderr  []string // each must appear
		changed bool     // the file is rewritten
	}{
		{"servers replaced by a number", "", []string{"set", "mcpServers", "5"}, exitFailure,
			[]string{`mcpServers must be an object of servers by name, for example {"memory": {"command": "npx"`, "(got 5)"}, false},
		{"server without command or url", "", []string{"set", "mcpServers.mem", `{args: ["x"]}`}, exitFailure,
			[]string{`mcpServers.mem needs "command" (a program to start) or "url"`}, false},
		{"server field misspelt", "", []string{"set", "mcpServers.mem", `{comand: "npx"}`}, exitFailure,
			[]string{`"comand" is not a field: did you mean "command"?`}, false},
		{"server field of the wrong type", "", []string{"set", "mcpServers.mem", `{command: "npx", args: "-y"}`}, exitFailure,
			[]string{`mcpServers.mem.args must be an array of strings, not one string: write ["-y"]`}, false},
		{"server not an object", "", []string{"set", "mcpServers.mem", `"npx"`}, exitFailure,
			[]string{`mcpServers.mem must be a server object with "command" or "url"`}, false},
		{"server with both", "", []string{"set", "mcpServers.mem", `{command: "npx", url: "https://x.example/mcp"}`}, exitFailure,
			[]string{`has both "command" and "url"`}, false},
		{"a good server", "", []string{"set", "mcpServers.mem", `{command: "npx", args: ["-y", "m"]}`}, exitOK, nil, true},
		{"timeout far out of range", "", []string{"set", "tools.toolSearch.codeTimeoutMs", "1000000000"}, exitOK,
			[]string{"warning: codeTimeoutMs 1000000000 is above its maximum 60000: it will be clamped to 60000"}, true},
		{"limit below the minimum", "", []string{"set", "tools.toolSearch.codeMemoryBytes", "1024"}, exitOK,
			[]string{"warning: codeMemoryBytes 1024 is below its minimum 16777216: it will be clamped to 16777216"}, true},
		{"wrong type", "", []string{"set", "tools.toolSearch.codeTimeoutMs", "soon"}, exitFailure,
			[]string{`codeTimeoutMs must be a positive integer from 1000 to 60000 (ms), for example 10000 (got "soon")`}, false},
		{"unknown key", "", []string{"set", "tools.toolSearch.maxSearchLimt", "5"}, exitFailure,
			[]string{`unknown key "maxSearchLimt": did you mean "maxSearchLimit"?`}, false},
		{"misspelt mode", "", []string{"set", "tools.toolSearch.mode", "directroy"}, exitFailure,
			[]string{`mode must be one of code, tools, directory, off (got "directroy"); did you mean "directory"?`}, false},
		{"misspelt mode in the file", `{tools: {toolSearch: {mode: "tols"}}}`, []string{"get", "tools.toolSearch.mode"}, exitFailure,
			[]string{`tools.toolSearch: mode must be one of code, tools, directory, off (got "tols"); did you mean "tools"?`}, false},
		{"servers wrong in the file", `{mcpServers: {a: {}}}`, []string{"get", "mcpServers"}, exitFailure,
			[]string{`mcpServers.a needs "command"`}, false},
		{"out of range in the file", `{tools: {toolSearch: {maxSearchLimit: 500}}}`, []string{"get", "tools.toolSearch"}, exitOK,
			[]string{"warning: maxSearchLimit 500 is above its maximum 50: it will be clamped to 50"}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			content := cliConfig
			if tt.file != "" {
				content = tt.file
			}
			path := filepath.Join(t.TempDir(), "config.json5")
			require.NoError(t, os.WriteFile(path, []byte(content), 0o600))
			args := append([]string{tt.args[0], "--config", path}, tt.args[1:]...)
			code, _, errOut := configCLI(t, args...)
			assert.Equal(t, tt.code, code, errOut)
			for _, want := range tt.stderr {
				assert.Contains(t, errOut, want)
			}
			data, err := os.ReadFile(path)
			require.NoError(t, err)
			assert.Equal(t, tt.changed, string(data) != content, "file changed:\n%s", data)
			if tt.code == exitFailure && tt.args[0] == "set" {
				assert.Contains(t, errOut, "is unchanged")
			}
		})
	}
}

// The examples of OpenClaw's Tool Search page load with config get and edit with config set.
func TestConfigOpenClawExamples(t *testing.T) {
	for _, src := range []string{
		`{ tools: { toolSearch: { mode: "code", codeTimeoutMs: 10000, searchDefaultLimit: 8, maxSearchLimit: 20, }, }, }`,
		`{ tools: { toolSearch: { mode: "tools", codeTimeoutMs: 10000, searchDefaultLimit: 8, maxSearchLimit: 20, }, }, }`,
		`{ tools: { toolSearch: { mode: "directory", codeTimeoutMs: 10000, searchDefaultLimit: 8, maxSearchLimit: 20, }, }, }`,
		`{ tools: { toolSearch: true } }`,
		`{ tools: { toolSearch: false } }`,
	} {
		path := filepath.Join(t.TempDir(), "openclaw.json5")
		require.NoError(t, os.WriteFile(path, []byte(src), 0o600))
		code, out, errOut := configCLI(t, "get", "--config", path, "--resolved", "tools.toolSearch.codeTimeoutMs")
		require.Equal(t, exitOK, code, errOut)
		assert.Equal(t, "10000\n", out)
		code, _, errOut = configCLI(t, "set", "--config", path, "tools.toolSearch.codeTimeoutMs", "20000")
		require.Equal(t, exitOK, code, errOut)
		data, err := os.ReadFile(path)
		require.NoError(t, err)
		if strings.Contains(src, "codeTimeoutMs: 10000") {
			assert.Equal(t, strings.Replace(src, "codeTimeoutMs: 10000", "codeTimeoutMs: 20000", 1), string(data), "only the value's bytes change")
		} else {
			assert.Contains(t, string(data), "toolSearch: { enabled: ")
			assert.Contains(t, string(data), ", codeTimeoutMs: 20000 }")
		}
		code, out, _ = configCLI(t, "get", "--config", path, "--resolved", "tools.toolSearch.codeTimeoutMs")
		require.Equal(t, exitOK, code)
		assert.Equal(t, "20000\n", out)
	}
}

func TestConfigKeys(t *testing.T) {
	code, out, _ := configCLI(t, "keys")
	require.Equal(t, exitOK, code)
	for _, k := range runtime.ConfigKeyNames() {
		assert.Contains(t, out, "  "+k+" ")
	}
	for _, f := range []string{"command", "args", "env", "url", "headers"} {
		assert.Contains(t, out, "  "+f+" ")
	}
}
