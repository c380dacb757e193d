package hostfns

import (
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/toolsearch/toolsearch/internal/jsprep"
	"github.com/toolsearch/toolsearch/internal/textcut"
	"github.com/toolsearch/toolsearch/wasm"
)

//go:embed prelude.js
var prelude string

// Defaults for the zero values of RunOptions (see the table in doc.go).
const (
	DefaultMaxOutputBytes  = 64 << 10
	DefaultMaxResultBytes  = 1 << 20
	DefaultMaxSourceBytes  = 256 << 10
	DefaultMaxCalls        = 100
	DefaultMaxPayloadBytes = 1 << 20
	// DefaultMaxBridgeBytes is the bridge budget of a run whose timeout is at least two seconds; a shorter run
	// gets 4 MiB per second of timeout, so that the host's work on the bytes (decoding, validating, encoding:
	// about 12 ns a byte) stays a small share of the time the script may take.
	DefaultMaxBridgeBytes = 8 << 20
	// DefaultHostTimeShare is the share of the timeout that searches and describes may take together when
	// RunOptions.MaxHostTime is zero. Everything else a script makes the host do outside its fuel (copying and
	// decoding requests, encoding results, the calls' own bookkeeping) is bounded by MaxCalls and MaxBridgeBytes,
	// and together they stay within a tenth of the timeout.
	DefaultHostTimeShare = 5 // per cent

	// callGrace is how long a run that was cut short waits for bridge calls to notice their cancelled context
	// before it returns. A Bridge that ignores its context is not waited for beyond this: the run's answer must
	// not be late because of it.
	callGrace = 20 * time.Millisecond
)

// Bridge is what scripts reach through openclaw.tools; the runtime implements it. Each method gets a context that
// carries the run's deadline and is cancelled when the run ends, and is called from several goroutines at once
// when a script starts calls concurrently, so implementations must be safe for concurrent use. JSON goes in and
// out. An error rejects the script's promise with the error's text; it does not end the run.
//
// Search and Describe are host work the script causes outside its fuel: the sandbox runs them one at a time per
// run and stops accepting them once they have taken RunOptions.MaxHostTime together, so they are expected to be
// in-process lookups, not I/O. Their time is the CPU time of the thread the method is called on (where the
// platform measures one: Linux; wall time elsewhere): time spent waiting for a core, or blocked, is not the
// script's, and work the method hands to other goroutines is not counted.
//
// Each method gets the request as the script built it, unchecked, so that one place (the runtime) decides what a
// malformed request means: search {"query": ..., "limit": ...} or {"queries": [...], ...}, describe {"id": ...},
// call {"id": ..., "args": ...} (no "args" when the script passed none). The values are whatever the script
// passed: an id may be an object, args a string.
type Bridge interface {
	Search(ctx context.Context, request json.RawMessage) (json.RawMessage, error)
	Describe(ctx context.Context, request json.RawMessage) (json.RawMessage, error)
	Call(ctx context.Context, request json.RawMessage) (json.RawMessage, error)
}

// Suspend pauses the script whose bridge call ctx belongs to: its deadline stops running down and its code
// stops running (within a fuel slice) until resume is called. It is for waits that are not the script's doing,
// such as a person approving a tool call; the caller bounds the wait itself. Outside a bridge call it does
// nothing. resume is idempotent.
// A search or describe waiting this way spends none of RunOptions.MaxHostTime either: that budget counts the
// CPU time of the lookup's own thread, and a wait uses none.
func Suspend(ctx context.Context) (resume func()) {
	if d, ok := ctx.Value(deadlineKey{}).(*wasm.Deadline); ok {
		return d.Hold()
	}
	return func() {}
}

type deadlineKey struct{}

// Options configure a Sandbox. A nil *Options is valid.
type Options struct {
	// Engine is passed to wasm.New; its HostFunctions and Prelude must be empty (the sandbox sets them).
	Engine wasm.Options
}

// Sandbox runs model-written code with the console and openclaw.tools surface. It is safe for concurrent use;
// each Run is isolated from every other.
type Sandbox struct {
	engine *wasm.Engine
}

