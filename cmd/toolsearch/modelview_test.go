package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolsearch/toolsearch/catalog"
	"github.com/toolsearch/toolsearch/internal/corpus"
	"github.com/toolsearch/toolsearch/runtime"
)

// --model-view prints, byte for byte, what tool_search returns to the model in a tools-mode run of the same
// tools: checked against a run made here, over the 644 real tools, with and without a limit.
func TestSearchModelView(t *testing.T) {
	path := writeFile(t, "corpus.json", string(corpus.CatalogFile()))
	tools, err := catalog.ParseFile(corpus.CatalogFile())
	require.NoError(t, err)
	ctx := context.Background()
	rt, err := runtime.New(ctx, &runtime.Options{Config: runtime.Config{Enabled: true, Mode: runtime.ModeTools}})
	require.NoError(t, err)
	defer rt.Close(ctx)
	run, err := rt.StartRun(ctx, runtime.RunRequest{RunID: "model-view-test", Tools: tools})
	require.NoError(t, err)
	defer run.Close()

	for _, tc := range []struct {
		query string
		limit int
		hits  int
	}{
		{"take a screenshot of the page", 0, runtime.DefaultSearchDefaultLimit},
		{"create a pull request on github", 3, 3},
		{"search", 50, runtime.DefaultMaxSearchLimit}, // capped as the model's search is, not at the CLI's 50
	} {
		args := []string{"search", "--catalog", path, "--model-view", tc.query}
		req := map[string]any{"query": tc.query}
		if tc.limit > 0 {
			args = append(args, "--limit", fmt.Sprint(tc.limit))
			req["limit"] = tc.limit
		}
		code, stdout, stderr := runCLI(t, "", args...)
		require.Equal(t, exitOK, code, stderr)
		raw, _ := json.Marshal(req)
		want, err := run.Execute(ctx, runtime.ToolCall{ID: "x", Name: runtime.ToolSearchName, Arguments: raw})
		require.NoError(t, err)
		assert.Equal(t, want.Content+"\n", stdout, tc.query)
		var hits []map[string]any
		require.NoError(t, json.Unmarshal([]byte(stdout), &hits))
		assert.Len(t, hits, tc.hits, tc.query)
	}

	// What the model would read of a refused search is printed too, and the command fails.
	code, stdout, _ := runCLI(t, "", "search", "--catalog", path, "--model-view", "  ")
	assert.Equal(t, exitUsage, code, "an empty query is a usage error before anything runs")
	assert.Empty(t, stdout)

	code, _, stderr := runCLI(t, "", "search", "--catalog", path, "--model-view", "--json", "x")
	assert.Equal(t, exitUsage, code)
	assert.Contains(t, stderr, "no --batch or --json")
}

// With --mcp-config the limits of the file's tools.toolSearch apply, as in `mcp serve --config`.
func TestSearchModelViewUsesTheConfigLimits(t *testing.T) {
	cfg := upstreamConfig(t, "tools")
	data, err := os.ReadFile(cfg)
	require.NoError(t, err)
	limited := strings.Replace(string(data), `{"mode": "tools"}`, `{"mode": "tools", "maxSearchLimit": 1}`, 1)
	require.NoError(t, os.WriteFile(cfg, []byte(limited), 0o600))

	code, stdout, stderr := runCLI(t, "", "search", "--mcp-config", cfg, "--model-view", "--limit", "5", "create an issue on github")
	require.Equal(t, exitOK, code, stderr)
	var hits []map[string]any
	require.NoError(t, json.Unmarshal([]byte(stdout), &hits))
	require.Len(t, hits, 1, "maxSearchLimit of the file caps the model's search")
	assert.Equal(t, "mcp:github:create_issue", hits[0]["id"])
	assert.NotContains(t, stdout, "  ", "compact, as the model reads it")
}
