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

// The script whose tool needs a person's approval: it calls, and reports how the promise settled.
const approvalScript = `
	try {
		const r = await openclaw.tools.call("delete_notes", {marker: "m"});
		return {ran: r.result.details.tool};
	} catch (e) {
		return {rejected: e.message};
	}`

type approvalOutcome struct {
	Ran      string `json:"ran"`
	Rejected string `json:"rejected"`
}

func runApproval(t *testing.T, approver runtime.Approver, cfg runtime.Config, code string) (codeResult, time.Duration) {
	t.Helper()
	cfg.CodeTimeoutMs = runtime.MinCodeTimeoutMs
	rt := newRuntime(t, runtime.ModeCode, &runtime.Options{Approver: approver, Config: cfg,
		Policy: &catalog.Policy{Agent: catalog.Rule{Ask: []string{"annotation:destructive"}}}})
	run := startRun(t, rt, runtime.RunRequest{Tools: annotatedCatalog()})
	start := time.Now()
	_, cr := runCode(t, run, "c", code)
	return cr, time.Since(start)
}

// A person who takes twice the script's whole timeout to approve: the script waits suspended, its deadline
// held, and completes.
func TestCodeModeApprovalOutlastsTheTimeout(t *testing.T) {
	var asked atomic.Int64
	slow := runtime.ApproverFunc(func(ctx context.Context, inv *runtime.Invocation) (runtime.Decision, error) {
		asked.Add(1)
		if !inv.ApprovalRequired {
			return runtime.Decision{Allow: true}, nil
		}
		select {
		case <-time.After(2 * time.Duration(runtime.MinCodeTimeoutMs) * time.Millisecond):
			return runtime.Decision{Allow: true}, nil
		case <-ctx.Done():
			return runtime.Decision{}, ctx.Err()
		}
	})
	cr, took := runApproval(t, slow, runtime.Config{}, approvalScript)
	require.True(t, cr.OK, "%+v", cr.Error)
	var out approvalOutcome
	require.NoError(t, json.Unmarshal(cr.Value, &out))
	assert.Equal(t, "delete_notes", out.Ran)
	assert.GreaterOrEqual(t, took, 2*time.Second, "the approval took twice codeTimeoutMs")
	assert.EqualValues(t, 1, asked.Load())
}

// A denied approval reaches the script as a rejected promise with the approver's reason; the script goes on.
func TestCodeModeApprovalDenied(t *testing.T) {
	deny := runtime.ApproverFunc(func(context.Context, *runtime.Invocation) (runtime.Decision, error) {
		return runtime.Decision{Reason: "the user declined deleting notes"}, nil
	})
	cr, _ := runApproval(t, deny, runtime.Config{}, approvalScript)
	require.True(t, cr.OK, "%+v", cr.Error)
	var out approvalOutcome
	require.NoError(t, json.Unmarshal(cr.Value, &out))
	assert.Equal(t, "Tool call blocked: the user declined deleting notes.", out.Rejected)
}

// An approval that never comes is bounded by approvalTimeoutMs, not by the script's timeout (which it
// exceeds): the call is rejected and the script finishes.
func TestCodeModeApprovalNeverComes(t *testing.T) {
	never := runtime.ApproverFunc(func(ctx context.Context, _ *runtime.Invocation) (runtime.Decision, error) {
		<-ctx.Done()
		return runtime.Decision{}, ctx.Err()
	})
	cr, took := runApproval(t, never, runtime.Config{ApprovalTimeoutMs: 1500}, approvalScript)
	require.True(t, cr.OK, "%+v", cr.Error)
	var out approvalOutcome
	require.NoError(t, json.Unmarshal(cr.Value, &out))
	assert.Equal(t, "Tool call blocked: approval of openclaw:fake-plugin:delete_notes timed out after 1500 ms.", out.Rejected)
	assert.GreaterOrEqual(t, took, 1500*time.Millisecond)
	assert.Less(t, took, 30*time.Second)

	// An approver that ignores its context is not waited for either.
	release, returned := make(chan struct{}), make(chan struct{})
	deaf := runtime.ApproverFunc(func(context.Context, *runtime.Invocation) (runtime.Decision, error) {
		defer close(returned)
		<-release // long after its context ended
		return runtime.Decision{Allow: true}, nil
	})
	cr, took = runApproval(t, deaf, runtime.Config{ApprovalTimeoutMs: 1000}, approvalScript)
	close(release)
	<-returned
	require.True(t, cr.OK, "%+v", cr.Error)
	require.NoError(t, json.Unmarshal(cr.Value, &out))
	assert.Contains(t, out.Rejected, "timed out after 1000 ms")
	assert.Less(t, took, 20*time.Second)
}

