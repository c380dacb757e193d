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

// testFeed is a ToolFeed whose servers the test starts, fails and changes. Arm makes its next Changed call — the
// one a run makes when it begins to wait — run a function in the background: a server that comes up while a
// call is waiting for it, with no sleep to order the two.
type testFeed struct {
	mu      sync.Mutex
	tools   []catalog.Tool
	pending []runtime.PendingSource
	changed chan struct{}
	onWait  func()
}

func newTestFeed(tools []catalog.Tool, pending ...runtime.PendingSource) *testFeed {
	return &testFeed{tools: tools, pending: pending, changed: make(chan struct{})}
}

func (f *testFeed) Current() ([]catalog.Tool, []runtime.PendingSource) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]catalog.Tool(nil), f.tools...), append([]runtime.PendingSource(nil), f.pending...)
}

func (f *testFeed) Changed() <-chan struct{} {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.onWait != nil {
		go f.onWait()
		f.onWait = nil
	}
	return f.changed
}

func (f *testFeed) arm(fn func()) {
	f.mu.Lock()
	f.onWait = fn
	f.mu.Unlock()
}

func (f *testFeed) set(tools []catalog.Tool, pending ...runtime.PendingSource) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.tools, f.pending = tools, pending
	close(f.changed)
	f.changed = make(chan struct{})
}

// memoryTools are the tools of an MCP server "memory" that is slow to start.
func memoryTools() []catalog.Tool {
	return []catalog.Tool{{
		Source: catalog.SourceMCP, SourceName: "memory", Name: "create_entities",
		Description: "Create multiple new entities in the knowledge graph.",
		Parameters:  json.RawMessage(`{"type":"object","properties":{"names":{"type":"array","items":{"type":"string"}}}}`),
		Handler:     okHandler("create_entities"),
	}}
}

func starting(name string, readyIn time.Duration) runtime.PendingSource {
	now := time.Now()
	return runtime.PendingSource{Name: name, SourceName: name, Starting: true, Since: now, ReadyBy: now.Add(readyIn)}
}

func failedSource(name, reason string) runtime.PendingSource {
	return runtime.PendingSource{Name: name, SourceName: name, Since: time.Now(), Reason: reason,
		RetryAt: time.Now().Add(20 * time.Second)}
}

func executeIn(t *testing.T, ctx context.Context, run *runtime.Run, name string, args any) *runtime.CallResult {
	t.Helper()
	raw, err := json.Marshal(args)
	require.NoError(t, err)
	res, err := run.Execute(ctx, runtime.ToolCall{ID: "c1", Name: name, Arguments: raw})
	require.NoError(t, err)
	return res
}

// testCtx bounds a test's call far beyond any wait the run should make: a wait that ignored its bounds would
// end here, as a context error the test reports, instead of hanging the suite.
func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func TestFeedCallsWaitForAStartingServer(t *testing.T) {
	codeSearchAndCall := `const h = await openclaw.tools.search("create entities knowledge graph");
		const r = await openclaw.tools.call(h[0].id, {names: ["a"]});
		return r.result.details.tool`
	cases := []struct {
		name string
		mode runtime.Mode
		tool string
		args any
		want string
	}{
		{"tools mode search", runtime.ModeTools, runtime.ToolSearchName, map[string]any{"query": "knowledge graph entities"}, "mcp:memory:create_entities"},
		{"tools mode describe", runtime.ModeTools, runtime.ToolDescribeName, map[string]any{"id": "mcp:memory:create_entities"}, `"parameters"`},
		{"tools mode call", runtime.ModeTools, runtime.ToolCallName, map[string]any{"id": "mcp:memory:create_entities", "args": map[string]any{"names": []string{"a"}}}, "FAKE_PLUGIN_OK create_entities"},
		{"directory mode call", runtime.ModeDirectory, runtime.ToolCallName, map[string]any{"id": "mcp:memory:create_entities", "args": map[string]any{}}, "FAKE_PLUGIN_OK create_entities"},
		{"directory mode hidden name", runtime.ModeDirectory, "create_entities", map[string]any{}, "FAKE_PLUGIN_OK create_entities"},
		{"code mode", runtime.ModeCode, runtime.ToolSearchCodeName, map[string]any{"code": codeSearchAndCall}, `"value":"create_entities"`},
		{"off mode", runtime.ModeOff, "create_entities", map[string]any{}, "FAKE_PLUGIN_OK create_entities"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			rt := newRuntime(t, tc.mode, nil)
			feed := newTestFeed(nil, starting("memory", time.Minute))
			run, err := rt.StartRun(context.Background(), runtime.RunRequest{SessionID: "s", Feed: feed, MaxSourceWait: time.Minute})
			require.NoError(t, err)
			defer run.Close()
			if run.Catalog() != nil {
				require.Zero(t, run.Catalog().Len(), "the server has not listed its tools when the run starts")
			}
			feed.arm(func() { feed.set(memoryTools()) })

			res := executeIn(t, testCtx(t), run, tc.tool, tc.args)
			assert.False(t, res.IsError, res.Content)
			assert.Contains(t, res.Content, tc.want)
			assert.NotContains(t, res.Content, "No tool")
			assert.NotContains(t, res.Content, "Unknown tool")
			assert.NotContains(t, res.Content, "still starting")
		})
	}
}

