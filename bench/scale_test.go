package bench

import (
	"fmt"
	"runtime"
	"runtime/metrics"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolsearch/toolsearch/catalog"
	"github.com/toolsearch/toolsearch/internal/synthetic"
)

// The search at scale: ours and plain BM25 on the same synthetic catalog of 100,000 and 1,000,000 tools, each
// query timed on both in turn in CPU time of the thread that runs it, and each index's build in CPU time of the
// process with the memory it keeps, allocates and peaks at. A 1,000,000-tool run builds both indexes once per
// process (about two minutes on the 2-core machine) and holds about 3 GB: run it alone, e.g.
//
//	go test ./bench -run '^$' -bench 'SearchScale/terse/tools=1000000$' -benchtime 2000x -count 1

// buildCost is what building one index cost.
type buildCost struct {
	cpu, wall         time.Duration
	kept, alloc, peak float64 // bytes per tool: live after the build, allocated during it, heap at its highest
	peakHeap          uint64
	engine            string
	n                 int
}

// measureBuild builds one engine's index of tools and measures it. Nothing else runs in the process meanwhile
// (the benchmark builds one index at a time), so the process's CPU time and heap are the build's.
func measureBuild(engine string, tools []catalog.Tool) (searcher, buildCost, error) {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	var peak atomic.Uint64
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { // samples the heap's live objects every 5 ms: the build's high-water mark
		defer wg.Done()
		sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
		t := time.NewTicker(5 * time.Millisecond)
		defer t.Stop()
		for {
			metrics.Read(sample)
			if v := sample[0].Value.Uint64(); v > peak.Load() {
				peak.Store(v)
			}
			select {
			case <-stop:
				return
			case <-t.C:
			}
		}
	}()
	cpu, start := cpuTime(), time.Now()
	s, err := build(engine, tools)
	c := buildCost{cpu: cpuTime() - cpu, wall: time.Since(start), engine: engine, n: len(tools)}
	close(stop)
	wg.Wait()
	runtime.ReadMemStats(&after) // before the GC below: TotalAlloc counts every allocation either way
	c.alloc = float64(after.TotalAlloc-before.TotalAlloc) / float64(len(tools))
	runtime.GC()
	runtime.ReadMemStats(&after)
	c.kept = (float64(after.HeapAlloc) - float64(before.HeapAlloc)) / float64(len(tools))
	c.peakHeap = peak.Load()
	c.peak = (float64(c.peakHeap) - float64(before.HeapAlloc)) / float64(len(tools))
	runtime.KeepAlive(s)
	return s, c, err
}

// scalePair is ours and BM25 built over one catalog.
type scalePair struct {
	tools        []catalog.Tool
	ours, bm25   searcher
	oursC, bm25C buildCost
	err          error
}

var scaleCache sync.Map // n → func() *scalePair

// scaleFor builds both indexes of the n-tool catalog once per process. An earlier size's indexes are dropped
// first, so that a 1,000,000-tool build does not run beside a 100,000-tool catalog's garbage.
func scaleFor(n int) *scalePair {
	f, _ := scaleCache.LoadOrStore(n, sync.OnceValue(func() *scalePair {
		scaleCache.Range(func(k, _ any) bool {
			if k.(int) != n {
				scaleCache.Delete(k)
			}
			return true
		})
		p := &scalePair{tools: catalogTools(synthetic.Tools(n))}
		p.ours, p.oursC, p.err = measureBuild("Ours", p.tools)
		if p.err == nil {
			p.bm25, p.bm25C, p.err = measureBuild("BM25", p.tools)
		}
		return p
	}))
	return f.(func() *scalePair)()
}

// scaleQueries are the terse benchmark queries of the n-tool catalog, or the long requests.
func scaleQueries(p *scalePair, long bool) []string {
	if long {
		return synthetic.LongQueries()
	}
	return synthetic.Queries(p.tools[len(p.tools)/2].Name)
}

