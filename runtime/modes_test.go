package runtime_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolsearch/toolsearch/catalog"
	"github.com/toolsearch/toolsearch/hostfns"
	"github.com/toolsearch/toolsearch/runtime"
	"github.com/toolsearch/toolsearch/wasm"
)

func TestModesVisibleTools(t *testing.T) {
	client := catalog.Tool{Name: "pick_file", Description: "Let the user pick a file.", Handler: okHandler("pick_file")}
	tests := []struct {
		mode        runtime.Mode
		want        []string
		catalogSize int
		sources     runtime.SourceCounts
	}{
		{runtime.ModeOff, []string{"web_search", "web_fetch", "read_file", "create_issue", "message", "pick_file"}, 0, runtime.SourceCounts{}},
		{runtime.ModeCode, []string{"tool_search_code", "message"}, 5, runtime.SourceCounts{OpenClaw: 3, MCP: 1, Client: 1}},
		{runtime.ModeTools, []string{"tool_search", "tool_describe", "tool_call", "message"}, 5, runtime.SourceCounts{OpenClaw: 3, MCP: 1, Client: 1}},
		{runtime.ModeDirectory, []string{"tool_search", "tool_describe", "tool_call", "message", "pick_file"}, 4, runtime.SourceCounts{OpenClaw: 3, MCP: 1}},
	}
	for _, tt := range tests {
		t.Run(string(tt.mode), func(t *testing.T) {
			rt := newRuntime(t, tt.mode, nil)
			run := startRun(t, rt, runtime.RunRequest{Tools: mixedTools(), ClientTools: []catalog.Tool{client}})
			assert.Equal(t, tt.mode, run.Mode())
			assert.Equal(t, tt.want, toolNames(run.Tools()))
			tel := run.Telemetry()
			assert.Equal(t, tt.catalogSize, tel.CatalogSize)
			assert.Equal(t, tt.sources, tel.Sources)
			assert.Equal(t, len(tt.want), tel.VisibleTools)
			if tt.mode == runtime.ModeDirectory {
				assert.Contains(t, run.SystemPromptSection(), "- web_search (core): ")
			} else {
				assert.Empty(t, run.SystemPromptSection())
			}
			for _, d := range run.Tools() {
				assert.Equal(t, "function", d.Type)
				assert.True(t, json.Valid(d.Function.Parameters), d.Function.Name)
			}
		})
	}
}

// Client tools are cataloged as client:client:<name> and callable by id in code and tools mode.
func TestClientToolsCataloged(t *testing.T) {
	client := catalog.Tool{Source: catalog.SourceMCP, SourceName: "ignored", Name: "pick_file",
		Description: "Let the user pick a file.", Handler: okHandler("pick_file")}
	rt := newRuntime(t, runtime.ModeTools, nil)
	run := startRun(t, rt, runtime.RunRequest{Tools: mixedTools(), ClientTools: []catalog.Tool{client}})
	res := execute(t, run, "c1", runtime.ToolDescribeName, map[string]string{"id": "client:client:pick_file"})
	require.False(t, res.IsError, res.Content)
	res = execute(t, run, "c2", runtime.ToolCallName, map[string]any{"id": "client:client:pick_file", "args": map[string]string{"marker": "x"}})
	require.False(t, res.IsError, res.Content)
	assert.Contains(t, res.Content, "FAKE_PLUGIN_OK pick_file")
	require.Len(t, res.Hidden, 1)
	assert.Equal(t, catalog.SourceClient, res.Hidden[0].Source)
}

func TestDirectoryClientToolConflict(t *testing.T) {
	rt := newRuntime(t, runtime.ModeDirectory, nil)
	clients := []catalog.Tool{
		{Name: "web_search", Handler: okHandler("web_search")},
		{Name: "read_file", Handler: okHandler("read_file")},
		{Name: "pick_file", Handler: okHandler("pick_file")},
	}
	_, err := rt.StartRun(context.Background(), runtime.RunRequest{SessionID: "s", Tools: mixedTools(), ClientTools: clients})
	require.Error(t, err)
	assert.EqualError(t, err, "client tool name conflict: read_file, web_search")
	assert.True(t, errors.Is(err, runtime.ErrToolConflict))
	var ce *runtime.ConflictError
	require.True(t, errors.As(err, &ce))
	assert.True(t, ce.Client)

	// The same client tools are cataloged (by id) in tools mode: no conflict there.
	tools := newRuntime(t, runtime.ModeTools, nil)
	_, err = tools.StartRun(context.Background(), runtime.RunRequest{SessionID: "s", Tools: mixedTools(), ClientTools: clients})
	require.NoError(t, err)
}

