package otelsetup

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/baggage"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"
	collmetrics "go.opentelemetry.io/proto/otlp/collector/metrics/v1"
	colltrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	"google.golang.org/protobuf/proto"
)

// clearEnv unsets every variable Setup reads, for the test.
func clearEnv(t *testing.T) {
	for _, k := range []string{"OTEL_SDK_DISABLED", "OTEL_TRACES_EXPORTER", "OTEL_METRICS_EXPORTER",
		"OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "OTEL_EXPORTER_OTLP_METRICS_ENDPOINT",
		"OTEL_EXPORTER_OTLP_PROTOCOL", "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "OTEL_EXPORTER_OTLP_METRICS_PROTOCOL",
		"OTEL_SERVICE_NAME", "OTEL_RESOURCE_ATTRIBUTES", "OTEL_TRACES_SAMPLER", "OTEL_EXPORTER_OTLP_HEADERS",
		"OTEL_EXPORTER_OTLP_TRACES_HEADERS", "OTEL_EXPORTER_OTLP_TIMEOUT", "OTEL_EXPORTER_OTLP_COMPRESSION",
		"OTEL_EXPORTER_OTLP_CERTIFICATE", "OTEL_EXPORTER_OTLP_CLIENT_CERTIFICATE", "OTEL_EXPORTER_OTLP_CLIENT_KEY",
		"OTEL_EXPORTER_OTLP_METRICS_TEMPORALITY_PREFERENCE"} {
		t.Setenv(k, "")
	}
}

func TestSetupOffWhenNothingIsSet(t *testing.T) {
	clearEnv(t)
	tel, err := Setup(context.Background(), nil)
	require.NoError(t, err)
	_, span := tel.TracerProvider.Tracer("t").Start(context.Background(), "x")
	assert.False(t, span.IsRecording())
	counter, err := tel.MeterProvider.Meter("t").Int64Counter("c")
	require.NoError(t, err)
	assert.False(t, counter.Enabled(context.Background()))
	assert.Nil(t, tel.Metrics)
	assert.Empty(t, tel.Traces)
	require.NoError(t, tel.Shutdown(context.Background()))
}

func TestSetupDisabled(t *testing.T) {
	clearEnv(t)
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:1")
	t.Setenv("OTEL_SDK_DISABLED", "true")
	tel, err := Setup(context.Background(), nil)
	require.NoError(t, err)
	assert.Empty(t, tel.Traces)
	assert.Empty(t, tel.OTLPMetrics)
}

