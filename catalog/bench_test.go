package catalog

import (
	"context"
	"fmt"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolsearch/toolsearch/internal/synthetic"
)

func BenchmarkSearch(b *testing.B) { benchmarkSearch(b, false, defaultRankConfig()) }

// BenchmarkSearchLong searches with long requests, which the learned ranking re-scores; BenchmarkSearchLongFirst
// is the same without it, to compare with.
func BenchmarkSearchLong(b *testing.B)      { benchmarkSearch(b, true, defaultRankConfig()) }
func BenchmarkSearchLongFirst(b *testing.B) { benchmarkSearch(b, true, firstStageConfig()) }

func benchmarkSearch(b *testing.B, long bool, cfg rankConfig) {
	for _, n := range []int{1000, 10000, 100000} {
		b.Run(fmt.Sprintf("tools=%d", n), func(b *testing.B) {
			tools := synthTools(n)
			c, err := newCatalog(tools, nil, "", &counters{}, cfg)
			require.NoError(b, err)
			qs := synthQueries(tools)
			if long {
				qs = synthetic.LongQueries()
			}
			ctx := context.Background()
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; b.Loop(); i++ {
				if _, err := c.Search(ctx, qs[i%len(qs)], 10); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkBuild measures index build time and the memory a catalog keeps per tool (live heap after build,
// including the copied schemas), so that a change which makes building superlinear or bloats the index shows.
func BenchmarkBuild(b *testing.B) {
	for _, n := range []int{1000, 10000, 100000} {
		b.Run(fmt.Sprintf("tools=%d", n), func(b *testing.B) {
			tools := synthTools(n)
			var keep *Catalog
			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			for b.Loop() {
				c, err := New(tools, nil)
				if err != nil {
					b.Fatal(err)
				}
				keep = c
			}
			b.StopTimer()
			runtime.GC()
			runtime.ReadMemStats(&after)
			b.ReportMetric(float64(after.HeapAlloc-min(before.HeapAlloc, after.HeapAlloc))/float64(n), "heapB/tool")
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/tool")
			runtime.KeepAlive(keep)
		})
	}
}

// TestSyntheticSearchTwin proves the benchmarks measure real searches: on the same generated catalogs, exact
// names come first, each query finds hits, and results are identical across two builds.
func TestSyntheticSearchTwin(t *testing.T) {
	for _, n := range []int{1000, 10000} {
		t.Run(fmt.Sprintf("tools=%d", n), func(t *testing.T) {
			tools := synthTools(n)
			c1, err := New(tools, nil)
			require.NoError(t, err)
			c2, err := New(synthTools(n), nil)
			require.NoError(t, err)
			require.Equal(t, n, c1.Len())
			ctx := context.Background()
			for _, q := range synthQueries(tools) {
				h1, err := c1.Search(ctx, q, 10)
				require.NoError(t, err)
				h2, err := c2.Search(ctx, q, 10)
				require.NoError(t, err)
				require.NotEmpty(t, h1, q)
				require.Equal(t, h1, h2, "search must be deterministic")
			}
			mid := tools[n/2]
			hits, err := c1.Search(ctx, mid.Name, 3)
			require.NoError(t, err)
			require.Equal(t, mid.ID(), hits[0].ID)
			hits, err = c1.Search(ctx, "shedule an event in the calendar", 10)
			require.NoError(t, err)
			corrected := false
			for _, h := range hits[:3] {
				corrected = corrected || strings.Contains(h.Name, "_schedule_")
			}
			require.True(t, corrected, "the typo must be corrected to schedule: %v", hits[:3])
		})
	}
}

// unknownIDs are what a model or a script sends that no tool is: a typo, a wrong case, a wrong source, noise, and a
// megabyte of it.
func unknownIDs(tools []Tool) []string {
	name := tools[len(tools)/2].Name
	return []string{name[:len(name)-1] + "x", strings.ToUpper(name[:1]) + name[1:] + "_", "mcp:nowhere:" + name,
		"zzzz_nothing_like_it", strings.Repeat("abcdefgh", 1<<17)}
}

// BenchmarkSuggest is the host work of one unknown id (Lookup, then Suggest), which a script can cause 100 times
// per run outside its fuel: it must not grow with the catalog the way a scan of every name did (170-250 ms per
// id at 100,000 tools).
func BenchmarkSuggest(b *testing.B) {
	for _, n := range []int{1000, 100000} {
		b.Run(fmt.Sprintf("tools=%d", n), func(b *testing.B) {
			tools := synthTools(n)
			c, err := New(tools, nil)
			require.NoError(b, err)
			ids := unknownIDs(tools)
			ctx := context.Background()
			b.ResetTimer()
			for i := 0; b.Loop(); i++ {
				q := ids[i%len(ids)]
				if _, err := c.Lookup(q); err == nil {
					b.Fatalf("%q resolved", q)
				}
				c.Suggest(ctx, q, nil)
			}
		})
	}
}

func TestSuggestTwin(t *testing.T) {
	tools := synthTools(1000)
	c, err := New(tools, nil)
	require.NoError(t, err)
	want := tools[len(tools)/2]
	for _, q := range unknownIDs(tools)[:3] {
		_, err := c.Lookup(q)
		require.Error(t, err, q)
		got := c.Suggest(context.Background(), q, nil)
		require.NotEmpty(t, got, q)
		assert.Equal(t, want.ID(), got[0], "the benchmark measures suggestions that find the tool (%q)", q)
	}
}
