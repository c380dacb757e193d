package main

import (
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	collmetrics "go.opentelemetry.io/proto/otlp/collector/metrics/v1"
	colltrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"
)

// otlpReceiver is an OTLP/HTTP receiver for the tests: it decodes what the command exports with the protocol's
// own generated messages.
type otlpReceiver struct {
	mu      sync.Mutex
	spans   []*tracepb.Span
	service []string // service.name of each export
	metrics map[string]bool
}

func (rc *otlpReceiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil || r.Header.Get("Content-Type") != "application/x-protobuf" {
		http.Error(w, "bad request", http.StatusBadRequest)
		return
	}
	rc.mu.Lock()
	defer rc.mu.Unlock()
	var reply proto.Message
	switch r.URL.Path {
	case "/v1/traces":
		var req colltrace.ExportTraceServiceRequest
		if proto.Unmarshal(body, &req) != nil {
			http.Error(w, "bad trace request", http.StatusBadRequest)
			return
		}
		for _, rs := range req.ResourceSpans {
			for _, kv := range rs.GetResource().GetAttributes() {
				if kv.Key == "service.name" {
					rc.service = append(rc.service, kv.Value.GetStringValue())
				}
			}
			for _, ss := range rs.ScopeSpans {
				rc.spans = append(rc.spans, ss.Spans...)
			}
		}
		reply = &colltrace.ExportTraceServiceResponse{}
	case "/v1/metrics":
		var req collmetrics.ExportMetricsServiceRequest
		if proto.Unmarshal(body, &req) != nil {
			http.Error(w, "bad metrics request", http.StatusBadRequest)
			return
		}
		for _, rm := range req.ResourceMetrics {
			for _, sm := range rm.ScopeMetrics {
				for _, m := range sm.Metrics {
					rc.metrics[m.Name] = true
				}
			}
		}
		reply = &collmetrics.ExportMetricsServiceResponse{}
	default:
		http.NotFound(w, r)
		return
	}
	out, _ := proto.Marshal(reply)
	w.Header().Set("Content-Type", "application/x-protobuf")
	_, _ = w.Write(out)
}

// take returns the spans received so far by name, and forgets them.
func (rc *otlpReceiver) take() map[string]*tracepb.Span {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	out := map[string]*tracepb.Span{}
	for _, s := range rc.spans {
		out[s.Name] = s
	}
	rc.spans = nil
	return out
}

func attrOf(s *tracepb.Span, key string) *commonpb.AnyValue {
	for _, kv := range s.Attributes {
		if kv.Key == key {
			return kv.Value
		}
	}
	return nil
}

// startReceiver points the OTEL_* environment at a receiver the test starts.
func startReceiver(t *testing.T) *otlpReceiver {
	rc := &otlpReceiver{metrics: map[string]bool{}}
	ts := httptest.NewServer(rc)
	t.Cleanup(ts.Close)
	for _, k := range []string{"OTEL_SDK_DISABLED", "OTEL_TRACES_EXPORTER", "OTEL_METRICS_EXPORTER",
		"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "OTEL_EXPORTER_OTLP_METRICS_ENDPOINT", "OTEL_EXPORTER_OTLP_PROTOCOL",
		"OTEL_RESOURCE_ATTRIBUTES", "OTEL_TRACES_SAMPLER", "TRACESTATE", "BAGGAGE", captureContentEnv} {
		t.Setenv(k, "")
	}
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", ts.URL)
	t.Setenv("OTEL_SERVICE_NAME", "toolsearch-cli-test")
	// Far longer than the test: the metrics must arrive through the flush at exit, not a periodic export.
	t.Setenv("OTEL_METRIC_EXPORT_INTERVAL", "3600000")
	return rc
}

