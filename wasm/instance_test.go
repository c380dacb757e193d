package wasm

import (
	"bytes"
	"context"
	"errors"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// reuseEngine keeps a single idle instance, so that every run reuses the instance the run before it used (unless
// that run made it unusable): what run N leaves behind is exactly what run N+1 would find. Its users hold
// reuseMu, so no other run takes the instance in between.
var (
	reuseEngine = sync.OnceValues(func() (*Engine, error) {
		e, err := New(context.Background(), &Options{HostFunctions: []HostFunction{
			{Name: "stop", Func: func(context.Context, *Args) (string, error) { return "", ErrStop }},
			{Name: "fail", Func: func(context.Context, *Args) (string, error) { return "", errors.New("host gave up") }},
		}})
		if err == nil {
			e.pool.keep = 1
		}
		return e, err
	})
	reuseMu sync.Mutex
)

func lockedReuseEngine(t testing.TB) *Engine {
	t.Helper()
	e, err := reuseEngine()
	require.NoError(t, err)
	reuseMu.Lock()
	t.Cleanup(reuseMu.Unlock)
	return e
}

// idleInstance is the engine's one idle instance, or nil.
func idleInstance(e *Engine) *instance {
	e.pool.mu.Lock()
	defer e.pool.mu.Unlock()
	if len(e.pool.idle) == 0 {
		return nil
	}
	return e.pool.idle[0]
}

// drainPool closes the idle instances, so that the next run starts on a fresh one.
func drainPool(e *Engine) {
	e.pool.mu.Lock()
	idle := e.pool.idle
	e.pool.idle = nil
	e.pool.mu.Unlock()
	for _, inst := range idle {
		inst.close()
	}
}

// stateProbe fingerprints everything a script could have changed that the next one could observe: the globals,
// the own keys of the built-in prototypes and namespaces (and whether their functions still work), the stack
// depth available (a stack pointer left low would cut it), stdout and stderr, and timers and jobs (a leftover one
// would run in this run's event loop and set a global). Its fuel is compared too: the same script in the same
// state burns the same fuel, so a reused instance that differed anywhere the interpreter looks would show.
const stateProbe = `
const keys = o => Reflect.ownKeys(o).map(String).sort().join();
const builtins = [globalThis, Object.prototype, Array.prototype, Function.prototype, String.prototype,
  Number.prototype, Promise.prototype, RegExp.prototype, Error.prototype, Symbol.prototype, JSON, Math,
  Reflect, Object, Array, Promise, std, os];
let depth = 0;
function down(n) { depth++; if (n > 0) down(n - 1) }
down(3000);
print('probe out');
console.log && 0;
std.err.puts('probe err\n');
const works = [JSON.stringify({a: [1]}), [3, 1, 2].sort().join(), Math.max(1, 2), 'ab'.toUpperCase(),
  typeof Object.prototype.toString.call, Array.isArray([]), String(Symbol.iterator)].join(';');
(async () => {
  await null; await null;
  await new Promise(r => setTimeout(r, 5));
  return [builtins.map(keys).join('|'), depth, works, typeof leaked, typeof fired, typeof job].join('#');
})()`

type probeResult struct {
	value, stdout, stderr string
	fuel, memory          uint64
}

func probe(t *testing.T, e *Engine) probeResult {
	t.Helper()
	start := time.Now()
	res, err := e.Run(context.Background(), stateProbe+"\n", nil)
	require.NoError(t, err)
	clock, err := e.Run(context.Background(), "Date.now()", nil)
	require.NoError(t, err)
	ms, err := strconv.ParseInt(clock.Value, 10, 64)
	require.NoError(t, err)
	assert.InDelta(t, start.UnixMilli(), ms, float64(time.Minute.Milliseconds()), "the clock starts at the real time of the run")
	return probeResult{res.Value, res.Stdout, res.Stderr, res.Usage.Fuel, res.Usage.MemoryBytes}
}

// leftovers are scripts that try to leave something for the next run: state in the interpreter, in memory, in
// the instance's globals and memory size, in WASI, in the clock, or an instance the host would reuse half-way.
var leftovers = map[string]struct {
	script string
	opts   *RunOptions
}{
	"globals":          {script: "globalThis.leaked = 1; var leakedVar = 2; function leakedFn() {}; let leakedLet = 3"},
	"prototypes":       {script: "Object.prototype.leaked = 1; Array.prototype.sort = () => 'no'; String.prototype.toUpperCase = null; delete Promise.prototype.then"},
	"natives":          {script: "JSON.stringify = () => 'x'; Math.max = () => 0; Object.defineProperty(globalThis, 'std', {value: 1}); Array.isArray = undefined"},
	"frozen builtins":  {script: "Object.freeze(Object.prototype); Object.freeze(globalThis); Object.preventExtensions(Array.prototype)"},
	"timers":           {script: "setTimeout(() => { globalThis.fired = 1 }, 1); setInterval(() => { globalThis.fired = 2 }, 1)", opts: &RunOptions{Fuel: 2_000_000}},
	"timers and stop":  {script: "setTimeout(() => { globalThis.fired = 1 }, 0); stop()"},
	"pending jobs":     {script: "Promise.resolve().then(() => { globalThis.job = 1 }); queueMicrotask(() => { globalThis.job = 2 }); stop()"},
	"host abort":       {script: "Promise.resolve().then(() => { globalThis.job = 1 }); globalThis.leaked = 1; fail()"},
	"fuel":             {script: "globalThis.leaked = 1; for (;;) {}", opts: &RunOptions{Fuel: 1_000_000}},
	"timeout":          {script: "globalThis.leaked = 1; for (;;) {}", opts: &RunOptions{Timeout: 20 * time.Millisecond}},
	"deep recursion":   {script: "globalThis.leaked = 1; function f() { f() } f()"},
	"exception":        {script: "globalThis.leaked = 1; throw new Error('boom')"},
	"syntax error":     {script: "globalThis.leaked = 1; }"},
	"grown memory":     {script: "globalThis.leaked = new Uint8Array(8 << 20).fill(7); leaked.length"},
	"memory limit":     {script: "const a = []; for (;;) a.push(new Uint8Array(1 << 20))", opts: &RunOptions{MemoryBytes: 4 << 20}},
	"marker in memory": {script: "globalThis.leaked = 'LEFT' + 'OVER-'.repeat(3) + 'MARK'; leaked"},
	// ~0.5 MiB: it lands in the snapshot's free heap, a zero range the restore clears instead of copying.
	"marker in the headroom": {script: "globalThis.leaked = ('LEFT' + 'OVER-'.repeat(3) + 'MARK ').repeat(20000); leaked.length"},
	"close stdio":            {script: "os.close(0); os.close(1); os.close(2); std.out.close && 0; print('gone?')"},
	"unflushed stdout":       {script: "std.out.puts('half a line from the run before'); std.err.puts('and stderr')"},
	"stdio flags":            {script: "os.ttySetRaw(0); os.setReadHandler(0, () => {}); 1"},
	"files":                  {script: "String(std.open('/tmp/leak', 'w')) + String(os.open('/tmp/leak', os.O_CREAT | os.O_WRONLY))"},
	"clock":                  {script: "os.sleep(1e12); new Promise(r => setTimeout(r, 1e12))"},
	"exit":                   {script: "globalThis.leaked = 1; std.exit(3)"},
	"gc and weakrefs":        {script: "globalThis.leaked = new WeakRef({}); new FinalizationRegistry(() => { globalThis.fired = 1 }).register({}, 1); gc && gc()"},
}

// TestNoRunLeavesAnythingForTheNext: whatever a run does, the next run on the same (reused) instance sees the
// state of the snapshot: the probe computes the same value, output and fuel as on a fresh instance.
func TestNoRunLeavesAnythingForTheNext(t *testing.T) {
	e := lockedReuseEngine(t)
	drainPool(e) // start from a fresh instance
	fresh := probe(t, e)
	require.Contains(t, fresh.value, "#3001#", "the probe recursed to its full depth")
	require.Equal(t, "undefined#undefined#undefined", fresh.value[strings.LastIndex(fresh.value, "#undefined#undefined#undefined")+1:])
	require.Equal(t, "probe out\n", fresh.stdout)
	require.Equal(t, "probe err\n", fresh.stderr)

	for name, tc := range leftovers {
		t.Run(name, func(t *testing.T) {
			_, _ = e.Run(context.Background(), tc.script, tc.opts) // many end in an error: that is the point
			inst := idleInstance(e)
			if name == "grown memory" || name == "memory limit" || name == "exit" {
				assert.Nil(t, inst, "an instance whose memory grew, or that exited, is never reused")
			} else {
				require.NotNil(t, inst, "the run's instance went back to the pool")
			}
			got := probe(t, e)
			assert.Equal(t, fresh, got, "the run after %q sees exactly the snapshot's state", name)
			if inst != nil {
				assert.Greater(t, inst.runs, 1, "the probe reused the instance")
				mem, _ := inst.mod.Memory().Read(0, inst.mod.Memory().Size())
				assert.False(t, bytes.Contains(mem, []byte("LEFTOVER-OVER-OVER-MARK")), "no byte of the earlier run is left in memory")
				assert.Equal(t, e.snap.size, inst.mod.Memory().Size(), "the memory is the snapshot's size")
			}
		})
	}
}

// A reused instance computes exactly what a fresh one does, fuel included, for ordinary scripts too.
func TestReusedInstanceMatchesFresh(t *testing.T) {
	e := lockedReuseEngine(t)
	for _, script := range []string{"1 + 1", cpuScript, "JSON.stringify(Array.from({length: 1000}, (_, i) => ({i})))"} {
		drainPool(e)
		first, err := e.Run(context.Background(), script, nil)
		require.NoError(t, err)
		for range 3 {
			again, err := e.Run(context.Background(), script, nil)
			require.NoError(t, err)
			assert.Equal(t, first.Value, again.Value)
			assert.Equal(t, first.Usage.Fuel, again.Usage.Fuel, "the same fuel on a reused instance")
			assert.Equal(t, first.Usage.MemoryBytes, again.Usage.MemoryBytes)
		}
		require.NotNil(t, idleInstance(e))
		assert.Equal(t, 4, idleInstance(e).runs)
	}
}

// The pool keeps at most keep instances, and none after Close.
func TestInstancePoolBounds(t *testing.T) {
	e, err := New(context.Background(), nil)
	require.NoError(t, err)
	var wg sync.WaitGroup
	for range 3 * e.pool.keep {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := e.Run(context.Background(), "new Promise(r => setTimeout(r, 10))", nil)
			assert.NoError(t, err)
		}()
	}
	wg.Wait()
	assert.LessOrEqual(t, e.pool.size(), e.pool.keep)
	assert.Positive(t, e.pool.size())
	require.NoError(t, e.Close(context.Background()))
	assert.Zero(t, e.pool.size(), "Close closes the idle instances")
	_, err = e.Run(context.Background(), "1", nil)
	require.ErrorIs(t, err, ErrClosed)

	unmetered, err := unmeteredEngine()
	require.NoError(t, err)
	_, err = unmetered.Run(context.Background(), "1", nil)
	require.NoError(t, err)
	assert.Zero(t, unmetered.pool.size(), "the unmetered module's stack pointer cannot be reset, so it is never reused")
}

