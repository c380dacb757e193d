package wasm

import (
	"context"
	"errors"
	"fmt"
	"math"
	goruntime "runtime"
	"strconv"
	"strings"
	"time"

	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/sys"

	"github.com/toolsearch/toolsearch/internal/textcut"
)

// RunOptions are the per-run limits. The zero value (or nil) uses the defaults.
type RunOptions struct {
	// Timeout bounds wall-clock time, also while the script waits on host functions. Zero means DefaultTimeout.
	// An earlier deadline on Run's context wins.
	Timeout time.Duration
	// Deadline, when set, is the run's wall-clock budget instead of one made from Timeout (which is then
	// ignored): the caller keeps it to Hold it, suspending the script and its clock while it waits for
	// something that is not the script's doing.
	Deadline *Deadline
	// Fuel is the deterministic budget of guest work: one unit per loop iteration of the interpreter and per call
	// where every recursion passes (a few functions and the calls through function pointers), the same count for
	// the same script on every run. Zero means DefaultFuel.
	Fuel uint64
	// MemoryBytes caps this run's linear memory; zero or more than the engine's MaxMemoryBytes means the
	// engine's cap. It must leave room for the snapshot (Engine.SnapshotBytes) or the run fails at once.
	MemoryBytes uint64
	// StdioBytes bounds what the guest may write to WASI stdout and stderr (kept in Result; the rest is
	// dropped, the host's own stdout is never reachable). Zero means DefaultStdioBytes.
	StdioBytes int
	// MaxValueBytes bounds Result.Value: a longer completion value fails the run with a LimitError of kind
	// result, before it is copied out of the guest. Zero means DefaultMaxValueBytes.
	MaxValueBytes int
}

// Usage is what a run consumed.
type Usage struct {
	Fuel        uint64        // fuel units used
	Wall        time.Duration // real time from start to end
	MemoryBytes uint64        // peak linear memory
}

// Result is the outcome of Run. It is returned (with Usage filled in) even when Run also returns an error.
type Result struct {
	// Value is String() of the script's completion value, or "" for undefined or a run ended by ErrStop.
	Value  string
	Stdout string
	Stderr string
	Usage  Usage
}

// Run evaluates script as a global script in an instance in the snapshot's state, drives its jobs and timers until nothing is left
// to do, and returns its completion value. Errors: *LimitError (errors.Is(err, context.DeadlineExceeded) for
// the deadline), *ScriptError for an exception that escaped the script, ErrExit, ErrTrap, ErrClosed, ctx's own
// error when the caller cancelled, or whatever a host function returned to abort the run.
func (e *Engine) Run(ctx context.Context, script string, opts *RunOptions) (*Result, error) {
	var o RunOptions
	if opts != nil {
		o = *opts
	}
	e.mu.RLock()
	defer e.mu.RUnlock()
	if e.closed {
		return &Result{}, ErrClosed
	}
	e.inflight.Add(1)
	defer e.inflight.Add(-1)
	r := newRun(e, ctx, o)
	defer r.close()
	if i := strings.IndexByte(script, 0); i >= 0 {
		// QuickJS reads the source as a C string: everything after a NUL would silently not run, while the
		// host, the logs and any reviewer see it.
		return r.result(""), &ScriptError{Name: "SyntaxError", Line: 1 + strings.Count(script[:i], "\n"),
			Message: "the source contains a NUL character, which JavaScript source may not; write \\0 or \\u0000 inside a string instead"}
	}
	if err := r.instantiate(&e.snap); err != nil {
		return r.result(""), err
	}
	var value string
	err := r.guard(func() error {
		var err error
		value, err = r.eval(script, r.filename)
		return err
	})
	return r.result(value), err
}

// run is the state of one Run: one instance, its clock, memory and fuel accounting. It is used only by the
// goroutine that called Run (host functions run synchronously on it), so it needs no locks.
type run struct {
	engine   *Engine
	ctx      context.Context
	cancel   context.CancelFunc
	opts     RunOptions
	deadline *Deadline
	started  time.Time

	inst         *instance
	pooled       bool // the instance goes back to the engine's pool when the run ends
	mod          api.Module
	fns          map[string]api.Function
	fuel         api.MutableGlobal
	stackPointer api.MutableGlobal
	stackLow     api.MutableGlobal
	jsContext    uint32
	filename     uint32

	fuelGranted uint64    // fuel handed to the guest so far; used = granted - current global value
	lastYield   time.Time // when the fuel hook last let other goroutines run
	procs       int32     // GOMAXPROCS when the run started
	memory      *linearMemory
	clock       virtualClock
	stdout      boundedBuffer
	stderr      boundedBuffer

	abortErr error // why the host aborted the guest; set before the abort panic
	stopped  bool  // a host function returned ErrStop

	// stacks are the parameter and result stacks of export calls, one per nesting level (a host function
	// calls exports while the export that called it is still running): Call allocated two slices per call.
	stacks [4][maxExportValues]uint64
	depth  int
}

