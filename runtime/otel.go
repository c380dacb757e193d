package runtime

import (
	"context"
	"encoding/json"
	"time"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/metric"
	metricnoop "go.opentelemetry.io/otel/metric/noop"
	"go.opentelemetry.io/otel/trace"
	tracenoop "go.opentelemetry.io/otel/trace/noop"

	"github.com/toolsearch/toolsearch/catalog"
)

// InstrumentationName is the name of the tracer and the meter of package runtime.
const InstrumentationName = "github.com/toolsearch/toolsearch/runtime"

// The span names of package runtime. A model call is a GenAI execute_tool span named after what the model
// called; the rest are ours.
const (
	SpanRun            = "toolsearch.run"             // StartRun to Close
	SpanExecuteTool    = "execute_tool"               // one model call: "execute_tool <name>"
	SpanCode           = "toolsearch.code"            // the sandbox running one tool_search_code script
	SpanSearch         = "toolsearch.search"          // one search (tool_search or openclaw.tools.search)
	SpanDescribe       = "toolsearch.describe"        // one describe
	SpanCall           = "toolsearch.call"            // one real call through the pipeline: "toolsearch.call <tool id>"
	SpanPolicy         = "toolsearch.policy"          // the policy check of a call
	SpanApproval       = "toolsearch.approval"        // the consent step: Ask entries, pins, the approver's wait
	SpanHook           = "toolsearch.hook"            // one before_tool_call hook
	SpanTool           = "toolsearch.tool"            // the tool's handler
	SpanValidateOutput = "toolsearch.validate_output" // the details checked against the outputSchema
)

// Attribute keys: the OpenTelemetry GenAI conventions where they have one, ours (toolsearch.*) elsewhere.
const (
	attrOperation    = attribute.Key("gen_ai.operation.name")
	attrToolName     = attribute.Key("gen_ai.tool.name")
	attrToolCallID   = attribute.Key("gen_ai.tool.call.id")
	attrToolArgs     = attribute.Key("gen_ai.tool.call.arguments") // opt-in: Options.TraceContent
	attrToolResult   = attribute.Key("gen_ai.tool.call.result")    // opt-in
	attrErrorType    = attribute.Key("error.type")
	attrSession      = attribute.Key("toolsearch.session.id")
	attrRun          = attribute.Key("toolsearch.run.id")
	attrAgent        = attribute.Key("toolsearch.agent.id")
	attrMode         = attribute.Key("toolsearch.mode")
	attrCatalogSize  = attribute.Key("toolsearch.catalog.size")
	attrToolID       = attribute.Key("toolsearch.tool.id")
	attrSource       = attribute.Key("toolsearch.tool.source")
	attrSourceName   = attribute.Key("toolsearch.tool.source_name")
	attrVia          = attribute.Key("toolsearch.via")
	attrParentCall   = attribute.Key("toolsearch.parent_call.id")
	attrOutcome      = attribute.Key("toolsearch.outcome")
	attrResultBytes  = attribute.Key("toolsearch.result.bytes")
	attrArgBytes     = attribute.Key("toolsearch.argument.bytes")
	attrRepairs      = attribute.Key("toolsearch.repairs")
	attrPolicy       = attribute.Key("toolsearch.policy.decision")
	attrPolicyRule   = attribute.Key("toolsearch.policy.rule")
	attrApproval     = attribute.Key("toolsearch.approval.decision")
	attrApprovalBy   = attribute.Key("toolsearch.approval.by")
	attrHookIndex    = attribute.Key("toolsearch.hook.index")
	attrQueries      = attribute.Key("toolsearch.search.queries")
	attrQueryText    = attribute.Key("toolsearch.search.query") // opt-in
	attrHits         = attribute.Key("toolsearch.search.hits")
	attrEmpty        = attribute.Key("toolsearch.search.empty")
	attrMissing      = attribute.Key("toolsearch.search.missing")
	attrCodeBytes    = attribute.Key("toolsearch.code.bytes")
	attrFuel         = attribute.Key("toolsearch.code.fuel")
	attrMemory       = attribute.Key("toolsearch.code.memory_bytes")
	attrBridged      = attribute.Key("toolsearch.code.calls")
	attrLimit        = attribute.Key("toolsearch.code.limit")
	attrSearches     = attribute.Key("toolsearch.searches")
	attrDescribes    = attribute.Key("toolsearch.describes")
	attrCalls        = attribute.Key("toolsearch.calls")
	attrVisibleTools = attribute.Key("toolsearch.visible_tools")
	attrReused       = attribute.Key("toolsearch.catalog.reused")
	attrNotApplied   = attribute.Key("toolsearch.not_applied")
)

