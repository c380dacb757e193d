package config

import (
	"fmt"
	"maps"
	"os"
	"reflect"
	"slices"
	"strings"

	"github.com/toolsearch/toolsearch/internal/json5"
	"github.com/toolsearch/toolsearch/internal/suggest"
	"github.com/toolsearch/toolsearch/mcp/upstream"
)

// keyProblem is a key of the config file that toolsearch does not read. The file is shared with MCP clients and
// OpenClaw, so such a key is only a warning when a command loads the file; `config set` refuses to write one
// that is one edit from a valid key (a typo) or an unknown field of a server entry.
type keyProblem struct {
	path []string
	msg  string
	// refused marks what `config set` will not write: a near miss of a valid key, or a server field that no
	// client defines.
	refused bool
}

// The keys toolsearch reads at the top of the file and under "tools". Other keys there belong to the programs
// that share the file and are left alone unless they are nearly one of these.
var (
	topLevelKeys = []string{upstream.ConfigKey, "tools"}
	toolsKeys    = []string{"toolSearch", AllowKey, DenyKey, AskKey, GroupsKey, ProfilesKey}
)

// foreignServerFields are the fields of an mcpServers entry that other MCP clients define and toolsearch does
// not honour, each with what it means there and what toolsearch does instead. None of them can be honoured as
// written: timeout is a per-request limit whose unit differs between clients, and the tool lists belong to
// clients that approve or hide tools themselves.
var foreignServerFields = map[string]string{
	"timeout": "Cline and Roo Code read it as a request timeout in seconds, Claude Code and Gemini CLI in " +
		"milliseconds; toolsearch bounds each call by its client's deadline, and a server's start by startTimeoutMs",
	"watchPaths":    "Roo Code restarts the server when these files change; toolsearch watches no files",
	"transportType": "Cline's older name for the transport; toolsearch reads \"type\"",
	"envFile":       "Cursor and VS Code read variables from this file; toolsearch takes them from \"env\" and its own environment",
	"serverUrl":     "Windsurf's name for the endpoint; toolsearch reads \"url\"",
	"httpUrl":       "Gemini CLI's name for a streamable HTTP endpoint; toolsearch reads \"url\"",
	"trust":         "Gemini CLI's trust switch; toolsearch reads \"trusted\"",
	"includeTools": "Gemini CLI's list of the only tools it offers; toolsearch offers every tool of a server " +
		"not denied: list the others in \"disabledTools\" (or \"excludeTools\"), or narrow tools.allow",
	"oauth":            "OAuth settings of Gemini CLI and VS Code; toolsearch sends \"headers\" and does no OAuth flow",
	"authProviderType": "Gemini CLI's choice of sign-in; toolsearch sends \"headers\" and does no OAuth flow",
	"description":      "Gemini CLI's note on the server; toolsearch describes a server by its tools",
	"dev":              "VS Code's development mode (watch and debug); toolsearch restarts no server when files change",
	"enabled": "OpenCode's switch; toolsearch reads \"disabled\": write \"disabled\": true to keep the server " +
		"from starting",
	"environment": "OpenCode's name for the variables; toolsearch reads \"env\": rename it \"env\"",
}

// closestKey returns the candidate nearest to s and how many edits away it is, a change of case counting as
// one (suggest.Closest ignores case, but the file's keys do not).
func closestKey(s string, candidates []string) (string, int) {
	best, d := suggest.Closest(s, candidates)
	if d == 0 && best != s {
		d = 1
	}
	return best, d
}

