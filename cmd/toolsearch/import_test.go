package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolsearch/toolsearch/config"
	"github.com/toolsearch/toolsearch/internal/json5"
	"github.com/toolsearch/toolsearch/mcp/upstream"
)

// threeServerDesktopConfig is a user's Claude Desktop file with three servers (this test binary playing each)
// and a setting of its own.
func threeServerDesktopConfig(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "Claude")
	require.NoError(t, os.MkdirAll(dir, 0o755))
	path := filepath.Join(dir, "claude_desktop_config.json")
	text := fmt.Sprintf(`{
  "mcpServers": {
    "github": {"command": %q, "args": ["-test.run=^$"], "env": {%q: "github"}},
    "mail": {"command": %[1]q, "args": ["-test.run=^$"], "env": {%[2]q: "mail"}},
    "calendar": {"command": %[1]q, "args": ["-test.run=^$"], "env": {%[2]q: "calendar"}}
  },
  "globalShortcut": "Ctrl+Space"
}
`, os.Args[0], upstreamEnv)
	require.NoError(t, os.WriteFile(path, []byte(text), 0o644))
	return path
}

// runBinary runs the built binary (so that os.Executable is toolsearch itself, as for a user).
func runBinary(t *testing.T, bin string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	cmd := exec.Command(bin, args...)
	var out, errb strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code = 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else {
		require.NoError(t, err)
	}
	return out.String(), errb.String(), code
}

// TestImportClaudeDesktopEndToEnd: a user's Claude Desktop file with three servers becomes one toolsearch entry
// plus a toolsearch config; the entry, started exactly as Claude Desktop would start it, serves the three
// servers' tools. A second import changes nothing, and --undo puts the file back byte for byte.
func TestImportClaudeDesktopEndToEnd(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	bin := toolsearchBinary(t)
	path := threeServerDesktopConfig(t)
	original, err := os.ReadFile(path)
	require.NoError(t, err)
	out := filepath.Join(t.TempDir(), "toolsearch", "config.json5")

	stdout, stderr, code := runBinary(t, bin, "import", path)
	require.Equal(t, exitOK, code, stderr)
	assert.Contains(t, stdout, "3 servers to move into ")
	now, _ := os.ReadFile(path)
	assert.Equal(t, original, now, "without --write nothing changes")

	stdout, stderr, code = runBinary(t, bin, "import", "--write", "--config", out, path)
	require.Equal(t, exitOK, code, stderr)
	assert.Contains(t, stdout, "wrote "+out+": 3 servers (github, mail, calendar)")

	rewritten, err := os.ReadFile(path)
	require.NoError(t, err)
	root, err := json5.Parse(rewritten)
	require.NoError(t, err)
	servers := root.Find([]string{"mcpServers"})
	require.NotNil(t, servers)
	require.Len(t, servers.Members, 1, "%s", rewritten)
	var entry struct {
		Command string   `json:"command"`
		Args    []string `json:"args"`
	}
	require.NoError(t, json.Unmarshal(servers.Members[0].Value.JSON(), &entry))
	assert.True(t, filepath.IsAbs(entry.Command))
	assert.Equal(t, []string{"mcp", "serve", "--config", out}, entry.Args)
	assert.Equal(t, `"Ctrl+Space"`, string(rewritten[root.Find([]string{"globalShortcut"}).Start:root.Find([]string{"globalShortcut"}).End]))

	// Started as Claude Desktop starts it: every tool of the three servers is found and called.
	_, tools := client(t, upstream.ServerConfig{Command: entry.Command, Args: entry.Args})
	assert.Equal(t, []string{"tool_search_code"}, toolNames(tools))
	code3 := `const ids = [];
for (const q of ["create a github issue", "close a github issue", "send an email"]) {
  for (const h of await openclaw.tools.search(q, {limit: 5})) ids.push(h.id);
}
const r = await openclaw.tools.call("mcp:calendar:send_email", {title: "moved in"});
return {ids: [...new Set(ids)].sort(), text: r.result.content[0].text};`
	var res struct {
		OK    bool
		Value struct {
			IDs  []string `json:"ids"`
			Text string   `json:"text"`
		}
	}
	require.Eventually(t, func() bool {
		text, isErr := callTool(t, tools, "tool_search_code", map[string]any{"code": code3})
		if isErr || json.Unmarshal([]byte(text), &res) != nil {
			return false
		}
		return len(res.Value.IDs) == 4
	}, time.Minute, 50*time.Millisecond, "the three servers start in the background")
	assert.Equal(t, []string{"mcp:calendar:send_email", "mcp:github:close_issue", "mcp:github:create_issue",
		"mcp:mail:send_email"}, res.Value.IDs)
	assert.Equal(t, "sent: moved in", res.Value.Text)

	// Again: toolsearch is not nested in itself, and nothing changes.
	stdout, stderr, code = runBinary(t, bin, "import", "--write", path)
	require.Equal(t, exitOK, code, stderr)
	assert.Contains(t, stdout, "nothing to import")
	again, _ := os.ReadFile(path)
	assert.Equal(t, rewritten, again)

	stdout, stderr, code = runBinary(t, bin, "import", "--undo", path)
	require.Equal(t, exitOK, code, stderr)
	restored, _ := os.ReadFile(path)
	assert.Equal(t, string(original), string(restored))
	_, err = os.Stat(out)
	assert.NoError(t, err, "the toolsearch config stays")
}

