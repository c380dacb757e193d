package runtime_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/toolsearch/toolsearch/catalog"
	"github.com/toolsearch/toolsearch/runtime"
)

// markerSchema is the schema of the fake plugin tools of the end-to-end scenario (package scenario): one required
// string.
const markerSchema = `{"type":"object","properties":{"marker":{"type":"string","description":"Any marker text."}},` +
	`"required":["marker"],"additionalProperties":false}`

// okHandler answers like the fake plugin: text "FAKE_PLUGIN_OK <name> <args>" and details {status, tool, input}.
func okHandler(name string) catalog.Handler {
	return catalog.HandlerFunc(func(_ context.Context, args json.RawMessage) (*catalog.Result, error) {
		details, _ := json.Marshal(map[string]any{"status": "ok", "tool": name, "input": args})
		return &catalog.Result{
			Content: []catalog.Content{{Type: "text", Text: "FAKE_PLUGIN_OK " + name + " " + string(args)}},
			Details: details,
		}, nil
	})
}

// pluginTool is a trusted plugin tool with the marker schema.
func pluginTool(name, desc string) catalog.Tool {
	return catalog.Tool{
		Source: catalog.SourceOpenClaw, SourceName: "fake-plugin", Name: name, Description: desc,
		Parameters: json.RawMessage(markerSchema), Handler: okHandler(name),
	}
}

// fakePlugin is the end-to-end scenario's catalog: n tools fake_plugin_tool_01..n with long descriptions.
func fakePlugin(n int) []catalog.Tool {
	tools := make([]catalog.Tool, n)
	for i := range tools {
		name := fmt.Sprintf("fake_plugin_tool_%02d", i+1)
		tools[i] = pluginTool(name, fmt.Sprintf("Fake plugin tool number %d. ", i+1)+
			strings.Repeat("It exists to make the catalog large and the prompt long. ", 6))
	}
	return tools
}

// mixedTools is a small realistic catalog: core, plugin, MCP tools and one direct-only tool.
func mixedTools() []catalog.Tool {
	web := pluginTool("web_search", "Search the web for current information and return result links.")
	web.SourceName = "core"
	fetch := pluginTool("web_fetch", "Fetch a URL and return the page as markdown text.")
	fetch.SourceName = "core"
	read := pluginTool("read_file", "Read a file from the workspace and return its contents.")
	read.SourceName = "core"
	issue := catalog.Tool{
		Source: catalog.SourceMCP, SourceName: "github", Name: "create_issue",
		Description: "Create a GitHub issue in a repository.",
		Parameters: json.RawMessage(`{"type":"object","properties":{"owner":{"type":"string"},"repo":{"type":"string"},` +
			`"title":{"type":"string"}},"required":["owner","repo","title"]}`),
		Handler: okHandler("create_issue"),
	}
	msg := pluginTool("message", "Send a message to the user on their current channel.")
	msg.SourceName, msg.CatalogMode = "core", catalog.CatalogModeDirectOnly
	return []catalog.Tool{web, fetch, read, issue, msg}
}

// newRuntime builds a runtime in mode with the shared sandbox; opts may be nil.
func newRuntime(t *testing.T, mode runtime.Mode, opts *runtime.Options) *runtime.Runtime {
	t.Helper()
	var o runtime.Options
	if opts != nil {
		o = *opts
	}
	o.Config.Enabled = mode != runtime.ModeOff
	o.Config.Mode = mode
	if mode == runtime.ModeCode && o.Sandbox == nil && o.SandboxFactory == nil {
		sb, err := runtime.SharedSandbox()
		require.NoError(t, err)
		o.Sandbox = sb
	}
	rt, err := runtime.New(context.Background(), &o)
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, rt.Close(context.Background())) })
	return rt
}

// startRun starts a run with a fresh session id unless req has one, and closes it at cleanup.
func startRun(t *testing.T, rt *runtime.Runtime, req runtime.RunRequest) *runtime.Run {
	t.Helper()
	if req.SessionID == "" && req.RunID == "" {
		req.SessionID = t.Name()
	}
	run, err := rt.StartRun(context.Background(), req)
	require.NoError(t, err)
	t.Cleanup(func() { _ = run.Close() })
	return run
}

func toolNames(defs []runtime.ToolDefinition) []string {
	names := make([]string, len(defs))
	for i, d := range defs {
		names[i] = d.Function.Name
	}
	return names
}

// execute runs one call with JSON-encoded arguments and requires no Go error.
func execute(t *testing.T, run *runtime.Run, id, name string, args any) *runtime.CallResult {
	t.Helper()
	raw, err := json.Marshal(args)
	require.NoError(t, err)
	res, err := run.Execute(context.Background(), runtime.ToolCall{ID: id, Name: name, Arguments: raw})
	require.NoError(t, err)
	return res
}

// codeResult is the decoded JSON of a tool_search_code result.
type codeResult struct {
	OK    bool            `json:"ok"`
	Value json.RawMessage `json:"value"`
	Error *struct {
		Kind    string `json:"kind"`
		Message string `json:"message"`
		Line    int    `json:"line"`
		Stack   string `json:"stack"`
	} `json:"error"`
	Logs      []string               `json:"logs"`
	Notices   []string               `json:"notices"`
	Telemetry *runtime.CodeTelemetry `json:"telemetry"`
}

func runCode(t *testing.T, run *runtime.Run, id, code string) (*runtime.CallResult, codeResult) {
	t.Helper()
	res := execute(t, run, id, runtime.ToolSearchCodeName, map[string]string{"code": code})
	var cr codeResult
	require.NoError(t, json.Unmarshal(res.Details, &cr), "details: %s", res.Details)
	return res, cr
}

// memoryLog collects session log records in memory.
type memoryLog struct {
	mu      sync.Mutex
	records map[string][]runtime.Record
}

func newMemoryLog() *memoryLog { return &memoryLog{records: make(map[string][]runtime.Record)} }

func (m *memoryLog) WriteRecords(key string, recs []runtime.Record) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.records[key] = append(m.records[key], recs...)
	return nil
}

func (m *memoryLog) get(key string) []runtime.Record {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]runtime.Record(nil), m.records[key]...)
}

// lockedBuffer is an io.Writer for slog that tests may read while calls log concurrently.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

func newLogger() (*slog.Logger, *lockedBuffer) {
	buf := &lockedBuffer{}
	return slog.New(slog.NewTextHandler(buf, &slog.HandlerOptions{Level: slog.LevelDebug})), buf
}
