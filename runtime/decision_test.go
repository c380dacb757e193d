package runtime_test

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolsearch/toolsearch/catalog"
	"github.com/toolsearch/toolsearch/runtime"
)

// serverTools are tools of two MCP servers, as a config's mcpServers gives them.
func serverTools() []catalog.Tool {
	mcpTool := func(server, name string) catalog.Tool {
		return catalog.Tool{Source: catalog.SourceMCP, SourceName: server, Name: name,
			Description: "The " + name + " tool of " + server + ".", Parameters: json.RawMessage(markerSchema),
			Handler: okHandler(name)}
	}
	return []catalog.Tool{
		mcpTool("github", "get_issue"), mcpTool("github", "create_issue"),
		mcpTool("github", "delete_repository"), mcpTool("fs", "read_file"),
	}
}

// serverPolicy is the policy a config file such as
//
//	{mcpServers: {github: {disabledTools: ["delete_repository"], autoApprove: ["get_issue"]}},
//	 tools: {ask: ["server:github"]}}
//
// gives.
func serverPolicy() *catalog.Policy {
	return &catalog.Policy{Agent: catalog.Rule{
		Deny:        []string{"mcp:github:delete_repository"},
		Ask:         []string{"server:github"},
		AutoApprove: []string{"mcp:github:get_issue"},
	}}
}

// namedApprover approves everything but create_issue after a short wait, and says who it is.
type namedApprover struct {
	mu    sync.Mutex
	asked []string
}

func (a *namedApprover) Approve(_ context.Context, inv *runtime.Invocation) (runtime.Decision, error) {
	a.mu.Lock()
	a.asked = append(a.asked, inv.Tool.ID())
	a.mu.Unlock()
	if !inv.ApprovalRequired {
		return runtime.Decision{Allow: true}, nil
	}
	time.Sleep(20 * time.Millisecond)
	if inv.Tool.Name == "create_issue" {
		return runtime.Decision{Reason: "the user declined " + inv.Tool.ID(), By: "test-user"}, nil
	}
	return runtime.Decision{Allow: true, By: "test-user"}, nil
}