// The metric names of package runtime.
const (
	MetricModelCalls    = "toolsearch.model.calls"        // every Execute, by gen_ai.tool.name and outcome
	MetricToolCalls     = "toolsearch.tool.calls"         // real calls, by tool, server, via and outcome
	MetricToolDuration  = "toolsearch.tool.call.duration" // s, the same attributes
	MetricSearches      = "toolsearch.searches"           // by via and whether nothing was found
	MetricSearchHits    = "toolsearch.search.hits"        // hits returned per search
	MetricDescribes     = "toolsearch.describes"
	MetricCodeRuns      = "toolsearch.code.runs"     // tool_search_code scripts, by outcome (ok or the limit that ended it)
	MetricCodeFuel      = "toolsearch.code.fuel"     // fuel per script
	MetricCodeMemory    = "toolsearch.code.memory"   // By, peak memory per script
	MetricCodeDuration  = "toolsearch.code.duration" // s
	MetricApprovals     = "toolsearch.approvals"     // approver answers, by decision
	MetricApprovalWait  = "toolsearch.approval.wait" // s
	MetricRepairs       = "toolsearch.repairs"       // mistakes in the model's requests repaired, by kind
	MetricRuns          = "toolsearch.runs"          // runs started, by mode
	MetricCatalogSize   = "toolsearch.catalog.size"  // tools in the catalog of the latest run started
	instrumentationUnit = "{call}"
)

// secondsBuckets suit tool calls and approvals, which last from microseconds (in-process) to minutes (a person).
var secondsBuckets = []float64{0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300}

// telemetry is the runtime's tracer and instruments. Every instrument works when the providers are no-ops, and
// costs a branch then: attributes are built only for a span that records or an instrument that is enabled.
type telemetry struct {
	tracer  trace.Tracer
	content bool
	// traceless is set for the no-op tracer provider (what the toolsearch command passes when no OTEL_* variable
	// is set): spans are then not started at all, since even a no-op Start allocates a context for its span.
	traceless bool

	modelCalls, toolCalls, searches, describes, codeRuns, approvals, repairs, runs metric.Int64Counter
	toolDuration, codeDuration, approvalWait                                       metric.Float64Histogram
	searchHits, codeFuel, codeMemory                                               metric.Int64Histogram
	catalogSize                                                                    metric.Int64Gauge
}

// noSpan is what a step gets when its call is not traced: ending it does nothing.
var noSpan = trace.SpanFromContext(context.Background())

func newTelemetry(tp trace.TracerProvider, mp metric.MeterProvider, content bool) *telemetry {
	if tp == nil {
		tp = otel.GetTracerProvider()
	}
	if mp == nil {
		mp = otel.GetMeterProvider()
	}
	_, traceless := tp.(tracenoop.TracerProvider)
	t := &telemetry{tracer: tp.Tracer(InstrumentationName), content: content, traceless: traceless}
	m := mp.Meter(InstrumentationName)
	if !t.instruments(m) {
		// Only a meter that refuses valid instruments gets here; telemetry is not worth failing New for.
		t.instruments(metricnoop.NewMeterProvider().Meter(InstrumentationName))
	}
	return t
}

