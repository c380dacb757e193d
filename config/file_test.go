package config_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolsearch/toolsearch/config"
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
func set(f *config.File, key string, value json.RawMessage) error {
	warnings, err := f.Set(key, value)
	if err == nil && len(warnings) > 0 {
		return fmt.Errorf("unexpected warnings: %v", warnings)
	}
	return err
}

func TestConfigFileGet(t *testing.T) {
	f, err := config.LoadFile(writeConfig(t, commentedConfig))
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
	f, err := config.LoadFile(path)
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

	again, err := config.LoadFile(path)
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
		{"tools.profile.x", `1`, "cannot set tools.profile.x: tools.profile is a string, not an object"},
		{"tools.toolSearch.mode", `{`, "not valid JSON"},
	}
	for _, tt := range tests {
		path := writeConfig(t, commentedConfig)
		f, err := config.LoadFile(path)
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
	f, err := config.LoadFile(path)
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
		f, err := config.ParseFile("c.json", []byte(content))
		require.NoError(t, err)
		require.NoError(t, set(f, "tools.toolSearch.mode", json.RawMessage(`"tools"`)))
		cfg, err := f.ToolSearch()
		require.NoError(t, err)
		assert.Equal(t, enabled, cfg.Enabled)
		raw, _, _ := f.Get("tools.toolSearch.enabled")
		assert.JSONEq(t, map[bool]string{true: "true", false: "false"}[enabled], string(raw))
	}
}

// A new key is written in the file's style: indentation, line breaks, trailing commas, key and string quotes.
func TestConfigFileLayout(t *testing.T) {
	tests := []struct{ name, in, want string }{
		{"tabs and trailing commas", "{\n\t\"a\": 1,\n}\n",
			"{\n\t\"a\": 1,\n\t\"tools\": {\n\t\t\"toolSearch\": {\n\t\t\t\"mode\": \"tools\",\n\t\t},\n\t},\n}\n"},
		{"two spaces", "{\n  \"a\": 1\n}\n",
			"{\n  \"a\": 1,\n  \"tools\": {\n    \"toolSearch\": {\n      \"mode\": \"tools\"\n    }\n  }\n}\n"},
		{"one line", `{"a": 1}`, `{"a": 1, "tools": {"toolSearch": {"mode": "tools"}}}`},
		{"JSON5 one line", `{ a: 'x' }`, `{ a: 'x', tools: { toolSearch: { mode: 'tools' } } }`},
		{"comments only", "// nothing yet\n", "// nothing yet\n\n{\"tools\": {\"toolSearch\": {\"mode\": \"tools\"}}}\n"},
		{"CRLF", "{\r\n  a: 1,\r\n}\r\n", "{\r\n  a: 1,\r\n  tools: {\r\n    toolSearch: {\r\n      mode: \"tools\",\r\n    },\r\n  },\r\n}\r\n"},
		{"empty file", "", "{\"tools\": {\"toolSearch\": {\"mode\": \"tools\"}}}\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, err := config.ParseFile("c.json", []byte(tt.in))
			require.NoError(t, err)
			require.NoError(t, set(f, "tools.toolSearch.mode", json.RawMessage(`"tools"`)))
			assert.Equal(t, tt.want, string(f.Bytes()))
		})
	}
}

func TestConfigFileErrors(t *testing.T) {
	_, err := config.ParseFile("c.json", []byte(`{"a": `))
	assert.Error(t, err)
	_, err = config.ParseFile("c.json", []byte(`[1, 2]`))
	assert.ErrorContains(t, err, "must be an object")
	dir := t.TempDir()
	_, err = config.LoadFile(dir) // a directory cannot be read as a file
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
		got, err := config.DefaultPath(env(tt.env))
		if tt.wantErr {
			assert.Error(t, err)
			continue
		}
		require.NoError(t, err)
		assert.Equal(t, tt.want, got)
	}
}

// The configuration examples of OpenClaw's Tool Search page, as written there (JSON5: unquoted keys, trailing
// commas). Each loads, resolves, and edits in place.
var openClawExamples = []struct {
	name, src string
	want      runtime.Config
}{
	{"code", `{ tools: { toolSearch: { mode: "code", codeTimeoutMs: 10000, searchDefaultLimit: 8, maxSearchLimit: 20, }, }, }`,
		runtime.Config{Enabled: true, Mode: runtime.ModeCode}},
	{"tools", `{ tools: { toolSearch: { mode: "tools", codeTimeoutMs: 10000, searchDefaultLimit: 8, maxSearchLimit: 20, }, }, }`,
		runtime.Config{Enabled: true, Mode: runtime.ModeTools}},
	{"directory", `{ tools: { toolSearch: { mode: "directory", codeTimeoutMs: 10000, searchDefaultLimit: 8, maxSearchLimit: 20, }, }, }`,
		runtime.Config{Enabled: true, Mode: runtime.ModeDirectory}},
	{"true", `{ tools: { toolSearch: true } }`, runtime.Config{Enabled: true}},
	{"false", `{ tools: { toolSearch: false } }`, runtime.Config{}},
}

