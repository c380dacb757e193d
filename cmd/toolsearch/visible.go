package main

import (
	"maps"
	"slices"

	"github.com/toolsearch/toolsearch/catalog"
	"github.com/toolsearch/toolsearch/mcp/upstream"
)

// serverVisibleSelectors turns each server's "visible" into tools.toolSearch.visible selectors of its tools
// (mcp:<server>:<name>), the way disabledTools becomes deny entries, so one set of bounds holds for both keys.
func serverVisibleSelectors(servers *upstream.Config) []string {
	if servers == nil {
		return nil
	}
	var out []string
	for _, name := range slices.Sorted(maps.Keys(servers.Servers)) {
		s := servers.Servers[name]
		if s.Disabled {
			continue
		}
		source, _ := catalog.SafeMCPNames(name, nil)
		for _, tool := range s.Visible {
			out = append(out, serverToolSelector(source, tool))
		}
	}
	return out
}
