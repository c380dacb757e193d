package runtime_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolsearch/toolsearch/hostfns"
	"github.com/toolsearch/toolsearch/runtime"
)

// gatedFactory hands out the shared sandbox (or fails) only when the test opens the gate, so the tests see what
// happens while the sandbox is still compiling without depending on how long compiling takes.
func gatedFactory(t *testing.T, fail bool) (factory func(context.Context) (*hostfns.Sandbox, error), open func(), called <-chan struct{}) {
	gate, calls := make(chan struct{}), make(chan struct{}, 1)
	factory = func(ctx context.Context) (*hostfns.Sandbox, error) {
		calls <- struct{}{}
		select {
		case <-gate:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		if fail {
			return failingFactory(ctx)
		}
		return runtime.NewTestSandbox()
	}
	opened := false
	open = func() {
		if !opened {
			opened = true
			close(gate)
		}
	}
	t.Cleanup(open)
	return factory, open, calls
}

func backgroundRuntime(t *testing.T, factory func(context.Context) (*hostfns.Sandbox, error)) *runtime.Runtime {
	t.Helper()
	logger, _ := newLogger()
	rt, err := runtime.New(context.Background(), &runtime.Options{
		Config:         runtime.Config{Enabled: true, Mode: runtime.ModeCode},
		SandboxFactory: factory, SandboxInBackground: true, Logger: logger,
	})
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, rt.Close(context.Background())) })
	return rt
}

// New, StartRun and the run's tools do not wait for the sandbox; the first tool_search_code does, and runs once
// it is ready.
func TestSandboxInBackground(t *testing.T) {
	factory, open, called := gatedFactory(t, false)
	rt := backgroundRuntime(t, factory) // returns while the factory is held: no deadlock here is the assertion
	<-called
	assert.Equal(t, runtime.ModeCode, rt.Mode())
	select {
	case <-rt.SandboxReady():
		t.Fatal("ready before the factory returned")
	default:
	}
	run := startRun(t, rt, runtime.RunRequest{Tools: mixedTools()})
	assert.Equal(t, runtime.ModeCode, run.Mode())
	assert.Equal(t, []string{runtime.ToolSearchCodeName, "message"}, toolNames(run.Tools()))

	// A call whose context ends before the sandbox is ready gives up with its context.
	short, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := run.Execute(short, runtime.ToolCall{ID: "early", Name: runtime.ToolSearchCodeName,
		Arguments: []byte(`{"code": "return 1"}`)})
	require.ErrorIs(t, err, context.Canceled)

	done := make(chan *runtime.CallResult, 1)
	go func() {
		res, err := run.Execute(context.Background(), runtime.ToolCall{ID: "c", Name: runtime.ToolSearchCodeName,
			Arguments: []byte(`{"code": "return 6 * 7"}`)})
		if err != nil {
			res = &runtime.CallResult{IsError: true, Content: err.Error()}
		}
		done <- res
	}()
	select {
	case res := <-done:
		t.Fatalf("tool_search_code ran before the sandbox was ready: %s", res.Content)
	case <-time.After(50 * time.Millisecond): // only a chance for a defect to show; no bound on the code
	}
	open()
	res := <-done
	require.False(t, res.IsError, res.Content)
	var cr codeResult
	require.NoError(t, json.Unmarshal(res.Details, &cr), "details: %s", res.Details)
	assert.True(t, cr.OK)
	assert.Equal(t, "42", string(cr.Value))
	<-rt.SandboxReady()
	assert.Equal(t, runtime.ModeCode, rt.Mode())
	assert.Empty(t, rt.FallbackReason())
}

// A sandbox that fails in the background still falls back: runs started after it are in tools mode, and one
// started before says why tool_search_code is unavailable.
func TestSandboxInBackgroundFallsBack(t *testing.T) {
	factory, open, called := gatedFactory(t, true)
	rt := backgroundRuntime(t, factory)
	<-called
	before := startRun(t, rt, runtime.RunRequest{SessionID: "before", Tools: mixedTools()})
	assert.Equal(t, runtime.ModeCode, before.Mode())
	open()
	<-rt.SandboxReady()
	assert.Equal(t, runtime.ModeTools, rt.Mode())
	assert.Contains(t, rt.FallbackReason(), "no executable memory on this host")

	res := execute(t, before, "c", runtime.ToolSearchCodeName, map[string]string{"code": "return 1"})
	assert.True(t, res.IsError)
	assert.Equal(t, "tool_search_code is unavailable: the code sandbox could not start on this host ("+
		rt.FallbackReason()+"); runs started from now on use tools mode (tool_search, tool_describe, tool_call).",
		res.Content)

	after := startRun(t, rt, runtime.RunRequest{SessionID: "after", Tools: mixedTools()})
	assert.Equal(t, runtime.ModeTools, after.Mode())
	assert.Contains(t, after.Telemetry().NotApplied, "code mode fell back to tools mode")
}

// Close stops a start still under way and does not leave it running.
func TestCloseWhileTheSandboxStarts(t *testing.T) {
	factory, _, called := gatedFactory(t, false)
	rt, err := runtime.New(context.Background(), &runtime.Options{
		Config:         runtime.Config{Enabled: true, Mode: runtime.ModeCode},
		SandboxFactory: factory, SandboxInBackground: true,
	})
	require.NoError(t, err)
	<-called
	require.NoError(t, rt.Close(context.Background()), "the factory sees its context end")
	select {
	case <-rt.SandboxReady():
	default:
		t.Fatal("Close returned before the start ended")
	}
	_, err = rt.StartRun(context.Background(), runtime.RunRequest{SessionID: "s"})
	assert.True(t, errors.Is(err, runtime.ErrClosed))
}
