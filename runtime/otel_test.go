package runtime_test

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/codes"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	oteltrace "go.opentelemetry.io/otel/trace"

	"github.com/toolsearch/toolsearch/catalog"
	"github.com/toolsearch/toolsearch/runtime"
)

// traced is a runtime whose spans and metrics go to memory.
type traced struct {
	spans   *tracetest.InMemoryExporter
	metrics *sdkmetric.ManualReader
	logs    *memoryLog
	rt      *runtime.Runtime
}

func newTraced(t *testing.T, mode runtime.Mode, opts *runtime.Options) *traced {
	t.Helper()
	tr := &traced{spans: tracetest.NewInMemoryExporter(), metrics: sdkmetric.NewManualReader(), logs: newMemoryLog()}
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(tr.spans))
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(tr.metrics))
	t.Cleanup(func() {
		require.NoError(t, tp.Shutdown(context.Background()))
		require.NoError(t, mp.Shutdown(context.Background()))
	})
	var o runtime.Options
	if opts != nil {
		o = *opts
	}
	o.TracerProvider, o.MeterProvider, o.SessionLog = tp, mp, tr.logs
	tr.rt = newRuntime(t, mode, &o)
	return tr
}

// spanTree renders the ended spans as an indented tree of names, children in start order: what a trace viewer
// shows, and what the tests compare.
func spanTree(spans tracetest.SpanStubs) string {
	children := map[oteltrace.SpanID][]tracetest.SpanStub{}
	ids := map[oteltrace.SpanID]bool{}
	for _, s := range spans {
		ids[s.SpanContext.SpanID()] = true
	}
	var roots []tracetest.SpanStub
	for _, s := range spans {
		if p := s.Parent.SpanID(); s.Parent.IsValid() && ids[p] {
			children[p] = append(children[p], s)
		} else {
			roots = append(roots, s)
		}
	}
	var b strings.Builder
	var walk func(ss []tracetest.SpanStub, depth int)
	walk = func(ss []tracetest.SpanStub, depth int) {
		sort.SliceStable(ss, func(i, j int) bool { return ss[i].StartTime.Before(ss[j].StartTime) })
		for _, s := range ss {
			fmt.Fprintf(&b, "%s%s\n", strings.Repeat("  ", depth), s.Name)
			walk(children[s.SpanContext.SpanID()], depth+1)
		}
	}
	walk(roots, 0)
	return b.String()
}

func attrs(s tracetest.SpanStub) map[string]any {
	out := map[string]any{}
	for _, kv := range s.Attributes {
		out[string(kv.Key)] = kv.Value.AsInterface()
	}
	return out
}

func spanNamed(t *testing.T, spans tracetest.SpanStubs, name string) tracetest.SpanStub {
	t.Helper()
	for _, s := range spans {
		if s.Name == name {
			return s
		}
	}
	require.Failf(t, "no span", "no span named %q in\n%s", name, spanTree(spans))
	return tracetest.SpanStub{}
}

