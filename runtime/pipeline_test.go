package runtime_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolsearch/toolsearch/catalog"
	"github.com/toolsearch/toolsearch/runtime"
)

// trace records the order in which the pipeline's stages ran.
type trace struct {
	mu    sync.Mutex
	steps []string
}

func (tr *trace) add(format string, args ...any) {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	tr.steps = append(tr.steps, fmt.Sprintf(format, args...))
}

func (tr *trace) get() []string {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	return append([]string(nil), tr.steps...)
}

func tracedTool(tr *trace, name, outputSchema string, details string) catalog.Tool {
	t := pluginTool(name, "traced")
	t.SourceName = "core"
	if outputSchema != "" {
		t.OutputSchema = json.RawMessage(outputSchema)
	}
	t.Handler = catalog.HandlerFunc(func(_ context.Context, args json.RawMessage) (*catalog.Result, error) {
		tr.add("tool %s", args)
		res := &catalog.Result{Content: []catalog.Content{{Type: "text", Text: "done"}}}
		if details != "" {
			res.Details = json.RawMessage(details)
		}
		return res, nil
	})
	return t
}

func TestPipelineOrder(t *testing.T) {
	tr := &trace{}
	var seen []runtime.Invocation
	var mu sync.Mutex
	approver := runtime.ApproverFunc(func(_ context.Context, inv *runtime.Invocation) (runtime.Decision, error) {
		tr.add("approve %s", inv.Arguments)
		mu.Lock()
		seen = append(seen, *inv)
		mu.Unlock()
		return runtime.Decision{Allow: true}, nil
	})
	rewrite := runtime.BeforeToolCallFunc(func(_ context.Context, inv *runtime.Invocation) (runtime.HookResult, error) {
		tr.add("hook1 %s", inv.Arguments)
		return runtime.HookResult{Arguments: json.RawMessage(`{"marker":"rewritten"}`)}, nil
	})
	observe := runtime.BeforeToolCallFunc(func(_ context.Context, inv *runtime.Invocation) (runtime.HookResult, error) {
		tr.add("hook2 %s", inv.Arguments)
		return runtime.HookResult{}, nil
	})
	rt := newRuntime(t, runtime.ModeTools, &runtime.Options{Approver: approver, Hooks: []runtime.BeforeToolCallHook{rewrite, observe}})
	run := startRun(t, rt, runtime.RunRequest{SessionID: "s1", RunID: "r1", AgentID: "a1",
		Tools: []catalog.Tool{tracedTool(tr, "traced", `{"type":"object","properties":{"ok":{"type":"boolean"}},"required":["ok"]}`, `{"ok":true}`)}})

	res := execute(t, run, "call_1", runtime.ToolCallName, map[string]any{"id": "traced", "args": map[string]string{"marker": "model"}})
	require.False(t, res.IsError, res.Content)
	assert.Equal(t, []string{
		`approve {"marker":"model"}`,
		`hook1 {"marker":"model"}`,
		`hook2 {"marker":"rewritten"}`,
		`tool {"marker":"rewritten"}`,
	}, tr.get())
	require.Len(t, seen, 1)
	inv := seen[0]
	assert.Equal(t, "s1", inv.SessionID)
	assert.Equal(t, "r1", inv.RunID)
	assert.Equal(t, "a1", inv.AgentID)
	assert.Equal(t, "tool_search_code:call_1:traced:1", inv.CallID)
	assert.Equal(t, "call_1", inv.ParentCallID)
	assert.Equal(t, runtime.ViaToolCall, inv.Via)
	assert.Equal(t, "openclaw:core:traced", inv.Tool.ID())
	assert.JSONEq(t, `{"marker":"rewritten"}`, string(res.Hidden[0].Arguments), "the transcript shows what the tool got")
}

