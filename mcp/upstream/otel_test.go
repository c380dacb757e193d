package upstream

import (
	"context"
	"encoding/json"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/toolsearch/toolsearch/mcp/internal/mcptest"
)

// metaLog keeps the _meta of every request a server received, by method.
type metaLog struct {
	mu   sync.Mutex
	seen map[string][]map[string]any
}

func (l *metaLog) add(method string, meta map[string]any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.seen[method] = append(l.seen[method], meta)
}

// get is the _meta of the last request of method.
func (l *metaLog) get(method string) map[string]any {
	l.mu.Lock()
	defer l.mu.Unlock()
	if all := l.seen[method]; len(all) > 0 {
		return all[len(all)-1]
	}
	return nil
}

func (l *metaLog) all(method string) []map[string]any {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]map[string]any(nil), l.seen[method]...)
}

// featureTraceServer offers a resource, a prompt and completions, and logs the _meta of each
// request about them.
func featureTraceServer(log *metaLog) *fakeServer {
	srv := sdk.NewServer(&sdk.Implementation{Name: "docs", Version: "1"}, &sdk.ServerOptions{
		CompletionHandler: func(_ context.Context, req *sdk.CompleteRequest) (*sdk.CompleteResult, error) {
			log.add("completion/complete", req.Params.Meta)
			return &sdk.CompleteResult{Completion: sdk.CompletionResultDetails{Values: []string{"alpha"}}}, nil
		},
	})
	srv.AddResource(&sdk.Resource{URI: "docs://guide", Name: "guide"},
		func(_ context.Context, req *sdk.ReadResourceRequest) (*sdk.ReadResourceResult, error) {
			log.add("resources/read", req.Params.Meta)
			return &sdk.ReadResourceResult{Contents: []*sdk.ResourceContents{{URI: req.Params.URI, Text: "the guide"}}}, nil
		})
	srv.AddPrompt(&sdk.Prompt{Name: "review", Arguments: []*sdk.PromptArgument{{Name: "topic"}}},
		func(_ context.Context, req *sdk.GetPromptRequest) (*sdk.GetPromptResult, error) {
			log.add("prompts/get", req.Params.Meta)
			return &sdk.GetPromptResult{Messages: []*sdk.PromptMessage{{Role: "user", Content: &sdk.TextContent{Text: "review it"}}}}, nil
		})
	return &fakeServer{mcptest.FakeServerOf(srv)}
}

func spanAttrs(s tracetest.SpanStub) map[string]any {
	out := map[string]any{}
	for _, kv := range s.Attributes {
		out[string(kv.Key)] = kv.Value.AsInterface()
	}
	return out
}

// Each request about a server's resources, prompts and completions is a client span of its own under the
// caller's span, and the server receives that span as the parent in the request's _meta, next to the caller's
// own entries, which are not changed in place.
func TestFeatureRequestsAreClientSpans(t *testing.T) {
	log := &metaLog{seen: map[string][]map[string]any{}}
	f := featureTraceServer(log)
	spans := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(spans))
	t.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
	opts := fastOptions(nil)
	opts.TracerProvider = tp
	src := startSource(t, inMemoryConfig("docs"), opts, map[string]dialFunc{"docs": f.dial})
	u := src.servers[0]
	require.Equal(t, StateReady, u.status().State)

	ctx, parent := tp.Tracer("test").Start(t.Context(), "caller")
	shared := sdk.Meta{"io.example/client": "kept", "traceparent": "00-11111111111111111111111111111111-2222222222222222-01"}
	_, err := u.ReadResource(ctx, &sdk.ReadResourceParams{URI: "docs://guide", Meta: shared})
	require.NoError(t, err)
	_, err = u.GetPrompt(ctx, &sdk.GetPromptParams{Name: "review", Arguments: map[string]string{"topic": "x"}, Meta: shared})
	require.NoError(t, err)
	_, err = u.Complete(ctx, &sdk.CompleteParams{Ref: &sdk.CompleteReference{Type: "ref/prompt", Name: "review"},
		Argument: sdk.CompleteParamsArgument{Name: "topic", Value: "a"}, Meta: shared})
	require.NoError(t, err)
	parent.End()
	assert.Equal(t, sdk.Meta{"io.example/client": "kept", "traceparent": "00-11111111111111111111111111111111-2222222222222222-01"},
		shared, "the caller's _meta is not written to")

	byName := map[string]tracetest.SpanStub{}
	for _, s := range spans.GetSpans() {
		byName[s.Name] = s
	}
	cases := []struct {
		span, method string
		attrs        map[string]any
	}{
		{"resources/read", "resources/read", map[string]any{"mcp.resource.uri": "docs://guide"}},
		{"prompts/get review", "prompts/get", map[string]any{"gen_ai.prompt.name": "review"}},
		{"completion/complete", "completion/complete", map[string]any{}},
	}
	for _, c := range cases {
		t.Run(c.method, func(t *testing.T) {
			s, ok := byName[c.span]
			require.True(t, ok, "no span %q in %v", c.span, spanNamesOf(spans.GetSpans()))
			assert.Equal(t, trace.SpanKindClient, s.SpanKind)
			assert.Equal(t, parent.SpanContext().SpanID(), s.Parent.SpanID(), "a child of the caller's span")
			assert.Equal(t, parent.SpanContext().TraceID(), s.SpanContext.TraceID())
			assert.Equal(t, codes.Unset, s.Status.Code)
			a := spanAttrs(s)
			assert.Equal(t, c.method, a["mcp.method.name"])
			assert.Equal(t, "docs", a["toolsearch.mcp.server"])
			assert.Equal(t, "pipe", a["network.transport"])
			for k, v := range c.attrs {
				assert.Equal(t, v, a[k], k)
			}

			meta := log.get(c.method)
			require.NotNil(t, meta, "the server received no _meta")
			tp, _ := meta["traceparent"].(string)
			sc := trace.SpanContextFromContext(propagation.TraceContext{}.Extract(context.Background(),
				propagation.MapCarrier{"traceparent": tp}))
			assert.Equal(t, s.SpanContext.TraceID(), sc.TraceID(), "traceparent %q", tp)
			assert.Equal(t, s.SpanContext.SpanID(), sc.SpanID(), "the server's parent is the request's span")
			assert.Equal(t, "kept", meta["io.example/client"], "the caller's entries pass on")
		})
	}
}

