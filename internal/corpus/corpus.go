// Package corpus gives tests real tool definitions: 644 tools of 71 public MCP servers, as those servers list
// them (testdata/README.md says where they come from and under which licenses). Only test files import it, so
// the data never reaches a binary.
package corpus

import (
	_ "embed"
	"encoding/json"
	"strings"
)

//go:embed testdata/mcp_tools.json
var mcpTools []byte

// Tool is one tool definition as its MCP server lists it in tools/list.
type Tool struct {
	Server      string          `json:"-"` // the server that offers it
	Name        string          `json:"-"` // the server's own name of the tool
	Description string          `json:"description"`
	InputSchema json.RawMessage `json:"inputSchema"`
}

// MCPTools returns a fresh copy of the 644 tools, in file order. The file names each tool "<server>.<tool>".
func MCPTools() []Tool {
	var entries []struct {
		Name string `json:"name"`
		Tool
	}
	if err := json.Unmarshal(mcpTools, &entries); err != nil {
		panic("corpus: testdata/mcp_tools.json: " + err.Error())
	}
	tools := make([]Tool, len(entries))
	for i, e := range entries {
		tools[i] = e.Tool
		tools[i].Server, tools[i].Name, _ = strings.Cut(e.Name, ".")
	}
	return tools
}

// CatalogFile returns the tools as a toolsearch catalog file: a JSON array of {server, name, description,
// inputSchema}, which catalog.ParseFile reads as MCP tools with safe names, as the mcp package lists them.
func CatalogFile() []byte {
	type entry struct {
		Server      string          `json:"server"`
		Name        string          `json:"name"`
		Description string          `json:"description"`
		InputSchema json.RawMessage `json:"inputSchema"`
	}
	tools := MCPTools()
	entries := make([]entry, len(tools))
	for i, t := range tools {
		entries[i] = entry{t.Server, t.Name, t.Description, t.InputSchema}
	}
	out, err := json.Marshal(entries)
	if err != nil {
		panic("corpus: " + err.Error())
	}
	return out
}
