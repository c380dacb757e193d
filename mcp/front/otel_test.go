package front

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/propagation"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/toolsearch/toolsearch/mcp/upstream"
	"github.com/toolsearch/toolsearch/runtime"
)

// seenRequests records what an upstream received: the _meta of its tool calls and the traceparent headers.
type seenRequests struct {
	mu      sync.Mutex
	meta    []map[string]any
	headers []string
}

func (s *seenRequests) addMeta(m map[string]any) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.meta = append(s.meta, m)
}

func (s *seenRequests) lastMeta() map[string]any {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.meta) == 0 {
		return nil
	}
	return s.meta[len(s.meta)-1]
}

// TestTraceContextRunsThroughTheFront sends a tools/call with a traceparent in _meta through the HTTP front to a
// real streamable-HTTP upstream, and finds one trace: the client's trace id in every span the front, the runtime
// and the Source exported, and in the _meta and headers the upstream received, whose parent is the span of the
// upstream request.
func TestTraceContextRunsThroughTheFront(t *testing.T) {
	const traceparent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
	const traceID = "4bf92f3577b34da6a3ce929d0e0e4736"
	seen := &seenRequests{}
	remote := newFakeServer(0)
	remote.AddTool("remote_job", "A remote job.", func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		seen.addMeta(req.Params.Meta)
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "done"}}}, nil
	})
	mcpHandler := sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return remote.Srv }, nil)
	upstreamHTTP := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if tp := r.Header.Get("traceparent"); tp != "" {
			seen.mu.Lock()
			seen.headers = append(seen.headers, tp)
			seen.mu.Unlock()
		}
		mcpHandler.ServeHTTP(w, r)
	}))
	t.Cleanup(upstreamHTTP.Close)

	spans := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(spans))
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	t.Cleanup(func() {
		_ = tp.Shutdown(context.Background())
		_ = mp.Shutdown(context.Background())
	})

	cfg := &upstream.Config{Servers: map[string]upstream.ServerConfig{"remote": {URL: upstreamHTTP.URL}}}
	opts := fastOptions(nil)
	opts.TracerProvider, opts.MeterProvider = tp, mp
	src := startSource(t, cfg, opts, map[string]dialFunc{"remote": dialConfigured})
	rt, err := runtime.New(context.Background(), &runtime.Options{Config: runtime.Config{Enabled: true, Mode: runtime.ModeTools},
		TracerProvider: tp, MeterProvider: mp})
	require.NoError(t, err)
	t.Cleanup(func() { _ = rt.Close(context.Background()) })
	srv, err := NewServer(t.Context(), rt, src, &ServerOptions{TracerProvider: tp, MeterProvider: mp})
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, srv.Close()) })
	front := httptest.NewServer(srv.Handler())
	t.Cleanup(front.Close)

	sess := connectHTTP(t, front.URL, nil, legacyProtocol)
	params := &sdk.CallToolParams{Name: "tool_call",
		Arguments: map[string]any{"id": "mcp:remote:remote_job", "args": map[string]any{}},
		Meta:      sdk.Meta{"traceparent": traceparent, "baggage": "tenant=acme"}}
	res, err := sess.CallTool(t.Context(), params)
	require.NoError(t, err)
	require.False(t, res.IsError, "%v", res.Content)

	ended := spans.GetSpans()
	byName := map[string]tracetest.SpanStub{}
	for _, s := range ended {
		byName[s.Name] = s
	}
	serverSpan, ok := byName["tools/call tool_call"]
	require.True(t, ok, "the front's span of the request; spans: %v", spanNames(ended))
	assert.Equal(t, trace.SpanKindServer, serverSpan.SpanKind)
	assert.Equal(t, "00f067aa0ba902b7", serverSpan.Parent.SpanID().String(), "the client's span is the parent")
	model, ok := byName["execute_tool tool_call"]
	require.True(t, ok)
	assert.Equal(t, serverSpan.SpanContext.SpanID(), model.Parent.SpanID())
	call := byName["toolsearch.call mcp:remote:remote_job"]
	assert.Equal(t, model.SpanContext.SpanID(), call.Parent.SpanID())
	toolStep := byName["toolsearch.tool"]
	assert.Equal(t, call.SpanContext.SpanID(), toolStep.Parent.SpanID())
	client, ok := byName["tools/call remote_job"]
	require.True(t, ok, "the upstream request's span; spans: %v", spanNames(ended))
	assert.Equal(t, trace.SpanKindClient, client.SpanKind)
	assert.Equal(t, toolStep.SpanContext.SpanID(), client.Parent.SpanID())
	for _, s := range []tracetest.SpanStub{serverSpan, model, call, toolStep, client} {
		assert.Equal(t, traceID, s.SpanContext.TraceID().String(), s.Name)
	}
	ca := map[string]any{}
	for _, kv := range client.Attributes {
		ca[string(kv.Key)] = kv.Value.AsInterface()
	}
	assert.Equal(t, "tools/call", ca["mcp.method.name"])
	assert.Equal(t, "remote_job", ca["gen_ai.tool.name"])
	assert.Equal(t, "remote", ca["toolsearch.mcp.server"])
	assert.Equal(t, "tcp", ca["network.transport"])

	// What the upstream received: the same trace, with the upstream request's span as the parent.
	meta := seen.lastMeta()
	require.NotNil(t, meta)
	sc := trace.SpanContextFromContext(propagation.TraceContext{}.Extract(context.Background(), propagation.MapCarrier{
		"traceparent": meta["traceparent"].(string)}))
	assert.Equal(t, traceID, sc.TraceID().String())
	assert.Equal(t, client.SpanContext.SpanID(), sc.SpanID(), "the upstream's parent is our request's span")
	assert.Equal(t, "tenant=acme", meta["baggage"], "baggage passes on")
	seen.mu.Lock()
	headers := append([]string(nil), seen.headers...)
	seen.mu.Unlock()
	require.NotEmpty(t, headers, "the HTTP requests to the upstream carry the trace context too")
	assert.Contains(t, strings.Join(headers, " "), "00-"+traceID+"-"+client.SpanContext.SpanID().String())

	// The start-up of the server is a trace of its own.
	start, ok := byName["toolsearch.mcp.start remote"]
	require.True(t, ok)
	assert.False(t, start.Parent.IsValid())

	var rm metricdata.ResourceMetrics
	require.NoError(t, reader.Collect(context.Background(), &rm))
	names := map[string]bool{}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			names[m.Name] = true
		}
	}
	for _, want := range []string{MetricServerDuration, upstream.MetricClientDuration, upstream.MetricServers,
		upstream.MetricStartDuration, runtime.MetricToolCalls} {
		assert.True(t, names[want], "metric %s in %v", want, names)
	}
}

