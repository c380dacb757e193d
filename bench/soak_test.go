//go:build soak

package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"runtime"
	"runtime/debug"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/toolsearch/toolsearch/hostfns"
)

// The soak suite is its own target (it takes minutes): go test -tags soak -run Soak -timeout 60m ./bench
// SOAK_RUNS overrides the number of sandbox runs (default 100,000).

// soakRSSGrowthBound is the most the process may grow after warm-up over the whole soak. A leaked instance
// holds at least ~1.3 MiB of linear memory, so leaking even one run in a thousand over 100,000 runs (~130 MiB)
// breaks it, while the Go heap's normal breathing and pooled buffers stay well inside.
const soakRSSGrowthBound = 96 << 20

type soakCase struct {
	name string
	code string
	opts *hostfns.RunOptions
	kind string // "" for success
}

// Normal scripts also check isolation: each one fails if it can see what any earlier run defined.
const isolationCheck = `if (typeof globalThis.__soakLeak !== 'undefined' || ({}).__soakProto !== undefined) throw new Error('state leaked between runs');
globalThis.__soakLeak = 1; Object.prototype.__soakProto = 1;
`

var soakCases = []soakCase{
	{"trivial", isolationCheck + "return 1", nil, ""},
	{"bridge", isolationCheck + roundTripScript, nil, ""},
	{"json", isolationCheck + `const a = Array.from({length: 200}, (_, i) => ({i, s: 'x' + i})); return JSON.parse(JSON.stringify(a)).length`, nil, ""},
	{"concurrent calls", isolationCheck + `return (await Promise.all([1, 2, 3, 4].map(i => openclaw.tools.call('t', {i})))).length`, nil, ""},
	{"timers", isolationCheck + `await new Promise(r => setTimeout(r, 5000)); return 'slept'`, nil, ""},
	{"runaway", "while (true) {}", &hostfns.RunOptions{Timeout: 30 * time.Millisecond}, "timeout"},
	{"runaway after await", "await openclaw.tools.search('x'); for (;;) {}", &hostfns.RunOptions{Timeout: 30 * time.Millisecond}, "timeout"},
	{"fuel", "for (;;) {}", &hostfns.RunOptions{Fuel: 2_000_000}, "fuel"},
	{"memory", "return new Uint8Array(64 << 20).length", &hostfns.RunOptions{MemoryBytes: 16 << 20}, "memory"},
	{"string doubling", "let s = 'x'; for (;;) s += s", &hostfns.RunOptions{MemoryBytes: 16 << 20}, "memory"},
	{"stack", "function f(n) { return f(n + 1) + 1 } return f(0)", nil, "stack"},
	{"output flood", "for (;;) console.log('spam spam spam')", &hostfns.RunOptions{MaxOutputBytes: 4096}, "output"},
	{"empty entries", "for (;;) console.log()", &hostfns.RunOptions{MaxOutputBytes: 4096}, "output"},
	{"bulk copy", "const a = new Uint8Array(8 << 20); for (;;) a.copyWithin(0, 1)", &hostfns.RunOptions{Timeout: 30 * time.Millisecond}, "timeout"},
	{"bridge budget", `const p = 'b'.repeat(60000); let refused = 0;
		for (let i = 0; i < 30; i++) { try { await openclaw.tools.call('t', {p}) } catch (e) { refused++ } }
		if (refused === 0) throw new Error('budget not enforced'); return refused`, &hostfns.RunOptions{MaxBridgeBytes: 1 << 20}, ""},
	{"huge exception", "throw new Error('E'.repeat(1 << 20))", nil, "exception"},
	{"faked out of memory", "throw Object.assign(new Error('out of memory'), {name: 'InternalError'})", nil, "exception"},
	{"NUL", "return 1\x00", nil, "syntax"},
	{"call flood", "for (;;) await openclaw.tools.search('q')", &hostfns.RunOptions{MaxCalls: 5}, "calls"},
	{"syntax", "let = ;", nil, "syntax"},
	{"throw", "throw new TypeError('hostile')", nil, "exception"},
	{"never settles", "await new Promise(() => {})", nil, "exception"},
	{"exit", "const std = await import('qjs:std'); std.exit(7)", nil, "exit"},
	{"escape attempts", `const std = await import('qjs:std'); const os = await import('qjs:os');
		if (std.open('/etc/passwd', 'r') !== null || os.readdir('/')[0].length || Object.keys(std.getenviron()).length) throw new Error('escaped');
		Function.prototype.call = null; Promise.prototype.then = null; return 'contained'`, nil, ""},
}

func openFiles(t *testing.T) int {
	entries, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skip("no /proc/self/fd on this OS")
	}
	return len(entries)
}

func TestSoakSandbox(t *testing.T) {
	runs := 100_000
	if s := os.Getenv("SOAK_RUNS"); s != "" {
		n, err := strconv.Atoi(s)
		require.NoError(t, err)
		runs = n
	}
	s := sandbox(t)
	ctx := context.Background()
	one := func(i int) error {
		// Nine normal runs for every hostile one, cycling through every case of each kind.
		var c soakCase
		if i%10 == 9 {
			hostile := soakCases[5:]
			c = hostile[(i/10)%len(hostile)]
		} else {
			c = soakCases[i%5]
		}
		res, err := s.Run(ctx, c.code, memBridge{}, c.opts)
		if c.kind == "" {
			if err != nil {
				return fmt.Errorf("%s: %w", c.name, err)
			}
			if len(res.Value) == 0 || !json.Valid(res.Value) {
				return fmt.Errorf("%s: bad value %q", c.name, res.Value)
			}
			return nil
		}
		if got := hostfns.Describe(err).Kind; got != c.kind {
			return fmt.Errorf("%s: want %s, got %s (%v)", c.name, c.kind, got, err)
		}
		return nil
	}

	// Warm up (pools, caches, the scheduler), then take the baselines.
	for i := range 2000 {
		require.NoError(t, one(i))
	}
	// FreeOSMemory returns what the Go heap no longer uses, so RSS measures what is held, not the high-water
	// mark of four memory bombs running at once.
	debug.FreeOSMemory()
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	filesBefore, rssBefore := openFiles(t), residentBytes()
	start := time.Now()

	var next, failures atomic.Int64
	var firstErr sync.Once
	var wg sync.WaitGroup
	for range 2 * runtime.GOMAXPROCS(0) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1)) - 1
				if i >= runs {
					return
				}
				if err := one(i); err != nil {
					failures.Add(1)
					firstErr.Do(func() { t.Errorf("run %d: %v", i, err) })
				}
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	debug.FreeOSMemory()
	filesAfter, rssAfter := openFiles(t), residentBytes()
	t.Logf("%d runs (%d hostile) in %v: %.0f runs/s; RSS %d MiB → %d MiB; open files %d → %d",
		runs, runs/10, elapsed.Round(time.Second), float64(runs)/elapsed.Seconds(),
		rssBefore>>20, rssAfter>>20, filesBefore, filesAfter)
	assert.Zero(t, failures.Load(), "failed runs")
	assert.LessOrEqual(t, rssAfter-rssBefore, int64(soakRSSGrowthBound), "RSS grew past the bound")
	assert.LessOrEqual(t, filesAfter, filesBefore+2, "file descriptors leaked")
}
