package runtime_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolsearch/toolsearch/catalog"
	"github.com/toolsearch/toolsearch/runtime"
)

// echoSchema is the input of the MCP "echo" tool the mistakes below are made against: one required string.
const echoSchema = `{"type":"object","properties":{"message":{"type":"string","description":"What to echo."}},"required":["message"]}`

// mistakeTools: an untrusted MCP tool (its input hint is "unknown"), a trusted one, and a tool that really has
// a property called "args", which must never be unwrapped.
func mistakeTools() []catalog.Tool {
	return []catalog.Tool{
		{Source: catalog.SourceMCP, SourceName: "everything", Name: "echo", Description: "Echo a message back.",
			Parameters: json.RawMessage(echoSchema), Handler: okHandler("echo")},
		{Source: catalog.SourceOpenClaw, SourceName: "core", Name: "shout", Description: "Shout a message.",
			Parameters: json.RawMessage(echoSchema), Handler: okHandler("shout")},
		{Source: catalog.SourceOpenClaw, SourceName: "core", Name: "run_script", Description: "Run a script with arguments.",
			Parameters: json.RawMessage(`{"type":"object","properties":{"script":{"type":"string"},"args":{"type":"object"}},"required":["script"]}`),
			Handler:    okHandler("run_script")},
	}
}

// mistake is one request the model might send, and what must become of it: the arguments the tool got and
// the repairs recorded, or the exact message it was refused with.
type mistake struct {
	name    string
	request string // tools mode: tool_call's arguments; code mode: the arguments of openclaw.tools.call, as JS
	got     string // the arguments the tool got ("" when refused)
	repairs []runtime.RepairKind
	refused string // the exact message
	// suggests, for an unknown id, is the closest suggestion, which must come first (the rest depends on ranking)
	suggests string
}

const callShape = ` Expected {"id": "<tool id>", "args": {<the tool's arguments>}}.`