// fileKeyProblems lists every key of the file that toolsearch does not read and that looks like a mistake:
// near misses at the top level and under "tools", and every field of a server entry that is not a field of
// upstream.ServerConfig. tools.toolSearch itself is checked by runtime.CheckConfig, which refuses unknown keys.
func fileKeyProblems(src []byte, fields map[string]reflect.Type) []keyProblem {
	root, err := json5.Parse(src)
	if err != nil || root.Kind != json5.Object {
		return nil
	}
	var out []keyProblem
	nearMisses := func(v *json5.Value, parent []string, known []string) {
		for _, m := range v.Members {
			if slices.Contains(known, m.Key) {
				continue
			}
			best, d := closestKey(m.Key, known)
			if d < 0 || d > 2 || len(m.Key) <= d {
				continue
			}
			path := append(slices.Clone(parent), m.Key)
			out = append(out, keyProblem{path: path, refused: d == 1, msg: fmt.Sprintf(
				"unknown key %s: did you mean %s? (it is ignored)", FormatKey(path...),
				FormatKey(append(slices.Clone(parent), best)...))})
		}
	}
	nearMisses(root, nil, topLevelKeys)
	if root.Member(upstream.ConfigKey) == nil {
		// Other clients' names for the server list: a file copied from them lists its servers under these.
		for _, alias := range []struct{ key, client string }{
			{"servers", "VS Code's (.vscode/mcp.json)"}, {"mcp", "VS Code's settings"}, {"context_servers", "Zed's"},
		} {
			if alias.key == "mcp" && geminiServerLists(root) {
				continue
			}
			if root.Member(alias.key) != nil {
				out = append(out, keyProblem{path: []string{alias.key}, msg: fmt.Sprintf("%s is %s name for the "+
					"server list; toolsearch reads %s, so no server is started (rename it %s)", alias.key,
					alias.client, upstream.ConfigKey, upstream.ConfigKey)})
			}
		}
	}
	if geminiServerLists(root) {
		out = append(out, keyProblem{path: []string{"mcp"}, msg: "mcp.allowed and mcp.excluded are Gemini CLI's " +
			"lists of the servers to start; toolsearch starts every server of " + upstream.ConfigKey +
			" that is not \"disabled\": set \"disabled\": true on the others"})
	}
	if tools := root.Find([]string{"tools"}); tools != nil && tools.Kind == json5.Object {
		nearMisses(tools, []string{"tools"}, toolsKeys)
		if tools.Member(upstream.ConfigKey) != nil {
			out = append(out, keyProblem{path: []string{"tools", upstream.ConfigKey}, refused: true, msg: fmt.Sprintf(
				"tools.%s is not read, so none of its servers starts: the server list belongs at the top level of the "+
					"file, beside \"tools\"; move it out of \"tools\"", upstream.ConfigKey)})
		}
	}
	if root.Member("toolSearch") != nil {
		out = append(out, keyProblem{path: []string{"toolSearch"}, refused: true, msg: "toolSearch is not read at the " +
			"top level of the file: it belongs under \"tools\" (tools.toolSearch); move it there"})
	}
	if root.Member("inputs") != nil && root.Member("servers") != nil {
		out = append(out, keyProblem{path: []string{"inputs"}, msg: "inputs is VS Code's list of values it prompts " +
			"for; toolsearch prompts for nothing: set each value in the environment where toolsearch runs and write " +
			"${NAME} where the server uses it"})
	}
	if projects := root.Find([]string{"projects"}); projects != nil && projects.Kind == json5.Object {
		for _, p := range projects.Members {
			if p.Value.Kind == json5.Object && p.Value.Member(upstream.ConfigKey) != nil {
				out = append(out, keyProblem{path: []string{"projects", p.Key, upstream.ConfigKey}, msg: fmt.Sprintf(
					"%s is Claude Code's server list of one project; toolsearch reads the top-level %s only: copy "+
						"the servers you want there", FormatKey("projects", p.Key, upstream.ConfigKey), upstream.ConfigKey)})
			}
		}
	}
	servers := root.Find([]string{upstream.ConfigKey})
	if servers == nil || servers.Kind != json5.Object {
		return out
	}
	known := slices.Sorted(maps.Keys(fields))
	for _, s := range servers.Members {
		if s.Value.Kind != json5.Object {
			continue
		}
		for _, m := range s.Value.Members {
			if _, ok := fields[m.Key]; ok {
				continue
			}
			path := []string{upstream.ConfigKey, s.Key, m.Key}
			key := FormatKey(path...)
			if why, ok := foreignServerFields[m.Key]; ok {
				out = append(out, keyProblem{path: path, msg: fmt.Sprintf("%s is ignored: %s", key, why)})
				continue
			}
			best, d := closestKey(m.Key, known)
			msg := fmt.Sprintf("unknown field %s: did you mean %q? (it is ignored)", key, best)
			if d > 2 {
				msg = fmt.Sprintf("unknown field %s is ignored (the fields of a server are %s)", key,
					strings.Join(known, ", "))
			}
			out = append(out, keyProblem{path: path, msg: msg, refused: true})
		}
	}
	return out
}

// packageRunners start the package named in their arguments, fetching it first; with no package they do
// something else entirely (npx with no arguments opens a shell that would run the JSON-RPC messages it is sent
// as commands).
var packageRunners = []string{"npx", "pnpx", "bunx", "uvx"}

