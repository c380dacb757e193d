package runtime_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolsearch/toolsearch/catalog"
	"github.com/toolsearch/toolsearch/runtime"
)

func TestToolSearch(t *testing.T) {
	rt := newRuntime(t, runtime.ModeTools, &runtime.Options{Config: runtime.Config{MaxSearchLimit: 10, SearchDefaultLimit: 3}})
	run := startRun(t, rt, runtime.RunRequest{Tools: fakePlugin(36)})

	hitsOf := func(res *runtime.CallResult) []catalog.Descriptor {
		t.Helper()
		require.False(t, res.IsError, res.Content)
		var hits []catalog.Descriptor
		require.NoError(t, json.Unmarshal(res.Details, &hits))
		require.NotNil(t, hits, "no hits is an empty list, never null")
		if len(hits) == 0 {
			assert.Contains(t, res.Content, "No tool matched", "an empty answer says why")
			return hits
		}
		var again []catalog.Descriptor
		require.NoError(t, json.Unmarshal([]byte(res.Content), &again), "the model reads the same JSON")
		assert.Equal(t, hits, again)
		return hits
	}
	hits := hitsOf(execute(t, run, "1", runtime.ToolSearchName, map[string]any{"query": "fake_plugin_tool_17"}))
	require.Len(t, hits, 3, "the configured default limit")
	assert.Equal(t, "openclaw:fake-plugin:fake_plugin_tool_17", hits[0].ID, "an exact name ranks first")
	assert.Equal(t, "{ marker: string }", hits[0].Input)

	assert.Len(t, hitsOf(execute(t, run, "2", runtime.ToolSearchName, map[string]any{"query": "fake plugin tool", "limit": 1})), 1)
	assert.Len(t, hitsOf(execute(t, run, "3", runtime.ToolSearchName, map[string]any{"query": "fake plugin tool", "limit": 500})), 10, "capped at maxSearchLimit")
	assert.Len(t, hitsOf(execute(t, run, "4", runtime.ToolSearchName, map[string]any{"query": "fake plugin tool", "limit": 2.0})), 2)
	assert.Empty(t, hitsOf(execute(t, run, "5", runtime.ToolSearchName, map[string]any{"query": ""})), "an empty query finds nothing")
	assert.Empty(t, hitsOf(execute(t, run, "6", runtime.ToolSearchName, map[string]any{"query": "zebra quantum"})))
	res := execute(t, run, "6b", runtime.ToolSearchName, map[string]any{"query": "zebra quantum web"})
	assert.Equal(t, `No tool matched. No tool has the words "zebra", "quantum", "web". `+
		`Retry with other words for what the tool does (an action and an object, e.g. "send email"), with fewer words, `+
		`or with a tool or service name.`, res.Content)
	assert.JSONEq(t, `[]`, string(res.Details), "scripts and clients still get a list")
	res = execute(t, run, "6c", runtime.ToolSearchName, map[string]any{"query": "could you please do it"})
	assert.Contains(t, res.Content, "It has only common words")
	batch := hitsOf(execute(t, run, "7", runtime.ToolSearchName, map[string]any{"queries": []string{"fake_plugin_tool_01", "fake_plugin_tool_02"}, "limit": 2}))
	assert.Equal(t, []string{"fake_plugin_tool_01", "fake_plugin_tool_02"}, []string{batch[0].Name, batch[1].Name}, "each query's best first")
	assert.Len(t, batch, 2, "limit bounds the whole answer")
	batch = hitsOf(execute(t, run, "8", runtime.ToolSearchName, map[string]any{"queries": []string{"fake_plugin_tool_01", "fake_plugin_tool_02"}, "limit": 1}))
	assert.Len(t, batch, 1, "limit bounds the whole answer")

	for _, bad := range []any{0, -1, 1.5, "3", true, map[string]int{}} {
		res := execute(t, run, "x", runtime.ToolSearchName, map[string]any{"query": "fake", "limit": bad})
		assert.True(t, res.IsError)
		assert.Equal(t, "limit must be a positive integer.", res.Content, "limit %v", bad)
	}
	for _, args := range []any{map[string]any{}, map[string]any{"query": 3}, "just text", []int{1}} {
		res := execute(t, run, "x", runtime.ToolSearchName, args)
		assert.True(t, res.IsError, "%v", args)
	}
	res = execute(t, run, "x", runtime.ToolSearchName, map[string]any{"queries": make([]string, 17)})
	assert.Equal(t, catalog.ErrTooManyQueries.Error(), res.Content)

	tel := run.Telemetry()
	assert.EqualValues(t, 23, tel.SearchCount, "each query counts, malformed requests too")
}