var toolCallMistakes = []mistake{
	{name: "well formed", request: `{"id": "mcp:everything:echo", "args": {"message": "hi"}}`, got: `{"message":"hi"}`},
	{name: "name for id", request: `{"name": "echo", "args": {"message": "hi"}}`, got: `{"message":"hi"}`,
		repairs: []runtime.RepairKind{runtime.RepairAlias}},
	{name: "arguments for args", request: `{"id": "echo", "arguments": {"message": "hi"}}`, got: `{"message":"hi"}`,
		repairs: []runtime.RepairKind{runtime.RepairAlias}},
	{name: "params for args", request: `{"id": "echo", "params": {"message": "hi"}}`, got: `{"message":"hi"}`,
		repairs: []runtime.RepairKind{runtime.RepairAlias}},
	{name: "input for args", request: `{"id": "echo", "input": {"message": "hi"}}`, got: `{"message":"hi"}`,
		repairs: []runtime.RepairKind{runtime.RepairAlias}},
	{name: "args as a JSON string", request: `{"id": "echo", "args": "{\"message\": \"hi\"}"}`, got: `{"message": "hi"}`,
		repairs: []runtime.RepairKind{runtime.RepairStringArgs}},
	{name: "arguments as a JSON string", request: `{"id": "echo", "arguments": " {\"message\": \"hi\"} "}`, got: `{"message": "hi"}`,
		repairs: []runtime.RepairKind{runtime.RepairAlias, runtime.RepairStringArgs}},
	{name: "request nested in args", request: `{"id": "echo", "args": {"id": "mcp:everything:echo", "args": {"message": "hi"}}}`,
		got: `{"message": "hi"}`, repairs: []runtime.RepairKind{runtime.RepairNestedRequest}},
	{name: "arguments nested in args", request: `{"id": "echo", "args": {"arguments": {"message": "hi"}}}`,
		got: `{"message": "hi"}`, repairs: []runtime.RepairKind{runtime.RepairNestedRequest}},
	{name: "whole request in args", request: `{"args": {"id": "echo", "arguments": {"message": "hi"}}}`,
		got: `{"message": "hi"}`, repairs: []runtime.RepairKind{runtime.RepairNestedRequest, runtime.RepairAlias}},
	{name: "empty string args", request: `{"id": "mcp:everything:echo", "args": ""}`,
		refused: `Invalid arguments for mcp:everything:echo: at /: missing required property "message" (string); given no properties. ` +
			`Required properties: { message: string } (describe the tool for its full schema).`,
		repairs: []runtime.RepairKind{runtime.RepairStringArgs}},
	{name: "a tool's own args property is kept", request: `{"id": "run_script", "args": {"script": "build", "args": {"fast": true}}}`,
		got: `{"script": "build", "args": {"fast": true}}`},
	{name: "args held only args for a tool that has args", request: `{"id": "run_script", "args": {"args": {"script": "x"}}}`,
		refused: `Invalid arguments for openclaw:core:run_script: at /: missing required property "script" (string); given property "args". ` +
			`Expected input: { script: string; args?: {} }`},

	{name: "both args and arguments", request: `{"id": "echo", "args": {"message": "a"}, "arguments": {"message": "b"}}`,
		refused: `Invalid arguments for tool_call: both "args" and "arguments" are set, two names for one field; send it once, as "args".` + callShape},
	{name: "both id and name", request: `{"id": "echo", "name": "shout", "args": {"message": "hi"}}`,
		refused: `Invalid arguments for tool_call: both "id" and "name" are set, two names for one field; send it once, as "id".` + callShape},
	{name: "unknown top-level field", request: `{"id": "echo", "args": {"message": "hi"}, "bogus": 1}`,
		refused: `Invalid arguments for tool_call: unknown field "bogus"; the tool's own arguments go inside "args".` + callShape},
	{name: "the tool's arguments at the top level", request: `{"id": "echo", "message": "hi", "loud": true}`,
		refused: `Invalid arguments for tool_call: unknown fields "message", "loud"; the tool's own arguments go inside "args".` + callShape},
	{name: "a field sent twice", request: `{"id": "echo", "args": {"message": "a"}, "args": {"message": "b"}}`,
		refused: `Invalid arguments for tool_call: the field "args" is sent twice.` + callShape},
	{name: "no id", request: `{"args": {"message": "hi"}}`,
		refused: `Invalid arguments for tool_call: "id" is missing.` + callShape},
	{name: "id not a string", request: `{"id": 7, "args": {}}`,
		refused: `Invalid arguments for tool_call: "id" must be a string, not a number.` + callShape},
	{name: "args a number", request: `{"id": "echo", "args": 5}`,
		refused: `Invalid arguments for tool_call: the arguments of mcp:everything:echo must be a JSON object, not a number.` + callShape},
	{name: "args a string without an object", request: `{"id": "echo", "args": "message=hi"}`,
		refused: `Invalid arguments for tool_call: the arguments of mcp:everything:echo must be a JSON object, not a string ` +
			`(a string is read only when it holds a JSON object).` + callShape},
	{name: "request not an object", request: `["echo", {"message": "hi"}]`,
		refused: `Invalid arguments for tool_call: the request must be a JSON object, not an array.` + callShape},
	{name: "nested request naming another tool is not unwrapped", request: `{"id": "echo", "args": {"id": "shout", "args": {"message": "hi"}}}`,
		refused: `Invalid arguments for mcp:everything:echo: at /: missing required property "message" (string); given properties "args", "id". ` +
			`Required properties: { message: string } (describe the tool for its full schema).`},
	{name: "wrong type, untrusted tool", request: `{"id": "echo", "args": {"message": 5}}`,
		refused: `Invalid arguments for mcp:everything:echo: at /message: expected string, given 5 (number). ` +
			`Required properties: { message: string } (describe the tool for its full schema).`},
	{name: "wrong type, trusted tool", request: `{"id": "shout", "args": {"message": ["a", "b"]}}`,
		refused: `Invalid arguments for openclaw:core:shout: at /message: expected string, given ["a","b"] (array). Expected input: { message: string }`},
	{name: "unknown id", request: `{"id": "ecko", "args": {"message": "hi"}}`, suggests: "Unknown tool id: ecko. Did you mean: mcp:everything:echo"},
}

