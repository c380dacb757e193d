package scenario_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"text/tabwriter"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolsearch/toolsearch/gateway"
	"github.com/toolsearch/toolsearch/gateway/scenario"
	"github.com/toolsearch/toolsearch/runtime"
)

// controlTools are what each Tool Search mode may declare besides direct-only tools.
var controlTools = map[runtime.Mode][]string{
	runtime.ModeCode:      {runtime.ToolSearchCodeName},
	runtime.ModeTools:     {runtime.ToolSearchName, runtime.ToolDescribeName, runtime.ToolCallName},
	runtime.ModeDirectory: {runtime.ToolSearchName, runtime.ToolDescribeName, runtime.ToolCallName},
}

// TestScenario runs the end-to-end scenario: the gateway against a recording provider, Tool Search off and in every
// mode, at 36 and 500 tools. Every assertion reads the requests as the provider received them, the telemetry or the
// session log files — never the model's text.
func TestScenario(t *testing.T) {
	dir := t.TempDir()
	results, err := scenario.Run(context.Background(), &scenario.Options{SessionLogDir: dir})
	require.NoError(t, err)
	require.Len(t, results, len(scenario.Modes())*len(scenario.DefaultSizes()))
	t.Log("\n" + byteTable(results))

	direct := make(map[int]scenario.Result)
	for _, r := range results {
		if r.Mode == runtime.ModeOff {
			direct[r.Tools] = r
		}
	}
	for _, r := range results {
		t.Run(fmt.Sprintf("%s/%d", r.Mode, r.Tools), func(t *testing.T) {
			require.Empty(t, r.Err, "the turn failed")
			require.Equal(t, r.Mode, r.EffectiveMode, "the run did not get the mode it asked for: %s",
				r.Telemetry.NotApplied)
			assert.Equal(t, "FAKE_PLUGIN_OK "+scenario.Target, r.Answer)
			assertMeasuredOnTheWire(t, r)
			assertSessionLogFile(t, r)
			if r.Mode == runtime.ModeOff {
				assertDirect(t, r)
				return
			}
			off, ok := direct[r.Tools]
			require.True(t, ok, "no direct run at %d tools to compare with", r.Tools)
			assertToolSearch(t, r, off)
		})
	}
}

// assertDirect checks that with Tool Search off the model sees every fake schema and calls the
// target itself.
func assertDirect(t *testing.T, r scenario.Result) {
	t.Helper()
	require.NotEmpty(t, r.Provider)
	for i, req := range r.Provider {
		defs := declaredTools(t, req.Raw)
		require.Len(t, defs, r.Tools+1, "request %d: every fake tool plus the direct-only tool", i+1)
		for n := 1; n <= r.Tools; n++ {
			def, ok := defs[scenario.ToolName(n)]
			require.True(t, ok, "request %d does not declare %s", i+1, scenario.ToolName(n))
			assert.JSONEq(t, string(scenario.FakePlugin(1)[0].Parameters), string(def), "the full schema is sent")
		}
		assert.Contains(t, defs, scenario.StatusTool)
	}
	// (1) the model called the target as a declared tool, and the runtime ran it directly.
	assert.Equal(t, []string{scenario.Target}, r.PlannedTools)
	assert.True(t, r.TargetCalledDirectly)
	assert.True(t, r.CalledTarget)
	require.Len(t, r.Summary.Calls, 1)
	call := r.Summary.Calls[0]
	assert.Equal(t, "openclaw:"+scenario.PluginName+":"+scenario.Target, call.ToolID)
	assert.Equal(t, runtime.ViaDirect, call.Via)
	assert.Empty(t, call.ParentCallID)
	assert.Equal(t, 0, r.SearchCount)
	assert.Equal(t, 0, r.DescribeCount)
	assert.Equal(t, []int{r.Tools + 1}, r.Summary.SchemasUpFront)
	// The tool's own result reached the model.
	assert.Contains(t, lastToolMessage(t, r.Provider[len(r.Provider)-1].Raw),
		"FAKE_PLUGIN_OK "+scenario.Target+` {"marker":"normal"}`)
}

