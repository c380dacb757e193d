package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolsearch/toolsearch/config"
)

// writeConfig writes content to a fresh config file and returns its path.
func writeConfig(t *testing.T, content string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "config.json5")
	require.NoError(t, os.WriteFile(path, []byte(content), 0o600))
	return path
}

// Every mistake of a hand-written file reaches the loader that every command uses, with its exact message: a
// warning when toolsearch can go on without the key, an error when the server could not start as written.
func TestLoaderNamesEveryMistakenKey(t *testing.T) {
	const memory = `command: "npx", args: ["-y", "@modelcontextprotocol/server-memory"]`
	tests := []struct {
		name     string
		file     string
		warnings []string // exactly these, in order
		err      string   // the whole error after the path, or "" for none
	}{
		{"top-level typo", `{mcpServer: {memory: {` + memory + `}}}`,
			[]string{`unknown key mcpServer: did you mean mcpServers? (it is ignored)`}, ""},
		{"top-level case", `{mcpservers: {}}`,
			[]string{`unknown key mcpservers: did you mean mcpServers? (it is ignored)`}, ""},
		{"tools typo", `{tool: {toolSearch: true}}`,
			[]string{`unknown key tool: did you mean tools? (it is ignored)`}, ""},
		{"toolSearch in lower case", `{tools: {toolsearch: {mode: "tools"}}}`,
			[]string{`unknown key tools.toolsearch: did you mean tools.toolSearch? (it is ignored)`}, ""},
		{"toolSearch two edits off", `{tools: {toolSerch: true}}`,
			[]string{`unknown key tools.toolSerch: did you mean tools.toolSearch? (it is ignored)`}, ""},
		{"VS Code's server list", `{servers: {memory: {` + memory + `}}}`,
			[]string{`servers is VS Code's (.vscode/mcp.json) name for the server list; toolsearch reads ` +
				`mcpServers, so no server is started (rename it mcpServers)`}, ""},
		{"Zed's server list beside ours", `{context_servers: {}, mcpServers: {}}`, nil, ""},
		{"keys of other programs are theirs", `{agents: {}, tools: {exec: {}, web: {}}, globalShortcut: "x"}`, nil, ""},
		{"server field one edit off", `{mcpServers: {memory: {` + memory + `, lazzy: true}}}`,
			[]string{`unknown field mcpServers.memory.lazzy: did you mean "lazy"? (it is ignored)`}, ""},
		{"server field far off", `{mcpServers: {memory: {` + memory + `, color: "red"}}}`,
			[]string{`unknown field mcpServers.memory.color is ignored (the fields of a server are alwaysAllow, args, ` +
				`autoApprove, command, cwd, disabled, disabledTools, env, excludeTools, headers, isolation, lazy, maxInstances, startTimeoutMs, ` +
				`trusted, type, url, visible)`}, ""},
		{"Cline's timeout", `{mcpServers: {memory: {` + memory + `, timeout: 60}}}`,
			[]string{`mcpServers.memory.timeout is ignored: Cline and Roo Code read it as a request timeout in ` +
				`seconds, Claude Code and Gemini CLI in milliseconds; toolsearch bounds each call by its client's ` +
				`deadline, and a server's start by startTimeoutMs`}, ""},
		{"Cline's autoApprove, Roo Code's alwaysAllow and disabledTools are read", `{mcpServers: {memory: {` + memory +
			`, autoApprove: ["read_graph"], alwaysAllow: [], disabledTools: ["delete_entities"]}}}`, nil, ""},
		{"policy keys beside toolSearch", `{tools: {allow: [], deny: ["x"], ask: [], groups: {}, toolSearch: true}}`, nil, ""},
		{"policy key one edit off", `{tools: {dany: ["x"]}}`,
			[]string{`unknown key tools.dany: did you mean tools.deny? (it is ignored)`}, ""},
		{"a server name with a dot", `{mcpServers: {"my.server": {` + memory + `, arg: []}}}`,
			[]string{`unknown field mcpServers["my.server"].arg: did you mean "args"? (it is ignored)`}, ""},
		{"missing cwd", `{mcpServers: {memory: {` + memory + `, cwd: "/nonexistent/toolsearch-test"}}}`,
			[]string{`mcpServers.memory.cwd "/nonexistent/toolsearch-test" is not a directory: the server cannot ` +
				`start until it is`}, ""},

		{"arg instead of args", `{mcpServers: {memory: {command: "npx", arg: ["-y", "m"]}}}`, nil,
			`mcpServers.memory runs npx with no package to run (args empty): add the server's package to "args", ` +
				`for example "args": ["-y", "@modelcontextprotocol/server-memory"]; unknown field ` +
				`mcpServers.memory.arg: did you mean "args"?`},
		{"npx with flags only", `{mcpServers: {memory: {command: "npx", args: ["-y"]}}}`, nil,
			`mcpServers.memory runs npx with no package to run (args ["-y"]): add the server's package to "args", ` +
				`for example "args": ["-y", "@modelcontextprotocol/server-memory"]`},
		{"uvx with no package", `{mcpServers: {time: {command: "uvx"}}}`, nil,
			`mcpServers.time runs uvx with no package to run (args empty): add the server's package to "args", ` +
				`for example "args": ["mcp-server-time"]`},
		{"command with its arguments", `{mcpServers: {memory: {command: "npx -y @modelcontextprotocol/server-memory"}}}`, nil,
			`mcpServers.memory.command "npx -y @modelcontextprotocol/server-memory" has arguments in it: the ` +
				`command is started as one program, without a shell; write "command": "npx", "args": ["-y", ` +
				`"@modelcontextprotocol/server-memory"]`},
		{"NUL in an env value", `{mcpServers: {memory: {` + memory + `, env: {TOKEN: "ab\u0000cd"}}}}`, nil,
			`mcpServers.memory.env.TOKEN holds a NUL byte, which a program's arguments, environment or paths cannot hold`},
		{"a disabled server is not started, so not refused", `{mcpServers: {memory: {command: "npx", disabled: true}}}`,
			nil, ""},
		{"bad env name", `{mcpServers: {memory: {` + memory + `, env: {"A=B": "x"}}}}`, nil,
			`mcpServers.memory.env has a variable named "A=B": a name cannot be empty or hold "=" or a NUL byte`},
		{"Windsurf's serverUrl alone", `{mcpServers: {remote: {serverUrl: "https://x.example/mcp"}}}`, nil,
			`mcpServers.remote needs "command" (a program to start) or "url" (a streamable HTTP endpoint); ` +
				`"serverUrl" is another client's name for it: rename it "url"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := writeConfig(t, tt.file)
			lc, err := config.Load(t.Context(), path)
			if tt.err != "" {
				require.Error(t, err)
				assert.Equal(t, path+": "+tt.err, err.Error())
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.warnings, lc.Warnings)
		})
	}
}

// A command that loads the file prints each warning on its own line; `config get` is one such command.
func TestLoaderWarningsArePrinted(t *testing.T) {
	path := writeConfig(t, `{mcpServer: {}, tools: {toolsearch: true}}`)
	code, _, errOut := configCLI(t, "get", "--config", path, "tools")
	assert.Equal(t, exitOK, code, errOut)
	assert.Equal(t, "toolsearch config get: warning: unknown key mcpServer: did you mean mcpServers? (it is ignored)\n"+
		"toolsearch config get: warning: unknown key tools.toolsearch: did you mean tools.toolSearch? (it is ignored)\n",
		errOut)
}

// config set refuses to write a near miss of a valid key and a server field nobody defines; a field another
// client defines is written, with the warning that says it is ignored.
func TestConfigSetRefusesMistakenKeys(t *testing.T) {
	tests := []struct {
		name string
		args []string
		code int
		err  string // the whole stderr, with PATH for the file
	}{
		{"top-level typo", []string{"mcpServer.memory", `{command: "npx", args: ["-y", "m"]}`}, exitFailure,
			"toolsearch config set: unknown key mcpServer: did you mean mcpServers?; PATH is unchanged\n"},
		{"toolSearch in lower case", []string{"tools.toolsearch.mode", "tools"}, exitFailure,
			"toolsearch config set: unknown key tools.toolsearch: did you mean tools.toolSearch?; PATH is unchanged\n"},
		{"server field typo", []string{"mcpServers.memory.lazzy", "true"}, exitFailure,
			`toolsearch config set: unknown field mcpServers.memory.lazzy: did you mean "lazy"?; PATH is unchanged` + "\n"},
		{"server field inside a new entry", []string{"mcpServers.time", `{command: "uvx", args: ["mcp-server-time"], cmd: "x"}`},
			exitFailure, `toolsearch config set: unknown field mcpServers.time.cmd: did you mean "cwd"?; PATH is unchanged` + "\n"},
		{"unknown server field", []string{"mcpServers.memory.color", `"red"`}, exitFailure,
			"toolsearch config set: unknown field mcpServers.memory.color is ignored (the fields of a server are " +
				"alwaysAllow, args, autoApprove, command, cwd, disabled, disabledTools, env, excludeTools, headers, isolation, lazy, " +
				"maxInstances, startTimeoutMs, trusted, type, url, visible); PATH is unchanged\n"},
		{"command with arguments", []string{"mcpServers.memory.command", "npx -y m"}, exitFailure,
			`toolsearch config set: mcpServers.memory.command "npx -y m" has arguments in it: the command is started ` +
				`as one program, without a shell; write "command": "npx", "args": ["-y", "m", "-y", "m"]; PATH is unchanged` + "\n"},
		{"enabling a server that cannot start", []string{"mcpServers.off.disabled", "false"}, exitFailure,
			`toolsearch config set: mcpServers.off runs npx with no package to run (args empty): add the server's ` +
				`package to "args", for example "args": ["-y", "@modelcontextprotocol/server-memory"]; PATH is unchanged` + "\n"},
		{"another client's field", []string{"mcpServers.memory.timeout", "60"}, exitOK,
			"toolsearch config set: warning: mcpServers.memory.timeout is ignored: Cline and Roo Code read it as a " +
				"request timeout in seconds, Claude Code and Gemini CLI in milliseconds; toolsearch bounds each call by " +
				"its client's deadline, and a server's start by startTimeoutMs\n"},
		{"a key of another program", []string{"agents.default", `"x"`}, exitOK, ""},
	}
	const file = `{mcpServers: {memory: {command: "npx", args: ["-y", "m"]}, off: {command: "npx", disabled: true}}}`
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := writeConfig(t, file)
			code, _, errOut := configCLI(t, append([]string{"set", "--config", path}, tt.args...)...)
			assert.Equal(t, tt.code, code, errOut)
			assert.Equal(t, strings.ReplaceAll(tt.err, "PATH", path), errOut)
			data, err := os.ReadFile(path)
			require.NoError(t, err)
			assert.Equal(t, tt.code != exitOK, string(data) == file, "written only when accepted:\n%s", data)
		})
	}
}