func TestApprovalBlocks(t *testing.T) {
	tests := []struct {
		name     string
		approver runtime.ApproverFunc
		want     string
	}{
		{"denied", func(context.Context, *runtime.Invocation) (runtime.Decision, error) {
			return runtime.Decision{Reason: "needs a human."}, nil
		}, "Tool call blocked: needs a human."},
		{"denied without reason", func(context.Context, *runtime.Invocation) (runtime.Decision, error) {
			return runtime.Decision{}, nil
		}, "Tool call blocked: approval denied."},
		{"error", func(context.Context, *runtime.Invocation) (runtime.Decision, error) {
			return runtime.Decision{Allow: true}, errors.New("approval service down")
		}, "Tool call blocked: approval of openclaw:core:traced failed: approval service down"},
		{"panic", func(context.Context, *runtime.Invocation) (runtime.Decision, error) {
			panic("approver bug")
		}, "Tool call blocked: approval of openclaw:core:traced failed: panic: approver bug"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tr := &trace{}
			rt := newRuntime(t, runtime.ModeOff, &runtime.Options{Approver: tt.approver})
			run := startRun(t, rt, runtime.RunRequest{Tools: []catalog.Tool{tracedTool(tr, "traced", "", "")}})
			res := execute(t, run, "1", "traced", map[string]string{"marker": "x"})
			assert.True(t, res.IsError)
			assert.True(t, res.Blocked)
			assert.Equal(t, tt.want, res.Content)
			assert.Empty(t, tr.get(), "the tool never ran")
			tel := run.Telemetry()
			require.Len(t, tel.Calls, 1)
			assert.True(t, tel.Calls[0].Blocked)
		})
	}
}

func TestHooksBlock(t *testing.T) {
	tests := []struct {
		name string
		hook runtime.BeforeToolCallFunc
		want string
	}{
		{"block", func(context.Context, *runtime.Invocation) (runtime.HookResult, error) {
			return runtime.HookResult{Block: true, Reason: "not during the freeze"}, nil
		}, "Tool call blocked: not during the freeze."},
		{"error", func(context.Context, *runtime.Invocation) (runtime.HookResult, error) {
			return runtime.HookResult{}, errors.New("hook store unreachable")
		}, "Tool call blocked: before_tool_call hook 1 failed: hook store unreachable"},
		{"panic", func(context.Context, *runtime.Invocation) (runtime.HookResult, error) {
			panic("hook bug")
		}, "Tool call blocked: before_tool_call hook 1 failed: panic: hook bug"},
		{"bad rewrite", func(context.Context, *runtime.Invocation) (runtime.HookResult, error) {
			return runtime.HookResult{Arguments: json.RawMessage(`{not json`)}, nil
		}, "Tool call blocked: before_tool_call hook 1 returned arguments that are not valid JSON."},
	}
	allow := runtime.BeforeToolCallFunc(func(context.Context, *runtime.Invocation) (runtime.HookResult, error) {
		return runtime.HookResult{}, nil
	})
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tr := &trace{}
			rt := newRuntime(t, runtime.ModeOff, &runtime.Options{Hooks: []runtime.BeforeToolCallHook{allow, tt.hook}})
			run := startRun(t, rt, runtime.RunRequest{Tools: []catalog.Tool{tracedTool(tr, "traced", "", "")}})
			res := execute(t, run, "1", "traced", map[string]string{"marker": "x"})
			assert.True(t, res.IsError)
			assert.True(t, res.Blocked)
			assert.Equal(t, tt.want, res.Content)
			assert.Empty(t, tr.get(), "the tool never ran")
		})
	}
}

// Rewritten arguments are validated like the model's own.
func TestHookRewriteIsValidated(t *testing.T) {
	tr := &trace{}
	drop := runtime.BeforeToolCallFunc(func(context.Context, *runtime.Invocation) (runtime.HookResult, error) {
		return runtime.HookResult{Arguments: json.RawMessage(`{}`)}, nil
	})
	rt := newRuntime(t, runtime.ModeOff, &runtime.Options{Hooks: []runtime.BeforeToolCallHook{drop}})
	run := startRun(t, rt, runtime.RunRequest{Tools: []catalog.Tool{tracedTool(tr, "traced", "", "")}})
	res := execute(t, run, "1", "traced", map[string]string{"marker": "x"})
	assert.True(t, res.IsError)
	assert.False(t, res.Blocked)
	assert.Contains(t, res.Content, `missing required property "marker" (string); given no properties`)
	assert.Empty(t, tr.get())
}

