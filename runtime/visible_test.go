package runtime_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolsearch/toolsearch/catalog"
	"github.com/toolsearch/toolsearch/runtime"
)

// A tool named in Config.Visible is in the model's tool list beside the control tools in code, tools and
// directory mode, as a direct-only tool is, and unlike one it stays in the catalog: search still finds it.
func TestVisibleToolsShownAndSearchable(t *testing.T) {
	for _, mode := range []runtime.Mode{runtime.ModeCode, runtime.ModeTools, runtime.ModeDirectory} {
		t.Run(string(mode), func(t *testing.T) {
			rt := newRuntime(t, mode, &runtime.Options{Config: runtime.Config{
				Visible: []string{"web_fetch", "mcp:github:*"}}})
			run := startRun(t, rt, runtime.RunRequest{Tools: mixedTools(), UserMessage: "unrelated words"})
			names := toolNames(run.Tools())
			assert.Contains(t, names, "web_fetch")
			assert.Contains(t, names, "create_issue", "a glob selects as in tools.allow")
			assert.Contains(t, names, "message", "direct-only tools stay shown")
			assert.NotContains(t, names, "web_search", "a tool no selector names stays hidden")
			id, ok := run.ToolID("web_fetch")
			require.True(t, ok)
			assert.Equal(t, "openclaw:core:web_fetch", id)
			_, err := run.Catalog().Lookup("openclaw:core:web_fetch")
			assert.NoError(t, err, "a visible tool stays cataloged, so search and describe still find it")
			if mode == runtime.ModeTools {
				res := execute(t, run, "s", runtime.ToolSearchName, map[string]any{"query": "web_fetch"})
				require.False(t, res.IsError, res.Content)
				assert.Contains(t, res.Content, `"openclaw:core:web_fetch"`)
			}
		})
	}
}

// Visible is nothing in off mode, where every tool is shown anyway: it never shows a tool twice.
func TestVisibleToolsOffMode(t *testing.T) {
	rt := newRuntime(t, runtime.ModeOff, &runtime.Options{Config: runtime.Config{Visible: []string{"web_fetch"}}})
	run := startRun(t, rt, runtime.RunRequest{Tools: mixedTools()})
	names := toolNames(run.Tools())
	n := 0
	for _, name := range names {
		if name == "web_fetch" {
			n++
		}
	}
	assert.Equal(t, 1, n, names)
}

// A call of a visible tool goes through the pipeline as any call: the policy denies it (and then it is not even
// shown), the approver is asked, and a denial blocks it.
func TestVisibleToolCallsGoThroughThePipeline(t *testing.T) {
	var asked atomic.Int32
	rt := newRuntime(t, runtime.ModeTools, &runtime.Options{
		Config: runtime.Config{Visible: []string{"web_fetch", "read_file"}},
		Policy: &catalog.Policy{Agent: catalog.Rule{Deny: []string{"read_file"}, Ask: []string{"web_fetch"}}},
		Approver: runtime.ApproverFunc(func(_ context.Context, inv *runtime.Invocation) (runtime.Decision, error) {
			asked.Add(1)
			return runtime.Decision{Allow: false, Reason: "not today"}, nil
		}),
	})
	run := startRun(t, rt, runtime.RunRequest{Tools: mixedTools()})
	names := toolNames(run.Tools())
	assert.Contains(t, names, "web_fetch")
	assert.NotContains(t, names, "read_file", "a denied tool is never shown, visible or not")

	res := execute(t, run, "1", "web_fetch", map[string]any{"marker": "x"})
	assert.True(t, res.Blocked, res.Content)
	assert.Contains(t, res.Content, "not today")
	assert.Equal(t, int32(1), asked.Load())

	res = execute(t, run, "2", "read_file", map[string]any{"marker": "x"})
	assert.True(t, res.IsError)
	assert.NotContains(t, res.Content, "FAKE_PLUGIN_OK")
}

// The bounds: more than MaxVisibleTools tools, or definitions longer than MaxDirectoryBytes, refuse the run
// with the figures; one tool fewer (or a few bytes fewer) passes.
func TestVisibleToolsBounds(t *testing.T) {
	start := func(tools []catalog.Tool, sel ...string) (*runtime.Run, error) {
		rt := newRuntime(t, runtime.ModeTools, &runtime.Options{Config: runtime.Config{Visible: sel}})
		run, err := rt.StartRun(context.Background(), runtime.RunRequest{SessionID: t.Name(), Tools: tools})
		if run != nil {
			t.Cleanup(func() { _ = run.Close() })
		}
		return run, err
	}
	run, err := start(fakePlugin(runtime.MaxVisibleTools+5), fmt.Sprintf("fake_plugin_tool_%02d", 1), "fake_plugin_tool_0*")
	require.NoError(t, err, "nine tools")
	assert.Len(t, run.Tools(), 3+9)

	short := make([]catalog.Tool, runtime.MaxVisibleTools+1)
	for i := range short {
		short[i] = pluginTool(fmt.Sprintf("t%02d", i), "short")
	}
	_, err = start(short[:runtime.MaxVisibleTools], "t*")
	require.NoError(t, err, "exactly the bound passes")
	_, err = start(short, "t*")
	require.ErrorIs(t, err, runtime.ErrVisibleLimit)
	var lim *runtime.VisibleLimitError
	require.True(t, errors.As(err, &lim))
	assert.Equal(t, runtime.MaxVisibleTools+1, lim.Tools)
	assert.Contains(t, err.Error(), fmt.Sprintf("selects %d tools: at most %d", runtime.MaxVisibleTools+1, runtime.MaxVisibleTools))

	// Few tools, long definitions: the byte budget trips on its own.
	long := make([]catalog.Tool, 4)
	for i := range long {
		long[i] = pluginTool(fmt.Sprintf("long_%d", i), strings.Repeat("x", runtime.MaxDirectoryBytes/len(long)))
	}
	_, err = start(long[:2], "long_*")
	require.NoError(t, err, "half the budget passes")
	_, err = start(long, "long_*")
	require.ErrorIs(t, err, runtime.ErrVisibleLimit)
	require.True(t, errors.As(err, &lim))
	assert.Equal(t, 4, lim.Tools)
	assert.Greater(t, lim.Bytes, runtime.MaxDirectoryBytes)
	assert.Contains(t, err.Error(), fmt.Sprintf("%d bytes: at most %d bytes", lim.Bytes, runtime.MaxDirectoryBytes))
}

