package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolsearch/toolsearch/gateway/scenario"
	"github.com/toolsearch/toolsearch/runtime"
)

// TestDemo runs `toolsearch demo --json` and the table once each: the scenario's own assertions live in
// gateway/scenario; here the contract is the output.
func TestDemo(t *testing.T) {
	code, stdout, stderr := runCLI(t, "", "demo", "--json")
	require.Equal(t, exitOK, code, stderr)
	require.Equal(t, 1, strings.Count(stdout, "\n"), "one JSON line")

	var doc struct {
		Scenarios []map[string]any `json:"scenarios"`
	}
	require.NoError(t, json.Unmarshal([]byte(stdout), &doc))
	require.Len(t, doc.Scenarios, 8)
	keys := []string{"mode", "tools", "requests", "declaredTools", "requestBytes", "toolBytes", "calledTarget",
		"targetCalledDirectly", "searchCount", "describeCount", "callCount"}
	var got []string
	direct := map[float64]float64{}
	for _, s := range doc.Scenarios {
		assert.ElementsMatch(t, keys, demoKeys(s), "exactly the documented fields")
		got = append(got, s["mode"].(string)+"/"+demoJSONInt(s["tools"]))
		assert.Equal(t, true, s["calledTarget"])
		if s["mode"] == "off" {
			direct[s["tools"].(float64)] = s["requestBytes"].(float64)
			assert.Equal(t, true, s["targetCalledDirectly"])
			assert.Equal(t, s["tools"].(float64)+1, s["declaredTools"], "every plugin tool and session_status")
			continue
		}
		assert.Equal(t, false, s["targetCalledDirectly"])
		assert.Less(t, s["requestBytes"], direct[s["tools"].(float64)])
		assert.EqualValues(t, 1, s["searchCount"])
		assert.EqualValues(t, 0, s["describeCount"])
		assert.EqualValues(t, 1, s["callCount"])
	}
	assert.Equal(t, []string{"off/36", "code/36", "tools/36", "directory/36",
		"off/500", "code/500", "tools/500", "directory/500"}, got)

	code, stdout, stderr = runCLI(t, "", "demo")
	require.Equal(t, exitOK, code, stderr)
	for _, want := range []string{"36 plugin tools", "500 plugin tools", "saved vs off", "calls made",
		"tool_search_code (script: 1 search, 1 call)", "tool_search, tool_call", "What happened:",
		"tool_search_code:call_1:fake_plugin_tool_17:1"} {
		assert.Contains(t, stdout, want)
	}
	assert.NotContains(t, stdout, "FAILED")
	for _, line := range strings.Split(stdout, "\n") {
		assert.LessOrEqual(t, len(line), 120, "fits a wide terminal: %q", line)
	}
}

func TestDemoUsage(t *testing.T) {
	code, stdout, stderr := runCLI(t, "", "demo", "extra")
	assert.Equal(t, exitUsage, code)
	assert.Empty(t, stdout)
	assert.Equal(t, "toolsearch demo: takes no arguments (got \"extra\") (run `toolsearch demo --help`)\n", stderr)

	code, _, stderr = runCLI(t, "", "demo", "--nope")
	assert.Equal(t, exitUsage, code)
	assert.Equal(t, 1, strings.Count(stderr, "\n"))

	code, stdout, _ = runCLI(t, "", "demo", "--help")
	assert.Equal(t, exitOK, code)
	assert.Contains(t, stdout, "usage: toolsearch demo [--json]")
}

func TestDemoHelpers(t *testing.T) {
	assert.Equal(t, "0", demoThousands(0))
	assert.Equal(t, "999", demoThousands(999))
	assert.Equal(t, "1,000", demoThousands(1000))
	assert.Equal(t, "334,982", demoThousands(334982))
	assert.Equal(t, "-12,345", demoThousands(-12345))
	assert.Equal(t, "aa bb\ncc", demoWrap("aa  bb cc", 5))
}

func demoKeys(m map[string]any) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

func demoJSONInt(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// The summary is computed from what happened: a mode that fails is named with its error, and nothing claims
// that every mode reached the tool.
func TestDemoSummaryWhenAModeFails(t *testing.T) {
	ok := func(m runtime.Mode, planned ...string) scenario.Result {
		return scenario.Result{Mode: m, EffectiveMode: m, Tools: 36, Answer: "FAKE_PLUGIN_OK", CalledTarget: true,
			PlannedTools: planned, DeclaredTools: 4, RequestBytes: 3000, ToolBytes: 1000}
	}
	off := ok(runtime.ModeOff, scenario.Target)
	off.TargetCalledDirectly, off.DeclaredTools, off.RequestBytes, off.ToolBytes = true, 37, 24000, 23000
	code := scenario.Result{Mode: runtime.ModeCode, EffectiveMode: runtime.ModeCode, Tools: 36,
		Err: "tool_search_code timed out", PlannedTools: []string{"tool_search_code"}, RequestBytes: 2500}
	results := []scenario.Result{off, code, ok(runtime.ModeTools, "tool_search", "tool_call")}

	text := strings.Join(strings.Fields(explain(results)), " ")
	assert.Contains(t, text, "In code mode the model did not reach fake_plugin_tool_17: tool_search_code timed out.")
	assert.Contains(t, text, "In tools mode the model called tool_search, then tool_call.")
	assert.Contains(t, text, "2 of 3 runs reached fake_plugin_tool_17; these did not: code/36.")
	assert.NotContains(t, text, "Every mode")
	assert.NotContains(t, text, "smaller", "no saving is claimed for a mode that failed")

	var b strings.Builder
	writeDemoTables(&b, results)
	assert.Contains(t, b.String(), "FAILED: tool_search_code timed out")

	all := []scenario.Result{off, ok(runtime.ModeCode, "tool_search_code"), ok(runtime.ModeTools, "tool_search", "tool_call")}
	text = strings.Join(strings.Fields(explain(all)), " ")
	assert.Contains(t, text, "Every mode reached fake_plugin_tool_17, with the same answer.")
	assert.Contains(t, text, "At 36 tools the last code-mode request was 88% smaller than with Tool Search off.")

	all[2].Answer = "something else"
	assert.Contains(t, strings.Join(strings.Fields(explain(all)), " "), "but the answers differ")
}