// assertToolSearch checks a Tool Search mode against the direct run: the same tool is called, the model sees
// only the control tools and direct-only tools, the request is smaller, and the session log shows the searches,
// describes and the bridged call.
func assertToolSearch(t *testing.T, r, off scenario.Result) {
	t.Helper()
	want := append(slices.Clone(controlTools[r.Mode]), scenario.StatusTool)

	// (4) only the control tools and the direct-only tool are declared, on every request, and no fake schema
	// travels in the tools array.
	for i, req := range r.Provider {
		assert.Equal(t, want, req.Tools, "request %d", i+1)
		assert.NotContains(t, string(toolsArray(t, req.Raw)), "fake_plugin_tool_", "request %d", i+1)
	}
	start := runStart(t, r.SessionLog)
	assert.Equal(t, len(want), start.SchemasUpFront)
	assert.Empty(t, start.Hydrated, "directory mode exposed likely schemas: scenario.UserMessage must match no tool")
	assert.Equal(t, r.Tools, start.CatalogSize, "the direct-only tool is never cataloged")
	assert.False(t, r.TargetDeclared)

	// (2) the same target ran, reached only through the mode's control tools.
	assert.True(t, r.CalledTarget)
	assert.False(t, r.TargetCalledDirectly)
	require.NotEmpty(t, r.PlannedTools)
	for _, p := range r.PlannedTools {
		assert.Contains(t, controlTools[r.Mode], p)
	}
	require.Len(t, r.Summary.Calls, 1)
	call := r.Summary.Calls[0]
	assert.Equal(t, "openclaw:"+scenario.PluginName+":"+scenario.Target, call.ToolID)
	assert.Equal(t, "openclaw", string(call.Source))
	assert.False(t, call.IsError)

	// (5) the payload is smaller: the last request (which carries the tool result) and the tools array.
	assert.Less(t, r.RequestBytes, off.RequestBytes)
	assert.Less(t, r.ToolBytes, off.ToolBytes)
	for i, req := range r.Provider {
		assert.Less(t, len(req.Raw), len(off.Provider[0].Raw), "request %d is larger than the direct one", i+1)
	}

	// (6) the session log has the counts, and the bridged call under its hidden id.
	assert.Equal(t, 1, r.SearchCount)
	assert.Equal(t, 0, r.DescribeCount)
	assert.Equal(t, 1, r.CallCount)
	parent := parentCallID(t, r)
	assert.Equal(t, parent, call.ParentCallID)
	assert.Equal(t, fmt.Sprintf("%s:%s:%s:1", runtime.ToolSearchCodeName, parent, scenario.Target), r.BridgedCallID)
	assert.Equal(t, r.BridgedCallID, call.CallID)
	assertProjected(t, r, parent)
	assert.EqualValues(t, 1, r.Telemetry.SearchCount)
	assert.EqualValues(t, 1, r.Telemetry.CallCount)
	assert.Equal(t, r.Tools, r.Telemetry.Sources.OpenClaw)

	switch r.Mode {
	case runtime.ModeCode:
		assert.Equal(t, runtime.ViaCode, call.Via)
		assertCodeTelemetry(t, r)
		// The README's promise for code mode: the last request is at least 90% smaller than with Tool Search
		// off, already at the smallest catalog the scenario runs (36 tools), where the saving is the thinnest.
		saved := 1 - float64(r.RequestBytes)/float64(off.RequestBytes)
		assert.GreaterOrEqual(t, saved, 0.90, "code mode sends %d bytes, off %d", r.RequestBytes, off.RequestBytes)
	case runtime.ModeTools:
		assert.Equal(t, runtime.ViaToolCall, call.Via)
		assert.NotContains(t, systemMessage(t, r.Provider[0].Raw), "## Tool directory")
	case runtime.ModeDirectory:
		assert.Equal(t, runtime.ViaToolCall, call.Via)
		assertDirectory(t, r, start)
	}
}

// assertCodeTelemetry reads the telemetry object of the tool_search_code result the model got back.
func assertCodeTelemetry(t *testing.T, r scenario.Result) {
	t.Helper()
	var out struct {
		OK    bool `json:"ok"`
		Value struct {
			Tool struct {
				ID string `json:"id"`
			} `json:"tool"`
		} `json:"value"`
		Telemetry runtime.CodeTelemetry `json:"telemetry"`
	}
	require.NoError(t, json.Unmarshal([]byte(lastToolMessage(t, r.Provider[len(r.Provider)-1].Raw)), &out))
	assert.True(t, out.OK)
	assert.Equal(t, "openclaw:"+scenario.PluginName+":"+scenario.Target, out.Value.Tool.ID)
	assert.Equal(t, runtime.CodeTelemetry{
		CatalogSize: r.Tools, Sources: runtime.SourceCounts{OpenClaw: r.Tools}, SearchCount: 1, CallCount: 1,
	}, out.Telemetry)

	var codes []runtime.CodeInfo
	for _, rec := range r.SessionLog {
		if rec.Type == runtime.RecordCode {
			codes = append(codes, *rec.Code)
		}
	}
	require.Len(t, codes, 1)
	assert.True(t, codes[0].OK)
	assert.Equal(t, 2, codes[0].Bridged, "the script made one search and one call")
	assert.Positive(t, codes[0].Fuel)
	assert.Equal(t, 1, r.Telemetry.Sandbox.Runs)
}