// runnerFlagsWithValue are the runner options whose next argument is a value, not the package.
var runnerFlagsWithValue = []string{"-p", "--package", "-c", "--call", "--from", "--with", "--python"}

// checkServerSemantics refuses what would start the wrong program, or none: a command with its arguments in
// the string, a package runner with no package, and a NUL byte (which no argument, variable or path can hold,
// so the start would fail again on every retry).
func checkServerSemantics(name string, s upstream.ServerConfig) []string {
	key := FormatKey(upstream.ConfigKey, name)
	var problems []string
	nul := func(what, v string) {
		if strings.ContainsRune(v, 0) {
			problems = append(problems, fmt.Sprintf("%s holds a NUL byte, which %s cannot hold", what,
				"a program's arguments, environment or paths"))
		}
	}
	nul(key+".command", s.Command)
	nul(key+".cwd", s.Cwd)
	for i, a := range s.Args {
		nul(fmt.Sprintf("%s.args[%d]", key, i), a)
	}
	for _, v := range slices.Sorted(maps.Keys(s.Env)) {
		if v == "" || strings.ContainsAny(v, "=\x00") {
			problems = append(problems, fmt.Sprintf("%s.env has a variable named %q: a name cannot be empty or "+
				"hold \"=\" or a NUL byte", key, v))
			continue
		}
		nul(FormatKey(upstream.ConfigKey, name, "env", v), s.Env[v])
	}
	if s.Command == "" {
		return problems
	}
	if path, args, ok := pathWithSpaces(s.Command); ok && !exists(s.Command) {
		// A program path with spaces in it (C:\Program Files\...) is one program: never split it at a space.
		if len(args) > 0 {
			fix, _ := json5Array(append(args, s.Args...))
			problems = append(problems, fmt.Sprintf("%s.command %q has arguments after the program's path: the "+
				"command is started as one program, without a shell; write \"command\": %q, \"args\": %s", key,
				s.Command, path, fix))
			return problems
		}
	} else if fields := strings.Fields(s.Command); len(fields) > 1 && !exists(s.Command) {
		fix, _ := json5Array(append(fields[1:], s.Args...))
		problems = append(problems, fmt.Sprintf("%s.command %q has arguments in it: the command is started as "+
			"one program, without a shell; write \"command\": %q, \"args\": %s", key, s.Command, fields[0], fix))
		return problems
	}
	// The base name after either separator, so that a Windows path (C:\Program Files\nodejs\npx.cmd) names its runner too.
	base := s.Command[strings.LastIndexAny(s.Command, `/\`)+1:]
	runner := strings.TrimSuffix(strings.TrimSuffix(strings.ToLower(base), ".cmd"), ".exe")
	if slices.Contains(packageRunners, runner) && !namesPackage(s.Args) {
		example := `["-y", "@modelcontextprotocol/server-memory"]`
		if runner == "uvx" {
			example = `["mcp-server-time"]`
		}
		problems = append(problems, fmt.Sprintf("%s runs %s with no package to run (args %s): add the server's "+
			"package to \"args\", for example \"args\": %s", key, runner, orNone(s.Args), example))
	}
	return problems
}

// namesPackage reports whether a runner's arguments name something to run.
func namesPackage(args []string) bool {
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--":
			return i+1 < len(args)
		case slices.Contains(runnerFlagsWithValue, a):
			if i+1 < len(args) {
				return true
			}
		case strings.HasPrefix(a, "--package=") || strings.HasPrefix(a, "--call="):
			return true
		case !strings.HasPrefix(a, "-"):
			return true
		}
	}
	return false
}

func orNone(args []string) string {
	if len(args) == 0 {
		return "empty"
	}
	s, _ := json5Array(args)
	return s
}

func json5Array(items []string) (string, error) {
	quoted := make([]string, len(items))
	for i, it := range items {
		quoted[i] = json5.Quote(it, '"')
	}
	return "[" + strings.Join(quoted, ", ") + "]", nil
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// geminiServerLists reports whether the file has Gemini CLI's mcp.allowed or mcp.excluded.
func geminiServerLists(root *json5.Value) bool {
	m := root.Member("mcp")
	return m != nil && m.Value.Kind == json5.Object && m.Value.Member("servers") == nil &&
		(m.Value.Member("allowed") != nil || m.Value.Member("excluded") != nil)
}
