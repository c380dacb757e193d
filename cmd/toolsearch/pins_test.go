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

	"github.com/toolsearch/toolsearch/catalog"
	"github.com/toolsearch/toolsearch/config"
	"github.com/toolsearch/toolsearch/runtime"
)

func pinsCLI(args ...string) (code int, stdout, stderr string) {
	var out, errb bytes.Buffer
	code = run(context.Background(), append([]string{"pins"}, args...), strings.NewReader(""), &out, &errb)
	return code, out.String(), errb.String()
}

// The pin file named by the config is listed and forgotten from the command line, which is how a user approves
// a changed tool again for `mcp serve` (which has no approver to ask).
func TestPinsCommand(t *testing.T) {
	dir := t.TempDir()
	pinPath := filepath.Join(dir, "pins.json")
	configPath := filepath.Join(dir, "config.json")
	require.NoError(t, os.WriteFile(configPath, []byte(`{"tools": {"toolSearch": {"mode": "tools"}}}`), 0o600))

	code, _, errOut := pinsCLI("list", "--config", configPath)
	assert.Equal(t, exitFailure, code)
	assert.Contains(t, errOut, "sets no tools.toolSearch.pinFile")
	code, _, errOut = pinsCLI("list", "--config", filepath.Join(dir, "missing.json"))
	assert.Equal(t, exitFailure, code)
	assert.Contains(t, errOut, "config file not found", "read as every command reads the config file")

	code, _, errOut = configCLI(t, "set", "--config", configPath, "tools.toolSearch.pinFile", pinPath)
	require.Equal(t, exitOK, code, errOut)

	// A runtime with that config pins a tool on its first call.
	f, err := config.LoadFile(configPath)
	require.NoError(t, err)
	cfg, err := f.ToolSearch()
	require.NoError(t, err)
	rt, err := runtime.New(context.Background(), &runtime.Options{Config: cfg})
	require.NoError(t, err)
	defer rt.Close(context.Background())
	tool := catalog.Tool{Source: catalog.SourceMCP, SourceName: "github", Name: "create_issue",
		Handler: catalog.HandlerFunc(func(context.Context, json.RawMessage) (*catalog.Result, error) { return &catalog.Result{}, nil })}
	r, err := rt.StartRun(context.Background(), runtime.RunRequest{RunID: "r", Tools: []catalog.Tool{tool}})
	require.NoError(t, err)
	res, err := r.Execute(context.Background(), runtime.ToolCall{ID: "1", Name: "tool_call", Arguments: json.RawMessage(`{"id":"create_issue"}`)})
	require.NoError(t, err)
	require.False(t, res.IsError, res.Content)
	require.NoError(t, r.Close())

	code, out, errOut := pinsCLI("list", "--config", configPath)
	require.Equal(t, exitOK, code, errOut)
	assert.True(t, strings.HasPrefix(out, "mcp:github:create_issue\tpinned "), out)

	code, _, errOut = pinsCLI("forget", "--file", pinPath, "mcp:github:nope", "mcp:github:create_issue")
	assert.Equal(t, exitFailure, code)
	assert.Contains(t, errOut, "mcp:github:nope is not pinned")
	code, out, _ = pinsCLI("list", "--file", pinPath)
	require.Equal(t, exitOK, code)
	assert.Equal(t, "no tools pinned in "+pinPath+"\n", out)

	for _, bad := range [][]string{{}, {"frob"}, {"forget", "--file", pinPath}, {"list", "x", "--file", pinPath},
		{"list", "--config", configPath, "--file", pinPath}} {
		code, _, _ := pinsCLI(bad...)
		assert.Equal(t, exitUsage, code, "%v", bad)
	}
}