func TestFeedWaitIsBounded(t *testing.T) {
	cases := []struct {
		name    string
		readyIn time.Duration // the source's own bound
		maxWait time.Duration // the run's bound
	}{
		{"by the server's start timeout", 50 * time.Millisecond, time.Minute},
		{"by MaxSourceWait", time.Minute, 50 * time.Millisecond},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			rt := newRuntime(t, runtime.ModeTools, nil)
			feed := newTestFeed(mixedTools(), starting("memory", tc.readyIn))
			run, err := rt.StartRun(context.Background(), runtime.RunRequest{SessionID: "s", Feed: feed, MaxSourceWait: tc.maxWait})
			require.NoError(t, err)
			defer run.Close()

			res := executeIn(t, testCtx(t), run, runtime.ToolSearchName, map[string]any{"query": "knowledge graph entities"})
			assert.Equal(t, "[]", string(res.Details))
			assert.Contains(t, res.Content, `No tool available now matched.`)
			assert.Contains(t, res.Content, `Server "memory" is still starting`)
			assert.Contains(t, res.Content, "retry in a few seconds")
			assert.NotContains(t, res.Content, "No tool has")

			res = executeIn(t, testCtx(t), run, runtime.ToolCallName, map[string]any{"id": "mcp:memory:create_entities"})
			assert.True(t, res.IsError)
			assert.True(t, strings.HasPrefix(res.Content, `server "memory" is still starting`), res.Content)
			assert.NotContains(t, res.Content, "Unknown tool")

			// Hits from the servers that are up come with the note that the answer is partial.
			res = executeIn(t, testCtx(t), run, runtime.ToolSearchName, map[string]any{"query": "web search"})
			assert.Contains(t, res.Content, "openclaw:core:web_search")
			assert.Contains(t, res.Content, `Server "memory" is still starting`)
		})
	}
}

func TestFeedWaitEndsWithTheCall(t *testing.T) {
	rt := newRuntime(t, runtime.ModeTools, nil)
	feed := newTestFeed(nil, starting("memory", time.Minute))
	run, err := rt.StartRun(context.Background(), runtime.RunRequest{SessionID: "s", Feed: feed, MaxSourceWait: time.Minute})
	require.NoError(t, err)
	defer run.Close()
	ctx, cancel := context.WithCancel(testCtx(t))
	feed.arm(cancel)
	_, err = run.Execute(ctx, runtime.ToolCall{ID: "c1", Name: runtime.ToolSearchName, Arguments: json.RawMessage(`{"query":"create entities"}`)})
	require.ErrorIs(t, err, context.Canceled)
}

