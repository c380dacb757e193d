package front

import (
	"context"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolsearch/toolsearch/runtime"
)

// Clients of the 2026-07-28 protocol (the go-sdk client's default) are asked for approvals with input requests
// of the tools/call result, and answer by calling again. The go-sdk client does that itself, calling its
// elicitation handler in between.

// connectRoundTrip connects a go-sdk client of the multi round-trip protocol over stdio.
func connectRoundTrip(t *testing.T, srv *Server, opts *sdk.ClientOptions) *sdk.ClientSession {
	t.Helper()
	sess := connectStdioWith(t, srv, opts, "")
	require.GreaterOrEqual(t, sess.InitializeResult().ProtocolVersion, firstMRTRProtocol,
		"the go-sdk client's default protocol has multi round-trip")
	return sess
}

func TestRoundTripApprovalAnswers(t *testing.T) {
	srv, _, deleted := approvalFront(t, runtime.Config{}, nil, nil)
	for action, want := range map[string]string{
		"accept":  "deleted: octo/site",
		"decline": "Tool call blocked: the user declined to run mcp:repo:delete_repository.",
		"cancel":  "Tool call blocked: the user dismissed the approval of mcp:repo:delete_repository without approving it.",
	} {
		t.Run(action, func(t *testing.T) {
			before := deleted.Load()
			u := answering(action, nil)
			sess := connectRoundTrip(t, srv, u.options())
			text, isErr := callTool(t, sess, "mcp:repo:delete_repository", map[string]any{"text": "octo/site"})
			assert.Contains(t, text, want)
			assert.Equal(t, action != "accept", isErr, text)
			asked := u.shown()
			require.Len(t, asked, 1)
			assert.Contains(t, asked[0].Message, "Tool: mcp:repo:delete_repository")
			assert.Contains(t, asked[0].Message, `{"text":"octo/site"}`)
			assert.Equal(t, "form", asked[0].Mode)
			if action == "accept" {
				assert.Equal(t, before+1, deleted.Load())
			} else {
				assert.Equal(t, before, deleted.Load(), "the tool did not run")
			}

			text, isErr = callTool(t, sess, "mcp:repo:read_file", map[string]any{"text": "README"})
			require.False(t, isErr, text)
			assert.Len(t, u.shown(), 1, "a call that needs no approval is not put to the user")
		})
	}
}

// The user answers after approvalTimeoutMs: the call was blocked at the timeout, and the late yes runs nothing.
func TestRoundTripApprovalUnansweredTimesOut(t *testing.T) {
	srv, _, deleted := approvalFront(t, runtime.Config{ApprovalTimeoutMs: runtime.MinApprovalTimeoutMs}, nil, nil)
	var prompt atomic.Bool
	u := &user{answer: func(ctx context.Context, _ *sdk.ElicitParams) (*sdk.ElicitResult, error) {
		if !prompt.Load() {
			time.Sleep(time.Duration(runtime.MinApprovalTimeoutMs)*time.Millisecond + 500*time.Millisecond)
		}
		return &sdk.ElicitResult{Action: "accept"}, nil
	}}
	sess := connectRoundTrip(t, srv, u.options())
	text, isErr := callTool(t, sess, "mcp:repo:delete_repository", map[string]any{"text": "octo/site"})
	require.True(t, isErr, text)
	assert.Contains(t, text, "approval of mcp:repo:delete_repository timed out after 1000 ms")
	aPromptYesRunsTheNextCall(t, sess, u, deleted, &prompt)
}

// In code mode the script waits suspended across the round trip, longer than its codeTimeoutMs, and two calls
// made at once are asked in one round.
func TestRoundTripApprovalInCodeMode(t *testing.T) {
	srv, _, deleted := approvalFront(t, runtime.Config{Mode: runtime.ModeCode, CodeTimeoutMs: runtime.MinCodeTimeoutMs}, nil, nil)
	wait := 2 * time.Duration(runtime.MinCodeTimeoutMs) * time.Millisecond
	u := slowlyAccepting(wait)
	sess := connectRoundTrip(t, srv, u.options())
	start := time.Now()
	value, _ := codeResult(t, sess, `const read = await openclaw.tools.call("mcp:repo:read_file", {text: "README"});
const [a, b] = await Promise.all(["one", "two"].map(text => openclaw.tools.call("mcp:repo:delete_repository", {text})));
return [!!read.result, a.result.content[0].text, b.result.content[0].text];`)
	assert.GreaterOrEqual(t, time.Since(start), wait)
	assert.JSONEq(t, `[true, "deleted: one", "deleted: two"]`, string(value))
	assert.EqualValues(t, 2, deleted.Load(), "each approved call ran once, and the call before them was not run again")
	assert.Len(t, u.shown(), 2)
}

// rawRoundTrip is a client that sees input-required results itself instead of answering them.
func rawRoundTrip(t *testing.T, srv *Server) *sdk.ClientSession {
	t.Helper()
	return connectRoundTrip(t, srv, &sdk.ClientOptions{
		MultiRoundTrip: &sdk.MultiRoundTripOptions{Disabled: true},
		ElicitationHandler: func(context.Context, *sdk.ElicitRequest) (*sdk.ElicitResult, error) {
			return nil, assert.AnError // never called: this client answers by hand
		}})
}