func TestToolFailuresBecomeResults(t *testing.T) {
	tests := []struct {
		name    string
		handler catalog.HandlerFunc
		want    string
	}{
		{"panic", func(context.Context, json.RawMessage) (*catalog.Result, error) { panic("nil map") },
			`Tool "openclaw:core:boom" failed: panic: nil map`},
		{"error", func(context.Context, json.RawMessage) (*catalog.Result, error) {
			return nil, errors.New("connection reset")
		}, `Tool "openclaw:core:boom" failed: connection reset`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			logger, buf := newLogger()
			rt := newRuntime(t, runtime.ModeOff, &runtime.Options{Logger: logger})
			tool := catalog.Tool{Source: catalog.SourceOpenClaw, SourceName: "core", Name: "boom", Handler: tt.handler}
			run := startRun(t, rt, runtime.RunRequest{Tools: []catalog.Tool{tool}})
			res := execute(t, run, "1", "boom", nil)
			assert.True(t, res.IsError)
			assert.False(t, res.Blocked)
			assert.Equal(t, tt.want, res.Content)
			if tt.name == "panic" {
				assert.Contains(t, buf.String(), "tool panicked")
			}
		})
	}
	// A nil result with no error is an empty result, not a crash.
	rt := newRuntime(t, runtime.ModeOff, nil)
	empty := catalog.Tool{Source: catalog.SourceOpenClaw, SourceName: "core", Name: "quiet",
		Handler: catalog.HandlerFunc(func(context.Context, json.RawMessage) (*catalog.Result, error) { return nil, nil })}
	run := startRun(t, rt, runtime.RunRequest{Tools: []catalog.Tool{empty}})
	res := execute(t, run, "1", "quiet", nil)
	assert.False(t, res.IsError)
	assert.Equal(t, "(no output)", res.Content)
}

func TestInputValidation(t *testing.T) {
	tr := &trace{}
	rt := newRuntime(t, runtime.ModeOff, nil)
	run := startRun(t, rt, runtime.RunRequest{Tools: []catalog.Tool{tracedTool(tr, "traced", "", "")}})
	tests := []struct {
		args string
		want string
	}{
		{`{}`, `at /: missing required property "marker" (string); given no properties. Expected input: { marker: string }`},
		{`{"msg": "x"}`, `at /: missing required property "marker" (string); given property "msg"; ` +
			`at /: unexpected property "msg" (the schema allows no others). Expected input: { marker: string }`},
		{`{"marker": 3}`, `at /marker: expected string, given 3 (number). Expected input: { marker: string }`},
		{`{"marker": "x", "extra": 1}`, `at /: unexpected property "extra" (the schema allows no others). Expected input: { marker: string }`},
		{`[1]`, `expected a JSON object of arguments, not an array.`},
		{`{"marker":`, `not valid JSON.`},
	}
	for _, tt := range tests {
		res, err := run.Execute(context.Background(), runtime.ToolCall{ID: "1", Name: "traced", Arguments: json.RawMessage(tt.args)})
		require.NoError(t, err)
		assert.True(t, res.IsError, tt.args)
		assert.Equal(t, "Invalid arguments for openclaw:core:traced: "+tt.want, res.Content, tt.args)
	}
	assert.Empty(t, tr.get(), "invalid arguments never reach the tool")

	// Absent arguments are {}; a tool without parameters accepts them.
	bare := catalog.Tool{Source: catalog.SourceOpenClaw, SourceName: "core", Name: "bare", Handler: okHandler("bare")}
	run = startRun(t, rt, runtime.RunRequest{SessionID: "bare", Tools: []catalog.Tool{bare}})
	for _, args := range []string{``, `null`, `{}`} {
		res, err := run.Execute(context.Background(), runtime.ToolCall{ID: "1", Name: "bare", Arguments: json.RawMessage(args)})
		require.NoError(t, err)
		assert.False(t, res.IsError, "%q: %s", args, res.Content)
	}
}

