package runtime_test

import (
	"context"
	"encoding/json"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolsearch/toolsearch/catalog"
	"github.com/toolsearch/toolsearch/runtime"
)

// lateTimer is a turn whose deadline passes while its timer has not fired yet: Deadline says when, Done stays
// open and Err stays nil. With a real deadline that moment lasts microseconds; here it lasts as long as the test
// needs, so each of the pipeline's looks at the clock can be caught missing.
type lateTimer struct {
	context.Context
	deadline time.Time
}

func (c lateTimer) Deadline() (time.Time, bool) { return c.deadline, true }

// deadlineIn is a lateTimer whose deadline is d from now. The steps before the one a test holds open take far
// less than d; had they taken more, an earlier check stops the call and the test still passes.
func deadlineIn(d time.Duration) lateTimer {
	return lateTimer{Context: context.Background(), deadline: time.Now().Add(d)}
}

// waitPast returns once the clock has passed ctx's deadline.
func waitPast(ctx context.Context) {
	d, _ := ctx.Deadline()
	for time.Now().Before(d) {
		time.Sleep(time.Until(d) + time.Millisecond)
	}
}

// pipelineProbe counts who the pipeline asked: the approver, each hook, and the tool.
type pipelineProbe struct {
	approvals, tool atomic.Int32
	hooks           [2]atomic.Int32
	// inApproval and inHook[i] run inside the approver and hook i, with the turn's context.
	inApproval func(context.Context)
	inHook     [2]func(context.Context)
}

func (p *pipelineProbe) options() *runtime.Options {
	o := &runtime.Options{
		Approver: runtime.ApproverFunc(func(ctx context.Context, _ *runtime.Invocation) (runtime.Decision, error) {
			p.approvals.Add(1)
			if p.inApproval != nil {
				p.inApproval(ctx)
			}
			return runtime.Decision{Allow: true}, nil
		}),
	}
	for i := range p.hooks {
		o.Hooks = append(o.Hooks, runtime.BeforeToolCallFunc(func(ctx context.Context, _ *runtime.Invocation) (runtime.HookResult, error) {
			p.hooks[i].Add(1)
			if p.inHook[i] != nil {
				p.inHook[i](ctx)
			}
			return runtime.HookResult{}, nil
		}))
	}
	return o
}

func (p *pipelineProbe) tools() []catalog.Tool {
	return []catalog.Tool{{Source: catalog.SourceOpenClaw, SourceName: "core", Name: "side_effect",
		Parameters:   json.RawMessage(`{"type":"object"}`),
		OutputSchema: json.RawMessage(`{"type":"object","properties":{"n":{"type":"integer"}}}`),
		Handler: catalog.HandlerFunc(func(context.Context, json.RawMessage) (*catalog.Result, error) {
			p.tool.Add(1)
			return &catalog.Result{Details: json.RawMessage(`{"n":1}`)}, nil
		})}}
}

// TestTurnEndedBeforeApprovalAsksNoOne: a call that arrives after its turn's deadline asks no approver (a person
// would be asked about a call that cannot happen), runs no hook and no tool, and is the caller's error.
func TestTurnEndedBeforeApprovalAsksNoOne(t *testing.T) {
	p := &pipelineProbe{}
	run := startRun(t, newRuntime(t, runtime.ModeOff, p.options()), runtime.RunRequest{Tools: p.tools()})
	ctx := deadlineIn(-time.Millisecond)
	_, err := run.Execute(ctx, runtime.ToolCall{ID: "1", Name: "side_effect"})
	require.ErrorIs(t, err, context.DeadlineExceeded)
	assert.Zero(t, p.approvals.Load(), "the approver was asked after the turn ended")
	assert.Zero(t, p.hooks[0].Load()+p.hooks[1].Load(), "a hook ran after the turn ended")
	assert.Zero(t, p.tool.Load(), "the tool ran after the turn ended")
}

// TestTurnEndedDuringApprovalRunsNoHook: a deadline that passes while the approver decides stops the call before
// the hooks; the approver's yes does not outlive the turn.
func TestTurnEndedDuringApprovalRunsNoHook(t *testing.T) {
	p := &pipelineProbe{}
	ctx := deadlineIn(200 * time.Millisecond)
	p.inApproval = func(context.Context) { waitPast(ctx) } // the approver's own context has no deadline to wait on
	run := startRun(t, newRuntime(t, runtime.ModeOff, p.options()), runtime.RunRequest{Tools: p.tools()})
	_, err := run.Execute(ctx, runtime.ToolCall{ID: "1", Name: "side_effect"})
	require.ErrorIs(t, err, context.DeadlineExceeded)
	assert.Equal(t, int32(1), p.approvals.Load())
	assert.Zero(t, p.hooks[0].Load()+p.hooks[1].Load(), "a hook ran after the turn ended during approval")
	assert.Zero(t, p.tool.Load(), "the tool ran after the turn ended during approval")
}

// TestTurnEndedDuringAHookRunsNoLaterHook: a deadline that passes inside a hook stops the call before the next.
func TestTurnEndedDuringAHookRunsNoLaterHook(t *testing.T) {
	p := &pipelineProbe{}
	p.inHook[0] = waitPast
	run := startRun(t, newRuntime(t, runtime.ModeOff, p.options()), runtime.RunRequest{Tools: p.tools()})
	_, err := run.Execute(deadlineIn(200*time.Millisecond), runtime.ToolCall{ID: "1", Name: "side_effect"})
	require.ErrorIs(t, err, context.DeadlineExceeded)
	assert.Equal(t, int32(1), p.hooks[0].Load())
	assert.Zero(t, p.hooks[1].Load(), "the second hook ran after the turn ended in the first")
	assert.Zero(t, p.tool.Load(), "the tool ran after the turn ended in a hook")
}

// TestTurnEndedDuringValidationRunsNoTool: a deadline that passes while the call's schemas are compiled and
// checked (large arguments, a large contract) stops the call right before the tool.
func TestTurnEndedDuringValidationRunsNoTool(t *testing.T) {
	p := &pipelineProbe{}
	rt := newRuntime(t, runtime.ModeOff, p.options())
	ctx := deadlineIn(200 * time.Millisecond)
	var armed, held atomic.Bool
	rt.OnSchemaCompile(func() {
		if armed.Load() {
			held.Store(true)
			waitPast(ctx)
		}
	})
	run := startRun(t, rt, runtime.RunRequest{Tools: p.tools()})
	armed.Store(true) // the output contract is compiled at the tool's first call, after every hook
	_, err := run.Execute(ctx, runtime.ToolCall{ID: "1", Name: "side_effect"})
	require.ErrorIs(t, err, context.DeadlineExceeded)
	require.True(t, held.Load(), "the call compiled the output contract")
	assert.Equal(t, int32(2), p.hooks[0].Load()+p.hooks[1].Load())
	assert.Zero(t, p.tool.Load(), "the tool ran after the turn ended during validation")
}