func (t *telemetry) instruments(m metric.Meter) bool {
	var errs [15]error
	t.modelCalls, errs[0] = m.Int64Counter(MetricModelCalls, metric.WithUnit("{call}"),
		metric.WithDescription("Calls the model made (control tools and directly visible tools)."))
	t.toolCalls, errs[1] = m.Int64Counter(MetricToolCalls, metric.WithUnit("{call}"),
		metric.WithDescription("Real tool calls through the pipeline, by tool, server, via and outcome."))
	t.toolDuration, errs[2] = m.Float64Histogram(MetricToolDuration, metric.WithUnit("s"),
		metric.WithDescription("Duration of real tool calls, approval and hooks included."),
		metric.WithExplicitBucketBoundaries(secondsBuckets...))
	t.searches, errs[3] = m.Int64Counter(MetricSearches, metric.WithUnit("{search}"),
		metric.WithDescription("Catalog searches, by via and whether they found nothing."))
	t.searchHits, errs[4] = m.Int64Histogram(MetricSearchHits, metric.WithUnit("{hit}"),
		metric.WithDescription("Hits returned by one search."),
		metric.WithExplicitBucketBoundaries(0, 1, 2, 3, 5, 10, 20, 50))
	t.describes, errs[5] = m.Int64Counter(MetricDescribes, metric.WithUnit("{describe}"),
		metric.WithDescription("Tool describes, by via and outcome."))
	t.codeRuns, errs[6] = m.Int64Counter(MetricCodeRuns, metric.WithUnit("{run}"),
		metric.WithDescription("tool_search_code scripts, by outcome: ok, or the kind of error or limit that ended them."))
	t.codeFuel, errs[7] = m.Int64Histogram(MetricCodeFuel, metric.WithUnit("{fuel}"),
		metric.WithDescription("Fuel one tool_search_code script used."),
		metric.WithExplicitBucketBoundaries(1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10))
	t.codeMemory, errs[8] = m.Int64Histogram(MetricCodeMemory, metric.WithUnit("By"),
		metric.WithDescription("Peak sandbox memory of one tool_search_code script."),
		metric.WithExplicitBucketBoundaries(1<<20, 2<<20, 4<<20, 8<<20, 16<<20, 32<<20, 64<<20, 128<<20, 256<<20))
	t.codeDuration, errs[9] = m.Float64Histogram(MetricCodeDuration, metric.WithUnit("s"),
		metric.WithDescription("Wall time of one tool_search_code script."),
		metric.WithExplicitBucketBoundaries(secondsBuckets...))
	t.approvals, errs[10] = m.Int64Counter(MetricApprovals, metric.WithUnit("{approval}"),
		metric.WithDescription("Approvals asked of the approver, by decision: granted, declined, not_asked, timeout, error, abandoned."))
	t.approvalWait, errs[11] = m.Float64Histogram(MetricApprovalWait, metric.WithUnit("s"),
		metric.WithDescription("How long calls waited for the approver."),
		metric.WithExplicitBucketBoundaries(secondsBuckets...))
	t.repairs, errs[12] = m.Int64Counter(MetricRepairs, metric.WithUnit("{repair}"),
		metric.WithDescription("Mistakes in the model's requests that were repaired, by kind."))
	t.runs, errs[13] = m.Int64Counter(MetricRuns, metric.WithUnit("{run}"), metric.WithDescription("Runs started, by mode."))
	t.catalogSize, errs[14] = m.Int64Gauge(MetricCatalogSize, metric.WithUnit("{tool}"),
		metric.WithDescription("Tools in the catalog of the latest run started."))
	for _, err := range errs {
		if err != nil {
			return false
		}
	}
	return true
}

// step starts the span of a step inside a traced call ("name target", or name alone). A step of a call that
// is not traced gets noSpan and costs no allocation: the sampler decided at the call, and its steps follow.
func (t *telemetry) step(ctx context.Context, name, target string) (context.Context, trace.Span) {
	if !trace.SpanFromContext(ctx).IsRecording() {
		return ctx, noSpan
	}
	if target != "" {
		name += " " + target
	}
	return t.tracer.Start(ctx, name)
}

