package otelsetup

import (
	"context"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/sdk/instrumentation"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
	collmetrics "go.opentelemetry.io/proto/otlp/collector/metrics/v1"
	colltrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	metricpb "go.opentelemetry.io/proto/otlp/metrics/v1"
	resourcepb "go.opentelemetry.io/proto/otlp/resource/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/encoding/prototext"
	"google.golang.org/protobuf/proto"
)

func str(v string) *commonpb.AnyValue {
	return &commonpb.AnyValue{Value: &commonpb.AnyValue_StringValue{StringValue: v}}
}

func kv(k string, v *commonpb.AnyValue) *commonpb.KeyValue {
	return &commonpb.KeyValue{Key: k, Value: v}
}

var (
	t0        = time.Unix(1_700_000_000, 123_456_789)
	traceID   = trace.TraceID{0x4b, 0xf9, 0x2f, 0x35, 0x77, 0xb3, 0x4d, 0xa6, 0xa3, 0xce, 0x92, 0x9d, 0x0e, 0x0e, 0x47, 0x36}
	spanID    = trace.SpanID{0, 0xf0, 0x67, 0xaa, 0x0b, 0xa9, 0x02, 0xb7}
	parentID  = trace.SpanID{1, 2, 3, 4, 5, 6, 7, 8}
	linkTrace = trace.TraceID{9: 1}
	linkSpan  = trace.SpanID{7: 2}
)

// Every attribute type, zero values included (a oneof member is written even when zero), and one value long
// enough that its length takes more than one byte, in every message that nests it.
func testAttributes() ([]attribute.KeyValue, []*commonpb.KeyValue) {
	long := strings.Repeat("x", 70_000)
	return []attribute.KeyValue{
			attribute.String("s", "text"), attribute.String("empty", ""), attribute.Bool("yes", true),
			attribute.Bool("no", false), attribute.Int64("n", -42), attribute.Int64("zero", 0),
			attribute.Float64("f", 2.5), attribute.StringSlice("ss", []string{"a", ""}),
			attribute.Int64Slice("is", []int64{1, -1}), attribute.Float64Slice("fs", []float64{0.5}),
			attribute.BoolSlice("bs", []bool{true, false}), attribute.StringSlice("none", []string{}),
			attribute.String("long", long),
		}, []*commonpb.KeyValue{
			kv("s", str("text")), kv("empty", str("")),
			kv("yes", &commonpb.AnyValue{Value: &commonpb.AnyValue_BoolValue{BoolValue: true}}),
			kv("no", &commonpb.AnyValue{Value: &commonpb.AnyValue_BoolValue{BoolValue: false}}),
			kv("n", &commonpb.AnyValue{Value: &commonpb.AnyValue_IntValue{IntValue: -42}}),
			kv("zero", &commonpb.AnyValue{Value: &commonpb.AnyValue_IntValue{IntValue: 0}}),
			kv("f", &commonpb.AnyValue{Value: &commonpb.AnyValue_DoubleValue{DoubleValue: 2.5}}),
			kv("ss", array(str("a"), str(""))),
			kv("is", array(&commonpb.AnyValue{Value: &commonpb.AnyValue_IntValue{IntValue: 1}},
				&commonpb.AnyValue{Value: &commonpb.AnyValue_IntValue{IntValue: -1}})),
			kv("fs", array(&commonpb.AnyValue{Value: &commonpb.AnyValue_DoubleValue{DoubleValue: 0.5}})),
			kv("bs", array(&commonpb.AnyValue{Value: &commonpb.AnyValue_BoolValue{BoolValue: true}},
				&commonpb.AnyValue{Value: &commonpb.AnyValue_BoolValue{BoolValue: false}})),
			kv("none", array()),
			kv("long", str(long)),
		}
}

func array(vs ...*commonpb.AnyValue) *commonpb.AnyValue {
	if vs == nil {
		vs = []*commonpb.AnyValue{}
	}
	return &commonpb.AnyValue{Value: &commonpb.AnyValue_ArrayValue{ArrayValue: &commonpb.ArrayValue{Values: vs}}}
}

