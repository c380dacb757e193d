package front

import (
	"context"
	"encoding/json"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolsearch/toolsearch/runtime"
)

// echoServer is an upstream with server-everything's echo: one required "message".
func echoServer() *fakeServer {
	f := newFakeServer(0)
	f.Srv.AddTool(&sdk.Tool{
		Name:        "echo",
		Description: "Echoes back the input.",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"message":{"type":"string","description":"Message to echo"}},"required":["message"]}`),
	}, func(_ context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		var args struct {
			Message string `json:"message"`
		}
		_ = json.Unmarshal(req.Params.Arguments, &args)
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "Echo: " + args.Message}}}, nil
	})
	return f
}

// The mistakes real clients' models make reach toolsearch's MCP server as they were sent, and are repaired or
// refused there exactly as in the library: the client never sees a dropped field or the upstream's confusion.
func TestServeCallMistakes(t *testing.T) {
	up := echoServer()
	src := startSource(t, inMemoryConfig("everything"), fastOptions(nil), map[string]dialFunc{"everything": up.dial})
	const shape = ` Expected {"id": "<tool id>", "args": {<the tool's arguments>}}.`
	tests := []struct {
		name string
		args map[string]any
		want string
		err  bool
	}{
		{"well formed", map[string]any{"id": "mcp:everything:echo", "args": map[string]any{"message": "hi"}}, "Echo: hi", false},
		{"arguments for args", map[string]any{"id": "mcp:everything:echo", "arguments": map[string]any{"message": "hi"}}, "Echo: hi", false},
		{"args as a JSON string", map[string]any{"id": "echo", "args": `{"message":"hi"}`}, "Echo: hi", false},
		{"request nested in args", map[string]any{"id": "echo", "args": map[string]any{"id": "echo", "args": map[string]any{"message": "hi"}}}, "Echo: hi", false},
		{"unknown field", map[string]any{"id": "echo", "args": map[string]any{"message": "hi"}, "bogus": true},
			`Invalid arguments for tool_call: unknown field "bogus"; the tool's own arguments go inside "args".` + shape, true},
		{"both args and arguments", map[string]any{"id": "echo", "args": map[string]any{}, "arguments": map[string]any{"message": "hi"}},
			`Invalid arguments for tool_call: both "args" and "arguments" are set, two names for one field; send it once, as "args".` + shape, true},
		{"wrong name for the property", map[string]any{"id": "echo", "args": map[string]any{"text": "hi"}},
			`Invalid arguments for mcp:everything:echo: at /: missing required property "message" (string); given property "text". ` +
				`Required properties: { message: string } (describe the tool for its full schema).`, true},
	}
	rt := newTestRuntime(t, runtime.ModeTools)
	sess := connectStdio(t, newTestServer(t, rt, src, nil))
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			text, isErr := callText(t, sess, "tool_call", tt.args)
			assert.Equal(t, tt.err, isErr, text)
			if tt.err {
				assert.Equal(t, tt.want, text)
			} else {
				assert.Contains(t, text, tt.want)
			}
		})
	}

	// Code mode: openclaw.tools.call with the same mistakes, through the same server.
	codeRT := newTestRuntime(t, runtime.ModeCode)
	codeSess := connectStdio(t, newTestServer(t, codeRT, src, nil))
	text, isErr := callText(t, codeSess, "tool_search_code", map[string]any{"code": `
		const a = await openclaw.tools.call("echo", {arguments: {message: "one"}});
		const b = await openclaw.tools.call("echo", JSON.stringify({message: "two"}));
		let c;
		try { await openclaw.tools.call("echo", 5); } catch (e) { c = e.message; }
		const d = await openclaw.tools.call({id: "echo", args: {message: "four"}});
		return [a.result.content[0].text, b.result.content[0].text, c, d.result.content[0].text];`})
	require.False(t, isErr, text)
	var res struct {
		Value []string `json:"value"`
	}
	require.NoError(t, json.Unmarshal([]byte(text), &res), text)
	assert.Equal(t, []string{"Echo: one", "Echo: two",
		`Invalid arguments for openclaw.tools.call: the arguments of mcp:everything:echo must be a JSON object, not a number. ` +
			`Expected openclaw.tools.call("<tool id>", {<the tool's arguments>}).`, "Echo: four"}, res.Value)
}