func deleteCall(text string) *sdk.CallToolParams {
	return &sdk.CallToolParams{Name: "tool_call", Arguments: map[string]any{"id": "mcp:repo:delete_repository",
		"args": map[string]any{"text": text}}}
}

// askedFor returns the one input request of an input-required result, and its id.
func askedFor(t *testing.T, res *sdk.CallToolResult) (string, *sdk.ElicitParams) {
	t.Helper()
	require.True(t, res.NeedsInput(), "an input-required result")
	require.NotEmpty(t, res.RequestState)
	require.Len(t, res.InputRequests, 1)
	for id, r := range res.InputRequests {
		p, ok := r.(*sdk.ElicitParams)
		require.True(t, ok, "%T", r)
		return id, p
	}
	return "", nil
}

// A requestState answers only the call it was returned with, in the session it was returned to, once.
func TestRoundTripStateBelongsToItsCall(t *testing.T) {
	srv, _, deleted := approvalFront(t, runtime.Config{}, nil, nil)
	a, b := rawRoundTrip(t, srv), rawRoundTrip(t, srv)

	res, err := a.CallTool(t.Context(), deleteCall("octo/site"))
	require.NoError(t, err)
	id, asked := askedFor(t, res)
	assert.Contains(t, asked.Message, "mcp:repo:delete_repository")
	yes := sdk.InputResponseMap{id: &sdk.ElicitResult{Action: "accept"}}

	// Another session presenting the state and a yes runs nothing.
	forged := deleteCall("octo/site")
	forged.RequestState, forged.InputResponses = res.RequestState, yes
	other, err := b.CallTool(t.Context(), forged)
	require.NoError(t, err)
	assert.True(t, other.IsError)
	assert.Contains(t, resultText(other), "no longer pending")
	// So does a retry naming another tool.
	wrong := &sdk.CallToolParams{Name: "tool_search", Arguments: map[string]any{"query": "repo"},
		RequestState: res.RequestState, InputResponses: yes}
	other, err = a.CallTool(t.Context(), wrong)
	require.NoError(t, err)
	assert.True(t, other.IsError)
	assert.Contains(t, resultText(other), "was asked for tool_call, not tool_search")
	assert.Zero(t, deleted.Load())

	retry := deleteCall("octo/site")
	retry.RequestState, retry.InputResponses = res.RequestState, yes
	done, err := a.CallTool(t.Context(), retry)
	require.NoError(t, err)
	require.False(t, done.IsError, resultText(done))
	assert.Contains(t, resultText(done), "deleted: octo/site")
	assert.EqualValues(t, 1, deleted.Load())

	// Replayed, the same answer approves nothing more.
	again, err := a.CallTool(t.Context(), retry)
	require.NoError(t, err)
	assert.True(t, again.IsError)
	assert.Contains(t, resultText(again), "no longer pending")
	assert.EqualValues(t, 1, deleted.Load())
}

// A retry that leaves the question unanswered dismisses it, and the model's own arguments never answer it.
func TestRoundTripUnansweredQuestionIsDismissed(t *testing.T) {
	srv, _, deleted := approvalFront(t, runtime.Config{}, nil, nil)
	a := rawRoundTrip(t, srv)
	params := deleteCall("octo/site")
	params.Arguments.(map[string]any)["args"].(map[string]any)["approved"] = true
	res, err := a.CallTool(t.Context(), params)
	require.NoError(t, err)
	askedFor(t, res)
	params.RequestState = res.RequestState
	done, err := a.CallTool(t.Context(), params)
	require.NoError(t, err)
	assert.True(t, done.IsError)
	assert.Contains(t, resultText(done), "dismissed the approval")
	assert.Zero(t, deleted.Load())
}

// At most MaxPendingRoundTrips questions of one client wait for answers; one more call is blocked unasked, and
// the session going away ends the calls that still wait.
func TestRoundTripPendingQuestionsAreBounded(t *testing.T) {
	srv, _, deleted := approvalFront(t, runtime.Config{}, nil, nil)
	a := rawRoundTrip(t, srv)
	for i := range MaxPendingRoundTrips {
		res, err := a.CallTool(t.Context(), deleteCall("r"))
		require.NoError(t, err)
		require.True(t, res.NeedsInput(), "call %d: %s", i, resultText(res))
	}
	res, err := a.CallTool(t.Context(), deleteCall("r"))
	require.NoError(t, err)
	require.False(t, res.NeedsInput())
	assert.True(t, res.IsError)
	assert.Contains(t, resultText(res), "16 approvals of this client wait for an answer already")

	c := srv.clientsForTest()[0]
	c.mu.Lock()
	parked := len(c.parked)
	c.mu.Unlock()
	assert.Equal(t, MaxPendingRoundTrips, parked)
	require.NoError(t, a.Close())
	require.Eventually(t, func() bool { return len(srv.clientsForTest()) == 0 }, 10*time.Second, 10*time.Millisecond,
		"the client's runs ended with its session, though their approvals were never answered")
	assert.Zero(t, deleted.Load())
}

