package front

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"sort"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolsearch/toolsearch/catalog"
	"github.com/toolsearch/toolsearch/mcp/upstream"
	"github.com/toolsearch/toolsearch/runtime"
)

// newTestRuntime builds a runtime in mode; code mode creates (and Close closes) its own sandbox.
func newTestRuntime(t *testing.T, mode runtime.Mode) *runtime.Runtime {
	t.Helper()
	rt, err := runtime.New(context.Background(), &runtime.Options{Config: runtime.Config{Enabled: true, Mode: mode}})
	require.NoError(t, err)
	require.Equal(t, mode, rt.Mode(), "fallback: %s", rt.FallbackReason())
	t.Cleanup(func() { require.NoError(t, rt.Close(context.Background())) })
	return rt
}

// newTestServer serves the Tool Search surface of rt over src (and extra in-process tools).
func newTestServer(t *testing.T, rt *runtime.Runtime, src *upstream.Source, extra []catalog.Tool) *Server {
	t.Helper()
	srv, err := NewServer(t.Context(), rt, src, &ServerOptions{Tools: extra})
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, srv.Close()) })
	return srv
}

// connectStdio runs srv over a pair of pipes, as `toolsearch mcp serve` runs it over stdin and stdout, and
// connects a go-sdk client to the other ends.
func connectStdio(t *testing.T, srv *Server) *sdk.ClientSession {
	t.Helper()
	return connectStdioWith(t, srv, nil, "")
}

func listNames(t *testing.T, sess *sdk.ClientSession) []string {
	t.Helper()
	var out []string
	for tool, err := range sess.Tools(t.Context(), nil) {
		require.NoError(t, err)
		out = append(out, tool.Name)
	}
	sort.Strings(out)
	return out
}

// callText calls a tool over MCP and returns its text and isError.
func callText(t *testing.T, sess *sdk.ClientSession, name string, args any) (string, bool) {
	t.Helper()
	res, err := sess.CallTool(t.Context(), &sdk.CallToolParams{Name: name, Arguments: args})
	require.NoError(t, err)
	return resultText(res), res.IsError
}

// resultText is the text of a result's text blocks, one per line.
func resultText(res *sdk.CallToolResult) string {
	var parts []string
	for _, c := range res.Content {
		if tc, ok := c.(*sdk.TextContent); ok {
			parts = append(parts, tc.Text)
		}
	}
	return strings.Join(parts, "\n")
}

func TestServeToolsModeOverStdio(t *testing.T) {
	issues := newFakeServer(0)
	issues.AddTool("create_issue", "Create an issue in a repository's tracker.", echo("created: "))
	issues.AddTool("close_issue", "Close an issue.", echo("closed: "))
	weather := newFakeServer(0)
	weather.AddTool("forecast", "Weather forecast for a city.", echo("sunny in "))
	src := startSource(t, inMemoryConfig("issues", "weather"), fastOptions(nil),
		map[string]dialFunc{"issues": issues.dial, "weather": weather.dial})
	rt := newTestRuntime(t, runtime.ModeTools)
	srv := newTestServer(t, rt, src, nil)
	sess := connectStdio(t, srv)

	assert.Equal(t, []string{"tool_call", "tool_describe", "tool_search"}, listNames(t, sess),
		"the client sees the control tools, not the upstream schemas")

	text, isErr := callText(t, sess, "tool_search", map[string]any{"query": "weather forecast"})
	require.False(t, isErr, text)
	assert.Contains(t, text, "mcp:weather:forecast")
	assert.Contains(t, text, `"input":"unknown"`, "MCP schemas are never rendered into hints")

	text, isErr = callText(t, sess, "tool_describe", map[string]any{"id": "mcp:issues:create_issue"})
	require.False(t, isErr, text)
	assert.Contains(t, text, `"text"`, "describe shows the full schema")

	text, isErr = callText(t, sess, "tool_call", map[string]any{"id": "mcp:weather:forecast", "args": map[string]any{"text": "Lisbon"}})
	require.False(t, isErr, text)
	assert.Contains(t, text, "sunny in Lisbon")

	// An upstream change reaches search without restarting anything.
	weather.AddTool("air_quality", "Air quality index and pollen levels for a city.", echo("aqi "))
	require.Eventually(t, func() bool {
		text, _ := callText(t, sess, "tool_search", map[string]any{"query": "pollen"})
		return strings.Contains(text, "mcp:weather:air_quality")
	}, 10*time.Second, 20*time.Millisecond)

	// A crashed upstream fails the call with its name, and the others keep working.
	issues.Sever()
	require.Eventually(t, func() bool { return src.Status()[0].State != upstream.StateReady }, 5*time.Second, 10*time.Millisecond)
	text, isErr = callText(t, sess, "tool_call", map[string]any{"id": "mcp:issues:close_issue", "args": map[string]any{}})
	if isErr { // unless the retry was faster than this call
		assert.Contains(t, text, `mcp server "issues"`)
	}
	text, isErr = callText(t, sess, "tool_call", map[string]any{"id": "mcp:weather:forecast", "args": map[string]any{"text": "Porto"}})
	require.False(t, isErr, text)
}

