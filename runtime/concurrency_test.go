package runtime_test

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolsearch/toolsearch/catalog"
	"github.com/toolsearch/toolsearch/runtime"
)

// TestConcurrentExecute hammers one Run from many goroutines and several Runs at once, across every kind of
// call, with approvers, hooks, the schema cache, the session log and policy changes in play. Run with -race.
func TestConcurrentExecute(t *testing.T) {
	const (
		goroutines = 4
		iterations = 8 // a multiple of 4: the mix below
		runs       = 3
	)
	var approved sync.Map
	approver := runtime.ApproverFunc(func(_ context.Context, inv *runtime.Invocation) (runtime.Decision, error) {
		approved.Store(inv.CallID, true)
		return runtime.Decision{Allow: true}, nil
	})
	hook := runtime.BeforeToolCallFunc(func(_ context.Context, inv *runtime.Invocation) (runtime.HookResult, error) {
		return runtime.HookResult{}, nil
	})
	mem := newMemoryLog()
	rt := newRuntime(t, runtime.ModeCode, &runtime.Options{Approver: approver, Hooks: []runtime.BeforeToolCallHook{hook}, SessionLog: mem})
	tools := fakePlugin(36)

	var wg sync.WaitGroup
	all := make([]*runtime.Run, runs)
	for r := range runs {
		run, err := rt.StartRun(context.Background(), runtime.RunRequest{SessionID: fmt.Sprintf("s%d", r), RunID: "r", Tools: tools})
		require.NoError(t, err)
		all[r] = run
		for g := range goroutines {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := range iterations {
					id := fmt.Sprintf("c%d_%d", g, i)
					target := fmt.Sprintf("fake_plugin_tool_%02d", 1+(g*iterations+i)%36)
					var code string
					switch i % 4 {
					case 0:
						code = fmt.Sprintf(`const h = await openclaw.tools.search(%q, {limit: 1});
							return (await openclaw.tools.call(h[0].id, {marker: %q})).result.details.tool`, target, id)
					case 1:
						code = fmt.Sprintf(`return (await openclaw.tools.describe(%q)).name`, target)
					default:
						code = fmt.Sprintf(`return (await Promise.all([1, 2].map(n => openclaw.tools.call(%q, {marker: "p" + n})))).length`, target)
					}
					args, _ := json.Marshal(map[string]string{"code": code})
					res, err := run.Execute(context.Background(), runtime.ToolCall{ID: id, Name: runtime.ToolSearchCodeName, Arguments: args})
					if !assert.NoError(t, err) || !assert.False(t, res.IsError, res.Content) {
						return
					}
				}
			}()
		}
	}
	// Policy changes while calls are in flight: a policy that still allows everything must not break anything.
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := range 50 {
			rt.SetPolicy(&catalog.Policy{Agent: catalog.Rule{Deny: []string{fmt.Sprintf("nothing_%d", i)}}})
		}
	}()
	wg.Wait()

	perRun := int64(goroutines * iterations)
	for _, run := range all {
		tel := run.Telemetry()
		assert.EqualValues(t, perRun/4+2*perRun/2, tel.CallCount, "every call counted exactly once")
		assert.EqualValues(t, perRun/4, tel.SearchCount)
		assert.EqualValues(t, perRun/4, tel.DescribeCount)
		assert.Equal(t, int(perRun), tel.Sandbox.Runs)
		ids := map[string]bool{}
		for _, c := range tel.Calls {
			assert.False(t, ids[c.CallID], "hidden ids are unique: %s", c.CallID)
			ids[c.CallID] = true
			_, ok := approved.Load(c.CallID)
			assert.True(t, ok, "every call was approved: %s", c.CallID)
		}
		require.NoError(t, run.Close())
	}
	for r := range runs {
		sum := runtime.Summarize(mem.get(fmt.Sprintf("s%d", r)))
		assert.Equal(t, 1, sum.Runs)
		assert.Len(t, sum.Calls, int(perRun/4+2*perRun/2))
	}
}

// Direct and structured calls on one Run, from many goroutines, without the sandbox.
func TestConcurrentStructuredCalls(t *testing.T) {
	rt := newRuntime(t, runtime.ModeDirectory, nil)
	run := startRun(t, rt, runtime.RunRequest{Tools: fakePlugin(36)})
	var wg sync.WaitGroup
	for g := range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 40 {
				name := fmt.Sprintf("fake_plugin_tool_%02d", 1+(g+i)%36)
				var res *runtime.CallResult
				switch i % 3 {
				case 0:
					res = execute(t, run, "x", name, map[string]string{"marker": "m"})
				case 1:
					res = execute(t, run, "x", runtime.ToolCallName, map[string]any{"id": name, "args": map[string]string{"marker": "m"}})
				default:
					res = execute(t, run, "x", runtime.ToolSearchName, map[string]any{"query": name})
				}
				assert.False(t, res.IsError, res.Content)
			}
		}()
	}
	wg.Wait()
	tel := run.Telemetry()
	assert.EqualValues(t, 16*27, tel.CallCount)
	assert.EqualValues(t, 16*13, tel.SearchCount)
}
