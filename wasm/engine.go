package wasm

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	goruntime "runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
)

// Defaults for the zero values of Options and RunOptions. They are documented in one table in hostfns/doc.go,
// which is the API most users meet.
const (
	DefaultMaxMemoryBytes = 64 << 20
	DefaultStackBytes     = 1 << 20
	DefaultTimeout        = 10 * time.Second
	DefaultFuel           = 2_000_000_000
	DefaultStdioBytes     = 64 << 10
	DefaultMaxValueBytes  = 1 << 20

	// fuelSlice is how much fuel the guest gets between host checks: ~0.4 ms of QuickJS at ~170 M units/s, so a
	// runaway loop overshoots its deadline by about that much, and the host hook costs well under 1%.
	fuelSlice = 1 << 16
	// stackReserve keeps the low-water mark a little above the bottom of the stack block, so the guard trips
	// before a frame could touch the allocator's bookkeeping just below it.
	stackReserve = 256
	pageSize     = 65536
	// snapshotHeadroom is how much free heap the snapshot keeps for runs (at most an eighth of the memory cap).
	// A run that needs more grows the memory, and its instance cannot be reused; a cold run of the hostfns
	// surface needs one page, a search-describe-call round trip a few. Restoring it costs next to nothing: it is
	// zero in the snapshot, and only the pages a run touched are given back.
	snapshotHeadroom = 1 << 20
)

// Options configure an Engine. The zero value (or a nil *Options) is a working default.
type Options struct {
	// MaxMemoryBytes caps the linear memory of every instance (wazero's page limit); a run may ask for less with
	// RunOptions.MemoryBytes. Zero means DefaultMaxMemoryBytes (64 MiB).
	MaxMemoryBytes uint64
	// StackBytes is the size of the C shadow stack the interpreter recurses on. The module's own stack is only
	// ~64 KiB and unguarded; the engine moves it into a block of this size with a guard. Zero means 1 MiB
	// (about 3,600 JS frames, JSON.parse nested 65,000 deep; TestDocumentedStackDepths keeps these figures true).
	StackBytes uint32
	// CompilationCacheDir, when set, keeps compiled machine code on disk so later processes start in ~0.25 s
	// instead of ~1.5 s. Empty means an in-memory cache private to this engine.
	CompilationCacheDir string
	// HostFunctions are installed as globals (by Name) before Prelude runs.
	HostFunctions []HostFunction
	// Prelude is evaluated once per engine, before the snapshot every run starts from, so its cost is paid once.
	Prelude string
}

// HostFunction is a synchronous Go function callable from JavaScript. Its arguments stay in guest memory until
// it asks for them (Args), so it can check their sizes before anything is copied into the host. The result
// becomes a JS string. Returning a *JSException throws it in the script; returning ErrStop ends the run
// successfully; any other error aborts the run and is returned by Run. Func runs on the goroutine that called Run
// and receives Run's context (with its deadline), so it can find per-run state there.
type HostFunction struct {
	Name string
	Func func(ctx context.Context, args *Args) (string, error)
	// NoResult makes the call's value undefined whatever Func returns, and spares the host making a JS string
	// of it (three calls into the guest).
	NoResult bool
}

// Engine owns one wazero runtime and the instrumented, compiled QuickJS module, plus a memory snapshot of an
// initialised interpreter. It is safe for concurrent use: every Run starts from the snapshot (in a fresh instance
// or a used one reset to it), so nothing one run defines is visible to the next.
type Engine struct {
	runtime   wazero.Runtime
	compiled  wazero.CompiledModule
	hostFuncs []HostFunction
	maxMemory uint64
	metered   bool
	snap      snapshot
	buffers   bufferPool   // linear-memory buffers, reused across runs
	pool      instancePool // idle instances, reset to the snapshot by the next run (metered engines only)

	mu     sync.RWMutex // held for reading by each Run, for writing by Close
	closed bool

	// inflight counts the runs under way: with more of them than GOMAXPROCS, a run yields at every fuel refill.
	inflight atomic.Int32
	// closing counts instances being closed after their run answered (see run.close); Close waits for them.
	closing sync.WaitGroup
}

// snapshot is the state of an instance right after New_QJS, the host functions and the prelude: restoring it
// costs a memcpy instead of ~1.5 ms of interpreter start-up. It is valid because the walker rejects every table
// instruction, so the table (and its element segments) is identical in every instance.
type snapshot struct {
	memory       []byte // all of it, headroom included
	size         uint32 // len(memory)
	ranges       []snapshotRange
	zeroRanges   [][2]uint64 // the zero ones among ranges, as the buffer pool clears them (all at once)
	stackPointer uint32
	stackLow     uint32
	jsContext    uint32
	filename     uint32 // ScriptFilename in guest memory
}

// snapshotRange is a part of the snapshot that a restore copies, or one that is zero, which it clears instead:
// most of the snapshot is zero (the 1 MiB stack block below its top, the headroom), and clearing gives a page
// back to the OS unless the last run touched it, where copying it would write every byte.
type snapshotRange struct {
	from, to uint32
	zero     bool
}