func TestToolCallMistakes(t *testing.T) {
	for _, tt := range toolCallMistakes {
		t.Run(tt.name, func(t *testing.T) {
			mem := newMemoryLog()
			rt := newRuntime(t, runtime.ModeTools, &runtime.Options{SessionLog: mem})
			run := startRun(t, rt, runtime.RunRequest{SessionID: "s", Tools: mistakeTools()})
			res, err := run.Execute(context.Background(), runtime.ToolCall{ID: "call_1", Name: runtime.ToolCallName, Arguments: json.RawMessage(tt.request)})
			require.NoError(t, err)
			switch {
			case tt.suggests != "":
				assert.True(t, res.IsError)
				assert.True(t, strings.HasPrefix(res.Content, tt.suggests), res.Content)
				assert.True(t, strings.HasSuffix(res.Content, "Search the catalog and use an exact id from the results."), res.Content)
			case tt.refused != "":
				assert.True(t, res.IsError)
				assert.Equal(t, tt.refused, res.Content)
			default:
				require.False(t, res.IsError, res.Content)
				var env struct {
					Result struct {
						Details struct {
							Input json.RawMessage `json:"input"`
						} `json:"details"`
					} `json:"result"`
				}
				require.NoError(t, json.Unmarshal(res.Details, &env))
				assert.JSONEq(t, tt.got, string(env.Result.Details.Input), "what the tool got")
			}
			tel := run.Telemetry()
			assert.Equal(t, tt.repairs, repairKinds(tel.Repairs))
			assert.EqualValues(t, len(tt.repairs), tel.RepairCount)
			for _, rp := range tel.Repairs {
				assert.Equal(t, runtime.ViaToolCall, rp.Via)
				assert.Equal(t, "tool_call", rp.Op)
				assert.NotEmpty(t, rp.Detail)
			}

			require.NoError(t, run.Close())
			var logged []runtime.RepairKind
			for _, rec := range mem.get("s") {
				if rec.Type == runtime.RecordRepair {
					logged = append(logged, rec.Repair.Kind)
				}
			}
			assert.Equal(t, tt.repairs, logged, "every repair is in the session log")
		})
	}
}

func repairKinds(rs []runtime.Repair) []runtime.RepairKind {
	var out []runtime.RepairKind
	for _, r := range rs {
		out = append(out, r.Kind)
	}
	return out
}

// The repairs say what was read as what, and belong to the hidden call once the tool is known.
func TestRepairRecord(t *testing.T) {
	rt := newRuntime(t, runtime.ModeTools, nil)
	run := startRun(t, rt, runtime.RunRequest{Tools: mistakeTools()})
	res := execute(t, run, "call_7", runtime.ToolCallName, map[string]any{"id": "echo", "arguments": `{"message":"hi"}`})
	require.False(t, res.IsError, res.Content)
	assert.Equal(t, []runtime.Repair{
		{CallID: "tool_search_code:call_7:echo:1", Via: runtime.ViaToolCall, Op: "tool_call", ToolID: "mcp:everything:echo",
			Kind: runtime.RepairAlias, Detail: `"arguments" read as "args"`},
		{CallID: "tool_search_code:call_7:echo:1", Via: runtime.ViaToolCall, Op: "tool_call", ToolID: "mcp:everything:echo",
			Kind: runtime.RepairStringArgs, Detail: "the arguments were a string holding a JSON object; the object was used"},
	}, run.Telemetry().Repairs)
	assert.JSONEq(t, `{"message":"hi"}`, string(res.Hidden[0].Arguments), "the transcript shows what the tool got")
}

const codeCallShape = ` Expected openclaw.tools.call("<tool id>", {<the tool's arguments>}).`