func TestVisibleNameConflict(t *testing.T) {
	tools := mixedTools()
	dup := pluginTool("web_search", "another one")
	dup.SourceName = "other-plugin"
	tools = append(tools, dup)
	rt := newRuntime(t, runtime.ModeOff, nil)
	_, err := rt.StartRun(context.Background(), runtime.RunRequest{SessionID: "s", Tools: tools})
	assert.EqualError(t, err, "tool name conflict: web_search")

	// A direct-only tool cannot take a control tool's name.
	ctl := pluginTool("tool_call", "shadow")
	ctl.CatalogMode = catalog.CatalogModeDirectOnly
	rt = newRuntime(t, runtime.ModeTools, nil)
	_, err = rt.StartRun(context.Background(), runtime.RunRequest{SessionID: "s", Tools: []catalog.Tool{ctl}})
	assert.ErrorIs(t, err, runtime.ErrToolConflict)
}

// A run without a scope is an error, never some other run's catalog.
func TestMissingScope(t *testing.T) {
	rt := newRuntime(t, runtime.ModeTools, nil)
	_, err := rt.StartRun(context.Background(), runtime.RunRequest{Tools: mixedTools()})
	assert.ErrorIs(t, err, catalog.ErrNoScope)
	run, err := rt.StartRun(context.Background(), runtime.RunRequest{RunID: "only-a-run", Tools: mixedTools()})
	require.NoError(t, err)
	require.NoError(t, run.Close())
}

func TestControlToolDeniedByPolicy(t *testing.T) {
	logger, buf := newLogger()
	policy := &catalog.Policy{Agent: catalog.Rule{Deny: []string{"tool_search_code"}}}
	rt := newRuntime(t, runtime.ModeCode, &runtime.Options{Policy: policy, Logger: logger})
	run := startRun(t, rt, runtime.RunRequest{Tools: mixedTools()})
	assert.Equal(t, runtime.ModeOff, run.Mode())
	assert.Equal(t, []string{"web_search", "web_fetch", "read_file", "create_issue", "message"}, toolNames(run.Tools()))
	assert.Contains(t, buf.String(), "tool search: not applied to this run")
	assert.Contains(t, buf.String(), "the policy denies the tool_search_code control tool")
	tel := run.Telemetry()
	assert.Equal(t, runtime.ModeCode, tel.RequestedMode)
	assert.Contains(t, tel.NotApplied, "tool_search_code")

	// A run's own policy decides for that run only.
	other := startRun(t, rt, runtime.RunRequest{SessionID: "other", Tools: mixedTools(), Policy: &catalog.Policy{}})
	assert.Equal(t, runtime.ModeCode, other.Mode())

	// In tools mode each of the three control tools counts.
	rt = newRuntime(t, runtime.ModeTools, &runtime.Options{Policy: &catalog.Policy{Session: catalog.Rule{Deny: []string{"tool_describe"}}}})
	run = startRun(t, rt, runtime.RunRequest{SessionID: "t", Tools: mixedTools()})
	assert.Equal(t, runtime.ModeOff, run.Mode())
}

func TestPolicyFiltersEveryMode(t *testing.T) {
	policy := &catalog.Policy{Agent: catalog.Rule{Deny: []string{"web_fetch", "source:mcp", "message"}}}
	for _, mode := range []runtime.Mode{runtime.ModeOff, runtime.ModeTools, runtime.ModeDirectory} {
		rt := newRuntime(t, mode, &runtime.Options{Policy: policy})
		run := startRun(t, rt, runtime.RunRequest{Tools: mixedTools()})
		for _, name := range toolNames(run.Tools()) {
			assert.NotContains(t, []string{"web_fetch", "create_issue", "message"}, name, mode)
		}
		if mode == runtime.ModeOff {
			continue
		}
		assert.Equal(t, 2, run.Telemetry().CatalogSize, mode)
		res := execute(t, run, "s", runtime.ToolSearchName, map[string]string{"query": "fetch a url page"})
		assert.NotContains(t, res.Content, "web_fetch", mode)
		res = execute(t, run, "c", runtime.ToolCallName, map[string]string{"id": "openclaw:core:web_fetch"})
		assert.True(t, res.IsError)
		assert.Contains(t, res.Content, "Unknown tool id: openclaw:core:web_fetch", mode)
	}
}

// failingFactory makes the sandbox fail to start, as on a host where wazero cannot compile.
func failingFactory(context.Context) (*hostfns.Sandbox, error) {
	return nil, fmt.Errorf("%w: no executable memory on this host", wasm.ErrStartup)
}

func TestCodeModeFallsBackToTools(t *testing.T) {
	for name, factory := range map[string]func(context.Context) (*hostfns.Sandbox, error){
		"error": failingFactory,
		"panic": func(context.Context) (*hostfns.Sandbox, error) { panic("boom") },
		"nil":   func(context.Context) (*hostfns.Sandbox, error) { return nil, nil },
	} {
		t.Run(name, func(t *testing.T) {
			logger, buf := newLogger()
			rt := newRuntime(t, runtime.ModeCode, &runtime.Options{SandboxFactory: factory, Logger: logger})
			assert.Equal(t, runtime.ModeTools, rt.Mode())
			assert.Equal(t, runtime.ModeCode, rt.Config().Mode)
			assert.NotEmpty(t, rt.FallbackReason())
			assert.Contains(t, buf.String(), "the code sandbox cannot start on this host; using tools mode instead")

			run := startRun(t, rt, runtime.RunRequest{Tools: mixedTools()})
			assert.Equal(t, runtime.ModeTools, run.Mode())
			assert.Equal(t, []string{"tool_search", "tool_describe", "tool_call", "message"}, toolNames(run.Tools()))
			tel := run.Telemetry()
			assert.Equal(t, runtime.ModeCode, tel.RequestedMode)
			assert.Contains(t, tel.NotApplied, "code mode fell back to tools mode")
			res := execute(t, run, "x", runtime.ToolSearchCodeName, map[string]string{"code": "return 1"})
			assert.True(t, res.IsError, "tool_search_code is not declared after the fallback")
		})
	}
}

