package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const describeCatalog = `[
 {"name":"create_issue","server":"github","description":"Create a GitHub issue",
  "inputSchema":{"type":"object","properties":{"title":{"type":"string"}},"required":["title"],"additionalProperties":false}},
 {"name":"web_search","description":"Search the web",
  "inputSchema":{"type":"object","properties":{"query":{"type":"string"}},"required":["query"]},
  "outputSchema":{"type":"object","properties":{"results":{"type":"array","items":{"type":"string"}}},"required":["results"],"additionalProperties":false}},
 {"name":"web_fetch","description":"Fetch a page","catalogMode":"direct-only",
  "inputSchema":{"type":"object","properties":{"url":{"type":"string"}},"required":["url"]}},
 {"name":"dup","description":"one","sourceName":"a"},
 {"name":"dup","description":"two","sourceName":"b"}
]`

func TestDescribeCommand(t *testing.T) {
	cat := writeFile(t, "c.json", describeCatalog)

	code, stdout, stderr := runCLI(t, "", "describe", "--catalog", cat, "web_search")
	require.Equal(t, exitOK, code, stderr)
	var d struct {
		ID           string          `json:"id"`
		Input        string          `json:"input"`
		Output       string          `json:"output"`
		Parameters   json.RawMessage `json:"parameters"`
		OutputSchema json.RawMessage `json:"outputSchema"`
	}
	require.NoError(t, json.Unmarshal([]byte(stdout), &d))
	assert.Equal(t, "openclaw:file:web_search", d.ID)
	assert.Equal(t, "{ query: string }", d.Input)
	assert.Equal(t, "{ results: Array<string> }", d.Output)
	assert.Contains(t, stdout, `"output": "{ results: Array<string> }"`, "indented, and not HTML-escaped")
	assert.JSONEq(t, `{"type":"object","properties":{"query":{"type":"string"}},"required":["query"]}`, string(d.Parameters))
	assert.NotEmpty(t, d.OutputSchema)

	// An MCP tool by exact id: its schema is shown in full, its hint stays "unknown".
	code, stdout, _ = runCLI(t, "", "describe", "--json", "--catalog", cat, "mcp:github:create_issue")
	require.Equal(t, exitOK, code)
	assert.Equal(t, 1, strings.Count(stdout, "\n"))
	assert.Contains(t, stdout, `"input":"unknown"`)
	assert.Contains(t, stdout, `"additionalProperties":false`)

	// A direct-only entry is reachable from the command line.
	code, _, stderr = runCLI(t, "", "describe", "--catalog", cat, "web_fetch")
	assert.Equal(t, exitOK, code, stderr)
}

func TestDescribeCommandFailures(t *testing.T) {
	cat := writeFile(t, "c.json", describeCatalog)
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"unknown with suggestions", []string{"web_serch"}, "Unknown tool id: web_serch. Did you mean: openclaw:file:web_search"},
		{"ambiguous name", []string{"dup"}, "Ambiguous tool name: dup; use an exact tool id."},
		{"denied is unknown", []string{"--deny", "web_search", "web_search"}, "Unknown tool id: web_search."},
		{"not allowed is unknown", []string{"--allow", "source:mcp", "web_search"}, "Unknown tool id: web_search."},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			code, stdout, stderr := runCLI(t, "", append([]string{"describe", "--catalog", cat}, tc.args...)...)
			assert.Equal(t, exitFailure, code)
			assert.Empty(t, stdout)
			assert.True(t, strings.HasPrefix(stderr, "toolsearch describe: "+tc.want), stderr)
		})
	}

	code, _, stderr := runCLI(t, "", "describe", "--catalog", writeFile(t, "bad.json", `[{"description":"x"}]`), "x")
	assert.Equal(t, exitFailure, code)
	assert.Contains(t, stderr, "name is required")
	code, _, stderr = runCLI(t, "", "describe", "--catalog", "/does/not/exist.json", "x")
	assert.Equal(t, exitFailure, code)
	assert.Contains(t, stderr, "no such file")
}

