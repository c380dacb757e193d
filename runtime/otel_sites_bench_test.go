package runtime

import (
	"context"
	"encoding/json"
	"testing"

	metricnoop "go.opentelemetry.io/otel/metric/noop"
	tracenoop "go.opentelemetry.io/otel/trace/noop"

	"github.com/toolsearch/toolsearch/catalog"
)

// BenchmarkTelemetrySitesOff runs, with the no-op providers, every telemetry site one tools-mode tool_call
// passes (the model call, the real call, its policy, approval, tool and output steps, their ends) and nothing
// else: what the instrumentation adds to a call when nothing is configured, small and steady enough to resolve
// on a loaded machine where the call itself (BenchmarkToolsModeCallNoop, about 20 µs) varies by ±40%.
func BenchmarkTelemetrySitesOff(b *testing.B) {
	rt, err := New(context.Background(), &Options{Config: Config{Enabled: true, Mode: ModeTools},
		TracerProvider: tracenoop.NewTracerProvider(), MeterProvider: metricnoop.NewMeterProvider()})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = rt.Close(context.Background()) })
	tool := catalog.Tool{Source: catalog.SourceOpenClaw, SourceName: "core", Name: "web_search",
		Parameters: json.RawMessage(`{"type":"object"}`)}
	run, err := rt.StartRun(context.Background(), RunRequest{SessionID: "bench", Tools: []catalog.Tool{tool}})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = run.Close() })
	call := ToolCall{ID: "c1", Name: ToolCallName}
	res := &CallResult{Content: "ok"}
	inv := &Invocation{CallID: "c1", Via: ViaToolCall}
	rec := &CallRecord{ToolID: tool.ID(), Source: tool.Source, SourceName: tool.SourceName, Via: ViaToolCall}
	result := &catalog.Result{}
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		mctx, mspan := run.startModelCall(ctx, call)
		cctx, cspan := run.startCall(mctx, &tool, inv)
		_, pspan := rt.tel.step(cctx, SpanPolicy, "")
		pspan.End()
		_, aspan := rt.tel.step(cctx, SpanApproval, "")
		endApproval(aspan, inv, "")
		_, tspan := rt.tel.step(cctx, SpanTool, "")
		endTool(tspan, result, nil)
		_, vspan := rt.tel.step(cctx, SpanValidateOutput, "")
		vspan.End()
		run.endCall(cctx, cspan, rec, nil)
		run.endModelCall(mctx, mspan, call, res, nil)
	}
}