// A closed sandbox fails the probe like one that cannot start.
func TestProbeFailsOnClosedSandbox(t *testing.T) {
	sb, err := runtime.NewTestSandbox()
	require.NoError(t, err)
	require.NoError(t, sb.Close(context.Background()))
	rt := newRuntime(t, runtime.ModeCode, &runtime.Options{Sandbox: sb})
	assert.Equal(t, runtime.ModeTools, rt.Mode())
	assert.Contains(t, rt.FallbackReason(), "probe")
}

func TestCatalogReusedAcrossRunsOfASession(t *testing.T) {
	rt := newRuntime(t, runtime.ModeTools, nil)
	tools := mixedTools() // the same handlers: a rebuilt handler is a different tool (catalog fingerprint)
	first := startRun(t, rt, runtime.RunRequest{SessionID: "sess", RunID: "r1", Tools: tools})
	second := startRun(t, rt, runtime.RunRequest{SessionID: "sess", RunID: "r2", Tools: tools})
	assert.Same(t, first.Catalog(), second.Catalog(), "unchanged tools reuse the catalog")

	tools = append(tools[:len(tools):len(tools)], pluginTool("new_tool", "A new tool."))
	third := startRun(t, rt, runtime.RunRequest{SessionID: "sess", RunID: "r3", Tools: tools})
	assert.NotSame(t, first.Catalog(), third.Catalog())
	assert.Equal(t, 5, third.Catalog().Len())

	other := startRun(t, rt, runtime.RunRequest{SessionID: "other", RunID: "r4", Tools: mixedTools()})
	assert.NotSame(t, first.Catalog(), other.Catalog(), "sessions never share catalogs")
}

func TestClosedRuntimeAndRun(t *testing.T) {
	rt, err := runtime.New(context.Background(), &runtime.Options{Config: runtime.Config{Enabled: true, Mode: runtime.ModeTools}})
	require.NoError(t, err)
	run, err := rt.StartRun(context.Background(), runtime.RunRequest{SessionID: "s", Tools: mixedTools()})
	require.NoError(t, err)
	require.NoError(t, run.Close())
	require.NoError(t, run.Close(), "Close is idempotent")
	_, err = run.Execute(context.Background(), runtime.ToolCall{ID: "1", Name: "tool_search", Arguments: json.RawMessage(`{"query":"x"}`)})
	assert.ErrorIs(t, err, runtime.ErrRunClosed)

	require.NoError(t, rt.Close(context.Background()))
	require.NoError(t, rt.Close(context.Background()))
	_, err = rt.StartRun(context.Background(), runtime.RunRequest{SessionID: "s"})
	assert.ErrorIs(t, err, runtime.ErrClosed)

	_, err = runtime.New(context.Background(), &runtime.Options{Hooks: []runtime.BeforeToolCallHook{nil}})
	assert.Error(t, err)
}

func TestExecuteUnknownTool(t *testing.T) {
	for _, tt := range []struct {
		mode runtime.Mode
		want string
	}{
		{runtime.ModeOff, "Unknown tool: nope. Call one of the declared tools."},
		{runtime.ModeCode, "Unknown tool: nope. It is not declared; find and call catalog tools from tool_search_code"},
		{runtime.ModeTools, "Unknown tool: nope. It is not declared; find it with tool_search and call it with tool_call."},
	} {
		rt := newRuntime(t, tt.mode, nil)
		run := startRun(t, rt, runtime.RunRequest{Tools: mixedTools()})
		res := execute(t, run, "1", "nope", nil)
		assert.True(t, res.IsError)
		assert.Contains(t, res.Content, tt.want)
		// A hidden tool's name is not callable outside directory mode.
		if tt.mode != runtime.ModeOff {
			res = execute(t, run, "2", "web_search", map[string]string{"marker": "x"})
			assert.True(t, res.IsError, tt.mode)
		}
	}
}

func TestExecuteCancelledContext(t *testing.T) {
	rt := newRuntime(t, runtime.ModeOff, nil)
	run := startRun(t, rt, runtime.RunRequest{Tools: mixedTools()})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := run.Execute(ctx, runtime.ToolCall{ID: "1", Name: "web_search", Arguments: json.RawMessage(`{"marker":"x"}`)})
	assert.ErrorIs(t, err, context.Canceled)
}
