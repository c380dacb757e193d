package runtime_test

import (
	"context"
	"encoding/json"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolsearch/toolsearch/catalog"
	"github.com/toolsearch/toolsearch/internal/corpus"
	"github.com/toolsearch/toolsearch/runtime"
)

// recorder is a handler that remembers the arguments each tool was called with.
type recorder struct {
	mu   sync.Mutex
	args map[string]json.RawMessage
}

func (rec *recorder) handler(id string) catalog.Handler {
	return catalog.HandlerFunc(func(_ context.Context, args json.RawMessage) (*catalog.Result, error) {
		rec.mu.Lock()
		defer rec.mu.Unlock()
		rec.args[id] = append(json.RawMessage(nil), args...)
		return &catalog.Result{Content: []catalog.Content{{Type: "text", Text: "ok " + id}}}, nil
	})
}

// corpusCatalogTools are the 644 real MCP tools as the mcp package catalogs them, each with a recording handler.
func corpusCatalogTools(t *testing.T, rec *recorder) []catalog.Tool {
	t.Helper()
	tools, err := catalog.ParseFile(corpus.CatalogFile())
	require.NoError(t, err)
	require.Len(t, tools, 644)
	for i := range tools {
		tools[i].Handler = rec.handler(tools[i].ID())
	}
	return tools
}

// Every real tool definition works end to end in tools mode: it is cataloged (its schema compiles: none of the
// 644 is refused), describe returns its schema, a call with arguments generated from that schema passes
// validation and reaches the tool through the pipeline, and a search for its exact name finds it among the
// tools of that name, first.
func TestCorpusEveryToolThroughThePipeline(t *testing.T) {
	rec := &recorder{args: map[string]json.RawMessage{}}
	tools := corpusCatalogTools(t, rec)
	logger, logs := newLogger()
	rt := newRuntime(t, runtime.ModeTools, &runtime.Options{Logger: logger})
	run := startRun(t, rt, runtime.RunRequest{Tools: tools})
	require.Empty(t, run.Catalog().Rejected(), "every real schema compiles")
	require.Equal(t, len(tools), run.Catalog().Len())
	assert.NotContains(t, logs.String(), "left out of the catalog")

	sameName := map[string]int{}
	for _, tool := range tools {
		sameName[tool.Name]++
	}
	for _, tool := range tools {
		id := tool.ID()

		res := execute(t, run, "d", runtime.ToolDescribeName, map[string]string{"id": id})
		require.False(t, res.IsError, res.Content)
		var d catalog.Description
		require.NoError(t, json.Unmarshal(res.Details, &d))
		assert.Equal(t, id, d.ID)
		assert.Equal(t, tool.Description, d.Description)
		assert.JSONEq(t, string(tool.Parameters), string(d.Parameters), id)

		args, err := corpus.Arguments(tool.Parameters)
		require.NoError(t, err)
		res = execute(t, run, "c", runtime.ToolCallName, map[string]any{"id": id, "args": args})
		if !assert.False(t, res.IsError, "%s with %s: %s", id, args, res.Content) {
			continue
		}
		require.Len(t, res.Hidden, 1)
		assert.Equal(t, id, res.Hidden[0].ToolID)
		assert.JSONEq(t, string(args), string(rec.args[id]), "the tool got the arguments: %s", id)

		res = execute(t, run, "s", runtime.ToolSearchName, map[string]any{"query": tool.Name, "limit": 20})
		require.False(t, res.IsError, res.Content)
		var hits []catalog.Descriptor
		require.NoError(t, json.Unmarshal(res.Details, &hits))
		rank := -1
		for i, h := range hits {
			if h.ID == id {
				rank = i
			}
		}
		assert.True(t, rank >= 0 && rank < sameName[tool.Name], "%s ranks %d for its own name (%d tools share it)",
			id, rank, sameName[tool.Name])
	}
	tel := run.Telemetry()
	assert.EqualValues(t, len(tools), tel.CallCount)
	for _, c := range tel.Calls {
		assert.False(t, c.IsError, c.ToolID)
	}
}

// BenchmarkStartRunCorpus is the cold start of a tools-mode run over the 644 real tools in a fresh runtime: the
// catalog is built and every input schema compiled (promise: well under a second).
// TestCorpusEveryToolThroughThePipeline is its twin: the same run catalogs every tool and calls each one.
func BenchmarkStartRunCorpus(b *testing.B) {
	tools, err := catalog.ParseFile(corpus.CatalogFile())
	require.NoError(b, err)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		rt, err := runtime.New(ctx, &runtime.Options{Config: runtime.Config{Enabled: true, Mode: runtime.ModeTools}})
		if err != nil {
			b.Fatal(err)
		}
		run, err := rt.StartRun(ctx, runtime.RunRequest{RunID: "bench", Tools: tools})
		if err != nil || run.Catalog().Len() != len(tools) {
			b.Fatalf("%v, %d tools cataloged", err, run.Catalog().Len())
		}
		run.Close()
		rt.Close(ctx)
	}
}
