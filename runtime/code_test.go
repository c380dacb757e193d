package runtime_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolsearch/toolsearch/catalog"
	"github.com/toolsearch/toolsearch/runtime"
)

// scenarioCode is what the mock provider of the end-to-end scenario sends: search with limit 1, take the hit whose
// name matches, call it with the marker.
const scenarioCode = `
const hits = await openclaw.tools.search("fake_plugin_tool_17", {limit: 1});
const hit = hits.find(h => h.name === "fake_plugin_tool_17");
console.log("found", hit.id);
const out = await openclaw.tools.call(hit.id, {marker: "normal"});
return {text: out.result.content[0].text, details: out.result.details, tool: out.tool.id};
`

func TestCodeModeScenario(t *testing.T) {
	mem := newMemoryLog()
	rt := newRuntime(t, runtime.ModeCode, &runtime.Options{SessionLog: mem})
	run := startRun(t, rt, runtime.RunRequest{SessionID: "sess", RunID: "run1", Tools: fakePlugin(36)})
	assert.Equal(t, []string{"tool_search_code"}, toolNames(run.Tools()))

	res, cr := runCode(t, run, "call_abc", scenarioCode)
	require.True(t, cr.OK, res.Content)
	assert.False(t, res.IsError)
	assert.JSONEq(t, `{"text":"FAKE_PLUGIN_OK fake_plugin_tool_17 {\"marker\":\"normal\"}",
		"details":{"status":"ok","tool":"fake_plugin_tool_17","input":{"marker":"normal"}},
		"tool":"openclaw:fake-plugin:fake_plugin_tool_17"}`, string(cr.Value))
	assert.Equal(t, []string{"found openclaw:fake-plugin:fake_plugin_tool_17"}, cr.Logs)
	assert.Equal(t, &runtime.CodeTelemetry{CatalogSize: 36, Sources: runtime.SourceCounts{OpenClaw: 36},
		SearchCount: 1, DescribeCount: 0, CallCount: 1}, cr.Telemetry)
	assert.Equal(t, cr.Telemetry, res.Telemetry)

	require.Len(t, res.Hidden, 1)
	h := res.Hidden[0]
	assert.Equal(t, "tool_search_code:call_abc:fake_plugin_tool_17:1", h.ID)
	assert.Equal(t, "openclaw:fake-plugin:fake_plugin_tool_17", h.ToolID)
	assert.Equal(t, catalog.SourceOpenClaw, h.Source)
	assert.Contains(t, h.Result.Content, "FAKE_PLUGIN_OK")

	tel := run.Telemetry()
	assert.EqualValues(t, 1, tel.SearchCount)
	assert.EqualValues(t, 1, tel.CallCount)
	require.Len(t, tel.Calls, 1)
	assert.Equal(t, runtime.ViaCode, tel.Calls[0].Via)
	assert.Equal(t, "call_abc", tel.Calls[0].ParentCallID)
	assert.Equal(t, 1, tel.Sandbox.Runs)
	assert.Positive(t, tel.Sandbox.Fuel)
	assert.Positive(t, tel.Sandbox.Wall)
	assert.Positive(t, tel.Sandbox.PeakMemoryBytes)

	require.NoError(t, run.Close())
	var code *runtime.CodeInfo
	for _, rec := range mem.get("sess") {
		if rec.Type == runtime.RecordCode {
			code = rec.Code
		}
	}
	require.NotNil(t, code)
	assert.True(t, code.OK)
	assert.Equal(t, 2, code.Bridged)
	assert.Positive(t, code.Fuel)
}

func TestCodeModeResultShape(t *testing.T) {
	rt := newRuntime(t, runtime.ModeCode, nil)
	run := startRun(t, rt, runtime.RunRequest{Tools: fakePlugin(3)})
	res, _ := runCode(t, run, "c1", `return {a: [1, 2]}`)
	var generic map[string]json.RawMessage
	require.NoError(t, json.Unmarshal(res.Details, &generic))
	keys := make([]string, 0, len(generic))
	for k := range generic {
		keys = append(keys, k)
	}
	assert.ElementsMatch(t, []string{"ok", "value", "logs", "telemetry"}, keys)
	assert.JSONEq(t, `{"catalogSize":3,"sources":{"openclaw":3,"mcp":0,"client":0},"searchCount":0,"describeCount":0,"callCount":0}`,
		string(generic["telemetry"]))
	assert.JSONEq(t, `[]`, string(generic["logs"]))
	assert.Equal(t, string(res.Details), res.Content, "the model reads compact JSON")
	assert.True(t, strings.HasPrefix(res.Content, `{"ok":true,`), res.Content)

	_, cr := runCode(t, run, "c2", `console.log("no return")`)
	assert.True(t, cr.OK)
	assert.JSONEq(t, `null`, string(cr.Value))
}