// Twenty sets at once, each of its own key, all land: each re-reads the file under its lock before writing.
func TestConcurrentConfigSetsAllLand(t *testing.T) {
	path := writeConfig(t, "// shared\n{tools: {toolSearch: {mode: \"tools\"}}}\n")
	const n = 20
	var wg sync.WaitGroup
	codes := make([]int, n)
	errs := make([]string, n)
	for i := range n {
		wg.Go(func() {
			codes[i], _, errs[i] = configCLI(t, "set", "--config", path, fmt.Sprintf("mcpServers.s%02d", i),
				fmt.Sprintf(`{command: "server-%d"}`, i))
		})
	}
	wg.Wait()
	for i := range n {
		require.Equal(t, exitOK, codes[i], errs[i])
	}
	lc, err := config.Load(t.Context(), path)
	require.NoError(t, err)
	assert.Len(t, lc.Servers.Servers, n, "every set landed")
	for i := range n {
		assert.Equal(t, fmt.Sprintf("server-%d", i), lc.Servers.Servers[fmt.Sprintf("s%02d", i)].Command)
	}
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.True(t, strings.HasPrefix(string(data), "// shared\n"), "the comment survives twenty edits")
	entries, err := os.ReadDir(filepath.Dir(path))
	require.NoError(t, err)
	for _, e := range entries {
		assert.False(t, strings.HasSuffix(e.Name(), ".tmp"), "no temporary file is left: %s", e.Name())
	}
}

