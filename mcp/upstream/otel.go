package upstream

import (
	"context"
	"errors"
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/metric"
	metricnoop "go.opentelemetry.io/otel/metric/noop"
	"go.opentelemetry.io/otel/trace"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// InstrumentationName is the name of the tracer and the meter of package upstream.
const InstrumentationName = "github.com/toolsearch/toolsearch/mcp/upstream"

// The span and metric names of package upstream. Requests to servers follow the OpenTelemetry MCP conventions
// (client spans "tools/call <tool>", "tools/list", "prompts/get <prompt>", "resources/read",
// "resources/subscribe", "resources/unsubscribe", "completion/complete"); a start attempt is ours.
const (
	SpanStart            = "toolsearch.mcp.start"          // one attempt to start or connect a server: "toolsearch.mcp.start <server>"
	MetricClientDuration = "mcp.client.operation.duration" // s, by mcp.method.name, gen_ai.tool.name, server, error.type
	MetricServers        = "toolsearch.mcp.servers"        // servers by state (ready, starting, failed, idle, ...)
	MetricStartDuration  = "toolsearch.mcp.start.duration" // s, by server and outcome
	attrMethod           = attribute.Key("mcp.method.name")
	attrSessionID        = attribute.Key("mcp.session.id")
	attrToolName         = attribute.Key("gen_ai.tool.name")
	attrPromptName       = attribute.Key("gen_ai.prompt.name")
	attrResourceURI      = attribute.Key("mcp.resource.uri")
	attrOperation        = attribute.Key("gen_ai.operation.name")
	attrTransport        = attribute.Key("network.transport")
	attrErrorType        = attribute.Key("error.type")
	attrRPCStatus        = attribute.Key("rpc.response.status_code")
	attrServer           = attribute.Key("toolsearch.mcp.server")
	attrState            = attribute.Key("toolsearch.mcp.state")
	attrOutcome          = attribute.Key("toolsearch.outcome")
	attrTools            = attribute.Key("toolsearch.mcp.tools")
	attrAttempt          = attribute.Key("toolsearch.mcp.attempt")
)

var secondsBuckets = []float64{0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120}

// telemetry is a Source's tracer and instruments.
type telemetry struct {
	tracer         trace.Tracer
	clientDuration metric.Float64Histogram
	startDuration  metric.Float64Histogram
	reg            metric.Registration // the servers gauge's callback; nil when the meter refused it
}

func newTelemetry(tp trace.TracerProvider, mp metric.MeterProvider) *telemetry {
	if tp == nil {
		tp = otel.GetTracerProvider()
	}
	if mp == nil {
		mp = otel.GetMeterProvider()
	}
	t := &telemetry{tracer: tp.Tracer(InstrumentationName)}
	m := mp.Meter(InstrumentationName)
	var err1, err2 error
	t.clientDuration, err1 = m.Float64Histogram(MetricClientDuration, metric.WithUnit("s"),
		metric.WithDescription("Duration of MCP requests to upstream servers."),
		metric.WithExplicitBucketBoundaries(secondsBuckets...))
	t.startDuration, err2 = m.Float64Histogram(MetricStartDuration, metric.WithUnit("s"),
		metric.WithDescription("Duration of attempts to start or connect an upstream server, by outcome."),
		metric.WithExplicitBucketBoundaries(secondsBuckets...))
	if err1 != nil || err2 != nil {
		m = metricnoop.NewMeterProvider().Meter(InstrumentationName)
		t.clientDuration, _ = m.Float64Histogram(MetricClientDuration)
		t.startDuration, _ = m.Float64Histogram(MetricStartDuration)
	}
	return t
}

// observeServers publishes how many servers are in each state, read from Status at every collection.
func (s *Source) observeServers(mp metric.MeterProvider) {
	if mp == nil {
		mp = otel.GetMeterProvider()
	}
	m := mp.Meter(InstrumentationName)
	gauge, err := m.Int64ObservableGauge(MetricServers, metric.WithUnit("{server}"),
		metric.WithDescription("Upstream MCP servers by state."))
	if err != nil {
		return
	}
	s.tel.reg, _ = m.RegisterCallback(func(_ context.Context, o metric.Observer) error {
		counts := map[State]int64{StateReady: 0, StateStarting: 0, StateFailed: 0}
		for _, st := range s.Status() {
			counts[st.State]++
		}
		for state, n := range counts {
			o.ObserveInt64(gauge, n, metric.WithAttributes(attrState.String(string(state))))
		}
		return nil
	}, gauge)
}

// transportOf is network.transport of a server: pipe for a child's standard streams, tcp for HTTP.
func (u *server) transportOf() string {
	if u.config().URL != "" {
		return "tcp"
	}
	return "pipe"
}

// startRequest starts the client span of one MCP request to the server, named as the OpenTelemetry MCP
// conventions name it: "<method> <target>" for a tool or a prompt, the method alone otherwise (a resource's URI
// goes into an attribute: as a span name it would make names without end). The session's Mcp-Session-Id is left
// out: whoever knows it can use the session.
func (u *server) startRequest(ctx context.Context, method, target string) (context.Context, trace.Span) {
	name := method
	if target != "" && (method == "tools/call" || method == "prompts/get") {
		name += " " + target
	}
	ctx, span := u.src.tel.tracer.Start(ctx, name, trace.WithSpanKind(trace.SpanKindClient))
	if span.IsRecording() {
		span.SetAttributes(attrMethod.String(method), attrServer.String(u.name), attrTransport.String(u.transportOf()))
		switch method {
		case "tools/call":
			span.SetAttributes(attrToolName.String(target), attrOperation.String("execute_tool"))
		case "prompts/get":
			span.SetAttributes(attrPromptName.String(target))
		case "resources/read", "resources/subscribe", "resources/unsubscribe":
			span.SetAttributes(attrResourceURI.String(target))
		}
	}
	return ctx, span
}

// endRequest ends a request's span and records its duration. toolError marks a result with isError.
func (u *server) endRequest(ctx context.Context, span trace.Span, began time.Time, method, target string, err error, toolError bool) {
	tel := u.src.tel
	errType := ""
	var wire *jsonrpc.Error
	switch {
	case errors.As(err, &wire):
		errType = "jsonrpc_error"
	case errors.Is(err, context.DeadlineExceeded):
		errType = "timeout"
	case err != nil:
		errType = "connection"
	case toolError:
		errType = "tool_error"
	}
	if tel.clientDuration.Enabled(ctx) {
		kvs := []attribute.KeyValue{attrMethod.String(method), attrServer.String(u.name)}
		if method == "tools/call" {
			kvs = append(kvs, attrToolName.String(target))
		}
		if errType != "" {
			kvs = append(kvs, attrErrorType.String(errType))
		}
		tel.clientDuration.Record(ctx, time.Since(began).Seconds(), metric.WithAttributes(kvs...))
	}
	if span.IsRecording() && errType != "" {
		span.SetAttributes(attrErrorType.String(errType))
		if wire != nil {
			span.SetAttributes(attrRPCStatus.Int64(wire.Code))
		}
		msg := "the tool returned an error result"
		if err != nil {
			msg = err.Error()
		}
		span.SetStatus(codes.Error, msg)
	}
	span.End()
}

// startAttempt starts the span of one attempt to start or connect the server. Start-ups happen in the
// background, so each is the root of a trace of its own.
func (u *server) startAttempt(ctx context.Context, attempt int) (context.Context, trace.Span) {
	ctx, span := u.src.tel.tracer.Start(ctx, SpanStart+" "+u.name, trace.WithNewRoot())
	if span.IsRecording() {
		span.SetAttributes(attrServer.String(u.name), attrTransport.String(u.transportOf()), attrAttempt.Int(attempt))
	}
	return ctx, span
}

// endAttempt ends an attempt's span and records how long it took.
func (u *server) endAttempt(ctx context.Context, span trace.Span, began time.Time, tools int, err error) {
	outcome := "ready"
	if err != nil {
		outcome = "failed"
	}
	if tel := u.src.tel; tel.startDuration.Enabled(ctx) {
		tel.startDuration.Record(ctx, time.Since(began).Seconds(),
			metric.WithAttributes(attrServer.String(u.name), attrOutcome.String(outcome)))
	}
	if span.IsRecording() {
		span.SetAttributes(attrOutcome.String(outcome))
		if err != nil {
			span.RecordError(err)
			span.SetStatus(codes.Error, err.Error())
		} else {
			span.SetAttributes(attrTools.Int(tools))
		}
	}
	span.End()
}
