package runtime_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolsearch/toolsearch/runtime"
)

const commentedConfig = `// toolsearch settings
{
  // what the agent may use
  "tools": {
    "profile": "coding", // keep me
    /* Tool Search */
    "toolSearch": {
      "mode": "tools",
    },
  },
}
`

func writeConfig(t *testing.T, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "config.json")
	require.NoError(t, os.WriteFile(p, []byte(content), 0o644))
	return p
}

// set is ConfigFile.Set for edits that must not warn.
func set(f *runtime.ConfigFile, key string, value json.RawMessage) error {
	warnings, err := f.Set(key, value)
	if err == nil && len(warnings) > 0 {
		return fmt.Errorf("unexpected warnings: %v", warnings)
	}
	return err
}

func TestConfigFileGet(t *testing.T) {
	f, err := runtime.LoadConfigFile(writeConfig(t, commentedConfig))
	require.NoError(t, err)
	tests := []struct {
		key  string
		want string
		ok   bool
	}{
		{"tools.toolSearch", `{"mode":"tools"}`, true},
		{"tools.toolSearch.mode", `"tools"`, true},
		{"tools.profile", `"coding"`, true},
		{"tools.missing", ``, false},
		{"nothing.here", ``, false},
	}
	for _, tt := range tests {
		got, ok, err := f.Get(tt.key)
		require.NoError(t, err, tt.key)
		assert.Equal(t, tt.ok, ok, tt.key)
		if tt.ok {
			assert.JSONEq(t, tt.want, string(got), tt.key)
		}
	}
	cfg, err := f.ToolSearch()
	require.NoError(t, err)
	assert.Equal(t, runtime.ModeTools, cfg.Mode)

	_, _, err = f.Get("tools..x")
	assert.Error(t, err)
	_, _, err = f.Get("")
	assert.Error(t, err)
}

func TestConfigFileSetKeepsComments(t *testing.T) {
	path := writeConfig(t, commentedConfig)
	f, err := runtime.LoadConfigFile(path)
	require.NoError(t, err)
	require.NoError(t, set(f, "tools.toolSearch.codeTimeoutMs", json.RawMessage(`5000`)))
	require.NoError(t, set(f, "tools.toolSearch.mode", json.RawMessage(`"directory"`)))
	require.NoError(t, f.Save())

	data, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, `// toolsearch settings
{
  // what the agent may use
  "tools": {
    "profile": "coding", // keep me
    /* Tool Search */
    "toolSearch": {
      "mode": "directory",
      "codeTimeoutMs": 5000,
    },
  },
}
`, string(data))
	st, err := os.Stat(path)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o644), st.Mode().Perm(), "an existing file keeps its permissions")

	again, err := runtime.LoadConfigFile(path)
	require.NoError(t, err)
	cfg, err := again.ToolSearch()
	require.NoError(t, err)
	assert.Equal(t, runtime.ModeDirectory, cfg.Mode)
	assert.Equal(t, 5000, cfg.CodeTimeoutMs)
}

func TestConfigFileSetRefusesBadValues(t *testing.T) {
	tests := []struct {
		key, value, wantErr string
	}{
		{"tools.toolSearch.codeTimeoutMs", `-5`, "codeTimeoutMs must be a positive integer from 1000 to 60000 (ms), for example 10000 (got -5)"},
		{"tools.toolSearch.codeTimeoutMs", `1.5`, "codeTimeoutMs must be a positive integer from 1000 to 60000 (ms), for example 10000 (got 1.5)"},
		{"tools.toolSearch.mode", `"turbo"`, `mode must be one of code, tools, directory, off (got "turbo")`},
		{"tools.toolSearch.mdoe", `"tools"`, `unknown key "mdoe"`},
		{"tools.toolSearch", `"yes"`, `must be true, false or an object such as {mode: "tools"} (got "yes")`},
		{"tools.toolSearch.enabled", `"yes"`, `enabled must be true or false (got "yes")`},
		{"tools", `{"toolSearch": {"maxSearchLimit": 0}}`, "maxSearchLimit must be a positive integer from 1 to 50 (hits), for example 20 (got 0)"},
		{"tools.profile.x", `1`, "cannot set below tools.profile"},
		{"tools.toolSearch.mode", `{`, "not valid JSON"},
	}
	for _, tt := range tests {
		path := writeConfig(t, commentedConfig)
		f, err := runtime.LoadConfigFile(path)
		require.NoError(t, err)
		_, err = f.Set(tt.key, json.RawMessage(tt.value))
		assert.ErrorContains(t, err, tt.wantErr, "%s = %s", tt.key, tt.value)
		assert.Equal(t, commentedConfig, string(f.Bytes()), "a refused edit changes nothing")
		data, err := os.ReadFile(path)
		require.NoError(t, err)
		assert.Equal(t, commentedConfig, string(data))
	}
}