func TestCodeModeErrors(t *testing.T) {
	// Timeouts get the shortest budget allowed; everything else the default, so a loaded machine cannot turn a
	// slow script into a timeout.
	fast := newRuntime(t, runtime.ModeCode, &runtime.Options{Config: runtime.Config{CodeTimeoutMs: 1000, CodeMaxCalls: 3}})
	slow := newRuntime(t, runtime.ModeCode, &runtime.Options{Config: runtime.Config{CodeMaxCalls: 3}})
	fastRun := startRun(t, fast, runtime.RunRequest{SessionID: "fast", Tools: fakePlugin(3)})
	run := startRun(t, slow, runtime.RunRequest{SessionID: "slow", Tools: fakePlugin(3)})
	tests := []struct {
		name, code, kind, message string
		line                      int
	}{
		{"syntax", "let x = 1;\nlet = ;", "syntax", "SyntaxError", 2},
		{"exception", "\n\nthrow new TypeError('bad input')", "exception", "TypeError: bad input", 3},
		{"timeout", "while (true) {}", "timeout", "tool_search_code timed out after 1000 ms", 0},
		{"timeout after await", "await openclaw.tools.search('x'); while (true) {}", "timeout", "tool_search_code timed out after 1000 ms", 0},
		{"calls", "for (let i = 0; i < 5; i++) await openclaw.tools.search('x'); return 1", "calls", "more than 3 bridged calls", 0},
		{"bad limit", "return await openclaw.tools.search('fake', {limit: 0})", "exception", "limit must be a positive integer.", 0},
		{"bad limit string", "return await openclaw.tools.search('fake', {limit: '2'})", "exception", "limit must be a positive integer.", 0},
		{"unknown tool", "return await openclaw.tools.call('nope', {})", "exception", "Unknown tool id: nope.", 0},
		{"invalid args", "return await openclaw.tools.call('fake_plugin_tool_01', {})", "exception", `missing required property "marker" (string); given no properties. Expected input: { marker: string }`, 0},
		{"unknown describe", "return await openclaw.tools.describe('nope')", "exception", "Unknown tool id: nope.", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			start := time.Now()
			r := run
			if tt.kind == "timeout" {
				r = fastRun
			}
			res, cr := runCode(t, r, "c_"+tt.name, tt.code)
			assert.False(t, cr.OK)
			assert.True(t, res.IsError)
			require.NotNil(t, cr.Error, res.Content)
			assert.Equal(t, tt.kind, cr.Error.Kind)
			assert.Contains(t, cr.Error.Message, tt.message)
			if tt.line > 0 {
				assert.Equal(t, tt.line, cr.Error.Line)
			}
			assert.NotNil(t, cr.Telemetry)
			if tt.kind == "timeout" {
				assert.Less(t, time.Since(start), 5*time.Second, "stopped near its deadline")
			}
		})
	}
	const shape = ` Expected {"code": "<body of an async JavaScript function>"}.`
	for _, tt := range []struct {
		args any
		want string
	}{
		{map[string]any{}, `"code" is missing.`},
		{map[string]any{"code": "  "}, `"code" is empty.`},
		{map[string]any{"code": 5}, `"code" must be a string, not a number.`},
		{"return 1", `the request must be a JSON object, not a string.`},
		{map[string]any{"code": "return 1", "language": "js"}, `unknown field "language".`},
	} {
		res := execute(t, run, "x", runtime.ToolSearchCodeName, tt.args)
		assert.True(t, res.IsError)
		assert.Equal(t, "Invalid arguments for tool_search_code: "+tt.want+shape, res.Content)
	}
}

func TestCodeModeDescribeAndBatch(t *testing.T) {
	rt := newRuntime(t, runtime.ModeCode, nil)
	run := startRun(t, rt, runtime.RunRequest{Tools: mixedTools()})
	_, cr := runCode(t, run, "c1", `
		const hits = await openclaw.tools.search({queries: ["web search", "github issue"], limit: 2});
		const d = await openclaw.tools.describe("create_issue");
		return {ids: hits.map(h => h.id), input: d.input, required: d.parameters.required};`)
	require.True(t, cr.OK, "%+v", cr.Error)
	assert.JSONEq(t, `{"ids":["openclaw:core:web_search","mcp:github:create_issue"],"input":"unknown","required":["owner","repo","title"]}`, string(cr.Value))
	assert.EqualValues(t, 2, cr.Telemetry.SearchCount)
	assert.EqualValues(t, 1, cr.Telemetry.DescribeCount)
}