func TestEncodeTracesDecodesAsOTLP(t *testing.T) {
	attrs, wantAttrs := testAttributes()
	res := resource.NewWithAttributes("https://opentelemetry.io/schemas/1.26.0", attribute.String("service.name", "svc"))
	ts, err := trace.ParseTraceState("vendor=x")
	require.NoError(t, err)
	scope := instrumentation.Scope{Name: "github.com/toolsearch/toolsearch/runtime", Version: "1", SchemaURL: "https://s"}
	stubs := tracetest.SpanStubs{
		{
			Name: "execute_tool tool_call",
			SpanContext: trace.NewSpanContext(trace.SpanContextConfig{TraceID: traceID, SpanID: spanID,
				TraceFlags: trace.FlagsSampled, TraceState: ts}),
			Parent: trace.NewSpanContext(trace.SpanContextConfig{TraceID: traceID, SpanID: parentID,
				TraceFlags: trace.FlagsSampled, Remote: true}),
			SpanKind: trace.SpanKindServer, StartTime: t0, EndTime: t0.Add(time.Millisecond),
			Attributes: attrs, DroppedAttributes: 3,
			Events: []sdktrace.Event{{Name: "toolsearch.repair", Time: t0.Add(time.Microsecond),
				Attributes: []attribute.KeyValue{attribute.String("kind", "id")}, DroppedAttributeCount: 1}},
			DroppedEvents: 4,
			Links: []sdktrace.Link{{SpanContext: trace.NewSpanContext(trace.SpanContextConfig{TraceID: linkTrace,
				SpanID: linkSpan}), Attributes: []attribute.KeyValue{attribute.Int("i", 1)}}},
			DroppedLinks: 5,
			Status:       sdktrace.Status{Code: codes.Error, Description: "blocked"},
			Resource:     res, InstrumentationScope: scope,
		},
		{
			Name: "toolsearch.policy",
			SpanContext: trace.NewSpanContext(trace.SpanContextConfig{TraceID: traceID, SpanID: parentID,
				TraceFlags: trace.FlagsSampled}),
			SpanKind: trace.SpanKindInternal, StartTime: t0, EndTime: t0,
			Status:   sdktrace.Status{Code: codes.Ok},
			Resource: res, InstrumentationScope: scope,
		},
		{
			Name:        "tools/call x",
			SpanContext: trace.NewSpanContext(trace.SpanContextConfig{TraceID: traceID, SpanID: linkSpan}),
			SpanKind:    trace.SpanKindClient, StartTime: t0, EndTime: t0,
			Resource: res, InstrumentationScope: instrumentation.Scope{Name: "upstream"},
		},
	}
	var got colltrace.ExportTraceServiceRequest
	require.NoError(t, proto.Unmarshal(encodeTraces(stubs.Snapshots()), &got))

	start, end := uint64(t0.UnixNano()), uint64(t0.Add(time.Millisecond).UnixNano())
	want := &colltrace.ExportTraceServiceRequest{ResourceSpans: []*tracepb.ResourceSpans{{
		Resource:  &resourcepb.Resource{Attributes: []*commonpb.KeyValue{kv("service.name", str("svc"))}},
		SchemaUrl: "https://opentelemetry.io/schemas/1.26.0",
		ScopeSpans: []*tracepb.ScopeSpans{
			{
				Scope:     &commonpb.InstrumentationScope{Name: "github.com/toolsearch/toolsearch/runtime", Version: "1"},
				SchemaUrl: "https://s",
				Spans: []*tracepb.Span{
					{
						TraceId: traceID[:], SpanId: spanID[:], TraceState: "vendor=x", ParentSpanId: parentID[:],
						Flags: 0x301, Name: "execute_tool tool_call", Kind: tracepb.Span_SPAN_KIND_SERVER,
						StartTimeUnixNano: start, EndTimeUnixNano: end, Attributes: wantAttrs, DroppedAttributesCount: 3,
						Events: []*tracepb.Span_Event{{TimeUnixNano: uint64(t0.Add(time.Microsecond).UnixNano()),
							Name: "toolsearch.repair", Attributes: []*commonpb.KeyValue{kv("kind", str("id"))},
							DroppedAttributesCount: 1}},
						DroppedEventsCount: 4,
						Links: []*tracepb.Span_Link{{TraceId: linkTrace[:], SpanId: linkSpan[:], Flags: 0x100,
							Attributes: []*commonpb.KeyValue{kv("i", &commonpb.AnyValue{Value: &commonpb.AnyValue_IntValue{IntValue: 1}})}}},
						DroppedLinksCount: 5,
						Status:            &tracepb.Status{Code: tracepb.Status_STATUS_CODE_ERROR, Message: "blocked"},
					},
					{
						TraceId: traceID[:], SpanId: parentID[:], Flags: 0x101, Name: "toolsearch.policy",
						Kind: tracepb.Span_SPAN_KIND_INTERNAL, StartTimeUnixNano: start, EndTimeUnixNano: start,
						Status: &tracepb.Status{Code: tracepb.Status_STATUS_CODE_OK},
					},
				},
			},
			{
				Scope: &commonpb.InstrumentationScope{Name: "upstream"},
				Spans: []*tracepb.Span{{TraceId: traceID[:], SpanId: linkSpan[:], Flags: 0x100, Name: "tools/call x",
					Kind: tracepb.Span_SPAN_KIND_CLIENT, StartTimeUnixNano: start, EndTimeUnixNano: start}},
			},
		},
	}}}
	if diff := cmpProto(want, &got); diff != "" {
		t.Fatalf("decoded request differs (-want +got):\n%s", diff)
	}
}

