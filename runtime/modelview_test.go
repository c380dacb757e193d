package runtime_test

import (
	"context"
	"encoding/json"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolsearch/toolsearch/catalog"
	"github.com/toolsearch/toolsearch/runtime"
)

// hugeTool returns a 5 MB result of multi-byte text whose first and last lines can be recognized.
func hugeTool() catalog.Tool {
	body := "FIRST LINE\n" + strings.Repeat("Größe — 大きな結果 ", 5<<20/28) + "\nLAST LINE"
	return catalog.Tool{Source: catalog.SourceMCP, SourceName: "big", Name: "dump", Description: "Dump everything.",
		Handler: catalog.HandlerFunc(func(context.Context, json.RawMessage) (*catalog.Result, error) {
			return &catalog.Result{Content: []catalog.Content{{Type: "text", Text: body}}}, nil
		})}
}

var cutMarker = regexp.MustCompile(`\[\.\.\. (\d+) of (\d+) bytes cut here: a result the model sees is at most (\d+) bytes \.\.\.\]`)

// assertBounded checks that content is within limit, keeps head and tail, and says how much was cut.
func assertBounded(t *testing.T, content string, limit int, head, tail string) {
	t.Helper()
	assert.LessOrEqual(t, len(content), limit)
	assert.True(t, utf8.ValidString(content), "no character is split")
	assert.True(t, strings.Contains(content[:min(len(content), limit/2)], head), "the head is kept")
	assert.True(t, strings.HasSuffix(content, tail), "the tail is kept: %q", content[max(0, len(content)-80):])
	m := cutMarker.FindStringSubmatch(content)
	require.NotNil(t, m, "a marker says what was cut")
	cut, _ := strconv.Atoi(m[1])
	total, _ := strconv.Atoi(m[2])
	assert.Equal(t, total-len(content)+len(m[0])+2, cut, "the marker counts the bytes left out")
	assert.Equal(t, strconv.Itoa(limit), m[3])
}

// A 5 MB tool result never reaches the model whole: in tools mode (tool_call), in code mode (what
// tool_search_code returns) and when the tool is called directly, the model gets maxResultBytes with head, tail
// and a marker. The transcript keeps the whole result.
func TestResultsAreBounded(t *testing.T) {
	const limit = 64 << 10
	cfg := runtime.Config{MaxResultBytes: limit}

	rt := newRuntime(t, runtime.ModeTools, &runtime.Options{Config: cfg})
	run := startRun(t, rt, runtime.RunRequest{Tools: []catalog.Tool{hugeTool()}})
	res := execute(t, run, "1", runtime.ToolCallName, map[string]any{"id": "dump"})
	require.False(t, res.IsError, res.Content[:200])
	assertBounded(t, res.Content, limit, `{"tool":{"id":"mcp:big:dump"`, `LAST LINE"}]}}`)
	assert.Greater(t, len(res.Details), 5<<20, "details keep the whole result for the transcript")

	direct := hugeTool()
	direct.CatalogMode = catalog.CatalogModeDirectOnly
	run = startRun(t, rt, runtime.RunRequest{SessionID: "direct", Tools: []catalog.Tool{direct}})
	res = execute(t, run, "2", "dump", nil)
	assertBounded(t, res.Content, limit, "FIRST LINE", "LAST LINE")

	rt = newRuntime(t, runtime.ModeOff, &runtime.Options{Config: cfg})
	run = startRun(t, rt, runtime.RunRequest{Tools: []catalog.Tool{hugeTool()}})
	res = execute(t, run, "3", "dump", nil)
	assertBounded(t, res.Content, limit, "FIRST LINE", "LAST LINE")

	rt = newRuntime(t, runtime.ModeCode, &runtime.Options{Config: cfg})
	run = startRun(t, rt, runtime.RunRequest{Tools: []catalog.Tool{pluginTool("small", "A small tool.")}})
	res, cr := runCode(t, run, "4", `return "START" + "x".repeat(900000) + "END"`)
	require.True(t, cr.OK)
	assertBounded(t, res.Content, limit, `{"ok":true,"value":"STARTxxx`, `"callCount":0}}`)

	// Under the limit nothing changes.
	res, _ = runCode(t, run, "5", `return "short"`)
	assert.Equal(t, string(res.Details), res.Content)
}

// The default bound applies when nothing is configured.
func TestResultBoundDefault(t *testing.T) {
	rt := newRuntime(t, runtime.ModeTools, nil)
	assert.Equal(t, runtime.DefaultMaxResultBytes, rt.Config().MaxResultBytes)
	run := startRun(t, rt, runtime.RunRequest{Tools: []catalog.Tool{hugeTool()}})
	res := execute(t, run, "1", runtime.ToolCallName, map[string]any{"id": "dump"})
	assertBounded(t, res.Content, runtime.DefaultMaxResultBytes, `{"tool":`, `LAST LINE"}]}}`)
}

// What search returns to the model is compact: no indentation, no escaped "<" and ">", and no field the id
// already says (source and source name); the description is bounded with a marker and describe has it whole.
func TestSearchHitsAreCompact(t *testing.T) {
	long := pluginTool("long_tool", strings.Repeat("Creates a report about the weather.\n\n   ", 50))
	long.Parameters = json.RawMessage(`{"type":"object","properties":{"tags":{"type":"array","items":{"type":"string"}}},"required":["tags"]}`)
	rt := newRuntime(t, runtime.ModeTools, nil)
	run := startRun(t, rt, runtime.RunRequest{Tools: append(mixedTools(), long)})
	res := execute(t, run, "1", runtime.ToolSearchName, map[string]any{"query": "long_tool"})
	require.False(t, res.IsError, res.Content)
	assert.Equal(t, string(res.Details), res.Content)
	assert.NotContains(t, res.Content, "\n")
	assert.NotContains(t, res.Content, `\u003c`)
	assert.Contains(t, res.Content, `"input":"{ tags: Array<string> }"`)
	assert.NotContains(t, res.Content, `"source"`)
	assert.NotContains(t, res.Content, `"sourceName"`)
	var hits []map[string]any
	require.NoError(t, json.Unmarshal(res.Details, &hits))
	desc := hits[0]["description"].(string)
	assert.LessOrEqual(t, len(desc), catalog.MaxHitDescriptionBytes)
	assert.True(t, strings.HasSuffix(desc, "weather."+catalog.CutMarker) || strings.HasSuffix(desc, catalog.CutMarker), desc)
	assert.NotContains(t, desc, "  ")

	res = execute(t, run, "2", runtime.ToolDescribeName, map[string]any{"id": "long_tool"})
	var d catalog.Description
	require.NoError(t, json.Unmarshal(res.Details, &d))
	assert.Equal(t, long.Description, d.Description, "describe has the full text")
}
