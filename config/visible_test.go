package config

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolsearch/toolsearch/runtime"
)

// A server's visible list becomes listed:<server>:<name> selectors; together with tools.toolSearch.visible they are
// bounded before any server starts.
func TestServerVisibleSelectors(t *testing.T) {
	lc, err := Load(context.Background(), writeFile(t, "c.json5", `{
  mcpServers: {
    "my.git": {command: "git-mcp", visible: ["log", "show_*"]},
    memory: {command: "memory-mcp", visible: true},
    off: {command: "x", visible: true, disabled: true},
    quiet: {command: "y", visible: false},
  },
  tools: {toolSearch: {visible: ["web_fetch"]}},
}`))
	require.NoError(t, err)
	assert.Equal(t, []string{"web_fetch", "listed:memory:*", "listed:my_git:log", "listed:my_git:show_*"}, lc.ToolSearch.Visible)

	names := make([]string, runtime.MaxVisibleTools)
	for i := range names {
		names[i] = fmt.Sprintf("%q", fmt.Sprintf("t%d", i))
	}
	path := writeFile(t, "c.json5", `{mcpServers: {a: {command: "a", visible: [`+strings.Join(names, ",")+`]}},
  tools: {toolSearch: {visible: ["web_fetch"]}}}`)
	_, err = Load(context.Background(), path)
	require.Error(t, err)
	assert.Equal(t, fmt.Sprintf("%s: tools.toolSearch.visible and the servers' visible name %d tools: at most %d may "+
		"be kept in view; name fewer", path, runtime.MaxVisibleTools+1, runtime.MaxVisibleTools), err.Error())
	_, err = Load(context.Background(), writeFile(t, "c.json5", `{mcpServers: {a: {command: "a", visible: [`+strings.Join(names, ",")+`]}}}`))
	require.NoError(t, err, "exactly the bound")
}