// searchBoth runs q through ours and BM25 in turn on the calling goroutine's thread and returns the thread CPU
// time each took, and their hits.
func searchBoth(p *scalePair, q string) (ours, base time.Duration, oursHits, baseHits []string) {
	t0 := threadCPU()
	oursHits = p.ours.search(q, 10)
	t1 := threadCPU()
	baseHits = p.bm25.search(q, 10)
	t2 := threadCPU()
	return t1 - t0, t2 - t1, oursHits, baseHits
}

// BenchmarkSearchScale/{terse,long}/tools=N: one query through ours and one through plain BM25 per op, in turn
// (interleaved within the run), CPU time of each (ours-cpu-ns/q, bm25-cpu-ns/q) and their ratio (x-BM25); with
// the build of each index (build-cpu-ns/tool, kept-B/tool, alloc-B/tool, peak-B/tool, bm25-* the same for BM25).
// TestSearchScaleTwin is its correctness twin.
func BenchmarkSearchScale(b *testing.B) {
	for _, kind := range []string{"terse", "long"} {
		b.Run(kind, func(b *testing.B) {
			for _, n := range []int{100_000, 1_000_000} {
				b.Run(fmt.Sprintf("tools=%d", n), func(b *testing.B) {
					p := scaleFor(n)
					require.NoError(b, p.err)
					qs := scaleQueries(p, kind == "long")
					runtime.LockOSThread() // threadCPU reads this thread's clock
					defer runtime.UnlockOSThread()
					var ours, base time.Duration
					for i := 0; b.Loop(); i++ {
						o, bb, oh, _ := searchBoth(p, qs[i%len(qs)])
						if len(oh) == 0 {
							b.Fatal("no hits")
						}
						ours, base = ours+o, base+bb
					}
					b.ReportMetric(float64(ours.Nanoseconds())/float64(b.N), "ours-cpu-ns/q")
					b.ReportMetric(float64(base.Nanoseconds())/float64(b.N), "bm25-cpu-ns/q")
					b.ReportMetric(float64(ours)/float64(base), "x-BM25")
					reportBuild(b, "", p.oursC)
					reportBuild(b, "bm25-", p.bm25C)
				})
			}
		})
	}
}

func reportBuild(b *testing.B, prefix string, c buildCost) {
	n := float64(c.n)
	b.ReportMetric(float64(c.cpu.Nanoseconds())/n, prefix+"build-cpu-ns/tool")
	b.ReportMetric(c.kept, prefix+"kept-B/tool")
	b.ReportMetric(c.alloc, prefix+"alloc-B/tool")
	b.ReportMetric(c.peak, prefix+"peak-B/tool")
}

// TestSearchScaleTwin runs what BenchmarkSearchScale measures on a 10,000-tool catalog: both engines answer
// every query of both kinds, ours puts the exact-name query's tool first, the thread clock advances over a
// search, and the build's figures are those of a real index (it keeps memory, allocates at least what it keeps,
// peaks at least at what it keeps).
func TestSearchScaleTwin(t *testing.T) {
	p := scaleFor(10_000)
	require.NoError(t, p.err)
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	var spent time.Duration
	for _, long := range []bool{false, true} {
		for _, q := range scaleQueries(p, long) {
			o, bb, oh, bh := searchBoth(p, q)
			require.NotEmpty(t, oh, q)
			require.NotEmpty(t, bh, q)
			spent += o + bb
		}
	}
	assert.Positive(t, spent)
	exact := p.tools[len(p.tools)/2]
	_, _, oh, _ := searchBoth(p, exact.Name)
	assert.Equal(t, exact.ID(), oh[0])
	for _, c := range []buildCost{p.oursC, p.bm25C} {
		assert.Positive(t, c.cpu, c.engine)
		assert.Positive(t, c.kept, c.engine)
		assert.GreaterOrEqual(t, c.alloc, c.kept, c.engine)
		assert.GreaterOrEqual(t, c.peak, c.kept*0.9, c.engine) // the 5 ms sampling may miss the last few bytes
	}
}