// tools.toolSearch.visible is a list of selectors; more entries than MaxVisibleTools is refused when the file
// is read, before any server starts.
func TestVisibleConfigKey(t *testing.T) {
	cfg, _, err := runtime.CheckConfig(json.RawMessage(`{visible: ["mcp:memory:read_graph", "server:git"]}`))
	require.NoError(t, err)
	assert.Equal(t, []string{"mcp:memory:read_graph", "server:git"}, cfg.Visible)

	key, ok := runtime.LookupConfigKey("visible")
	require.True(t, ok)
	many := make([]string, key.Max+1)
	for i := range many {
		many[i] = fmt.Sprintf("tool_%d", i)
	}
	raw, _ := json.Marshal(map[string]any{"visible": many})
	_, _, err = runtime.CheckConfig(raw)
	var ce *runtime.ConfigError
	require.True(t, errors.As(err, &ce))
	assert.Equal(t, []string{fmt.Sprintf("visible has %d selectors: at most %d tools may be kept in view, or the "+
		"tool list is as long as Tool Search is meant to avoid", key.Max+1, runtime.MaxVisibleTools)}, ce.Problems)
	raw, _ = json.Marshal(map[string]any{"visible": many[:key.Max]})
	_, _, err = runtime.CheckConfig(raw)
	require.NoError(t, err)

	for _, bad := range []string{`{visible: "web_fetch"}`, `{visible: [1]}`, `{visible: [""]}`, `{visible: true}`} {
		_, _, err := runtime.CheckConfig(json.RawMessage(bad))
		require.True(t, errors.As(err, &ce), bad)
		assert.Contains(t, ce.Problems[0], `visible must be an array of at most 32 tool selectors, for example ["mcp:memory:read_graph"]`, bad)
	}
}

// A misspelt annotation in visible would select nothing in silence: it is refused, naming the known ones.
func TestVisibleConfigUnknownAnnotation(t *testing.T) {
	_, _, err := runtime.CheckConfig(json.RawMessage(`{visible: ["annotation:readOnyl"]}`))
	var ce *runtime.ConfigError
	require.True(t, errors.As(err, &ce))
	assert.Equal(t, []string{`visible: unknown annotation in "annotation:readOnyl" (known: annotation:readOnly, ` +
		`annotation:destructive, annotation:idempotent, annotation:openWorld)`}, ce.Problems)
}

// The bound is on the list the model is shown when the run starts. Tools that arrive later through the run's
// ToolFeed (a server that finished starting) never stop the catalog from following them, even when the
// selectors now match more than the bound: the model's list stays what it was, and search finds the new tools.
func TestVisibleBoundDoesNotFreezeAFeed(t *testing.T) {
	rt := newRuntime(t, runtime.ModeTools, &runtime.Options{Config: runtime.Config{Visible: []string{"server:big"}}})
	feed := newTestFeed(nil, starting("big", time.Minute))
	run := startRun(t, rt, runtime.RunRequest{Tools: mixedTools(), Feed: feed})
	before := toolNames(run.Tools())

	big := make([]catalog.Tool, runtime.MaxVisibleTools+8)
	for i := range big {
		big[i] = catalog.Tool{Source: catalog.SourceMCP, SourceName: "big", Name: fmt.Sprintf("big_tool_%02d", i),
			Description: "A tool of the big server.", Handler: okHandler("big")}
	}
	feed.set(big)
	res := execute(t, run, "1", runtime.ToolSearchName, map[string]any{"query": "big_tool_39"})
	require.False(t, res.IsError, res.Content)
	assert.Contains(t, res.Content, "mcp:big:big_tool_39")
	assert.Equal(t, before, toolNames(run.Tools()), "what the model sees is fixed for the run")

	// A run started now is refused, with the figure.
	_, err := rt.StartRun(context.Background(), runtime.RunRequest{SessionID: "later", Tools: mixedTools(), Feed: feed})
	var lim *runtime.VisibleLimitError
	require.ErrorAs(t, err, &lim)
	assert.Equal(t, len(big), lim.Tools)
}