func TestFeedNamesAServerThatIsDown(t *testing.T) {
	for _, mode := range []runtime.Mode{runtime.ModeTools, runtime.ModeCode} {
		t.Run(string(mode), func(t *testing.T) {
			rt := newRuntime(t, mode, nil)
			feed := newTestFeed(mixedTools(), failedSource("memory", "exit status 1; stderr: npm error 404 Not Found - @modelcontextprotocol/server-memroy"))
			run, err := rt.StartRun(context.Background(), runtime.RunRequest{SessionID: "s", Feed: feed})
			require.NoError(t, err)
			defer run.Close()
			var res *runtime.CallResult
			if mode == runtime.ModeCode {
				res = executeIn(t, testCtx(t), run, runtime.ToolSearchCodeName, map[string]any{"code": `
					const hits = await openclaw.tools.search("knowledge graph entities");
					try { await openclaw.tools.describe("mcp:memory:create_entities") } catch (e) { return [hits.length, e.message] }`})
				var body struct {
					Value   []any    `json:"value"`
					Notices []string `json:"notices"`
				}
				require.NoError(t, json.Unmarshal([]byte(res.Content), &body), res.Content)
				require.Len(t, body.Value, 2)
				assert.Equal(t, float64(0), body.Value[0])
				assert.Regexp(t, `^server "memory" is not available: exit status 1; stderr: npm error 404 Not Found - `+
					`@modelcontextprotocol/server-memroy; next attempt in (19|20) s\.$`, body.Value[1])
				require.Len(t, body.Notices, 2, "why the search was empty, and which server it could not look in")
				assert.Regexp(t, `^Server "memory" is not available: exit status 1; stderr: npm error 404 Not Found - `+
					`@modelcontextprotocol/server-memroy; next attempt in (19|20) s\. Its tools are not in this answer\.$`, body.Notices[1])
			} else {
				res = executeIn(t, testCtx(t), run, runtime.ToolDescribeName, map[string]any{"id": "mcp:memory:create_entities"})
				assert.True(t, res.IsError)
				assert.Regexp(t, `^server "memory" is not available: exit status 1; stderr: npm error 404 Not Found - `+
					`@modelcontextprotocol/server-memroy; next attempt in (19|20) s\.$`, res.Content)
				res = executeIn(t, testCtx(t), run, runtime.ToolSearchName, map[string]any{"query": "knowledge graph entities"})
				assert.Contains(t, res.Content, `Server "memory" is not available: exit status 1`)
				res = executeIn(t, testCtx(t), run, runtime.ToolCallName, map[string]any{"id": "mcp:core:nothing_here"})
				assert.Contains(t, res.Content, "Unknown tool id: mcp:core:nothing_here.")
				assert.Contains(t, res.Content, `Server "memory" is not available`, "an unknown id also says which server could not be looked in")
			}
		})
	}
}

func TestFeedChangesReachARunningRun(t *testing.T) {
	rt := newRuntime(t, runtime.ModeTools, nil)
	feed := newTestFeed(mixedTools())
	run, err := rt.StartRun(context.Background(), runtime.RunRequest{SessionID: "s", Feed: feed})
	require.NoError(t, err)
	defer run.Close()
	res := executeIn(t, testCtx(t), run, runtime.ToolSearchName, map[string]any{"query": "knowledge graph entities"})
	require.Equal(t, "[]", string(res.Details))

	// tools/list_changed: the server adds a tool while the run goes on.
	feed.set(append(mixedTools(), memoryTools()...))
	res = executeIn(t, testCtx(t), run, runtime.ToolSearchName, map[string]any{"query": "knowledge graph entities"})
	assert.Contains(t, string(res.Details), "mcp:memory:create_entities")
	assert.Equal(t, 5, run.Catalog().Len(), "four cataloged tools of mixedTools and the new one")
	res = executeIn(t, testCtx(t), run, runtime.ToolCallName, map[string]any{"id": "mcp:memory:create_entities"})
	assert.False(t, res.IsError, res.Content)

	// And removes it again.
	feed.set(mixedTools())
	res = executeIn(t, testCtx(t), run, runtime.ToolCallName, map[string]any{"id": "mcp:memory:create_entities"})
	assert.True(t, res.IsError)
	assert.Contains(t, res.Content, "Unknown tool id")
}

