package config_test

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolsearch/toolsearch/config"
	"github.com/toolsearch/toolsearch/internal/json5"
)

// updateGolden reports -update, which the package's own tests define (one test binary holds both packages).
func updateGolden() bool {
	f := flag.Lookup("update")
	return f != nil && f.Value.String() == "true"
}

// importCases are real-shaped config files of each client, as their documentation writes them, under
// testdata/import/<dir>/<file>.
var importCases = []struct {
	name, dir, file string
	client          config.Client
	project         string // Claude Code's project directory in ~/.claude.json
}{
	{"claude-desktop", "claude-desktop", "claude_desktop_config.json", config.ClientClaudeDesktop, ""},
	{"claude-code-user-and-project", "claudecode", ".claude.json", config.ClientClaudeCode, "/home/alice/src/shop"},
	{"claude-code-user", "claudecode", ".claude.json", config.ClientClaudeCode, "/home/alice/src/none"},
	{"claude-code-mcp-json", "claudecode", ".mcp.json", config.ClientClaudeCode, ""},
	{"cursor", "cursor", ".cursor/mcp.json", config.ClientCursor, ""},
	{"vscode", "vscode", ".vscode/mcp.json", config.ClientVSCode, ""},
	{"windsurf", "windsurf", ".codeium/windsurf/mcp_config.json", config.ClientWindsurf, ""},
	{"gemini", "gemini", ".gemini/settings.json", config.ClientGemini, ""},
}

// copyCase copies a case's file into a fresh directory, as a user's file would be, and returns its path.
func copyCase(t *testing.T, dir, file string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", "import", dir, file))
	require.NoError(t, err)
	home := t.TempDir()
	path := filepath.Join(home, file)
	require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
	require.NoError(t, os.WriteFile(path, data, 0o644))
	return path
}

// golden compares got with testdata/import/<name>, or rewrites it with -update.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", "import", "golden", name)
	if updateGolden() {
		require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
		require.NoError(t, os.WriteFile(path, got, 0o644))
		return
	}
	want, err := os.ReadFile(path)
	require.NoError(t, err, "run go test ./config -run TestImportEachClient -update")
	assert.Equal(t, string(want), string(got), "%s is out of date (go test ./config -run TestImportEachClient -update)", path)
}

// Each client's file: the servers that move with the keys toolsearch shares, every setting that does not move
// named, the file detected by its name, and after Write a client file whose only server is toolsearch, every
// other byte as it was, and a toolsearch config that reads back as the same servers. Undo puts the file back
// byte for byte.
func TestImportEachClient(t *testing.T) {
	const exe = "/opt/toolsearch/bin/toolsearch"
	for _, tc := range importCases {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			path := copyCase(t, tc.dir, tc.file)
			home := strings.TrimSuffix(path, tc.file)
			original, err := os.ReadFile(path)
			require.NoError(t, err)

			detected, err := config.DetectClient(path, original)
			require.NoError(t, err)
			assert.Equal(t, tc.client, detected, "the file is recognised by its name")

			plan, err := config.ReadClientFile(ctx, config.ClientFile{Client: tc.client, Path: path, Project: tc.project})
			require.NoError(t, err)
			shown, err := json.MarshalIndent(map[string]any{
				"servers": plan.Servers, "names": serverNames(plan.Servers), "kept": plan.Kept,
				"notCarried": plan.NotCarried}, "", "  ")
			require.NoError(t, err)
			golden(t, tc.name+".plan.json", bytes.ReplaceAll(shown, []byte(filepath.Clean(home)), []byte("$HOME")))

			out := filepath.Join(t.TempDir(), "toolsearch", "config.json5")
			res, err := plan.Write(ctx, &config.WriteOptions{Config: out, Executable: exe})
			require.NoError(t, err)
			assert.Equal(t, serverNames(plan.Servers), res.Added)

			rewritten, err := os.ReadFile(path)
			require.NoError(t, err)
			golden(t, tc.name+".client", bytes.ReplaceAll(rewritten, []byte(filepath.Dir(out)), []byte("$OUT")))
			if json.Valid(original) {
				assert.True(t, json.Valid(rewritten), "a strict JSON file stays strict JSON")
			}
			assertOnlyServersChanged(t, original, rewritten)
			backup, err := os.ReadFile(path + config.BackupSuffix)
			require.NoError(t, err)
			assert.Equal(t, original, backup)

			// The client's only server (beside those it keeps) starts toolsearch on the config just written.
			again, err := config.ReadClientFile(ctx, config.ClientFile{Client: tc.client, Path: path, Project: tc.project})
			require.NoError(t, err)
			assert.Equal(t, "toolsearch", again.Toolsearch)
			assert.Equal(t, out, again.ToolsearchConfig)
			assert.Empty(t, again.Servers, "nothing left to move")

			// The toolsearch config reads back as the servers of the plan.
			written, err := os.ReadFile(out)
			require.NoError(t, err)
			root, err := json5.Parse(written)
			require.NoError(t, err)
			var back struct {
				MCPServers map[string]config.Server `json:"mcpServers"`
			}
			require.NoError(t, json.Unmarshal(root.JSON(), &back))
			require.Len(t, back.MCPServers, len(plan.Servers))
			for _, s := range plan.Servers {
				got := back.MCPServers[s.Name]
				got.Name = s.Name
				assert.Equal(t, s, got)
			}
			info, err := os.Stat(out)
			require.NoError(t, err)
			assert.Equal(t, os.FileMode(0o600), info.Mode().Perm(), "the config may hold secrets")

			require.NoError(t, config.Undo(ctx, path))
			restored, err := os.ReadFile(path)
			require.NoError(t, err)
			assert.Equal(t, string(original), string(restored))
			_, err = os.Stat(path + config.BackupSuffix)
			assert.ErrorIs(t, err, os.ErrNotExist)
			assert.ErrorIs(t, config.Undo(ctx, path), config.ErrNoBackup)
		})
	}
}