// The same mistakes through openclaw.tools.call in code mode: the script's promise resolves with what the tool
// got, or rejects with the exact message.
var codeCallMistakes = []mistake{
	{name: "well formed", request: `"mcp:everything:echo", {message: "hi"}`, got: `{"message":"hi"}`},
	{name: "args as a JSON string", request: `"echo", JSON.stringify({message: "hi"})`, got: `{"message":"hi"}`,
		repairs: []runtime.RepairKind{runtime.RepairStringArgs}},
	{name: "arguments nested in args", request: `"echo", {arguments: {message: "hi"}}`, got: `{"message":"hi"}`,
		repairs: []runtime.RepairKind{runtime.RepairNestedRequest}},
	{name: "request nested in args", request: `"echo", {id: "echo", args: {message: "hi"}}`, got: `{"message":"hi"}`,
		repairs: []runtime.RepairKind{runtime.RepairNestedRequest}},
	{name: "nested request as a string", request: `"echo", JSON.stringify({input: {message: "hi"}})`, got: `{"message":"hi"}`,
		repairs: []runtime.RepairKind{runtime.RepairStringArgs, runtime.RepairNestedRequest}},
	{name: "a tool's own args property is kept", request: `"run_script", {script: "build", args: {fast: true}}`,
		got: `{"script":"build","args":{"fast":true}}`},
	{name: "args a number", request: `"echo", 5`,
		refused: `Invalid arguments for openclaw.tools.call: the arguments of mcp:everything:echo must be a JSON object, not a number.` + codeCallShape},
	{name: "args an array", request: `"echo", ["hi"]`,
		refused: `Invalid arguments for openclaw.tools.call: the arguments of mcp:everything:echo must be a JSON object, not an array.` + codeCallShape},
	{name: "wrong type", request: `"echo", {message: 5}`,
		refused: `Invalid arguments for mcp:everything:echo: at /message: expected string, given 5 (number). ` +
			`Required properties: { message: string } (describe the tool for its full schema).`},
	{name: "unknown id", request: `"ecko", {message: "hi"}`, suggests: "Unknown tool id: ecko. Did you mean: mcp:everything:echo"},
	{name: "the whole request as the first argument", request: `{id: "echo", args: {message: "hi"}}`, got: `{"message":"hi"}`,
		repairs: []runtime.RepairKind{runtime.RepairNestedRequest}},
	{name: "the whole request with MCP names", request: `{name: "echo", arguments: {message: "hi"}}`, got: `{"message":"hi"}`,
		repairs: []runtime.RepairKind{runtime.RepairNestedRequest, runtime.RepairAlias, runtime.RepairAlias}},
	{name: "no arguments at all", request: ``,
		refused: `Invalid arguments for openclaw.tools.call: the tool id is missing.` + codeCallShape},
	{name: "id a number", request: `5, {message: "hi"}`,
		refused: `Invalid arguments for openclaw.tools.call: the tool id must be a string, not a number.` + codeCallShape},
	{name: "a request and args beside it", request: `{id: "echo", args: {message: "a"}}, {message: "b"}`,
		refused: `Invalid arguments for openclaw.tools.call: the tool id must be a string, not an object.` + codeCallShape},
	{name: "no args for a tool that needs some", request: `"echo"`,
		refused: `Invalid arguments for mcp:everything:echo: at /: missing required property "message" (string); given no properties. ` +
			`Required properties: { message: string } (describe the tool for its full schema).`},
}

// openclaw.tools.describe with the same mistakes.
func TestCodeDescribeMistakes(t *testing.T) {
	rt := newRuntime(t, runtime.ModeCode, nil)
	run := startRun(t, rt, runtime.RunRequest{Tools: mistakeTools()})
	_, cr := runCode(t, run, "c", `
		const out = [];
		for (const arg of [{id: "echo"}, {name: "mcp:everything:echo"}, 7, undefined, {id: "echo", verbose: true}]) {
			try { out.push((await openclaw.tools.describe(arg)).id); } catch (e) { out.push(e.message); }
		}
		return out;`)
	require.True(t, cr.OK, "%+v", cr.Error)
	var out []string
	require.NoError(t, json.Unmarshal(cr.Value, &out))
	const shape = ` Expected openclaw.tools.describe("<tool id>").`
	assert.Equal(t, []string{
		"mcp:everything:echo",
		"mcp:everything:echo",
		`Invalid arguments for openclaw.tools.describe: the tool id must be a string, not a number.` + shape,
		`Invalid arguments for openclaw.tools.describe: the tool id is missing.` + shape,
		`Invalid arguments for openclaw.tools.describe: the tool id must be a string, not an object.` + shape,
	}, out)
	assert.Equal(t, []runtime.RepairKind{runtime.RepairNestedRequest, runtime.RepairNestedRequest, runtime.RepairAlias},
		repairKinds(run.Telemetry().Repairs))
}