func TestEncodeMetricsDecodesAsOTLP(t *testing.T) {
	set := attribute.NewSet(attribute.String("toolsearch.outcome", "ok"))
	wantSet := []*commonpb.KeyValue{kv("toolsearch.outcome", str("ok"))}
	rm := &metricdata.ResourceMetrics{
		Resource: resource.NewSchemaless(attribute.String("service.name", "svc")),
		ScopeMetrics: []metricdata.ScopeMetrics{{
			Scope: instrumentation.Scope{Name: "runtime", Version: "2"},
			Metrics: []metricdata.Metrics{
				{Name: "calls", Description: "Calls.", Unit: "{call}", Data: metricdata.Sum[int64]{
					Temporality: metricdata.CumulativeTemporality, IsMonotonic: true,
					DataPoints: []metricdata.DataPoint[int64]{{Attributes: set, StartTime: t0, Time: t0.Add(time.Second), Value: -3,
						Exemplars: []metricdata.Exemplar[int64]{{Time: t0, Value: 7, SpanID: spanID[:], TraceID: traceID[:],
							FilteredAttributes: []attribute.KeyValue{attribute.String("f", "v")}}}}}}},
				{Name: "load", Data: metricdata.Sum[float64]{Temporality: metricdata.DeltaTemporality,
					DataPoints: []metricdata.DataPoint[float64]{{Time: t0, Value: 0}}}},
				{Name: "size", Data: metricdata.Gauge[int64]{DataPoints: []metricdata.DataPoint[int64]{{Time: t0, Value: 42}}}},
				{Name: "ratio", Data: metricdata.Gauge[float64]{DataPoints: []metricdata.DataPoint[float64]{{Time: t0, Value: 0.25}}}},
				{Name: "duration", Unit: "s", Data: metricdata.Histogram[float64]{Temporality: metricdata.CumulativeTemporality,
					DataPoints: []metricdata.HistogramDataPoint[float64]{{Attributes: set, StartTime: t0, Time: t0, Count: 3,
						Bounds: []float64{0.1, 1}, BucketCounts: []uint64{1, 1, 1}, Sum: 5.55,
						Min: metricdata.NewExtrema(0.05), Max: metricdata.NewExtrema(5.0),
						Exemplars: []metricdata.Exemplar[float64]{{Time: t0, Value: 0.5}}}}}},
				{Name: "hits", Data: metricdata.Histogram[int64]{Temporality: metricdata.DeltaTemporality,
					DataPoints: []metricdata.HistogramDataPoint[int64]{{Time: t0, Count: 0, Bounds: []float64{1},
						BucketCounts: []uint64{0, 0}}}}},
				{Name: "exp", Data: metricdata.ExponentialHistogram[float64]{Temporality: metricdata.DeltaTemporality,
					DataPoints: []metricdata.ExponentialHistogramDataPoint[float64]{{Time: t0, Count: 4, Sum: 10, Scale: -2,
						ZeroCount: 1, ZeroThreshold: 0.001, Min: metricdata.NewExtrema(0.0), Max: metricdata.NewExtrema(8.0),
						PositiveBucket: metricdata.ExponentialBucket{Offset: -3, Counts: []uint64{1, 200}},
						NegativeBucket: metricdata.ExponentialBucket{Offset: 0}}}}},
				{Name: "quantiles", Data: metricdata.Summary{DataPoints: []metricdata.SummaryDataPoint{{Time: t0, Count: 2,
					Sum: 3, QuantileValues: []metricdata.QuantileValue{{Quantile: 0.5, Value: 1}, {Quantile: 1, Value: 2}}}}}},
			},
		}},
	}
	var got collmetrics.ExportMetricsServiceRequest
	require.NoError(t, proto.Unmarshal(encodeMetrics(rm), &got))
	ns := func(tm time.Time) uint64 { return uint64(tm.UnixNano()) }
	f := func(v float64) *float64 { return &v }
	want := &collmetrics.ExportMetricsServiceRequest{ResourceMetrics: []*metricpb.ResourceMetrics{{
		Resource: &resourcepb.Resource{Attributes: []*commonpb.KeyValue{kv("service.name", str("svc"))}},
		ScopeMetrics: []*metricpb.ScopeMetrics{{
			Scope: &commonpb.InstrumentationScope{Name: "runtime", Version: "2"},
			Metrics: []*metricpb.Metric{
				{Name: "calls", Description: "Calls.", Unit: "{call}", Data: &metricpb.Metric_Sum{Sum: &metricpb.Sum{
					AggregationTemporality: metricpb.AggregationTemporality_AGGREGATION_TEMPORALITY_CUMULATIVE, IsMonotonic: true,
					DataPoints: []*metricpb.NumberDataPoint{{Attributes: wantSet, StartTimeUnixNano: ns(t0),
						TimeUnixNano: ns(t0.Add(time.Second)), Value: &metricpb.NumberDataPoint_AsInt{AsInt: -3},
						Exemplars: []*metricpb.Exemplar{{TimeUnixNano: ns(t0), Value: &metricpb.Exemplar_AsInt{AsInt: 7},
							SpanId: spanID[:], TraceId: traceID[:], FilteredAttributes: []*commonpb.KeyValue{kv("f", str("v"))}}}}}}}},
				{Name: "load", Data: &metricpb.Metric_Sum{Sum: &metricpb.Sum{
					AggregationTemporality: metricpb.AggregationTemporality_AGGREGATION_TEMPORALITY_DELTA,
					DataPoints:             []*metricpb.NumberDataPoint{{TimeUnixNano: ns(t0), Value: &metricpb.NumberDataPoint_AsDouble{AsDouble: 0}}}}}},
				{Name: "size", Data: &metricpb.Metric_Gauge{Gauge: &metricpb.Gauge{DataPoints: []*metricpb.NumberDataPoint{{
					TimeUnixNano: ns(t0), Value: &metricpb.NumberDataPoint_AsInt{AsInt: 42}}}}}},
				{Name: "ratio", Data: &metricpb.Metric_Gauge{Gauge: &metricpb.Gauge{DataPoints: []*metricpb.NumberDataPoint{{
					TimeUnixNano: ns(t0), Value: &metricpb.NumberDataPoint_AsDouble{AsDouble: 0.25}}}}}},
				{Name: "duration", Unit: "s", Data: &metricpb.Metric_Histogram{Histogram: &metricpb.Histogram{
					AggregationTemporality: metricpb.AggregationTemporality_AGGREGATION_TEMPORALITY_CUMULATIVE,
					DataPoints: []*metricpb.HistogramDataPoint{{Attributes: wantSet, StartTimeUnixNano: ns(t0), TimeUnixNano: ns(t0),
						Count: 3, Sum: f(5.55), BucketCounts: []uint64{1, 1, 1}, ExplicitBounds: []float64{0.1, 1},
						Min: f(0.05), Max: f(5), Exemplars: []*metricpb.Exemplar{{TimeUnixNano: ns(t0),
							Value: &metricpb.Exemplar_AsDouble{AsDouble: 0.5}}}}}}}},
				{Name: "hits", Data: &metricpb.Metric_Histogram{Histogram: &metricpb.Histogram{
					AggregationTemporality: metricpb.AggregationTemporality_AGGREGATION_TEMPORALITY_DELTA,
					DataPoints: []*metricpb.HistogramDataPoint{{TimeUnixNano: ns(t0), Sum: f(0), BucketCounts: []uint64{0, 0},
						ExplicitBounds: []float64{1}}}}}},
				{Name: "exp", Data: &metricpb.Metric_ExponentialHistogram{ExponentialHistogram: &metricpb.ExponentialHistogram{
					AggregationTemporality: metricpb.AggregationTemporality_AGGREGATION_TEMPORALITY_DELTA,
					DataPoints: []*metricpb.ExponentialHistogramDataPoint{{TimeUnixNano: ns(t0), Count: 4, Sum: f(10), Scale: -2,
						ZeroCount: 1, ZeroThreshold: 0.001, Min: f(0), Max: f(8),
						Positive: &metricpb.ExponentialHistogramDataPoint_Buckets{Offset: -3, BucketCounts: []uint64{1, 200}},
						Negative: &metricpb.ExponentialHistogramDataPoint_Buckets{}}}}}},
				{Name: "quantiles", Data: &metricpb.Metric_Summary{Summary: &metricpb.Summary{DataPoints: []*metricpb.SummaryDataPoint{{
					TimeUnixNano: ns(t0), Count: 2, Sum: 3, QuantileValues: []*metricpb.SummaryDataPoint_ValueAtQuantile{
						{Quantile: 0.5, Value: 1}, {Quantile: 1, Value: 2}}}}}}},
			},
		}},
	}}}
	if diff := cmpProto(want, &got); diff != "" {
		t.Fatalf("decoded request differs (-want +got):\n%s", diff)
	}
}

