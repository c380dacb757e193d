package runtime

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"runtime/debug"
	"strings"
	"sync"
	"time"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/toolsearch/toolsearch/catalog"
	"github.com/toolsearch/toolsearch/hostfns"
)

// Via says how the model reached a tool. Every way ends in the same pipeline.
type Via string

// The ways a real tool call reaches the pipeline.
const (
	ViaDirect   Via = "direct"    // a tool the model sees directly (off mode, direct-only, client tools in directory mode)
	ViaHydrated Via = "hydrated"  // a hidden tool the model called by its exact name (directory mode)
	ViaToolCall Via = "tool_call" // the tool_call control tool
	ViaCode     Via = "code"      // openclaw.tools.call inside tool_search_code
)

// Invocation is one real tool call as approvers and hooks see it. It is a copy: changing it changes nothing.
type Invocation struct {
	SessionID, RunID, AgentID string
	// CallID is the model's call id for direct calls, and the hidden id
	// (tool_search_code:<parentCallId>:<toolName>:<n>) for calls made through tool_call or tool_search_code.
	CallID string
	// ParentCallID is the control tool call the call came through; "" for direct and hydrated calls.
	ParentCallID string
	Via          Via
	// Tool is the resolved tool. It belongs to the run's catalog: read it, never modify it.
	Tool *catalog.Tool
	// Arguments are the call's arguments as the tool will get them, after earlier hooks' rewrites.
	Arguments json.RawMessage
	// ApprovalRequired is set when this call may not run without the approver's consent: the policy asks for it
	// (an Ask entry; ApprovalRule names it) or the tool's pinned definition changed (DefinitionChange). An
	// approver that wants to be asked only when it matters may allow other calls without asking anyone.
	ApprovalRequired bool
	ApprovalRule     string
	// DefinitionChange is set when pinning is on and the tool's definition differs from the one pinned; the
	// call only runs if the approver allows it with AcceptChange.
	DefinitionChange *DefinitionChange
}

// Decision is an Approver's answer.
type Decision struct {
	Allow  bool
	Reason string // shown to the model when the call is denied
	// AcceptChange approves the tool's changed definition (Invocation.DefinitionChange), which is pinned from
	// now on. Allow alone does not: a changed tool stays blocked until someone accepts the change itself.
	AcceptChange bool
	// By says who or what decided ("terminal", "elicitation:c2", "--yes"), for the logs and telemetry; ""
	// means the approver did not say.
	By string
	// NotAsked says the approver could ask nobody (a client that cannot show an approval): the call is blocked
	// with Reason, and recorded as ApprovalNotAsked rather than as declined, since no one said no. Ignored when
	// Allow is set.
	NotAsked bool
}

// Approver decides whether a call may run. It is asked before the hooks, for every real call, with a context
// that ends after Config.ApprovalTimeoutMs; a denial (or an error, a panic, or no answer in time) is reported
// to the model as a blocked call and the tool does not run. Only the Approver can approve: nothing the model
// sends reaches a Decision. Implementations must be safe for concurrent use.
type Approver interface {
	Approve(ctx context.Context, inv *Invocation) (Decision, error)
}

// ApproverFunc adapts a function to Approver.
type ApproverFunc func(ctx context.Context, inv *Invocation) (Decision, error)

// Approve calls f.
func (f ApproverFunc) Approve(ctx context.Context, inv *Invocation) (Decision, error) {
	return f(ctx, inv)
}

// HookResult is what a before_tool_call hook decides.
type HookResult struct {
	// Block stops the call; Reason is shown to the model.
	Block  bool
	Reason string
	// Arguments, when non-nil, replace the call's arguments for later hooks and the tool. They are validated
	// against the tool's schema like the model's own.
	Arguments json.RawMessage
}

// BeforeToolCallHook runs before every real tool call, after approval, in the order of Options.Hooks. A hook that
// blocks, fails or panics stops the call: it is reported as blocked and the tool does not run. Implementations
// must be safe for concurrent use.
type BeforeToolCallHook interface {
	BeforeToolCall(ctx context.Context, inv *Invocation) (HookResult, error)
}