// New compiles the sandbox. Errors wrap wasm.ErrStartup when the sandbox cannot run on this host.
func New(ctx context.Context, opts *Options) (*Sandbox, error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	if len(o.Engine.HostFunctions) > 0 || o.Engine.Prelude != "" {
		return nil, fmt.Errorf("%w: hostfns sets the engine's host functions and prelude itself", wasm.ErrStartup)
	}
	o.Engine.Prelude = strings.ReplaceAll(prelude, "%MAXRANDOM%", strconv.Itoa(MaxRandomBytes))
	o.Engine.HostFunctions = []wasm.HostFunction{
		{Name: "__ts_log", Func: hostLog, NoResult: true},
		{Name: "__ts_start", Func: hostStart},
		{Name: "__ts_wait", Func: hostWait},
		{Name: "__ts_settle", Func: hostSettle, NoResult: true},
		{Name: "__ts_idle", Func: hostIdle, NoResult: true},
		{Name: "__ts_random", Func: hostRandom},
	}
	engine, err := wasm.New(ctx, &o.Engine)
	if err != nil {
		return nil, err
	}
	return &Sandbox{engine: engine}, nil
}

// Close releases the engine (bounded by ctx).
func (s *Sandbox) Close(ctx context.Context) error { return s.engine.Close(ctx) }

// RunOptions are per-run limits; zero fields mean the defaults in doc.go.
type RunOptions struct {
	Timeout         time.Duration
	Fuel            uint64
	MemoryBytes     uint64
	MaxOutputBytes  int // console output as the model sees it: each entry JSON-encoded, plus one byte
	MaxResultBytes  int // the JSON of the returned value; an uncaught exception's message and stack together
	MaxSourceBytes  int // the code itself
	MaxCalls        int // bridged calls (search, describe and call all count)
	MaxPayloadBytes int // each bridge request and each bridge response
	MaxBridgeBytes  int // all bridge requests and responses of the run together
	// MaxHostTime bounds the host CPU time searches and describes take together (zero: DefaultHostTimeShare of
	// the timeout; see Bridge for what counts). Tool calls are the agent's own tools and are bounded by the deadline and by MaxBridgeBytes.
	MaxHostTime time.Duration
	// RandomSeed, when non-zero, makes the run's randomness a fixed stream of it (for tests and replays): the
	// same Math.random sequence and crypto.getRandomValues bytes every time. Zero (the default) draws both from
	// the host's randomness (crypto/rand), afresh for every run, so no two runs, of one client or of many, share
	// a sequence.
	RandomSeed uint64
}

// Result is what a run produced. Run returns it even with an error, with the logs and usage up to the failure.
type Result struct {
	Value json.RawMessage // the returned value as JSON; null for undefined
	Logs  []string        // console output, one entry per call; warn and error are prefixed "[warn] ", "[error] "
	Calls int             // bridged calls started
	// Pending are the bridged calls whose outcome the script never got, because the run ended first (a timeout,
	// usually), in the order the script started them.
	Pending []CallInfo
	Usage   wasm.Usage
}

// CallInfo describes one bridged call.
type CallInfo struct {
	Op      string        // "search", "describe" or "call"
	Tool    string        // the tool id or name the script gave, for describe and call (its JSON if not a string)
	Started time.Duration // when it started, from the start of the run
	Elapsed time.Duration // how long it ran (until the run ended, for a call that was still running)
}