func TestTraceToolsModeCall(t *testing.T) {
	tr := newTraced(t, runtime.ModeTools, nil)
	run := startRun(t, tr.rt, runtime.RunRequest{SessionID: "s1", RunID: "r1", Tools: mixedTools()})
	res := execute(t, run, "call-1", runtime.ToolCallName,
		map[string]any{"id": "openclaw:core:web_search", "args": map[string]string{"marker": "m"}})
	require.False(t, res.IsError, res.Content)
	require.NoError(t, run.Close())

	spans := tr.spans.GetSpans()
	assert.Equal(t, `toolsearch.run
  execute_tool tool_call
    toolsearch.call openclaw:core:web_search
      toolsearch.policy
      toolsearch.approval
      toolsearch.tool
`, spanTree(spans))

	model := attrs(spanNamed(t, spans, "execute_tool tool_call"))
	assert.Equal(t, "execute_tool", model["gen_ai.operation.name"])
	assert.Equal(t, "tool_call", model["gen_ai.tool.name"])
	assert.Equal(t, "call-1", model["gen_ai.tool.call.id"])
	assert.Equal(t, "tools", model["toolsearch.mode"])
	assert.Equal(t, int64(4), model["toolsearch.catalog.size"])
	assert.Equal(t, int64(len(res.Content)), model["toolsearch.result.bytes"])
	assert.Equal(t, "ok", model["toolsearch.outcome"])
	assert.NotContains(t, model, "gen_ai.tool.call.arguments", "arguments stay out unless TraceContent is set")

	call := spanNamed(t, spans, "toolsearch.call openclaw:core:web_search")
	ca := attrs(call)
	assert.Equal(t, "web_search", ca["gen_ai.tool.name"])
	assert.Equal(t, "openclaw:core:web_search", ca["toolsearch.tool.id"])
	assert.Equal(t, "core", ca["toolsearch.tool.source_name"])
	assert.Equal(t, "tool_call", ca["toolsearch.via"])
	assert.Equal(t, "call-1", ca["toolsearch.parent_call.id"])
	assert.Equal(t, "allow", ca["toolsearch.policy.decision"])
	assert.True(t, strings.HasPrefix(ca["gen_ai.tool.call.id"].(string), "tool_search_code:call-1:web_search:"))
	assert.Equal(t, codes.Unset, call.Status.Code)

	runSpan := attrs(spanNamed(t, spans, "toolsearch.run"))
	assert.Equal(t, "s1", runSpan["toolsearch.session.id"])
	assert.Equal(t, int64(1), runSpan["toolsearch.calls"])

	// The session log's call record names the call's span, and the span names the call: each leads to the other.
	var found bool
	for _, rec := range tr.logs.get("s1") {
		if rec.Type == runtime.RecordCall {
			found = true
			assert.Equal(t, call.SpanContext.TraceID().String(), rec.TraceID)
			assert.Equal(t, call.SpanContext.SpanID().String(), rec.SpanID)
			assert.Equal(t, ca["gen_ai.tool.call.id"], rec.Call.CallID)
		}
		assert.NotEmpty(t, rec.TraceID, "record %s", rec.Type)
	}
	assert.True(t, found)

	// Metrics: the call, per tool and server, with its outcome and latency.
	var rm metricdata.ResourceMetrics
	require.NoError(t, tr.metrics.Collect(context.Background(), &rm))
	calls := sumOf(t, rm, runtime.MetricToolCalls)
	require.Len(t, calls.DataPoints, 1)
	dp := calls.DataPoints[0]
	assert.Equal(t, int64(1), dp.Value)
	tool, _ := dp.Attributes.Value("toolsearch.tool.id")
	outcome, _ := dp.Attributes.Value("toolsearch.outcome")
	assert.Equal(t, "openclaw:core:web_search", tool.AsString())
	assert.Equal(t, "ok", outcome.AsString())
	require.NotNil(t, metricNamed(rm, runtime.MetricToolDuration))
	require.NotNil(t, metricNamed(rm, runtime.MetricModelCalls))
}

func TestTraceParentFromContext(t *testing.T) {
	tr := newTraced(t, runtime.ModeTools, nil)
	run := startRun(t, tr.rt, runtime.RunRequest{SessionID: "s1", Tools: mixedTools()})
	parent := oteltrace.NewSpanContext(oteltrace.SpanContextConfig{TraceID: oteltrace.TraceID{1, 2, 3}, SpanID: oteltrace.SpanID{4, 5},
		TraceFlags: oteltrace.FlagsSampled, Remote: true})
	ctx := oteltrace.ContextWithRemoteSpanContext(context.Background(), parent)
	args, _ := json.Marshal(map[string]any{"query": "web"})
	_, err := run.Execute(ctx, runtime.ToolCall{ID: "c1", Name: runtime.ToolSearchName, Arguments: args})
	require.NoError(t, err)

	model := spanNamed(t, tr.spans.GetSpans(), "execute_tool tool_search")
	assert.Equal(t, parent.TraceID(), model.SpanContext.TraceID(), "the caller's span is the parent")
	assert.Equal(t, parent.SpanID(), model.Parent.SpanID())
	search := spanNamed(t, tr.spans.GetSpans(), "toolsearch.search")
	sa := attrs(search)
	assert.Equal(t, model.SpanContext.SpanID(), search.Parent.SpanID())
	assert.Equal(t, int64(1), sa["toolsearch.search.queries"])
	assert.Positive(t, sa["toolsearch.search.hits"])
	assert.NotContains(t, sa, "toolsearch.search.query")
}