// assertDirectory checks the bounded directory went to the provider in the system message. At 500 tools it
// is cut (lines are sorted by name, so fake_plugin_tool_17 is among the omitted): the model found the target
// with tool_search, which is what the footer tells it to do.
func assertDirectory(t *testing.T, r scenario.Result, start *runtime.RunInfo) {
	t.Helper()
	system := systemMessage(t, r.Provider[0].Raw)
	assert.True(t, strings.HasPrefix(system, scenario.SystemPrompt), "the base prompt comes first")
	directory := strings.TrimPrefix(system, scenario.SystemPrompt+"\n\n")
	assert.Equal(t, start.DirectoryBytes, len(directory), "the directory is sent as rendered")
	assert.LessOrEqual(t, start.DirectoryBytes, runtime.MaxDirectoryBytes)
	assert.True(t, strings.HasPrefix(directory, "## Tool directory\n"))
	listed := strings.Count(directory, "\n- fake_plugin_tool_")
	targetLine := "\n- " + scenario.Target + " (" + scenario.PluginName + "): Fake plugin tool number 17 "
	if r.Tools == 36 {
		assert.Equal(t, 36, listed)
		assert.True(t, strings.Contains(directory, targetLine), "the target's line is missing")
		assert.True(t, strings.HasSuffix(directory, "All 36 tools are listed."))
		return
	}
	assert.Positive(t, listed)
	assert.True(t, strings.HasSuffix(directory,
		fmt.Sprintf("\n%d of 500 tools are not listed here; find them with tool_search.", 500-listed)),
		"the footer counts the tools left out")
	assert.False(t, strings.Contains(directory, targetLine), "sorted by name, the target falls past the bound")
}

// assertProjected checks the transcript in the session log: the hidden call and its result right after the
// control tool's result.
func assertProjected(t *testing.T, r scenario.Result, parent string) {
	t.Helper()
	var entries []runtime.TranscriptEntry
	for _, rec := range r.SessionLog {
		if rec.Type == runtime.RecordTranscript {
			entries = append(entries, *rec.Transcript)
		}
	}
	i := slices.IndexFunc(entries, func(e runtime.TranscriptEntry) bool {
		return e.Role == runtime.RoleTool && e.CallID == parent
	})
	require.GreaterOrEqual(t, i, 0, "no result of %s in the transcript", parent)
	require.Greater(t, len(entries), i+2)
	call, result := entries[i+1], entries[i+2]
	assert.Equal(t, runtime.RoleAssistant, call.Role)
	assert.Equal(t, r.BridgedCallID, call.CallID)
	assert.Equal(t, parent, call.ParentCallID)
	assert.Equal(t, scenario.Target, call.ToolName)
	assert.JSONEq(t, `{"marker":"normal"}`, string(call.Arguments))
	assert.Equal(t, runtime.RoleTool, result.Role)
	assert.Equal(t, r.BridgedCallID, result.CallID)
	assert.JSONEq(t, `{"status":"ok","tool":"`+scenario.Target+`","input":{"marker":"normal"}}`, string(result.Details))

	// The gateway's own transcript agrees, and none of it went to the provider as a message.
	require.NotNil(t, r.Turn)
	assert.Equal(t, entries, r.Turn.Transcript)
	for _, req := range r.Provider {
		assert.NotContains(t, string(req.Raw), `"tool_call_id":"`+r.BridgedCallID)
	}
}

// assertMeasuredOnTheWire checks that what the gateway measured, recorded in telemetry and logged is what the
// provider received.
func assertMeasuredOnTheWire(t *testing.T, r scenario.Result) {
	t.Helper()
	require.NotNil(t, r.Turn)
	require.Len(t, r.Turn.Requests, len(r.Provider))
	require.Len(t, r.Telemetry.Requests, len(r.Provider))
	var logged []runtime.RequestStats
	for _, rec := range r.SessionLog {
		if rec.Type == runtime.RecordRequest {
			logged = append(logged, *rec.Request)
		}
	}
	require.Len(t, logged, len(r.Provider))
	for i, got := range r.Provider {
		sent := r.Turn.Requests[i]
		assert.Equal(t, got.Raw, []byte(sent.Body), "request %d: the captured body is what arrived", i+1)
		assert.Equal(t, len(got.Raw), sent.Bytes)
		assert.Equal(t, got.ToolBytes, sent.ToolBytes)
		assert.Equal(t, len(got.Tools), sent.ToolCount)
		assert.Equal(t, got.Tools, sent.Tools)
		assert.Equal(t, len(messagesArray(t, got.Raw)), sent.PromptBytes)
		assert.Equal(t, sent.RequestStats, r.Telemetry.Requests[i])
		assert.Equal(t, sent.RequestStats, logged[i])
	}
}

