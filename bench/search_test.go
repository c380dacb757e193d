package bench

import (
	"context"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/blevesearch/bleve/v2"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolsearch/toolsearch/catalog"
	"github.com/toolsearch/toolsearch/internal/bm25"
	"github.com/toolsearch/toolsearch/internal/devset"
	"github.com/toolsearch/toolsearch/internal/synthetic"
)

// Search peers: our ranker, plain BM25 (internal/bm25, the baseline of the catalog's quality test) and Bleve, the
// full-text engine a Go user would otherwise embed. They get the same documents (catalog.TextOf: the name, label,
// source name, description and parameter text our index reads) and the same query processing (catalog.Words: our
// word splitting and stop words, no stemming), and each keeps only the best k with a heap.

type searcher interface {
	search(q string, k int) []string // ids, best first
}

type ours struct{ c *catalog.Catalog }

func (o ours) search(q string, k int) []string {
	hits, err := o.c.Search(context.Background(), q, k)
	if err != nil {
		panic(err)
	}
	ids := make([]string, len(hits))
	for i, h := range hits {
		ids[i] = h.ID
	}
	return ids
}

type plain struct{ ix *bm25.Index }

func (p plain) search(q string, k int) []string {
	hits := p.ix.Search(q, k)
	ids := make([]string, len(hits))
	for i, h := range hits {
		ids[i] = h.ID
	}
	return ids
}

type bleveSearcher struct{ ix bleve.Index }

func (s bleveSearcher) search(q string, k int) []string {
	words := strings.Join(catalog.Words(q), " ")
	if words == "" {
		return nil
	}
	req := bleve.NewSearchRequestOptions(bleve.NewMatchQuery(words), k, 0, false)
	res, err := s.ix.Search(req)
	if err != nil {
		panic(err)
	}
	ids := make([]string, len(res.Hits))
	for i, h := range res.Hits {
		ids[i] = h.ID
	}
	return ids
}

func catalogTools(gen []synthetic.Tool) []catalog.Tool {
	tools := make([]catalog.Tool, len(gen))
	for i, g := range gen {
		src := catalog.SourceMCP
		if g.Trusted {
			src = catalog.SourceOpenClaw
		}
		tools[i] = catalog.Tool{Source: src, SourceName: g.SourceName, Name: g.Name, Description: g.Description, Parameters: g.Parameters}
	}
	return tools
}

func build(engine string, tools []catalog.Tool) (searcher, error) {
	switch engine {
	case "Ours":
		c, err := catalog.New(tools, &catalog.Options{MaxSearchLimit: 50})
		return ours{c}, err
	case "BM25":
		docs := make([]bm25.Doc, len(tools))
		for i := range tools {
			docs[i] = bm25.Doc{ID: tools[i].ID(), Text: catalog.TextOf(&tools[i]).String()}
		}
		return plain{bm25.New(docs, catalog.Words)}, nil
	case "Bleve":
		ix, err := bleve.NewMemOnly(bleve.NewIndexMapping())
		if err != nil {
			return nil, err
		}
		// Bleve analyzes what it is given with its standard analyzer; giving it our words, joined by spaces, makes
		// its tokens ours (its lowercasing and English stop words then change nothing).
		words := func(s string) string { return strings.Join(catalog.Words(s), " ") }
		batch := ix.NewBatch()
		for i := range tools {
			text := catalog.TextOf(&tools[i])
			doc := map[string]string{"name": words(text.Name), "label": words(text.Label), "source": words(text.Source),
				"description": words(text.Description), "parameters": words(text.Parameters)}
			if err := batch.Index(tools[i].ID(), doc); err != nil {
				return nil, err
			}
			if batch.Size() >= 1000 {
				if err := ix.Batch(batch); err != nil {
					return nil, err
				}
				batch.Reset()
			}
		}
		return bleveSearcher{ix}, ix.Batch(batch)
	}
	return nil, fmt.Errorf("unknown engine %s", engine)
}

// builtIndex is one engine's index of one synthetic catalog, with what building it cost. Building Bleve at 100k
// takes long enough that every count of a benchmark run shares one build.
type builtIndex struct {
	s          searcher
	tools      []catalog.Tool
	buildTime  time.Duration
	heapPerDoc float64
	err        error
}

var indexCache sync.Map // "engine/n" → func() *builtIndex

func indexFor(engine string, n int) *builtIndex {
	f, _ := indexCache.LoadOrStore(fmt.Sprintf("%s/%d", engine, n), sync.OnceValue(func() *builtIndex {
		tools := catalogTools(synthetic.Tools(n))
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		start := time.Now()
		s, err := build(engine, tools)
		elapsed := time.Since(start)
		runtime.GC()
		runtime.ReadMemStats(&after)
		heap := float64(after.HeapAlloc) - float64(before.HeapAlloc)
		return &builtIndex{s: s, tools: tools, buildTime: elapsed, heapPerDoc: heap / float64(n), err: err}
	}))
	return f.(func() *builtIndex)()
}

func benchmarkSearch(b *testing.B, engine string) {
	for _, n := range []int{1000, 10000, 100000} {
		b.Run(fmt.Sprintf("tools=%d", n), func(b *testing.B) {
			ix := indexFor(engine, n)
			require.NoError(b, ix.err)
			qs := synthetic.Queries(ix.tools[n/2].Name)
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				if len(ix.s.search(qs[i%len(qs)], 10)) == 0 {
					b.Fatal("no hits")
				}
			}
			b.ReportMetric(float64(ix.buildTime.Nanoseconds())/float64(n), "build-ns/tool")
			b.ReportMetric(ix.heapPerDoc, "heap-B/tool")
		})
	}
}

