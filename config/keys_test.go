package config_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolsearch/toolsearch/config"
)

func TestSplitConfigKey(t *testing.T) {
	for _, tt := range []struct {
		key  string
		want []string
		err  string
	}{
		{"tools.toolSearch.mode", []string{"tools", "toolSearch", "mode"}, ""},
		{`mcpServers["my.server"].command`, []string{"mcpServers", "my.server", "command"}, ""},
		{`mcpServers['my.server'].env.TOKEN`, []string{"mcpServers", "my.server", "env", "TOKEN"}, ""},
		{`mcpServers["a\"b"]`, []string{"mcpServers", `a"b`}, ""},
		{`["tools"]["toolSearch"]`, []string{"tools", "toolSearch"}, ""},
		{`mcpServers[""]`, []string{"mcpServers", ""}, ""},
		{`mcpServers["x[1]"].args`, []string{"mcpServers", "x[1]", "args"}, ""},
		{"", nil, "config: empty key"},
		{"a..b", nil, `config: bad key "a..b": empty segment (a key with a dot in it is written ["my.server"])`},
		{"a.", nil, `config: bad key "a.": it ends with a dot`},
		{`a["b"`, nil, `config: bad key "a[\"b\"": a quoted key must end with "]"`},
		{`a["b`, nil, `config: bad key "a[\"b": unterminated quoted key`},
		{`a[b]`, nil, `config: bad key "a[b]": "[" must be followed by a quoted key, as in mcpServers["my.server"]`},
		{`a["b"]c`, nil, `config: bad key "a[\"b\"]c": unexpected 'c' after a quoted key (want "." or "[")`},
		{`a]`, nil, `config: bad key "a]": "]" without "[": write a key with brackets as ["a[b]"]`},
	} {
		got, err := config.SplitKey(tt.key)
		if tt.err != "" {
			assert.EqualError(t, err, tt.err, tt.key)
			continue
		}
		require.NoError(t, err, tt.key)
		assert.Equal(t, tt.want, got, tt.key)
		assert.Equal(t, tt.want, mustSplit(t, config.FormatKey(got...)), "FormatKey round-trips %q", tt.key)
	}
	assert.Equal(t, `mcpServers["my.server"].command`, config.FormatKey("mcpServers", "my.server", "command"))
	assert.Equal(t, "tools.toolSearch", config.FormatKey("tools", "toolSearch"))
}

func mustSplit(t *testing.T, key string) []string {
	t.Helper()
	p, err := config.SplitKey(key)
	require.NoError(t, err, key)
	return p
}

// FuzzConfigKey: SplitKey never panics, whatever it accepts FormatKey writes back to the same path,
// and every path survives FormatKey and SplitKey (of valid UTF-8: config files are checked to be).
func FuzzConfigKey(f *testing.F) {
	for _, s := range []string{"tools.toolSearch", `mcpServers["my.server"].command`, `a['b\'c']`, "a..b", `["`, `[""]`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, key string) {
		path, err := config.SplitKey(key)
		if err == nil && utf8.ValidString(key) { // a config file is UTF-8 text: its keys are too
			again, err := config.SplitKey(config.FormatKey(path...))
			require.NoError(t, err)
			require.Equal(t, path, again)
		}
		if utf8.ValidString(key) {
			segs := strings.Split(key, ".")
			again, err := config.SplitKey(config.FormatKey(segs...))
			require.NoError(t, err, "%q", segs)
			require.Equal(t, segs, again)
		}
	})
}

// A server whose name holds a dot is addressed in brackets, by Get, Set and Show alike.
func TestConfigFileDottedServerName(t *testing.T) {
	path := filepath.Join(t.TempDir(), "config.json5")
	require.NoError(t, os.WriteFile(path, []byte(`{mcpServers: {"my.server": {command: "a"}}}`), 0o600))
	f, err := config.LoadFile(path)
	require.NoError(t, err)
	raw, ok, err := f.Get(`mcpServers["my.server"].command`)
	require.NoError(t, err)
	require.True(t, ok)
	assert.JSONEq(t, `"a"`, string(raw))
	_, err = f.Set(`mcpServers["my.server"].command`, []byte(`"b"`))
	require.NoError(t, err)
	assert.Equal(t, `{mcpServers: {"my.server": {command: "b"}}}`, string(f.Bytes()))
	_, ok, err = f.Get("mcpServers.my.server.command")
	require.NoError(t, err)
	assert.False(t, ok, "without brackets the dot separates keys")
}