// Run executes code against bridge: JavaScript or TypeScript, the body of an async function (`return`, or else a
// final expression, gives the result) or one function, which is called (see the package doc). Errors:
// *wasm.LimitError (kinds timeout, fuel, memory, stack, output, result, source, calls), *wasm.ScriptError
// (syntax errors and uncaught exceptions, with line and stack), wasm.ErrExit, wasm.ErrTrap, or ctx's error. Every
// bridge call the script started has returned (or was abandoned after its context was cancelled and a short
// grace period) when Run returns, and none starts afterwards.
func (s *Sandbox) Run(ctx context.Context, code string, bridge Bridge, opts *RunOptions) (*Result, error) {
	var o RunOptions
	if opts != nil {
		o = *opts
	}
	o = o.withDefaults()
	if bridge == nil {
		return &Result{}, errors.New("hostfns: Run needs a Bridge")
	}
	if len(code) > o.MaxSourceBytes {
		return &Result{}, wasm.NewLimitError(wasm.LimitSource, uint64(o.MaxSourceBytes), uint64(len(code)))
	}

	// One deadline for the script and its bridge calls, set here so that the bridge's context carries it (and
	// Suspend can hold it).
	deadline := wasm.NewDeadline(o.Timeout)
	defer deadline.Stop()
	runCtx, cancel := deadline.Context(ctx)
	defer cancel()
	// The code becomes one call of the prelude's boot function: TypeScript stripped, the forms models write
	// turned into the body of an async function (see internal/jsprep). The wrapper's final statement is its
	// own, whatever the code does to close the function early, so the script's completion value never reaches
	// the host (MaxValueBytes below is only a backstop). Preparing is bounded by the source limit and counts
	// against the deadline.
	prep, err := jsprep.Prepare(code)
	if err != nil {
		return &Result{}, syntaxError(err)
	}
	if deadline.Expired() {
		return &Result{}, wasm.NewLimitError(wasm.LimitTimeout, uint64(o.Timeout.Milliseconds()), uint64(deadline.Spent().Milliseconds()))
	}
	if err := ctx.Err(); err != nil {
		return &Result{}, err
	}
	st := newRunState(context.WithValue(runCtx, deadlineKey{}, deadline), bridge, o)
	res, err := s.engine.Run(context.WithValue(runCtx, stateKey{}, st), prep.Source, &wasm.RunOptions{
		Deadline: deadline, Fuel: o.Fuel, MemoryBytes: o.MemoryBytes, MaxValueBytes: 64,
	})
	if prep.Unread && refusedUnrun(err, st) {
		// The fast path passed the code through unread, and the interpreter refused its syntax before
		// anything ran: read it, TypeScript perhaps, and run that. The first attempt only compiled (its cost is
		// bounded by the source limit); its fuel is reported with the second's.
		st.end()
		used := res.Usage.Fuel
		if prep, err = jsprep.Read(code); err != nil {
			return &Result{Usage: res.Usage}, syntaxError(err)
		}
		st = newRunState(context.WithValue(runCtx, deadlineKey{}, deadline), bridge, o)
		res, err = s.engine.Run(context.WithValue(runCtx, stateKey{}, st), prep.Source, &wasm.RunOptions{
			Deadline: deadline, Fuel: o.Fuel, MemoryBytes: o.MemoryBytes, MaxValueBytes: 64,
		})
		res.Usage.Fuel += used
	}
	pending := st.calls.pending() // as the run ended, before its calls' context is cancelled
	st.end()

	out := &Result{Logs: st.logs, Calls: st.calls.started(), Pending: pending, Usage: res.Usage}
	if err == nil {
		err = st.scriptErr
	}
	var script *wasm.ScriptError
	if errors.As(err, &script) {
		if script.IsSyntax() && prep.Unparsed != "" && st.scriptErr == nil {
			script.Message += " (" + prep.Unparsed + ")"
		}
		toCodePositions(script, prep)
		cutErrorText(script, o.MaxResultBytes)
	}
	if err != nil {
		return out, err
	}
	if !st.settled {
		return out, &wasm.ScriptError{Name: "Error", Message: "the code finished without settling its result: it awaited a promise that can never resolve"}
	}
	out.Value = st.value
	return out, nil
}

// syntaxError is Prepare's or Read's error as Run reports it.
func syntaxError(err error) error {
	var syn *jsprep.SyntaxError
	if errors.As(err, &syn) {
		return &wasm.ScriptError{Name: "SyntaxError", Message: syn.Message, Line: syn.Line,
			Stack: fmt.Sprintf("    at %s:%d:%d", wasm.ScriptFilename, syn.Line, syn.Column)}
	}
	return err
}

// refusedUnrun reports a syntax error of the script itself, found when the interpreter compiled it: nothing
// ran. An exception the code threw, a SyntaxError from JSON.parse included, reaches the host through the
// prelude's settle (st.scriptErr), never as the evaluation's own error, since the code runs inside an async
// function.
func refusedUnrun(err error, st *runState) bool {
	var script *wasm.ScriptError
	return errors.As(err, &script) && script.IsSyntax() && st.scriptErr == nil && !st.settled &&
		st.calls.started() == 0 && len(st.logs) == 0
}

func (o RunOptions) withDefaults() RunOptions {
	if o.Timeout <= 0 {
		o.Timeout = wasm.DefaultTimeout
	}
	if o.MaxOutputBytes <= 0 {
		o.MaxOutputBytes = DefaultMaxOutputBytes
	}
	if o.MaxResultBytes <= 0 {
		o.MaxResultBytes = DefaultMaxResultBytes
	}
	if o.MaxSourceBytes <= 0 {
		o.MaxSourceBytes = DefaultMaxSourceBytes
	}
	if o.MaxCalls <= 0 {
		o.MaxCalls = DefaultMaxCalls
	}
	if o.MaxPayloadBytes <= 0 {
		o.MaxPayloadBytes = DefaultMaxPayloadBytes
	}
	if o.MaxBridgeBytes <= 0 {
		o.MaxBridgeBytes = int(min(DefaultMaxBridgeBytes, o.Timeout.Seconds()*(4<<20)))
	}
	if o.MaxHostTime <= 0 {
		o.MaxHostTime = o.Timeout * DefaultHostTimeShare / 100
	}
	return o
}

