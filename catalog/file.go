package catalog

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
)

// FileSourceName is the source name of catalog-file entries that name no server: their ids are
// "openclaw:file:<name>" (or "client:file:<name>").
const FileSourceName = "file"

// fileEntry is one tool of a catalog file. Unknown fields are ignored, so files written for other tools load.
type fileEntry struct {
	Name         string          `json:"name"`
	Label        string          `json:"label"`
	Description  string          `json:"description"`
	InputSchema  json.RawMessage `json:"inputSchema"`
	Parameters   json.RawMessage `json:"parameters"` // accepted as a synonym of inputSchema
	OutputSchema json.RawMessage `json:"outputSchema"`
	Source       Source          `json:"source"`
	Server       string          `json:"server"`
	SourceName   string          `json:"sourceName"`
	Groups       []string        `json:"groups"`
	CatalogMode  string          `json:"catalogMode"`
	Annotations  *Annotations    `json:"annotations"` // MCP tool annotations, as tools/list sends them
}

// ParseFile reads a catalog file: a JSON array (or an object with a "tools" array) of
// {name, description, inputSchema, outputSchema?, source?, server?, label?, annotations?}. Rules:
//   - an entry with "server" is an MCP tool, "mcp:<server>:<name>", its names made safe with SafeMCPNames;
//   - otherwise "source" defaults to "openclaw" and the source name to "file" ("sourceName" overrides it);
//   - "parameters" is accepted in place of "inputSchema"; schemas must be JSON objects;
//   - every entry needs a name, and ids must be unique.
//
// Errors wrap ErrInvalidTool or ErrDuplicateTool and name the entry's position.
func ParseFile(data []byte) ([]Tool, error) {
	data = bytes.TrimSpace(data)
	var entries []fileEntry
	if len(data) > 0 && data[0] == '{' {
		var wrapped struct {
			Tools *[]fileEntry `json:"tools"`
		}
		if err := json.Unmarshal(data, &wrapped); err != nil {
			return nil, fmt.Errorf("catalog file: %w", err)
		}
		if wrapped.Tools == nil {
			return nil, errors.New(`catalog file: want a JSON array of tools or an object with a "tools" array`)
		}
		entries = *wrapped.Tools
	} else if err := json.Unmarshal(data, &entries); err != nil {
		return nil, fmt.Errorf("catalog file: want a JSON array of tools: %w", err)
	}

	tools := make([]Tool, len(entries))
	byServer := make(map[string][]int) // MCP entries per server, in file order, for safe names
	var servers []string
	for i, e := range entries {
		bad := func(format string, args ...any) error {
			return fmt.Errorf("catalog file: entry %d (%q): %w: %s", i, e.Name, ErrInvalidTool, fmt.Sprintf(format, args...))
		}
		if e.Name == "" {
			return nil, bad("name is required")
		}
		schema := e.InputSchema
		if len(schema) == 0 || string(schema) == "null" {
			schema = e.Parameters
		}
		if err := checkObject(schema); err != nil {
			return nil, bad("inputSchema: %v", err)
		}
		if err := checkObject(e.OutputSchema); err != nil {
			return nil, bad("outputSchema: %v", err)
		}
		src := e.Source
		if src == "" {
			src = SourceOpenClaw
			if e.Server != "" {
				src = SourceMCP
			}
		}
		switch src {
		case SourceOpenClaw, SourceMCP, SourceClient:
		default:
			return nil, bad("unknown source %q (want openclaw, mcp or client)", src)
		}
		sourceName := e.Server
		if sourceName == "" {
			sourceName = e.SourceName
		}
		if sourceName == "" {
			sourceName = FileSourceName
		}
		if len(schema) == 0 || string(schema) == "null" {
			schema = nil
		}
		out := e.OutputSchema
		if string(out) == "null" {
			out = nil
		}
		tools[i] = Tool{
			Source: src, SourceName: sourceName, Name: e.Name, Label: e.Label, Description: e.Description,
			Parameters: schema, OutputSchema: out, Groups: e.Groups, CatalogMode: e.CatalogMode,
			Annotations: e.Annotations,
		}
		if src == SourceMCP {
			if _, ok := byServer[sourceName]; !ok {
				servers = append(servers, sourceName)
			}
			byServer[sourceName] = append(byServer[sourceName], i)
		}
	}
	for _, server := range servers {
		idx := byServer[server]
		names := make([]string, len(idx))
		for j, i := range idx {
			names[j] = tools[i].Name
		}
		safeServer, safe := SafeMCPNames(server, names)
		for j, i := range idx {
			tools[i].SourceName, tools[i].Name, tools[i].ListedName = safeServer, safe[j], names[j]
		}
	}
	seen := make(map[string]int, len(tools))
	for i := range tools {
		id := tools[i].ID()
		if j, dup := seen[id]; dup {
			return nil, fmt.Errorf("catalog file: entries %d and %d: %w: %s", j, i, ErrDuplicateTool, id)
		}
		seen[id] = i
	}
	return tools, nil
}

// checkObject accepts an absent or null schema, or a JSON object.
func checkObject(raw json.RawMessage) error {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return nil
	}
	if raw[0] != '{' {
		return errors.New("must be a JSON object")
	}
	return nil
}
