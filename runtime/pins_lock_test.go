//go:build unix

package runtime_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolsearch/toolsearch/catalog"
	"github.com/toolsearch/toolsearch/runtime"
)

// holdLock takes the pin file's lock on a descriptor of its own, which flock treats as another holder exactly
// as it would another process; the returned func releases it.
func holdLock(t *testing.T, pinPath string) (release func()) {
	t.Helper()
	f, err := os.OpenFile(filepath.Join(filepath.Dir(pinPath), "."+filepath.Base(pinPath)+".lock"), os.O_CREATE|os.O_RDWR, 0o600)
	require.NoError(t, err)
	require.NoError(t, syscall.Flock(int(f.Fd()), syscall.LOCK_EX))
	released := false
	release = func() {
		if !released {
			released = true
			_ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
			f.Close()
		}
	}
	t.Cleanup(release)
	return release
}

// callAsync calls tool in a run of its own and delivers the result; hang detection is the caller's.
func callAsync(ctx context.Context, rt *runtime.Runtime, session string, tool catalog.Tool) <-chan *runtime.CallResult {
	done := make(chan *runtime.CallResult, 1)
	go func() {
		run, err := rt.StartRun(ctx, runtime.RunRequest{SessionID: session, Tools: []catalog.Tool{tool}})
		if err != nil {
			done <- &runtime.CallResult{IsError: true, Content: err.Error()}
			return
		}
		defer run.Close()
		args, _ := json.Marshal(map[string]any{"id": tool.ID(), "args": map[string]string{"title": "bug"}})
		res, err := run.Execute(ctx, runtime.ToolCall{ID: "c", Name: runtime.ToolCallName, Arguments: args})
		if err != nil {
			res = &runtime.CallResult{IsError: true, Content: "execute: " + err.Error()}
		}
		done <- res
	}()
	return done
}

// hangBound only detects a hang (the defect this file guards against made calls wait forever); no assertion
// depends on how fast a call is.
const hangBound = 30 * time.Second

func await(t *testing.T, done <-chan *runtime.CallResult, what string) *runtime.CallResult {
	t.Helper()
	select {
	case res := <-done:
		return res
	case <-time.After(hangBound):
		t.Fatalf("%s hangs while another process holds the pin file's lock", what)
		return nil
	}
}

func TestHeldPinLockFailsClosedAndBlocksNoOtherCall(t *testing.T) {
	path := filepath.Join(t.TempDir(), "pins.json")
	pins, err := runtime.OpenPinFile(path)
	require.NoError(t, err)
	rt := newRuntime(t, runtime.ModeTools, &runtime.Options{Pins: pins})

	pinned := issueTool("Create an issue.", issueSchema)
	require.False(t, callIssue(t, rt, pinned).IsError, "the first call pins it")
	unpinned := catalog.Tool{Source: catalog.SourceMCP, SourceName: "github", Name: "close_issue",
		Description: "Close an issue.", Parameters: json.RawMessage(issueSchema), Handler: okHandler("close_issue")}

	release := holdLock(t, path)

	// A call that must record a pin waits for the lock (here as long as a test allows) without holding the
	// PinFile's mutex, so calls of other clients to tools pinned already go through meanwhile.
	restore := runtime.SetLockTimeout(hangBound)
	waiting := callAsync(context.Background(), rt, "client-a", unpinned)
	for range 3 {
		res := await(t, callAsync(context.Background(), rt, "client-b", pinned), "a call of a pinned tool")
		require.False(t, res.IsError, res.Content)
		select {
		case res := <-waiting:
			t.Fatalf("the call that needs the lock returned while it was held: %s", res.Content)
		default:
		}
	}
	release()
	res := await(t, waiting, "the call that waited for the lock")
	assert.False(t, res.IsError, "once the lock is free the pin is recorded and the call runs: %s", res.Content)
	restore()

	// A lock that cannot be had within the lock timeout fails the call closed, naming why.
	holdLock(t, path)
	defer runtime.SetLockTimeout(50 * time.Millisecond)()
	other := unpinned
	other.Name = "reopen_issue"
	res = await(t, callAsync(context.Background(), rt, "client-c", other), "a call of an unpinned tool")
	assert.True(t, res.Blocked)
	assert.Equal(t, "Tool call blocked: the definition of mcp:github:reopen_issue could not be pinned: "+
		"pin file locked by another process.", res.Content)
	list, err := pins.Pins()
	require.NoError(t, err)
	assert.Len(t, list, 2, "nothing was recorded for the blocked call")
}

func TestPinLockWaitEndsWithTheContext(t *testing.T) {
	path := filepath.Join(t.TempDir(), "pins.json")
	pins, err := runtime.OpenPinFile(path)
	require.NoError(t, err)
	holdLock(t, path)
	defer runtime.SetLockTimeout(hangBound)()

	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- pins.Forget(ctx, "mcp:github:create_issue") }()
	select {
	case err := <-done:
		require.ErrorIs(t, err, runtime.ErrPinFileLocked)
		require.ErrorIs(t, err, runtime.ErrPinFile)
		assert.ErrorIs(t, err, context.DeadlineExceeded, "the caller's deadline, not the lock timeout, ended the wait")
	case <-time.After(hangBound / 2):
		t.Fatal("Forget outlived its context while the lock was held")
	}
}