// fail marks a span failed with a reason and an error.type.
func fail(span trace.Span, kind, reason string) {
	span.SetAttributes(attrErrorType.String(kind))
	span.SetStatus(codes.Error, reason)
}

// startRunSpan starts the span of a run, a child of StartRun's context.
func (r *Run) startRunSpan(ctx context.Context) {
	tel := r.rt.tel
	if tel.traceless {
		r.span = noSpan
	} else {
		_, r.span = tel.tracer.Start(ctx, SpanRun)
	}
	if tel.runs.Enabled(ctx) {
		tel.runs.Add(ctx, 1, metric.WithAttributes(attrMode.String(string(r.mode))))
	}
	if tel.catalogSize.Enabled(ctx) {
		tel.catalogSize.Record(ctx, int64(r.catalogSize()))
	}
	if !r.span.IsRecording() {
		return
	}
	r.span.SetAttributes(attrSession.String(r.req.SessionID), attrRun.String(r.req.RunID),
		attrAgent.String(r.req.AgentID), attrMode.String(string(r.mode)), attribute.String("toolsearch.requested_mode",
			string(r.requestedMode)), attrCatalogSize.Int(r.catalogSize()), attrReused.Bool(r.reused),
		attrVisibleTools.Int(len(r.visible)))
	if r.notApplied != "" {
		r.span.SetAttributes(attrNotApplied.String(r.notApplied))
	}
}

// endRunSpan ends the run's span with its totals.
func (r *Run) endRunSpan(t Telemetry) {
	if r.span.IsRecording() {
		r.span.SetAttributes(attrSearches.Int64(t.SearchCount), attrDescribes.Int64(t.DescribeCount),
			attrCalls.Int64(t.CallCount), attrRepairs.Int64(t.RepairCount), attrFuel.Int64(int64(t.Sandbox.Fuel)),
			attrMemory.Int64(int64(t.Sandbox.PeakMemoryBytes)))
	}
	r.span.End()
}

// startModelCall starts the span of one model call. Its parent is the caller's span; a caller without one (a
// gateway that traces nothing itself) gets it under the run's span, so that the calls of a turn form one trace.
func (r *Run) startModelCall(ctx context.Context, call ToolCall) (context.Context, trace.Span) {
	if r.rt.tel.traceless {
		return ctx, noSpan
	}
	if !trace.SpanContextFromContext(ctx).IsValid() && r.span.SpanContext().IsValid() {
		ctx = trace.ContextWithSpan(ctx, r.span)
	}
	ctx, span := r.rt.tel.tracer.Start(ctx, executeSpanName(call.Name))
	if span.IsRecording() {
		span.SetAttributes(attrOperation.String("execute_tool"), attrToolName.String(call.Name),
			attrToolCallID.String(call.ID), attrSession.String(r.req.SessionID), attrRun.String(r.req.RunID),
			attrMode.String(string(r.mode)), attrCatalogSize.Int(r.catalogSize()))
		if r.rt.tel.content {
			span.SetAttributes(attrToolArgs.String(string(call.Arguments)))
		}
	}
	return ctx, span
}

// executeSpanName is "execute_tool <name>", without building the string for the control tools.
func executeSpanName(name string) string {
	switch name {
	case ToolSearchCodeName:
		return SpanExecuteTool + " " + ToolSearchCodeName
	case ToolSearchName:
		return SpanExecuteTool + " " + ToolSearchName
	case ToolDescribeName:
		return SpanExecuteTool + " " + ToolDescribeName
	case ToolCallName:
		return SpanExecuteTool + " " + ToolCallName
	}
	return SpanExecuteTool + " " + name
}

