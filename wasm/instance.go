package wasm

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/experimental"
	"github.com/tetratelabs/wazero/imports/wasi_snapshot_preview1"
	"github.com/tetratelabs/wazero/sys"
)

// instance is one instantiated module with what the host keeps of it: the exported functions and globals it
// looked up (once per instance, not once per run: the lookups were an eighth of a cold run), its linear memory,
// and the binding through which its WASI functions reach the run that currently owns it.
//
// A metered engine keeps instances that finished a run and resets them to the snapshot for the next one, instead
// of instantiating the module again: wazero rebuilds an instance's ~1.7k-entry function table on every
// instantiation, and that was most of a cold run. The reset is complete because everything a run can change is
// either restored or cannot change at all:
//
//   - linear memory: every byte up to the snapshot's size is overwritten with the snapshot, and an instance whose
//     memory grew past the snapshot is never reused (wasm memory cannot shrink, and a larger memory.size is
//     visible to the guest's allocator);
//   - globals: the module's only mutable globals are the stack pointer and the two the instrumentation adds
//     (fuel, stack low-water mark); all three are exported and set on every reset, and the instrumenter
//     refuses a module with any other mutable global (onlyStackPointerMutable);
//   - tables, element and data segments: the walker refuses every table instruction, memory.init and data.drop,
//     so no guest code can change them (the table is not exported, and the host never touches it);
//   - WASI: stdout, stderr and the clock go through instanceHost to the current run; the only calls that could
//     change the descriptor table (fd_close, fd_fdstat_set_flags) are replaced by versions that refuse, there
//     are no preopened directories to open anything under, and an instance closed by proc_exit is never reused;
//   - the host's side (fuel granted, the memory peak and refusal, stdio buffers, the clock) belongs to the run.
//
// TestNoRunLeavesAnythingForTheNext and FuzzRunLeavesNothing try to leave state behind and look for it.
type instance struct {
	mod          api.Module
	fns          map[string]api.Function
	fuel         api.MutableGlobal // nil on the unmetered engine
	stackPointer api.MutableGlobal
	stackLow     api.MutableGlobal
	memory       *linearMemory
	host         *instanceHost
	runs         int // how many runs it served; tests use it to prove reuse happened
}

// instanceHost is what an instance's WASI functions see of the run that owns the instance. It is set for the
// length of one run and cleared after, so a stray write between runs goes nowhere.
type instanceHost struct {
	run *run
}

func (h *instanceHost) walltime() (int64, int32) {
	if h.run == nil {
		return 0, 0
	}
	return h.run.clock.walltime()
}

func (h *instanceHost) nanotime() int64 {
	if h.run == nil {
		return 0
	}
	return h.run.clock.nanotime()
}

func (h *instanceHost) sleep(ns int64) {
	if h.run != nil {
		h.run.clock.sleep(ns)
	}
}

// stdioWriter is the instance's stdout or stderr: the current run's bounded buffer.
type stdioWriter struct {
	host   *instanceHost
	stderr bool
}

func (w stdioWriter) Write(p []byte) (int, error) {
	r := w.host.run
	switch {
	case r == nil:
		return len(p), nil
	case w.stderr:
		return r.stderr.Write(p)
	default:
		return r.stdout.Write(p)
	}
}

// WASI errno values of the replaced functions.
const (
	wasiErrnoBadf   = 8
	wasiErrnoNotsup = 58
)

// instantiateWASI installs wazero's WASI with the two functions that could change an instance's descriptor
// table replaced: closing a standard stream or changing its flags is refused (nothing else can be open, as
// there are no preopened directories), so the next run that reuses the instance finds stdio as it was.
func instantiateWASI(ctx context.Context, r wazero.Runtime) error {
	b := r.NewHostModuleBuilder(wasi_snapshot_preview1.ModuleName)
	wasi_snapshot_preview1.NewFunctionExporter().ExportFunctions(b)
	i32 := api.ValueTypeI32
	b.NewFunctionBuilder().
		WithGoModuleFunction(api.GoModuleFunc(func(_ context.Context, _ api.Module, stack []uint64) {
			stack[0] = stdioErrno(uint32(stack[0]))
		}), []api.ValueType{i32}, []api.ValueType{i32}).
		Export("fd_close")
	b.NewFunctionBuilder().
		WithGoModuleFunction(api.GoModuleFunc(func(_ context.Context, _ api.Module, stack []uint64) {
			if errno := stdioErrno(uint32(stack[0])); errno != wasiErrnoNotsup || uint32(stack[1]) != 0 {
				stack[0] = errno
				return
			}
			stack[0] = 0 // clearing the flags of a standard stream, which has none: nothing to do
		}), []api.ValueType{i32, i32}, []api.ValueType{i32}).
		Export("fd_fdstat_set_flags")
	_, err := b.Instantiate(ctx)
	return err
}

// stdioErrno is the answer to changing descriptor fd: not supported for a standard stream, bad for any other
// (none is open).
func stdioErrno(fd uint32) uint64 {
	if fd <= 2 {
		return wasiErrnoNotsup
	}
	return wasiErrnoBadf
}

