package main

import (
	"encoding/json"
	"fmt"
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestTSClientSeesVisibleTools: a client of the official TypeScript SDK lists the tools of `mcp serve` in code
// mode and finds, beside tool_search_code, the tools kept in view by a server's `visible` and by
// tools.toolSearch.visible, and not a visible server's tool that tools.deny hides. Calling them directly goes
// through the pipeline: one runs, the other is held by tools.ask and blocked when the user declines; and a visible
// tool is still found by a search.
func TestTSClientSeesVisibleTools(t *testing.T) {
	node, script := requireTSClient(t)
	bin := toolsearchBinary(t)
	cfg := writeFile(t, "config.json", fmt.Sprintf(`{
  mcpServers: {
    github: {command: %q, args: ["-test.run=^$"], env: {%q: "github"}, visible: true},
    mail: {command: %[1]q, args: ["-test.run=^$"], env: {%[2]q: "mail"}},
  },
  tools: {
    deny: ["mcp:github:close_issue"],
    ask: ["mcp:mail:send_email"],
    toolSearch: {mode: "code", visible: ["mcp:mail:send_email"]},
  },
}`, os.Args[0], upstreamEnv))
	res := tsCall(t, node, script, map[string]any{
		"command": bin, "args": []string{"mcp", "serve", "--config", cfg},
		"listTools": true,
		"elicit":    map[string]any{"action": "decline"},
		"calls": []map[string]any{
			{"name": "create_issue", "arguments": map[string]any{"title": "in view"}},
			{"name": "send_email", "arguments": map[string]any{"title": "held"}},
			{"name": "tool_search_code", "arguments": map[string]any{"code": `
				const hits = await openclaw.tools.search("send an email", {limit: 1});
				return hits.map(h => h.id)`}},
		},
	})
	require.Len(t, res.Results, 4)
	byName := map[string]int{}
	for i, r := range res.Results {
		require.Empty(t, r.Error, "%s failed as a request", r.Name)
		byName[r.Name] = i
	}

	var listed []string
	require.NoError(t, json.Unmarshal([]byte(res.Results[byName["tools/list"]].Text), &listed))
	assert.ElementsMatch(t, []string{"tool_search_code", "create_issue", "send_email"}, listed,
		"the control tool and the visible tools; close_issue is denied")

	created := res.Results[byName["create_issue"]]
	assert.False(t, created.IsError, created.Text)
	assert.Contains(t, created.Text, "created issue: in view")

	held := res.Results[byName["send_email"]]
	assert.True(t, held.IsError)
	assert.Contains(t, held.Text, "Tool call blocked: the user declined to run mcp:mail:send_email.")
	assert.NotContains(t, held.Text, "sent:")
	require.Len(t, res.Elicitations, 1, "tools.ask held the visible tool's call for approval")

	found := res.Results[byName["tool_search_code"]]
	assert.False(t, found.IsError, found.Text)
	assert.Contains(t, found.Text, "mcp:mail:send_email", "a visible tool stays searchable")
}
