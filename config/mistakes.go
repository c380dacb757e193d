package config

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/toolsearch/toolsearch/internal/json5"
	"github.com/toolsearch/toolsearch/mcp/upstream"
)

// The mistakes of files written by hand or copied from another MCP client's config, each with a message that
// names the key and what to write instead. Those that cannot work are errors; those toolsearch can go on
// without (it passes a value on as written) are warnings.

// place is where a key is in the file, as messages name it: "line 3, column 5".
func place(src []byte, off int) string {
	line := 1 + bytes.Count(src[:off], []byte("\n"))
	col := off - bytes.LastIndexByte(src[:off], '\n')
	return fmt.Sprintf("line %d, column %d", line, col)
}

// childKey is the key of member seg of the value at key, as FormatKey writes it.
func childKey(key, seg string) string {
	if key == "" {
		return FormatKey(seg)
	}
	if s := FormatKey(seg); strings.HasPrefix(s, "[") {
		return key + s
	}
	return key + "." + seg
}

// duplicateKeys names every key given twice in one object, anywhere in the file. JSON5 (like JSON.parse) keeps
// the last, so the first is dropped in silence: a server pasted twice under one name would start once.
func duplicateKeys(src []byte, root *json5.Value) []string {
	var problems []string
	var walk func(v *json5.Value, key string)
	walk = func(v *json5.Value, key string) {
		switch v.Kind {
		case json5.Object:
			first := map[string]int{}
			for i, m := range v.Members {
				j, seen := first[m.Key]
				if !seen {
					first[m.Key] = i
					walk(m.Value, childKey(key, m.Key))
					continue
				}
				where := fmt.Sprintf("%s and %s", place(src, v.Members[j].KeyStart), place(src, m.KeyStart))
				if key == upstream.ConfigKey {
					problems = append(problems, fmt.Sprintf("server %q is given twice in %s (%s): only the second "+
						"would start; give each server a name of its own, or remove one", m.Key, key, where))
				} else {
					problems = append(problems, fmt.Sprintf("%s is given twice (%s): only the second would be read; "+
						"merge the two into one", childKey(key, m.Key), where))
				}
				walk(m.Value, childKey(key, m.Key))
			}
		case json5.Array:
			for i, e := range v.Elements {
				walk(e, fmt.Sprintf("%s[%d]", key, i))
			}
		}
	}
	walk(root, "")
	return problems
}

var (
	// bareVar is $NAME without braces (the shell's form), not preceded by another "$".
	bareVar = regexp.MustCompile(`(^|[^$])\$([A-Za-z_][A-Za-z0-9_]*)`)
	// percentVar is %NAME% (Windows' form).
	percentVar = regexp.MustCompile(`%([A-Za-z_][A-Za-z0-9_]*)%`)
	// editorVar is a variable of VS Code's and Cursor's configs: ${env:NAME}, ${input:ID}, ${workspaceFolder}...
	editorVar = regexp.MustCompile(`\$\{(env|input):([^}]*)\}|\$\{(workspaceFolder|workspaceFolderBasename|userHome|pathSeparator|cwd)\}`)
)

// valueChecks names the values of server entries that hold a variable toolsearch passes on as written: $NAME
// and %NAME% without braces, VS Code's ${env:NAME} and ${input:ID}, and ${NAME} or "~" in a field that is not
// expanded at all. Each is a warning, except in a header, where a "${" that does not start ${NAME} cannot be
// sent (mcp/upstream refuses it) and so is an error with the same words. Values are never quoted: env and
// header values may be secrets.
func valueChecks(root *json5.Value) (problems, out []string) {
	servers := root.Find([]string{upstream.ConfigKey})
	if servers == nil || servers.Kind != json5.Object {
		return nil, nil
	}
	for _, s := range servers.Members {
		if s.Value.Kind != json5.Object {
			continue
		}
		server := FormatKey(upstream.ConfigKey, s.Key)
		for _, m := range s.Value.Members {
			key := childKey(server, m.Key)
			switch m.Key {
			case "env", "headers":
				if m.Value.Kind != json5.Object {
					continue
				}
				for _, e := range m.Value.Members {
					if e.Value.Kind != json5.String {
						continue
					}
					w := expandedWarnings(childKey(key, e.Key), e.Value.Str)
					if m.Key == "headers" && editorVar.MatchString(e.Value.Str) {
						problems = append(problems, w...)
						continue
					}
					out = append(out, w...)
				}
			case "args":
				for i, e := range m.Value.Elements {
					if e.Kind == json5.String {
						out = append(out, literalWarnings(fmt.Sprintf("%s[%d]", key, i), m.Key, e.Str)...)
					}
				}
			case "command", "cwd", "url":
				if m.Value.Kind == json5.String {
					out = append(out, literalWarnings(key, m.Key, m.Value.Str)...)
				}
			}
		}
	}
	return problems, out
}