// resources/subscribe and resources/unsubscribe are client spans too, with their trace context in _meta. Under
// the protocol of 2026-07-28 the SDK turns a subscription into a stream it opens outside the request's context,
// so this server speaks the protocol before it.
func TestSubscriptionsAreClientSpans(t *testing.T) {
	log := &metaLog{seen: map[string][]map[string]any{}}
	handle := func(method string, id, params json.RawMessage) string {
		switch method {
		case "initialize":
			return mcptest.Result(id, `{"protocolVersion":"2025-06-18","capabilities":{"tools":{},"resources":{"subscribe":true}},`+
				`"serverInfo":{"name":"raw","version":"1"}}`)
		case "tools/list":
			return mcptest.Result(id, `{"tools":[]}`)
		case "resources/list":
			return mcptest.Result(id, `{"resources":[]}`)
		case "resources/templates/list":
			return mcptest.Result(id, `{"resourceTemplates":[]}`)
		case "resources/subscribe", "resources/unsubscribe":
			var p struct {
				Meta map[string]any `json:"_meta"`
			}
			_ = json.Unmarshal(params, &p)
			log.add(method, p.Meta)
			return mcptest.Result(id, `{}`)
		}
		return ""
	}
	spans := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(spans))
	t.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
	opts := fastOptions(nil)
	opts.TracerProvider = tp
	src := startSource(t, inMemoryConfig("docs"), opts, map[string]dialFunc{"docs": rawDial(handle)})
	u := src.servers[0]
	require.Equal(t, StateReady, u.status().State)

	ctx, parent := tp.Tracer("test").Start(t.Context(), "caller")
	require.NoError(t, u.Subscribe(ctx, "docs://guide"))
	require.NoError(t, u.Unsubscribe(ctx, "docs://guide"))
	parent.End()
	byName := map[string]tracetest.SpanStub{}
	for _, s := range spans.GetSpans() {
		byName[s.Name] = s
	}
	for _, method := range []string{"resources/subscribe", "resources/unsubscribe"} {
		s, ok := byName[method]
		require.True(t, ok, "no span %q in %v", method, spanNamesOf(spans.GetSpans()))
		assert.Equal(t, trace.SpanKindClient, s.SpanKind)
		assert.Equal(t, parent.SpanContext().SpanID(), s.Parent.SpanID())
		a := spanAttrs(s)
		assert.Equal(t, method, a["mcp.method.name"])
		assert.Equal(t, "docs://guide", a["mcp.resource.uri"])
		// The session's start may subscribe again on its own, outside any trace: one request carries ours.
		var got []any
		for _, meta := range log.all(method) {
			got = append(got, meta["traceparent"])
		}
		assert.Contains(t, got, "00-"+s.SpanContext.TraceID().String()+"-"+s.SpanContext.SpanID().String()+"-01", method)
	}
}

// A request the server refuses ends its span in an error, with the JSON-RPC code.
func TestFeatureRequestErrorsMarkTheirSpans(t *testing.T) {
	log := &metaLog{seen: map[string][]map[string]any{}}
	f := featureTraceServer(log)
	spans := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(spans))
	t.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
	opts := fastOptions(nil)
	opts.TracerProvider = tp
	src := startSource(t, inMemoryConfig("docs"), opts, map[string]dialFunc{"docs": f.dial})

	_, err := src.servers[0].GetPrompt(t.Context(), &sdk.GetPromptParams{Name: "missing"})
	var wire *jsonrpc.Error
	require.ErrorAs(t, err, &wire)
	var got *tracetest.SpanStub
	for _, s := range spans.GetSpans() {
		if s.Name == "prompts/get missing" {
			got = &s
		}
	}
	require.NotNil(t, got, "spans: %v", spanNamesOf(spans.GetSpans()))
	assert.Equal(t, codes.Error, got.Status.Code)
	a := spanAttrs(*got)
	assert.Equal(t, "jsonrpc_error", a["error.type"])
	assert.Equal(t, wire.Code, a["rpc.response.status_code"])
	assert.False(t, got.Parent.IsValid(), "without a caller's span the request is a root")
}

func spanNamesOf(spans tracetest.SpanStubs) []string {
	var out []string
	for _, s := range spans {
		out = append(out, s.Name)
	}
	return out
}