// Closing a standard stream or changing its flags is refused, so the next run on the instance still has them.
func TestStdioCannotBeClosed(t *testing.T) {
	res, err := runScript(t, "[os.close(1), os.close(2), os.close(7)].join()", nil)
	require.NoError(t, err)
	assert.Equal(t, "-58,-58,-8", res.Value, "ENOTSUP for a standard stream, EBADF for anything else")
}

// FuzzRunLeavesNothing: after any script at all, the next run sees the snapshot's state.
func FuzzRunLeavesNothing(f *testing.F) {
	for _, tc := range leftovers {
		f.Add(tc.script)
	}
	f.Fuzz(func(t *testing.T, script string) {
		e := lockedReuseEngine(t)
		drainPool(e)
		want := probe(t, e)
		_, _ = e.Run(context.Background(), script, &RunOptions{Fuel: 5_000_000, Timeout: time.Second, MemoryBytes: 16 << 20})
		got := probe(t, e)
		if got != want {
			t.Fatalf("after %q the next run saw\n%+v\nwant\n%+v", script, got, want)
		}
	})
}

// The field callStackBytes reads is where this wazero keeps an export's machine stack: a fresh export has
// wazero's initial 10 KiB, and one deep recursion grows it by megabytes.
func TestCallStackBytesReadable(t *testing.T) {
	e := lockedReuseEngine(t)
	drainPool(e)
	_, err := e.Run(context.Background(), "1", nil)
	require.NoError(t, err)
	inst := idleInstance(e)
	require.NotNil(t, inst)
	require.NotEmpty(t, inst.fns)
	for name, fn := range inst.fns {
		n := callStackBytes(fn)
		assert.Positive(t, n, "%s: wazero's stack field moved; update callStackBytes", name)
		assert.LessOrEqual(t, n, maxIdleCallStackBytes, "%s: a shallow run keeps its export", name)
	}
}

