package runtime_test

import (
	"context"
	"encoding/json"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolsearch/toolsearch/catalog"
	"github.com/toolsearch/toolsearch/runtime"
)

// sideEffect is a tool that ignores its context and records whether (and when) it ran.
type sideEffect struct {
	ran atomic.Int64 // Unix nanoseconds of the first run, 0 if never
}

func (s *sideEffect) tool(name string) catalog.Tool {
	return catalog.Tool{Source: catalog.SourceOpenClaw, SourceName: "core", Name: name,
		Handler: catalog.HandlerFunc(func(context.Context, json.RawMessage) (*catalog.Result, error) {
			s.ran.CompareAndSwap(0, time.Now().UnixNano())
			return &catalog.Result{Content: []catalog.Content{{Type: "text", Text: "charged the card"}}}, nil
		})}
}

// Nothing starts after its run has ended. A slow approver (or hook) that ignores its context held the call
// past the script's deadline; the tool then ran although the model had already been told the script timed out,
// so a retry would charge the card twice.
func TestNoToolStartsAfterTheRunTimedOut(t *testing.T) {
	for _, stage := range []string{"approver", "hook"} {
		t.Run(stage, func(t *testing.T) {
			release, returned := make(chan struct{}), make(chan struct{})
			slow := func() { // ignores its context on purpose, and outlives the script's deadline
				<-release
				close(returned)
			}
			// An approval does not count against the script's deadline (the script is suspended while a person
			// decides); it is bounded by approvalTimeoutMs instead, and the call is given up when that passes.
			opts := &runtime.Options{Config: runtime.Config{CodeTimeoutMs: 1000, ApprovalTimeoutMs: runtime.MinApprovalTimeoutMs}}
			if stage == "approver" {
				opts.Approver = runtime.ApproverFunc(func(context.Context, *runtime.Invocation) (runtime.Decision, error) {
					slow()
					return runtime.Decision{Allow: true}, nil
				})
			} else {
				opts.Hooks = []runtime.BeforeToolCallHook{runtime.BeforeToolCallFunc(func(context.Context, *runtime.Invocation) (runtime.HookResult, error) {
					slow()
					return runtime.HookResult{}, nil
				})}
			}
			tr := newTraced(t, runtime.ModeCode, opts)
			effect := &sideEffect{}
			run := startRun(t, tr.rt, runtime.RunRequest{Tools: []catalog.Tool{effect.tool("charge")}})
			_, cr := runCode(t, run, "1", `return await openclaw.tools.call("charge", {})`)
			require.NotNil(t, cr.Error)
			if stage == "approver" {
				assert.Equal(t, "exception", cr.Error.Kind, "the call was given up while the approver still held it")
				assert.Contains(t, cr.Error.Message, "Tool call blocked: approval of openclaw:core:charge timed out after 1000 ms.")
			} else {
				assert.Equal(t, "timeout", cr.Error.Kind, "the answer came while the %s still held the call", stage)
			}
			close(release)
			<-returned
			// The call's span ends once the pipeline has given the call up, or after the tool, had it run.
			require.Eventually(t, func() bool {
				for _, s := range tr.spans.GetSpans() {
					if s.Name == runtime.SpanCall+" openclaw:core:charge" {
						return true
					}
				}
				return false
			}, time.Minute, time.Millisecond, "the call never ended")
			assert.Zero(t, effect.ran.Load(), "the tool ran after its run had timed out")
		})
	}
}

// The bridge's context carries the run's deadline, so a tool that honours its context stops with the script.
func TestBridgeContextCarriesTheDeadline(t *testing.T) {
	var deadline time.Time
	var ok bool
	probe := catalog.Tool{Source: catalog.SourceOpenClaw, SourceName: "core", Name: "probe",
		Handler: catalog.HandlerFunc(func(ctx context.Context, _ json.RawMessage) (*catalog.Result, error) {
			deadline, ok = ctx.Deadline()
			return &catalog.Result{}, nil
		})}
	rt := newRuntime(t, runtime.ModeCode, &runtime.Options{Config: runtime.Config{CodeTimeoutMs: 3000}})
	run := startRun(t, rt, runtime.RunRequest{Tools: []catalog.Tool{probe}})
	start := time.Now()
	_, cr := runCode(t, run, "1", `await openclaw.tools.call("probe", {}); return 1`)
	require.True(t, cr.OK, "%+v", cr.Error)
	require.True(t, ok, "the tool's context has a deadline")
	assert.WithinDuration(t, start.Add(3*time.Second), deadline, 500*time.Millisecond)
}

// Close is idempotent under concurrent calls: exactly one run_end, and it is the last record.
func TestCloseWritesOneRunEndLast(t *testing.T) {
	for range 20 {
		log := newMemoryLog()
		rt := newRuntime(t, runtime.ModeTools, &runtime.Options{SessionLog: log})
		run, err := rt.StartRun(context.Background(), runtime.RunRequest{SessionID: "s", Tools: mixedTools()})
		require.NoError(t, err)
		var wg sync.WaitGroup
		for range 8 {
			wg.Add(2)
			go func() {
				defer wg.Done()
				_, _ = run.Execute(context.Background(), runtime.ToolCall{ID: "x", Name: runtime.ToolSearchName,
					Arguments: json.RawMessage(`{"query":"web"}`)})
			}()
			go func() {
				defer wg.Done()
				assert.NoError(t, run.Close())
			}()
		}
		wg.Wait()
		_ = run.Log("after", map[string]int{"n": 1}) // an embedder's record after Close
		records := log.get("s")
		var ends int
		for _, r := range records {
			if r.Type == runtime.RecordRunEnd {
				ends++
			}
		}
		require.Equal(t, 1, ends, "exactly one run_end")
		assert.Equal(t, runtime.RecordRunEnd, records[len(records)-1].Type, "nothing after run_end")
	}
}
