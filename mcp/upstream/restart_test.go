package upstream

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// statusOf returns one server's status.
func statusOf(t *testing.T, src *Source, name string) Status {
	t.Helper()
	for _, st := range src.Status() {
		if st.Name == name {
			return st
		}
	}
	t.Fatalf("no server %q", name)
	return Status{}
}

// A server failing like a broken install says why with Node's error line (not the stack after it), backs off to
// the long interval once the failure has repeated identically, and says so; Restart tries it again at once.
func TestRepeatedFailureBacksOffAndRestartRetries(t *testing.T) {
	progress := &syncBuffer{}
	src, err := New(t.Context(), &Config{Servers: map[string]ServerConfig{"fs": childConfig("broken-install")}},
		fastOptions(progress))
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, src.Close(context.Background())) })

	var repeated *RepeatedFailureError
	require.Eventually(t, func() bool { return errors.As(statusOf(t, src, "fs").Err, &repeated) }, time.Minute,
		10*time.Millisecond, "the same failure %d times makes a RepeatedFailureError", RepeatedFailures)
	st := statusOf(t, src, "fs")
	assert.Equal(t, RepeatedFailures, repeated.Times)
	assert.Equal(t, RepeatedFailures, st.Attempts, "no attempt between the third failure and the long wait")
	assert.Equal(t, StateFailed, st.State)
	assert.GreaterOrEqual(t, time.Until(st.NextRetry), DefaultRepeatedFailureDelay-time.Minute,
		"the next attempt waits the long interval, not the backoff of %s", fastOptions(nil).MaxRetryDelay)
	msg := st.Err.Error()
	assert.Contains(t, msg, "stderr: Error [ERR_MODULE_NOT_FOUND]: Cannot find package 'zod' imported from /tmp/brk/index.js")
	assert.NotContains(t, msg, "at packageResolve", "no stack frame is quoted")
	assert.Contains(t, msg, "the same failure 3 times in a row")
	assert.Contains(t, progress.String(), "the same failure 3 times in a row", "the person watching is told too")

	require.NoError(t, src.Restart("fs"))
	require.Eventually(t, func() bool { return statusOf(t, src, "fs").Attempts > RepeatedFailures }, time.Minute,
		10*time.Millisecond, "Restart tries at once")
	var unknown *ServerError
	err = src.Restart("nope")
	require.ErrorAs(t, err, &unknown)
	assert.ErrorIs(t, err, ErrUnknownServer)
}

// A changed config entry restarts that server with its new entry, whatever its state; an unchanged one is left
// alone, and changes that need a new Source are reported, not applied.
func TestReconfigureRestartsChangedServers(t *testing.T) {
	opts := fastOptions(nil)
	opts.RetryDelay, opts.MaxRetryDelay = time.Hour, time.Hour // only a restart can bring the broken one back
	cfg := &Config{Servers: map[string]ServerConfig{"fs": childConfig("broken-install"), "ok": childConfig("echo")}}
	src, err := New(t.Context(), cfg, opts)
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, src.Close(context.Background())) })
	require.Equal(t, StateFailed, statusOf(t, src, "fs").State)
	require.Equal(t, StateReady, statusOf(t, src, "ok").State)

	fixed := &Config{Servers: map[string]ServerConfig{"fs": childConfig("echo"), "ok": childConfig("echo"),
		"new": childConfig("echo")}}
	reload, err := src.Reconfigure(fixed)
	require.NoError(t, err)
	assert.Equal(t, []string{"fs"}, reload.Restarted)
	assert.Contains(t, reload.NotApplied, "new")
	require.Eventually(t, func() bool { return statusOf(t, src, "fs").State == StateReady }, time.Minute,
		10*time.Millisecond, "the fixed entry starts at once, an hour before its next retry")
	assert.Equal(t, 1, statusOf(t, src, "ok").Attempts, "an unchanged entry is not restarted")

	again, err := src.Reconfigure(fixed)
	require.NoError(t, err)
	assert.Empty(t, again.Restarted, "the same config again restarts nothing")
	_, err = src.Reconfigure(&Config{Servers: map[string]ServerConfig{"fs": {}}})
	assert.Error(t, err, "an invalid config changes nothing")
	assert.Equal(t, StateReady, statusOf(t, src, "fs").State)
}