// assertSessionLogFile checks the run's session log is a JSON Lines file that opens with run_start and ends
// with run_end, with the user message and the answer recorded.
func assertSessionLogFile(t *testing.T, r scenario.Result) {
	t.Helper()
	data, err := os.ReadFile(r.SessionLogPath)
	require.NoError(t, err)
	lines := bytes.Split(bytes.TrimSpace(data), []byte("\n"))
	require.Len(t, lines, len(r.SessionLog))
	require.NotEmpty(t, r.SessionLog)
	assert.Equal(t, runtime.RecordRunStart, r.SessionLog[0].Type)
	assert.Equal(t, runtime.RecordRunEnd, r.SessionLog[len(r.SessionLog)-1].Type)
	var messages []gateway.Message
	for _, rec := range r.SessionLog {
		assert.Equal(t, r.SessionID, rec.SessionID)
		if rec.Type == gateway.RecordMessage {
			var m gateway.Message
			require.NoError(t, json.Unmarshal(rec.Data, &m))
			messages = append(messages, m)
		}
	}
	assert.Equal(t, []gateway.Message{
		{Role: gateway.RoleUser, Content: scenario.UserMessage},
		{Role: gateway.RoleAssistant, Content: r.Answer},
	}, messages)
}

func runStart(t *testing.T, records []runtime.Record) *runtime.RunInfo {
	t.Helper()
	for _, rec := range records {
		if rec.Type == runtime.RecordRunStart {
			return rec.Run
		}
	}
	t.Fatal("no run_start record")
	return nil
}

// parentCallID is the id of the control tool call the target was reached through: the call that the provider
// answered with tool_search_code or tool_call.
func parentCallID(t *testing.T, r scenario.Result) string {
	t.Helper()
	for _, m := range r.Turn.Messages {
		for _, c := range m.ToolCalls {
			if c.Name == runtime.ToolSearchCodeName || c.Name == runtime.ToolCallName {
				return c.ID
			}
		}
	}
	t.Fatal("the model made no tool_search_code or tool_call call")
	return ""
}

type wireRequest struct {
	Messages []struct {
		Role    string `json:"role"`
		Content string `json:"content"`
	} `json:"messages"`
	Tools []struct {
		Function struct {
			Name       string          `json:"name"`
			Parameters json.RawMessage `json:"parameters"`
		} `json:"function"`
	} `json:"tools"`
}

func parse(t *testing.T, raw []byte) wireRequest {
	t.Helper()
	var w wireRequest
	require.NoError(t, json.Unmarshal(raw, &w))
	return w
}

func declaredTools(t *testing.T, raw []byte) map[string]json.RawMessage {
	t.Helper()
	out := make(map[string]json.RawMessage)
	for _, tool := range parse(t, raw).Tools {
		out[tool.Function.Name] = tool.Function.Parameters
	}
	return out
}

func toolsArray(t *testing.T, raw []byte) json.RawMessage {
	t.Helper()
	var v struct {
		Tools json.RawMessage `json:"tools"`
	}
	require.NoError(t, json.Unmarshal(raw, &v))
	return v.Tools
}

func messagesArray(t *testing.T, raw []byte) json.RawMessage {
	t.Helper()
	var v struct {
		Messages json.RawMessage `json:"messages"`
	}
	require.NoError(t, json.Unmarshal(raw, &v))
	return v.Messages
}

func systemMessage(t *testing.T, raw []byte) string {
	t.Helper()
	msgs := parse(t, raw).Messages
	require.NotEmpty(t, msgs)
	require.Equal(t, "system", msgs[0].Role)
	return msgs[0].Content
}

func lastToolMessage(t *testing.T, raw []byte) string {
	t.Helper()
	msgs := parse(t, raw).Messages
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Role == "tool" {
			return msgs[i].Content
		}
	}
	t.Fatal("the request has no tool message")
	return ""
}

func byteTable(results []scenario.Result) string {
	var b strings.Builder
	w := tabwriter.NewWriter(&b, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(w, "tools\tmode\trequests\tdeclared\tlast request B\ttool defs B\tprompt B\tall requests B\tsaved vs off\t")
	for _, r := range results {
		saved := "-"
		if s, f, ok := scenario.Savings(results, r); ok && r.Mode != runtime.ModeOff {
			saved = fmt.Sprintf("%d (%.1f%%)", s, 100*f)
		}
		fmt.Fprintf(w, "%d\t%s\t%d\t%d\t%d\t%d\t%d\t%d\t%s\t\n", r.Tools, r.Mode, len(r.Provider), r.DeclaredTools,
			r.RequestBytes, r.ToolBytes, r.PromptBytes, r.TotalRequestBytes, saved)
	}
	w.Flush()
	return b.String()
}
