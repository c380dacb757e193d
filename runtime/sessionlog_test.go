package runtime_test

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolsearch/toolsearch/catalog"
	"github.com/toolsearch/toolsearch/runtime"
)

// The session log answers the questions it exists for: schemas up front, searches and describes, final tools and
// their sources, and shows hidden calls right after their wrapper's result.
func TestSessionLogAnswers(t *testing.T) {
	dir := t.TempDir()
	logs, err := runtime.NewSessionLogDir(dir)
	require.NoError(t, err)
	tools := append(fakePlugin(36), catalog.Tool{Source: catalog.SourceMCP, SourceName: "github", Name: "create_issue",
		Parameters: json.RawMessage(`{"type":"object"}`), Handler: okHandler("create_issue")})
	client := catalog.Tool{Name: "pick_file", Handler: okHandler("pick_file")}

	rt := newRuntime(t, runtime.ModeCode, &runtime.Options{SessionLog: logs})
	run, err := rt.StartRun(t.Context(), runtime.RunRequest{SessionID: "session-1", RunID: "run-1", AgentID: "main",
		Tools: tools, ClientTools: []catalog.Tool{client}})
	require.NoError(t, err)
	run.RecordRequest(runtime.RequestStats{Bytes: 2048, ToolBytes: 700, PromptBytes: 1300, ToolCount: 1})
	require.NoError(t, run.Log("message", map[string]string{"role": "user", "content": "call tool 17"}))
	_, cr := runCode(t, run, "call_abc", scenarioCode+`;`)
	require.True(t, cr.OK)
	_, cr = runCode(t, run, "call_def", `
		await openclaw.tools.describe("create_issue");
		await openclaw.tools.call("create_issue", {});
		await openclaw.tools.call("client:client:pick_file", {});
		return 1`)
	require.True(t, cr.OK, "%+v", cr.Error)
	require.NoError(t, run.Close())

	recs, err := runtime.ReadSessionLog(logs.Path("session-1"))
	require.NoError(t, err)
	require.NotEmpty(t, recs)
	assert.Equal(t, runtime.RecordRunStart, recs[0].Type)
	assert.Equal(t, runtime.RecordRunEnd, recs[len(recs)-1].Type)
	for _, r := range recs {
		assert.Equal(t, "session-1", r.SessionID)
		assert.Equal(t, "run-1", r.RunID)
		assert.Equal(t, "main", r.AgentID)
		assert.False(t, r.Time.IsZero())
	}
	assert.Equal(t, []string{"tool_search_code"}, recs[0].Run.VisibleTools)

	sum := runtime.Summarize(recs)
	assert.Equal(t, 1, sum.Runs)
	assert.Equal(t, []int{1}, sum.SchemasUpFront, "one schema up front: tool_search_code")
	assert.Equal(t, 1, sum.Searches)
	assert.Equal(t, 1, sum.Describes)
	require.Len(t, sum.Calls, 3)
	assert.Equal(t, "openclaw:fake-plugin:fake_plugin_tool_17", sum.Calls[0].ToolID)
	assert.Equal(t, catalog.SourceOpenClaw, sum.Calls[0].Source)
	assert.Equal(t, "tool_search_code:call_abc:fake_plugin_tool_17:1", sum.Calls[0].CallID)
	assert.Equal(t, catalog.SourceMCP, sum.Calls[1].Source)
	assert.Equal(t, catalog.SourceClient, sum.Calls[2].Source)

	// The transcript: wrapper call, wrapper result, then the hidden pair.
	var transcript []runtime.TranscriptEntry
	for _, r := range recs {
		if r.Type == runtime.RecordTranscript {
			transcript = append(transcript, *r.Transcript)
		}
	}
	require.Len(t, transcript, 4+2*3)
	want := []struct{ role, id, name string }{
		{"assistant", "call_abc", "tool_search_code"},
		{"tool", "call_abc", "tool_search_code"},
		{"assistant", "tool_search_code:call_abc:fake_plugin_tool_17:1", "fake_plugin_tool_17"},
		{"tool", "tool_search_code:call_abc:fake_plugin_tool_17:1", "fake_plugin_tool_17"},
		{"assistant", "call_def", "tool_search_code"},
		{"tool", "call_def", "tool_search_code"},
		{"assistant", "tool_search_code:call_def:create_issue:2", "create_issue"},
		{"tool", "tool_search_code:call_def:create_issue:2", "create_issue"},
		{"assistant", "tool_search_code:call_def:pick_file:3", "pick_file"},
		{"tool", "tool_search_code:call_def:pick_file:3", "pick_file"},
	}
	for i, w := range want {
		assert.Equal(t, w.role, transcript[i].Role, i)
		assert.Equal(t, w.id, transcript[i].CallID, i)
		assert.Equal(t, w.name, transcript[i].ToolName, i)
	}
	assert.Equal(t, "call_abc", transcript[2].ParentCallID)
	assert.Contains(t, transcript[3].Content, "FAKE_PLUGIN_OK fake_plugin_tool_17")
	assert.JSONEq(t, `{"marker":"normal"}`, string(transcript[2].Arguments))

	var request *runtime.RequestStats
	var message json.RawMessage
	var end *runtime.Telemetry
	for _, r := range recs {
		switch r.Type {
		case runtime.RecordRequest:
			request = r.Request
		case "message":
			message = r.Data
		case runtime.RecordRunEnd:
			end = r.Telemetry
		}
	}
	assert.Equal(t, &runtime.RequestStats{Bytes: 2048, ToolBytes: 700, PromptBytes: 1300, ToolCount: 1}, request)
	assert.JSONEq(t, `{"role":"user","content":"call tool 17"}`, string(message))
	require.NotNil(t, end)
	assert.EqualValues(t, 3, end.CallCount)
	assert.Len(t, end.Requests, 1)
	assert.Equal(t, 2, end.Sandbox.Runs)
}