func TestOutputContract(t *testing.T) {
	const closed = `{"type":"object","properties":{"status":{"type":"string"}},"required":["status"],"additionalProperties":false}`
	tests := []struct {
		name, schema, details string
		want                  string // "" means success
		toolRuns              bool
	}{
		{"matches", closed, `{"status":"ok"}`, "", true},
		{"mismatch", closed, `{"status":1}`, `Tool "openclaw:core:traced" returned details that do not match its declared outputSchema.`, true},
		{"missing details", closed, ``, `Tool "openclaw:core:traced" returned details that do not match its declared outputSchema.`, true},
		{"invalid schema", `{"type":"objekt"}`, `{"status":"ok"}`, `Tool "openclaw:core:traced" has an invalid outputSchema.`, false},
		{"not JSON", `{"type":`, `{"status":"ok"}`, `Tool "openclaw:core:traced" has an invalid outputSchema.`, false},
		{"remote ref", `{"$ref":"https://example.com/schema.json"}`, `{}`, `Tool "openclaw:core:traced" has an invalid outputSchema.`, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tr := &trace{}
			for _, mode := range []runtime.Mode{runtime.ModeOff, runtime.ModeTools} {
				rt := newRuntime(t, mode, nil)
				run := startRun(t, rt, runtime.RunRequest{Tools: []catalog.Tool{tracedTool(tr, "traced", tt.schema, tt.details)}})
				var res *runtime.CallResult
				if mode == runtime.ModeOff {
					res = execute(t, run, "1", "traced", map[string]string{"marker": "x"})
				} else {
					res = execute(t, run, "1", runtime.ToolCallName, map[string]any{"id": "traced", "args": map[string]string{"marker": "x"}})
				}
				if tt.want == "" {
					assert.False(t, res.IsError, res.Content)
				} else {
					assert.True(t, res.IsError)
					assert.Equal(t, tt.want, res.Content)
				}
			}
			assert.Equal(t, tt.toolRuns, len(tr.get()) > 0, "the contract is compiled before the tool runs")
		})
	}
	// A tool's own error result is not held to its output contract.
	failing := catalog.Tool{Source: catalog.SourceOpenClaw, SourceName: "core", Name: "failing", OutputSchema: json.RawMessage(closed),
		Handler: catalog.HandlerFunc(func(context.Context, json.RawMessage) (*catalog.Result, error) {
			return &catalog.Result{Content: []catalog.Content{{Type: "text", Text: "no such file"}}, IsError: true}, nil
		})}
	rt := newRuntime(t, runtime.ModeOff, nil)
	run := startRun(t, rt, runtime.RunRequest{Tools: []catalog.Tool{failing}})
	res := execute(t, run, "1", "failing", nil)
	assert.True(t, res.IsError)
	assert.Equal(t, "no such file", res.Content)
}

// Compiling an untrusted schema never reads a file or the network.
func TestSchemaLoaderRefusesFilesAndNetwork(t *testing.T) {
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		hits.Add(1)
		w.Write([]byte(`{"type":"object"}`))
	}))
	defer srv.Close()
	local := filepath.Join(t.TempDir(), "schema.json")
	require.NoError(t, os.WriteFile(local, []byte(`{"type":"object"}`), 0o600))

	for _, ref := range []string{srv.URL + "/schema.json", "file://" + local, local, "other.json"} {
		tr := &trace{}
		tool := tracedTool(tr, "traced", "", "")
		tool.Source, tool.SourceName = catalog.SourceMCP, "evil"
		tool.Parameters = json.RawMessage(fmt.Sprintf(`{"$ref":%q}`, ref))
		rt := newRuntime(t, runtime.ModeOff, nil)
		run := startRun(t, rt, runtime.RunRequest{Tools: []catalog.Tool{tool}})
		res := execute(t, run, "1", "traced", map[string]string{"marker": "x"})
		assert.True(t, res.IsError, ref)
		assert.Equal(t, `Tool "mcp:evil:traced" has an invalid input schema.`, res.Content, ref)
		assert.Empty(t, tr.get())
	}
	assert.Zero(t, hits.Load(), "no request reached the server")

	// Local references inside the schema work.
	tool := pluginTool("defs", "uses $defs")
	tool.Parameters = json.RawMessage(`{"$ref":"#/$defs/args","$defs":{"args":{"type":"object","required":["marker"]}}}`)
	rt := newRuntime(t, runtime.ModeOff, nil)
	run := startRun(t, rt, runtime.RunRequest{Tools: []catalog.Tool{tool}})
	assert.True(t, execute(t, run, "1", "defs", map[string]any{}).IsError)
	assert.False(t, execute(t, run, "2", "defs", map[string]any{"marker": "x"}).IsError)
}