func TestCodeCallMistakes(t *testing.T) {
	rt := newRuntime(t, runtime.ModeCode, nil)
	for _, tt := range codeCallMistakes {
		t.Run(tt.name, func(t *testing.T) {
			run := startRun(t, rt, runtime.RunRequest{SessionID: t.Name(), Tools: mistakeTools()})
			code := fmt.Sprintf(`try {
				const r = await openclaw.tools.call(%s);
				return {got: r.result.details.input};
			} catch (e) { return {error: e.message}; }`, tt.request)
			_, cr := runCode(t, run, "c1", code)
			require.True(t, cr.OK, "%+v", cr.Error)
			var out struct {
				Got   json.RawMessage `json:"got"`
				Error string          `json:"error"`
			}
			require.NoError(t, json.Unmarshal(cr.Value, &out))
			switch {
			case tt.suggests != "":
				assert.True(t, strings.HasPrefix(out.Error, tt.suggests), out.Error)
			case tt.refused != "":
				assert.Equal(t, tt.refused, out.Error)
			default:
				require.Empty(t, out.Error)
				assert.JSONEq(t, tt.got, string(out.Got))
			}
			tel := run.Telemetry()
			assert.Equal(t, tt.repairs, repairKinds(tel.Repairs))
			for _, rp := range tel.Repairs {
				assert.Equal(t, runtime.ViaCode, rp.Via)
				assert.Equal(t, "openclaw.tools.call", rp.Op)
			}
		})
	}
}

// tool_describe and tool_search refuse what they do not know, with the shape; a name for id is read as id.
func TestDescribeAndSearchMistakes(t *testing.T) {
	rt := newRuntime(t, runtime.ModeTools, nil)
	run := startRun(t, rt, runtime.RunRequest{Tools: mistakeTools()})
	tests := []struct {
		tool, request, want string
		repaired            bool
	}{
		{runtime.ToolDescribeName, `{"name": "echo"}`, "", true},
		{runtime.ToolDescribeName, `{"toolId": "mcp:everything:echo"}`, "", true},
		{runtime.ToolDescribeName, `{"id": "echo", "verbose": true}`,
			`Invalid arguments for tool_describe: unknown field "verbose". Expected {"id": "<tool id>"}.`, false},
		{runtime.ToolDescribeName, `{"id": "echo", "name": "echo"}`,
			`Invalid arguments for tool_describe: both "id" and "name" are set, two names for one field; send it once, as "id". Expected {"id": "<tool id>"}.`, false},
		{runtime.ToolSearchName, `{"query": "echo", "max": 3}`,
			`Invalid arguments for tool_search: unknown field "max". Expected {"query": "<what the tool should do>", "limit": <n>} or {"queries": ["<one need>", "<another>"]}.`, false},
	}
	for _, tt := range tests {
		before := run.Telemetry().RepairCount
		res, err := run.Execute(context.Background(), runtime.ToolCall{ID: "1", Name: tt.tool, Arguments: json.RawMessage(tt.request)})
		require.NoError(t, err)
		if tt.want == "" {
			require.False(t, res.IsError, res.Content)
			assert.Contains(t, res.Content, `"id":"mcp:everything:echo"`)
		} else {
			assert.True(t, res.IsError)
			assert.Equal(t, tt.want, res.Content, tt.request)
		}
		assert.Equal(t, tt.repaired, run.Telemetry().RepairCount > before, tt.request)
	}
}