// maxExportValues bounds the parameters and results of the exports the host calls (QJS_CreateEvalOption has
// the most: five).
const maxExportValues = 6

// abortPanic unwinds the guest from a host function. wazero turns it into an error from the outermost Call; the
// run then reports abortErr, so the classification never depends on how wazero wraps panics.
type abortPanic struct{}

func newRun(e *Engine, ctx context.Context, o RunOptions) *run {
	if o.Timeout <= 0 {
		o.Timeout = DefaultTimeout
	}
	if o.Fuel == 0 {
		o.Fuel = DefaultFuel
	}
	if o.MemoryBytes == 0 || o.MemoryBytes > e.maxMemory {
		o.MemoryBytes = e.maxMemory
	}
	if o.StdioBytes <= 0 {
		o.StdioBytes = DefaultStdioBytes
	}
	if o.MaxValueBytes <= 0 {
		o.MaxValueBytes = DefaultMaxValueBytes
	}
	r := &run{engine: e, opts: o, started: time.Now(), deadline: o.Deadline, procs: int32(goruntime.GOMAXPROCS(0))}
	if r.deadline == nil {
		r.deadline = NewDeadline(o.Timeout)
	} else {
		r.opts.Timeout = r.deadline.Budget()
	}
	var cancel context.CancelFunc
	r.ctx, cancel = r.deadline.Context(ctx)
	r.cancel = func() {
		cancel()
		if o.Deadline == nil {
			r.deadline.Stop()
		}
	}
	r.ctx = context.WithValue(r.ctx, runKey{}, r)
	r.clock = newVirtualClock(r.started)
	r.stdout.limit, r.stderr.limit = o.StdioBytes, o.StdioBytes
	r.memory = &linearMemory{limit: o.MemoryBytes} // until the run has an instance, for its Usage
	return r
}

type runKey struct{}

func (r *run) instantiate(snap *snapshot) error {
	if snap != nil && uint64(snap.size) > r.opts.MemoryBytes {
		return NewLimitError(LimitMemory, r.opts.MemoryBytes, uint64(snap.size))
	}
	var inst *instance
	if snap != nil {
		inst = r.engine.pool.get()
	}
	if inst == nil {
		var err error
		if inst, err = r.engine.newInstance(r.ctx, r.opts.MemoryBytes); err != nil {
			if r.ctx.Err() != nil {
				return r.contextError()
			}
			return fmt.Errorf("wasm: instantiate: %w", err) // the host's failure, not the guest's: no ErrTrap
		}
	}
	r.inst, r.pooled, r.mod, r.fns = inst, snap != nil, inst.mod, inst.fns
	r.fuel, r.stackPointer, r.stackLow = inst.fuel, inst.stackPointer, inst.stackLow
	inst.host.run = r
	inst.runs++
	// The memory's limits and records are the run's; the buffer is the instance's.
	inst.memory.limit, inst.memory.refused = r.opts.MemoryBytes, false
	inst.memory.peak = uint64(inst.mod.Memory().Size())
	r.memory = inst.memory
	if snap != nil {
		if err := r.engine.restore(inst); err != nil {
			return err
		}
		r.jsContext, r.filename = snap.jsContext, snap.filename
	}
	if r.engine.metered {
		r.grantFuel(0)
	}
	return nil
}

func (r *run) close() {
	if inst := r.inst; inst != nil {
		inst.host.run = nil
		if r.pooled {
			r.engine.pool.put(inst, r.engine.snap.size, &r.engine.closing)
		} else {
			inst.close()
		}
	}
	r.cancel()
}

func (r *run) result(value string) *Result {
	used := r.fuelGranted
	if r.fuel != nil {
		used = uint64(int64(r.fuelGranted) - int64(r.fuel.Get()))
	}
	return &Result{
		Value:  value,
		Stdout: r.stdout.String(),
		Stderr: r.stderr.String(),
		Usage: Usage{
			Fuel:        used,
			Wall:        time.Since(r.started),
			MemoryBytes: r.memory.peak,
		},
	}
}