func serverNames(ss []config.Server) []string {
	var names []string
	for _, s := range ss {
		names = append(names, s.Name)
	}
	return names
}

// assertOnlyServersChanged checks that the rewritten file equals the original outside its servers objects: the
// same top-level keys, each with the same text, except the servers of the file.
func assertOnlyServersChanged(t *testing.T, original, rewritten []byte) {
	t.Helper()
	a, err := json5.Parse(original)
	require.NoError(t, err)
	b, err := json5.Parse(rewritten)
	require.NoError(t, err)
	require.Equal(t, len(a.Members), len(b.Members))
	for i, m := range a.Members {
		require.Equal(t, m.Key, b.Members[i].Key)
		if m.Key == "mcpServers" || m.Key == "servers" || m.Key == "projects" {
			continue
		}
		assert.Equal(t, string(original[m.Value.Start:m.Value.End]), string(rewritten[b.Members[i].Value.Start:b.Members[i].Value.End]),
			"%s is untouched", m.Key)
	}
	assert.Equal(t, string(original[:a.Members[0].KeyStart]), string(rewritten[:b.Members[0].KeyStart]),
		"what comes before the first key (comments) is untouched")
}

// A second import of a file toolsearch already serves merges the servers added since into the same
// toolsearch config, keeps the first backup (the file before toolsearch), and never starts toolsearch from
// toolsearch.
func TestImportTwiceMerges(t *testing.T) {
	ctx := context.Background()
	const exe = "/opt/toolsearch/bin/toolsearch"
	path := copyCase(t, "claude-desktop", "claude_desktop_config.json")
	original, err := os.ReadFile(path)
	require.NoError(t, err)
	out := filepath.Join(t.TempDir(), "config.json5")
	plan, err := config.ReadClientFile(ctx, config.ClientFile{Path: path})
	require.NoError(t, err)
	_, err = plan.Write(ctx, &config.WriteOptions{Config: out, Executable: exe})
	require.NoError(t, err)
	// The user adds a comment to the toolsearch config and a server to the client's file.
	cfg, err := os.ReadFile(out)
	require.NoError(t, err)
	cfg = append([]byte("// my servers\n"), cfg...)
	require.NoError(t, os.WriteFile(out, cfg, 0o600))
	client, err := os.ReadFile(path)
	require.NoError(t, err)
	client, err = json5.Set(client, []string{"mcpServers", "time"}, []byte(`{"command": "uvx", "args": ["mcp-server-time"]}`))
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(path, client, 0o644))

	plan, err = config.ReadClientFile(ctx, config.ClientFile{Path: path})
	require.NoError(t, err)
	assert.Equal(t, []string{"time"}, serverNames(plan.Servers))
	res, err := plan.Write(ctx, &config.WriteOptions{Executable: exe}) // the config the entry names
	require.NoError(t, err)
	assert.Equal(t, out, res.Config)
	assert.Equal(t, []string{"time"}, res.Added)
	assert.True(t, res.BackupKept)
	backup, err := os.ReadFile(path + config.BackupSuffix)
	require.NoError(t, err)
	assert.Equal(t, original, backup, "the backup is still the file before toolsearch")

	merged, err := os.ReadFile(out)
	require.NoError(t, err)
	assert.True(t, bytes.HasPrefix(merged, []byte("// my servers\n")), "the config's comments survive")
	root, err := json5.Parse(merged)
	require.NoError(t, err)
	for _, name := range []string{"filesystem", "github", "memory", "time"} {
		assert.NotNil(t, root.Find([]string{"mcpServers", name}), name)
	}
	client, err = os.ReadFile(path)
	require.NoError(t, err)
	croot, err := json5.Parse(client)
	require.NoError(t, err)
	servers := croot.Find([]string{"mcpServers"})
	require.Len(t, servers.Members, 1, "one toolsearch entry, not toolsearch in toolsearch")
	assert.Equal(t, "toolsearch", servers.Members[0].Key)

	// A third run finds nothing to move and changes nothing.
	plan, err = config.ReadClientFile(ctx, config.ClientFile{Path: path})
	require.NoError(t, err)
	assert.Empty(t, plan.Servers)
	res, err = plan.Write(ctx, &config.WriteOptions{Executable: exe})
	require.NoError(t, err)
	assert.Empty(t, res.Added)
	after, err := os.ReadFile(out)
	require.NoError(t, err)
	assert.Equal(t, merged, after)
}