// BeforeToolCallFunc adapts a function to BeforeToolCallHook.
type BeforeToolCallFunc func(ctx context.Context, inv *Invocation) (HookResult, error)

// BeforeToolCall calls f.
func (f BeforeToolCallFunc) BeforeToolCall(ctx context.Context, inv *Invocation) (HookResult, error) {
	return f(ctx, inv)
}

// Availability is implemented by handlers whose tools can go away during a run (an MCP server that crashed). A
// non-nil error makes calls fail with it, naming the tool, before approval or hooks are asked.
type Availability interface {
	Available() error
}

// outcome is what the pipeline made of one call. result is set when the tool ran and produced a result that
// passed its output contract (IsError results included); failure is set otherwise.
type outcome struct {
	tool     *catalog.Tool
	args     json.RawMessage
	result   *catalog.Result
	failure  string
	blocked  bool
	duration time.Duration
	decision CallDecision // the policy's and the approver's say, for the call's record
}

func (o *outcome) isError() bool { return o.result == nil || o.result.IsError }

// emptyObjectSchema is the schema of a tool that declares no parameters.
const emptyObjectSchema = `{"type":"object","properties":{}}`

// invoke is the one call pipeline: policy (policyStep) → availability → approval → hooks → input validation → output
// contract compiled → the tool → output contract checked → (the caller logs and counts). inv.Arguments is
// already a JSON object: what the model sent was made into one by toolArgs. A Go error is returned only when
// ctx ended; everything else is an outcome.
func (r *Run) invoke(ctx context.Context, tool *catalog.Tool, inv Invocation) (*outcome, error) {
	start := time.Now()
	out := &outcome{tool: tool, args: inv.Arguments}
	defer func() { out.duration = time.Since(start) }()
	id := tool.ID()
	inv.Tool = tool

	if msg := r.checkPolicy(ctx, tool, &inv, &out.decision); msg != "" {
		out.failure, out.blocked = msg, true
		return out, nil
	}
	if err := ctxEnded(ctx); err != nil {
		return out, err
	}
	if msg := unavailable(tool); msg != "" {
		out.failure = msg
		return out, nil
	}
	actx, span := r.rt.tel.step(ctx, SpanApproval, "")
	msg, err := r.approval(actx, tool, &inv, &out.decision)
	endApproval(span, &inv, msg)
	if msg != "" || err != nil {
		out.failure, out.blocked = msg, true
		return out, err
	}
	if err := ctxEnded(ctx); err != nil {
		return out, err
	}
	for i, h := range r.rt.hooks {
		res, err := r.traceHook(ctx, i, h, inv)
		switch {
		case err != nil:
			out.failure, out.blocked = fmt.Sprintf("Tool call blocked: before_tool_call hook %d failed: %v", i, err), true
		case res.Block:
			out.failure, out.blocked = "Tool call blocked: "+orDefault(res.Reason, "blocked by a before_tool_call hook")+".", true
		case res.Arguments != nil:
			if rewritten, ok := normalizeArgs(res.Arguments); ok {
				inv.Arguments, out.args = rewritten, rewritten
			} else {
				out.failure, out.blocked = fmt.Sprintf("Tool call blocked: before_tool_call hook %d returned arguments that are not valid JSON.", i), true
			}
		}
		if err := ctxEnded(ctx); err != nil || out.blocked {
			return out, err
		}
	}

	params := tool.Parameters
	if isNull(params) {
		params = json.RawMessage(emptyObjectSchema)
	}
	in, err := r.rt.schemas.get(params)
	if err != nil {
		r.rt.log.Warn("tool search: tool has an invalid input schema", "tool", id, "error", err)
		out.failure = fmt.Sprintf(`Tool "%s" has an invalid input schema.`, id)
		return out, nil
	}
	if value, issues, problem := checkJSON(in, inv.Arguments); problem != "" || len(issues) > 0 {
		out.failure = fmt.Sprintf("Invalid arguments for %s: %s", id, problem)
		if problem == "" {
			out.failure = invalidArguments(tool, r.inputHint(tool), value, issues)
		}
		return out, nil
	}
	// The output contract is compiled before the tool runs: a broken contract must not turn a side effect that
	// already happened into a failure the model would retry.
	var outSchema *jsonschema.Schema
	if !isNull(tool.OutputSchema) {
		if outSchema, err = r.rt.schemas.get(tool.OutputSchema); err != nil {
			r.rt.log.Warn("tool search: tool has an invalid outputSchema", "tool", id, "error", err)
			out.failure = fmt.Sprintf(`Tool "%s" has an invalid outputSchema.`, id)
			return out, nil
		}
	}

	// Validation can take a while on large arguments: the last look at the clock is right before the tool.
	if err := ctxEnded(ctx); err != nil {
		return out, err
	}
	hctx, span := r.rt.tel.step(ctx, SpanTool, "")
	res, err := callHandler(hctx, tool, inv.Arguments)
	endTool(span, res, err)
	if err != nil {
		if ended := ctxEnded(ctx); ended != nil {
			return out, ended
		}
		if p, ok := err.(*panicError); ok {
			r.rt.log.Error("tool search: tool panicked", "tool", id, "panic", p.value, "stack", string(p.stack))
		}
		out.failure = fmt.Sprintf(`Tool "%s" failed: %v`, id, err)
		return out, nil
	}
	if outSchema != nil && !res.IsError {
		if problem := r.validateOutput(ctx, outSchema, res.Details); problem != "" {
			r.rt.log.Warn("tool search: tool output does not match its outputSchema", "tool", id, "problem", problem)
			out.failure = fmt.Sprintf(`Tool "%s" returned details that do not match its declared outputSchema.`, id)
			return out, nil
		}
	}
	out.result = res
	return out, nil
}