// expandedWarnings checks a value of env or headers, where toolsearch expands ${NAME} and ${NAME:-default}.
func expandedWarnings(key, value string) []string {
	var out []string
	for _, m := range bareVar.FindAllStringSubmatch(value, -1) {
		out = append(out, fmt.Sprintf("%s names $%s without braces, which toolsearch passes on as written: write "+
			"${%[2]s} in its place", key, m[2]))
	}
	for _, m := range percentVar.FindAllStringSubmatch(value, -1) {
		out = append(out, fmt.Sprintf("%s names %%%s%% (the Windows form), which toolsearch passes on as written: "+
			"write ${%[2]s} in its place", key, m[1]))
	}
	for _, m := range editorVar.FindAllStringSubmatch(value, -1) {
		switch {
		case m[1] == "env":
			out = append(out, fmt.Sprintf("%s names ${env:%s}, VS Code's and Cursor's form, which toolsearch passes "+
				"on as written: write ${%[2]s} in its place", key, m[2]))
		case m[1] == "input":
			out = append(out, fmt.Sprintf("%s names ${input:%s}, a value VS Code prompts for, which toolsearch "+
				"cannot: put the value in an environment variable where toolsearch runs and write ${NAME} in its place",
				key, m[2]))
		case m[3] == "userHome":
			out = append(out, fmt.Sprintf("%s names ${userHome}, VS Code's and Cursor's form, which toolsearch "+
				"passes on as written: write ${HOME} in its place", key))
		default:
			out = append(out, fmt.Sprintf("%s names ${%s}, a variable of VS Code and Cursor that toolsearch does "+
				"not have: write the path itself", key, m[3]))
		}
	}
	return out
}

// literalWarnings checks a value of command, args, cwd or url, which reach the server exactly as written: no
// shell starts it, and toolsearch expands variables in env and headers only.
func literalWarnings(key, field, value string) []string {
	var vars []string
	for _, m := range bareVar.FindAllStringSubmatch(value, -1) {
		vars = append(vars, "$"+m[2])
	}
	for _, m := range percentVar.FindAllStringSubmatch(value, -1) {
		vars = append(vars, "%"+m[1]+"%")
	}
	for _, m := range expandedRef.FindAllString(value, -1) {
		vars = append(vars, m)
	}
	for _, m := range editorVar.FindAllString(value, -1) {
		if !slices.Contains(vars, m) {
			vars = append(vars, m)
		}
	}
	var out []string
	if len(vars) > 0 {
		fix := "write the value itself"
		if field == "args" {
			fix = "write the value itself, or pass it to the server in \"env\" (where ${NAME} is expanded)"
		}
		out = append(out, fmt.Sprintf("%s names %s, but %s is passed to the server as written (no shell starts it, "+
			"and toolsearch expands ${NAME} in env and headers only): %s", key, strings.Join(vars, " and "), field, fix))
	}
	if rest, ok := strings.CutPrefix(value, "~"); ok && (rest == "" || rest[0] == '/' || rest[0] == '\\') && field != "url" {
		home, err := os.UserHomeDir()
		if err != nil {
			home = "/home/you"
		}
		out = append(out, fmt.Sprintf("%s starts with \"~\", which only a shell expands, and none starts the "+
			"server: write the whole path, %q", key, filepath.Join(home, rest)))
	}
	return out
}

// expandedRef is a ${NAME} or ${NAME:-default} reference, as mcp/upstream expands it in env and header values.
var expandedRef = regexp.MustCompile(`\$\{[A-Za-z_][A-Za-z0-9_]*(:-[^}]*)?\}`)

