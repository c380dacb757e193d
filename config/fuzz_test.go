package config

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/toolsearch/toolsearch/internal/json5"
	"github.com/toolsearch/toolsearch/runtime"
)

// FuzzFileSet: an edit through File.Set either fails and changes nothing, or leaves a file that
// parses, reads back the value set, and (when it touched tools.toolSearch) passes CheckConfig.
func FuzzFileSet(f *testing.F) {
	docs := []string{
		`{ tools: { toolSearch: { mode: "code", codeTimeoutMs: 10000, searchDefaultLimit: 8, maxSearchLimit: 20, }, }, }`,
		`{ tools: { toolSearch: true } }`, `{ tools: { toolSearch: false } }`, "// c\n{\n  \"tools\": {\"profile\": 'x'},\n}\n",
		`{"mcpServers": {"m": {"command": "npx", "args": ["-y", "m"]}}}`, ``,
	}
	keys := []string{"tools.toolSearch.mode", "tools.toolSearch", "tools.toolSearch.codeTimeoutMs", "mcpServers.x", "a.b"}
	values := []string{`"tools"`, `true`, `5000`, `{command: 'npx'}`, `Infinity`, `{mdoe: 1}`, `0x10`}
	for i, d := range docs {
		f.Add([]byte(d), keys[i%len(keys)], values[i%len(values)])
	}
	f.Fuzz(func(t *testing.T, doc []byte, key, value string) {
		cf, err := ParseFile("c.json5", doc)
		if err != nil {
			return
		}
		before := cf.Bytes()
		_, err = cf.Set(key, json.RawMessage(value))
		if err != nil {
			if string(cf.Bytes()) != string(before) {
				t.Fatalf("a refused edit changed the file")
			}
			return
		}
		again, err := ParseFile("c.json5", cf.Bytes())
		if err != nil {
			t.Fatalf("the edited file does not parse: %v\n%s", err, cf.Bytes())
		}
		got, ok, err := again.Get(key)
		want, perr := json5.Parse([]byte(value))
		if err != nil || !ok || perr != nil || string(got) != string(want.JSON()) {
			t.Fatalf("Get(%q) = %s, %v, %v; want %s", key, got, ok, err, want.JSON())
		}
		if strings.HasPrefix(key+".", runtime.ToolSearchKey+".") || strings.HasPrefix(runtime.ToolSearchKey, key+".") {
			if _, _, err := again.CheckToolSearch(); err != nil {
				t.Fatalf("an accepted edit left tools.toolSearch invalid: %v", err)
			}
		}
	})
}

// FuzzCheck: whatever the file holds, Check returns a config or an error and never panics; an error about what
// the file says is an *Error, and a config's servers passed upstream's validation.
func FuzzCheck(f *testing.F) {
	for _, seed := range []string{
		`{mcpServers: {m: {command: "C:\\Program Files\\nodejs\\npx.cmd -y x", env: {A: "$HOME %APPDATA% ${env:X} ${input:y}"}}}}`,
		`{mcpServers: {m: {command: "/a b/c d -x", args: ["${workspaceFolder}", "~/x"], cwd: "~"}}, tools: {allow: ["mcp:m", "group:g", "server:n"]}}`,
		`{mcpServers: [{name: "m", command: "npx"}], tools: {deny: [1, "x"], mcpServers: {}}, toolSearch: true}`,
		`{mcpServers: {m: {command: {path: "npx", args: [1]}, url: "127.0.0.1:1/mcp", startTimeoutMs: "1m"}, m: {}}}`,
		`{mcpServers: {m: {url: "wss://x", type: "sse", headers: {A: "Bearer $T"}}}, mcp: {allowed: []}, projects: {p: {mcpServers: {}}}}`,
		"mcpServers:\n  m:\n    command: npx\n",
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, doc []byte) {
		file, err := ParseFile("c.json5", doc)
		if err != nil {
			return
		}
		cfg, err := Check(file)
		if err != nil {
			return
		}
		if err := cfg.Servers.Validate(); err != nil {
			t.Fatalf("Check accepted servers that upstream refuses: %v", err)
		}
	})
}