// BenchmarkSearchRatio runs every query through ours and plain BM25 in turn and reports how many times BM25's
// time ours took (x-BM25): on a shared machine whose load swings between two benchmark runs, the ratio of two
// interleaved measurements is the steadier figure. ns/op is one query of each.
func BenchmarkSearchRatio(b *testing.B) { benchmarkRatio(b, false) }

// BenchmarkSearchRatioLong is BenchmarkSearchRatio with long requests, which the learned ranking re-scores when
// it is on for them (learnedLong in catalog/learned_weights.go).
func BenchmarkSearchRatioLong(b *testing.B) { benchmarkRatio(b, true) }

func benchmarkRatio(b *testing.B, long bool) {
	for _, n := range []int{1000, 10000, 100000} {
		b.Run(fmt.Sprintf("tools=%d", n), func(b *testing.B) {
			o, p := indexFor("Ours", n), indexFor("BM25", n)
			require.NoError(b, o.err)
			require.NoError(b, p.err)
			qs := synthetic.Queries(o.tools[n/2].Name)
			if long {
				qs = synthetic.LongQueries()
			}
			var ours, base time.Duration
			for i := 0; b.Loop(); i++ {
				q := qs[i%len(qs)]
				start := time.Now()
				o.s.search(q, 10)
				mid := time.Now()
				p.s.search(q, 10)
				ours, base = ours+mid.Sub(start), base+time.Since(mid)
			}
			b.ReportMetric(float64(ours)/float64(base), "x-BM25")
		})
	}
}

func BenchmarkSearchOurs(b *testing.B)  { benchmarkSearch(b, "Ours") }
func BenchmarkSearchBM25(b *testing.B)  { benchmarkSearch(b, "BM25") }
func BenchmarkSearchBleve(b *testing.B) { benchmarkSearch(b, "Bleve") }

// TestSearchPeersTwin checks that every engine answers every benchmark query, deterministically, and finds the
// exact-name query's tool, on the 1k catalog the benchmarks use.
func TestSearchPeersTwin(t *testing.T) {
	for _, engine := range []string{"Ours", "BM25", "Bleve"} {
		t.Run(engine, func(t *testing.T) {
			ix := indexFor(engine, 1000)
			require.NoError(t, ix.err)
			exact := ix.tools[500]
			for _, q := range synthetic.Queries(exact.Name) {
				got := ix.s.search(q, 10)
				require.NotEmpty(t, got, q)
				assert.Equal(t, got, ix.s.search(q, 10), "deterministic for %q", q)
			}
			assert.Contains(t, ix.s.search(exact.Name, 10), exact.ID())
		})
	}
}

// TestSearchQuality runs every development set, the multi-need holdout included, through every engine (go test
// ./bench -run Quality -v prints the table). Metrics as defined in internal/devset: hit@1 (the first hit meets a
// need), hit@5 (the share of the request's needs met in the first five), all@5 (every need met in the first
// five), MRR@10 (first hit meeting a need). On every set ours must clear plain BM25 by 0.05 hit@1 and match its
// hit@5.
func TestSearchQuality(t *testing.T) {
	sets, err := devset.Load("../catalog/testdata", true)
	require.NoError(t, err)
	require.GreaterOrEqual(t, len(sets), 6)
	engines := []string{"Ours", "BM25", "Bleve"}
	var b strings.Builder
	fmt.Fprintf(&b, "%-18s %-6s %5s %5s  %6s %6s %6s %6s\n", "set", "engine", "tools", "qs", "hit@1", "hit@5", "all@5", "MRR@10")
	for _, s := range sets {
		tools, err := catalog.ParseFile(s.Catalog)
		require.NoError(t, err, s.Name)
		ids := make([]string, len(tools))
		pos := make(map[string]int, len(tools))
		for i := range tools {
			ids[i] = tools[i].ID()
			pos[ids[i]] = i
		}
		require.NoError(t, s.Resolve(ids))
		scores := map[string]devset.Metrics{}
		for _, engine := range engines {
			e, err := build(engine, tools)
			require.NoError(t, err)
			m, _ := devset.Score(s.Queries, func(q string) []int {
				got := e.search(q, 10)
				out := make([]int, len(got))
				for i, id := range got {
					out[i] = pos[id]
				}
				return out
			})
			scores[engine] = m
			name := s.Name
			if !s.Tuned {
				name += " *"
			}
			fmt.Fprintf(&b, "%-18s %-6s %5d %5d  %6.3f %6.3f %6.3f %6.3f\n", name, engine, len(tools), m.N, m.Hit1, m.Hit5, m.All5, m.MRR)
		}
		ours, base := scores["Ours"], scores["BM25"]
		assert.GreaterOrEqual(t, ours.Hit1, base.Hit1+0.05, "%s: hit@1 at least plain BM25's + 0.05", s.Name)
		assert.GreaterOrEqual(t, ours.Hit5, base.Hit5, "%s: hit@5 at least plain BM25's", s.Name)
	}
	b.WriteString("* not tuned on\n")
	t.Log("\n" + b.String())
}