func spanNames(spans tracetest.SpanStubs) []string {
	var out []string
	for _, s := range spans {
		out = append(out, s.Name)
	}
	return out
}

func TestHealthEndpoints(t *testing.T) {
	ok := newFakeServer(0)
	ok.AddTool("ping", "Answers.", echo("pong"))
	src := startSource(t, inMemoryConfig("good", "bad"), fastOptions(nil), map[string]dialFunc{
		"good": ok.dial,
		"bad":  func(context.Context, *target) (*dialed, error) { return nil, io.ErrUnexpectedEOF },
	})
	rt := newTestRuntime(t, runtime.ModeTools)
	srv, err := NewServer(t.Context(), rt, src, &ServerOptions{BearerToken: "secret"})
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, srv.Close()) })
	ts := httptest.NewServer(srv.HealthHandler())
	t.Cleanup(ts.Close)

	get := func(path, token string) (int, string) {
		req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, ts.URL+path, nil)
		require.NoError(t, err)
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		defer resp.Body.Close()
		body, err := io.ReadAll(resp.Body)
		require.NoError(t, err)
		return resp.StatusCode, string(body)
	}
	code, body := get("/healthz", "")
	assert.Equal(t, http.StatusOK, code, "healthz asks for no token")
	assert.JSONEq(t, `{"status":"ok"}`, body)

	code, _ = get("/readyz", "")
	assert.Equal(t, http.StatusUnauthorized, code, "readyz names servers and errors: it takes the token")

	code, body = get("/readyz", "secret")
	assert.Equal(t, http.StatusServiceUnavailable, code, body)
	var h Health
	require.NoError(t, json.Unmarshal([]byte(body), &h))
	assert.False(t, h.Ready)
	assert.Equal(t, "tools", h.Mode)
	require.Len(t, h.Servers, 2)
	assert.Equal(t, "bad", h.Servers[0].Name)
	assert.Contains(t, []string{"failed", "retrying"}, h.Servers[0].State)
	assert.Contains(t, h.Servers[0].Reason, "unexpected EOF")
	assert.Equal(t, ServerHealth{Name: "good", State: "ready", Tools: 1, Since: h.Servers[1].Since}, h.Servers[1])

	code, _ = get("/other", "")
	assert.Equal(t, http.StatusNotFound, code)
}

// /readyz (and /metrics, through Protect) name every server and tool, so a profile's token, which may see only
// some of them, never opens them: only the server's own token does, and without one nobody.
func TestHealthEndpointsTakeTheServersOwnTokenOnly(t *testing.T) {
	ok := newFakeServer(0)
	ok.AddTool("ping", "Answers.", echo("pong"))
	src := startSource(t, inMemoryConfig("good"), fastOptions(nil), map[string]dialFunc{"good": ok.dial})
	for _, tc := range []struct {
		name   string
		bearer string
		want   map[string]int // token → status of /readyz
	}{
		{"with the server's token", "secret", map[string]int{"secret": http.StatusOK, ciToken: http.StatusUnauthorized,
			fullToken: http.StatusUnauthorized, "": http.StatusUnauthorized}},
		{"profiles only", "", map[string]int{ciToken: http.StatusUnauthorized, fullToken: http.StatusUnauthorized,
			"": http.StatusUnauthorized}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv, err := NewServer(t.Context(), newTestRuntime(t, runtime.ModeTools), src,
				&ServerOptions{BearerToken: tc.bearer, Profiles: twoProfiles()})
			require.NoError(t, err)
			t.Cleanup(func() { require.NoError(t, srv.Close()) })
			ts := httptest.NewServer(srv.HealthHandler())
			t.Cleanup(ts.Close)
			require.Eventually(t, func() bool { return srv.Health().Ready }, 10*time.Second, 5*time.Millisecond)
			for token, want := range tc.want {
				req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, ts.URL+"/readyz", nil)
				require.NoError(t, err)
				if token != "" {
					req.Header.Set("Authorization", "Bearer "+token)
				}
				resp, err := http.DefaultClient.Do(req)
				require.NoError(t, err)
				resp.Body.Close()
				assert.Equal(t, want, resp.StatusCode, "token %q", token)
			}
		})
	}
}

func TestReadyWhenEveryServerIsReady(t *testing.T) {
	ok := newFakeServer(0)
	ok.AddTool("ping", "Answers.", echo("pong"))
	src := startSource(t, inMemoryConfig("good"), fastOptions(nil), map[string]dialFunc{"good": ok.dial})
	srv := newTestServer(t, newTestRuntime(t, runtime.ModeTools), src, nil)
	rec := httptest.NewRecorder()
	srv.HealthHandler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/readyz", nil))
	assert.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	assert.True(t, srv.Health().Ready)
}
