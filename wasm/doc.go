// Package wasm runs JavaScript in QuickJS-NG compiled to WASI, inside wazero, in-process, with nothing of the
// host granted. It is the only package of this module that imports wazero, and it knows nothing about tools.
//
// An Engine compiles the module once (goroutine-safe) and starts every script from a memory snapshot of an
// initialised interpreter, so nothing a run defines survives into the next. A finished instance is kept and reset
// to the snapshot (memory, globals; tables and segments cannot change) for a later run instead of instantiating
// the module again; one whose memory grew, or that exited, is dropped (instance.go says why the reset is
// complete), and an export whose machine stack a deep recursion grew is forgotten, so an idle instance holds
// no more than a fresh one. At load time the module is rewritten (see instrument.go) so that:
//
//   - every loop header, and the calls every recursion passes, burn fuel, bulk memory instructions burn it by
//     their length, and the host checks the deadline and the budget every fuelSlice units: a runaway script
//     stops within milliseconds of its deadline whatever instructions it uses, and the same script uses the
//     same fuel on every run;
//   - every refused memory.grow is reported to the host, so running out of memory is recognised exactly;
//   - the qjs:bjson module (QuickJS bytecode, which crashes the interpreter when mutated) does not exist;
//   - every write of the C stack pointer goes through a guard, and the stack lives in a 1 MiB block, so deep
//     recursion ends as a clean stack error instead of corrupting the interpreter;
//   - no instruction can change a table or a data segment (memory.init, data.drop and every table instruction
//     are refused), which is what makes memory and globals the whole state of an instance.
//
// The instance gets WASI without preopened directories, environment or arguments (and standard streams that
// cannot be closed), stdout and stderr into the run's bounded buffers, and a virtual clock that starts at the real time of the run and advances virtually: sleeps
// and timers never block. Linear memory is capped per run through a custom allocator (on Linux in reserved
// address space, so growing never copies). Host functions read their arguments out of the guest only after
// checking their sizes (Args), and exception texts and the completion value the host copies are bounded.
//
// Errors are typed: *LimitError (timeout, fuel, memory, stack; errors.Is(err, context.DeadlineExceeded) holds
// for the deadline), *ScriptError for exceptions and syntax errors, and the sentinels ErrExit, ErrTrap, ErrClosed
// and ErrStartup. The host process survives every script.
//
// Most users want package hostfns, which adds the console and openclaw.tools surface on top of this one.
package wasm