func TestTraceCodeModeScript(t *testing.T) {
	tr := newTraced(t, runtime.ModeCode, &runtime.Options{TraceContent: true})
	run := startRun(t, tr.rt, runtime.RunRequest{SessionID: "s1", Tools: mixedTools()})
	_, cr := runCode(t, run, "code-1", `
const hits = await openclaw.tools.search("read a file", {limit: 2});
const a = await openclaw.tools.call("openclaw:core:read_file", {marker: "one"});
const b = await openclaw.tools.call("openclaw:core:web_fetch", {marker: "two"});
return hits.length;`)
	require.True(t, cr.OK, "%+v", cr)

	spans := tr.spans.GetSpans()
	tree := spanTree(spans)
	assert.Equal(t, `execute_tool tool_search_code
  toolsearch.code
    toolsearch.search
    toolsearch.call openclaw:core:read_file
      toolsearch.policy
      toolsearch.approval
      toolsearch.tool
    toolsearch.call openclaw:core:web_fetch
      toolsearch.policy
      toolsearch.approval
      toolsearch.tool
`, tree, "the run's span ends when the run closes")
	code := attrs(spanNamed(t, spans, "toolsearch.code"))
	assert.Equal(t, "ok", code["toolsearch.outcome"])
	assert.Positive(t, code["toolsearch.code.fuel"])
	assert.Positive(t, code["toolsearch.code.memory_bytes"])
	assert.Equal(t, int64(3), code["toolsearch.code.calls"])

	read := attrs(spanNamed(t, spans, "toolsearch.call openclaw:core:read_file"))
	assert.Equal(t, "code", read["toolsearch.via"])
	assert.Equal(t, "code-1", read["toolsearch.parent_call.id"])
	assert.JSONEq(t, `{"marker":"one"}`, read["gen_ai.tool.call.arguments"].(string), "TraceContent records arguments")
	assert.Contains(t, read["gen_ai.tool.call.result"], "FAKE_PLUGIN_OK read_file")
	search := attrs(spanNamed(t, spans, "toolsearch.search"))
	assert.Equal(t, []string{"read a file"}, search["toolsearch.search.query"])
	assert.Equal(t, "code", search["toolsearch.via"])

	var rm metricdata.ResourceMetrics
	require.NoError(t, tr.metrics.Collect(context.Background(), &rm))
	runs := sumOf(t, rm, runtime.MetricCodeRuns)
	require.Len(t, runs.DataPoints, 1)
	ok, _ := runs.DataPoints[0].Attributes.Value("toolsearch.outcome")
	assert.Equal(t, "ok", ok.AsString())
	require.NotNil(t, metricNamed(rm, runtime.MetricCodeFuel))
	require.NotNil(t, metricNamed(rm, runtime.MetricSearchHits))
}

func TestTraceTimedOutScript(t *testing.T) {
	tr := newTraced(t, runtime.ModeCode, &runtime.Options{Config: runtime.Config{CodeTimeoutMs: runtime.MinCodeTimeoutMs}})
	run := startRun(t, tr.rt, runtime.RunRequest{SessionID: "s1", Tools: mixedTools()})
	_, cr := runCode(t, run, "code-1", `await openclaw.tools.search("web"); while (true) {}`)
	require.False(t, cr.OK)

	spans := tr.spans.GetSpans()
	assert.Equal(t, `execute_tool tool_search_code
  toolsearch.code
    toolsearch.search
`, spanTree(spans))
	code := spanNamed(t, spans, "toolsearch.code")
	ca := attrs(code)
	assert.Equal(t, "timeout", ca["toolsearch.code.limit"])
	assert.Equal(t, "timeout", ca["error.type"])
	assert.Equal(t, codes.Error, code.Status.Code)
	assert.Contains(t, code.Status.Description, "timed out")
	model := spanNamed(t, spans, "execute_tool tool_search_code")
	assert.Equal(t, codes.Error, model.Status.Code)
	assert.Equal(t, "error", attrs(model)["toolsearch.outcome"])
}