// guard runs guest work and turns every way it can end into one error value.
func (r *run) guard(f func() error) (err error) {
	defer func() {
		if p := recover(); p != nil {
			if _, ok := p.(abortPanic); !ok {
				panic(p)
			}
			err = r.finish(nil)
		}
	}()
	return r.finish(f())
}

// finish classifies the end of a run. A host abort wins over whatever error wazero made of it.
func (r *run) finish(err error) error {
	switch {
	case r.abortErr != nil:
		return r.abortErr
	case r.stopped:
		return nil
	case err == nil:
		return nil
	}
	var exit *sys.ExitError
	if errors.As(err, &exit) {
		return fmt.Errorf("%w (exit code %d)", ErrExit, exit.ExitCode())
	}
	if r.ctx.Err() != nil {
		return r.contextError()
	}
	var script *ScriptError
	if errors.As(err, &script) {
		return r.classify(script)
	}
	// The stack guard marks its trap by zeroing the low-water mark (instrument.go); wazero reports exhausting
	// its own call stack as a runtime error whose type is internal to wazero.
	if r.stackLow != nil && uint32(r.stackLow.Get()) == 0 || strings.Contains(err.Error(), "stack overflow") {
		return NewLimitError(LimitStack, uint64(r.engineStackBytes()), 0)
	}
	if r.memory.refused {
		return r.memoryError()
	}
	return fmt.Errorf("%w: %w", ErrTrap, err)
}

// classify reports an exception that ended a run which hit its memory limit as that limit. Only the host's own
// record of a refused grow counts: after one, the interpreter may fail in any way (an "out of memory"
// InternalError, or a null it threw because it could not allocate the error), while an InternalError a script
// throws itself is just an exception.
func (r *run) classify(script *ScriptError) error {
	if r.memory.refused {
		return r.memoryError()
	}
	return script
}

func (r *run) memoryError() error { return NewLimitError(LimitMemory, r.memory.limit, r.memory.peak) }

// ClassifyScriptError is for host functions that receive an exception from the script (for example the rejection
// of its main promise): within a run it returns a *LimitError when the exception means the run hit a limit, and
// script otherwise. ctx must be the context the host function received.
func ClassifyScriptError(ctx context.Context, script *ScriptError) error {
	if r, _ := ctx.Value(runKey{}).(*run); r != nil {
		return r.classify(script)
	}
	return script
}

func (r *run) engineStackBytes() uint32 { return r.engine.snap.stackPointer - r.engine.snap.stackLow }

func (r *run) contextError() error {
	if errors.Is(r.ctx.Err(), context.DeadlineExceeded) {
		return r.timeoutError()
	}
	return r.ctx.Err()
}

// timeoutError reports the deadline: the budget, and the time it ran (held time does not count).
func (r *run) timeoutError() error {
	return NewLimitError(LimitTimeout, uint64(r.opts.Timeout.Milliseconds()), uint64(r.deadline.Spent().Milliseconds()))
}

// abort records why the run must stop and unwinds the guest. It never returns.
func (r *run) abort(err error) {
	if r.abortErr == nil {
		r.abortErr = err
	}
	panic(abortPanic{})
}

// checkContext suspends the guest while its deadline is held, then aborts the run once its deadline has passed
// or its caller cancelled. Checking the clock directly, not only ctx.Err(), keeps the deadline exact even when
// the timer goroutine has not run yet.
func (r *run) checkContext() {
	r.deadline.waitHeld(r.ctx)
	when, _ := r.ctx.Deadline()
	if r.ctx.Err() != nil || r.deadline.Expired() || !time.Now().Before(when) {
		if r.ctx.Err() == nil || errors.Is(r.ctx.Err(), context.DeadlineExceeded) {
			r.abort(r.timeoutError())
		}
		r.abort(r.ctx.Err())
	}
}

// yieldEvery is how often a run lets other goroutines have the processor while no more runs are in flight than
// GOMAXPROCS. Yielding at every fuel slice (~0.4 ms) cost 4-5% on CPU-bound JS.
const yieldEvery = 2 * time.Millisecond

// yield, at each fuel refill and between the pieces of a large bulk memory instruction, lets other goroutines
// have the processor. Go cannot preempt a goroutine running compiled guest code, only these calls can: with more
// runs in flight than processors, a run whose deadline has passed waits in the run queue while the others hold
// every processor until they yield, so then every call yields and the wait is a few slices; otherwise every
// yieldEvery, for the rest of the program.
func (r *run) yield() {
	if r.engine.inflight.Load() > r.procs {
		goruntime.Gosched()
	} else if now := time.Now(); now.Sub(r.lastYield) >= yieldEvery {
		r.lastYield = now
		goruntime.Gosched()
	}
}