// Code wrapped in a Markdown fence runs as the code inside it.
func TestCodeFence(t *testing.T) {
	rt := newRuntime(t, runtime.ModeCode, nil)
	run := startRun(t, rt, runtime.RunRequest{Tools: mistakeTools()})
	for _, code := range []string{"```js\nreturn 1 + 1\n```", "  ```\nreturn 1 + 1\n```\n", "```javascript\nreturn 1 + 1\n```"} {
		_, cr := runCode(t, run, "c", code)
		require.True(t, cr.OK, "%q: %+v", code, cr.Error)
		assert.JSONEq(t, `2`, string(cr.Value))
	}
	assert.EqualValues(t, 3, run.Telemetry().RepairCount)
	// Backticks that are not one fenced block are the script's own business.
	runCode(t, run, "c", "return `a` + ```b```")
	assert.EqualValues(t, 3, run.Telemetry().RepairCount)
}

// A tool the model calls directly (off mode here) gets the same repairs of its arguments, and the session
// summary counts them.
func TestDirectCallRepairs(t *testing.T) {
	mem := newMemoryLog()
	rt := newRuntime(t, runtime.ModeOff, &runtime.Options{SessionLog: mem})
	run := startRun(t, rt, runtime.RunRequest{SessionID: "direct", Tools: mistakeTools()})
	tests := []struct {
		args, got string
		kinds     []runtime.RepairKind
	}{
		{`{"message": "hi"}`, `{"message":"hi"}`, nil},
		{`"{\"message\": \"hi\"}"`, `{"message":"hi"}`, []runtime.RepairKind{runtime.RepairStringArgs}},
		{`{"arguments": {"message": "hi"}}`, `{"message":"hi"}`, []runtime.RepairKind{runtime.RepairNestedRequest}},
	}
	for _, tt := range tests {
		before := len(run.Telemetry().Repairs)
		res, err := run.Execute(context.Background(), runtime.ToolCall{ID: "d", Name: "shout", Arguments: json.RawMessage(tt.args)})
		require.NoError(t, err)
		require.False(t, res.IsError, res.Content)
		var details struct {
			Input json.RawMessage `json:"input"`
		}
		require.NoError(t, json.Unmarshal(res.Details, &details))
		assert.JSONEq(t, tt.got, string(details.Input))
		assert.Equal(t, tt.kinds, repairKinds(run.Telemetry().Repairs[before:]), tt.args)
	}
	for _, rp := range run.Telemetry().Repairs {
		assert.Equal(t, runtime.ViaDirect, rp.Via)
		assert.Equal(t, "shout", rp.Op)
		assert.Equal(t, "d", rp.CallID)
	}
	require.NoError(t, run.Close())
	assert.Equal(t, map[runtime.RepairKind]int{runtime.RepairStringArgs: 1, runtime.RepairNestedRequest: 1},
		runtime.Summarize(mem.get("direct")).Repairs)
}

// An unknown id suggests close names from the run's current, policy-filtered catalog: a tool denied mid-run is
// never suggested, through tool_call or openclaw.tools.call.
func TestUnknownIDSuggestsOnlyAllowedTools(t *testing.T) {
	deny := &catalog.Policy{Session: catalog.Rule{Deny: []string{"mcp:everything:echo"}}}
	for _, mode := range []runtime.Mode{runtime.ModeTools, runtime.ModeCode} {
		t.Run(string(mode), func(t *testing.T) {
			rt := newRuntime(t, mode, nil)
			run := startRun(t, rt, runtime.RunRequest{Tools: mistakeTools()})
			message := func() string {
				if mode == runtime.ModeTools {
					return execute(t, run, "c", runtime.ToolCallName, map[string]any{"id": "ecko", "args": map[string]any{}}).Content
				}
				_, cr := runCode(t, run, "c", `try { await openclaw.tools.call("ecko", {}) } catch (e) { return e.message }`)
				var msg string
				require.NoError(t, json.Unmarshal(cr.Value, &msg))
				return msg
			}
			assert.Contains(t, message(), "Did you mean: mcp:everything:echo")
			run.SetPolicy(deny)
			msg := message()
			assert.True(t, strings.HasPrefix(msg, "Unknown tool id: ecko."), msg)
			assert.NotContains(t, msg, "mcp:everything:echo", "a denied tool is never suggested")
		})
	}
}