// An existing toolsearch config the client does not start is not written into unless asked (--force), and a
// server whose name it already uses for another server is a conflict even then.
func TestImportRefusesAnExistingConfig(t *testing.T) {
	ctx := context.Background()
	const exe = "/opt/toolsearch/bin/toolsearch"
	path := copyCase(t, "claude-desktop", "claude_desktop_config.json")
	original, err := os.ReadFile(path)
	require.NoError(t, err)
	out := filepath.Join(t.TempDir(), "config.json5")
	existing := "// mine\n{mcpServers: {memory: {command: \"other-memory\"}}, tools: {toolSearch: {mode: \"tools\"}}}\n"
	require.NoError(t, os.WriteFile(out, []byte(existing), 0o600))

	plan, err := config.ReadClientFile(ctx, config.ClientFile{Path: path})
	require.NoError(t, err)
	_, err = plan.Write(ctx, &config.WriteOptions{Config: out, Executable: exe})
	require.ErrorIs(t, err, config.ErrTargetExists)
	assert.ErrorIs(t, err, config.ErrImport)
	_, err = os.Stat(path + config.BackupSuffix)
	assert.ErrorIs(t, err, os.ErrNotExist, "nothing was written")
	now, _ := os.ReadFile(path)
	assert.Equal(t, original, now)

	res, err := plan.Write(ctx, &config.WriteOptions{Config: out, Executable: exe, Force: true})
	require.NoError(t, err, "force replaces the other memory server")
	assert.Equal(t, []string{"filesystem", "github", "memory"}, res.Added)
	merged, err := os.ReadFile(out)
	require.NoError(t, err)
	assert.True(t, bytes.HasPrefix(merged, []byte("// mine\n")))
	assert.Contains(t, string(merged), `mode: "tools"`, "its other settings stay")

	_, err = plan.Write(ctx, &config.WriteOptions{Config: "", Executable: exe})
	require.ErrorIs(t, err, config.ErrImport, "no config named, and the plan was read before toolsearch served the file")
	_, err = plan.Write(ctx, &config.WriteOptions{Config: out, Executable: "toolsearch"})
	require.ErrorIs(t, err, config.ErrImport, "a relative executable would be looked up in the client's PATH")
}

// Without --force, a server of the same name but other settings is a conflict when merging into the config
// the client starts.
func TestImportServerConflict(t *testing.T) {
	ctx := context.Background()
	const exe = "/opt/toolsearch/bin/toolsearch"
	path := copyCase(t, "claude-desktop", "claude_desktop_config.json")
	out := filepath.Join(t.TempDir(), "config.json5")
	plan, err := config.ReadClientFile(ctx, config.ClientFile{Path: path})
	require.NoError(t, err)
	_, err = plan.Write(ctx, &config.WriteOptions{Config: out, Executable: exe})
	require.NoError(t, err)
	client, _ := os.ReadFile(path)
	client, err = json5.Set(client, []string{"mcpServers", "memory"}, []byte(`{"command": "my-memory"}`))
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(path, client, 0o644))
	plan, err = config.ReadClientFile(ctx, config.ClientFile{Path: path})
	require.NoError(t, err)
	_, err = plan.Write(ctx, &config.WriteOptions{Executable: exe})
	require.ErrorIs(t, err, config.ErrServerConflict)
}

func TestDetectClient(t *testing.T) {
	for _, tc := range []struct {
		path, content string
		want          config.Client
	}{
		{"/x/mcp.json", `{"servers": {}}`, config.ClientVSCode},
		{"/x/servers.json", `{"mcpServers": {}}`, config.ClientClaudeDesktop},
		{"/home/a/.codeium/windsurf/mcp_config.json", `{}`, config.ClientWindsurf},
		{"/home/a/Library/Application Support/Code/User/mcp.json", `{}`, config.ClientVSCode},
	} {
		got, err := config.DetectClient(tc.path, []byte(tc.content))
		require.NoError(t, err, tc.path)
		assert.Equal(t, tc.want, got, tc.path)
	}
	for _, bad := range []string{`{"tools": {}}`, `[1]`, `{`} {
		_, err := config.DetectClient("/x/other.json", []byte(bad))
		assert.ErrorIs(t, err, config.ErrUnknownClient, bad)
	}
	_, err := config.PlanImport(config.ClientFile{Client: "zed", Path: "/x"}, []byte(`{}`))
	assert.ErrorIs(t, err, config.ErrUnknownClient)
}