func TestImportCommandUsage(t *testing.T) {
	path := threeServerDesktopConfig(t)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--write", "--undo", path}, "give --write or --undo, not both"},
		{[]string{"--from", "zed", path}, `unknown client "zed" for --from (known: claude-desktop, claude-code, cursor, vscode, windsurf, gemini)`},
		{[]string{"--config", "x.json5", path}, "--config and --force go with --write"},
		{[]string{path, path}, "give at most one FILE"},
		{[]string{"--nope"}, "flag provided but not defined: -nope"},
	} {
		code, _, stderr := runCLI(t, "", append([]string{"import"}, tc.args...)...)
		assert.Equal(t, exitUsage, code, tc.args)
		assert.Equal(t, "toolsearch import: "+tc.want+" (run `toolsearch import --help`)\n", stderr, tc.args)
	}
	code, stdout, _ := runCLI(t, "", "import", "--help")
	assert.Equal(t, exitOK, code)
	assert.Contains(t, stdout, "usage: toolsearch import")

	// A file that is no client's config, and a missing one, fail naming it.
	other := writeFile(t, "other.json", `{"tools": {}}`)
	code, _, stderr := runCLI(t, "", "import", other)
	assert.Equal(t, exitFailure, code)
	assert.Contains(t, stderr, `has neither "mcpServers" nor "servers"`)
	code, _, stderr = runCLI(t, "", "import", "--undo", path)
	assert.Equal(t, exitFailure, code)
	assert.Contains(t, stderr, path+config.BackupSuffix+" does not exist")
}

// Without FILE, the usual places are searched in the user's home and the current project, and each file found
// is shown; with --write, a choice among several is the user's.
func TestImportFindsClientFiles(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	project := t.TempDir()
	t.Chdir(project)
	require.NoError(t, os.MkdirAll(filepath.Join(project, ".cursor"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(project, ".cursor", "mcp.json"),
		[]byte(`{"mcpServers": {"browser": {"command": "npx", "args": ["@browsermcp/mcp@latest"]}}}`), 0o644))
	require.NoError(t, os.MkdirAll(filepath.Join(home, ".gemini"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(home, ".gemini", "settings.json"),
		[]byte(`{"theme": "GitHub", "mcpServers": {"search": {"httpUrl": "http://localhost:3000/mcp", "trust": true}}}`), 0o644))

	code, stdout, stderr := runCLI(t, "", "import")
	require.Equal(t, exitOK, code, stderr)
	assert.Contains(t, stdout, "Cursor: "+filepath.Join(project, ".cursor", "mcp.json"))
	assert.Contains(t, stdout, "Gemini CLI: "+filepath.Join(home, ".gemini", "settings.json"))
	assert.Contains(t, stdout, "browser  npx @browsermcp/mcp@latest")

	code, _, stderr = runCLI(t, "", "import", "--write")
	assert.Equal(t, exitUsage, code)
	assert.Contains(t, stderr, "several client files have MCP servers")

	code, stdout, stderr = runCLI(t, "", "import", "--from", "gemini")
	require.Equal(t, exitOK, code, stderr)
	assert.NotContains(t, stdout, "Cursor")
	assert.Contains(t, stdout, "search  http://localhost:3000/mcp")
}

// A binary `go run` built is deleted when it exits: a client file naming it would start nothing.
func TestImportRefusesATemporaryBuild(t *testing.T) {
	assert.True(t, temporaryBuild("/tmp/go-build1234/b001/exe/toolsearch"))
	assert.True(t, temporaryBuild(`C:\Users\a\AppData\Local\Temp\go-build99\b001\exe\toolsearch.exe`) == (filepath.Separator == '\\'))
	assert.False(t, temporaryBuild("/home/a/go/bin/toolsearch"))
	// This test binary lives in such a directory under `go test` too, unless built with -o elsewhere.
	exe, err := os.Executable()
	require.NoError(t, err)
	if temporaryBuild(exe) {
		code, _, stderr := runCLI(t, "", "import", "--write", "--config", filepath.Join(t.TempDir(), "c.json5"),
			threeServerDesktopConfig(t))
		assert.Equal(t, exitFailure, code)
		assert.Contains(t, stderr, "is a temporary build of `go run`")
	}
}