// ctxEnded is ctx.Err(), also in the moment between ctx's deadline passing and its timer firing: the sandbox
// notices a deadline by the clock, and a turn that ran out of time must be the caller's error, not a result.
func ctxEnded(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if d, ok := ctx.Deadline(); ok && !time.Now().Before(d) {
		return context.DeadlineExceeded
	}
	return nil
}

// normalizeArgs turns absent or null arguments into {} and refuses invalid JSON.
func normalizeArgs(raw json.RawMessage) (json.RawMessage, bool) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
		return json.RawMessage("{}"), true
	}
	if !json.Valid(raw) {
		return nil, false
	}
	return raw, true
}

// unavailable explains why a tool cannot run in this process right now, or returns "".
func unavailable(tool *catalog.Tool) string {
	id := tool.ID()
	if tool.Handler == nil {
		return fmt.Sprintf(`Tool "%s" is unavailable: it has no handler in this process.`, id)
	}
	if a, ok := tool.Handler.(Availability); ok {
		if err := a.Available(); err != nil {
			return fmt.Sprintf(`Tool "%s" is unavailable: %v`, id, err)
		}
	}
	return ""
}

// panicError is a recovered panic: a failed result, never a crash.
type panicError struct {
	value any
	stack []byte
}

func (p *panicError) Error() string { return fmt.Sprintf("panic: %v", p.value) }

func callHandler(ctx context.Context, tool *catalog.Tool, args json.RawMessage) (res *catalog.Result, err error) {
	defer func() {
		if p := recover(); p != nil {
			res, err = nil, &panicError{value: p, stack: debug.Stack()}
		}
	}()
	res, err = tool.Handler.Call(ctx, args)
	if err == nil && res == nil {
		res = &catalog.Result{}
	}
	return res, err
}

// policyStep is the call-time policy check: a tool the policy denies now is treated as absent, even if it was
// in the catalog when the run started. It records the policy's verdict in d, and in inv whether an Ask entry
// holds the call for approval (which the approval step acts on), and returns why the call is blocked, or "".
func (r *Run) policyStep(tool *catalog.Tool, inv *Invocation, d *CallDecision) string {
	v := r.policy().Check(tool)
	inv.ApprovalRule, inv.ApprovalRequired = v.Entry, v.Allowed && v.Ask
	d.Policy = PolicyAllowed
	if v.Ask || v.AutoApproved != "" {
		d.Rule = v.String()
	}
	if !v.Allowed {
		d.Policy, d.Rule = PolicyDenied, v.String()
		return fmt.Sprintf("Tool call blocked: %s is not allowed by policy.", tool.ID())
	}
	return ""
}