// pathWithSpaces reports whether command is one program path with spaces in it ("C:\Program Files\nodejs\npx.cmd",
// "/Applications/My App/bin/server") rather than a program followed by arguments, and returns the path and the
// arguments written after it, if any ("C:\Program Files\nodejs\npx.cmd -y pkg"). A path's first word holds a
// separator, and so does the word after it, which does not start a new path or an option.
func pathWithSpaces(command string) (path string, args []string, ok bool) {
	fields := strings.Fields(command)
	if len(fields) < 2 || !strings.ContainsAny(fields[0], `/\`) {
		return "", nil, false
	}
	startsArg := func(w string) bool {
		return strings.HasPrefix(w, "-") || strings.HasPrefix(w, "/") ||
			len(w) >= 2 && w[1] == ':' && (w[0] >= 'A' && w[0] <= 'Z' || w[0] >= 'a' && w[0] <= 'z')
	}
	if startsArg(fields[1]) || !strings.ContainsAny(strings.Join(fields[1:], " "), `/\.`) {
		return "", nil, false
	}
	n := len(fields)
	for i := 1; i < len(fields); i++ {
		if startsArg(fields[i]) {
			n = i
			break
		}
	}
	// The path keeps its spaces as written: cut the command after the n-th word.
	end := 0
	for i := 0; i < n; i++ {
		end += strings.Index(command[end:], fields[i]) + len(fields[i])
	}
	return command[:end], fields[n:], true
}

// fieldExamples are the examples of the server fields whose type alone would give a misleading one (an array of
// strings is ["-y", "package"] for args, but a list of tool names for the others).
var fieldExamples = map[string]string{
	"args":          `["-y", "@modelcontextprotocol/server-memory"]`,
	"disabledTools": `["delete_repository", "merge_*"]`,
	"excludeTools":  `["delete_repository", "merge_*"]`,
	"autoApprove":   `["get_issue", "list_*"]`,
	"alwaysAllow":   `["get_issue", "list_*"]`,
	"env":           `{"GITHUB_TOKEN": "${GITHUB_TOKEN}"}`,
	"headers":       `{"Authorization": "Bearer ${GITHUB_TOKEN}"}`,
}

// fieldFix says what to write for a server field whose value has the wrong type, when the value shows what was
// meant; "" when it does not.
func fieldFix(key, field string, raw json.RawMessage) string {
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return ""
	}
	switch field {
	case "command":
		switch c := v.(type) {
		case []any:
			if len(c) > 0 {
				if prog, ok := c[0].(string); ok {
					return fmt.Sprintf("%s is an array (OpenCode's form): write \"command\": %q, \"args\": %s", key, prog,
						stringsOf(c[1:]))
				}
			}
		case map[string]any:
			if p, ok := c["path"].(string); ok {
				args, _ := c["args"].([]any)
				return fmt.Sprintf("%s is an object (Zed's form, {\"path\", \"args\"}): write \"command\": %q, \"args\": %s",
					key, p, stringsOf(args))
			}
		}
	case "args", "disabledTools", "excludeTools", "autoApprove", "alwaysAllow":
		switch a := v.(type) {
		case string:
			items := []string{a}
			if field == "args" && !strings.ContainsAny(a, `\"'`) {
				items = strings.Fields(a)
			}
			fix, _ := json5Array(items)
			return fmt.Sprintf("%s must be an array of strings, not one string: write %s", key, fix)
		case []any:
			for i, e := range a {
				if _, ok := e.(string); !ok {
					if field != "args" {
						return fmt.Sprintf("%s[%d] must be a tool name in quotes, as the server lists it (for example "+
							"\"delete_repository\"), not %s", key, i, describeRaw(mustJSON(e)))
					}
					fixed, _ := json.Marshal(fmt.Sprint(e))
					return fmt.Sprintf("%s[%d] must be a string (each argument is text), not %s: write %s", key, i,
						describeRaw(mustJSON(e)), fixed)
				}
			}
		}
	case "env", "headers":
		if m, ok := v.(map[string]any); ok {
			for _, name := range sortedKeys(m) {
				if _, isString := m[name].(string); !isString {
					fixed, _ := json.Marshal(fmt.Sprint(m[name]))
					return fmt.Sprintf("%s must be a string (every value of %s is passed as text), not %s: write %s",
						childKey(key, name), field, describeRaw(mustJSON(m[name])), fixed)
				}
			}
		}
	case "startTimeoutMs", "maxInstances":
		if s, ok := v.(string); ok {
			if d, err := time.ParseDuration(s); err == nil && field == "startTimeoutMs" {
				return fmt.Sprintf("%s is a number of milliseconds, not %q: write %d", key, s, d.Milliseconds())
			}
			if _, err := json.Number(s).Int64(); err == nil {
				return fmt.Sprintf("%s is a number, not a string: write %s (no quotes)", key, s)
			}
		}
	case "disabled", "trusted", "lazy":
		if s, ok := v.(string); ok && (s == "true" || s == "false") {
			return fmt.Sprintf("%s is true or false, not the string %q: write %s (no quotes)", key, s, s)
		}
	}
	return ""
}