type stateKey struct{}

// runState is one run's host side. The host functions run on the goroutine executing the guest and own the
// fields below calls; bridge calls run on their own goroutines and touch only calls, which locks itself.
type runState struct {
	opts  RunOptions
	calls *callTable

	logs        []string
	outputBytes int
	settled     bool
	value       json.RawMessage
	scriptErr   error // *wasm.ScriptError, or the *wasm.LimitError it stood for
	random      randomSource
}

func newRunState(runCtx context.Context, bridge Bridge, o RunOptions) *runState {
	return &runState{opts: o, calls: newCallTable(runCtx, bridge, o), random: newRandomSource(o.RandomSeed)}
}

// end stops the run's bridge calls: their context is cancelled, nothing new starts, and those still running get
// callGrace to return.
func (st *runState) end() {
	st.calls.close()
	st.calls.drain(callGrace)
}

func state(ctx context.Context) *runState {
	st, _ := ctx.Value(stateKey{}).(*runState)
	if st == nil {
		panic("hostfns: host function called outside a run")
	}
	return st
}

// shortArg copies a short argument (an operation or a level name); anything longer than max is refused unread.
func shortArg(args *wasm.Args, i, max int) (string, bool) {
	if args.Bytes(i) > max {
		return "", false
	}
	return args.String(i), true
}

func hostLog(ctx context.Context, args *wasm.Args) (string, error) {
	st := state(ctx)
	level, ok := shortArg(args, 0, 8)
	if args.Len() != 2 || !ok {
		return "", &wasm.JSException{Message: "console: bad call"}
	}
	prefix := ""
	switch level {
	case "warn":
		prefix = "[warn] "
	case "error":
		prefix = "[error] "
	}
	// An entry costs what it adds to the logs as the model and the CLI see them: its JSON encoding and a
	// separator, so empty entries and escape-heavy text count too. The raw length is a lower bound, checked
	// before the text is copied out of the guest.
	if st.outputBytes+len(prefix)+args.Bytes(1)+3 > st.opts.MaxOutputBytes {
		return "", wasm.NewLimitError(wasm.LimitOutput, uint64(st.opts.MaxOutputBytes), uint64(st.outputBytes+len(prefix)+args.Bytes(1)+3))
	}
	text := prefix + args.String(1)
	cost := jsonStringBytes(text) + 1
	if st.outputBytes+cost > st.opts.MaxOutputBytes {
		return "", wasm.NewLimitError(wasm.LimitOutput, uint64(st.opts.MaxOutputBytes), uint64(st.outputBytes+cost))
	}
	st.outputBytes += cost
	st.logs = append(st.logs, text)
	return "", nil
}

func hostStart(ctx context.Context, args *wasm.Args) (string, error) {
	st := state(ctx)
	op, ok := shortArg(args, 0, 16)
	if args.Len() != 2 || !ok {
		return "", &wasm.JSException{Message: "openclaw.tools: bad call"}
	}
	if op != "search" && op != "describe" && op != "call" {
		return "", &wasm.JSException{Message: "openclaw.tools: unknown operation " + strconv.Quote(op)}
	}
	// Sizes are checked before the request is copied out of the guest.
	if err := st.calls.admit(op, args.Bytes(1)); err != nil {
		return "", err
	}
	return st.calls.start(ctx, op, args.String(1))
}

// hostWait blocks until at least one started call has completed and hands back a batch of those that have, as
// JSON: [{"id": "<n>", "ok": true, "value": ...} or {"id": "<n>", "ok": false, "error": "..."}].
func hostWait(ctx context.Context, _ *wasm.Args) (string, error) {
	return state(ctx).calls.wait(ctx)
}

