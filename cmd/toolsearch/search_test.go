package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const devCatalog = "../../catalog/testdata/devset/catalog.json"

func runCLI(t *testing.T, stdin string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	code = run(context.Background(), args, strings.NewReader(stdin), &out, &errb)
	return code, out.String(), errb.String()
}

func writeFile(t *testing.T, name, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	require.NoError(t, os.WriteFile(p, []byte(content), 0o600))
	return p
}

func TestSearchCommandUsage(t *testing.T) {
	cat := writeFile(t, "c.json", `[{"name":"web_search","description":"Search the web"}]`)
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"no catalog", []string{"search", "x"}, "--catalog or --mcp-config is required"},
		{"both sources", []string{"search", "--catalog", cat, "--mcp-config", cat, "x"}, "give --catalog or --mcp-config, not both"},
		{"no query", []string{"search", "--catalog", cat}, "a QUERY or --batch is required"},
		{"both", []string{"search", "--catalog", cat, "--batch", "q.jsonl", "x"}, "not both"},
		{"negative limit", []string{"search", "--catalog", cat, "--limit", "-1", "x"}, "limit must be a positive integer."},
		{"unknown flag", []string{"search", "--nope"}, "flag provided but not defined"},
		{"explain batch", []string{"search", "--catalog", cat, "--explain", "--batch", "q.jsonl"}, "--explain explains one query"},
		{"tool without explain", []string{"search", "--catalog", cat, "--tool", "web_search", "x"}, "--tool goes with --explain"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			code, stdout, stderr := runCLI(t, "", tc.args...)
			assert.Equal(t, exitUsage, code)
			assert.Empty(t, stdout)
			assert.Equal(t, 1, strings.Count(stderr, "\n"), "one-line hint: %q", stderr)
			assert.Contains(t, stderr, tc.want)
			assert.Contains(t, stderr, "toolsearch search --help")
		})
	}
}

func TestSearchCommandHelp(t *testing.T) {
	code, stdout, _ := runCLI(t, "", "search", "--help")
	assert.Equal(t, exitOK, code)
	assert.Contains(t, stdout, "usage: toolsearch search (--catalog FILE | --mcp-config FILE)")
	code, stdout, _ = runCLI(t, "", "help")
	assert.Equal(t, exitOK, code)
	assert.Contains(t, stdout, "search")
}

func TestSearchCommandQuery(t *testing.T) {
	code, stdout, stderr := runCLI(t, "", "search", "--catalog", devCatalog, "sceenshot", "--limit", "3")
	require.Equal(t, exitOK, code, stderr)
	lines := strings.Split(strings.TrimSpace(stdout), "\n")
	require.Len(t, lines, 3)
	assert.Contains(t, lines[0], "mcp:playwright:browser_take_screenshot")

	code, stdout, _ = runCLI(t, "", "search", "--catalog", devCatalog, "--json", "take", "a", "screenshot")
	require.Equal(t, exitOK, code)
	var line searchLine
	require.NoError(t, json.Unmarshal([]byte(stdout), &line))
	assert.Equal(t, "take a screenshot", line.Query)
	require.NotEmpty(t, line.Hits)
	assert.Equal(t, "mcp:playwright:browser_take_screenshot", line.Hits[0].ID)
	assert.Equal(t, "browser_take_screenshot", line.Hits[0].Name)

	code, stdout, _ = runCLI(t, "", "search", "--catalog", devCatalog, "--json", "list")
	require.Equal(t, exitOK, code)
	require.NoError(t, json.Unmarshal([]byte(stdout), &line))
	assert.Len(t, line.Hits, 8, "default limit")

	code, stdout, _ = runCLI(t, "", "search", "--catalog", devCatalog, "zzzxq qqqv")
	require.Equal(t, exitOK, code)
	assert.Equal(t, "no matching tools\n", stdout)
}

func TestSearchCommandBatch(t *testing.T) {
	queries := `{"query": "create a github issue", "expect": ["mcp:github:create_issue"]}

{"query": "", "note": "empty queries return no hits"}
{"query": "slack_post_message"}
`
	path := writeFile(t, "q.jsonl", queries)
	for _, src := range []struct{ arg, stdin string }{{path, ""}, {"-", queries}} {
		code, stdout, stderr := runCLI(t, src.stdin, "search", "--catalog", devCatalog, "--batch", src.arg, "--limit", "10")
		require.Equal(t, exitOK, code, stderr)
		var got []searchLine
		sc := bufio.NewScanner(strings.NewReader(stdout))
		for sc.Scan() {
			var l searchLine
			require.NoError(t, json.Unmarshal(sc.Bytes(), &l))
			assert.NotNil(t, l.Hits, "hits is [] rather than null")
			got = append(got, l)
		}
		require.Len(t, got, 3)
		assert.Equal(t, "mcp:github:create_issue", got[0].Hits[0].ID)
		assert.LessOrEqual(t, len(got[0].Hits), 10)
		assert.Empty(t, got[1].Hits)
		assert.Equal(t, "mcp:slack:slack_post_message", got[2].Hits[0].ID)
		assert.Contains(t, stdout, `{"query":"create a github issue","hits":[{"id":"mcp:github:create_issue","name":"create_issue","score":`)
	}
}

func TestSearchCommandLimitAboveModelCap(t *testing.T) {
	code, stdout, _ := runCLI(t, "", "search", "--catalog", devCatalog, "--json", "--limit", "30", "list")
	require.Equal(t, exitOK, code)
	var line searchLine
	require.NoError(t, json.Unmarshal([]byte(stdout), &line))
	assert.Len(t, line.Hits, 30, "the CLI allows evaluation limits up to 50")
}

