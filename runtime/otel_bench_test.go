package runtime_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"
	metricnoop "go.opentelemetry.io/otel/metric/noop"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	tracenoop "go.opentelemetry.io/otel/trace/noop"

	"github.com/toolsearch/toolsearch/runtime"
)

// benchToolsModeCall measures one tools-mode tool_call of an in-process tool through the whole pipeline: decode,
// resolve, policy, approval (none configured), hooks (none), validation, the tool, the envelope.
func benchToolsModeCall(b *testing.B, opts *runtime.Options) {
	var o runtime.Options
	if opts != nil {
		o = *opts
	}
	o.Config.Enabled, o.Config.Mode = true, runtime.ModeTools
	rt, err := runtime.New(context.Background(), &o)
	require.NoError(b, err)
	b.Cleanup(func() { _ = rt.Close(context.Background()) })
	run, err := rt.StartRun(context.Background(), runtime.RunRequest{SessionID: "bench", Tools: mixedTools()})
	require.NoError(b, err)
	b.Cleanup(func() { _ = run.Close() })
	args, _ := json.Marshal(map[string]any{"id": "openclaw:core:web_search", "args": map[string]string{"marker": "m"}})
	call := runtime.ToolCall{ID: "c1", Name: runtime.ToolCallName, Arguments: args}
	ctx := context.Background()
	res, err := run.Execute(ctx, call)
	require.NoError(b, err)
	require.False(b, res.IsError, res.Content)
	b.ReportAllocs()
	// CPU time as well as wall time: on a shared machine wall time mostly counts waiting for a core.
	cpu := processCPU()
	for b.Loop() {
		if _, err := run.Execute(ctx, call); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(processCPU()-cpu)/float64(b.N), "cpu-ns/op")
}

// BenchmarkToolsModeCall is a tools-mode call with telemetry as a library user who passes no providers has it:
// the global ones, whose no-op tracer allocates a context per span (150 allocs, 11960 B per call).
func BenchmarkToolsModeCall(b *testing.B) { benchToolsModeCall(b, nil) }

// BenchmarkToolsModeCallNoop is the call with the no-op providers the toolsearch command passes when no OTEL_*
// variable is set. Measured (10 runs of 20000 calls, interleaved with the same benchmark on the last commit
// without OpenTelemetry): 147 allocs and 11720 B per call, equal to the uninstrumented build's; median 23.9 µs
// (22.0 µs CPU) against 29.4 µs for the uninstrumented build, whose runs spread from 20 to 79 µs: timing on the
// loaded machine cannot resolve 2%, so BenchmarkTelemetrySitesOff measures the sites alone (median 67 ns, 0
// allocs: 0.3% of the call).
func BenchmarkToolsModeCallNoop(b *testing.B) {
	benchToolsModeCall(b, &runtime.Options{TracerProvider: tracenoop.NewTracerProvider(), MeterProvider: metricnoop.NewMeterProvider()})
}

// BenchmarkToolsModeCallTraced is the same call with an OpenTelemetry SDK that samples and records everything:
// spans (exported to nowhere, synchronously) and metrics (collected by a reader nobody reads): median 42.0 µs CPU,
// 209 allocs, 22698 B per call.
func BenchmarkToolsModeCallTraced(b *testing.B) {
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(tracetest.NewNoopExporter()))
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewManualReader()))
	b.Cleanup(func() {
		_ = tp.Shutdown(context.Background())
		_ = mp.Shutdown(context.Background())
	})
	benchToolsModeCall(b, &runtime.Options{TracerProvider: tp, MeterProvider: mp})
}
