package wasm

import (
	"context"
	"errors"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Attacks on what a run costs the host, at the engine level. bench/hostile_test.go runs the same classes end to
// end through the runtime, in a child process whose RSS it measures.

// How late a run may answer after its deadline, measured twice. cpuPastDeadline is the process CPU spent after
// the deadline, which is what the host pays for a script that should have stopped, whatever else the machine
// runs: the engine needs a few milliseconds, and before bulk memory was charged these scripts overran by 20
// seconds to 4 minutes. In wall time, which on a shared machine also counts waiting for a core (with the CPU 97%
// contended, a thread here waited up to 2 s), a run may answer deadlineMargin later than a control twin started
// with it: a plain Go loop with the same deadline, checking the clock (loopLate); bench.BenchmarkDeadlineOvershoot
// measures the difference.
const (
	cpuPastDeadline = 100 * time.Millisecond
	deadlineMargin  = 200 * time.Millisecond
)

// loopLate starts the control twin of a run with timeout: a Go loop computing until timeout has passed, checking
// the clock between stretches of about a microsecond. The channel gets how late it noticed.
func loopLate(timeout time.Duration) <-chan time.Duration {
	late := make(chan time.Duration, 1)
	go func() {
		start := time.Now()
		x := uint64(1)
		for deadline := start.Add(timeout); time.Now().Before(deadline); {
			for range 1000 {
				x = x*6364136223846793005 + 1442695040888963407
			}
		}
		loopSink.Add(x)
		late <- time.Since(start) - timeout
	}()
	return late
}

var loopSink atomic.Uint64

// afterDeadline runs f and returns the process CPU used after timeout had passed since the start (zero if f
// returned in time).
func afterDeadline(timeout time.Duration, f func()) time.Duration {
	var mu sync.Mutex
	var atDeadline time.Duration
	timer := time.AfterFunc(timeout, func() {
		mu.Lock()
		atDeadline = processCPU()
		mu.Unlock()
	})
	f()
	end := processCPU()
	if timer.Stop() {
		return 0
	}
	for {
		mu.Lock()
		at := atDeadline
		mu.Unlock()
		if at != 0 || end == 0 {
			return max(end-at, 0)
		}
		runtime.Gosched()
	}
}

// bulkScripts each burn their time in instructions whose cost grows with an operand.
var bulkScripts = map[string]string{
	"copyWithin 46 MiB":  "const a = new Uint8Array(46 << 20); for (;;) a.copyWithin(0, 1)",
	"copies under 1 KiB": "const a = new Uint8Array(2048); for (;;) a.copyWithin(0, 1000, 2023)",
	"fill 46 MiB":        "const a = new Uint8Array(46 << 20); for (let i = 0; ; i++) a.fill(i)",
	"set 24 MiB":         "const a = new Uint8Array(24 << 20), b = new Uint8Array(24 << 20); for (;;) a.set(b)",
	"slice 16 MiB":       "const a = new Uint8Array(16 << 20); for (;;) a.slice()",
	"string repeat":      "for (let i = 0; ; i++) { const s = 'x'.repeat(8 << 20) + i }",
	"padStart":           "for (;;) { const s = ''.padStart(8 << 20, 'ab') }",
	"array copy":         "const a = new Array(1 << 20).fill(1); for (;;) a.slice()",
	"busy loop":          "for (;;) {}",
}

// requireStopsAtDeadline runs script under a 300 ms deadline: it must stop at it, the host spending no more
// than cpuPastDeadline on it afterwards, and return no later than a Go loop beside it is late by.
func requireStopsAtDeadline(t *testing.T, script string) {
	t.Helper()
	var res *Result
	var err error
	var twin <-chan time.Duration
	past := afterDeadline(300*time.Millisecond, func() {
		twin = loopLate(300 * time.Millisecond)
		res, err = runScript(t, script, &RunOptions{Timeout: 300 * time.Millisecond})
	})
	requireLimit(t, err, LimitTimeout)
	assert.LessOrEqual(t, past, cpuPastDeadline, "the host kept running the script past its deadline")
	control := <-twin
	assert.Less(t, res.Usage.Wall-300*time.Millisecond, control+deadlineMargin,
		"returned %v after a 300 ms deadline; a Go loop beside it %v", res.Usage.Wall-300*time.Millisecond, control)
}

func TestDeadlineHoldsForBulkMemory(t *testing.T) {
	engine(t) // compiled before anything is timed
	for name, script := range bulkScripts {
		t.Run(name, func(t *testing.T) { requireStopsAtDeadline(t, script) })
	}
}

// Eight hostile scripts at once on however few cores: every one still returns close to its deadline, because
// the fuel hook yields between slices instead of waiting for Go's 10 ms preemption. What each costs the host past
// its deadline is the CPU of the thread that ran it (each run's goroutine is locked to a thread of its own, and a
// run executes the guest on its caller's goroutine): the process's total would also count what eight runs
// leave to others, such as the collector freeing their 46 MiB memories, and, on a busy machine, whichever
// finished run's teardown fell after another's deadline. Read at a timer, it is an upper bound: the time the read
// came late is counted as CPU. A timer is late as the Go loops beside the runs are (on a busy machine, by hundreds
// of milliseconds), so the bound is cpuPastDeadline beyond the latest Go loop's lateness.
func TestDeadlineHoldsWithEightHostileRunsAtOnce(t *testing.T) {
	engine(t)
	scripts := make([]string, 0, len(bulkScripts))
	for _, s := range bulkScripts {
		scripts = append(scripts, s)
	}
	const timeout = time.Second
	late := make([]time.Duration, 8)
	errs := make([]error, 8)
	twins := make([]<-chan time.Duration, 8)
	threadPast := make([]time.Duration, 8)
	measured := make([]bool, 8)
	past := afterDeadline(timeout, func() {
		var wg sync.WaitGroup
		for i := range 8 {
			twins[i] = loopLate(timeout)
			wg.Add(1)
			go func() {
				defer wg.Done()
				runtime.LockOSThread()
				defer runtime.UnlockOSThread()
				tid := threadID()
				type sample struct{ cpu, timerLate time.Duration }
				atDeadline := make(chan sample, 1)
				start := time.Now()
				timer := time.AfterFunc(timeout, func() {
					cpu, _ := taskCPU(tid)
					atDeadline <- sample{cpu, time.Since(start) - timeout}
				})
				_, errs[i] = runScript(t, scripts[i%len(scripts)], &RunOptions{Timeout: timeout})
				late[i] = time.Since(start) - timeout
				end, ok := taskCPU(tid)
				// A thread has at most the wall time since the deadline; when the timer read the thread late, the
				// CPU it had between the deadline and that read is at most how late the read was.
				threadPast[i], measured[i] = max(late[i], 0), ok
				if !timer.Stop() {
					at := <-atDeadline
					threadPast[i] = min(threadPast[i], max(end-at.cpu, 0)+at.timerLate)
					measured[i] = ok && at.cpu > 0
				}
			}()
		}
		wg.Wait()
	})
	var control time.Duration
	for i := range 8 {
		control = max(control, <-twins[i])
	}
	for i := range 8 {
		requireLimit(t, errs[i], LimitTimeout)
		assert.Less(t, late[i], control+deadlineMargin, "%s returned %v after its deadline; the latest of eight Go loops beside them %v",
			scripts[i%len(scripts)], late[i], control)
		if runtime.GOOS == "linux" {
			require.True(t, measured[i], "the CPU time of run %d's thread was read", i)
		}
		assert.LessOrEqual(t, threadPast[i], control+cpuPastDeadline, "the host kept running %s past its deadline; the latest of eight Go loops beside them was %v late",
			scripts[i%len(scripts)], control)
	}
	t.Logf("returned after the deadline by: %v (%d cores), eight Go loops by up to %v; CPU past the deadline per run: %v (the process's: %v)",
		late, runtime.GOMAXPROCS(0), control, threadPast, past)
}

func TestMemoryKindOnlyWhenTheLimitWasHit(t *testing.T) {
	// Real exhaustion, in shapes that used to end as "Uncaught null" or "[uninitialized]" at exactly the cap.
	for name, script := range map[string]string{
		"small objects":     "const a = []; for (;;) a.push({})",
		"small arrays":      "const a = []; for (;;) a.push([1, 2])",
		"map entries":       "const m = new Map(); for (let i = 0; ; i++) m.set(i, 'v' + i)",
		"closures":          "const a = []; for (let i = 0; ; i++) a.push(() => i)",
		"one huge buffer":   "new Uint8Array(1 << 30).length",
		"buffers":           "const a = []; for (;;) a.push(new Uint8Array(1 << 20))",
		"strings":           "const a = []; for (let i = 0; ; i++) a.push('s' + i + 'x'.repeat(100))",
		"caught then throw": "try { new Uint8Array(1 << 30) } catch (e) {} const a = []; for (;;) a.push({})",
		"huge string":       "'x'.repeat(2 ** 29).length",
	} {
		t.Run(name, func(t *testing.T) {
			res, err := runScript(t, script, &RunOptions{Timeout: 30 * time.Second, MemoryBytes: 16 << 20})
			requireLimit(t, err, LimitMemory)
			assert.LessOrEqual(t, res.Usage.MemoryBytes, uint64(16<<20))
		})
	}
	// An exception that only looks like memory exhaustion is the script's own.
	for name, script := range map[string]string{
		"renamed Error": "const e = new Error('out of memory'); e.name = 'InternalError'; throw e",
		"InternalError": "throw new InternalError('out of memory')",
		"plain object":  "throw {name: 'InternalError', message: 'out of memory'}",
		"RangeError":    "throw new RangeError('Maximum call stack size exceeded')",
		"caught and ok": "try { new Uint8Array(1 << 30) } catch (e) { 'recovered: ' + e.name }",
	} {
		t.Run(name, func(t *testing.T) {
			_, err := runScript(t, script, nil)
			if name == "caught and ok" {
				require.NoError(t, err, "a refused grow the script handles is no failure")
				return
			}
			var se *ScriptError
			require.ErrorAs(t, err, &se, "a script's own exception, not a limit")
		})
	}
}

func TestBJSONIsUnreachable(t *testing.T) {
	res, err := runScript(t, `(async () => {
		const out = [];
		for (const spec of ['qjs:bjson', 'bjson', 'qjs:bjson.so']) {
			try { await import(spec); out.push(spec + ' loaded') } catch (e) { out.push('refused') }
		}
		out.push(typeof bjson);
		return out.join(',');
	})()`, nil)
	require.NoError(t, err)
	assert.Equal(t, "refused,refused,refused,undefined", res.Value)
	// The module as shipped still has it: the rewrite is what removes it.
	unmetered, err := unmeteredEngine()
	require.NoError(t, err)
	res, err = unmetered.Run(context.Background(), "import('qjs:bjson').then(m => typeof m.read)", nil)
	require.NoError(t, err)
	assert.Equal(t, "function", res.Value)
}

// A guest that crashes is ErrTrap (kind crash for the model), never an internal host failure, and the engine stays
// usable. The instrumented module turns every crash it knows of into a limit, so this uses the module as shipped,
// whose unguarded C stack overflows into memory it may not touch on deeply nested JSON.
func TestGuestTrapIsErrTrap(t *testing.T) {
	unmetered, err := unmeteredEngine()
	require.NoError(t, err)
	_, err = unmetered.Run(context.Background(), "JSON.parse('['.repeat(100000) + ']'.repeat(100000)).length", nil)
	require.ErrorIs(t, err, ErrTrap)
	var limit *LimitError
	assert.False(t, errors.As(err, &limit), "a crash is not a limit")
	res, err := unmetered.Run(context.Background(), "6 * 7", nil)
	require.NoError(t, err, "the engine survives")
	assert.Equal(t, "42", res.Value)
	// The same script on the instrumented module is a clean stack limit.
	_, err = runScript(t, "JSON.parse('['.repeat(100000) + ']'.repeat(100000)).length", nil)
	requireLimit(t, err, LimitStack)
}

func TestNULInSourceIsRefused(t *testing.T) {
	for _, src := range []string{"1\x00; for (;;) {}", "let a = 1;\n\x00", "'a\x00b'"} {
		res, err := runScript(t, src, &RunOptions{Timeout: 5 * time.Second})
		var se *ScriptError
		require.ErrorAs(t, err, &se, "%q", src)
		assert.True(t, se.IsSyntax())
		assert.Contains(t, se.Message, "NUL")
		assert.Equal(t, 1+strings.Count(src[:strings.IndexByte(src, 0)], "\n"), se.Line)
		assert.Zero(t, res.Usage.Fuel, "refused before anything ran")
	}
	res, err := runScript(t, `'a\x00b'.length + '\u0000'.length`, nil)
	require.NoError(t, err, "an escaped NUL inside a string is fine")
	assert.Equal(t, "4", res.Value)
}

func TestHostCopiesAreBounded(t *testing.T) {
	t.Run("completion value", func(t *testing.T) {
		res, err := runScript(t, "'x'.repeat(40 << 20)", &RunOptions{MaxValueBytes: 1 << 20})
		limit := requireLimit(t, err, LimitResult)
		assert.EqualValues(t, 40<<20, limit.Used)
		assert.Empty(t, res.Value)
	})
	t.Run("exception message and stack", func(t *testing.T) {
		_, err := runScript(t, "throw new Error('E'.repeat(8 << 20))", nil)
		var se *ScriptError
		require.ErrorAs(t, err, &se)
		assert.Less(t, len(se.Message), maxErrorTextBytes+100)
		assert.Contains(t, se.Message, "more bytes cut")
		_, err = runScript(t, "const e = new Error('x'); e.stack = 's'.repeat(8 << 20); throw e", nil)
		require.ErrorAs(t, err, &se)
		assert.Less(t, len(se.Stack), maxErrorTextBytes+100)
		_, err = runScript(t, "throw 'é'.repeat(4 << 20)", nil)
		require.ErrorAs(t, err, &se)
		assert.Less(t, len(se.Message), maxErrorTextBytes+100)
		assert.True(t, strings.HasPrefix(se.Message, "éé"), "cut at a character boundary")
	})
}

// Copies and fills of more than bulkChunk go in pieces with a host check between them: what they leave in memory
// is what one instruction leaves, for overlapping ranges in both directions too (the unmetered engine runs the
// module as shipped).
func TestBulkMemoryInPieces(t *testing.T) {
	const script = `const n = (3 << 20) + 12345, a = new Uint8Array(n + 8192);
		for (let i = 0; i < a.length; i += 97) a[i] = (i * 7) & 255;
		a.copyWithin(4093, 0, n);        // the ranges overlap, the target above: copied from the top down
		a.copyWithin(0, 2001, 2001 + n); // the target below: from the bottom up
		a.fill(7, 100, 100 + (2 << 20) + 3);
		let h = 0; for (let i = 0; i < a.length; i += 13) h = (h * 31 + a[i]) | 0;
		h`
	unmetered, err := unmeteredEngine()
	require.NoError(t, err)
	want, err := unmetered.Run(context.Background(), script, nil)
	require.NoError(t, err)
	got, err := engine(t).Run(context.Background(), script, nil)
	require.NoError(t, err)
	assert.Equal(t, want.Value, got.Value)
	assert.NotEqual(t, "0", got.Value)
}

// A `%` of doubles far apart runs musl's fmod, whose main loop is a counted loop charged a chunk at a time
// (countedLoopAt): a script doing nothing else still stops at its deadline, and at its fuel budget.
func TestCountedLoopsStillStop(t *testing.T) {
	const script = "let s = 0; for (;;) s += 1e300 % 3.3"
	engine(t) // compiled before anything is timed
	requireStopsAtDeadline(t, script)

	res, err := runScript(t, script, &RunOptions{Fuel: 5_000_000, Timeout: time.Minute})
	limit := requireLimit(t, err, LimitFuel)
	assert.EqualValues(t, 5_000_000, limit.Limit)
	assert.Greater(t, res.Usage.Fuel, uint64(5_000_000))
}
