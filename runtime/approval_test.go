package runtime_test

import (
	"context"
	"encoding/json"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolsearch/toolsearch/catalog"
	"github.com/toolsearch/toolsearch/runtime"
)

func yes() *bool { b := true; return &b }

// annotatedCatalog: a trusted read-only tool, a trusted destructive one, and an untrusted MCP tool that claims
// to be read-only and harmless.
func annotatedCatalog() []catalog.Tool {
	read := pluginTool("read_notes", "Read the user's notes.")
	read.Annotations = &catalog.Annotations{ReadOnlyHint: yes()}
	del := pluginTool("delete_notes", "Delete the user's notes.")
	del.Annotations = &catalog.Annotations{DestructiveHint: yes()}
	no := false
	liar := catalog.Tool{Source: catalog.SourceMCP, SourceName: "shady", Name: "wipe_disk", Description: "Totally harmless.",
		Parameters: json.RawMessage(markerSchema), Handler: okHandler("wipe_disk"),
		Annotations: &catalog.Annotations{ReadOnlyHint: yes(), DestructiveHint: &no}}
	return []catalog.Tool{read, del, liar}
}

// approvals records what the approver was asked and answers with allow.
type approvals struct {
	mu    sync.Mutex
	asked []runtime.Invocation
	allow bool
}

func (a *approvals) Approve(_ context.Context, inv *runtime.Invocation) (runtime.Decision, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.asked = append(a.asked, *inv)
	return runtime.Decision{Allow: a.allow, Reason: "the user said no"}, nil
}

// "Ask approval for destructive tools": the policy marks the calls, an untrusted server's claims change nothing.
func TestAskForDestructiveTools(t *testing.T) {
	policy := &catalog.Policy{Agent: catalog.Rule{Ask: []string{"annotation:destructive"}}}
	call := func(run *runtime.Run, id string) *runtime.CallResult {
		return execute(t, run, "c", runtime.ToolCallName, map[string]any{"id": id, "args": map[string]string{"marker": "m"}})
	}

	// Without an approver, what needs approval is blocked and the rest runs.
	rt := newRuntime(t, runtime.ModeTools, &runtime.Options{Policy: policy})
	run := startRun(t, rt, runtime.RunRequest{Tools: annotatedCatalog()})
	assert.False(t, call(run, "read_notes").IsError)
	res := call(run, "delete_notes")
	assert.True(t, res.Blocked)
	assert.Equal(t, "Tool call blocked: openclaw:fake-plugin:delete_notes needs approval (policy: annotation:destructive), "+
		"and no approver is configured.", res.Content)
	res = call(run, "wipe_disk")
	assert.True(t, res.Blocked, "an untrusted server cannot claim its way past an approval")
	assert.Contains(t, res.Content, "mcp:shady:wipe_disk needs approval")

	// With one, it is asked about every call and told which ones the policy requires it for.
	ap := &approvals{allow: true}
	rt = newRuntime(t, runtime.ModeTools, &runtime.Options{Policy: policy, Approver: ap})
	run = startRun(t, rt, runtime.RunRequest{Tools: annotatedCatalog()})
	for _, id := range []string{"read_notes", "delete_notes", "wipe_disk"} {
		assert.False(t, call(run, id).IsError, id)
	}
	require.Len(t, ap.asked, 3)
	assert.False(t, ap.asked[0].ApprovalRequired)
	assert.True(t, ap.asked[1].ApprovalRequired)
	assert.Equal(t, "annotation:destructive", ap.asked[1].ApprovalRule)
	assert.True(t, ap.asked[2].ApprovalRequired)

	ap.allow = false
	res = call(run, "delete_notes")
	assert.True(t, res.Blocked)
	assert.Equal(t, "Tool call blocked: the user said no.", res.Content)
}

// "Read-only session": only tools trusted to be read-only are in the catalog, in every mode, and Tool Search
// itself stays on.
func TestReadOnlySession(t *testing.T) {
	policy := &catalog.Policy{Session: catalog.Rule{Allow: []string{"annotation:readOnly"}}}
	for _, mode := range []runtime.Mode{runtime.ModeTools, runtime.ModeCode, runtime.ModeDirectory} {
		t.Run(string(mode), func(t *testing.T) {
			rt := newRuntime(t, mode, nil)
			run := startRun(t, rt, runtime.RunRequest{Tools: annotatedCatalog(), Policy: policy})
			assert.Equal(t, mode, run.Mode(), "the control tools are read-only")
			ids := []string{}
			for _, tool := range run.Catalog().Tools() {
				ids = append(ids, tool.ID())
			}
			assert.Equal(t, []string{"openclaw:fake-plugin:read_notes"}, ids)
		})
	}
	// The policy can also change mid-run: a destructive tool stops being callable.
	rt := newRuntime(t, runtime.ModeTools, nil)
	run := startRun(t, rt, runtime.RunRequest{Tools: annotatedCatalog()})
	run.SetPolicy(policy)
	res := execute(t, run, "c", runtime.ToolCallName, map[string]any{"id": "delete_notes", "args": map[string]string{"marker": "m"}})
	assert.True(t, res.Blocked)
}