func TestCallCommand(t *testing.T) {
	cat := writeFile(t, "c.json", describeCatalog)

	code, stdout, stderr := runCLI(t, "", "call", "--catalog", cat, "web_search", "--args", `{"query":"go"}`)
	require.Equal(t, exitOK, code, stderr)
	var env struct {
		Tool struct {
			ID    string `json:"id"`
			Input string `json:"input"`
		} `json:"tool"`
		Result struct {
			Content []struct{ Text string } `json:"content"`
			Details struct {
				DryRun    bool            `json:"dryRun"`
				Tool      string          `json:"tool"`
				Arguments json.RawMessage `json:"arguments"`
			} `json:"details"`
		} `json:"result"`
	}
	require.NoError(t, json.Unmarshal([]byte(stdout), &env))
	assert.Equal(t, "openclaw:file:web_search", env.Tool.ID)
	assert.True(t, env.Result.Details.DryRun)
	assert.Equal(t, "openclaw:file:web_search", env.Result.Details.Tool)
	assert.JSONEq(t, `{"query":"go"}`, string(env.Result.Details.Arguments))
	assert.Contains(t, env.Result.Content[0].Text, "dry run")

	// Arguments from standard input, an MCP tool by unique name, one line of JSON.
	code, stdout, stderr = runCLI(t, `{"title":"t"}`, "call", "--catalog", cat, "--json", "--args", "-", "create_issue")
	require.Equal(t, exitOK, code, stderr)
	assert.Equal(t, 1, strings.Count(stdout, "\n"))
	assert.Contains(t, stdout, `"id":"mcp:github:create_issue"`)

	// No --args means {}: a tool without required arguments accepts it.
	code, _, stderr = runCLI(t, "", "call", "--catalog", cat, "openclaw:a:dup")
	assert.Equal(t, exitOK, code, stderr)
}

func TestCallCommandRefused(t *testing.T) {
	cat := writeFile(t, "c.json", describeCatalog)
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"invalid arguments", []string{"web_search", "--args", `{"q":1}`},
			"Invalid arguments for openclaw:file:web_search: "},
		{"closed schema", []string{"create_issue", "--args", `{"title":"t","extra":1}`},
			"Invalid arguments for mcp:github:create_issue: "},
		{"unknown", []string{"nope"}, "Unknown tool id: nope."},
		{"denied", []string{"--deny", "source:mcp", "mcp:github:create_issue", "--args", `{"title":"t"}`},
			"Unknown tool id: mcp:github:create_issue."},
		{"ambiguous", []string{"dup"}, "Ambiguous tool name: dup; use an exact tool id."},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			code, stdout, stderr := runCLI(t, "", append([]string{"call", "--catalog", cat}, tc.args...)...)
			assert.Equal(t, exitFailure, code)
			assert.Empty(t, stdout)
			assert.True(t, strings.HasPrefix(stderr, "toolsearch call: "+tc.want), stderr)
			assert.Equal(t, 1, strings.Count(stderr, "\n"))
		})
	}
}

func TestDescribeAndCallUsage(t *testing.T) {
	cat := writeFile(t, "c.json", describeCatalog)
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"describe without catalog", []string{"describe", "x"}, "--catalog or --mcp-config is required"},
		{"describe with both sources", []string{"describe", "--catalog", cat, "--mcp-config", cat, "x"}, "give --catalog or --mcp-config, not both"},
		{"describe without tool", []string{"describe", "--catalog", cat}, "takes exactly one tool ID or NAME"},
		{"describe with two tools", []string{"describe", "--catalog", cat, "a", "b"}, "takes exactly one tool ID or NAME"},
		{"describe unknown flag", []string{"describe", "--nope"}, "flag provided but not defined"},
		{"call without catalog", []string{"call", "x"}, "--catalog or --mcp-config is required"},
		{"call with both sources", []string{"call", "--catalog", cat, "--mcp-config", cat, "x"}, "give --catalog or --mcp-config, not both"},
		{"call bad args", []string{"call", "--catalog", cat, "x", "--args", "{"}, "--args is not valid JSON"},
		{"call policy denies everything", []string{"call", "--catalog", cat, "--deny", "*", "x"},
			"the policy denies Tool Search's control tools"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			code, stdout, stderr := runCLI(t, "", tc.args...)
			assert.Equal(t, exitUsage, code)
			assert.Empty(t, stdout)
			assert.Equal(t, 1, strings.Count(stderr, "\n"), "one-line hint: %q", stderr)
			assert.Contains(t, stderr, tc.want)
			assert.Contains(t, stderr, "toolsearch "+tc.args[0]+" --help")
		})
	}
	for _, cmd := range []string{"describe", "call"} {
		code, stdout, _ := runCLI(t, "", cmd, "--help")
		assert.Equal(t, exitOK, code)
		assert.Contains(t, stdout, "usage: toolsearch "+cmd+" (--catalog FILE | --mcp-config FILE)")
	}
}

func TestUnescapeHTML(t *testing.T) {
	tests := map[string]string{
		`"Array\u003cstring\u003e"`: `"Array<string>"`,
		`"a \u0026 b"`:              `"a & b"`,
		`"\\u003c"`:                 `"\\u003c"`, // an escaped backslash, then text
		`"\u00e9\n"`:                `"\u00e9\n"`,
		`"\`:                        `"\`,
	}
	for in, want := range tests {
		assert.Equal(t, want, string(unescapeHTML([]byte(in))), in)
	}
}