func TestConfigFileCreatedOnFirstSet(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sub", "dir", "config.json")
	f, err := runtime.LoadConfigFile(path)
	require.NoError(t, err)
	assert.False(t, f.Exists())
	_, ok, err := f.Get(runtime.ToolSearchKey)
	require.NoError(t, err)
	assert.False(t, ok)
	cfg, err := f.ToolSearch()
	require.NoError(t, err)
	assert.Equal(t, runtime.DefaultConfig(), cfg)

	require.NoError(t, set(f, runtime.ToolSearchKey, json.RawMessage(`true`)))
	require.NoError(t, f.Save())
	assert.True(t, f.Exists())
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, "{\"tools\": {\"toolSearch\": true}}\n", string(data))
	st, err := os.Stat(path)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o600), st.Mode().Perm(), "a new config file is private")
}

// Setting a field of a boolean tools.toolSearch keeps what the boolean meant.
func TestConfigFileSetBelowBoolean(t *testing.T) {
	for _, enabled := range []bool{true, false} {
		content := `{"tools": {"toolSearch": false}}`
		if enabled {
			content = `{"tools": {"toolSearch": true}}`
		}
		f, err := runtime.ParseConfigFile("c.json", []byte(content))
		require.NoError(t, err)
		require.NoError(t, set(f, "tools.toolSearch.mode", json.RawMessage(`"tools"`)))
		cfg, err := f.ToolSearch()
		require.NoError(t, err)
		assert.Equal(t, enabled, cfg.Enabled)
		raw, _, _ := f.Get("tools.toolSearch.enabled")
		assert.JSONEq(t, map[bool]string{true: "true", false: "false"}[enabled], string(raw))
	}
}

// A formatted file stays formatted; a hand-formatted one keeps its indentation and trailing commas.
func TestConfigFileLayout(t *testing.T) {
	tests := []struct{ name, in, want string }{
		{"hujson format", "{\n\t\"a\": 1,\n}\n", "{\n\t\"a\":     1,\n\t\"tools\": {\"toolSearch\": {\"mode\": \"tools\"}},\n}\n"},
		{"two spaces", "{\n  \"a\": 1\n}\n", "{\n  \"a\": 1,\n  \"tools\": {\"toolSearch\": {\"mode\": \"tools\"}}\n}\n"},
		{"empty file", "", "{\"tools\": {\"toolSearch\": {\"mode\": \"tools\"}}}\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, err := runtime.ParseConfigFile("c.json", []byte(tt.in))
			require.NoError(t, err)
			require.NoError(t, set(f, "tools.toolSearch.mode", json.RawMessage(`"tools"`)))
			assert.Equal(t, tt.want, string(f.Bytes()))
		})
	}
}

func TestConfigFileErrors(t *testing.T) {
	_, err := runtime.ParseConfigFile("c.json", []byte(`{"a": `))
	assert.Error(t, err)
	_, err = runtime.ParseConfigFile("c.json", []byte(`[1, 2]`))
	assert.ErrorContains(t, err, "must be an object")
	dir := t.TempDir()
	_, err = runtime.LoadConfigFile(dir) // a directory cannot be read as a file
	assert.Error(t, err)
}

func TestDefaultConfigPath(t *testing.T) {
	env := func(m map[string]string) func(string) string { return func(k string) string { return m[k] } }
	tests := []struct {
		env     map[string]string
		want    string
		wantErr bool
	}{
		{map[string]string{"TOOLSEARCH_CONFIG": "/x/c.json", "XDG_CONFIG_HOME": "/xdg"}, "/x/c.json", false},
		{map[string]string{"XDG_CONFIG_HOME": "/xdg", "HOME": "/home/u"}, "/xdg/toolsearch/config.json", false},
		{map[string]string{"HOME": "/home/u"}, "/home/u/.config/toolsearch/config.json", false},
		{map[string]string{}, "", true},
	}
	for _, tt := range tests {
		got, err := runtime.DefaultConfigPath(env(tt.env))
		if tt.wantErr {
			assert.Error(t, err)
			continue
		}
		require.NoError(t, err)
		assert.Equal(t, tt.want, got)
	}
}