// cliEnv makes this test binary run one toolsearch command line (JSON-encoded in it) and exit, so tests can run
// the CLI in processes of its own.
const cliEnv = "TOOLSEARCH_CMD_TEST_CLI"

func init() {
	if line := os.Getenv(cliEnv); line != "" {
		var args []string
		if err := json.Unmarshal([]byte(line), &args); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(exitUsage)
		}
		os.Exit(run(context.Background(), args, os.Stdin, os.Stdout, os.Stderr))
	}
}

// The same across processes: the lock is the file's, not the process's.
func TestConcurrentConfigSetsFromProcessesAllLand(t *testing.T) {
	path := writeConfig(t, "{}\n")
	const n = 8
	var wg sync.WaitGroup
	errs := make([]error, n)
	outs := make([][]byte, n)
	for i := range n {
		wg.Go(func() {
			args, _ := json.Marshal([]string{"config", "set", "--config", path, fmt.Sprintf("mcpServers.p%d", i),
				fmt.Sprintf(`{command: "proc-%d"}`, i)})
			cmd := exec.Command(os.Args[0], "-test.run=^$")
			cmd.Env = append(os.Environ(), cliEnv+"="+string(args))
			outs[i], errs[i] = cmd.CombinedOutput()
		})
	}
	wg.Wait()
	for i := range n {
		require.NoError(t, errs[i], "%s", outs[i])
	}
	lc, err := config.Load(t.Context(), path)
	require.NoError(t, err)
	assert.Len(t, lc.Servers.Servers, n, "every process's set landed")
}