// approval is the pipeline's consent step: the policy's Ask entries (as policyStep found them), the pinned
// definition, and the approver.
// It returns why the call is blocked ("" when it may go on), or ctx's error when the turn ended meanwhile, and
// records in rec what was asked, of whom, how long it took and what came of it.
// With pinning on, an approved call (or, without an approver, a first call) pins the tool's definition.
func (r *Run) approval(ctx context.Context, tool *catalog.Tool, inv *Invocation, rec *CallDecision) (string, error) {
	id := tool.ID()
	defer func() {
		rec.ApprovalRequired, rec.DefinitionChanged = inv.ApprovalRequired, inv.DefinitionChange != nil
	}()
	approver := r.approver()
	pins := r.rt.pins
	pinned := false
	if pins != nil {
		change, ok, err := pins.check(tool)
		if err != nil {
			r.rt.log.Error("tool search: pin file unreadable", "tool", id, "error", err)
			return fmt.Sprintf("Tool call blocked: the pinned definition of %s cannot be checked.", id), nil
		}
		pinned = ok
		if change != nil {
			inv.DefinitionChange, inv.ApprovalRequired = change, true
		}
	}
	changed := "Tool call blocked: " + orDefault(stringOf(inv.DefinitionChange), "") + "; it must be approved again."
	if approver == nil {
		switch {
		case inv.DefinitionChange != nil:
			rec.Approval = ApprovalNotAsked
			return changed, nil
		case inv.ApprovalRequired:
			rec.Approval = ApprovalNotAsked
			return fmt.Sprintf("Tool call blocked: %s needs approval (policy: %s), and no approver is configured.",
				id, inv.ApprovalRule), nil
		}
	} else {
		// Waiting for a person is not the script's doing: in code mode the script is suspended and its deadline
		// held meanwhile (outside code mode Suspend does nothing). The wait has its own bound instead: the
		// approver's context ends after approvalTimeoutMs, or when the turn or the run ends, but never at the
		// script's deadline, which a context derived from ctx would keep as its own.
		// All the approvals of one Execute (every call of a script) share that bound too, so that approvals
		// nobody answers cannot hold a turn for approvalTimeoutMs each.
		timeout := time.Duration(r.rt.cfg.ApprovalTimeoutMs) * time.Millisecond
		budget, _ := ctx.Value(approvalBudgetKey{}).(*approvalBudget)
		if budget != nil {
			if timeout = min(timeout, budget.left()); timeout <= 0 {
				rec.Approval = ApprovalNotAsked
				return fmt.Sprintf("Tool call blocked: approval of %s was not asked: the calls of this %s have waited "+
					"%d ms for approvals, the most they may together (approvalTimeoutMs).", id, ToolSearchCodeName,
					r.rt.cfg.ApprovalTimeoutMs), nil
			}
		}
		resume := hostfns.Suspend(ctx)
		// Read the clock before the timer starts: a wait cut at approvalTimeoutMs is then recorded (and spent
		// from the budget) as at least that long, however late this goroutine runs between the two.
		asked := time.Now()
		actx, cancel := context.WithTimeout(context.WithoutCancel(ctx), timeout)
		stop := context.AfterFunc(ctx, cancel)
		d, err := approve(actx, approver, *inv)
		late := actx.Err() != nil
		stop()
		cancel()
		resume()
		rec.Waited = time.Since(asked)
		r.approvalOutcome(ctx, inv, d, err, late, rec.Waited)
		if budget != nil {
			budget.spend(rec.Waited)
		}
		if err == nil {
			rec.By = d.By
		}
		switch {
		case ctx.Err() != nil:
			rec.Approval = ApprovalAbandoned
			return fmt.Sprintf("Tool call blocked: approval of %s was abandoned: the turn ended.", id), ctx.Err()
		case err != nil && late:
			rec.Approval = ApprovalTimedOut
			return fmt.Sprintf("Tool call blocked: approval of %s timed out after %d ms.", id, timeout.Milliseconds()), nil
		case err != nil:
			rec.Approval = ApprovalFailed
			return fmt.Sprintf("Tool call blocked: approval of %s failed: %v", id, err), nil
		case !d.Allow && d.NotAsked:
			rec.Approval = ApprovalNotAsked
			return "Tool call blocked: " + orDefault(d.Reason, "nobody could be asked for approval") + ".", nil
		case !d.Allow:
			rec.Approval = ApprovalDeclined
			return "Tool call blocked: " + orDefault(d.Reason, "approval denied") + ".", nil
		case inv.DefinitionChange != nil && !d.AcceptChange:
			rec.Approval = ApprovalChangeRefused
			return changed, nil
		case late:
			// An approver that ignored its context and answered late: its answer came after the call was
			// given up on, and a late yes is not a yes.
			rec.Approval = ApprovalTimedOut
			return fmt.Sprintf("Tool call blocked: approval of %s timed out after %d ms.", id, timeout.Milliseconds()), nil
		}
		rec.Approval = ApprovalApproved
	}
	if pins != nil && (!pinned || inv.DefinitionChange != nil) {
		if err := pins.pin(ctx, tool); err != nil {
			r.rt.log.Error("tool search: pinning failed", "tool", id, "error", err)
			if errors.Is(err, ErrPinFileLocked) {
				return fmt.Sprintf("Tool call blocked: the definition of %s could not be pinned: %v.", id, ErrPinFileLocked), nil
			}
			return fmt.Sprintf("Tool call blocked: the definition of %s could not be pinned.", id), nil
		}
	}
	return "", nil
}