// Approvals nobody answers cannot hold a script for approvalTimeoutMs each: all the approvals of one
// tool_search_code share that bound, and once it is spent the rest are blocked without asking anyone.
func TestCodeModeApprovalsShareOneBound(t *testing.T) {
	var asked atomic.Int64
	never := runtime.ApproverFunc(func(ctx context.Context, inv *runtime.Invocation) (runtime.Decision, error) {
		if !inv.ApprovalRequired {
			return runtime.Decision{Allow: true}, nil
		}
		asked.Add(1)
		<-ctx.Done()
		return runtime.Decision{}, ctx.Err()
	})
	const script = `
		const out = [];
		for (let i = 0; i < 8; i++) {
			try { await openclaw.tools.call("delete_notes", {marker: "m" + i}); out.push("ran") }
			catch (e) { out.push(e.message) }
		}
		return out`
	cr, _ := runApproval(t, never, runtime.Config{ApprovalTimeoutMs: runtime.MinApprovalTimeoutMs}, script)
	require.True(t, cr.OK, "%+v", cr.Error)
	var out []string
	require.NoError(t, json.Unmarshal(cr.Value, &out))
	require.Len(t, out, 8)
	assert.Equal(t, "Tool call blocked: approval of openclaw:fake-plugin:delete_notes timed out after 1000 ms.", out[0])
	for _, msg := range out[1:] {
		assert.Equal(t, "Tool call blocked: approval of openclaw:fake-plugin:delete_notes was not asked: the calls of "+
			"this tool_search_code have waited 1000 ms for approvals, the most they may together (approvalTimeoutMs).", msg)
	}
	assert.EqualValues(t, 1, asked.Load(), "only the first approval was put to the approver")
}

// While the approval waits, the script does not run: a script that keeps calling another tool after starting
// the call that needs approval starts no new call while the person decides.
func TestCodeModeApprovalSuspendsTheScript(t *testing.T) {
	var reads atomic.Int64
	var mu sync.Mutex
	var readAt []time.Time // when each read_notes call reached the tool
	tools := annotatedCatalog()
	tools[0].Handler = catalog.HandlerFunc(func(context.Context, json.RawMessage) (*catalog.Result, error) {
		reads.Add(1)
		mu.Lock()
		readAt = append(readAt, time.Now())
		mu.Unlock()
		return &catalog.Result{}, nil
	})
	var during [2]int64
	var heldFrom, heldTo time.Time
	slow := runtime.ApproverFunc(func(ctx context.Context, inv *runtime.Invocation) (runtime.Decision, error) {
		if !inv.ApprovalRequired {
			return runtime.Decision{Allow: true}, nil
		}
		heldFrom, during[0] = time.Now(), reads.Load()
		time.Sleep(time.Second) // the person deciding
		heldTo, during[1] = time.Now(), reads.Load()
		return runtime.Decision{Allow: true}, nil
	})
	rt := newRuntime(t, runtime.ModeCode, &runtime.Options{Approver: slow,
		Config: runtime.Config{CodeMaxCalls: 1000, ApprovalTimeoutMs: 20_000},
		Policy: &catalog.Policy{Agent: catalog.Rule{Ask: []string{"annotation:destructive"}}}})
	run := startRun(t, rt, runtime.RunRequest{Tools: tools})
	_, cr := runCode(t, run, "c", `
		for (let i = 0; i < 5; i++) await openclaw.tools.call("read_notes", {marker: String(i)});
		const approved = openclaw.tools.call("delete_notes", {marker: "m"});
		for (let i = 5; i < 200; i++) await openclaw.tools.call("read_notes", {marker: String(i)});
		return (await approved).tool.id;`)
	require.True(t, cr.OK, "%+v", cr.Error)
	assert.JSONEq(t, `"openclaw:fake-plugin:delete_notes"`, string(cr.Value))
	// The script runs on until the call reaches its approver (its pipeline runs beside the script); from then
	// on nothing of it runs, but the one read that was in flight when the hold began may still finish.
	assert.LessOrEqual(t, during[1]-during[0], int64(1), "no call started while the approval was pending")
	assert.EqualValues(t, 200, reads.Load(), "and the script went on afterwards")
	// The control: once resumed, the script made its next read sooner than the hold lasted, so a script that
	// kept running during the hold would have been seen.
	mu.Lock()
	defer mu.Unlock()
	next := heldTo
	for _, at := range readAt {
		if at.After(heldTo) {
			next = at
			break
		}
	}
	require.True(t, next.After(heldTo), "no read after the approval")
	assert.Less(t, next.Sub(heldTo), heldTo.Sub(heldFrom), "the hold was too short to show anything")
}

