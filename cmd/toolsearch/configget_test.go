package main

import (
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// config get shows a stdio server's env values no more than header values: tokens are replaced by [redacted],
// at every depth of the key asked for, while values that only name environment variables are shown.
func TestConfigGetRedactsEnvAndHeaders(t *testing.T) {
	const token, apiKey = "ghp_EnvSecret0123456789", "sk-header-0123456789"
	path := writeConfig(t, `{mcpServers: {
  github: {command: "github-mcp", env: {GITHUB_TOKEN: "`+token+`", FROM_ENV: "${GH}", LEVEL: "debug"}},
  remote: {url: "https://x.example/mcp", headers: {"X-Api-Key": "`+apiKey+`", Authorization: "Bearer ${TOKEN}"}},
}}`)
	for _, tt := range []struct{ key, want string }{
		{"mcpServers.github.env.GITHUB_TOKEN", `"[redacted]"`},
		{"mcpServers.github.env", "{\n  \"GITHUB_TOKEN\": \"[redacted]\",\n  \"FROM_ENV\": \"${GH}\",\n  \"LEVEL\": \"[redacted]\"\n}"},
		{"mcpServers.remote.headers", "{\n  \"X-Api-Key\": \"[redacted]\",\n  \"Authorization\": \"Bearer ${TOKEN}\"\n}"},
		{"mcpServers.github.command", `"github-mcp"`},
	} {
		code, out, errOut := configCLI(t, "get", "--config", path, tt.key)
		require.Equal(t, exitOK, code, errOut)
		assert.Equal(t, tt.want+"\n", out, tt.key)
	}
	for _, key := range []string{"mcpServers", "mcpServers.github", `mcpServers["remote"]`} {
		code, out, errOut := configCLI(t, "get", "--config", path, key)
		require.Equal(t, exitOK, code, errOut)
		assert.NotContains(t, out, token, key)
		assert.NotContains(t, out, apiKey, key)
		assert.Contains(t, out, "[redacted]", key)
	}

	// set echoes what it wrote, redacted the same way.
	code, out, errOut := configCLI(t, "set", "--config", path, "mcpServers.github.env.NEW_TOKEN", "ghp_New0123")
	require.Equal(t, exitOK, code, errOut)
	assert.Equal(t, `mcpServers.github.env.NEW_TOKEN = "[redacted]" (`+path+")\n", out)
}

func TestConfigOddities(t *testing.T) {
	t.Run("a server named my.server", func(t *testing.T) {
		path := writeConfig(t, `{mcpServers: {"my.server": {command: "a"}}}`)
		code, out, errOut := configCLI(t, "set", "--config", path, `mcpServers["my.server"].command`, "b")
		require.Equal(t, exitOK, code, errOut)
		assert.Equal(t, `mcpServers["my.server"].command = "b" (`+path+")\n", out)
		code, out, errOut = configCLI(t, "get", "--config", path, `mcpServers['my.server']`)
		require.Equal(t, exitOK, code, errOut)
		assert.Equal(t, "{\n  \"command\": \"b\"\n}\n", out)
		data, err := os.ReadFile(path)
		require.NoError(t, err)
		assert.Equal(t, `{mcpServers: {"my.server": {command: "b"}}}`, string(data))

		code, _, errOut = configCLI(t, "get", "--config", path, "mcpServers.my.server")
		assert.Equal(t, exitFailure, code)
		assert.Equal(t, "toolsearch config get: mcpServers.my.server is not set in "+path+
			`; did you mean mcpServers["my.server"]?`+"\n", errOut)
	})
	t.Run("Infinity and NaN are printed as written", func(t *testing.T) {
		path := writeConfig(t, `{tools: {toolSearch: {codeFuel: Infinity}}, other: {a: NaN, b: -Infinity}}`)
		code, out, errOut := configCLI(t, "get", "--config", path, "tools.toolSearch.codeFuel")
		require.Equal(t, exitOK, code, errOut)
		assert.Equal(t, "Infinity\n", out)
		code, out, _ = configCLI(t, "get", "--config", path, "other")
		require.Equal(t, exitOK, code)
		assert.Equal(t, "{\n  \"a\": NaN,\n  \"b\": -Infinity\n}\n", out)
	})
	t.Run("a NUL byte or invalid UTF-8 names the line", func(t *testing.T) {
		for _, tt := range []struct{ content, want string }{
			{"{\n  tools: {toolSearch: true}, // x\x00\n}", "line 2, column 34: a NUL byte: a config file is text"},
			{"{\n  mcpServers: {},\n  a: \"\xff\"}", "line 3, column 7: invalid UTF-8 (byte 0xff): a config file is UTF-8 text"},
		} {
			path := writeConfig(t, tt.content)
			for _, args := range [][]string{{"get", "--config", path, "tools"}, {"set", "--config", path, "tools.toolSearch", "false"}} {
				code, _, errOut := configCLI(t, args...)
				assert.Equal(t, exitFailure, code, args)
				assert.Contains(t, errOut, "config "+path+": "+tt.want, args)
			}
			data, err := os.ReadFile(path)
			require.NoError(t, err)
			assert.Equal(t, tt.content, string(data), "set did not rewrite the file")
		}
	})
	t.Run("a value nested too deep is refused, not stored as a string", func(t *testing.T) {
		path := writeConfig(t, "{}")
		deep := strings.Repeat("[", 1200) + strings.Repeat("]", 1200)
		code, out, errOut := configCLI(t, "set", "--config", path, "other.deep", deep)
		assert.Equal(t, exitFailure, code)
		assert.Empty(t, out)
		assert.Equal(t, "toolsearch config set: the value is not valid JSON5 (line 1, column 1001: nested more than "+
			"1000 deep); to set it as a string, quote it: '\"...\"'; "+path+" is unchanged\n", errOut)
		data, err := os.ReadFile(path)
		require.NoError(t, err)
		assert.Equal(t, "{}", string(data))

		code, _, errOut = configCLI(t, "set", "--config", path, "other.broken", `{command: "npx"`)
		assert.Equal(t, exitFailure, code, "a broken object is not a string either")
		assert.Contains(t, errOut, "the value is not valid JSON5")
		code, _, errOut = configCLI(t, "set", "--config", path, "other.text", "tools and more")
		assert.Equal(t, exitOK, code, "plain words are still a string: %s", errOut)
	})
}