func TestToolDescribe(t *testing.T) {
	rt := newRuntime(t, runtime.ModeTools, nil)
	tools := append(mixedTools(), catalog.Tool{Source: catalog.SourceOpenClaw, SourceName: "other", Name: "web_search",
		Description: "Another web search.", Handler: okHandler("web_search")})
	run := startRun(t, rt, runtime.RunRequest{Tools: tools})

	res := execute(t, run, "1", runtime.ToolDescribeName, map[string]string{"id": "create_issue"})
	require.False(t, res.IsError, res.Content)
	var d catalog.Description
	require.NoError(t, json.Unmarshal(res.Details, &d))
	assert.Equal(t, "mcp:github:create_issue", d.ID)
	assert.Equal(t, "unknown", d.Input, "untrusted schemas are never rendered")
	assert.JSONEq(t, `{"type":"object","properties":{"owner":{"type":"string"},"repo":{"type":"string"},"title":{"type":"string"}},"required":["owner","repo","title"]}`, string(d.Parameters))

	res = execute(t, run, "2", runtime.ToolDescribeName, map[string]string{"id": "web_search"})
	assert.True(t, res.IsError)
	assert.Equal(t, "Ambiguous tool name: web_search; use an exact tool id.", res.Content)

	res = execute(t, run, "3", runtime.ToolDescribeName, map[string]string{"id": "web_serch"})
	assert.True(t, res.IsError)
	assert.Contains(t, res.Content, "Unknown tool id: web_serch. Did you mean: ")
	assert.Contains(t, res.Content, "openclaw:core:web_search")

	res = execute(t, run, "4", runtime.ToolDescribeName, map[string]string{})
	assert.Equal(t, `Invalid arguments for tool_describe: "id" is missing. Expected {"id": "<tool id>"}.`, res.Content)
	assert.EqualValues(t, 3, run.Telemetry().DescribeCount)
}

func TestToolCallEnvelope(t *testing.T) {
	rt := newRuntime(t, runtime.ModeTools, nil)
	run := startRun(t, rt, runtime.RunRequest{SessionID: "s", RunID: "r", Tools: fakePlugin(36)})
	res := execute(t, run, "call_9", runtime.ToolCallName, map[string]any{
		"id": "openclaw:fake-plugin:fake_plugin_tool_17", "args": map[string]string{"marker": "normal"},
	})
	require.False(t, res.IsError, res.Content)
	var env struct {
		Tool   catalog.Descriptor `json:"tool"`
		Result struct {
			Content []catalog.Content `json:"content"`
			Details json.RawMessage   `json:"details"`
			IsError bool              `json:"isError"`
		} `json:"result"`
	}
	require.NoError(t, json.Unmarshal(res.Details, &env))
	assert.Equal(t, "openclaw:fake-plugin:fake_plugin_tool_17", env.Tool.ID)
	assert.Equal(t, "FAKE_PLUGIN_OK fake_plugin_tool_17 {\"marker\":\"normal\"}", env.Result.Content[0].Text)
	assert.JSONEq(t, `{"status":"ok","tool":"fake_plugin_tool_17","input":{"marker":"normal"}}`, string(env.Result.Details))
	assert.Contains(t, res.Content, "FAKE_PLUGIN_OK", "the model reads the envelope")

	require.Len(t, res.Hidden, 1)
	h := res.Hidden[0]
	assert.Equal(t, "tool_search_code:call_9:fake_plugin_tool_17:1", h.ID)
	assert.Equal(t, "call_9", h.ParentID)
	assert.Equal(t, catalog.SourceOpenClaw, h.Source)
	assert.JSONEq(t, `{"marker":"normal"}`, string(h.Arguments))

	// By unique name, without args: the schema requires marker, so the call fails validation.
	res = execute(t, run, "call_10", runtime.ToolCallName, map[string]any{"id": "fake_plugin_tool_01"})
	assert.True(t, res.IsError)
	assert.Equal(t, `Invalid arguments for openclaw:fake-plugin:fake_plugin_tool_01: at /: missing required property "marker" (string); `+
		`given no properties. Expected input: { marker: string }`, res.Content)
	require.Len(t, res.Hidden, 1)
	assert.Equal(t, "tool_search_code:call_10:fake_plugin_tool_01:2", res.Hidden[0].ID)

	res = execute(t, run, "call_11", runtime.ToolCallName, map[string]any{"id": "fake_plugin_tool_99"})
	assert.True(t, res.IsError)
	assert.Contains(t, res.Content, "Unknown tool id: fake_plugin_tool_99.")
	assert.Empty(t, res.Hidden)

	tel := run.Telemetry()
	assert.EqualValues(t, 2, tel.CallCount, "resolved calls count; unknown ids do not")
	require.Len(t, tel.Calls, 2)
	assert.Equal(t, runtime.ViaToolCall, tel.Calls[0].Via)
	assert.Equal(t, "openclaw:fake-plugin:fake_plugin_tool_17", tel.Calls[0].ToolID)
	assert.False(t, tel.Calls[0].IsError)
	assert.True(t, tel.Calls[1].IsError)
}

// A tool's own isError result is still its result: the envelope carries it.
func TestToolCallToolError(t *testing.T) {
	failing := catalog.Tool{Source: catalog.SourceOpenClaw, SourceName: "core", Name: "flaky",
		Handler: catalog.HandlerFunc(func(_ context.Context, _ json.RawMessage) (*catalog.Result, error) {
			return &catalog.Result{Content: []catalog.Content{{Type: "text", Text: "disk full"}}, IsError: true}, nil
		})}
	rt := newRuntime(t, runtime.ModeTools, nil)
	run := startRun(t, rt, runtime.RunRequest{Tools: []catalog.Tool{failing}})
	res := execute(t, run, "1", runtime.ToolCallName, map[string]any{"id": "flaky"})
	assert.True(t, res.IsError)
	assert.False(t, res.Blocked)
	assert.Contains(t, res.Content, `"isError":true`)
	assert.Contains(t, res.Content, "disk full")
}
