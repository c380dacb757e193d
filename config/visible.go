package config

import (
	"fmt"
	"maps"
	"slices"

	"github.com/toolsearch/toolsearch/catalog"
	"github.com/toolsearch/toolsearch/mcp/upstream"
	"github.com/toolsearch/toolsearch/runtime"
)

// addServerVisible adds the servers' visible lists to tools.toolSearch.visible. More selectors than tools may
// be kept in view is refused before any server starts; the tools they select are counted when a run starts.
func addServerVisible(lc *Config) error {
	lc.ToolSearch.Visible = append(lc.ToolSearch.Visible, serverVisibleSelectors(lc.Servers)...)
	if n := len(lc.ToolSearch.Visible); n > runtime.MaxVisibleTools {
		return fmt.Errorf("tools.toolSearch.visible and the servers' visible name %d tools: at most %d may be "+
			"kept in view; name fewer", n, runtime.MaxVisibleTools)
	}
	return nil
}

// serverVisibleSelectors turns each server's "visible" into tools.toolSearch.visible selectors of its tools
// (listed:<server>:<name>, matched against the name as the server lists it), the way disabledTools becomes
// deny entries, so one set of bounds holds for both keys.
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
		for _, tool := range s.Visible {
			out = append(out, catalog.ListedToolSelector(name, tool))
		}
	}
	return out
}