// grantFuel is the fuel hook: account for the slice just used, check the deadline and the budget, and hand out
// the next slice (never more than what is left, so the budget is exact).
func (r *run) grantFuel(left int64) {
	used := uint64(int64(r.fuelGranted) - left)
	if r.mod != nil && r.fuelGranted > 0 {
		r.yield()
		r.checkContext()
	}
	if used > r.opts.Fuel {
		r.fuelGranted = used
		r.fuel.Set(0)
		r.abort(NewLimitError(LimitFuel, r.opts.Fuel, used))
	}
	next := min(uint64(fuelSlice), r.opts.Fuel-used)
	r.fuelGranted = used + next
	r.fuel.Set(next)
}

// jsFunctionProxy is the module's single import. QuickJS calls it for host functions; the instrumentation calls
// it with a negative argc for the fuel and stack hooks. argv comes from the guest and is untrusted: only the
// function id is used, and only if it names a registered host function.
func (e *Engine) jsFunctionProxy(ctx context.Context, mod api.Module, stack []uint64) {
	r, _ := ctx.Value(runKey{}).(*run)
	if r == nil {
		panic("wasm: jsFunctionProxy called outside a run")
	}
	argc, argv := int32(uint32(stack[2])), uint32(stack[3])
	switch argc {
	case hookFuel:
		r.grantFuel(int64(r.fuel.Get()))
		stack[0] = 0
		return
	case hookMemory:
		r.memory.refused = true
		stack[0] = 0
		return
	case hookYield:
		r.yield()
		r.checkContext()
		stack[0] = 0
		return
	}
	stack[0] = r.callHost(ctx, uint32(stack[0]), argc, argv)
}

func (r *run) callHost(ctx context.Context, jsContext uint32, argc int32, argv uint32) uint64 {
	r.checkContext()
	mem := r.mod.Memory()
	fnValue, ok := mem.ReadUint64Le(argv)
	if !ok || argc < 4 || fnValue>>32 != jsTagInt || int(uint32(fnValue)) >= len(r.engine.hostFuncs) {
		return r.throw(jsContext, "invalid host function call")
	}
	// argc comes from the guest: it may claim more values than argv has, so it is checked against the memory
	// actually there, and nothing is allocated for it.
	if end := uint64(argv) + 8*uint64(argc); end > uint64(mem.Size()) {
		return r.throw(jsContext, "invalid host function arguments")
	}
	hf := r.engine.hostFuncs[uint32(fnValue)]
	args := &Args{r: r, argv: argv + 8*4, n: int(argc) - 4}
	out, err := hf.Func(ctx, args)
	args.free()
	var jsErr *JSException
	switch {
	case err == nil && hf.NoResult:
		return jsTagUndefined << 32
	case err == nil:
		return r.newString(out)
	case errors.As(err, &jsErr):
		return r.throw(jsContext, jsErr.Message)
	case errors.Is(err, ErrStop):
		r.stopped = true
		panic(abortPanic{})
	case r.ctx.Err() != nil && errors.Is(err, r.ctx.Err()):
		// A host function that gave up because the run's context ended: report the deadline, not its echo.
		r.abort(r.contextError())
	default:
		r.abort(err)
	}
	return 0
}

// Args are the arguments of one host function call, converted with String() semantics as they are asked for
// and read from guest memory only then: Bytes tells a host function how large an argument is before String
// copies it, so a script cannot make the host allocate for an argument the function would refuse anyway. Args
// are valid only during the call.
type Args struct {
	r    *run
	argv uint32
	n    int
	strs []guestString // converted so far, by index
}

// guestString is a UTF-8 copy of a JS value's String() inside guest memory, owned by the host until freed.
type guestString struct {
	packed, addr, size uint32
	done               bool
}

// Len is the number of arguments the script passed.
func (a *Args) Len() int { return a.n }

// Bytes is the UTF-8 length of String(argument i), without copying it out of the guest. Out of range is 0.
func (a *Args) Bytes(i int) int {
	if s := a.convert(i); s != nil {
		return int(s.size)
	}
	return 0
}