// A server that starts for longer than the script's codeTimeoutMs does not time the script out: waiting for it is
// not the script's doing, and the run's own bounds end the wait.
func TestFeedWaitHoldsTheScriptDeadline(t *testing.T) {
	rt := newRuntime(t, runtime.ModeCode, &runtime.Options{Config: runtime.Config{Enabled: true, Mode: runtime.ModeCode, CodeTimeoutMs: 1000}})
	feed := newTestFeed(nil, starting("memory", time.Minute))
	run, err := rt.StartRun(context.Background(), runtime.RunRequest{SessionID: "s", Feed: feed, MaxSourceWait: time.Minute})
	require.NoError(t, err)
	defer run.Close()
	feed.arm(func() {
		time.Sleep(1500 * time.Millisecond) // longer than the script may run
		feed.set(memoryTools())
	})
	res := executeIn(t, testCtx(t), run, runtime.ToolSearchCodeName, map[string]any{"code": `
		const h = await openclaw.tools.search("knowledge graph entities");
		return h.map(x => x.id)`})
	assert.False(t, res.IsError, res.Content)
	assert.Contains(t, res.Content, `"value":["mcp:memory:create_entities"]`)
}

// A search that the ready servers answer well (hits, every word known) is answered at once beside a server that
// never finishes starting, and names it; the control is the same search with only the ready server. Tools and
// code mode alike. A wrong program waits for the hung server (its minute, or the budget).
func TestSearchAnswersAtOnceBesideAHungServer(t *testing.T) {
	for _, mode := range []runtime.Mode{runtime.ModeTools, runtime.ModeCode} {
		t.Run(string(mode), func(t *testing.T) {
			rt := newRuntime(t, mode, nil)
			search := func(feed *testFeed) (*runtime.CallResult, time.Duration) {
				run, err := rt.StartRun(context.Background(), runtime.RunRequest{SessionID: "s", Feed: feed, MaxSourceWait: time.Minute})
				require.NoError(t, err)
				defer run.Close()
				began := time.Now()
				var res *runtime.CallResult
				if mode == runtime.ModeCode {
					res = executeIn(t, testCtx(t), run, runtime.ToolSearchCodeName, map[string]any{"code": `
						const h = await openclaw.tools.search("create entities in the knowledge graph");
						return h.map(x => x.id)`})
				} else {
					res = executeIn(t, testCtx(t), run, runtime.ToolSearchName, map[string]any{"query": "create entities in the knowledge graph"})
				}
				return res, time.Since(began)
			}
			control, controlTook := search(newTestFeed(memoryTools()))
			res, took := search(newTestFeed(memoryTools(), starting("hung", time.Minute)))
			assert.Contains(t, control.Content, "mcp:memory:create_entities")
			assert.Contains(t, res.Content, "mcp:memory:create_entities")
			assert.Regexp(t, `Server \\?"hung\\?" is still starting`, res.Content, "the answer names the server it could not include")
			t.Logf("with a hung server %s, control %s", took, controlTook)
			assert.Less(t, took, controlTook+2*time.Second, "the hung server's minute is not waited for")
		})
	}
}

// A search that names a server still starting waits for it, although ready tools have every word of it: its
// tools are the likeliest answer ("current time" while the server "time" starts, beside a file tool that shows a
// modification time). The wait ends when the server lists them.
func TestSearchNamingAStartingServerWaitsForIt(t *testing.T) {
	timeTools := []catalog.Tool{{
		Source: catalog.SourceMCP, SourceName: "time", Name: "current_time",
		Description: "Get the current time in a time zone.", Handler: okHandler("current_time"),
	}}
	info := pluginTool("file_info", "Show a file's size and its last modification time.")
	info.SourceName = "core"
	ready := append(mixedTools(), info)
	cat, err := catalog.New(ready, nil)
	require.NoError(t, err)
	require.Empty(t, cat.Unmatched("current time"), "ready tools have every word of the request")
	for _, mode := range []runtime.Mode{runtime.ModeTools, runtime.ModeCode} {
		t.Run(string(mode), func(t *testing.T) {
			rt := newRuntime(t, mode, nil)
			feed := newTestFeed(ready, starting("time", time.Minute))
			run, err := rt.StartRun(context.Background(), runtime.RunRequest{SessionID: "s", Feed: feed, MaxSourceWait: time.Minute})
			require.NoError(t, err)
			defer run.Close()
			feed.arm(func() { feed.set(append(ready, timeTools...)) })
			var res *runtime.CallResult
			if mode == runtime.ModeCode {
				res = executeIn(t, testCtx(t), run, runtime.ToolSearchCodeName, map[string]any{"code": `
					return (await openclaw.tools.search("current time")).map(x => x.id)`})
			} else {
				res = executeIn(t, testCtx(t), run, runtime.ToolSearchName, map[string]any{"query": "current time"})
			}
			assert.Contains(t, res.Content, "mcp:time:current_time")
			assert.NotContains(t, res.Content, "still starting")
		})
	}
}