func TestServeCodeMode(t *testing.T) {
	f := newFakeServer(0)
	f.AddTool("create_issue", "Create an issue in a repository's tracker.", echo("created: "))
	f.AddTool("list_repos", "List repositories.", echo(""))
	src := startSource(t, inMemoryConfig("github"), fastOptions(nil), map[string]dialFunc{"github": f.dial})
	local := catalog.Tool{
		Source: catalog.SourceOpenClaw, SourceName: "core", Name: "local_time", Description: "The current local time.",
		Parameters: json.RawMessage(`{"type":"object","properties":{}}`),
		Handler: catalog.HandlerFunc(func(context.Context, json.RawMessage) (*catalog.Result, error) {
			return &catalog.Result{Content: []catalog.Content{{Type: "text", Text: "12:00"}}}, nil
		}),
	}
	rt := newTestRuntime(t, runtime.ModeCode)
	srv := newTestServer(t, rt, src, []catalog.Tool{local})
	sess := connectStdio(t, srv)
	assert.Equal(t, []string{"tool_search_code"}, listNames(t, sess))

	code := `
const [hit] = await openclaw.tools.search("open an issue", {limit: 1});
const [time] = await openclaw.tools.search("local time", {limit: 1});
const [a, b] = await Promise.all([
  openclaw.tools.call(hit.id, {text: "bug"}),
  openclaw.tools.call(time.id),
]);
return {id: hit.id, issue: a.result.content[0].text, details: a.result.details, time: b.result.content[0].text};`
	text, isErr := callText(t, sess, "tool_search_code", map[string]any{"code": code})
	require.False(t, isErr, text)
	var out struct {
		OK    bool
		Value struct {
			ID, Issue, Time string
			Details         map[string]any
		}
		Telemetry runtime.CodeTelemetry
	}
	require.NoError(t, json.Unmarshal([]byte(text), &out), text)
	assert.True(t, out.OK)
	assert.Equal(t, "mcp:github:create_issue", out.Value.ID)
	assert.Equal(t, "created: bug", out.Value.Issue)
	assert.Equal(t, map[string]any{"echo": "bug"}, out.Value.Details)
	assert.Equal(t, "12:00", out.Value.Time)
	assert.Equal(t, 3, out.Telemetry.CatalogSize)
	assert.Equal(t, runtime.SourceCounts{OpenClaw: 1, MCP: 2}, out.Telemetry.Sources)
}

func TestServeDirectoryModeInstructions(t *testing.T) {
	local := catalog.Tool{
		Source: catalog.SourceOpenClaw, SourceName: "core", Name: "web_search", Description: "Search the web.",
		Parameters: json.RawMessage(`{"type":"object","properties":{"q":{"type":"string"}},"required":["q"]}`),
		Handler: catalog.HandlerFunc(func(context.Context, json.RawMessage) (*catalog.Result, error) {
			return &catalog.Result{Content: []catalog.Content{{Type: "text", Text: "results"}}}, nil
		}),
	}
	rt := newTestRuntime(t, runtime.ModeDirectory)
	srv := newTestServer(t, rt, nil, []catalog.Tool{local})
	sess := connectStdio(t, srv)
	assert.Contains(t, sess.InitializeResult().Instructions, "- web_search (core): Search the web.")
	assert.Subset(t, listNames(t, sess), []string{"tool_call", "tool_describe", "tool_search"})
}

func TestServeStreamableHTTP(t *testing.T) {
	f := newFakeServer(0)
	f.AddTool("forecast", "Weather forecast for a city.", echo("rain in "))
	src := startSource(t, inMemoryConfig("weather"), fastOptions(nil), map[string]dialFunc{"weather": f.dial})
	rt := newTestRuntime(t, runtime.ModeTools)
	srv := newTestServer(t, rt, src, nil)
	ts := httptest.NewServer(srv.Handler())
	defer ts.Close()

	client := sdk.NewClient(&sdk.Implementation{Name: "http-client", Version: "1"}, nil)
	sess, err := client.Connect(t.Context(), &sdk.StreamableClientTransport{Endpoint: ts.URL}, nil)
	require.NoError(t, err)
	defer sess.Close()
	assert.Equal(t, []string{"tool_call", "tool_describe", "tool_search"}, listNames(t, sess))
	text, isErr := callText(t, sess, "tool_call", map[string]any{"id": "forecast", "args": map[string]any{"text": "Oslo"}})
	require.False(t, isErr, text)
	assert.Contains(t, text, "rain in Oslo")
}

func TestServeAfterUpstreamCloses(t *testing.T) {
	f := newFakeServer(0)
	f.AddTool("forecast", "Weather forecast for a city.", echo("rain in "))
	src, err := newSource(t.Context(), inMemoryConfig("weather"), fastOptions(nil), dialers(map[string]dialFunc{"weather": f.dial}))
	require.NoError(t, err)
	rt := newTestRuntime(t, runtime.ModeTools)
	srv := newTestServer(t, rt, src, nil)
	sess := connectStdio(t, srv)

	require.NoError(t, src.Close(context.Background()))
	text, isErr := callText(t, sess, "tool_call", map[string]any{"id": "mcp:weather:forecast", "args": map[string]any{"text": "Oslo"}})
	assert.True(t, isErr)
	assert.Contains(t, text, `mcp server "weather"`)
	assert.Contains(t, text, "source closed")
}