func mustJSON(v any) json.RawMessage {
	b, _ := json.Marshal(v)
	return b
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// urlFix says what to write for a url that toolsearch cannot reach as written; "" when it looks right.
func urlFix(key, u string) string {
	switch {
	case u == "":
		return ""
	case strings.HasPrefix(u, "ws://") || strings.HasPrefix(u, "wss://"):
		return fmt.Sprintf("%s %q is a WebSocket address; toolsearch speaks streamable HTTP: write the server's "+
			"http:// or https:// address", key, u)
	case !strings.Contains(u, "://"):
		host := u
		if i := strings.IndexAny(host, "/?#"); i >= 0 {
			host = host[:i]
		}
		if h, _, err := net.SplitHostPort(host); err == nil {
			host = h
		}
		scheme := "https://"
		if ip := net.ParseIP(host); host == "localhost" || ip != nil && ip.IsLoopback() {
			scheme = "http://"
		}
		return fmt.Sprintf("%s %q has no scheme: write %q", key, u, scheme+u)
	}
	return ""
}

// typeFix says what to write for a "type" another client uses that toolsearch does not; "" when it knows it.
func typeFix(key, typ string, hasURL bool) string {
	switch strings.ToLower(typ) {
	case "sse":
		return fmt.Sprintf("%s \"sse\" is the older HTTP+SSE transport, which toolsearch does not speak: a server "+
			"that offers it usually serves streamable HTTP too, at the same address ending in /mcp instead of "+
			"/sse; write that \"url\" and remove \"type\"", key)
	case "local", "remote":
		return fmt.Sprintf("%s %q is OpenCode's; toolsearch tells a program (\"command\") from an endpoint "+
			"(\"url\") by the field that is set: remove \"type\"", key, typ)
	case "ws", "websocket":
		return fmt.Sprintf("%s %q: toolsearch speaks stdio (\"command\") and streamable HTTP (\"url\" with "+
			"http:// or https://): remove \"type\"", key, typ)
	}
	return ""
}

// yamlHint explains a file that is not JSON5 because it is YAML (Continue's and others' config.yaml).
func yamlHint(src []byte) string {
	for _, line := range strings.Split(string(src), "\n") {
		t := strings.TrimSpace(line)
		if t == "" || strings.HasPrefix(t, "#") {
			continue
		}
		if t == "---" || regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_-]*:(\s|$)`).MatchString(t) {
			return "this looks like YAML; the config file is JSON5 (JSON with comments and unquoted keys): write " +
				`it as {mcpServers: {memory: {command: "npx", args: ["-y", "@modelcontextprotocol/server-memory"]}}}`
		}
		return ""
	}
	return ""
}

// serverListFix says what to write for an mcpServers that is a list of entries with names (Continue's form)
// rather than an object of entries by name; "" when it is not one.
func serverListFix(raw json.RawMessage) string {
	var list []map[string]any
	if json.Unmarshal(raw, &list) != nil || len(list) == 0 {
		return ""
	}
	name, ok := list[0]["name"].(string)
	if !ok || name == "" {
		return ""
	}
	entry := make(map[string]any, len(list[0]))
	for k, v := range list[0] {
		if k != "name" {
			entry[k] = v
		}
	}
	example, _ := json.Marshal(map[string]any{name: entry})
	return fmt.Sprintf("%s is a list of servers with names (Continue's form); toolsearch reads an object of servers "+
		"by name: write %s", upstream.ConfigKey, example)
}

// stringsOf writes the items of a JSON array as an array of strings, as messages suggest it.
func stringsOf(items []any) string {
	strs := make([]string, len(items))
	for i, it := range items {
		strs[i] = fmt.Sprint(it)
	}
	out, _ := json5Array(strs)
	return out
}
