package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestConfigMistakeMessages: every mistake of a hand-written or copied config file gets a message naming the key
// and what to write, exactly: the mistakes users make (group "issue") and what other MCP clients' files hold
// (group "clients": Claude Desktop, Claude Code, Cursor, VS Code, Windsurf, Gemini CLI, Zed, OpenCode, Continue,
// Cline). err is the whole error after the file's path; warnings are all of Load's warnings, in order. In the
// expected text, DIR is the file's directory and HOME the user's home directory.
func TestConfigMistakeMessages(t *testing.T) {
	home, err := os.UserHomeDir()
	require.NoError(t, err)
	tests := []struct {
		group, name, ext, file string
		err                    string
		warnings               []string
	}{
		{group: `issue`, name: `a server name given twice`, ext: `json5`, file: `{mcpServers: {
  memory: {command: "npx", args: ["-y", "@modelcontextprotocol/server-memory"]},
  memory: {command: "other-server"},
}}`,
			err: `server "memory" is given twice in mcpServers (line 2, column 3 and line 3, column 3): only the second would start; give each server a name of its own, or remove one`},
		{group: `issue`, name: `a key given twice`, ext: `json5`, file: `{tools: {deny: ["a"],
  deny: ["b"]}}`,
			err: `tools.deny is given twice (line 1, column 10 and line 2, column 3): only the second would be read; merge the two into one`},
		{group: `issue`, name: `a section given twice`, ext: `json5`, file: `{mcpServers: {},
mcpServers: {}}`,
			err: `mcpServers is given twice (line 1, column 2 and line 2, column 1): only the second would be read; merge the two into one`},
		{group: `issue`, name: `an env variable given twice`, ext: `json5`, file: `{mcpServers: {m: {command: "npx", args: ["-y", "@modelcontextprotocol/server-memory"], env: {TOKEN: "${A}", TOKEN: "${B}"}}}}`,
			err: `mcpServers.m.env.TOKEN is given twice (line 1, column 94 and line 1, column 109): only the second would be read; merge the two into one`},
		{group: `issue`, name: `$HOME without braces in env`, ext: `json5`, file: `{mcpServers: {m: {command: "npx", args: ["-y", "@modelcontextprotocol/server-memory"], env: {NOTES_DIR: "$HOME/notes"}}}}`,
			warnings: []string{`mcpServers.m.env.NOTES_DIR names $HOME without braces, which toolsearch passes on as written: write ${HOME} in its place`}},
		{group: `issue`, name: `%APPDATA% in env`, ext: `json5`, file: `{mcpServers: {m: {command: "npx", args: ["-y", "@modelcontextprotocol/server-memory"], env: {NOTES_DIR: "%APPDATA%\\notes"}}}}`,
			warnings: []string{`mcpServers.m.env.NOTES_DIR names %APPDATA% (the Windows form), which toolsearch passes on as written: write ${APPDATA} in its place`}},
		{group: `issue`, name: `Claude Code's ${VAR:-default}`, ext: `json5`, file: `{mcpServers: {m: {command: "npx", args: ["-y", "@modelcontextprotocol/server-memory"], env: {NOTES_DIR: "${NOTES_DIR:-/tmp/notes}"}}}}`,
			warnings: nil},
		{group: `issue`, name: `a Windows program path with a space`, ext: `json5`, file: `{mcpServers: {m: {command: "C:\\Program Files\\nodejs\\npx.cmd", args: ["-y", "@modelcontextprotocol/server-memory"]}}}`,
			warnings: nil},
		{group: `issue`, name: `a Windows program path with a space and arguments`, ext: `json5`, file: `{mcpServers: {m: {command: "C:\\Program Files\\nodejs\\npx.cmd -y @modelcontextprotocol/server-memory"}}}`,
			err: `mcpServers.m.command "C:\\Program Files\\nodejs\\npx.cmd -y @modelcontextprotocol/server-memory" has arguments after the program's path: the command is started as one program, without a shell; write "command": "C:\\Program Files\\nodejs\\npx.cmd", "args": ["-y", "@modelcontextprotocol/server-memory"]`},
		{group: `issue`, name: `a macOS program path with a space`, ext: `json5`, file: `{mcpServers: {m: {command: "/Applications/Notes Server.app/Contents/MacOS/notes-server"}}}`,
			warnings: nil},
		{group: `issue`, name: `a number in tools.deny`, ext: `json5`, file: `{tools: {deny: [1]}}`,
			err: `tools.deny[0] must be a selector in quotes, such as "server:github" or "mcp:fs:read_*", not 1`},
		{group: `issue`, name: `server:memroy`, ext: `json5`, file: `{mcpServers: {memory: {command: "npx", args: ["-y", "@modelcontextprotocol/server-memory"]}}, tools: {deny: ["server:memroy"]}}`,
			warnings: []string{`tools.deny[0] "server:memroy" names no server of mcpServers, so it matches no tool: did you mean "server:memory"?`}},
		{group: `issue`, name: `group:readrs`, ext: `json5`, file: `{tools: {groups: {readers: ["mcp:github:get_*"]}, allow: ["group:readrs"]}}`,
			err: `tools.allow[0] "group:readrs" names no group of tools.groups: did you mean "group:readers"? (groups: readers)`},
		{group: `issue`, name: `a group and no tools.groups`, ext: `json5`, file: `{tools: {ask: ["group:writers"]}}`,
			err: `tools.ask[0] "group:writers" names a group, and tools.groups defines none: define it, for example "groups": {"writers": ["mcp:github:get_*"]}`},
		{group: `issue`, name: `mcp:memory in allow`, ext: `json5`, file: `{mcpServers: {memory: {command: "npx", args: ["-y", "@modelcontextprotocol/server-memory"]}}, tools: {allow: ["mcp:memory"]}}`,
			err: `tools.allow[0] "mcp:memory" names a server without a tool, so it matches no tool (and in allow, every other tool is hidden): write "mcp:memory:*" for every tool of memory, or "mcp:memory:<tool name>" for one`},
		{group: `issue`, name: `a relative cwd`, ext: `json5`, file: `{mcpServers: {m: {command: "npx", args: ["-y", "@modelcontextprotocol/server-memory"], cwd: "notes"}}}`,
			warnings: []string{`mcpServers.m.cwd "notes" is relative, so it is taken from the directory toolsearch is started in, which the MCP client that starts it chooses (often / or the client's own folder, not your project): write an absolute path, such as "DIR/notes"`}},
		{group: `issue`, name: `disabledTools as one string`, ext: `json5`, file: `{mcpServers: {m: {command: "npx", args: ["-y", "@modelcontextprotocol/server-memory"], disabledTools: "delete_entities"}}}`,
			err: `mcpServers.m.disabledTools must be an array of strings, not one string: write ["delete_entities"]`},
		{group: `issue`, name: `disabledTools with a number`, ext: `json5`, file: `{mcpServers: {m: {command: "npx", args: ["-y", "@modelcontextprotocol/server-memory"], disabledTools: [1]}}}`,
			err: `mcpServers.m.disabledTools[0] must be a tool name in quotes, as the server lists it (for example "delete_repository"), not 1`},
		{group: `issue`, name: `autoApprove as true`, ext: `json5`, file: `{mcpServers: {m: {command: "npx", args: ["-y", "@modelcontextprotocol/server-memory"], autoApprove: true}}}`,
			err: `mcpServers.m.autoApprove must be an array of strings, for example ["get_issue", "list_*"] (got true)`},
		{group: `issue`, name: `a url without http://`, ext: `json5`, file: `{mcpServers: {m: {url: "127.0.0.1:3000/mcp"}}}`,
			err: `mcpServers.m.url "127.0.0.1:3000/mcp" has no scheme: write "http://127.0.0.1:3000/mcp"`},
		{group: `issue`, name: `a remote url without https://`, ext: `json5`, file: `{mcpServers: {m: {url: "mcp.example.com/mcp"}}}`,
			err: `mcpServers.m.url "mcp.example.com/mcp" has no scheme: write "https://mcp.example.com/mcp"`},
		{group: `issue`, name: `mcpServers inside tools`, ext: `json5`, file: `{tools: {mcpServers: {m: {command: "npx", args: ["-y", "@modelcontextprotocol/server-memory"]}}}}`,
			warnings: []string{`tools.mcpServers is not read, so none of its servers starts: the server list belongs at the top level of the file, beside "tools"; move it out of "tools"`}},
		{group: `issue`, name: `a YAML file`, ext: `yaml`, file: `mcpServers:
  memory:
    command: npx
`,
			err: `line 1, column 1: invalid literal "mcpServers" (strings need quotes); this looks like YAML; the config file is JSON5 (JSON with comments and unquoted keys): write it as {mcpServers: {memory: {command: "npx", args: ["-y", "@modelcontextprotocol/server-memory"]}}}`},
		{group: `clients`, name: `Claude Desktop: args as one string`, ext: `json5`, file: `{mcpServers: {m: {command: "npx", args: "-y @modelcontextprotocol/server-memory"}}}`,
			err: `mcpServers.m.args must be an array of strings, not one string: write ["-y", "@modelcontextprotocol/server-memory"]`},
		{group: `clients`, name: `Claude Desktop: a number in env`, ext: `json5`, file: `{mcpServers: {m: {command: "npx", args: ["-y", "@modelcontextprotocol/server-memory"], env: {PORT: 3000}}}}`,
			err: `mcpServers.m.env.PORT must be a string (every value of env is passed as text), not 3000: write "3000"`},
		{group: `clients`, name: `Claude Desktop: its own settings beside the servers`, ext: `json5`, file: `{globalShortcut: "Ctrl+Space", mcpServers: {m: {command: "npx", args: ["-y", "@modelcontextprotocol/server-memory"]}}}`,
			warnings: nil},
		{group: `clients`, name: `Claude Code: type sse`, ext: `json5`, file: `{mcpServers: {m: {type: "sse", url: "https://mcp.example.com/sse"}}}`,
			err: `mcpServers.m.type "sse" is the older HTTP+SSE transport, which toolsearch does not speak: a server that offers it usually serves streamable HTTP too, at the same address ending in /mcp instead of /sse; write that "url" and remove "type"`},
		{group: `clients`, name: `Claude Code: ${VAR:-default} in a header`, ext: `json5`, file: `{mcpServers: {m: {type: "http", url: "https://mcp.example.com/mcp", headers: {"X-Team": "${TEAM:-default}"}}}}`,
			warnings: nil},
		{group: `clients`, name: `Claude Code: a project's servers in ~/.claude.json`, ext: `json5`, file: `{projects: {"/home/you/app": {mcpServers: {m: {command: "npx", args: ["-y", "@modelcontextprotocol/server-memory"]}}}}, mcpServers: {}}`,
			warnings: []string{`projects./home/you/app.mcpServers is Claude Code's server list of one project; toolsearch reads the top-level mcpServers only: copy the servers you want there`}},
		{group: `clients`, name: `Cursor: ${env:NAME}`, ext: `json5`, file: `{mcpServers: {m: {command: "npx", args: ["-y", "@modelcontextprotocol/server-memory"], env: {GITHUB_TOKEN: "${env:GITHUB_TOKEN}"}}}}`,
			warnings: []string{`mcpServers.m.env.GITHUB_TOKEN names ${env:GITHUB_TOKEN}, VS Code's and Cursor's form, which toolsearch passes on as written: write ${GITHUB_TOKEN} in its place`}},
		{group: `clients`, name: `Cursor: ${userHome}`, ext: `json5`, file: `{mcpServers: {m: {command: "npx", args: ["-y", "@modelcontextprotocol/server-memory"], env: {NOTES_DIR: "${userHome}/notes"}}}}`,
			warnings: []string{`mcpServers.m.env.NOTES_DIR names ${userHome}, VS Code's and Cursor's form, which toolsearch passes on as written: write ${HOME} in its place`}},
		{group: `clients`, name: `Cursor: envFile`, ext: `json5`, file: `{mcpServers: {m: {command: "npx", args: ["-y", "@modelcontextprotocol/server-memory"], envFile: ".env"}}}`,
			warnings: []string{`mcpServers.m.envFile is ignored: Cursor and VS Code read variables from this file; toolsearch takes them from "env" and its own environment`}},
		{group: `clients`, name: `VS Code: servers and inputs`, ext: `json5`, file: `{inputs: [{type: "promptString", id: "token"}], servers: {m: {command: "npx", args: ["-y", "@modelcontextprotocol/server-memory"]}}}`,
			warnings: []string{`servers is VS Code's (.vscode/mcp.json) name for the server list; toolsearch reads mcpServers, so no server is started (rename it mcpServers)`, `inputs is VS Code's list of values it prompts for; toolsearch prompts for nothing: set each value in the environment where toolsearch runs and write ${NAME} where the server uses it`}},
		{group: `clients`, name: `VS Code: ${input:ID} in a header`, ext: `json5`, file: `{mcpServers: {m: {url: "https://mcp.example.com/mcp", headers: {Authorization: "Bearer ${input:token}"}}}}`,
			err: `mcpServers.m.headers.Authorization names ${input:token}, a value VS Code prompts for, which toolsearch cannot: put the value in an environment variable where toolsearch runs and write ${NAME} in its place`},
		{group: `clients`, name: `VS Code: ${workspaceFolder} in args`, ext: `json5`, file: `{mcpServers: {m: {command: "node", args: ["${workspaceFolder}/server.js"]}}}`,
			warnings: []string{`mcpServers.m.args[0] names ${workspaceFolder}, but args is passed to the server as written (no shell starts it, and toolsearch expands ${NAME} in env and headers only): write the value itself, or pass it to the server in "env" (where ${NAME} is expanded)`}},
		{group: `clients`, name: `VS Code: dev`, ext: `json5`, file: `{mcpServers: {m: {command: "npx", args: ["-y", "@modelcontextprotocol/server-memory"], dev: {watch: "src/**/*.ts"}}}}`,
			warnings: []string{`mcpServers.m.dev is ignored: VS Code's development mode (watch and debug); toolsearch restarts no server when files change`}},
		{group: `clients`, name: `VS Code: settings.json's mcp`, ext: `json5`, file: `{mcp: {servers: {m: {command: "npx", args: ["-y", "@modelcontextprotocol/server-memory"]}}}}`,
			warnings: []string{`mcp is VS Code's settings name for the server list; toolsearch reads mcpServers, so no server is started (rename it mcpServers)`}},
		{group: `clients`, name: `Windsurf: serverUrl`, ext: `json5`, file: `{mcpServers: {m: {serverUrl: "https://mcp.example.com/mcp"}}}`,
			err: `mcpServers.m needs "command" (a program to start) or "url" (a streamable HTTP endpoint); "serverUrl" is another client's name for it: rename it "url"`},
		{group: `clients`, name: `Gemini CLI: httpUrl`, ext: `json5`, file: `{mcpServers: {m: {httpUrl: "https://mcp.example.com/mcp"}}}`,
			err: `mcpServers.m needs "command" (a program to start) or "url" (a streamable HTTP endpoint); "httpUrl" is another client's name for it: rename it "url"`},
		{group: `clients`, name: `Gemini CLI: trust`, ext: `json5`, file: `{mcpServers: {m: {command: "npx", args: ["-y", "@modelcontextprotocol/server-memory"], trust: true}}}`,
			warnings: []string{`mcpServers.m.trust is ignored: Gemini CLI's trust switch; toolsearch reads "trusted"`}},
		{group: `clients`, name: `Gemini CLI: includeTools`, ext: `json5`, file: `{mcpServers: {m: {command: "npx", args: ["-y", "@modelcontextprotocol/server-memory"], includeTools: ["read_graph"]}}}`,
			warnings: []string{`mcpServers.m.includeTools is ignored: Gemini CLI's list of the only tools it offers; toolsearch offers every tool of a server not denied: list the others in "disabledTools" (or "excludeTools"), or narrow tools.allow`}},
		{group: `clients`, name: `Gemini CLI: mcp.allowed`, ext: `json5`, file: `{mcp: {allowed: ["m"]}, mcpServers: {m: {command: "npx", args: ["-y", "@modelcontextprotocol/server-memory"]}}}`,
			warnings: []string{`mcp.allowed and mcp.excluded are Gemini CLI's lists of the servers to start; toolsearch starts every server of mcpServers that is not "disabled": set "disabled": true on the others`}},
		{group: `clients`, name: `Gemini CLI: mcp.allowed without mcpServers`, ext: `json5`, file: `{mcp: {allowed: ["m"]}}`,
			warnings: []string{`mcp.allowed and mcp.excluded are Gemini CLI's lists of the servers to start; toolsearch starts every server of mcpServers that is not "disabled": set "disabled": true on the others`}},
		{group: `clients`, name: `Gemini CLI: authProviderType`, ext: `json5`, file: `{mcpServers: {m: {url: "https://mcp.example.com/mcp", authProviderType: "google_credentials"}}}`,
			warnings: []string{`mcpServers.m.authProviderType is ignored: Gemini CLI's choice of sign-in; toolsearch sends "headers" and does no OAuth flow`}},
		{group: `clients`, name: `Gemini CLI: description`, ext: `json5`, file: `{mcpServers: {m: {command: "npx", args: ["-y", "@modelcontextprotocol/server-memory"], description: "my notes"}}}`,
			warnings: []string{`mcpServers.m.description is ignored: Gemini CLI's note on the server; toolsearch describes a server by its tools`}},
		{group: `clients`, name: `Zed: context_servers`, ext: `json5`, file: `{context_servers: {m: {command: "npx", args: ["-y", "@modelcontextprotocol/server-memory"]}}}`,
			warnings: []string{`context_servers is Zed's name for the server list; toolsearch reads mcpServers, so no server is started (rename it mcpServers)`}},
		{group: `clients`, name: `Zed: command as an object`, ext: `json5`, file: `{mcpServers: {m: {command: {path: "npx", args: ["-y", "@modelcontextprotocol/server-memory"]}}}}`,
			err: `mcpServers.m.command is an object (Zed's form, {"path", "args"}): write "command": "npx", "args": ["-y", "@modelcontextprotocol/server-memory"]`},
		{group: `clients`, name: `OpenCode: command as an array`, ext: `json5`, file: `{mcpServers: {m: {command: ["npx", "-y", "@modelcontextprotocol/server-memory"]}}}`,
			err: `mcpServers.m.command is an array (OpenCode's form): write "command": "npx", "args": ["-y", "@modelcontextprotocol/server-memory"]`},
		{group: `clients`, name: `OpenCode: type local`, ext: `json5`, file: `{mcpServers: {m: {type: "local", command: "npx", args: ["-y", "@modelcontextprotocol/server-memory"]}}}`,
			err: `mcpServers.m.type "local" is OpenCode's; toolsearch tells a program ("command") from an endpoint ("url") by the field that is set: remove "type"`},
		{group: `clients`, name: `OpenCode: enabled and environment`, ext: `json5`, file: `{mcpServers: {m: {command: "npx", args: ["-y", "@modelcontextprotocol/server-memory"], enabled: false, environment: {A: "b"}}}}`,
			warnings: []string{`mcpServers.m.enabled is ignored: OpenCode's switch; toolsearch reads "disabled": write "disabled": true to keep the server from starting`, `mcpServers.m.environment is ignored: OpenCode's name for the variables; toolsearch reads "env": rename it "env"`}},
		{group: `clients`, name: `Continue: a list of servers`, ext: `json5`, file: `{mcpServers: [{name: "memory", command: "npx", args: ["-y", "@modelcontextprotocol/server-memory"]}]}`,
			err: `mcpServers is a list of servers with names (Continue's form); toolsearch reads an object of servers by name: write {"memory":{"args":["-y","@modelcontextprotocol/server-memory"],"command":"npx"}}`},
		{group: `clients`, name: `Cline: transportType`, ext: `json5`, file: `{mcpServers: {m: {command: "npx", args: ["-y", "@modelcontextprotocol/server-memory"], transportType: "stdio"}}}`,
			warnings: []string{`mcpServers.m.transportType is ignored: Cline's older name for the transport; toolsearch reads "type"`}},
		{group: `clients`, name: `a duration for startTimeoutMs`, ext: `json5`, file: `{mcpServers: {m: {command: "npx", args: ["-y", "@modelcontextprotocol/server-memory"], startTimeoutMs: "30s"}}}`,
			err: `mcpServers.m.startTimeoutMs is a number of milliseconds, not "30s": write 30000`},
		{group: `clients`, name: `a quoted boolean`, ext: `json5`, file: `{mcpServers: {m: {command: "npx", args: ["-y", "@modelcontextprotocol/server-memory"], disabled: "true"}}}`,
			err: `mcpServers.m.disabled is true or false, not the string "true": write true (no quotes)`},
		{group: `clients`, name: `an SSE address without a type`, ext: `json5`, file: `{mcpServers: {m: {url: "https://mcp.example.com/sse"}}}`,
			warnings: []string{`mcpServers.m.url "https://mcp.example.com/sse" ends in /sse, the usual address of the older HTTP+SSE transport, which toolsearch does not speak: if the server fails to start, write its streamable HTTP address (often the same ending in /mcp)`}},
		{group: `clients`, name: `a WebSocket url`, ext: `json5`, file: `{mcpServers: {m: {url: "wss://mcp.example.com/ws"}}}`,
			err: `mcpServers.m.url "wss://mcp.example.com/ws" is a WebSocket address; toolsearch speaks streamable HTTP: write the server's http:// or https:// address`},
		{group: `clients`, name: `$HOME in args`, ext: `json5`, file: `{mcpServers: {m: {command: "node", args: ["$HOME/server.js"]}}}`,
			warnings: []string{`mcpServers.m.args[0] names $HOME, but args is passed to the server as written (no shell starts it, and toolsearch expands ${NAME} in env and headers only): write the value itself, or pass it to the server in "env" (where ${NAME} is expanded)`}},
		{group: `clients`, name: `${HOME} in cwd`, ext: `json5`, file: `{mcpServers: {m: {command: "npx", args: ["-y", "@modelcontextprotocol/server-memory"], cwd: "${HOME}/notes"}}}`,
			warnings: []string{`mcpServers.m.cwd names ${HOME}, but cwd is passed to the server as written (no shell starts it, and toolsearch expands ${NAME} in env and headers only): write the value itself`}},
		{group: `clients`, name: `~ in cwd`, ext: `json5`, file: `{mcpServers: {m: {command: "npx", args: ["-y", "@modelcontextprotocol/server-memory"], cwd: "~/notes"}}}`,
			warnings: []string{`mcpServers.m.cwd starts with "~", which only a shell expands, and none starts the server: write the whole path, "HOME/notes"`}},
		{group: `clients`, name: `$TOKEN in a header`, ext: `json5`, file: `{mcpServers: {m: {url: "https://mcp.example.com/mcp", headers: {Authorization: "Bearer $GITHUB_TOKEN"}}}}`,
			warnings: []string{`mcpServers.m.headers.Authorization names $GITHUB_TOKEN without braces, which toolsearch passes on as written: write ${GITHUB_TOKEN} in its place`}},
		{group: `clients`, name: `a password with $$ in it`, ext: `json5`, file: `{mcpServers: {m: {command: "npx", args: ["-y", "@modelcontextprotocol/server-memory"], env: {DB_PASSWORD: "pa$$word"}}}}`,
			warnings: nil},
		{group: `clients`, name: `toolSearch at the top level`, ext: `json5`, file: `{toolSearch: {mode: "tools"}, mcpServers: {}}`,
			warnings: []string{`toolSearch is not read at the top level of the file: it belongs under "tools" (tools.toolSearch); move it there`}},
		{group: `clients`, name: `a server whose selector names another`, ext: `json5`, file: `{mcpServers: {memory: {command: "npx", args: ["-y", "@modelcontextprotocol/server-memory"]}}, tools: {allow: ["server:github"]}}`,
			warnings: []string{`tools.allow[0] "server:github" names no server of mcpServers, so it matches no tool (servers: memory)`}},
	}
	for _, tc := range tests {
		t.Run(tc.group+"/"+tc.name, func(t *testing.T) {
			path := writeFile(t, "config."+tc.ext, tc.file)
			dir := filepath.Dir(path)
			expand := func(s string) string {
				return strings.ReplaceAll(strings.ReplaceAll(s, "DIR/", dir+"/"), `"HOME/`, `"`+home+"/")
			}
			cfg, err := Load(t.Context(), path)
			if tc.err != "" {
				require.Error(t, err)
				prefix := path + ": "
				if !strings.HasPrefix(err.Error(), prefix) {
					prefix = "config " + path + ": "
				}
				assert.Equal(t, prefix+expand(tc.err), err.Error())
				return
			}
			require.NoError(t, err)
			var want []string
			for _, w := range tc.warnings {
				want = append(want, expand(w))
			}
			assert.Equal(t, want, cfg.Warnings)
		})
	}
}
