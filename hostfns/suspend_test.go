package hostfns

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// suspendingBridge waits for wait inside Call with the script suspended, as an approval does.
type suspendingBridge struct {
	fakeBridge
	wait time.Duration
}

func (b *suspendingBridge) Call(ctx context.Context, request json.RawMessage) (json.RawMessage, error) {
	resume := Suspend(ctx)
	defer resume()
	select {
	case <-time.After(b.wait):
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	return json.RawMessage(`"approved"`), nil
}

// A call that suspends its script may wait longer than the script's whole timeout: the deadline is held.
func TestSuspendHoldsTheDeadline(t *testing.T) {
	s := sandbox(t)
	res, err := s.Run(context.Background(), `return await openclaw.tools.call("x", {})`,
		&suspendingBridge{wait: 1500 * time.Millisecond}, &RunOptions{Timeout: 500 * time.Millisecond})
	require.NoError(t, err)
	assert.JSONEq(t, `"approved"`, string(res.Value))

	// Without Suspend, the same wait is a timeout.
	_, err = s.Run(context.Background(), `return await openclaw.tools.call("x", {})`,
		&fakeBridge{delay: 1500 * time.Millisecond}, &RunOptions{Timeout: 500 * time.Millisecond})
	assert.ErrorIs(t, err, context.DeadlineExceeded)

	// Outside a bridge call it does nothing.
	Suspend(context.Background())()
}