// A search whose words no ready tool has waits for the server still starting, and reports progress while it
// waits, naming it.
func TestWaitReportsProgress(t *testing.T) {
	rt := newRuntime(t, runtime.ModeTools, nil)
	feed := newTestFeed(mixedTools(), starting("memory", time.Minute))
	run, err := rt.StartRun(context.Background(), runtime.RunRequest{SessionID: "s", Feed: feed, MaxSourceWait: time.Minute})
	require.NoError(t, err)
	defer run.Close()
	reports := make(chan runtime.WaitProgress, 100)
	ctx := runtime.WithWaitProgress(testCtx(t), func(p runtime.WaitProgress) { reports <- p })
	feed.arm(func() {
		first := <-reports // the wait has begun and said so: now the server comes up
		reports <- first
		feed.set(append(mixedTools(), memoryTools()...))
	})
	res := executeIn(t, ctx, run, runtime.ToolSearchName, map[string]any{"query": "knowledge graph entities"})
	assert.Contains(t, res.Content, "mcp:memory:create_entities")
	require.NotEmpty(t, reports)
	p := <-reports
	assert.Contains(t, p.Message, `"memory"`)
	assert.Greater(t, p.Bound, 50*time.Second, "the bound is the run's minute, capped by the server's")
}

// The default wait fits a client's 60 s request timeout: the whole of it for a search, less the script's own
// timeout for tool_search_code, whose script runs after what it waited for.
func TestDefaultWaitFitsTheClientTimeout(t *testing.T) {
	assert.Less(t, runtime.DefaultMaxSourceWait, 60*time.Second)
	assert.Greater(t, runtime.DefaultMaxSourceWait, 20*time.Second, "more than the old fixed 20 s")
	for _, mode := range []runtime.Mode{runtime.ModeTools, runtime.ModeCode} {
		t.Run(string(mode), func(t *testing.T) {
			rt := newRuntime(t, mode, nil)
			feed := newTestFeed(nil, starting("memory", 10*time.Minute))
			run, err := rt.StartRun(context.Background(), runtime.RunRequest{SessionID: "s", Feed: feed})
			require.NoError(t, err)
			defer run.Close()
			// The bound is known as the wait begins: the call is cancelled then, rather than sat out.
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			var p runtime.WaitProgress
			ctx = runtime.WithWaitProgress(ctx, func(w runtime.WaitProgress) {
				p = w
				cancel()
			})
			raw := map[string]any{"query": "knowledge graph"}
			name := runtime.ToolSearchName
			if mode == runtime.ModeCode {
				name, raw = runtime.ToolSearchCodeName, map[string]any{"code": `return await openclaw.tools.search("knowledge graph")`}
			}
			args, _ := json.Marshal(raw)
			_, _ = run.Execute(ctx, runtime.ToolCall{ID: "c1", Name: name, Arguments: args})
			want := runtime.DefaultMaxSourceWait
			if mode == runtime.ModeCode {
				want -= time.Duration(runtime.DefaultCodeTimeoutMs) * time.Millisecond
			}
			assert.InDelta(t, want.Seconds(), p.Bound.Seconds(), 1, "the wait's bound")
		})
	}
}