// TestDecisionsInEveryMode calls the same tools through every mode's way of calling, and checks that a
// denied tool is unknown (and absent from off mode's tools), and that every call's record says what the
// policy and the approver decided, by which rule, by whom and after how long — without argument values.
func TestDecisionsInEveryMode(t *testing.T) {
	for _, mode := range []runtime.Mode{runtime.ModeCode, runtime.ModeTools, runtime.ModeDirectory, runtime.ModeOff} {
		t.Run(string(mode), func(t *testing.T) {
			logger, logBuf := newLogger()
			logs := newMemoryLog()
			ap := &namedApprover{}
			rt := newRuntime(t, mode, &runtime.Options{Policy: serverPolicy(), Approver: ap, Logger: logger, SessionLog: logs})
			run := startRun(t, rt, runtime.RunRequest{SessionID: "s-" + string(mode), Tools: serverTools()})
			assert.Equal(t, mode, run.Mode())

			// call makes one call the way this mode does, and returns the text the model reads.
			call := func(id string) string {
				name := id[strings.LastIndex(id, ":")+1:]
				switch mode {
				case runtime.ModeOff:
					res, err := run.Execute(context.Background(), runtime.ToolCall{ID: "d-" + name, Name: name,
						Arguments: json.RawMessage(`{"marker":"secret-value"}`)})
					require.NoError(t, err)
					return res.Content
				case runtime.ModeCode:
					res, _ := runCode(t, run, "code-"+name, `try { const r = await openclaw.tools.call("`+id+
						`", {marker: "secret-value"}); return r.result.content[0].text } catch (e) { return String(e.message) }`)
					return res.Content
				}
				return execute(t, run, "c-"+name, runtime.ToolCallName,
					map[string]any{"id": id, "args": map[string]string{"marker": "secret-value"}}).Content
			}

			if mode == runtime.ModeOff {
				assert.NotContains(t, toolNames(run.Tools()), "delete_repository", "a denied tool is not listed")
			} else {
				res := execute(t, run, "s", runtime.ToolSearchName, map[string]string{"query": "delete repository"})
				assert.NotContains(t, res.Content, "delete_repository", "a denied tool is never a hit")
			}
			assert.Contains(t, call("mcp:github:delete_repository"), "nknown tool", "a denied tool is unknown, not blocked")

			assert.Contains(t, call("mcp:github:get_issue"), "FAKE_PLUGIN_OK get_issue", "autoApprove lifts the ask")
			assert.Contains(t, call("mcp:github:create_issue"), "the user declined mcp:github:create_issue")
			assert.Contains(t, call("mcp:fs:read_file"), "FAKE_PLUGIN_OK read_file")

			// The policy changes while the run is under way: the tool is still in the run, and the call-time
			// check names the rule that now denies it.
			run.SetPolicy(&catalog.Policy{Agent: catalog.Rule{Deny: []string{"server:fs"}}})
			assert.Contains(t, call("mcp:fs:read_file"), "not allowed by policy")

			calls := run.Telemetry().Calls
			require.Len(t, calls, 4, "the unknown tool is no call")
			byTool := map[string][]runtime.CallDecision{}
			for _, c := range calls {
				byTool[c.ToolID] = append(byTool[c.ToolID], c.Decision)
			}
			get := byTool["mcp:github:get_issue"][0]
			assert.Equal(t, runtime.PolicyAllowed, get.Policy)
			assert.Equal(t, `allowed (agent autoApprove "mcp:github:get_issue" lifts ask "server:github")`, get.Rule)
			assert.False(t, get.ApprovalRequired)
			assert.Equal(t, runtime.ApprovalApproved, get.Approval, "the approver is asked about every call")

			create := byTool["mcp:github:create_issue"][0]
			assert.Equal(t, runtime.PolicyAllowed, create.Policy)
			assert.Equal(t, `ask by agent ask "server:github"`, create.Rule)
			assert.True(t, create.ApprovalRequired)
			assert.Equal(t, runtime.ApprovalDeclined, create.Approval)
			assert.Equal(t, "test-user", create.By)
			assert.GreaterOrEqual(t, create.Waited, 20*time.Millisecond, "how long the approver took")

			read := byTool["mcp:fs:read_file"]
			require.Len(t, read, 2)
			assert.Equal(t, runtime.CallDecision{Policy: runtime.PolicyAllowed, Approval: runtime.ApprovalApproved},
				stripWait(read[0]))
			assert.Equal(t, runtime.CallDecision{Policy: runtime.PolicyDenied, Rule: `denied by agent deny "server:fs"`}, read[1])

			// The session log's call records carry the same decisions, and no argument values; the log line too.
			require.NoError(t, run.Close())
			var logged []runtime.CallDecision
			for _, rec := range logs.get("s-" + string(mode)) {
				if rec.Type == runtime.RecordCall {
					logged = append(logged, rec.Call.Decision)
					raw, err := json.Marshal(rec)
					require.NoError(t, err)
					assert.NotContains(t, string(raw), "secret-value", "a call record holds no argument values")
				}
			}
			require.Len(t, logged, 4)
			assert.Equal(t, runtime.ApprovalDeclined, logged[1].Approval)
			tel, err := json.Marshal(run.Telemetry())
			require.NoError(t, err)
			assert.NotContains(t, string(tel), "secret-value", "telemetry holds no argument values")
			line := logBuf.String()
			assert.Contains(t, line, `approval=declined by=test-user`)
			assert.Contains(t, line, `rule="ask by agent ask \"server:github\""`)
			assert.Contains(t, line, `policy=denied rule="denied by agent deny \"server:fs\""`)
		})
	}
}

func stripWait(d runtime.CallDecision) runtime.CallDecision {
	d.Waited = 0
	return d
}