// The default locations: each client's documented file, per OS.
func TestClientFiles(t *testing.T) {
	paths := func(goos string) map[string]config.Client {
		out := map[string]config.Client{}
		for _, f := range config.ClientFiles(goos, "/h", `C:\Users\a\AppData\Roaming`, "/p") {
			out[filepath.ToSlash(f.Path)] = f.Client
		}
		return out
	}
	linux := paths("linux")
	for path, client := range map[string]config.Client{
		"/h/.config/Claude/claude_desktop_config.json": config.ClientClaudeDesktop,
		"/h/.claude.json":                      config.ClientClaudeCode,
		"/p/.mcp.json":                         config.ClientClaudeCode,
		"/p/.cursor/mcp.json":                  config.ClientCursor,
		"/h/.cursor/mcp.json":                  config.ClientCursor,
		"/p/.vscode/mcp.json":                  config.ClientVSCode,
		"/h/.config/Code/User/mcp.json":        config.ClientVSCode,
		"/h/.codeium/windsurf/mcp_config.json": config.ClientWindsurf,
		"/p/.gemini/settings.json":             config.ClientGemini,
		"/h/.gemini/settings.json":             config.ClientGemini,
	} {
		assert.Equal(t, client, linux[path], path)
	}
	assert.Equal(t, config.ClientClaudeDesktop, paths("darwin")["/h/Library/Application Support/Claude/claude_desktop_config.json"])
	var win string
	for p, c := range paths("windows") {
		if c == config.ClientClaudeDesktop {
			win = p
		}
	}
	assert.Contains(t, win, `Roaming`)
	assert.True(t, strings.HasSuffix(win, "claude_desktop_config.json"))
}

// A client file kept in a dotfiles repository is a symbolic link: the file it points to is rewritten and put
// back, and the link stays a link.
func TestImportFollowsASymlinkedClientFile(t *testing.T) {
	ctx := context.Background()
	real := copyCase(t, "claude-desktop", "claude_desktop_config.json")
	original, err := os.ReadFile(real)
	require.NoError(t, err)
	link := filepath.Join(t.TempDir(), "claude_desktop_config.json")
	require.NoError(t, os.Symlink(real, link))

	plan, err := config.ReadClientFile(ctx, config.ClientFile{Path: link})
	require.NoError(t, err)
	_, err = plan.Write(ctx, &config.WriteOptions{Config: filepath.Join(t.TempDir(), "c.json5"), Executable: "/bin/toolsearch"})
	require.NoError(t, err)
	info, err := os.Lstat(link)
	require.NoError(t, err)
	assert.NotZero(t, info.Mode()&os.ModeSymlink, "the link stays a link")
	changed, err := os.ReadFile(real)
	require.NoError(t, err)
	assert.NotEqual(t, original, changed, "the file it points to was rewritten")

	require.NoError(t, config.Undo(ctx, link))
	info, err = os.Lstat(link)
	require.NoError(t, err)
	assert.NotZero(t, info.Mode()&os.ModeSymlink)
	back, err := os.ReadFile(real)
	require.NoError(t, err)
	assert.Equal(t, original, back)
}

// TestImportRecognisesItsOwnBinaryByPath: the entry a first import wrote names the binary by its absolute path, and
// a user may have named that binary anything (ts, toolsearch-v2); the next import must still see toolsearch there
// and not move it into its own config.
func TestImportRecognisesItsOwnBinaryByPath(t *testing.T) {
	ctx := context.Background()
	self, err := os.Executable()
	require.NoError(t, err)
	require.NotEqual(t, "toolsearch", strings.TrimSuffix(filepath.Base(self), ".exe"), "the test binary has another name")
	path := filepath.Join(t.TempDir(), "claude_desktop_config.json")
	entry, err := json.Marshal(map[string]any{"command": self, "args": []string{"mcp", "serve", "--config", "/x/ts.json5"}})
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(path, []byte(`{"mcpServers": {"renamed": `+string(entry)+`}}`), 0o644))
	plan, err := config.ReadClientFile(ctx, config.ClientFile{Path: path})
	require.NoError(t, err)
	assert.Equal(t, "renamed", plan.Toolsearch)
	assert.Equal(t, "/x/ts.json5", plan.ToolsearchConfig)
	assert.Empty(t, plan.Servers, "toolsearch is not nested in itself")
}
