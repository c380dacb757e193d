package upstream

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolsearch/toolsearch/mcp/internal/seam"
)

func TestFrontState(t *testing.T) {
	now := time.Now()
	for _, tc := range []struct {
		st   Status
		want seam.State
	}{
		{Status{State: StateIdle}, seam.StateIdle},
		{Status{State: StateStarting}, seam.StateStarting},
		{Status{State: StateReady}, seam.StateReady},
		{Status{State: StateFailed, NextRetry: now.Add(time.Second)}, seam.StateFailed},
		{Status{State: StateFailed, NextRetry: now}, seam.StateRetrying},
		{Status{State: StateFailed, NextRetry: now.Add(-time.Second)}, seam.StateRetrying},
		{Status{State: StateClosed}, seam.StateClosed},
	} {
		assert.Equal(t, tc.want, frontState(tc.st, now), "%+v", tc.st)
		if tc.want != seam.StateRetrying {
			assert.Equal(t, string(tc.st.State), string(tc.want), "a state both sides have is spelled the same")
		}
	}
}

// The status a front reads follows a server through failing, retrying and coming up, and says when the Source
// closed.
func TestFrontSideStatus(t *testing.T) {
	ok := newFakeServer(0)
	ok.AddTool("echo", "Echo.", echo(""))
	flaky := newFakeServer(0)
	flaky.AddTool("echo", "Echo.", echo(""))
	release := make(chan struct{})
	attempts := 0
	flakyDial := func(ctx context.Context, u *server) (*dialed, error) {
		attempts++ // the supervisor makes one attempt at a time
		switch attempts {
		case 1:
			return nil, errors.New("boom")
		case 2:
			select {
			case <-release:
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		}
		return flaky.dial(ctx, u)
	}
	opts := fastOptions(nil)
	opts.RetryDelay, opts.MaxRetryDelay = time.Second, 2*time.Second
	src := startSource(t, inMemoryConfig("flaky", "ok"), opts, map[string]dialFunc{"flaky": flakyDial, "ok": ok.dial})
	up := seam.Open(src)

	status := func(name string) seam.ServerStatus {
		for _, st := range up.Status().Servers {
			if st.Server.Name() == name {
				return st
			}
		}
		t.Fatalf("no server %q", name)
		return seam.ServerStatus{}
	}
	assert.Equal(t, seam.StateReady, status("ok").State)
	assert.Equal(t, 1, status("ok").Tools)
	require.Eventually(t, func() bool { return status("flaky").State == seam.StateFailed }, 5*time.Second, time.Millisecond)
	st := status("flaky")
	require.ErrorContains(t, st.Err, "boom")
	assert.True(t, st.NextRetry.After(time.Now().Add(-time.Millisecond)), "failed means the next attempt is ahead")

	changed := up.Changed()
	require.Eventually(t, func() bool { return status("flaky").State == seam.StateRetrying }, 5*time.Second, 5*time.Millisecond)
	require.ErrorContains(t, status("flaky").Err, "boom", "while retrying, the last failure is still the reason")
	close(release)
	select {
	case <-changed:
	case <-time.After(10 * time.Second):
		t.Fatal("coming up did not close Changed")
	}
	require.Eventually(t, func() bool { return status("flaky").State == seam.StateReady }, 10*time.Second, 5*time.Millisecond)
	assert.NoError(t, status("flaky").Err)
	assert.False(t, up.Status().Closed)

	require.NoError(t, src.Close(t.Context()))
	assert.True(t, up.Status().Closed)
	for _, st := range up.Status().Servers {
		assert.Equal(t, seam.StateClosed, st.State, st.Server.Name())
	}
}