func hostSettle(ctx context.Context, args *wasm.Args) (string, error) {
	st := state(ctx)
	kind, ok := shortArg(args, 0, 8)
	if args.Len() != 2 || !ok || st.settled {
		return "", nil // a forged or repeated settle changes nothing
	}
	st.settled = true
	switch kind {
	case "ok":
		if size := args.Bytes(1); size > st.opts.MaxResultBytes {
			return "", wasm.NewLimitError(wasm.LimitResult, uint64(st.opts.MaxResultBytes), uint64(size))
		}
		value := json.RawMessage(args.String(1))
		if !json.Valid(value) {
			// The prelude always settles with JSON.stringify's output; anything else was forged by the script.
			st.scriptErr = &wasm.ScriptError{Name: "TypeError", Message: "the result did not come from the sandbox's own settle: it is not JSON"}
			return "", nil
		}
		st.value = value
	default:
		// The prelude cuts the message and the stack before encoding them; a larger info was forged.
		if args.Bytes(1) > 4*2*maxErrorTextChars+1024 {
			st.scriptErr = &wasm.ScriptError{Name: "Error", Message: "Uncaught exception (too large to show)"}
			return "", nil
		}
		var info struct{ Name, Message, Stack string }
		_ = json.Unmarshal([]byte(args.String(1)), &info)
		st.scriptErr = wasm.ClassifyScriptError(ctx,
			&wasm.ScriptError{Name: info.Name, Message: info.Message, Stack: info.Stack, Line: wasm.LineOf(info.Stack)})
	}
	return "", nil
}

// hostIdle ends the run once the result is known and no call is outstanding, even if the script left timers
// behind. It is scheduled after the microtask queue drains, so callbacks of the last calls have run, and only
// when the script made timers: otherwise the interpreter's loop ends by itself once nothing is left to run,
// without the unwinding a stop takes.
func hostIdle(ctx context.Context, _ *wasm.Args) (string, error) {
	st := state(ctx)
	if st.settled && st.calls.outstanding() == 0 {
		return "", wasm.ErrStop
	}
	return "", nil
}

// maxErrorTextChars is how many characters of an uncaught exception's message, and of its stack, the prelude
// passes to the host; the host cuts them again in bytes (cutErrorText).
const maxErrorTextChars = 16 << 10

// cutErrorText bounds an exception's message and stack: together they stand in for the result, so they count
// against the result limit, and neither exceeds 16 KiB (a stack that long is already unreadable).
func cutErrorText(e *wasm.ScriptError, maxResult int) {
	budget := min(maxResult, 2*maxErrorTextChars)
	e.Message = cutString(e.Message, min(budget/2, maxErrorTextChars))
	e.Stack = cutString(e.Stack, min(budget-len(e.Message), maxErrorTextChars))
}

// cutString cuts s to at most n bytes at a character boundary, marking the cut.
func cutString(s string, n int) string {
	if len(s) <= n {
		return s
	}
	const room = 32 // for the marker
	return wasm.CutText(textcut.Prefix(s, n-room), len(s))
}

// toCodePositions rewrites an exception's positions from the script that ran to the model's code and drops the
// frames that belong to the prelude and the wrapper, which mean nothing to the model.
func toCodePositions(e *wasm.ScriptError, prep *jsprep.Script) {
	const marker = wasm.ScriptFilename + ":"
	line := 0
	if e.Line > 0 {
		line, _, _ = prep.Position(e.Line, 1)
	}
	var kept []string
	for _, frame := range strings.Split(e.Stack, "\n") {
		i := strings.Index(frame, marker)
		if i < 0 {
			continue // prelude or native frames
		}
		rest := frame[i+len(marker):]
		l, n := leadingInt(rest)
		if n == 0 {
			continue
		}
		rest = rest[n:]
		c := 1
		if strings.HasPrefix(rest, ":") {
			if v, m := leadingInt(rest[1:]); m > 0 {
				c, rest = v, rest[1+m:]
			}
		}
		cl, cc, ok := prep.Position(l, c)
		if !ok {
			continue // the wrapper's own lines
		}
		if len(kept) == 0 {
			line = cl
		}
		kept = append(kept, frame[:i+len(marker)]+strconv.Itoa(cl)+":"+strconv.Itoa(cc)+rest)
	}
	e.Line = line
	e.Stack = strings.Join(kept, "\n")
}

// leadingInt reads the decimal number at the start of s and how many bytes it took.
func leadingInt(s string) (int, int) {
	end := strings.IndexFunc(s, func(c rune) bool { return c < '0' || c > '9' })
	if end < 0 {
		end = len(s)
	}
	if end == 0 || end > 9 {
		return 0, 0
	}
	v, _ := strconv.Atoi(s[:end])
	return v, end
}