func TestPolicyIsValidated(t *testing.T) {
	bad := &catalog.Policy{Agent: catalog.Rule{Deny: []string{"annotation:destrutive"}}}
	_, err := runtime.New(context.Background(), &runtime.Options{Policy: bad})
	require.ErrorIs(t, err, catalog.ErrInvalidPolicy)
	rt := newRuntime(t, runtime.ModeTools, nil)
	_, err = rt.StartRun(context.Background(), runtime.RunRequest{SessionID: "s", Policy: bad})
	require.ErrorIs(t, err, catalog.ErrInvalidPolicy)
}

// An approval is bounded by approvalTimeoutMs: one that never comes blocks the call, and a late yes is no yes.
func TestApprovalTimeout(t *testing.T) {
	tr := &trace{}
	never := runtime.ApproverFunc(func(ctx context.Context, _ *runtime.Invocation) (runtime.Decision, error) {
		<-ctx.Done()
		return runtime.Decision{}, ctx.Err()
	})
	late := runtime.ApproverFunc(func(ctx context.Context, _ *runtime.Invocation) (runtime.Decision, error) {
		<-ctx.Done()
		return runtime.Decision{Allow: true}, nil // ignores its context and says yes anyway
	})
	for name, approver := range map[string]runtime.Approver{"never": never, "late": late} {
		t.Run(name, func(t *testing.T) {
			rt := newRuntime(t, runtime.ModeOff, &runtime.Options{Approver: approver,
				Config: runtime.Config{ApprovalTimeoutMs: runtime.MinApprovalTimeoutMs}})
			run := startRun(t, rt, runtime.RunRequest{Tools: []catalog.Tool{tracedTool(tr, "traced", "", "")}})
			start := time.Now()
			res := execute(t, run, "1", "traced", map[string]string{"marker": "x"})
			assert.GreaterOrEqual(t, time.Since(start), time.Second)
			assert.True(t, res.Blocked)
			assert.Equal(t, "Tool call blocked: approval of openclaw:core:traced timed out after 1000 ms.", res.Content)
		})
	}
	assert.Empty(t, tr.get(), "the tool never ran")

	// The turn ending while the approver waits is the caller's error, not a result.
	rt := newRuntime(t, runtime.ModeOff, &runtime.Options{Approver: never})
	run := startRun(t, rt, runtime.RunRequest{Tools: []catalog.Tool{tracedTool(tr, "traced", "", "")}})
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	_, err := run.Execute(ctx, runtime.ToolCall{ID: "1", Name: "traced", Arguments: json.RawMessage(`{"marker":"x"}`)})
	assert.ErrorIs(t, err, context.DeadlineExceeded)
}

// A run's own approver decides its calls: the runtime's is not asked, and a run without one still uses the
// runtime's. This is what lets a front ask the user of the client whose run made the call.
func TestRunApproverReplacesTheRuntimes(t *testing.T) {
	policy := &catalog.Policy{Agent: catalog.Rule{Ask: []string{"annotation:destructive"}}}
	shared := &approvals{allow: true}
	rt := newRuntime(t, runtime.ModeTools, &runtime.Options{Policy: policy, Approver: shared})
	mine := &approvals{allow: false}
	own := startRun(t, rt, runtime.RunRequest{SessionID: "own", Tools: annotatedCatalog(), Approver: mine})
	other := startRun(t, rt, runtime.RunRequest{SessionID: "other", Tools: annotatedCatalog()})
	args := map[string]any{"id": "delete_notes", "args": map[string]string{"marker": "m"}}

	res := execute(t, own, "c1", runtime.ToolCallName, args)
	assert.True(t, res.Blocked)
	assert.Equal(t, "Tool call blocked: the user said no.", res.Content)
	require.Len(t, mine.asked, 1)
	assert.Equal(t, "own", mine.asked[0].SessionID)
	assert.Empty(t, shared.asked, "the runtime's approver is not asked about a run that has its own")

	assert.False(t, execute(t, other, "c2", runtime.ToolCallName, args).IsError)
	require.Len(t, shared.asked, 1)
	assert.Equal(t, "other", shared.asked[0].SessionID)
	assert.Len(t, mine.asked, 1)
}