// Compiled schemas are cached per tool and schema: a second call compiles nothing, a changed schema under the
// same id gets its own entry and its own contract.
func TestSchemaCache(t *testing.T) {
	rt := newRuntime(t, runtime.ModeOff, nil)
	tool := pluginTool("cached", "x")
	run := startRun(t, rt, runtime.RunRequest{SessionID: "a", Tools: []catalog.Tool{tool}})
	execute(t, run, "1", "cached", map[string]string{"marker": "x"})
	n := rt.SchemaCacheLen()
	execute(t, run, "2", "cached", map[string]string{"marker": "y"})
	assert.Equal(t, n, rt.SchemaCacheLen())

	tool.Parameters = json.RawMessage(`{"type":"object","properties":{"marker":{"type":"integer"}}}`)
	run2 := startRun(t, rt, runtime.RunRequest{SessionID: "b", Tools: []catalog.Tool{tool}})
	res := execute(t, run2, "3", "cached", map[string]string{"marker": "x"})
	assert.True(t, res.IsError, "the new schema applies")
	assert.Equal(t, n+1, rt.SchemaCacheLen())
}

// TestFailClosed: every way a call can be refused stays refused, one rule per row.
func TestFailClosed(t *testing.T) {
	t.Run("a denied tool is never returned by search and cannot be called", func(t *testing.T) {
		policy := &catalog.Policy{Session: catalog.Rule{Deny: []string{"mcp:github:*"}}}
		rt := newRuntime(t, runtime.ModeTools, &runtime.Options{Policy: policy})
		run := startRun(t, rt, runtime.RunRequest{Tools: mixedTools()})
		res := execute(t, run, "1", runtime.ToolSearchName, map[string]string{"query": "create_issue github"})
		assert.NotContains(t, res.Content, "create_issue")
		res = execute(t, run, "2", runtime.ToolCallName, map[string]any{"id": "mcp:github:create_issue", "args": map[string]string{}})
		assert.True(t, res.IsError)
		assert.Contains(t, res.Content, "Unknown tool id: mcp:github:create_issue")
		res = execute(t, run, "3", runtime.ToolDescribeName, map[string]any{"id": "create_issue"})
		assert.True(t, res.IsError)
	})
	t.Run("a tool denied after it was found cannot be called", func(t *testing.T) {
		rt := newRuntime(t, runtime.ModeTools, nil)
		run := startRun(t, rt, runtime.RunRequest{Tools: fakePlugin(3)})
		res := execute(t, run, "1", runtime.ToolSearchName, map[string]string{"query": "fake_plugin_tool_02"})
		assert.Contains(t, res.Content, "fake_plugin_tool_02")

		rt.SetPolicy(&catalog.Policy{Agent: catalog.Rule{Deny: []string{"fake_plugin_tool_02"}}})
		res = execute(t, run, "2", runtime.ToolCallName, map[string]any{"id": "fake_plugin_tool_02", "args": map[string]string{"marker": "x"}})
		assert.True(t, res.IsError)
		assert.True(t, res.Blocked)
		assert.Equal(t, "Tool call blocked: openclaw:fake-plugin:fake_plugin_tool_02 is not allowed by policy.", res.Content)
		res = execute(t, run, "3", runtime.ToolSearchName, map[string]string{"query": "fake_plugin_tool_02"})
		assert.NotContains(t, res.Content, `"fake_plugin_tool_02"`, "no longer returned by search")
		res = execute(t, run, "4", runtime.ToolDescribeName, map[string]string{"id": "fake_plugin_tool_02"})
		assert.True(t, res.IsError)

		// A run's own policy can change too.
		run.SetPolicy(&catalog.Policy{Agent: catalog.Rule{Deny: []string{"fake_plugin_tool_03"}}})
		assert.False(t, execute(t, run, "5", runtime.ToolCallName, map[string]any{"id": "fake_plugin_tool_02", "args": map[string]string{"marker": "x"}}).IsError)
		assert.True(t, execute(t, run, "6", runtime.ToolCallName, map[string]any{"id": "fake_plugin_tool_03", "args": map[string]string{"marker": "x"}}).Blocked)
	})
	t.Run("a tool that became unavailable makes the call fail", func(t *testing.T) {
		down := &flakyServer{}
		tool := catalog.Tool{Source: catalog.SourceMCP, SourceName: "github", Name: "create_issue", Handler: down}
		orphan := catalog.Tool{Source: catalog.SourceClient, SourceName: "client", Name: "pick_file"}
		rt := newRuntime(t, runtime.ModeTools, nil)
		run := startRun(t, rt, runtime.RunRequest{Tools: []catalog.Tool{tool, orphan}})
		assert.False(t, execute(t, run, "1", runtime.ToolCallName, map[string]any{"id": "create_issue"}).IsError)
		down.down.Store(true)
		res := execute(t, run, "2", runtime.ToolCallName, map[string]any{"id": "create_issue"})
		assert.True(t, res.IsError)
		assert.Equal(t, `Tool "mcp:github:create_issue" is unavailable: MCP server github crashed`, res.Content)
		res = execute(t, run, "3", runtime.ToolCallName, map[string]any{"id": "pick_file"})
		assert.Equal(t, `Tool "client:client:pick_file" is unavailable: it has no handler in this process.`, res.Content)
		assert.EqualValues(t, 1, down.calls.Load(), "an unavailable tool is not called")
	})
	t.Run("a block is reported in the result, never bypassed", func(t *testing.T) {
		tr := &trace{}
		deny := runtime.ApproverFunc(func(context.Context, *runtime.Invocation) (runtime.Decision, error) {
			return runtime.Decision{Reason: "denied by operator"}, nil
		})
		for _, mode := range []runtime.Mode{runtime.ModeOff, runtime.ModeTools, runtime.ModeDirectory, runtime.ModeCode} {
			rt := newRuntime(t, mode, &runtime.Options{Approver: deny})
			run := startRun(t, rt, runtime.RunRequest{Tools: []catalog.Tool{tracedTool(tr, "traced", "", "")}})
			var res *runtime.CallResult
			switch mode {
			case runtime.ModeOff, runtime.ModeDirectory: // direct, and hydrated by exact name
				res = execute(t, run, "1", "traced", map[string]string{"marker": "x"})
			case runtime.ModeTools:
				res = execute(t, run, "1", runtime.ToolCallName, map[string]any{"id": "traced", "args": map[string]string{"marker": "x"}})
			case runtime.ModeCode:
				// The block reaches the script as a rejection, and the transcript carries the pipeline's own
				// result for the hidden call: that result is what the assertions below check.
				codeRes, cr := runCode(t, run, "1", `try { await openclaw.tools.call("traced", {marker: "x"}); return "ran" } catch (e) { return e.message }`)
				assert.JSONEq(t, `"Tool call blocked: denied by operator."`, string(cr.Value))
				require.Len(t, codeRes.Hidden, 1, "the blocked call is in the transcript")
				res = &codeRes.Hidden[0].Result
				tel := run.Telemetry()
				require.Len(t, tel.Calls, 1)
				assert.True(t, tel.Calls[0].Blocked)
			}
			assert.True(t, res.Blocked, mode)
			assert.True(t, res.IsError, mode)
			assert.Equal(t, "Tool call blocked: denied by operator.", res.Content, mode)
		}
		assert.Empty(t, tr.get(), "no mode ran the tool")
	})
	t.Run("no sandbox means tools mode", TestCodeModeFallsBackToTools)
}

