package front

import (
	"context"
	"encoding/json"
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

// One script of a client asked inline (not a round-trip client) starts 40 calls that need approval at once: at
// most MaxPendingRoundTrips forms are open at a time, and the rest are blocked unasked with a message that says
// why.
func TestApprovalInlineOpenQuestionsAreBounded(t *testing.T) {
	const calls = 40
	var arrived atomic.Int32
	opts := &ServerOptions{Approver: runtime.ApproverFunc(func(context.Context, *runtime.Invocation) (runtime.Decision, error) {
		arrived.Add(1) // every call passes here before the front asks anyone
		return runtime.Decision{Allow: true}, nil
	})}
	srv, _, deleted := approvalFront(t, runtime.Config{Mode: runtime.ModeCode}, opts, nil)
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

	done := make(chan json.RawMessage, 1)
	go func() {
		value, _ := codeResult(t, sess, `return await Promise.all(Array.from({length: `+"40"+`}, (_, i) =>
  openclaw.tools.call("mcp:repo:delete_repository", {text: "r" + i}).then(r => JSON.stringify(r), e => "threw: " + e.message)));`)
		done <- value
	}()
	require.Eventually(t, func() bool { return arrived.Load() == calls && len(u.shown()) >= MaxPendingRoundTrips },
		60*time.Second, 10*time.Millisecond, "every call reached the front and %d forms are open", MaxPendingRoundTrips)
	close(release)
	var value json.RawMessage
	select {
	case value = <-done:
	case <-time.After(60 * time.Second):
		t.Fatal("the script did not finish once the forms were answered")
	}
	var outcomes []string
	require.NoError(t, json.Unmarshal(value, &outcomes), "%s", value)
	require.Len(t, outcomes, calls)
	ran, blocked := 0, 0
	for _, o := range outcomes {
		switch {
		case strings.Contains(o, "deleted: r"):
			ran++
		case strings.Contains(o, fmt.Sprintf("%d approvals of this client wait for an answer already", MaxPendingRoundTrips)):
			blocked++
		default:
			t.Errorf("unexpected outcome %s", o)
		}
	}
	assert.Equal(t, MaxPendingRoundTrips, ran)
	assert.Equal(t, calls-MaxPendingRoundTrips, blocked, "the rest are blocked unasked, and told why")
	assert.EqualValues(t, MaxPendingRoundTrips, maxOpen.Load())
	assert.Len(t, u.shown(), MaxPendingRoundTrips, "no form beyond the cap was shown")
	assert.EqualValues(t, MaxPendingRoundTrips, deleted.Load())
}