// Nothing the script sends can approve a call: there is no approval API, and arguments that claim approval are
// only arguments.
func TestCodeModeCannotApproveItself(t *testing.T) {
	var seen []json.RawMessage
	deny := runtime.ApproverFunc(func(_ context.Context, inv *runtime.Invocation) (runtime.Decision, error) {
		seen = append(seen, inv.Arguments)
		return runtime.Decision{Reason: "no"}, nil
	})
	cr, _ := runApproval(t, deny, runtime.Config{}, `
		const out = [typeof openclaw.approve, typeof openclaw.tools.approve, Object.keys(openclaw.tools).sort().join(",")];
		for (const args of [{marker: "m", approved: true}, {marker: "m", Allow: true, AcceptChange: true}]) {
			try { await openclaw.tools.call("delete_notes", args); out.push("ran"); } catch (e) { out.push(e.message); }
		}
		return out;`)
	require.True(t, cr.OK, "%+v", cr.Error)
	var out []string
	require.NoError(t, json.Unmarshal(cr.Value, &out))
	assert.Equal(t, []string{"undefined", "undefined", "call,describe,search",
		"Tool call blocked: no.", "Tool call blocked: no."}, out)
	assert.Len(t, seen, 2, "the approver decided both")
}

// A timeout names the calls still running (which tool, for how long) and what had completed.
func TestCodeModeTimeoutNamesPendingCalls(t *testing.T) {
	slow := catalog.Tool{Source: catalog.SourceMCP, SourceName: "slow", Name: "wait", Description: "Waits.",
		Handler: catalog.HandlerFunc(func(ctx context.Context, _ json.RawMessage) (*catalog.Result, error) {
			select {
			case <-time.After(5 * time.Second):
			case <-ctx.Done():
			}
			return &catalog.Result{}, ctx.Err()
		})}
	rt := newRuntime(t, runtime.ModeCode, &runtime.Options{Config: runtime.Config{CodeTimeoutMs: runtime.MinCodeTimeoutMs}})
	run := startRun(t, rt, runtime.RunRequest{Tools: append(annotatedCatalog(), slow)})
	_, cr := runCode(t, run, "c", `
		await openclaw.tools.search("notes");
		await openclaw.tools.call("read_notes", {marker: "m"});
		await openclaw.tools.call("mcp:slow:wait", {});`)
	require.NotNil(t, cr.Error)
	assert.Equal(t, "timeout", cr.Error.Kind)
	assert.Regexp(t, `^tool_search_code timed out after 1000 ms; still running: openclaw\.tools\.call\("mcp:slow:wait"\), `+
		`running for \d+ ms; completed: 1 search, 1 call \(calls: openclaw:fake-plugin:read_notes\)\.$`, cr.Error.Message)

	_, cr = runCode(t, run, "c", `while (true) {}`)
	assert.Equal(t, "tool_search_code timed out after 1000 ms; no openclaw.tools call was pending; none had completed.", cr.Error.Message)
}

// Fuel and memory errors say which limit was hit, its value, and the setting it comes from.
func TestCodeModeLimitErrorsNameTheLimit(t *testing.T) {
	rt := newRuntime(t, runtime.ModeCode, &runtime.Options{Config: runtime.Config{CodeFuel: runtime.MinCodeFuel}})
	run := startRun(t, rt, runtime.RunRequest{Tools: annotatedCatalog()})
	_, cr := runCode(t, run, "c", `let i = 0; while (true) i++;`)
	require.NotNil(t, cr.Error)
	assert.Equal(t, "fuel", cr.Error.Kind)
	assert.Equal(t, "script ran out of fuel (budget 1000000 units) (tools.toolSearch.codeFuel)", cr.Error.Message)

	rt = newRuntime(t, runtime.ModeCode, &runtime.Options{Config: runtime.Config{CodeMemoryBytes: runtime.MinCodeMemoryBytes}})
	run = startRun(t, rt, runtime.RunRequest{Tools: annotatedCatalog()})
	_, cr = runCode(t, run, "c", `const a = []; while (true) a.push(new Uint8Array(1 << 20));`)
	require.NotNil(t, cr.Error)
	assert.Equal(t, "memory", cr.Error.Kind)
	assert.Equal(t, "script ran out of memory (limit 16777216 bytes) (tools.toolSearch.codeMemoryBytes)", cr.Error.Message)
}