// A describe or call of a ready server's tool id is answered at once beside a server that never finishes
// starting; the control is the same call without it.
func TestLookupAnswersAtOnceBesideAHungServer(t *testing.T) {
	rt := newRuntime(t, runtime.ModeTools, nil)
	for _, tc := range []struct {
		tool string
		args map[string]any
		want string
	}{
		{runtime.ToolDescribeName, map[string]any{"id": "mcp:memory:create_entities"}, `"parameters"`},
		{runtime.ToolCallName, map[string]any{"id": "mcp:memory:create_entities", "args": map[string]any{"names": []string{"a"}}}, "FAKE_PLUGIN_OK create_entities"},
	} {
		t.Run(tc.tool, func(t *testing.T) {
			do := func(feed *testFeed) (*runtime.CallResult, time.Duration) {
				run, err := rt.StartRun(context.Background(), runtime.RunRequest{SessionID: "s", Feed: feed, MaxSourceWait: time.Minute})
				require.NoError(t, err)
				defer run.Close()
				began := time.Now()
				return executeIn(t, testCtx(t), run, tc.tool, tc.args), time.Since(began)
			}
			control, controlTook := do(newTestFeed(memoryTools()))
			res, took := do(newTestFeed(memoryTools(), starting("hung", time.Minute)))
			assert.Contains(t, control.Content, tc.want)
			assert.Contains(t, res.Content, tc.want)
			assert.Less(t, took, controlTook+2*time.Second, "the hung server is not waited for")
		})
	}
}

// TestSourceNoteSaysInstalling: a server whose package runner is still installing it is said to be installing,
// with the runner's name; one merely starting is not.
func TestSourceNoteSaysInstalling(t *testing.T) {
	now := time.Now()
	p := runtime.PendingSource{Name: "memory", Starting: true, Since: now.Add(-40 * time.Second), ReadyBy: now.Add(2 * time.Minute)}
	assert.Equal(t, `Unknown tool: x. Server "memory" is still starting (for 40 s so far, at most 120 s more); `+
		`retry in a few seconds. Its tools are not in this answer.`,
		runtime.UnknownWhilePending("x", []runtime.PendingSource{p}, now))
	p.Installer = "npx"
	assert.Equal(t, `Unknown tool: x. Server "memory" is still starting (installing with npx, for 40 s so far, at most 120 s more); `+
		`retry in a few seconds. Its tools are not in this answer.`, runtime.UnknownWhilePending("x", []runtime.PendingSource{p}, now))
}

// TestScriptNoticesForgetAServerThatCameUp: a script's first search answers at once without a starting server and
// the run notes it; the script then reaches that server, which comes up meanwhile. The answer must not tell the
// model the server is still starting, and a server still missing at the end is still named.
func TestScriptNoticesForgetAServerThatCameUp(t *testing.T) {
	rt := newRuntime(t, runtime.ModeCode, nil)
	feed := newTestFeed(mixedTools(), starting("memory", time.Minute), starting("slow", time.Minute))
	run, err := rt.StartRun(context.Background(), runtime.RunRequest{SessionID: "s", Feed: feed, MaxSourceWait: time.Minute})
	require.NoError(t, err)
	defer run.Close()
	// The describe of a memory tool waits for the feed to change; the change brings memory up, slow still starting.
	feed.arm(func() { feed.set(append(mixedTools(), memoryTools()...), starting("slow", time.Minute)) })
	res := executeIn(t, testCtx(t), run, runtime.ToolSearchCodeName, map[string]any{"code": `
		const hits = await openclaw.tools.search("web search");
		const d = await openclaw.tools.describe("mcp:memory:create_entities");
		return [hits.length > 0, d.id];`})
	var body struct {
		Value   []any    `json:"value"`
		Notices []string `json:"notices"`
	}
	require.NoError(t, json.Unmarshal([]byte(res.Content), &body), res.Content)
	require.Equal(t, []any{true, "mcp:memory:create_entities"}, body.Value, res.Content)
	for _, n := range body.Notices {
		assert.NotContains(t, n, `"memory"`, "memory came up during the script: %q is no longer true", n)
	}
	require.Len(t, body.Notices, 1, res.Content)
	assert.Contains(t, body.Notices[0], `Server "slow" is still starting`)
}