// Restores work in 4 KiB pages (the usual OS page); a zero run shorter than minZeroPages is copied with its
// neighbours, since a copy of a few pages costs less than the system call that would give them back.
const (
	snapshotPage = 4096
	minZeroPages = 8
)

func snapshotRanges(memory []byte) []snapshotRange {
	var ranges []snapshotRange
	add := func(from, to int, zero bool) {
		if n := len(ranges); n > 0 && ranges[n-1].zero == zero {
			ranges[n-1].to = uint32(to)
			return
		}
		ranges = append(ranges, snapshotRange{uint32(from), uint32(to), zero})
	}
	for at := 0; at < len(memory); {
		end := at
		for end < len(memory) && isZero(memory[end:min(end+snapshotPage, len(memory))]) {
			end += snapshotPage
		}
		end = min(end, len(memory))
		if end-at >= minZeroPages*snapshotPage {
			add(at, end, true)
			at = end
			continue
		}
		if end == at {
			end = min(at+snapshotPage, len(memory))
		}
		add(at, end, false)
		at = end
	}
	return ranges
}

func isZero(b []byte) bool {
	for _, c := range b {
		if c != 0 {
			return false
		}
	}
	return true
}

// New compiles the module and builds the starting snapshot. It returns an error wrapping ErrStartup when the
// sandbox cannot run on this host; callers fall back to a mode without code execution.
func New(ctx context.Context, opts *Options) (*Engine, error) {
	return newEngine(ctx, opts, true)
}

// newEngine with metered=false runs the module as shipped: no fuel, no stack guard. Only tests and benchmarks use
// it, to prove the instrumented module computes the same results and to measure what metering costs.
func newEngine(ctx context.Context, opts *Options, metered bool) (*Engine, error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.MaxMemoryBytes == 0 {
		o.MaxMemoryBytes = DefaultMaxMemoryBytes
	}
	if o.StackBytes == 0 {
		o.StackBytes = DefaultStackBytes
	}
	maxPages := o.MaxMemoryBytes / pageSize
	if maxPages < 16 || maxPages > 65536 {
		return nil, fmt.Errorf("%w: MaxMemoryBytes must be between 1 MiB and 4 GiB, got %d", ErrStartup, o.MaxMemoryBytes)
	}
	if uint64(o.StackBytes) >= o.MaxMemoryBytes/2 || o.StackBytes < 64<<10 {
		return nil, fmt.Errorf("%w: StackBytes %d must be at least 64 KiB and under half of MaxMemoryBytes", ErrStartup, o.StackBytes)
	}
	names := map[string]bool{}
	for _, hf := range o.HostFunctions {
		if hf.Name == "" || hf.Func == nil || names[hf.Name] {
			return nil, fmt.Errorf("%w: host functions need a unique name and a func (%q)", ErrStartup, hf.Name)
		}
		names[hf.Name] = true
	}

	sum := sha256.Sum256(quickJSModule)
	if hex.EncodeToString(sum[:]) != QuickJSModuleSHA256 {
		return nil, fmt.Errorf("%w: embedded QuickJS module does not match the pinned SHA-256", ErrStartup)
	}
	module := quickJSModule
	if metered {
		var err error
		if module, _, err = instrument(quickJSModule); err != nil {
			return nil, fmt.Errorf("%w: %w", ErrStartup, err)
		}
	}

	cfg := wazero.NewRuntimeConfig().WithMemoryLimitPages(uint32(maxPages)).WithDebugInfoEnabled(false)
	if o.CompilationCacheDir != "" {
		cache, err := wazero.NewCompilationCacheWithDir(o.CompilationCacheDir)
		if err != nil {
			return nil, fmt.Errorf("%w: compilation cache: %w", ErrStartup, err)
		}
		cfg = cfg.WithCompilationCache(cache)
	}
	e := &Engine{
		runtime:   wazero.NewRuntimeWithConfig(ctx, cfg),
		hostFuncs: o.HostFunctions,
		maxMemory: maxPages * pageSize,
		metered:   metered,
		buffers:   newBufferPool(maxPages * pageSize),
	}
	if metered {
		e.pool.keep = 2 * goruntime.GOMAXPROCS(0)
	}
	if err := e.start(ctx, module, o); err != nil {
		_ = e.runtime.Close(context.Background())
		e.buffers.close()
		return nil, fmt.Errorf("%w: %w", ErrStartup, err)
	}
	return e, nil
}

func (e *Engine) start(ctx context.Context, module []byte, o Options) error {
	if err := instantiateWASI(ctx, e.runtime); err != nil {
		return err
	}
	i32, i64 := api.ValueTypeI32, api.ValueTypeI64
	_, err := e.runtime.NewHostModuleBuilder("env").
		NewFunctionBuilder().
		WithGoModuleFunction(api.GoModuleFunc(e.jsFunctionProxy), []api.ValueType{i32, i64, i32, i32}, []api.ValueType{i64}).
		Export("jsFunctionProxy").
		Instantiate(ctx)
	if err != nil {
		return err
	}
	if e.compiled, err = e.runtime.CompileModule(ctx, module); err != nil {
		return err
	}
	return e.takeSnapshot(ctx, o)
}