// run, call, describe and search export their spans and metrics over OTLP/HTTP, flushed before the command
// returns, and join the caller's trace through TRACEPARENT.
func TestOneShotCommandsExportOverOTLPHTTP(t *testing.T) {
	rc := startReceiver(t)
	const traceID = "4bf92f3577b34da6a3ce929d0e0e4736"
	t.Setenv("TRACEPARENT", "00-"+traceID+"-00f067aa0ba902b7-01")
	hex := func(b []byte) string { return string(appendHex(nil, b)) }

	t.Run("run", func(t *testing.T) {
		catalogFile := writeFile(t, "catalog.json", runCatalog)
		script := writeFile(t, "script.js", `
			const [hit] = await openclaw.tools.search("open a github issue", {limit: 1});
			return await openclaw.tools.call(hit.id, {title: "bug"});`)
		code, _, stderr := runCLI(t, "", "run", "--catalog", catalogFile, script)
		require.Equal(t, exitOK, code, stderr)
		spans := rc.take()
		cmd := spans["toolsearch run"]
		require.NotNil(t, cmd, "spans: %v", keys(spans))
		assert.Equal(t, traceID, hex(cmd.TraceId), "the command joins the trace of TRACEPARENT")
		assert.Equal(t, "00f067aa0ba902b7", hex(cmd.ParentSpanId))
		assert.Equal(t, int64(0), attrOf(cmd, "process.exit.code").GetIntValue())
		code2 := spans["toolsearch.code"]
		require.NotNil(t, code2, "spans: %v", keys(spans))
		assert.Equal(t, traceID, hex(code2.TraceId))
		for _, name := range []string{"toolsearch.run", "execute_tool tool_search_code", "toolsearch.search",
			"toolsearch.call mcp:github:create_issue"} {
			require.Contains(t, spans, name, "spans: %v", keys(spans))
			assert.Equal(t, traceID, hex(spans[name].TraceId), name)
		}
	})

	t.Run("call", func(t *testing.T) {
		cfg := upstreamConfig(t, "tools")
		code, stdout, stderr := runCLI(t, "", "call", "--mcp-config", cfg, "--args", `{"title":"bug"}`, "mcp:github:create_issue")
		require.Equal(t, exitOK, code, stderr)
		assert.Contains(t, stdout, "created issue: bug")
		spans := rc.take()
		for _, name := range []string{"toolsearch call", "execute_tool tool_call", "toolsearch.call mcp:github:create_issue",
			"toolsearch.tool", "tools/call create_issue", "toolsearch.mcp.start github", "tools/list"} {
			require.Contains(t, spans, name, "spans: %v", keys(spans))
		}
		upstream := spans["tools/call create_issue"]
		assert.Equal(t, traceID, hex(upstream.TraceId))
		assert.Equal(t, tracepb.Span_SPAN_KIND_CLIENT, upstream.Kind)
		assert.Equal(t, "github", attrOf(upstream, "toolsearch.mcp.server").GetStringValue())
		rc.mu.Lock()
		defer rc.mu.Unlock()
		for _, m := range []string{"toolsearch.tool.calls", "toolsearch.tool.call.duration", "mcp.client.operation.duration"} {
			assert.True(t, rc.metrics[m], "metric %s flushed at exit; got %v", m, rc.metrics)
		}
		assert.Contains(t, rc.service, "toolsearch-cli-test")
	})

	t.Run("describe", func(t *testing.T) {
		catalogFile := writeFile(t, "catalog.json", runCatalog)
		code, _, stderr := runCLI(t, "", "describe", "--catalog", catalogFile, "web_search")
		require.Equal(t, exitOK, code, stderr)
		spans := rc.take()
		require.Contains(t, spans, "toolsearch describe", "spans: %v", keys(spans))
		require.Contains(t, spans, "execute_tool tool_describe", "spans: %v", keys(spans))
		require.Contains(t, spans, "toolsearch.describe", "spans: %v", keys(spans))
	})

	t.Run("search", func(t *testing.T) {
		catalogFile := writeFile(t, "catalog.json", runCatalog)
		code, _, stderr := runCLI(t, "", "search", "--catalog", catalogFile, "github issue")
		require.Equal(t, exitOK, code, stderr)
		spans := rc.take()
		s := spans["toolsearch search"]
		require.NotNil(t, s, "spans: %v", keys(spans))
		assert.Equal(t, int64(2), attrOf(s, "toolsearch.catalog.size").GetIntValue())
		assert.Positive(t, attrOf(s, "toolsearch.search.hits").GetIntValue())
	})

	t.Run("a failing command says so", func(t *testing.T) {
		code, _, _ := runCLI(t, "", "describe", "--catalog", writeFile(t, "c.json", runCatalog), "no_such_tool")
		require.Equal(t, exitFailure, code)
		s := rc.take()["toolsearch describe"]
		require.NotNil(t, s)
		assert.Equal(t, int64(exitFailure), attrOf(s, "process.exit.code").GetIntValue())
		assert.Equal(t, tracepb.Status_STATUS_CODE_ERROR, s.Status.GetCode())
	})
}

// A collector that never answers delays a one-shot command by the flush bound at most, and the command says
// that its telemetry was not exported.
func TestOneShotCommandsDoNotHangOnACollector(t *testing.T) {
	startReceiver(t)
	release := make(chan struct{})
	hung := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	t.Cleanup(hung.Close)
	t.Cleanup(func() { close(release) })
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", hung.URL)
	old := oneShotShutdownTimeout
	oneShotShutdownTimeout = 300 * time.Millisecond
	t.Cleanup(func() { oneShotShutdownTimeout = old })

	began := time.Now()
	code, stdout, stderr := runCLI(t, "", "search", "--catalog", writeFile(t, "c.json", runCatalog), "github issue")
	elapsed := time.Since(began)
	require.Equal(t, exitOK, code, "telemetry that cannot be exported does not fail the command: %s", stderr)
	assert.Contains(t, stdout, "create_issue")
	assert.Contains(t, stderr, "toolsearch search: exporting telemetry:")
	// Generous: the bound is 300ms; the exporter's own default timeout (10s) would take far longer.
	assert.Less(t, elapsed, 5*time.Second)
}

// Bad OTEL_* settings are refused before the command does anything.
func TestOneShotCommandsRefuseUnsupportedExporters(t *testing.T) {
	startReceiver(t)
	t.Setenv("OTEL_TRACES_EXPORTER", "zipkin")
	code, stdout, stderr := runCLI(t, "", "search", "--catalog", writeFile(t, "c.json", runCatalog), "github issue")
	assert.Equal(t, exitFailure, code)
	assert.Empty(t, stdout)
	assert.Contains(t, stderr, "toolsearch search: otelsetup: unsupported: OTEL_TRACES_EXPORTER=zipkin")
}

func keys(m map[string]*tracepb.Span) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

func appendHex(dst, b []byte) []byte {
	const digits = "0123456789abcdef"
	for _, c := range b {
		dst = append(dst, digits[c>>4], digits[c&15])
	}
	return dst
}