func TestSearchCommandFailures(t *testing.T) {
	bad := writeFile(t, "bad.json", `[{"description":"no name"}]`)
	code, _, stderr := runCLI(t, "", "search", "--catalog", bad, "x")
	assert.Equal(t, exitFailure, code)
	assert.Contains(t, stderr, "name is required")

	code, _, stderr = runCLI(t, "", "search", "--catalog", filepath.Join(t.TempDir(), "missing.json"), "x")
	assert.Equal(t, exitFailure, code)
	assert.Contains(t, stderr, "missing.json")

	q := writeFile(t, "q.jsonl", "{\"query\": \"ok\"}\nnot json\n")
	code, stdout, stderr := runCLI(t, "", "search", "--catalog", devCatalog, "--batch", q)
	assert.Equal(t, exitFailure, code)
	assert.Contains(t, stderr, "q.jsonl:2")
	assert.Equal(t, 1, strings.Count(stdout, "\n"), "lines before the bad one are printed")
}

func TestSearchCommandExplain(t *testing.T) {
	code, stdout, stderr := runCLI(t, "", "search", "--catalog", devCatalog, "--explain", "--limit", "2", "--tool", "web_search",
		"take", "a", "sceenshot", "of", "the", "page")
	require.Equal(t, exitOK, code, stderr)
	blocks := strings.Split(strings.TrimSpace(stdout), "\n")
	require.NotEmpty(t, blocks)
	assert.Contains(t, blocks[0], "mcp:playwright:browser_take_screenshot")
	assert.Contains(t, blocks[0], "(rank 1)")
	assert.Contains(t, stdout, "typo fix screenshot")
	assert.Contains(t, stdout, "in name, description")
	assert.Contains(t, stdout, "written as in the tool")
	assert.Contains(t, stdout, "(hint)")
	assert.Contains(t, stdout, "openclaw:core:web_search  score 0.0000  (no match)")
	assert.Contains(t, stdout, "first stage")
	// Every tool of the github server matches "github" alike (a source name weighs the same at any length), and
	// nothing else of the request tells them apart: explain says they tied and that the id placed them.
	code, stdout, stderr = runCLI(t, "", "search", "--catalog", devCatalog, "--explain", "--limit", "7",
		"what", "github", "notifications", "do", "I", "have")
	require.Equal(t, exitOK, code, stderr)
	sixth, seventh := strings.Index(stdout, "mcp:github:add_issue_comment  score 6.7197  (rank 6)"), strings.Index(stdout, "(rank 7)")
	require.True(t, sixth > 0 && seventh > sixth, stdout)
	assert.Contains(t, stdout[sixth:seventh], "\n  tied on the first stage with mcp:github:create_branch, mcp:github:create_issue, "+
		"mcp:github:create_or_update_file and 31 more; placed by id (unread words of the request in its text: 0.0000 by idf; its stop words beside the same word in its name: 0)\n")
	assert.NotContains(t, stdout[:sixth], "tied on the first stage", "the first five have scores of their own")
	// A long request is re-scored by the learned ranking when the catalog's default re-ranks long requests (the
	// trainer decides it by held-out figures); --explain shows the learned score's parts exactly when it is.
	long := "could you please take a sceenshot of the page that is open in my browser window right now for my weekly report"
	code, stdout, stderr = runCLI(t, "", "search", "--catalog", devCatalog, "--explain", "--json", "--limit", "1", long)
	require.Equal(t, exitOK, code, stderr)
	var reranked struct {
		Explanations []struct {
			Reranked bool `json:"reranked"`
		} `json:"explanations"`
	}
	require.NoError(t, json.Unmarshal([]byte(stdout), &reranked))
	require.Len(t, reranked.Explanations, 1)
	code, stdout, stderr = runCLI(t, "", "search", "--catalog", devCatalog, "--explain", "--limit", "1", long)
	require.Equal(t, exitOK, code, stderr)
	assert.Contains(t, stdout, "ranked as a long request")
	assert.Equal(t, reranked.Explanations[0].Reranked, strings.Contains(stdout, "learned score"), "the learned score's parts")
	assert.Equal(t, reranked.Explanations[0].Reranked, strings.Contains(stdout, "coverage: any field"))

	// The JSON form carries the same numbers as a plain search: each explanation's score is the hit's.
	code, stdout, stderr = runCLI(t, "", "search", "--catalog", devCatalog, "--explain", "--json", "--limit", "3",
		"merge", "the", "pr")
	require.Equal(t, exitOK, code, stderr)
	var got struct {
		Explanations []struct {
			ID    string  `json:"id"`
			Score float64 `json:"score"`
			Rank  int     `json:"rank"`
			Words []struct {
				Word string `json:"word"`
				How  string `json:"how"`
			} `json:"words"`
		} `json:"explanations"`
	}
	require.NoError(t, json.Unmarshal([]byte(stdout), &got))
	code, plain, _ := runCLI(t, "", "search", "--catalog", devCatalog, "--json", "--limit", "3", "merge", "the", "pr")
	require.Equal(t, exitOK, code)
	var hits searchLine
	require.NoError(t, json.Unmarshal([]byte(plain), &hits))
	require.Len(t, got.Explanations, len(hits.Hits))
	for i, h := range hits.Hits {
		assert.Equal(t, h.ID, got.Explanations[i].ID)
		assert.Equal(t, h.Score, got.Explanations[i].Score)
		assert.Equal(t, i+1, got.Explanations[i].Rank)
	}
	code, _, stderr = runCLI(t, "", "search", "--catalog", devCatalog, "--explain", "--tool", "no_such_tool", "x")
	assert.Equal(t, exitFailure, code)
	assert.Contains(t, stderr, "no_such_tool")
}