// An idle instance never keeps the machine stack a deep recursion grew: eight deep runs at once, each growing its
// export's stack to tens of MiB, leave the pool holding at most a few MiB of Go heap. Before the drop, each
// pooled instance kept its grown stack (about 50 MiB) until its next run.
func TestIdleInstancesDropGrownCallStacks(t *testing.T) {
	e, err := New(context.Background(), nil)
	require.NoError(t, err)
	defer e.Close(context.Background())
	heapAfterGC := func() uint64 {
		runtime.GC()
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		return m.HeapAlloc
	}
	const deep = "function f(n) { return n === 0 ? 0 : f(n - 1) + 1 } f(3000)"
	before := heapAfterGC()
	var wg sync.WaitGroup
	for range 2 * e.pool.keep {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res, err := e.Run(context.Background(), deep, nil)
			if assert.NoError(t, err) {
				assert.Equal(t, "3000", string(res.Value))
			}
		}()
	}
	wg.Wait()
	e.closing.Wait() // the instances the pool did not keep are closed after their runs answered
	require.Positive(t, e.pool.size(), "the deep runs' instances went back to the pool")
	grown := int64(heapAfterGC()) - int64(before)
	t.Logf("Go heap after %d deep runs with %d idle instances: %+d KiB", 2*e.pool.keep, e.pool.size(), grown>>10)
	assert.Less(t, grown, int64(8<<20), "idle instances hold their runs' grown machine stacks")
	for _, inst := range e.pool.idle {
		for name, fn := range inst.fns {
			assert.LessOrEqual(t, callStackBytes(fn), maxIdleCallStackBytes, name)
		}
	}
}