// endModelCall ends a model call's span and counts the call.
func (r *Run) endModelCall(ctx context.Context, span trace.Span, call ToolCall, res *CallResult, err error) {
	tel := r.rt.tel
	outcome := "ok"
	switch {
	case err != nil:
		outcome = "aborted"
	case res.Blocked:
		outcome = "blocked"
	case res.IsError:
		outcome = "error"
	}
	if tel.modelCalls.Enabled(ctx) {
		tel.modelCalls.Add(ctx, 1, metric.WithAttributes(attrToolName.String(call.Name), attrOutcome.String(outcome)))
	}
	if span.IsRecording() {
		span.SetAttributes(attrOutcome.String(outcome))
		switch {
		case err != nil:
			span.RecordError(err)
			fail(span, "aborted", err.Error())
		case res != nil:
			span.SetAttributes(attrResultBytes.Int(len(res.Content)))
			if tel.content {
				span.SetAttributes(attrToolResult.String(res.Content))
			}
			if res.IsError {
				fail(span, outcome, firstLine(res.Content))
			}
		}
	}
	span.End()
}

// startCall starts the span of a real call through the pipeline.
func (r *Run) startCall(ctx context.Context, t *catalog.Tool, inv *Invocation) (context.Context, trace.Span) {
	ctx, span := r.rt.tel.step(ctx, SpanCall, t.ID())
	if span.IsRecording() {
		span.SetAttributes(attrToolName.String(t.Name), attrToolCallID.String(inv.CallID), attrToolID.String(t.ID()),
			attrSource.String(string(t.Source)), attrSourceName.String(t.SourceName), attrVia.String(string(inv.Via)))
		if inv.ParentCallID != "" {
			span.SetAttributes(attrParentCall.String(inv.ParentCallID))
		}
	}
	return ctx, span
}

// endCall ends a real call's span and records its metrics.
func (r *Run) endCall(ctx context.Context, span trace.Span, c *CallRecord, out *outcome) {
	tel := r.rt.tel
	outcome := "ok"
	switch {
	case c.Blocked:
		outcome = "blocked"
	case c.IsError:
		outcome = "error"
	}
	if tel.toolCalls.Enabled(ctx) || tel.toolDuration.Enabled(ctx) {
		set := metric.WithAttributeSet(attribute.NewSet(attrToolID.String(c.ToolID), attrSource.String(string(c.Source)),
			attrSourceName.String(c.SourceName), attrVia.String(string(c.Via)), attrOutcome.String(outcome)))
		tel.toolCalls.Add(ctx, 1, set)
		tel.toolDuration.Record(ctx, c.Duration.Seconds(), set)
	}
	if span.IsRecording() {
		span.SetAttributes(attrOutcome.String(outcome), attrArgBytes.Int(c.ArgumentBytes))
		if tel.content && out != nil {
			span.SetAttributes(attrToolArgs.String(string(out.args)))
			if out.result != nil {
				span.SetAttributes(attrToolResult.String(resultText(out.result)))
			}
		}
		if c.IsError {
			reason := c.Error
			if reason == "" {
				reason = "the tool returned an error result"
			}
			fail(span, outcome, reason)
		}
	}
	span.End()
}

// approvalOutcome names what became of one question to the approver, for the span and the metrics.
func (r *Run) approvalOutcome(ctx context.Context, inv *Invocation, d Decision, err error, late bool, waited time.Duration) {
	decision := "granted"
	switch {
	case ctx.Err() != nil:
		decision = "abandoned"
	case err != nil && late:
		decision = "timeout"
	case err != nil:
		decision = "error"
	case !d.Allow && d.NotAsked:
		decision = "not_asked"
	case !d.Allow, inv.DefinitionChange != nil && !d.AcceptChange:
		decision = "declined"
	case late:
		decision = "timeout"
	}
	tel := r.rt.tel
	if tel.approvals.Enabled(ctx) || tel.approvalWait.Enabled(ctx) {
		set := metric.WithAttributeSet(attribute.NewSet(attrApproval.String(decision)))
		tel.approvals.Add(ctx, 1, set)
		tel.approvalWait.Record(ctx, waited.Seconds(), set)
	}
	if span := trace.SpanFromContext(ctx); span.IsRecording() {
		span.SetAttributes(attrApproval.String(decision))
		if d.By != "" {
			span.SetAttributes(attrApprovalBy.String(d.By))
		}
	}
}