func TestSetupRefusesWhatItCannotDo(t *testing.T) {
	for _, tc := range []struct{ key, value, want string }{
		{"OTEL_EXPORTER_OTLP_PROTOCOL", "grpc", "http/protobuf"},
		{"OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "http/json", "http/protobuf"},
		{"OTEL_TRACES_EXPORTER", "zipkin", "OTEL_TRACES_EXPORTER=zipkin"},
		{"OTEL_METRICS_EXPORTER", "prometheus", "OTEL_METRICS_EXPORTER=prometheus"},
	} {
		t.Run(tc.key+"="+tc.value, func(t *testing.T) {
			clearEnv(t)
			t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:1")
			t.Setenv(tc.key, tc.value)
			_, err := Setup(context.Background(), nil)
			require.Error(t, err)
			assert.True(t, errors.Is(err, ErrUnsupported))
			assert.Contains(t, err.Error(), tc.want)
		})
	}
}

// receiver is an OTLP/HTTP receiver: it decodes what the exporters send.
type receiver struct {
	mu      sync.Mutex
	traces  []*colltrace.ExportTraceServiceRequest
	metrics []*collmetrics.ExportMetricsServiceRequest
	paths   []string
}

func (rc *receiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil || r.Header.Get("Content-Type") != "application/x-protobuf" {
		http.Error(w, "bad request", http.StatusBadRequest)
		return
	}
	rc.mu.Lock()
	defer rc.mu.Unlock()
	rc.paths = append(rc.paths, r.URL.Path)
	switch r.URL.Path {
	case "/v1/traces":
		var req colltrace.ExportTraceServiceRequest
		if proto.Unmarshal(body, &req) != nil {
			http.Error(w, "bad trace request", http.StatusBadRequest)
			return
		}
		rc.traces = append(rc.traces, &req)
		out, _ := proto.Marshal(&colltrace.ExportTraceServiceResponse{})
		w.Header().Set("Content-Type", "application/x-protobuf")
		_, _ = w.Write(out)
	case "/v1/metrics":
		var req collmetrics.ExportMetricsServiceRequest
		if proto.Unmarshal(body, &req) != nil {
			http.Error(w, "bad metrics request", http.StatusBadRequest)
			return
		}
		rc.metrics = append(rc.metrics, &req)
		out, _ := proto.Marshal(&collmetrics.ExportMetricsServiceResponse{})
		w.Header().Set("Content-Type", "application/x-protobuf")
		_, _ = w.Write(out)
	default:
		http.NotFound(w, r)
	}
}

func TestSetupExportsOverOTLPHTTP(t *testing.T) {
	clearEnv(t)
	rc := &receiver{}
	ts := httptest.NewServer(rc)
	t.Cleanup(ts.Close)
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", ts.URL)
	t.Setenv("OTEL_SERVICE_NAME", "toolsearch-test")
	tel, err := Setup(context.Background(), &Options{ServiceVersion: "1.2.3"})
	require.NoError(t, err)
	assert.Equal(t, ts.URL+"/v1/traces", tel.Traces)
	assert.Equal(t, ts.URL+"/v1/metrics", tel.OTLPMetrics)

	ctx, span := tel.TracerProvider.Tracer("test").Start(context.Background(), "execute_tool tool_search")
	span.SetAttributes(attribute.String("gen_ai.tool.name", "tool_search"))
	_, child := tel.TracerProvider.Tracer("test").Start(ctx, "toolsearch.search")
	child.End()
	span.End()
	counter, err := tel.MeterProvider.Meter("test").Int64Counter("toolsearch.tool.calls")
	require.NoError(t, err)
	counter.Add(context.Background(), 3, metric.WithAttributes(attribute.String("toolsearch.outcome", "ok")))

	shutdownCtx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	require.NoError(t, tel.Shutdown(shutdownCtx), "shutdown flushes both exporters")

	rc.mu.Lock()
	defer rc.mu.Unlock()
	require.NotEmpty(t, rc.traces, "paths: %v", rc.paths)
	var names []string
	var service, version string
	for _, req := range rc.traces {
		for _, rs := range req.ResourceSpans {
			for _, kv := range rs.Resource.Attributes {
				switch kv.Key {
				case "service.name":
					service = kv.Value.GetStringValue()
				case "service.version":
					version = kv.Value.GetStringValue()
				}
			}
			for _, ss := range rs.ScopeSpans {
				for _, s := range ss.Spans {
					names = append(names, s.Name)
				}
			}
		}
	}
	assert.ElementsMatch(t, []string{"execute_tool tool_search", "toolsearch.search"}, names)
	assert.Equal(t, "toolsearch-test", service, "OTEL_SERVICE_NAME wins over the default")
	assert.Equal(t, "1.2.3", version)

	require.NotEmpty(t, rc.metrics)
	var value int64
	for _, req := range rc.metrics {
		for _, rm := range req.ResourceMetrics {
			for _, sm := range rm.ScopeMetrics {
				for _, m := range sm.Metrics {
					if m.Name == "toolsearch.tool.calls" {
						value = m.GetSum().DataPoints[0].GetAsInt()
					}
				}
			}
		}
	}
	assert.Equal(t, int64(3), value)
}

func TestPrometheusText(t *testing.T) {
	clearEnv(t)
	tel, err := Setup(context.Background(), &Options{Prometheus: true})
	require.NoError(t, err)
	t.Cleanup(func() { _ = tel.Shutdown(context.Background()) })
	require.NotNil(t, tel.Metrics)
	assert.Empty(t, tel.Traces, "Prometheus alone exports no traces")
	m := tel.MeterProvider.Meter("test")
	calls, err := m.Int64Counter("toolsearch.tool.calls", metric.WithDescription("Real tool calls."))
	require.NoError(t, err)
	calls.Add(context.Background(), 2, metric.WithAttributes(attribute.String("toolsearch.tool.id", `mcp:gh:"x"`),
		attribute.String("toolsearch.outcome", "ok")))
	hist, err := m.Float64Histogram("toolsearch.tool.call.duration", metric.WithUnit("s"),
		metric.WithExplicitBucketBoundaries(0.1, 1))
	require.NoError(t, err)
	hist.Record(context.Background(), 0.05)
	hist.Record(context.Background(), 0.5)
	hist.Record(context.Background(), 5)
	gauge, err := m.Int64Gauge("toolsearch.catalog.size")
	require.NoError(t, err)
	gauge.Record(context.Background(), 42)

	rec := httptest.NewRecorder()
	tel.Metrics.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	require.Equal(t, http.StatusOK, rec.Code)
	assert.Equal(t, "text/plain; version=0.0.4; charset=utf-8", rec.Header().Get("Content-Type"))
	body := rec.Body.String()
	for _, want := range []string{
		"# HELP toolsearch_tool_calls_total Real tool calls.\n",
		"# TYPE toolsearch_tool_calls_total counter\n",
		`toolsearch_tool_calls_total{toolsearch_outcome="ok",toolsearch_tool_id="mcp:gh:\"x\""} 2` + "\n",
		"# TYPE toolsearch_tool_call_duration_seconds histogram\n",
		`toolsearch_tool_call_duration_seconds_bucket{le="0.1"} 1` + "\n",
		`toolsearch_tool_call_duration_seconds_bucket{le="1"} 2` + "\n",
		`toolsearch_tool_call_duration_seconds_bucket{le="+Inf"} 3` + "\n",
		"toolsearch_tool_call_duration_seconds_sum 5.55\n",
		"toolsearch_tool_call_duration_seconds_count 3\n",
		"# TYPE toolsearch_catalog_size gauge\ntoolsearch_catalog_size 42\n",
	} {
		assert.Contains(t, body, want)
	}
	for _, line := range strings.Split(strings.TrimSpace(body), "\n") {
		if !strings.HasPrefix(line, "#") {
			assert.Regexp(t, `^[a-zA-Z_:][a-zA-Z0-9_:]*(\{.*\})? [-+0-9.eInfNa]+$`, line)
		}
	}

	rec = httptest.NewRecorder()
	tel.Metrics.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/metrics", nil))
	assert.Equal(t, http.StatusMethodNotAllowed, rec.Code)
}

func TestContextFromEnvironment(t *testing.T) {
	env := map[string]string{
		"TRACEPARENT": "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
		"TRACESTATE":  "vendor=x",
		"BAGGAGE":     "tenant=acme",
	}
	ctx := ContextFromEnvironment(context.Background(), func(k string) string { return env[k] })
	sc := trace.SpanContextFromContext(ctx)
	assert.True(t, sc.IsRemote())
	assert.Equal(t, "4bf92f3577b34da6a3ce929d0e0e4736", sc.TraceID().String())
	assert.Equal(t, "00f067aa0ba902b7", sc.SpanID().String())
	assert.Equal(t, "vendor=x", sc.TraceState().String())
	assert.Equal(t, "acme", baggage.FromContext(ctx).Member("tenant").Value())

	bare := context.Background()
	assert.Equal(t, bare, ContextFromEnvironment(bare, func(string) string { return "" }))
	bad := ContextFromEnvironment(bare, func(k string) string {
		if k == "TRACEPARENT" {
			return "not a traceparent"
		}
		return ""
	})
	assert.False(t, trace.SpanContextFromContext(bad).IsValid(), "a malformed TRACEPARENT is ignored")
}

func TestSetupKeepGlobals(t *testing.T) {
	clearEnv(t)
	rc := &receiver{}
	ts := httptest.NewServer(rc)
	t.Cleanup(ts.Close)
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", ts.URL)
	before := otel.GetTracerProvider()
	tel, err := Setup(context.Background(), &Options{KeepGlobals: true})
	require.NoError(t, err)
	t.Cleanup(func() { _ = tel.Shutdown(context.Background()) })
	assert.Same(t, before, otel.GetTracerProvider(), "the global provider is left alone")
	_, span := tel.TracerProvider.Tracer("t").Start(context.Background(), "x")
	assert.True(t, span.IsRecording())
	span.End()
}