// newInstance instantiates the compiled module with WASI bound to a fresh instanceHost.
func (e *Engine) newInstance(ctx context.Context, memoryLimit uint64) (*instance, error) {
	host := &instanceHost{}
	mem := &linearMemory{limit: memoryLimit, pool: e.buffers, snapshotBytes: uint64(e.snap.size)}
	cfg := wazero.NewModuleConfig().
		WithName("").
		WithStartFunctions(). // a WASI command: never run _start
		WithStdout(stdioWriter{host: host}).
		WithStderr(stdioWriter{host: host, stderr: true}).
		WithWalltime(host.walltime, sys.ClockResolution(time.Millisecond)).
		WithNanotime(host.nanotime, sys.ClockResolution(time.Microsecond)).
		WithNanosleep(host.sleep)
	mod, err := e.runtime.InstantiateModule(experimental.WithMemoryAllocator(ctx, mem), e.compiled, cfg)
	if err != nil {
		mem.release()
		return nil, err
	}
	inst := &instance{mod: mod, fns: map[string]api.Function{}, memory: mem, host: host}
	if e.metered {
		inst.fuel = mod.ExportedGlobal(exportFuel).(api.MutableGlobal)
		inst.stackPointer = mod.ExportedGlobal(exportStackPoint).(api.MutableGlobal)
		inst.stackLow = mod.ExportedGlobal(exportStackLow).(api.MutableGlobal)
	}
	return inst, nil
}

// close ends the instance for good. Only the run that owns it (or the pool, for an idle one) calls it, after the
// guest stopped, so its memory can be recycled.
func (inst *instance) close() {
	_ = inst.mod.Close(context.Background())
	inst.memory.release()
}

// restore puts an instance in the state of the snapshot: memory and globals. Fresh and reused instances go
// through the same code, so a reused one cannot differ from a fresh one by a step only one of them takes.
func (e *Engine) restore(inst *instance) error {
	snap := &e.snap
	mem := inst.mod.Memory()
	if need := snap.size; need > mem.Size() {
		if _, ok := mem.Grow((need - mem.Size() + pageSize - 1) / pageSize); !ok {
			return NewLimitError(LimitMemory, inst.memory.limit, uint64(need))
		}
	}
	if mem.Size() != snap.size {
		// A fresh instance whose initial memory is larger than the snapshot, or a grown one that should never
		// have been reused: either way the guest would see memory the snapshot does not describe.
		return fmt.Errorf("wasm: instance memory is %d bytes, the snapshot %d", mem.Size(), snap.size)
	}
	for _, rg := range snap.ranges {
		if !rg.zero {
			mem.Write(rg.from, snap.memory[rg.from:rg.to])
		}
	}
	inst.memory.zero(snap.zeroRanges...)
	if e.metered {
		// At rest (between exports) the stack pointer is back at the top of the stack; a run that was aborted
		// left it wherever the guest was, so it is always set. The unmetered module, whose stack pointer is not
		// exported, is never reused.
		inst.stackPointer.Set(api.EncodeI32(int32(snap.stackPointer)))
		inst.stackLow.Set(api.EncodeI32(int32(snap.stackLow)))
		inst.fuel.Set(0)
	}
	return nil
}

// instancePool keeps idle instances of a metered engine for reuse, at most keep of them.
type instancePool struct {
	keep int

	mu     sync.Mutex
	idle   []*instance
	closed bool
}

func (p *instancePool) get() *instance {
	p.mu.Lock()
	defer p.mu.Unlock()
	n := len(p.idle)
	if n == 0 {
		return nil
	}
	inst := p.idle[n-1]
	p.idle = p.idle[:n-1]
	return inst
}

// put keeps inst for a later run if it can be reset completely, and closes it otherwise.
//
// An instance whose memory grew is closed on another goroutine, counted in closing: giving back tens of megabytes
// of pages a runaway touched takes milliseconds of CPU, which on a busy machine became 80-90 ms that the run's
// answer waited for after its deadline. One the pool has no room for is small and closes at once.
func (p *instancePool) put(inst *instance, snapshotSize uint32, closing *sync.WaitGroup) {
	reusable := !inst.mod.IsClosed() && inst.mod.Memory().Size() == snapshotSize
	if reusable {
		p.mu.Lock()
		if !p.closed && len(p.idle) < p.keep {
			inst.dropGrownCallStacks() // only for an instance that is kept; before it is visible to get
			p.idle = append(p.idle, inst)
			inst = nil
		}
		p.mu.Unlock()
	}
	switch {
	case inst == nil:
	case reusable:
		inst.close()
	default:
		closing.Go(inst.close)
	}
}

// close closes the idle instances; instances in use are closed when their runs put them back.
func (p *instancePool) close() {
	p.mu.Lock()
	idle := p.idle
	p.idle, p.closed = nil, true
	p.mu.Unlock()
	for _, inst := range idle {
		inst.close()
	}
}

// size is how many instances are idle.
func (p *instancePool) size() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.idle)
}