// A search that finds nothing gives the script an empty list, and the model the reason in notices; notices are
// bounded however often a script searches in vain.
func TestCodeModeEmptySearchSaysWhy(t *testing.T) {
	rt := newRuntime(t, runtime.ModeCode, nil)
	run := startRun(t, rt, runtime.RunRequest{Tools: mixedTools()})
	_, cr := runCode(t, run, "c1", `
		const hits = await openclaw.tools.search("zebra harmonica");
		const batch = await openclaw.tools.search({queries: ["quantum", "web search"]});
		return {n: hits.length, isArray: Array.isArray(hits), batch: batch.length > 0};`)
	require.True(t, cr.OK, "%+v", cr.Error)
	assert.JSONEq(t, `{"n":0,"isArray":true,"batch":true}`, string(cr.Value))
	require.Len(t, cr.Notices, 1, "only the search that found nothing")
	assert.Contains(t, cr.Notices[0], `No tool has the words "zebra", "harmonica".`)
	assert.Contains(t, cr.Notices[0], "Retry with other words")

	_, cr = runCode(t, run, "c2", `
		for (let i = 0; i < 50; i++) await openclaw.tools.search("nonsense" + i);
		return 1;`)
	require.True(t, cr.OK, "%+v", cr.Error)
	assert.Len(t, cr.Notices, 8, "bounded")

	_, cr = runCode(t, run, "c3", `return (await openclaw.tools.search("web search")).length > 0`)
	assert.Empty(t, cr.Notices, "no notice when something matched")
}

// Calls a script starts together run together, each with its own hidden id, listed in start order.
func TestCodeModeParallelCalls(t *testing.T) {
	gate := make(chan struct{})
	arrived := make(chan struct{}, 4)
	tools := fakePlugin(4)
	for i := range tools {
		name := tools[i].Name
		tools[i].Handler = catalog.HandlerFunc(func(ctx context.Context, args json.RawMessage) (*catalog.Result, error) {
			arrived <- struct{}{}
			select {
			case <-gate:
			case <-ctx.Done():
				return nil, ctx.Err()
			}
			return okHandler(name).Call(ctx, args)
		})
	}
	go func() {
		for range 4 {
			<-arrived
		}
		close(gate) // only opens once all four calls are in flight at the same time
	}()
	rt := newRuntime(t, runtime.ModeCode, nil)
	run := startRun(t, rt, runtime.RunRequest{Tools: tools})
	res, cr := runCode(t, run, "par", `
		const names = ["fake_plugin_tool_01", "fake_plugin_tool_02", "fake_plugin_tool_03", "fake_plugin_tool_04"];
		const out = await Promise.all(names.map(n => openclaw.tools.call(n, {marker: n})));
		return out.map(o => o.result.details.tool);`)
	require.True(t, cr.OK, "%+v", cr.Error)
	assert.JSONEq(t, `["fake_plugin_tool_01","fake_plugin_tool_02","fake_plugin_tool_03","fake_plugin_tool_04"]`, string(cr.Value))
	require.Len(t, res.Hidden, 4)
	seen := map[string]bool{}
	for i, h := range res.Hidden {
		assert.True(t, strings.HasPrefix(h.ID, "tool_search_code:par:fake_plugin_tool_0"), h.ID)
		assert.True(t, strings.HasSuffix(h.ID, ":"+string(rune('1'+i))), "numbered in order: %s", h.ID)
		seen[h.Name] = true
	}
	assert.Len(t, seen, 4)
}