// takeSnapshot initialises one instance the slow way and keeps its memory and globals.
func (e *Engine) takeSnapshot(ctx context.Context, o Options) error {
	r := newRun(e, ctx, RunOptions{Timeout: time.Minute, Fuel: 1 << 40})
	defer r.close()
	if err := r.instantiate(nil); err != nil {
		return err
	}
	return r.guard(func() error {
		if e.metered {
			stack := r.malloc(o.StackBytes)
			if stack == 0 {
				return errors.New("cannot allocate the interpreter stack")
			}
			// The stack grows down: start at the (16-byte aligned) top of the block, fail below its bottom.
			r.stackPointer.Set(api.EncodeI32(int32((stack + o.StackBytes) &^ 15)))
			r.stackLow.Set(api.EncodeI32(int32(stack + stackReserve)))
		}

		// No QuickJS heap limit (0): in this build its accounting counts 8 bytes per allocation whatever the size
		// (WASI has no malloc_usable_size), so it only ever refused single huge allocations, and what it threw
		// could not be told apart from a script's own InternalError. Every allocation ends in a memory.grow, whose
		// refusal the instrumentation reports, so the page cap is the one memory limit and it is observed exactly.
		qjs := r.call("New_QJS", 0, 0, 0, 0)
		if uint32(qjs) == 0 {
			return errors.New("New_QJS failed")
		}
		r.jsContext = uint32(r.call("QJS_GetContext", qjs))
		global := r.call("JS_GetGlobalObject", uint64(r.jsContext))
		for id, hf := range e.hostFuncs {
			fn := r.call("QJS_CreateFunctionProxy", uint64(r.jsContext), uint64(id), 0, 0)
			if isException(fn) {
				return errors.New("cannot create host function " + hf.Name)
			}
			name := r.putString(hf.Name)
			if int32(r.call("JS_SetPropertyStr", uint64(r.jsContext), global, uint64(name), fn)) < 0 {
				return errors.New("cannot install host function " + hf.Name)
			}
			r.call("free", uint64(name))
		}
		r.call("JS_FreeValue", uint64(r.jsContext), global)
		r.filename = r.putString(ScriptFilename)
		if o.Prelude != "" {
			if _, err := r.eval(o.Prelude, r.putString(preludeFilename)); err != nil {
				return fmt.Errorf("prelude: %w", err)
			}
		}
		// Free heap in the snapshot: a run that allocates less than this does not grow the memory, so its
		// instance can be reused (a grown one cannot: wasm memory never shrinks).
		if headroom := min(snapshotHeadroom, uint32(e.maxMemory/8)); headroom > 0 {
			if p := r.malloc(headroom); p != 0 {
				r.call("free", uint64(p))
			}
		}
		mem := r.mod.Memory()
		view, _ := mem.Read(0, mem.Size())
		e.snap = snapshot{memory: append([]byte(nil), view...), size: mem.Size(), jsContext: r.jsContext, filename: r.filename}
		e.snap.ranges = snapshotRanges(e.snap.memory)
		for _, rg := range e.snap.ranges {
			if rg.zero {
				e.snap.zeroRanges = append(e.snap.zeroRanges, [2]uint64{uint64(rg.from), uint64(rg.to)})
			}
		}
		if e.metered {
			e.snap.stackPointer = uint32(r.stackPointer.Get())
			e.snap.stackLow = uint32(r.stackLow.Get())
		}
		return nil
	})
}

// Close releases the runtime. It waits for runs in progress to finish (they are bounded by their deadlines) or
// for ctx to end, whichever comes first.
func (e *Engine) Close(ctx context.Context) error {
	done := make(chan struct{})
	go func() {
		e.mu.Lock()
		e.closed = true
		e.mu.Unlock()
		close(done)
	}()
	select {
	case <-done:
		e.closing.Wait() // no run is left to add to it
	case <-ctx.Done():
	}
	err := e.runtime.Close(ctx)
	e.pool.close()
	e.buffers.close()
	return err
}

// SnapshotBytes is the size of the linear memory each run starts with: the snapshot's contents and the free heap
// kept after them.
func (e *Engine) SnapshotBytes() int { return int(e.snap.size) }

func isException(v uint64) bool { return v>>32 == jsTagException }

// ScriptFilename is the file name QuickJS gives the script passed to Run, in stack traces ("at <input>:3:5")
// and ScriptError.Line. The prelude is "<prelude>", so its frames never pass for the script's.
const (
	ScriptFilename  = "<input>"
	preludeFilename = "<prelude>"
)

// JSValue tags (high 32 bits of the NaN-boxed i64) the host needs to recognise.
const (
	jsTagInt       = 0
	jsTagUndefined = 3
	jsTagException = 6
)
