package runtime

import (
	"crypto/sha256"
	"encoding/hex"

	"github.com/toolsearch/toolsearch/catalog"
	"github.com/toolsearch/toolsearch/internal/textcut"
)

// mcpQualifier separates an MCP server's name from its tool's in a name shown to the model, as in the names
// catalog.SafeMCPNames keeps within catalog.MaxMCPToolName.
const mcpQualifier = "__"

// shownNames gives each tool the model sees directly (off mode, direct-only and client tools, hydrated tools)
// the name it calls it by. Tools keep their own names, except MCP tools whose name another shown tool or a
// control tool also has: they become "<server>__<tool>", within the 64 characters providers and MCP clients
// accept. Two servers that both offer "search" are common, and both stay callable; which name a tool gets does
// not depend on the order of the tools. The id stays the truth: the run maps each shown name back to its tool.
//
// Names of other tools that collide (two plugins, a client tool and a plugin, a tool named like a control tool)
// are a *ConflictError: those tools are the embedder's own, and a silent rename would hide the mistake. Client
// tools are named in it as such.
func shownNames(tools []*catalog.Tool, control map[string]bool) ([]string, error) {
	count := make(map[string]int, len(tools))
	for _, t := range tools {
		count[t.Name]++
	}
	names := make([]string, len(tools))
	taken := make(map[string]int, len(tools)) // name → how many shown tools have it now
	for i, t := range tools {
		names[i] = t.Name
		if t.Source == catalog.SourceMCP && (count[t.Name] > 1 || control[t.Name]) {
			names[i] = qualifiedMCPName(t)
		}
		taken[names[i]]++
	}
	// A qualified name may itself be taken, by a tool really named "github__search" or by a second server whose
	// names became equal when they were made safe. The id tells them apart.
	var again []int
	for i, t := range tools {
		if names[i] != t.Name && (taken[names[i]] > 1 || control[names[i]]) {
			again = append(again, i)
		}
	}
	for _, i := range again {
		taken[names[i]]--
		names[i] = idQualifiedName(names[i], tools[i].ID())
		taken[names[i]]++
	}
	var clash []string
	client := false
	for i, t := range tools {
		if taken[names[i]] > 1 || control[names[i]] {
			clash = append(clash, names[i])
			client = client || t.Source == catalog.SourceClient
		}
	}
	if len(clash) > 0 {
		return nil, &ConflictError{Client: client, Names: sortedUnique(clash)}
	}
	return names, nil
}

// qualifiedMCPName is "<server>__<tool>" made safe and at most catalog.MaxMCPToolName bytes long.
func qualifiedMCPName(t *catalog.Tool) string {
	server, tool := catalog.SafeMCPNames(t.SourceName, []string{t.Name})
	return server + mcpQualifier + tool[0]
}

// idQualifiedName makes name unique with a short hash of the tool's id, keeping it within the length bound.
func idQualifiedName(name, id string) string {
	sum := sha256.Sum256([]byte(id))
	suffix := "-" + hex.EncodeToString(sum[:4])
	return textcut.Prefix(name, catalog.MaxMCPToolName-len(suffix)) + suffix
}

// clientConflicts finds client tools that the model could not tell apart from another tool by name when Tool
// Search is applied: two client tools with one name, or one named like a control tool of any mode (control tool
// names are never cataloged). Client tools keep their names in every mode, so this is an error, never a rename.
func clientConflicts(clients []catalog.Tool, allowed func(*catalog.Tool) bool) error {
	seen := make(map[string]bool, len(clients))
	var clash []string
	for i := range clients {
		c := &clients[i]
		if !allowed(c) {
			continue
		}
		if seen[c.Name] || isControlToolName(c.Name) {
			clash = append(clash, c.Name)
		}
		seen[c.Name] = true
	}
	if len(clash) > 0 {
		return &ConflictError{Client: true, Names: sortedUnique(clash)}
	}
	return nil
}
