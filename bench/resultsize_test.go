package bench

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolsearch/toolsearch/catalog"
	"github.com/toolsearch/toolsearch/internal/corpus"
	"github.com/toolsearch/toolsearch/runtime"
)

// resultSizeQueries are three query sets over the real tools: each tool's name as words ("take screenshot"),
// the first eight words of each description (what a model that read about a tool asks for), and the agent
// requests of the catalog's development set, which were written for other tools (so they match loosely, as
// real requests do).
func resultSizeQueries(t *testing.T, tools []catalog.Tool) map[string][]string {
	t.Helper()
	sets := map[string][]string{}
	for _, tool := range tools {
		sets["tool names"] = append(sets["tool names"], strings.NewReplacer("_", " ", "-", " ").Replace(tool.Name))
		if words := strings.Fields(tool.Description); len(words) > 0 {
			sets["description starts"] = append(sets["description starts"], strings.Join(words[:min(8, len(words))], " "))
		}
	}
	f, err := os.Open("../catalog/testdata/devset/queries.jsonl")
	require.NoError(t, err)
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var q struct{ Query string }
		require.NoError(t, json.Unmarshal(sc.Bytes(), &q))
		sets["dev-set requests"] = append(sets["dev-set requests"], q.Query)
	}
	require.NoError(t, sc.Err())
	return sets
}

type sizeStats struct {
	n, hits        int
	mean, p95, max float64
	legacyMean     float64
}

// TestSearchResultSize measures what one tool_search (tools mode, the default 8 hits) sends back to the model
// over the 644 real MCP tools, and holds the promise: at most 3 KB on average and 6 KB at most. The tools are
// cataloged as MCP tools (input "unknown", as from real servers) and again as trusted tools, whose rendered input
// hints make hits larger. "legacy" is the same hits as they were sent before hits were bounded: full
// descriptions, source fields and indented JSON.
func TestSearchResultSize(t *testing.T) {
	for _, trusted := range []bool{false, true} {
		tools, err := catalog.ParseFile(corpus.CatalogFile())
		require.NoError(t, err)
		name := "mcp"
		if trusted {
			name = "trusted"
			for i := range tools {
				tools[i].Source = catalog.SourceOpenClaw
			}
		}
		ctx := context.Background()
		rt, err := runtime.New(ctx, &runtime.Options{Config: runtime.Config{Enabled: true, Mode: runtime.ModeTools}})
		require.NoError(t, err)
		run, err := rt.StartRun(ctx, runtime.RunRequest{RunID: "size-" + name, Tools: tools})
		require.NoError(t, err)
		for _, set := range []string{"tool names", "description starts", "dev-set requests"} {
			st := measureResultSizes(t, run, resultSizeQueries(t, tools)[set])
			t.Logf("%-7s %-18s %4d searches, %.1f hits: mean %5.0f B, p95 %5.0f B, max %5.0f B (legacy mean %6.0f B)",
				name, set, st.n, float64(st.hits)/float64(st.n), st.mean, st.p95, st.max, st.legacyMean)
			assert.LessOrEqual(t, st.mean, 3000.0, "%s, %s: mean", name, set)
			assert.LessOrEqual(t, st.max, 6000.0, "%s, %s: max", name, set)
		}
		require.NoError(t, run.Close())
		require.NoError(t, rt.Close(ctx))
	}
}

func measureResultSizes(t *testing.T, run *runtime.Run, queries []string) sizeStats {
	t.Helper()
	var sizes []float64
	st := sizeStats{}
	var legacyTotal float64
	for _, q := range queries {
		args, _ := json.Marshal(map[string]string{"query": q})
		res, err := run.Execute(context.Background(), runtime.ToolCall{ID: "s", Name: runtime.ToolSearchName, Arguments: args})
		require.NoError(t, err)
		require.False(t, res.IsError, res.Content)
		var hits []catalog.Descriptor
		require.NoError(t, json.Unmarshal(res.Details, &hits))
		if len(hits) == 0 {
			continue
		}
		st.n++
		st.hits += len(hits)
		sizes = append(sizes, float64(len(res.Content)))
		legacyTotal += float64(legacySize(t, run.Catalog(), hits))
	}
	require.NotZero(t, st.n)
	sort.Float64s(sizes)
	var sum float64
	for _, s := range sizes {
		sum += s
	}
	st.mean = sum / float64(len(sizes))
	st.p95 = sizes[len(sizes)*95/100]
	st.max = sizes[len(sizes)-1]
	st.legacyMean = legacyTotal / float64(st.n)
	return st
}

// legacySize is the size the same hits had before: every descriptor field with the full description, indented.
func legacySize(t *testing.T, cat *catalog.Catalog, hits []catalog.Descriptor) int {
	type legacyHit struct {
		ID          string `json:"id"`
		Source      string `json:"source"`
		SourceName  string `json:"sourceName"`
		Name        string `json:"name"`
		Description string `json:"description"`
		Input       string `json:"input"`
	}
	out := make([]legacyHit, len(hits))
	for i, h := range hits {
		tool, err := cat.Lookup(h.ID)
		require.NoError(t, err)
		out[i] = legacyHit{h.ID, string(tool.Source), tool.SourceName, tool.Name, tool.Description, h.Input}
	}
	raw, err := json.MarshalIndent(out, "", "  ")
	require.NoError(t, err)
	return len(raw)
}
