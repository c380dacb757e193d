package front

import (
	"context"
	"strings"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/metric"
	metricnoop "go.opentelemetry.io/otel/metric/noop"
	"go.opentelemetry.io/otel/trace"

	"github.com/toolsearch/toolsearch/mcp/internal/seam"
)

// InstrumentationName is the name of the tracer and the meter of package front.
const InstrumentationName = "github.com/toolsearch/toolsearch/mcp/front"

// MetricServerDuration is the duration of the requests the front serves, as the OpenTelemetry MCP conventions
// name it (s, by mcp.method.name, gen_ai.tool.name and error.type). Each request is a server span
// "<mcp.method.name> <target>" ("tools/call tool_search_code").
const MetricServerDuration = "mcp.server.operation.duration"

const (
	attrMethod    = attribute.Key("mcp.method.name")
	attrSessionID = attribute.Key("mcp.session.id")
	attrToolName  = attribute.Key("gen_ai.tool.name")
	attrPrompt    = attribute.Key("gen_ai.prompt.name")
	attrOperation = attribute.Key("gen_ai.operation.name")
	attrTransport = attribute.Key("network.transport")
	attrErrorType = attribute.Key("error.type")
)

var secondsBuckets = []float64{0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300}

type telemetry struct {
	tracer   trace.Tracer
	duration metric.Float64Histogram
}

func newTelemetry(tp trace.TracerProvider, mp metric.MeterProvider) *telemetry {
	if tp == nil {
		tp = otel.GetTracerProvider()
	}
	if mp == nil {
		mp = otel.GetMeterProvider()
	}
	t := &telemetry{tracer: tp.Tracer(InstrumentationName)}
	var err error
	t.duration, err = mp.Meter(InstrumentationName).Float64Histogram(MetricServerDuration, metric.WithUnit("s"),
		metric.WithDescription("Duration of the MCP requests the front serves."),
		metric.WithExplicitBucketBoundaries(secondsBuckets...))
	if err != nil {
		t.duration, _ = metricnoop.NewMeterProvider().Meter(InstrumentationName).Float64Histogram(MetricServerDuration)
	}
	return t
}

// traced is the outermost middleware: every request a client sends is a server span, a child of the trace
// context in the request's _meta (W3C traceparent, tracestate and baggage) when the client sent one. Its
// context reaches the runtime and the upstream requests the request causes, which put it into their own _meta.
// Notifications are not traced.
func (s *Server) traced(next sdk.MethodHandler) sdk.MethodHandler {
	return func(ctx context.Context, method string, req sdk.Request) (sdk.Result, error) {
		if strings.HasPrefix(method, "notifications/") {
			return next(ctx, method, req)
		}
		began := time.Now()
		params := req.GetParams()
		if meta := metaOf(params); len(meta) > 0 {
			ctx = seam.Propagator.Extract(ctx, seam.MetaCarrier(meta))
		}
		target, tool := "", ""
		var kvs []attribute.KeyValue
		switch p := params.(type) {
		case *sdk.CallToolParamsRaw:
			if p != nil {
				target, tool = p.Name, p.Name
			}
		case *sdk.GetPromptParams:
			if p != nil {
				target = p.Name
				kvs = append(kvs, attrPrompt.String(p.Name))
			}
		}
		name := method
		if target != "" {
			name += " " + target
		}
		ctx, span := s.tel.tracer.Start(ctx, name, trace.WithSpanKind(trace.SpanKindServer))
		ss, _ := req.GetSession().(*sdk.ServerSession)
		if span.IsRecording() {
			kvs = append(kvs, attrMethod.String(method), attrTransport.String(transportOf(ss)))
			if tool != "" {
				kvs = append(kvs, attrToolName.String(tool), attrOperation.String("execute_tool"))
			}
			if id := s.clientID(ss); id != "" {
				kvs = append(kvs, attrSessionID.String(s.opts.SessionID+"-"+id))
			}
			span.SetAttributes(kvs...)
		}
		res, err := next(ctx, method, req)
		errType, msg := "", ""
		switch r := res.(type) {
		case *sdk.CallToolResult:
			if err == nil && r != nil && r.IsError {
				errType, msg = "tool_error", "the tool call failed"
			}
		}
		if err != nil {
			errType, msg = "jsonrpc_error", err.Error()
		}
		if s.tel.duration.Enabled(ctx) {
			mk := []attribute.KeyValue{attrMethod.String(method)}
			if tool != "" {
				mk = append(mk, attrToolName.String(tool))
			}
			if errType != "" {
				mk = append(mk, attrErrorType.String(errType))
			}
			s.tel.duration.Record(ctx, time.Since(began).Seconds(), metric.WithAttributes(mk...))
		}
		if errType != "" && span.IsRecording() {
			span.SetAttributes(attrErrorType.String(errType))
			span.SetStatus(codes.Error, msg)
		}
		span.End()
		return res, err
	}
}

// metaOf is a request's _meta. A typed nil params (which the SDK does not send, but a middleware of someone
// else's might) has none.
func metaOf(p sdk.Params) (meta map[string]any) {
	if p == nil {
		return nil
	}
	defer func() {
		if recover() != nil {
			meta = nil
		}
	}()
	return p.GetMeta()
}

// transportOf is network.transport of a client session: tcp for streamable HTTP (whose sessions have ids),
// pipe for standard input and output.
func transportOf(ss *sdk.ServerSession) string {
	if ss != nil && ss.ID() != "" {
		return "tcp"
	}
	return "pipe"
}

// clientID is our id of a client session ("c1"), once it has one: never the Mcp-Session-Id, which lets whoever
// knows it into the session.
func (s *Server) clientID(ss *sdk.ServerSession) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if c := s.clients[ss]; c != nil {
		return c.id
	}
	return ""
}
