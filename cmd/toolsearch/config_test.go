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
		"maxResultBytes":100000}`, out)

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
	code, out, errOut := configCLI(t, "get", "--config", path, "tools.toolSearch")
	assert.Equal(t, exitFailure, code)
	assert.Empty(t, out)
	assert.Contains(t, errOut, "tools.toolSearch is not set")

	code, out, _ = configCLI(t, "get", "--config", path, "--resolved", "tools.toolSearch")
	require.Equal(t, exitOK, code, "an absent file resolves to the defaults")
	assert.Contains(t, out, `"mode": "off"`)
	_, err := os.Stat(path)
	assert.True(t, os.IsNotExist(err), "get never creates the file")
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
		{[]string{"get", "--resolved", "tools.toolSearch.nope"}, `unknown field "nope"`},
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
