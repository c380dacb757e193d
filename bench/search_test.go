package bench

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"runtime"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/blevesearch/bleve/v2"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolsearch/toolsearch/catalog"
	"github.com/toolsearch/toolsearch/internal/bm25"
	"github.com/toolsearch/toolsearch/internal/synthetic"
)

// Search peers: our ranker, plain BM25 (internal/bm25, the baseline of the catalog's quality test) and Bleve, the
// full-text engine a Go user would otherwise embed. Same documents (name, description, parameter names and
// descriptions), same queries.

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
	req := bleve.NewSearchRequestOptions(bleve.NewMatchQuery(q), k, 0, false)
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

// paramText is the searchable text of a schema's top-level properties: names and descriptions.
func paramText(schema json.RawMessage) string {
	var s struct {
		Properties map[string]struct {
			Description string `json:"description"`
		} `json:"properties"`
	}
	_ = json.Unmarshal(schema, &s)
	names := make([]string, 0, len(s.Properties))
	for n := range s.Properties {
		names = append(names, n)
	}
	sort.Strings(names)
	var b strings.Builder
	for _, n := range names {
		b.WriteString(n + " " + s.Properties[n].Description + " ")
	}
	return b.String()
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
		for i, t := range tools {
			docs[i] = bm25.Doc{ID: t.ID(), Text: t.Name + " " + t.Description + " " + paramText(t.Parameters)}
		}
		return plain{bm25.New(docs, func(s string) []string { return bm25.Words(s, nil) })}, nil
	case "Bleve":
		ix, err := bleve.NewMemOnly(bleve.NewIndexMapping())
		if err != nil {
			return nil, err
		}
		batch := ix.NewBatch()
		for _, t := range tools {
			doc := map[string]string{"name": t.Name, "description": t.Description, "parameters": paramText(t.Parameters)}
			if err := batch.Index(t.ID(), doc); err != nil {
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

// TestSearchQualityPeers runs the catalog's development set (350 tools, 271 agent-phrased queries) through every
// engine. Ours must beat both clearly; the table is in the log.
func TestSearchQualityPeers(t *testing.T) {
	data, err := os.ReadFile("../catalog/testdata/devset/catalog.json")
	require.NoError(t, err)
	tools, err := catalog.ParseFile(data)
	require.NoError(t, err)
	qdata, err := os.ReadFile("../catalog/testdata/devset/queries.jsonl")
	require.NoError(t, err)
	type query struct {
		Query    string   `json:"query"`
		Expected []string `json:"expect"`
	}
	var queries []query
	sc := bufio.NewScanner(bytes.NewReader(qdata))
	for sc.Scan() {
		if line := bytes.TrimSpace(sc.Bytes()); len(line) > 0 {
			var q query
			require.NoError(t, json.Unmarshal(line, &q))
			require.NotEmpty(t, q.Expected, q.Query)
			queries = append(queries, q)
		}
	}
	require.GreaterOrEqual(t, len(queries), 150)

	scores := map[string][3]float64{}
	for _, engine := range []string{"Ours", "BM25", "Bleve"} {
		s, err := build(engine, tools)
		require.NoError(t, err)
		var hit1, hit5, mrr float64
		for _, q := range queries {
			for rank, id := range s.search(q.Query, 10) {
				if !contains(q.Expected, id) {
					continue
				}
				if rank == 0 {
					hit1++
				}
				if rank < 5 {
					hit5++
				}
				mrr += 1 / float64(rank+1)
				break
			}
		}
		n := float64(len(queries))
		scores[engine] = [3]float64{hit1 / n, hit5 / n, mrr / n}
		t.Logf("%-6s hit@1 %.3f  hit@5 %.3f  MRR@10 %.3f", engine, hit1/n, hit5/n, mrr/n)
	}
	for _, peer := range []string{"BM25", "Bleve"} {
		assert.Greater(t, scores["Ours"][0], scores[peer][0]+0.05, "hit@1 vs %s", peer)
		assert.Greater(t, scores["Ours"][2], scores[peer][2]+0.04, "MRR@10 vs %s", peer)
	}
}

func contains(xs []string, x string) bool {
	for _, y := range xs {
		if x == y {
			return true
		}
	}
	return false
}