// String copies String(argument i) out of the guest. Out of range is "".
func (a *Args) String(i int) string {
	s := a.convert(i)
	if s == nil || s.size == 0 {
		return ""
	}
	b, _ := a.r.mod.Memory().Read(s.addr, s.size)
	return string(b)
}

func (a *Args) convert(i int) *guestString {
	if i < 0 || i >= a.n {
		return nil
	}
	if i >= len(a.strs) {
		a.strs = append(a.strs, make([]guestString, i+1-len(a.strs))...)
	}
	s := &a.strs[i]
	if !s.done {
		s.done = true
		v, _ := a.r.mod.Memory().ReadUint64Le(a.argv + 8*uint32(i))
		s.packed, s.addr, s.size = a.r.cString(v)
	}
	return s
}

func (a *Args) free() {
	for _, s := range a.strs {
		a.r.freeCString(s.packed, s.addr)
	}
}

// call invokes a guest export. A failure inside (including an abort from a nested host call) unwinds the run.
func (r *run) call(name string, params ...uint64) uint64 {
	fn := r.fns[name]
	if fn == nil {
		if fn = r.mod.ExportedFunction(name); fn == nil {
			r.abort(fmt.Errorf("wasm: module has no export %s", name))
		}
		r.fns[name] = fn
	}
	var stack []uint64
	if r.depth < len(r.stacks) {
		stack = r.stacks[r.depth][:]
	} else {
		stack = make([]uint64, maxExportValues)
	}
	copy(stack, params)
	r.depth++
	err := fn.CallWithStack(r.ctx, stack)
	r.depth--
	if err != nil {
		if r.abortErr != nil || r.stopped {
			panic(abortPanic{})
		}
		r.abort(r.finish(err))
	}
	if len(fn.Definition().ResultTypes()) == 0 {
		return 0
	}
	return stack[0]
}

func (r *run) malloc(n uint32) uint32 { return uint32(r.call("malloc", uint64(n))) }

// putString copies s into guest memory with a terminating NUL; the caller frees it.
func (r *run) putString(s string) uint32 {
	ptr := r.malloc(uint32(len(s) + 1))
	if ptr == 0 {
		r.memory.refused = true
		r.abort(r.memoryError())
	}
	mem := r.mod.Memory()
	mem.WriteString(ptr, s)
	mem.WriteByte(ptr+uint32(len(s)), 0)
	return ptr
}

func (r *run) newString(s string) uint64 {
	ptr := r.putString(s)
	v := r.call("QJS_NewString", uint64(r.jsContext), uint64(ptr))
	r.call("free", uint64(ptr))
	return v
}

func (r *run) throw(jsContext uint32, msg string) uint64 {
	ptr := r.putString(msg)
	v := r.call("QJS_ThrowTypeError", uint64(jsContext), uint64(ptr))
	r.call("free", uint64(ptr))
	return v
}

// toStringMax converts a JS value with String() semantics, as QuickJS's JS_ToCString does, and copies at most
// limit bytes of it out of the guest (cut at a character boundary). size is the whole string's length.
func (r *run) toStringMax(v uint64, limit int) (s string, size int) {
	packed, addr, n := r.cString(v)
	view, _ := r.mod.Memory().Read(addr, n) // a view of guest memory: only the prefix is copied
	s = string(textcut.Prefix(view, limit))
	r.freeCString(packed, addr)
	return s, int(n)
}

// maxErrorTextBytes bounds each text of an exception (message, stack) the host copies out of the guest.
const maxErrorTextBytes = 16 << 10

// CutText marks a text that was cut from size bytes to the length of s, so that whoever reads it knows.
func CutText(s string, size int) string {
	if size <= len(s) {
		return s
	}
	return s + fmt.Sprintf("… (%d more bytes cut)", size-len(s))
}

// cString converts v to a UTF-8 C string inside the guest and returns where it is; the caller frees it with
// freeCString. A conversion that failed (an exception in toString, or no memory) is empty.
func (r *run) cString(v uint64) (packed, addr, size uint32) {
	packed = uint32(r.call("QJS_ToCString", uint64(r.jsContext), v))
	if packed == 0 {
		return 0, 0, 0
	}
	pl, _ := r.mod.Memory().ReadUint64Le(packed)
	addr, size = uint32(pl>>32), uint32(pl)
	if uint64(addr)+uint64(size) > uint64(r.mod.Memory().Size()) {
		size = 0 // never trust a length from guest memory beyond what is there
	}
	return packed, addr, size
}

func (r *run) freeCString(packed, addr uint32) {
	if packed == 0 {
		return
	}
	r.call("JS_FreeCString", uint64(r.jsContext), uint64(addr))
	r.call("free", uint64(packed))
}

