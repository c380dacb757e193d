package wasm

import (
	"context"
	"errors"
	"fmt"
)

// LimitKind names the limit a run exceeded. The string values are part of the CLI's and the runtime's JSON
// output ("kind"), so they never change once shipped.
type LimitKind string

const (
	LimitTimeout LimitKind = "timeout" // wall-clock deadline; errors.Is(err, context.DeadlineExceeded) holds
	LimitFuel    LimitKind = "fuel"    // deterministic budget of guest work
	LimitMemory  LimitKind = "memory"  // linear memory (page limit) or QuickJS's own heap limit
	LimitStack   LimitKind = "stack"   // C shadow stack or wasm call depth
	LimitOutput  LimitKind = "output"  // console output bytes
	LimitResult  LimitKind = "result"  // bytes of the JSON result
	LimitSource  LimitKind = "source"  // bytes of the script
	LimitCalls   LimitKind = "calls"   // number of bridged calls
)

// LimitError reports that a run was stopped because it exceeded a limit. Limit and Used are in the limit's own
// unit (bytes, fuel units, calls, milliseconds for the timeout); Used may be 0 where it cannot be known exactly.
type LimitError struct {
	Kind  LimitKind
	Limit uint64
	Used  uint64
	cause error // context.DeadlineExceeded for timeouts, so errors.Is works through the wrapper
}

// NewLimitError builds a LimitError for packages layered on this one (hostfns enforces output, result, source
// and call limits with the same type, so callers need one errors.As).
func NewLimitError(kind LimitKind, limit, used uint64) *LimitError {
	e := &LimitError{Kind: kind, Limit: limit, Used: used}
	if kind == LimitTimeout {
		e.cause = context.DeadlineExceeded
	}
	return e
}

func (e *LimitError) Error() string {
	switch e.Kind {
	case LimitTimeout:
		return fmt.Sprintf("script timed out after %d ms", e.Limit)
	case LimitFuel:
		return fmt.Sprintf("script ran out of fuel (budget %d units)", e.Limit)
	case LimitMemory:
		return fmt.Sprintf("script ran out of memory (limit %d bytes)", e.Limit)
	case LimitStack:
		return "script exceeded the maximum stack depth"
	case LimitOutput:
		return fmt.Sprintf("script wrote more than %d bytes of console output", e.Limit)
	case LimitResult:
		return fmt.Sprintf("script result is larger than %d bytes", e.Limit)
	case LimitSource:
		return fmt.Sprintf("script source is %d bytes, over the %d byte limit", e.Used, e.Limit)
	case LimitCalls:
		return fmt.Sprintf("script made more than %d bridged calls", e.Limit)
	}
	return fmt.Sprintf("script exceeded the %s limit", e.Kind)
}

func (e *LimitError) Unwrap() error { return e.cause }

// ScriptError is an exception that escaped the script (including syntax errors, which QuickJS reports the same
// way). Line is 1-based within the evaluated source, 0 when QuickJS gave no position.
type ScriptError struct {
	Name    string // "SyntaxError", "TypeError", "Error", ...; empty when a non-Error value was thrown
	Message string
	Line    int
	Stack   string
}

func (e *ScriptError) Error() string {
	msg := e.Message
	if e.Name != "" {
		msg = e.Name + ": " + msg
	}
	if e.Line > 0 {
		return fmt.Sprintf("%s (line %d)", msg, e.Line)
	}
	return msg
}

// IsSyntax reports whether the script failed to parse.
func (e *ScriptError) IsSyntax() bool { return e.Name == "SyntaxError" }

// Sentinel errors.
var (
	// ErrClosed is returned by Run after Close.
	ErrClosed = errors.New("wasm: engine closed")
	// ErrExit means the script ended the instance itself (std.exit / proc_exit). The host is unaffected.
	ErrExit = errors.New("wasm: script exited the sandbox")
	// ErrTrap means the guest trapped for a reason other than a limit: the interpreter crashed on what the
	// script did (an interpreter bug, not a script error). The instance is discarded; the engine stays usable.
	ErrTrap = errors.New("wasm: sandbox trapped")
	// ErrStartup means the engine could not compile or initialise the module on this host.
	ErrStartup = errors.New("wasm: sandbox could not start")
)

// JSException is returned by a HostFunction to throw an Error with Message inside the script, where it can be
// caught. Any other error from a host function aborts the run.
type JSException struct {
	Message string
}

func (e *JSException) Error() string { return e.Message }

// ErrStop, returned by a HostFunction, ends the run successfully at once (used when the script's result is
// known and nothing is left to wait for, even if the script left timers behind).
var ErrStop = errors.New("wasm: run stopped by the host")