func TestSessionLogAppendsRunsOfASession(t *testing.T) {
	logs, err := runtime.NewSessionLogDir(t.TempDir())
	require.NoError(t, err)
	rt := newRuntime(t, runtime.ModeTools, &runtime.Options{SessionLog: logs})
	for _, id := range []string{"r1", "r2"} {
		run, err := rt.StartRun(t.Context(), runtime.RunRequest{SessionID: "s", RunID: id, Tools: mixedTools()})
		require.NoError(t, err)
		execute(t, run, "1", runtime.ToolSearchName, map[string]string{"query": "web"})
		require.NoError(t, run.Close())
	}
	run, err := rt.StartRun(t.Context(), runtime.RunRequest{RunID: "lonely", Tools: mixedTools()})
	require.NoError(t, err)
	require.NoError(t, run.Close())

	recs, err := runtime.ReadSessionLog(logs.Path("s"))
	require.NoError(t, err)
	sum := runtime.Summarize(recs)
	assert.Equal(t, 2, sum.Runs)
	assert.Equal(t, 2, sum.Searches)
	assert.Equal(t, []int{4, 4}, sum.SchemasUpFront)

	recs, err = runtime.ReadSessionLog(logs.Path("run-lonely"))
	require.NoError(t, err, "a run without a session logs under its run id")
	assert.Equal(t, 1, runtime.Summarize(recs).Runs)
}

// A long run writes in batches before it closes, so a crash loses little.
func TestSessionLogBatches(t *testing.T) {
	logs, err := runtime.NewSessionLogDir(t.TempDir())
	require.NoError(t, err)
	rt := newRuntime(t, runtime.ModeTools, &runtime.Options{SessionLog: logs})
	run := startRun(t, rt, runtime.RunRequest{SessionID: "busy", Tools: mixedTools()})
	for range 150 { // three records each: the search and the transcript pair
		execute(t, run, "1", runtime.ToolSearchName, map[string]string{"query": "web"})
	}
	recs, err := runtime.ReadSessionLog(logs.Path("busy"))
	require.NoError(t, err)
	assert.GreaterOrEqual(t, len(recs), 256)
}

func TestSessionLogPaths(t *testing.T) {
	dir := t.TempDir()
	logs, err := runtime.NewSessionLogDir(dir)
	require.NoError(t, err)
	paths := map[string]bool{}
	for _, key := range []string{"plain-key_1", "../../etc/passwd", "a/b", "a_b", "", strings.Repeat("x", 300)} {
		p := logs.Path(key)
		assert.Equal(t, dir, filepath.Dir(p), "%q stays in the directory", key)
		assert.False(t, paths[p], "%q has its own file", key)
		paths[p] = true
	}
	assert.Equal(t, filepath.Join(dir, "plain-key_1.jsonl"), logs.Path("plain-key_1"))
}

type failingLog struct{}

func (failingLog) WriteRecords(string, []runtime.Record) error { return errors.New("disk full") }

func TestSessionLogFailureDoesNotFailCalls(t *testing.T) {
	rt := newRuntime(t, runtime.ModeOff, &runtime.Options{SessionLog: failingLog{}})
	run, err := rt.StartRun(t.Context(), runtime.RunRequest{SessionID: "s", Tools: mixedTools()})
	require.NoError(t, err)
	res := execute(t, run, "1", "web_search", map[string]string{"marker": "x"})
	assert.False(t, res.IsError)
	assert.ErrorContains(t, run.Close(), "disk full")
}

func TestReadSessionLogErrors(t *testing.T) {
	_, err := runtime.ReadSessionLog(filepath.Join(t.TempDir(), "none.jsonl"))
	assert.Error(t, err)
	p := filepath.Join(t.TempDir(), "bad.jsonl")
	require.NoError(t, os.WriteFile(p, []byte("{\"type\":\"run_start\"}\n\nnot json\n"), 0o600))
	recs, err := runtime.ReadSessionLog(p)
	assert.ErrorContains(t, err, "bad.jsonl:3")
	assert.Len(t, recs, 1)
}

func TestProject(t *testing.T) {
	res := &runtime.CallResult{Content: "ok", Hidden: []runtime.HiddenCall{{
		ID: "tool_search_code:c:t:1", ParentID: "c", ToolID: "openclaw:core:t", Name: "t", Source: catalog.SourceOpenClaw,
		Arguments: json.RawMessage(`{"a":1}`), Result: runtime.CallResult{Content: "done", Details: json.RawMessage(`{"x":1}`)},
	}}}
	entries := runtime.Project(runtime.ToolCall{ID: "c", Name: "tool_call", Arguments: json.RawMessage(`not json`)}, res)
	require.Len(t, entries, 4)
	assert.JSONEq(t, `"not json"`, string(entries[0].Arguments), "broken arguments are kept as a string")
	assert.Equal(t, runtime.RoleTool, entries[1].Role)
	assert.Equal(t, "ok", entries[1].Content)
	assert.Equal(t, runtime.TranscriptEntry{Role: runtime.RoleAssistant, CallID: "tool_search_code:c:t:1", ParentCallID: "c",
		ToolName: "t", ToolID: "openclaw:core:t", Source: catalog.SourceOpenClaw, Arguments: json.RawMessage(`{"a":1}`)}, entries[2])
	assert.JSONEq(t, `{"x":1}`, string(entries[3].Details))

	entries = runtime.Project(runtime.ToolCall{ID: "d", Name: "web_search"}, &runtime.CallResult{Content: "x"})
	assert.JSONEq(t, `{}`, string(entries[0].Arguments))
}