// A client of the round-trip protocol that declared no elicitation is told so, with the rule.
func TestRoundTripWithoutElicitationSaysHowToAllow(t *testing.T) {
	srv, _, deleted := approvalFront(t, runtime.Config{}, nil, nil)
	sess := connectRoundTrip(t, srv, nil)
	text, isErr := callTool(t, sess, "mcp:repo:delete_repository", map[string]any{"text": "octo/site"})
	require.True(t, isErr, text)
	assert.Contains(t, text, "did not declare elicitation")
	assert.Contains(t, text, `change the policy entry "delete_*"`)
	assert.Zero(t, deleted.Load())
}

// A question nobody answers stops counting towards the bound when its approval times out, so the client can be
// asked again; the finished calls wait for a late retry at most MaxPendingRoundTrips at a time, and at most
// parkedTTL each.
func TestRoundTripUnansweredQuestionsEnd(t *testing.T) {
	srv, _, deleted := approvalFront(t, runtime.Config{ApprovalTimeoutMs: runtime.MinApprovalTimeoutMs}, nil, nil)
	srv.parkedTTL = time.Hour // before any client: its calls read it
	a := rawRoundTrip(t, srv)
	ask := func(n int) {
		for i := range n {
			res, err := a.CallTool(t.Context(), deleteCall("r"))
			require.NoError(t, err)
			require.True(t, res.NeedsInput(), "call %d: %s", i, resultText(res))
		}
	}
	ask(MaxPendingRoundTrips)
	c := srv.clientsForTest()[0]
	state := func() (asking, parked, retained int) {
		c.mu.Lock()
		defer c.mu.Unlock()
		return c.asking, len(c.parked), len(c.retained)
	}
	settled := func(wantParked int) func() bool {
		return func() bool {
			asking, parked, retained := state()
			return asking == 0 && parked == wantParked && retained == wantParked
		}
	}
	require.Eventually(t, settled(MaxPendingRoundTrips), 30*time.Second, 20*time.Millisecond,
		"the approvals timed out, and their calls wait for a late retry")
	ask(4) // asked again, with the timed-out ones still kept
	require.Eventually(t, settled(MaxPendingRoundTrips), 30*time.Second, 20*time.Millisecond,
		"no more than MaxPendingRoundTrips finished calls are kept: the oldest went")
	assert.Zero(t, deleted.Load())
}

// A finished call nobody came back for is forgotten after parkedTTL.
func TestRoundTripFinishedCallsExpire(t *testing.T) {
	srv, _, _ := approvalFront(t, runtime.Config{ApprovalTimeoutMs: runtime.MinApprovalTimeoutMs}, nil, nil)
	srv.parkedTTL = 200 * time.Millisecond // before any client: its calls read it
	a := rawRoundTrip(t, srv)
	res, err := a.CallTool(t.Context(), deleteCall("r"))
	require.NoError(t, err)
	require.True(t, res.NeedsInput())
	c := srv.clientsForTest()[0]
	require.Eventually(t, func() bool {
		c.mu.Lock()
		defer c.mu.Unlock()
		return len(c.parked) == 0 && len(c.retained) == 0 && c.asking == 0
	}, 30*time.Second, 20*time.Millisecond)
	retry := deleteCall("r")
	retry.RequestState = res.RequestState
	late, err := a.CallTool(t.Context(), retry)
	require.NoError(t, err)
	assert.Contains(t, resultText(late), "no longer pending")
}

// "Approve for this session" works through the round trip too.
func TestRoundTripApproveForTheSession(t *testing.T) {
	srv, _, deleted := approvalFront(t, runtime.Config{}, nil, nil)
	u := answering("accept", map[string]any{rememberField: true})
	sess := connectRoundTrip(t, srv, u.options())
	for i := range 3 {
		text, isErr := callTool(t, sess, "mcp:repo:delete_repository", map[string]any{"text": "r"})
		require.False(t, isErr, "call %d: %s", i, text)
	}
	assert.Len(t, u.shown(), 1)
	assert.EqualValues(t, 3, deleted.Load())
}

// clientsForTest returns the server's live clients.
func (s *Server) clientsForTest() []*client {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []*client
	for _, c := range s.clients {
		out = append(out, c)
	}
	return out
}

// Over HTTP a go-sdk client left at its defaults is asked too, whichever protocol it settles on with the
// front's sessions.
func TestApprovalOverHTTPWithTheClientsDefaults(t *testing.T) {
	srv, _, deleted := approvalFront(t, runtime.Config{}, nil, nil)
	ts := httptest.NewServer(srv.Handler())
	t.Cleanup(ts.Close)
	u := answering("accept", nil)
	sess := connectHTTP(t, ts.URL, u.options(), "")
	t.Logf("negotiated %s", sess.InitializeResult().ProtocolVersion)
	text, isErr := callTool(t, sess, "mcp:repo:delete_repository", map[string]any{"text": "octo/site"})
	require.False(t, isErr, text)
	assert.Contains(t, text, "deleted: octo/site")
	assert.Len(t, u.shown(), 1)
	assert.EqualValues(t, 1, deleted.Load())
}