func TestTraceBlockedCall(t *testing.T) {
	approver := runtime.ApproverFunc(func(_ context.Context, inv *runtime.Invocation) (runtime.Decision, error) {
		return runtime.Decision{Allow: false, Reason: "not today", By: "test"}, nil
	})
	tr := newTraced(t, runtime.ModeTools, &runtime.Options{Approver: approver})
	run := startRun(t, tr.rt, runtime.RunRequest{SessionID: "s1", Tools: mixedTools()})
	run.SetPolicy(&catalog.Policy{Agent: catalog.Rule{Deny: []string{"create_issue"}}})

	res := execute(t, run, "c1", runtime.ToolCallName,
		map[string]any{"id": "mcp:github:create_issue", "args": map[string]string{"owner": "o", "repo": "r", "title": "t"}})
	require.True(t, res.Blocked, res.Content)
	res = execute(t, run, "c2", runtime.ToolCallName,
		map[string]any{"id": "openclaw:core:web_search", "args": map[string]string{"marker": "m"}})
	require.True(t, res.Blocked, res.Content)

	spans := tr.spans.GetSpans()
	assert.Equal(t, `execute_tool tool_call
  toolsearch.call mcp:github:create_issue
    toolsearch.policy
execute_tool tool_call
  toolsearch.call openclaw:core:web_search
    toolsearch.policy
    toolsearch.approval
`, spanTree(spans))

	denied := spanNamed(t, spans, "toolsearch.call mcp:github:create_issue")
	assert.Equal(t, "blocked", attrs(denied)["toolsearch.outcome"])
	assert.Equal(t, "deny", attrs(denied)["toolsearch.policy.decision"])
	assert.Equal(t, codes.Error, denied.Status.Code)
	assert.Contains(t, denied.Status.Description, "not allowed by policy")

	approval := spanNamed(t, spans, "toolsearch.approval")
	aa := attrs(approval)
	assert.Equal(t, "declined", aa["toolsearch.approval.decision"])
	assert.Equal(t, "test", aa["toolsearch.approval.by"])
	assert.Equal(t, codes.Error, approval.Status.Code)
	assert.Contains(t, approval.Status.Description, "not today")
	for _, s := range spans {
		if strings.HasPrefix(s.Name, "execute_tool") {
			assert.Equal(t, "blocked", attrs(s)["toolsearch.outcome"])
		}
	}

	var rm metricdata.ResourceMetrics
	require.NoError(t, tr.metrics.Collect(context.Background(), &rm))
	approvals := sumOf(t, rm, runtime.MetricApprovals)
	require.Len(t, approvals.DataPoints, 1)
	d, _ := approvals.DataPoints[0].Attributes.Value("toolsearch.approval.decision")
	assert.Equal(t, "declined", d.AsString())
	assert.NotNil(t, metricNamed(rm, runtime.MetricApprovalWait))
}

func TestTraceHooksAndOutputValidation(t *testing.T) {
	hook := runtime.BeforeToolCallFunc(func(context.Context, *runtime.Invocation) (runtime.HookResult, error) {
		return runtime.HookResult{}, nil
	})
	tr := newTraced(t, runtime.ModeTools, &runtime.Options{Hooks: []runtime.BeforeToolCallHook{hook}})
	tool := pluginTool("checked", "A tool with an output contract.")
	tool.OutputSchema = json.RawMessage(`{"type":"object","required":["status"]}`)
	run := startRun(t, tr.rt, runtime.RunRequest{SessionID: "s1", Tools: []catalog.Tool{tool}})
	res := execute(t, run, "c1", runtime.ToolCallName,
		map[string]any{"id": "openclaw:fake-plugin:checked", "args": map[string]string{"marker": "m"}})
	require.False(t, res.IsError, res.Content)
	spans := tr.spans.GetSpans()
	assert.Equal(t, `execute_tool tool_call
  toolsearch.call openclaw:fake-plugin:checked
    toolsearch.policy
    toolsearch.approval
    toolsearch.hook
    toolsearch.tool
    toolsearch.validate_output
`, spanTree(spans))
	assert.Equal(t, "passed", attrs(spanNamed(t, spans, "toolsearch.hook"))["toolsearch.outcome"])
}

// TestTraceUnsampledCallHasNoSteps: a call the sampler left out records nothing below it, and its session log
// records carry no ids.
func TestTraceUnsampledCallHasNoSteps(t *testing.T) {
	spans := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(spans), sdktrace.WithSampler(sdktrace.NeverSample()))
	t.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
	logs := newMemoryLog()
	rt := newRuntime(t, runtime.ModeTools, &runtime.Options{TracerProvider: tp, SessionLog: logs})
	run := startRun(t, rt, runtime.RunRequest{SessionID: "s1", Tools: mixedTools()})
	execute(t, run, "c1", runtime.ToolCallName, map[string]any{"id": "openclaw:core:web_search", "args": map[string]string{"marker": "m"}})
	require.NoError(t, run.Close())
	assert.Empty(t, spans.GetSpans())
	for _, rec := range logs.get("s1") {
		assert.Empty(t, rec.TraceID)
	}
}

func metricNamed(rm metricdata.ResourceMetrics, name string) *metricdata.Metrics {
	for _, sm := range rm.ScopeMetrics {
		for i := range sm.Metrics {
			if sm.Metrics[i].Name == name {
				return &sm.Metrics[i]
			}
		}
	}
	return nil
}

func sumOf(t *testing.T, rm metricdata.ResourceMetrics, name string) metricdata.Sum[int64] {
	t.Helper()
	m := metricNamed(rm, name)
	require.NotNil(t, m, "metric %s", name)
	sum, ok := m.Data.(metricdata.Sum[int64])
	require.True(t, ok, "%s is a %T", name, m.Data)
	return sum
}
