package config_test

import (
	"encoding/json"
	"fmt"
	"log"
	"sort"

	"github.com/toolsearch/toolsearch/config"
)

// ExampleFile_Set edits a config file in place, keeping its comments.
func ExampleFile_Set() {
	f, _ := config.ParseFile("config.json", []byte("{\n  // Tool Search\n  \"tools\": {\"toolSearch\": false},\n}\n"))
	_, _ = f.Set("tools.toolSearch", json.RawMessage(`true`))
	fmt.Print(string(f.Bytes()))
	_, err := f.Set("tools.toolSearch.mode", json.RawMessage(`"tols"`))
	fmt.Println(err)
	warnings, _ := f.Set("tools.toolSearch.codeTimeoutMs", json.RawMessage(`1000000000`))
	fmt.Println(warnings)
	// Output:
	// {
	//   // Tool Search
	//   "tools": {"toolSearch": true},
	// }
	// tools.toolSearch: mode must be one of code, tools, directory, off (got "tols"); did you mean "tools"?
	// [codeTimeoutMs 1000000000 is above its maximum 60000: it will be clamped to 60000]
}

// ExampleCheck reads a config document as Load reads a file: the servers a program hands to upstream.New,
// and an entry that cannot work refused with its name.
func ExampleCheck() {
	f, err := config.ParseFile("config.json5", []byte(`{
  // the section other MCP clients use, pasted as it is
  "mcpServers": {
    "memory": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-memory"]},
    "remote": {"url": "https://example.com/mcp", "headers": {"Authorization": "Bearer token"}},
  },
  "tools": {"toolSearch": {"mode": "code"}},
}`))
	if err != nil {
		log.Fatal(err)
	}
	cfg, err := config.Check(f)
	if err != nil {
		log.Fatal(err)
	}
	names := make([]string, 0, len(cfg.Servers.Servers))
	for name := range cfg.Servers.Servers {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		s := cfg.Servers.Servers[name]
		fmt.Printf("%s: command=%q url=%q\n", name, s.Command, s.URL)
	}

	f, _ = config.ParseFile("broken.json5", []byte(`{"mcpServers": {"broken": {"type": "sse", "url": "https://example.com/sse"}}}`))
	_, err = config.Check(f)
	fmt.Println(err)
	// Output:
	// memory: command="npx" url=""
	// remote: command="" url="https://example.com/mcp"
	// broken.json5: mcpServers.broken.type "sse" is the older HTTP+SSE transport, which toolsearch does not speak: a server that offers it usually serves streamable HTTP too, at the same address ending in /mcp instead of /sse; write that "url" and remove "type"
}
