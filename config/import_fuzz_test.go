package config

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/toolsearch/toolsearch/internal/json5"
)

// FuzzPlanImport: planning an import of any bytes, as any client, never panics, and a plan that is made
// rewrites the file into one that parses, with the toolsearch entry in its servers; a strict JSON file stays
// strict JSON or the rewrite is refused.
func FuzzPlanImport(f *testing.F) {
	_ = filepath.WalkDir(filepath.Join("testdata", "import"), func(path string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && filepath.Base(filepath.Dir(path)) != "golden" {
			if data, err := os.ReadFile(path); err == nil {
				f.Add(data, uint8(0))
			}
		}
		return nil
	})
	for _, seed := range []string{`{}`, `{"mcpServers": []}`, `{"servers": {"a": {"type": "sse", "url": "x"}}}`,
		`{"mcpServers": {"a": {"command": 1, "args": [{}], "env": {"K": []}}}}`, `{mcpServers: {a: {command: "toolsearch", args: ["mcp", "serve", "--config=x"]}}}`,
		`{"projects": {"/p": {"mcpServers": {"b": {"command": "b"}}}}}`, `[]`, `{"mcpServers": {"a": {"httpUrl": "${env:X}", "cwd": "rel"}}}`} {
		f.Add([]byte(seed), uint8(1))
	}
	clients := Clients()
	f.Fuzz(func(t *testing.T, data []byte, which uint8) {
		client := clients[int(which)%len(clients)]
		p, err := PlanImport(ClientFile{Client: client, Path: "/p/.mcp.json", Project: "/p"}, data)
		if err != nil {
			return
		}
		entry := Server{Name: "toolsearch", Command: "/bin/toolsearch", Args: []string{"mcp", "serve", "--config", "/c.json5"}}
		if p.Toolsearch != "" {
			entry.Name = p.Toolsearch
		}
		out, err := p.clientText(entry)
		if err != nil {
			return
		}
		root, err := json5.Parse(out)
		if err != nil {
			t.Fatalf("the rewritten file does not parse: %v\n%s", err, out)
		}
		if json.Valid(data) && !json.Valid(out) {
			t.Fatalf("a strict JSON file became JSON5:\n%s", out)
		}
		if root.Find(append(p.targets[0].path, entry.Name)) == nil {
			t.Fatalf("no toolsearch entry in\n%s", out)
		}
		again, err := PlanImport(ClientFile{Client: client, Path: "/p/.mcp.json", Project: "/p"}, out)
		if err != nil {
			t.Fatalf("the rewritten file cannot be planned again: %v", err)
		}
		if again.Toolsearch != entry.Name || len(again.Servers) != 0 {
			t.Fatalf("a second import would move %d servers (toolsearch entry %q)", len(again.Servers), again.Toolsearch)
		}
	})
}