// approvalBudget is what the approvals of one Execute may still wait, in all. Approvals waiting at once each
// count their own wait, which can only make the bound stricter.
type approvalBudget struct {
	mu     sync.Mutex
	remain time.Duration
}

type approvalBudgetKey struct{}

func (b *approvalBudget) left() time.Duration {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.remain
}

func (b *approvalBudget) spend(d time.Duration) {
	b.mu.Lock()
	b.remain -= d
	b.mu.Unlock()
}

func stringOf(c *DefinitionChange) string {
	if c == nil {
		return ""
	}
	return c.String()
}

// approve asks a, and stops waiting when ctx ends even if a does not: an approver that ignores its context must
// not hold the call (or, in code mode, the suspended script) beyond the approval's bound. Its late answer is
// dropped.
// approver is who decides this run's calls: the run's own (RunRequest.Approver), else the runtime's.
func (r *Run) approver() Approver {
	if r.req.Approver != nil {
		return r.req.Approver
	}
	return r.rt.approver
}

func approve(ctx context.Context, a Approver, inv Invocation) (Decision, error) {
	type answer struct {
		d   Decision
		err error
	}
	done := make(chan answer, 1)
	go func() {
		var ans answer
		defer func() {
			if p := recover(); p != nil {
				ans = answer{err: &panicError{value: p, stack: debug.Stack()}}
			}
			done <- ans
		}()
		ans.d, ans.err = a.Approve(ctx, &inv)
	}()
	select {
	case ans := <-done:
		return ans.d, ans.err
	case <-ctx.Done():
		return Decision{}, ctx.Err()
	}
}

func runHook(ctx context.Context, h BeforeToolCallHook, inv Invocation) (res HookResult, err error) {
	defer func() {
		if p := recover(); p != nil {
			res, err = HookResult{}, &panicError{value: p, stack: debug.Stack()}
		}
	}()
	return h.BeforeToolCall(ctx, &inv)
}

func orDefault(s, def string) string {
	s = strings.TrimRight(strings.TrimSpace(s), ".")
	if s == "" {
		return def
	}
	return s
}

// resultText is the text a tool result shows the model: its text blocks, a placeholder for other blocks, and
// the details as JSON when there is no text at all.
func resultText(res *catalog.Result) string {
	var parts []string
	for _, c := range res.Content {
		switch {
		case c.Type == "text" || (c.Type == "" && c.Text != ""):
			parts = append(parts, c.Text)
		case c.MIMEType != "":
			parts = append(parts, "["+c.Type+" "+c.MIMEType+"]")
		default:
			parts = append(parts, "["+c.Type+"]")
		}
	}
	if len(parts) == 0 && len(bytes.TrimSpace(res.Details)) > 0 {
		return compactJSON(res.Details)
	}
	if len(parts) == 0 {
		return "(no output)"
	}
	return strings.Join(parts, "\n")
}