// The span exporter sends what the SDK's batch processor hands it, end to end through a tracer provider.
func TestSpanExporterThroughTheSDK(t *testing.T) {
	clearEnv(t)
	rc := &receiver{}
	srv := newReceiverServer(t, http.StripPrefix("/custom", rc))
	t.Setenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", srv+"/custom/v1/traces")
	c, err := newOTLPClient("TRACES", "/v1/traces", "test")
	require.NoError(t, err)
	assert.Equal(t, srv+"/custom/v1/traces", c.url, "a signal's own endpoint is used as it is")
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(&spanExporter{c}))
	_, span := tp.Tracer("t").Start(context.Background(), "one")
	span.End()
	require.NoError(t, tp.Shutdown(context.Background()))
	rc.mu.Lock()
	defer rc.mu.Unlock()
	assert.Equal(t, []string{"/v1/traces"}, rc.paths)
	require.Len(t, rc.traces, 1)
	assert.Equal(t, "one", rc.traces[0].ResourceSpans[0].ScopeSpans[0].Spans[0].Name)
	assert.ErrorIs(t, (&spanExporter{c}).ExportSpans(context.Background(), tracetest.SpanStubs{{Name: "late"}}.Snapshots()),
		ErrExporterShutdown)
}

// cmpProto is "" when the messages are equal, else both as text, with long strings cut.
func cmpProto(want, got proto.Message) string {
	if proto.Equal(want, got) {
		return ""
	}
	cut := regexp.MustCompile(`(x{20})x+`)
	return "want:\n" + cut.ReplaceAllString(prototext.Format(want), "$1...") + "\ngot:\n" +
		cut.ReplaceAllString(prototext.Format(got), "$1...")
}

func newReceiverServer(t *testing.T, h http.Handler) string {
	ts := httptest.NewServer(h)
	t.Cleanup(ts.Close)
	return ts.URL
}