// resolved is c with every limit at its default, as the runtime resolves a Config built in Go.
func resolved(c runtime.Config) runtime.Config {
	out := runtime.DefaultConfig()
	if c.Enabled {
		out.Enabled, out.Mode = true, c.Mode
		if out.Mode == "" {
			out.Mode = runtime.ModeCode
		}
	}
	return out
}

func TestOpenClawExamplesLoadAndEdit(t *testing.T) {
	for _, ex := range openClawExamples {
		t.Run(ex.name, func(t *testing.T) {
			f, err := config.ParseFile("openclaw.json5", []byte(ex.src))
			require.NoError(t, err)
			cfg, warnings, err := f.CheckToolSearch()
			require.NoError(t, err)
			assert.Empty(t, warnings)
			assert.Equal(t, resolved(ex.want), cfg)

			// One value edited: only its bytes change.
			warnings, err = f.Set("tools.toolSearch.maxSearchLimit", json.RawMessage(`30`))
			require.NoError(t, err)
			assert.Empty(t, warnings)
			got := string(f.Bytes())
			if strings.Contains(ex.src, "maxSearchLimit: 20") {
				assert.Equal(t, strings.Replace(ex.src, "maxSearchLimit: 20", "maxSearchLimit: 30", 1), got)
			}
			cfg, err = f.ToolSearch()
			require.NoError(t, err)
			assert.Equal(t, 30, cfg.MaxSearchLimit)
			assert.Equal(t, ex.want.Enabled, cfg.Enabled, "setting a limit keeps Tool Search on or off as it was")

			// A new key is written like the others: unquoted, with the file's spacing.
			_, err = f.Set("tools.toolSearch.codeMaxCalls", json.RawMessage(`50`))
			require.NoError(t, err)
			assert.Contains(t, string(f.Bytes()), "codeMaxCalls: 50")
			assert.NotContains(t, string(f.Bytes()), `"`+"codeMaxCalls")
			_, err = f.Set("mcpServers.memory", json.RawMessage(`{"command": "npx", "args": ["-y", "@modelcontextprotocol/server-memory"]}`))
			require.NoError(t, err)
			assert.Contains(t, string(f.Bytes()), `mcpServers: { memory: { command: "npx", args: ["-y", "@modelcontextprotocol/server-memory"] } }`)
			again, err := config.ParseFile("openclaw.json5", f.Bytes())
			require.NoError(t, err)
			cfg, err = again.ToolSearch()
			require.NoError(t, err)
			assert.Equal(t, 50, cfg.CodeMaxCalls)
		})
	}
}

// JSON5 beyond JSON: every form loads, with the value JavaScript would give it.
func TestConfigFileJSON5(t *testing.T) {
	f, err := config.ParseFile("c.json5", []byte(`// header
{
  /* block */ tools: {
    'toolSearch': {
      mode: 'tools',          // single quotes
      codeTimeoutMs: 0x2710,  // hexadecimal: 10000
      maxSearchLimit: +12,    // a leading plus
      searchDefaultLimit: 4.,  // a trailing point
      codeFuel: 5e6,
      codeMaxCalls: Infinity, // as many as allowed
    },
  },
  note: 'line \
continued',
  $dollar_key: .5,
}`))
	require.NoError(t, err)
	cfg, warnings, err := f.CheckToolSearch()
	require.NoError(t, err)
	assert.Equal(t, []string{"codeMaxCalls this large is above its maximum 1000: it will be clamped to 1000"}, warnings)
	assert.Equal(t, runtime.ModeTools, cfg.Mode)
	assert.Equal(t, 10000, cfg.CodeTimeoutMs)
	assert.Equal(t, 12, cfg.MaxSearchLimit)
	assert.Equal(t, 4, cfg.SearchDefaultLimit)
	assert.Equal(t, uint64(5_000_000), cfg.CodeFuel)
	assert.Equal(t, runtime.MaxCodeMaxCalls, cfg.CodeMaxCalls)
	raw, ok, err := f.Get("note")
	require.NoError(t, err)
	require.True(t, ok)
	assert.Equal(t, `"line continued"`, string(raw))
	raw, _, _ = f.Get("tools.toolSearch")
	assert.JSONEq(t, `{"mode":"tools","codeTimeoutMs":10000,"maxSearchLimit":12,"searchDefaultLimit":4,
		"codeFuel":5e6,"codeMaxCalls":null}`, string(raw), "Get is standard JSON; Infinity becomes null as in JSON.stringify")

	_, err = config.ParseFile("c.json5", []byte(`{ mode: NaN }`))
	require.NoError(t, err, "NaN is JSON5")
	_, _, err = runtime.CheckConfig(json.RawMessage(`{ codeTimeoutMs: NaN }`))
	assert.ErrorContains(t, err, "codeTimeoutMs must be a positive integer from 1000 to 60000 (ms), for example 10000 (got NaN)")
	_, _, err = runtime.CheckConfig(json.RawMessage(`{ codeTimeoutMs: -Infinity }`))
	assert.ErrorContains(t, err, "(got -Infinity)")
	_, err = config.ParseFile("c.json5", []byte("{\n  tools: {\n    toolSearch: { mode: tools },\n  },\n}"))
	assert.ErrorContains(t, err, `c.json5: line 3, column 25: invalid literal "tools" (strings need quotes)`)
}