func TestConfigFileShowKeepsNonFiniteNumbers(t *testing.T) {
	f, err := config.ParseFile("c.json5", []byte(`{x: {a: Infinity, b: -Infinity, c: NaN, d: 1}}`))
	require.NoError(t, err)
	text, ok, err := f.Show("x")
	require.NoError(t, err)
	require.True(t, ok)
	assert.Equal(t, "{\n  \"a\": Infinity,\n  \"b\": -Infinity,\n  \"c\": NaN,\n  \"d\": 1\n}", text)
	raw, _, err := f.Get("x")
	require.NoError(t, err)
	assert.JSONEq(t, `{"a": null, "b": null, "c": null, "d": 1}`, string(raw), "Get stays JSON, as documented")
}

func TestConfigFileRefusesBinary(t *testing.T) {
	for _, tt := range []struct{ data, err string }{
		{"{\n  // a comment\x00\n}", "config c.json5: line 2, column 15: a NUL byte: a config file is text (write \\u0000 to put one in a string)"},
		{"{\n a: \"x\x00\"}", "config c.json5: line 2, column 7: a NUL byte: a config file is text (write \\u0000 to put one in a string)"},
		{"{\n\n a: 1, // caf\xe9\n}", "config c.json5: line 3, column 14: invalid UTF-8 (byte 0xe9): a config file is UTF-8 text"},
	} {
		_, err := config.ParseFile("c.json5", []byte(tt.data))
		assert.EqualError(t, err, tt.err, "%q", tt.data)
	}
	_, err := config.ParseFile("c.json5", []byte(`{a: "caf\u00e9 \u0000"}`))
	assert.NoError(t, err, "escapes in strings are text")
}

// A config kept in a dotfiles repository and linked into place is edited where it lives: the link stays a link,
// the target keeps its mode, and nothing is left beside either.
func TestConfigFileWritesThroughSymlinks(t *testing.T) {
	dotfiles, home := t.TempDir(), t.TempDir()
	target := filepath.Join(dotfiles, "toolsearch.json5")
	require.NoError(t, os.WriteFile(target, []byte("// mine\n{tools: {toolSearch: true}}\n"), 0o640))
	link := filepath.Join(home, "config.json")
	require.NoError(t, os.Symlink("../"+filepath.Base(dotfiles)+"/toolsearch.json5", link))
	chain := filepath.Join(home, "chain.json")
	require.NoError(t, os.Symlink(link, chain), "a link to the link")

	require.NoError(t, config.UpdateFile(context.Background(), chain, func(f *config.File) error {
		_, err := f.Set("tools.toolSearch.mode", []byte(`"tools"`))
		return err
	}))
	for _, l := range []string{link, chain} {
		info, err := os.Lstat(l)
		require.NoError(t, err)
		assert.NotZero(t, info.Mode()&os.ModeSymlink, "%s is still a link", l)
	}
	data, err := os.ReadFile(target)
	require.NoError(t, err)
	assert.Equal(t, "// mine\n{tools: {toolSearch: {enabled: true, mode: \"tools\"}}}\n", string(data))
	info, err := os.Stat(target)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o640), info.Mode().Perm(), "the target keeps its mode")
	for _, dir := range []string{dotfiles, home} {
		entries, err := os.ReadDir(dir)
		require.NoError(t, err)
		for _, e := range entries {
			assert.False(t, strings.HasSuffix(e.Name(), ".tmp"), "left behind: %s", e.Name())
		}
	}

	// A dangling link is created at its target.
	dangling := filepath.Join(home, "new.json")
	require.NoError(t, os.Symlink(filepath.Join(dotfiles, "new.json5"), dangling))
	f, err := config.LoadFile(dangling)
	require.NoError(t, err)
	_, err = f.Set("tools.toolSearch", []byte("true"))
	require.NoError(t, err)
	require.NoError(t, f.Save())
	_, err = os.Stat(filepath.Join(dotfiles, "new.json5"))
	assert.NoError(t, err)

	// A loop is an error, not a hang.
	loop := filepath.Join(home, "loop.json")
	require.NoError(t, os.Symlink(loop, loop))
	f, err = config.ParseFile(loop, []byte("{}"))
	require.NoError(t, err)
	assert.ErrorContains(t, f.Save(), "too many levels of symbolic links")
}