// endApproval ends the consent step's span: whether approval was required, by which rule, and why it blocked.
func endApproval(span trace.Span, inv *Invocation, blocked string) {
	if span.IsRecording() {
		span.SetAttributes(attribute.Bool("toolsearch.approval.required", inv.ApprovalRequired))
		if inv.ApprovalRule != "" {
			span.SetAttributes(attrPolicyRule.String(inv.ApprovalRule))
		}
		if inv.DefinitionChange != nil {
			span.SetAttributes(attribute.Bool("toolsearch.approval.definition_changed", true))
		}
		if blocked != "" {
			fail(span, "blocked", blocked)
		}
	}
	span.End()
}

// endSearch ends a search's span and counts it.
func (r *Run) endSearch(ctx context.Context, span trace.Span, info *SearchInfo) {
	tel := r.rt.tel
	empty := len(info.Hits) == 0
	if tel.searches.Enabled(ctx) || tel.searchHits.Enabled(ctx) {
		tel.searches.Add(ctx, 1, metric.WithAttributes(attrVia.String(string(info.Via)), attrEmpty.Bool(empty)))
		tel.searchHits.Record(ctx, int64(len(info.Hits)), metric.WithAttributes(attrVia.String(string(info.Via))))
	}
	if span.IsRecording() {
		span.SetAttributes(attrVia.String(string(info.Via)), attrQueries.Int(len(info.Queries)),
			attrHits.Int(len(info.Hits)), attrEmpty.Bool(empty), attrCatalogSize.Int(r.catalogSize()),
			attribute.Int("toolsearch.search.limit", info.Limit))
		if len(info.Missing) > 0 {
			span.SetAttributes(attrMissing.StringSlice(info.Missing))
		}
		if tel.content {
			span.SetAttributes(attrQueryText.StringSlice(info.Queries))
		}
		if info.Error != "" {
			fail(span, "search_failed", info.Error)
		}
	}
	span.End()
}

// endDescribe ends a describe's span and counts it.
func (r *Run) endDescribe(ctx context.Context, span trace.Span, info *DescribeInfo) {
	tel := r.rt.tel
	outcome := "ok"
	if info.Error != "" {
		outcome = "error"
	}
	if tel.describes.Enabled(ctx) {
		tel.describes.Add(ctx, 1, metric.WithAttributes(attrVia.String(string(info.Via)), attrOutcome.String(outcome)))
	}
	if span.IsRecording() {
		span.SetAttributes(attrVia.String(string(info.Via)), attrToolID.String(info.ToolID), attrOutcome.String(outcome))
		if info.Error != "" {
			fail(span, "describe_failed", info.Error)
		}
	}
	span.End()
}

// endCode ends the span of a sandbox run and records what it used and what ended it.
func (r *Run) endCode(ctx context.Context, span trace.Span, info *CodeInfo, message string) {
	tel := r.rt.tel
	outcome := "ok"
	if !info.OK {
		outcome = info.ErrorKind
	}
	if tel.codeRuns.Enabled(ctx) {
		set := metric.WithAttributeSet(attribute.NewSet(attrOutcome.String(outcome)))
		tel.codeRuns.Add(ctx, 1, set)
		tel.codeFuel.Record(ctx, int64(info.Fuel), set)
		tel.codeMemory.Record(ctx, int64(info.MemoryBytes), set)
		tel.codeDuration.Record(ctx, info.Wall.Seconds(), set)
	}
	if span.IsRecording() {
		span.SetAttributes(attrOutcome.String(outcome), attrCodeBytes.Int(info.CodeBytes), attrFuel.Int64(int64(info.Fuel)),
			attrMemory.Int64(int64(info.MemoryBytes)), attrBridged.Int(info.Bridged),
			attribute.Float64("toolsearch.code.wall_ms", float64(info.Wall.Microseconds())/1000))
		if !info.OK {
			span.SetAttributes(attrLimit.String(info.ErrorKind))
			fail(span, info.ErrorKind, message)
		}
	}
	span.End()
}