// A restore checks only the pages the kernel says are populated before clearing the snapshot's zero ranges. This
// writes behind its back, straight into an idle instance's memory (every page, a few pages, whole zero ranges,
// zero bytes that populate a page without dirtying it, bytes on the edges of ranges), restores, and compares every
// byte of memory with the snapshot: nothing any writer left may reach the next run.
func TestRestoreErasesWritesAnywhere(t *testing.T) {
	e := lockedReuseEngine(t)
	drainPool(e)
	_, err := e.Run(context.Background(), "1", nil)
	require.NoError(t, err)
	inst := idleInstance(e)
	require.NotNil(t, inst)
	if p, ok := e.buffers.(interface{ tracksPages() bool }); ok {
		require.True(t, p.tracksPages(), "the restore reads which pages are populated here")
	}
	mem := inst.mod.Memory()
	size := mem.Size()
	var zeroRanges [][2]uint32
	for _, rg := range e.snap.ranges {
		if rg.zero {
			zeroRanges = append(zeroRanges, [2]uint32{rg.from, rg.to})
		}
	}
	require.NotEmpty(t, zeroRanges)
	writes := map[string]func(){
		"every page": func() {
			for at := uint32(0); at < size; at += pageSize / 16 {
				mem.WriteByte(at+at/4096%13, 0xa5)
			}
		},
		"one byte per zero range": func() {
			for _, rg := range zeroRanges {
				mem.WriteByte(rg[0]+(rg[1]-rg[0])/2, 1)
			}
		},
		"many pages of one zero range (given back)": func() {
			rg := zeroRanges[0]
			for at := rg[0]; at < rg[1]; at += 4096 {
				mem.WriteByte(at+4095, 0x5a)
			}
		},
		"range edges": func() {
			for _, rg := range zeroRanges {
				mem.WriteByte(rg[0], 7)
				mem.WriteByte(rg[1]-1, 7)
			}
		},
		"zeros that populate pages, then a mark": func() {
			for _, rg := range zeroRanges {
				mem.WriteByte(rg[0]+4096, 0)
			}
			mem.WriteByte(zeroRanges[len(zeroRanges)-1][1]-4097, 9)
		},
		"snapshot data": func() {
			for at := uint32(0); at < size; at += 999 {
				b, _ := mem.ReadByte(at)
				mem.WriteByte(at, ^b)
			}
		},
	}
	for name, write := range writes {
		t.Run(name, func(t *testing.T) {
			write()
			require.NoError(t, e.restore(inst))
			got, ok := mem.Read(0, size)
			require.True(t, ok)
			if !bytes.Equal(got, e.snap.memory) {
				for i := range got {
					if got[i] != e.snap.memory[i] {
						t.Fatalf("byte %d is %#x after the restore, the snapshot has %#x", i, got[i], e.snap.memory[i])
					}
				}
			}
		})
	}
	// And the engine still runs from the instance.
	res, err := e.Run(context.Background(), "1 + 1", nil)
	require.NoError(t, err)
	assert.Equal(t, "2", res.Value)
}