// A tool's own isError result resolves with result.isError set, so a script tells a failure from data (and
// Promise.all keeps the other results); pipeline failures (an unknown tool, invalid arguments) reject.
func TestCodeModeToolErrorResolves(t *testing.T) {
	failing := catalog.Tool{Source: catalog.SourceOpenClaw, SourceName: "core", Name: "flaky",
		Handler: catalog.HandlerFunc(func(context.Context, json.RawMessage) (*catalog.Result, error) {
			return &catalog.Result{Content: []catalog.Content{{Type: "text", Text: "disk full"}}, IsError: true}, nil
		})}
	working := catalog.Tool{Source: catalog.SourceOpenClaw, SourceName: "core", Name: "steady",
		Handler: catalog.HandlerFunc(func(context.Context, json.RawMessage) (*catalog.Result, error) {
			return &catalog.Result{Content: []catalog.Content{{Type: "text", Text: "fine"}}}, nil
		})}
	rt := newRuntime(t, runtime.ModeCode, nil)
	run := startRun(t, rt, runtime.RunRequest{Tools: []catalog.Tool{failing, working}})
	res, cr := runCode(t, run, "c", `const rs = await Promise.all(["flaky", "steady"].map(id => openclaw.tools.call(id)));
let unknown;
try { await openclaw.tools.call("no_such_tool") } catch (e) { unknown = "rejected" }
return [...rs.map(r => r.result.isError ? "failed: " + r.result.content[0].text : "ok: " + r.result.content[0].text), unknown]`)
	require.True(t, cr.OK, "%+v", cr.Error)
	assert.JSONEq(t, `["failed: disk full", "ok: fine", "rejected"]`, string(cr.Value))
	require.Len(t, res.Hidden, 2)
	for _, h := range res.Hidden {
		assert.Equal(t, h.Name == "flaky", h.Result.IsError, h.Name)
	}
}

// The forms models write, through tool_search_code: each gives its answer as the result's value.
func TestCodeModeScriptForms(t *testing.T) {
	rt := newRuntime(t, runtime.ModeCode, nil)
	run := startRun(t, rt, runtime.RunRequest{Tools: fakePlugin(2)})
	for i, tc := range []struct{ name, code, want string }{
		{"return", `return (await openclaw.tools.search("fake plugin tool")).length > 0`, "true"},
		{"last expression", `let x = 1; x`, "1"},
		{"iife", `(async () => { return 2 })()`, "2"},
		{"async arrow", `async () => { const hits = await openclaw.tools.search("fake plugin tool", {limit: 1}); return hits.length }`, "1"},
		{"async function main", "async function main() {\n  return 'main'\n}", `"main"`},
		{"anonymous function", `function () { return 3 }`, "3"},
		{"export default", `export default async () => 4`, "4"},
		{"typescript", "interface Hit { id: string }\nconst hits: Hit[] = await openclaw.tools.search(\"fake plugin tool\", {limit: 1})\nhits.length as number", "1"},
		{"typescript call", "const r = await openclaw.tools.call<{result: {isError?: boolean}}>(\"fake_plugin_tool_01\", {marker: \"m\"})\nreturn r.result.isError ?? false", "false"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, cr := runCode(t, run, fmt.Sprint("f", i), tc.code)
			require.True(t, cr.OK, "%+v", cr.Error)
			assert.JSONEq(t, tc.want, string(cr.Value))
		})
	}
}

// TypeScript's errors point into the code as the model wrote it.
func TestCodeModeTypeScriptErrorLine(t *testing.T) {
	rt := newRuntime(t, runtime.ModeCode, nil)
	run := startRun(t, rt, runtime.RunRequest{Tools: fakePlugin(1)})
	_, cr := runCode(t, run, "e", "type T = {a: number}\nconst t: T = {a: 1}\n\nthrow new Error('line ' + t.a)")
	require.False(t, cr.OK)
	assert.Equal(t, "exception", cr.Error.Kind)
	assert.Equal(t, 4, cr.Error.Line)
	_, cr = runCode(t, run, "s", "const t: number = 1\nconst u: = 2")
	require.False(t, cr.OK)
	assert.Equal(t, "syntax", cr.Error.Kind)
	assert.Equal(t, 2, cr.Error.Line)
}

func TestCodeModeCancelledTurn(t *testing.T) {
	rt := newRuntime(t, runtime.ModeCode, nil)
	run := startRun(t, rt, runtime.RunRequest{Tools: fakePlugin(1)})
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	_, err := run.Execute(ctx, runtime.ToolCall{ID: "1", Name: runtime.ToolSearchCodeName, Arguments: json.RawMessage(`{"code":"while(true){}"}`)})
	assert.ErrorIs(t, err, context.DeadlineExceeded)
}

// Nothing one tool_search_code run defines is visible to the next.
func TestCodeModeRunsAreIsolated(t *testing.T) {
	rt := newRuntime(t, runtime.ModeCode, nil)
	run := startRun(t, rt, runtime.RunRequest{Tools: fakePlugin(1)})
	_, cr := runCode(t, run, "a", `globalThis.leak = 42; return 1`)
	require.True(t, cr.OK)
	_, cr = runCode(t, run, "b", `return typeof globalThis.leak`)
	assert.JSONEq(t, `"undefined"`, string(cr.Value))
}