// noteRepair marks one repair on the span of the request it was made in, and counts it.
func (r *Run) noteRepair(ctx context.Context, rec *Repair) {
	tel := r.rt.tel
	if tel.repairs.Enabled(ctx) {
		tel.repairs.Add(ctx, 1, metric.WithAttributes(attribute.String("toolsearch.repair.kind", string(rec.Kind))))
	}
	if span := trace.SpanFromContext(ctx); span.IsRecording() {
		span.AddEvent("toolsearch.repair", trace.WithAttributes(attribute.String("toolsearch.repair.kind", string(rec.Kind)),
			attribute.String("toolsearch.repair.op", rec.Op), attrToolID.String(rec.ToolID)))
	}
}

// recordIn is record with the ids of ctx's span, so that a session-log record and its span find each other. A
// span the sampler left out is in no backend, so its ids would lead nowhere.
func (r *Run) recordIn(ctx context.Context, rec Record) {
	if sc := trace.SpanContextFromContext(ctx); sc.IsSampled() {
		rec.TraceID, rec.SpanID = sc.TraceID().String(), sc.SpanID().String()
	}
	r.record(rec)
}

// firstLine is a status description short enough for a span: the first line, at most 200 bytes.
func firstLine(s string) string {
	for i := 0; i < len(s); i++ {
		if s[i] == '\n' {
			s = s[:i]
			break
		}
	}
	if len(s) > 200 {
		s = s[:200]
	}
	return s
}

// checkPolicy is the policy step of the pipeline: whether the run's policy allows the tool now.
func (r *Run) checkPolicy(ctx context.Context, tool *catalog.Tool, inv *Invocation, d *CallDecision) string {
	_, span := r.rt.tel.step(ctx, SpanPolicy, "")
	blocked := r.policyStep(tool, inv, d)
	if span.IsRecording() {
		decision := "allow"
		if blocked != "" {
			decision = "deny"
			span.SetAttributes(attrPolicyRule.String(d.Rule))
		} else if inv.ApprovalRequired {
			decision = "ask"
			span.SetAttributes(attrPolicyRule.String(inv.ApprovalRule))
		}
		span.SetAttributes(attrPolicy.String(decision))
		trace.SpanFromContext(ctx).SetAttributes(attrPolicy.String(decision))
		if blocked != "" {
			fail(span, "denied", "not allowed by policy")
		}
	}
	span.End()
	return blocked
}

// traceHook runs one before_tool_call hook in a span of its own.
func (r *Run) traceHook(ctx context.Context, i int, h BeforeToolCallHook, inv Invocation) (HookResult, error) {
	ctx, span := r.rt.tel.step(ctx, SpanHook, "")
	res, err := runHook(ctx, h, inv)
	if span.IsRecording() {
		outcome := "passed"
		switch {
		case err != nil:
			outcome = "failed"
			fail(span, "hook_failed", err.Error())
		case res.Block:
			outcome = "blocked"
			fail(span, "blocked", orDefault(res.Reason, "blocked by a before_tool_call hook"))
		case res.Arguments != nil:
			outcome = "rewrote"
		}
		span.SetAttributes(attrHookIndex.Int(i), attrOutcome.String(outcome))
	}
	span.End()
	return res, err
}

// endTool ends the span of a tool's handler.
func endTool(span trace.Span, res *catalog.Result, err error) {
	if span.IsRecording() {
		switch {
		case err != nil:
			span.RecordError(err)
			fail(span, "tool_failed", err.Error())
		case res.IsError:
			fail(span, "tool_error", "the tool returned an error result")
		}
	}
	span.End()
}

// validateOutput is the output-contract step: validateJSON in a span of its own.
func (r *Run) validateOutput(ctx context.Context, schema *jsonschema.Schema, details json.RawMessage) string {
	_, span := r.rt.tel.step(ctx, SpanValidateOutput, "")
	problem := validateJSON(schema, details)
	if problem != "" && span.IsRecording() {
		fail(span, "output_invalid", problem)
	}
	span.End()
	return problem
}