// flakyServer is a handler whose server can go down, like an MCP server that crashed.
type flakyServer struct {
	down  atomic.Bool
	calls atomic.Int32
}

func (f *flakyServer) Call(context.Context, json.RawMessage) (*catalog.Result, error) {
	f.calls.Add(1)
	return &catalog.Result{Content: []catalog.Content{{Type: "text", Text: "created"}}}, nil
}

func (f *flakyServer) Available() error {
	if f.down.Load() {
		return errors.New("MCP server github crashed")
	}
	return nil
}

func TestHandlerSeesCancellation(t *testing.T) {
	started := make(chan struct{})
	slow := catalog.Tool{Source: catalog.SourceOpenClaw, SourceName: "core", Name: "slow",
		Handler: catalog.HandlerFunc(func(ctx context.Context, _ json.RawMessage) (*catalog.Result, error) {
			close(started)
			<-ctx.Done()
			return nil, ctx.Err()
		})}
	rt := newRuntime(t, runtime.ModeOff, nil)
	run := startRun(t, rt, runtime.RunRequest{Tools: []catalog.Tool{slow}})
	ctx, cancel := context.WithCancel(context.Background())
	go func() { <-started; cancel() }()
	_, err := run.Execute(ctx, runtime.ToolCall{ID: "1", Name: "slow"})
	assert.ErrorIs(t, err, context.Canceled, "a cancelled turn is the caller's error, not a tool result")
}
