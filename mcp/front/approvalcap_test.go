package front

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolsearch/toolsearch/runtime"
)

// A client asked inline (not a round-trip client) makes 40 calls that need approval at once: at most
// MaxPendingRoundTrips forms are open at a time, and the rest are blocked unasked with a message that says why.
//
// The calls come as 40 concurrent tool_calls of one session. A code-mode script starts them the same way, but
// is frozen while an approval waits (its deadline is held), so whether it gets all 40 out before the first form
// opens is a race; the cap is the client's, whoever starts the calls, and this way every call surely arrives.
func TestApprovalInlineOpenQuestionsAreBounded(t *testing.T) {
	const calls = 40
	var arrived atomic.Int32
	opts := &ServerOptions{Approver: runtime.ApproverFunc(func(context.Context, *runtime.Invocation) (runtime.Decision, error) {
		arrived.Add(1) // every call passes here before the front asks anyone
		return runtime.Decision{Allow: true}, nil
	})}
	srv, _, deleted := approvalFront(t, runtime.Config{}, opts, nil)
	release := make(chan struct{})
	var open, maxOpen atomic.Int32
	u := &user{answer: func(ctx context.Context, _ *sdk.ElicitParams) (*sdk.ElicitResult, error) {
		n := open.Add(1)
		defer open.Add(-1)
		for m := maxOpen.Load(); n > m && !maxOpen.CompareAndSwap(m, n); m = maxOpen.Load() {
		}
		select {
		case <-release:
			return &sdk.ElicitResult{Action: "accept"}, nil
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}}
	sess := connectStdioWith(t, srv, u.options(), legacyProtocol)

	type outcome struct {
		text    string
		isError bool
		err     error
	}
	outcomes := make(chan outcome, calls)
	blockedEarly := atomic.Int32{}
	for i := range calls {
		go func() {
			res, err := sess.CallTool(t.Context(), &sdk.CallToolParams{Name: "tool_call", Arguments: map[string]any{
				"id": "mcp:repo:delete_repository", "args": map[string]any{"text": fmt.Sprintf("r%d", i)}}})
			if err != nil {
				outcomes <- outcome{err: err}
				return
			}
			if res.IsError {
				blockedEarly.Add(1)
			}
			outcomes <- outcome{text: resultText(res), isError: res.IsError}
		}()
	}
	require.Eventually(t, func() bool {
		return arrived.Load() == calls && len(u.shown()) >= MaxPendingRoundTrips && blockedEarly.Load() == calls-MaxPendingRoundTrips
	}, 60*time.Second, 10*time.Millisecond, "every call reached the front, %d forms are open and the rest were blocked",
		MaxPendingRoundTrips)
	assert.EqualValues(t, MaxPendingRoundTrips, open.Load(), "the open forms are still open: the others were blocked meanwhile")
	close(release)
	ran, blocked := 0, 0
	for range calls {
		o := <-outcomes
		require.NoError(t, o.err)
		switch {
		case !o.isError && strings.Contains(o.text, "deleted: r"):
			ran++
		case o.isError && strings.Contains(o.text, fmt.Sprintf("%d approvals of this client wait for an answer already", MaxPendingRoundTrips)):
			blocked++
		default:
			t.Errorf("unexpected outcome %q (error %v)", o.text, o.isError)
		}
	}
	assert.Equal(t, MaxPendingRoundTrips, ran)
	assert.Equal(t, calls-MaxPendingRoundTrips, blocked, "the rest are blocked unasked, and told why")
	assert.EqualValues(t, MaxPendingRoundTrips, maxOpen.Load())
	assert.Len(t, u.shown(), MaxPendingRoundTrips, "no form beyond the cap was shown")
	assert.EqualValues(t, MaxPendingRoundTrips, deleted.Load())
}