func (r *run) property(obj uint64, name string) (string, bool) {
	ptr := r.putString(name)
	v := r.call("JS_GetPropertyStr", uint64(r.jsContext), obj, uint64(ptr))
	r.call("free", uint64(ptr))
	if v>>32 == jsTagUndefined || isException(v) {
		return "", false
	}
	s, size := r.toStringMax(v, maxErrorTextBytes)
	r.call("JS_FreeValue", uint64(r.jsContext), v)
	return CutText(s, size), true
}

// eval runs source as a global script. QJS_Eval awaits a promise result and then drives jobs and timers until
// none are left.
func (r *run) eval(source string, filename uint32) (string, error) {
	src := r.putString(source)
	opts := uint32(r.call("QJS_CreateEvalOption", uint64(src), 0, 0, uint64(filename), 0))
	if opts == 0 {
		r.memory.refused = true
		return "", r.memoryError()
	}
	v := r.call("QJS_Eval", uint64(r.jsContext), uint64(opts))
	if isException(v) {
		return "", r.exception()
	}
	if v>>32 == jsTagUndefined {
		return "", nil
	}
	s, size := r.toStringMax(v, r.opts.MaxValueBytes)
	r.call("JS_FreeValue", uint64(r.jsContext), v)
	if size > r.opts.MaxValueBytes {
		return "", NewLimitError(LimitResult, uint64(r.opts.MaxValueBytes), uint64(size))
	}
	return s, nil
}

func (r *run) exception() error {
	exc := r.call("JS_GetException", uint64(r.jsContext))
	e := &ScriptError{}
	var isError bool
	if e.Name, isError = r.property(exc, "name"); isError {
		e.Message, _ = r.property(exc, "message")
		e.Stack, _ = r.property(exc, "stack")
	} else {
		s, size := r.toStringMax(exc, maxErrorTextBytes)
		e.Message = CutText(s, size)
	}
	e.Line = LineOf(e.Stack, e.Message)
	return e
}

// LineOf finds the first "<input>:LINE" position QuickJS put in a stack trace (or, for some syntax errors, in
// the message): the innermost frame of the script itself.
func LineOf(texts ...string) int {
	const marker = ScriptFilename + ":"
	for _, t := range texts {
		if i := strings.Index(t, marker); i >= 0 {
			rest := t[i+len(marker):]
			end := strings.IndexFunc(rest, func(c rune) bool { return c < '0' || c > '9' })
			if end < 0 {
				end = len(rest)
			}
			if n, err := strconv.Atoi(rest[:end]); err == nil {
				return n
			}
		}
	}
	return 0
}

// virtualClock gives the guest a clock that starts at the real time of the run (millisecond resolution) and
// advances only virtually: a microsecond per read, and by the requested amount on sleep. Sleeps and timers
// never block, so a run's timing cannot be used to stall the host, and a script that waits on timers finishes
// as fast as its work allows.
type virtualClock struct {
	base    int64 // Unix nanoseconds
	elapsed int64
}

const clockTick = int64(time.Microsecond)

func newVirtualClock(start time.Time) virtualClock {
	return virtualClock{base: start.Truncate(time.Millisecond).UnixNano()}
}

func (c *virtualClock) advance(ns int64) int64 {
	if ns > 0 && c.elapsed < math.MaxInt64/2-ns {
		c.elapsed += ns
	}
	return c.base + c.elapsed
}

func (c *virtualClock) walltime() (int64, int32) {
	t := c.advance(clockTick)
	return t / 1e9, int32(t % 1e9)
}

func (c *virtualClock) nanotime() int64 { return c.advance(clockTick) }
func (c *virtualClock) sleep(ns int64)  { c.advance(ns) }

// boundedBuffer keeps the first limit bytes written and silently drops the rest: the guest must never see a
// write error (QuickJS would retry or misbehave), and the host must never hold unbounded output.
type boundedBuffer struct {
	limit int
	buf   []byte
}

func (b *boundedBuffer) Write(p []byte) (int, error) {
	if room := b.limit - len(b.buf); room > 0 {
		kept := textcut.Prefix(p, room)
		b.buf = append(b.buf, kept...)
		if len(kept) < len(p) {
			b.limit = len(b.buf) // full: a later, shorter write must not fill the gap a cut character left
		}
	}
	return len(p), nil
}

func (b *boundedBuffer) String() string { return string(b.buf) }
