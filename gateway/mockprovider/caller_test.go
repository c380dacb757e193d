package mockprovider_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolsearch/toolsearch/catalog"
	"github.com/toolsearch/toolsearch/gateway"
	"github.com/toolsearch/toolsearch/gateway/mockprovider"
	"github.com/toolsearch/toolsearch/runtime"
)

const graphID = "mcp:memory:read_graph"

func TestCallerScript(t *testing.T) {
	s := mockprovider.NewCaller(graphID, &mockprovider.Options{Arguments: json.RawMessage(`{"depth": 2}`)})
	defer s.Close()
	user := msg{"role": "user", "content": "go"}
	tests := []struct {
		name     string
		declared []any
		tool     string
		args     string
	}{
		{"code mode", tools("tool_search_code"), "tool_search_code",
			`{"code":"return await openclaw.tools.call(\"mcp:memory:read_graph\", {\"depth\": 2});"}`},
		{"tools mode", tools("tool_search", "tool_describe", "tool_call"), "tool_call",
			`{"args":{"depth":2},"id":"mcp:memory:read_graph"}`},
		{"declared directly", tools("read_graph", "other"), "read_graph", `{"depth": 2}`},
		{"declared by its qualified name", tools("memory__read_graph", "git__read_graph"), "memory__read_graph", `{"depth": 2}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, c, _ := post(t, s, request(tt.declared, user))
			require.Equal(t, 200, code)
			require.Len(t, c.Choices[0].Message.ToolCalls, 1)
			call := c.Choices[0].Message.ToolCalls[0].Function
			assert.Equal(t, tt.tool, call.Name)
			assert.JSONEq(t, tt.args, call.Arguments)
		})
	}

	code, c, _ := post(t, s, request(tools("unrelated"), user))
	require.Equal(t, 200, code)
	assert.Equal(t, "MOCK_FAILED neither tool_search_code, tool_call nor read_graph is declared", *c.Choices[0].Message.Content)

	// Any result ends the conversation with what the model saw.
	code, c, _ = post(t, s, request(tools("tool_call"), user, assistantCall("call_1", "tool_call", `{}`),
		msg{"role": "tool", "tool_call_id": "call_1", "content": `{"entities": []}`}))
	require.Equal(t, 200, code)
	assert.Equal(t, `CALLED mcp:memory:read_graph: {"entities": []}`, *c.Choices[0].Message.Content)

	bad := mockprovider.NewCaller(graphID, &mockprovider.Options{Arguments: json.RawMessage(`{depth`)})
	defer bad.Close()
	_, c, _ = post(t, bad, request(tools("tool_call"), user))
	assert.Equal(t, "MOCK_FAILED Options.Arguments is not valid JSON", *c.Choices[0].Message.Content)

	plain := mockprovider.NewCaller(graphID, nil)
	defer plain.Close()
	_, c, _ = post(t, plain, request(tools("tool_call"), user))
	assert.JSONEq(t, `{"args":{"marker":"normal"},"id":"mcp:memory:read_graph"}`, c.Choices[0].Message.ToolCalls[0].Function.Arguments)
}

// Through the gateway, the scripted model reaches an MCP tool by its id in every mode: inside a
// tool_search_code script, through tool_call, and directly in off mode.
func TestCallerReachesAnMCPToolInEveryMode(t *testing.T) {
	ctx := context.Background()
	var got []string
	readGraph := catalog.Tool{Source: catalog.SourceMCP, SourceName: "memory", Name: "read_graph",
		Description: "Read the whole knowledge graph.",
		Parameters:  json.RawMessage(`{"type":"object","properties":{"depth":{"type":"integer"}}}`),
		Handler: catalog.HandlerFunc(func(_ context.Context, args json.RawMessage) (*catalog.Result, error) {
			got = append(got, string(args))
			return &catalog.Result{Content: []catalog.Content{{Type: "text", Text: `{"entities":["alice"]}`}}}, nil
		})}
	for _, mode := range []runtime.Mode{runtime.ModeCode, runtime.ModeTools, runtime.ModeDirectory, runtime.ModeOff} {
		t.Run(string(mode), func(t *testing.T) {
			got = nil
			provider := mockprovider.NewCaller(graphID, &mockprovider.Options{Arguments: json.RawMessage(`{"depth": 2}`)})
			defer provider.Close()
			opts := &runtime.Options{Config: runtime.Config{Enabled: mode != runtime.ModeOff, Mode: mode}}
			rt, err := runtime.New(ctx, opts)
			require.NoError(t, err)
			defer rt.Close(ctx)
			gw, err := gateway.New(rt, &gateway.Options{BaseURL: provider.URL(), Model: "mock-model"})
			require.NoError(t, err)
			turn, err := gw.Turn(ctx, gateway.TurnRequest{Run: runtime.RunRequest{
				SessionID: "s-" + string(mode), Tools: []catalog.Tool{readGraph}, UserMessage: "What do you remember?",
			}})
			require.NoError(t, err)
			assert.Equal(t, []string{`{"depth":2}`}, compact(got), "the tool ran once with the scripted arguments")
			require.Len(t, turn.Telemetry.Calls, 1)
			assert.Equal(t, graphID, turn.Telemetry.Calls[0].ToolID)
			assert.True(t, strings.HasPrefix(turn.Answer, mockprovider.CalledPrefix+" "+graphID+": "), turn.Answer)
			assert.Contains(t, turn.Answer, "alice")
		})
	}
}

func compact(in []string) []string {
	out := make([]string, len(in))
	for i, s := range in {
		var v any
		if json.Unmarshal([]byte(s), &v) == nil {
			b, _ := json.Marshal(v)
			s = string(b)
		}
		out[i] = s
	}
	return out
}