// TestDecisionWithoutApprover: what needs approval is not asked of anyone, and the record says so.
func TestDecisionWithoutApprover(t *testing.T) {
	rt := newRuntime(t, runtime.ModeTools, &runtime.Options{Policy: serverPolicy()})
	run := startRun(t, rt, runtime.RunRequest{Tools: serverTools()})
	res := execute(t, run, "c", runtime.ToolCallName, map[string]any{"id": "create_issue", "args": map[string]string{"marker": "m"}})
	assert.True(t, res.Blocked)
	res = execute(t, run, "c2", runtime.ToolCallName, map[string]any{"id": "read_file", "args": map[string]string{"marker": "m"}})
	assert.False(t, res.IsError)
	calls := run.Telemetry().Calls
	require.Len(t, calls, 2)
	assert.Equal(t, runtime.CallDecision{Policy: runtime.PolicyAllowed, Rule: `ask by agent ask "server:github"`,
		ApprovalRequired: true, Approval: runtime.ApprovalNotAsked}, calls[0].Decision)
	assert.Equal(t, runtime.CallDecision{Policy: runtime.PolicyAllowed}, calls[1].Decision,
		"no approver and nothing to approve: nobody was asked")
}

// TestDecisionTimedOut: an approver that does not answer within approvalTimeoutMs.
func TestDecisionTimedOut(t *testing.T) {
	slow := runtime.ApproverFunc(func(ctx context.Context, _ *runtime.Invocation) (runtime.Decision, error) {
		<-ctx.Done()
		return runtime.Decision{}, ctx.Err()
	})
	o := &runtime.Options{Policy: serverPolicy(), Approver: slow}
	o.Config.ApprovalTimeoutMs = 1000
	rt := newRuntime(t, runtime.ModeTools, o)
	run := startRun(t, rt, runtime.RunRequest{Tools: serverTools()})
	res := execute(t, run, "c", runtime.ToolCallName, map[string]any{"id": "create_issue", "args": map[string]string{"marker": "m"}})
	assert.Contains(t, res.Content, "timed out")
	d := run.Telemetry().Calls[0].Decision
	assert.Equal(t, runtime.ApprovalTimedOut, d.Approval)
	assert.GreaterOrEqual(t, d.Waited, time.Second)
}

// TestDecisionApproverCouldAskNobody: an approver that had nobody to ask (Decision.NotAsked) blocks the call
// with its reason, and the record says nobody was asked rather than that someone declined.
func TestDecisionApproverCouldAskNobody(t *testing.T) {
	unasked := runtime.ApproverFunc(func(_ context.Context, inv *runtime.Invocation) (runtime.Decision, error) {
		if !inv.ApprovalRequired {
			return runtime.Decision{Allow: true}, nil
		}
		return runtime.Decision{NotAsked: true, By: "front", Reason: inv.Tool.ID() + " needs approval, but this client cannot be asked"}, nil
	})
	rt := newRuntime(t, runtime.ModeTools, &runtime.Options{Policy: serverPolicy(), Approver: unasked})
	run := startRun(t, rt, runtime.RunRequest{Tools: serverTools()})
	res := execute(t, run, "c", runtime.ToolCallName, map[string]any{"id": "create_issue", "args": map[string]string{"marker": "m"}})
	assert.True(t, res.Blocked)
	assert.Contains(t, res.Content, "Tool call blocked: mcp:github:create_issue needs approval, but this client cannot be asked.")
	d := stripWait(run.Telemetry().Calls[0].Decision)
	assert.Equal(t, runtime.CallDecision{Policy: runtime.PolicyAllowed, Rule: `ask by agent ask "server:github"`,
		ApprovalRequired: true, Approval: runtime.ApprovalNotAsked, By: "front"}, d)

	// NotAsked means nothing next to Allow: an approval is an approval.
	allowed := runtime.ApproverFunc(func(context.Context, *runtime.Invocation) (runtime.Decision, error) {
		return runtime.Decision{Allow: true, NotAsked: true, By: "x"}, nil
	})
	rt = newRuntime(t, runtime.ModeTools, &runtime.Options{Policy: serverPolicy(), Approver: allowed})
	run = startRun(t, rt, runtime.RunRequest{Tools: serverTools()})
	res = execute(t, run, "c", runtime.ToolCallName, map[string]any{"id": "create_issue", "args": map[string]string{"marker": "m"}})
	assert.False(t, res.IsError, res.Content)
	assert.Equal(t, runtime.ApprovalApproved, run.Telemetry().Calls[0].Decision.Approval)
}
