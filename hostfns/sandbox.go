package hostfns

import (
	"bytes"
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

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

	// callGrace is how long a run that was cut short waits for bridge calls to notice their cancelled context.
	// A Bridge that ignores its context is not waited for beyond this.
	callGrace = 250 * time.Millisecond
)

// Bridge is what scripts reach through openclaw.tools; the runtime implements it. Each method gets the run's
// context (cancelled when the run ends, with the run's deadline) and is called from several goroutines at once
// when a script starts calls concurrently, so implementations must be safe for concurrent use. JSON goes in and
// out. An error rejects the script's promise with the error's text; it does not end the run.
type Bridge interface {
	// Search gets the request as the script gave it: {"query": "...", "limit": N} or {"queries": [...], ...}.
	Search(ctx context.Context, request json.RawMessage) (json.RawMessage, error)
	Describe(ctx context.Context, id string) (json.RawMessage, error)
	// Call gets args as JSON ({} when the script passed none).
	Call(ctx context.Context, id string, args json.RawMessage) (json.RawMessage, error)
}

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
	o.Engine.Prelude = prelude
	o.Engine.HostFunctions = []wasm.HostFunction{
		{Name: "__ts_log", Func: hostLog},
		{Name: "__ts_start", Func: hostStart},
		{Name: "__ts_wait", Func: hostWait},
		{Name: "__ts_settle", Func: hostSettle},
		{Name: "__ts_idle", Func: hostIdle},
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
	MaxOutputBytes  int // console output, all levels together
	MaxResultBytes  int // the JSON of the returned value
	MaxSourceBytes  int // the code itself
	MaxCalls        int // bridged calls (search, describe and call all count)
	MaxPayloadBytes int // each bridge request and each bridge response
}

// Result is what a run produced. Run returns it even with an error, with the logs and usage up to the failure.
type Result struct {
	Value json.RawMessage // the returned value as JSON; null for undefined
	Logs  []string        // console output, one entry per call; warn and error are prefixed "[warn] ", "[error] "
	Calls int             // bridged calls started
	Usage wasm.Usage
}

// Run executes code, the body of an async function (`return` gives the result), against bridge. Errors:
// *wasm.LimitError (kinds timeout, fuel, memory, stack, output, result, source, calls), *wasm.ScriptError
// (syntax errors and uncaught exceptions, with line and stack), wasm.ErrExit, wasm.ErrTrap, or ctx's error. Every
// bridge call the script started has returned (or was abandoned after its context was cancelled and a short
// grace period) when Run returns.
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

	callCtx, cancelCalls := context.WithCancel(ctx)
	st := &runState{
		bridge:  bridge,
		opts:    o,
		callCtx: callCtx,
		done:    make(chan completion, o.MaxCalls),
	}
	runCtx := context.WithValue(ctx, stateKey{}, st)
	// The code starts on line 2 so that its columns are exact; positions are shifted back by one line below.
	wrapped := "__ts_boot((async function () {\n" + code + "\n}))"
	res, err := s.engine.Run(runCtx, wrapped, &wasm.RunOptions{Timeout: o.Timeout, Fuel: o.Fuel, MemoryBytes: o.MemoryBytes})

	cancelCalls()
	st.drain()
	out := &Result{Logs: st.logs, Calls: st.calls, Usage: res.Usage}
	if err == nil {
		err = st.scriptErr
	}
	var script *wasm.ScriptError
	if errors.As(err, &script) {
		toCodePositions(script)
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

func (o RunOptions) withDefaults() RunOptions {
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
	return o
}

type stateKey struct{}

// runState is one run's host side. The host functions run on the goroutine executing the guest; bridge calls
// run on their own goroutines and only ever touch the done channel and the WaitGroup.
type runState struct {
	bridge   Bridge
	opts     RunOptions
	callCtx  context.Context
	done     chan completion
	inflight sync.WaitGroup

	logs        []string
	outputBytes int
	calls       int // bridged calls started
	pending     int // started and not yet handed back to the script
	settled     bool
	value       json.RawMessage
	scriptErr   error // *wasm.ScriptError, or the *wasm.LimitError it stood for
}

type completion struct {
	id    int
	value json.RawMessage
	err   error
}

func state(ctx context.Context) *runState {
	st, _ := ctx.Value(stateKey{}).(*runState)
	if st == nil {
		panic("hostfns: host function called outside a run")
	}
	return st
}

func hostLog(ctx context.Context, args []string) (string, error) {
	st := state(ctx)
	if len(args) != 2 {
		return "", &wasm.JSException{Message: "console: bad call"}
	}
	text := args[1]
	switch args[0] {
	case "warn":
		text = "[warn] " + text
	case "error":
		text = "[error] " + text
	}
	st.outputBytes += len(text)
	if st.outputBytes > st.opts.MaxOutputBytes {
		return "", wasm.NewLimitError(wasm.LimitOutput, uint64(st.opts.MaxOutputBytes), uint64(st.outputBytes))
	}
	st.logs = append(st.logs, text)
	return "", nil
}

func hostStart(ctx context.Context, args []string) (string, error) {
	st := state(ctx)
	if len(args) != 2 {
		return "", &wasm.JSException{Message: "openclaw.tools: bad call"}
	}
	op, payload := args[0], args[1]
	if op != "search" && op != "describe" && op != "call" {
		return "", &wasm.JSException{Message: "openclaw.tools: unknown operation " + strconv.Quote(op)}
	}
	if len(payload) > st.opts.MaxPayloadBytes {
		return "", &wasm.JSException{Message: fmt.Sprintf("openclaw.tools.%s: request is %d bytes, over the %d byte limit",
			op, len(payload), st.opts.MaxPayloadBytes)}
	}
	var req struct {
		ID   json.RawMessage `json:"id"`
		Args json.RawMessage `json:"args"`
	}
	var id string
	if op != "search" {
		if err := json.Unmarshal([]byte(payload), &req); err != nil {
			return "", &wasm.JSException{Message: "openclaw.tools." + op + ": bad request"}
		}
		if err := json.Unmarshal(req.ID, &id); err != nil || id == "" {
			return "", &wasm.JSException{Message: "openclaw.tools." + op + ": the tool id must be a non-empty string"}
		}
	}
	if st.calls >= st.opts.MaxCalls {
		return "", wasm.NewLimitError(wasm.LimitCalls, uint64(st.opts.MaxCalls), uint64(st.calls+1))
	}
	st.calls++
	callID := st.calls
	st.pending++
	st.inflight.Add(1)
	go st.dispatch(callID, op, id, json.RawMessage(payload), req.Args)
	return strconv.Itoa(callID), nil
}

// dispatch runs one bridge call on its own goroutine, so calls a script starts together run together.
func (st *runState) dispatch(callID int, op, id string, payload, args json.RawMessage) {
	defer st.inflight.Done()
	c := completion{id: callID}
	defer func() {
		if p := recover(); p != nil {
			c.value, c.err = nil, fmt.Errorf("openclaw.tools.%s failed: internal error (%v)", op, p)
		}
		st.done <- c
	}()
	switch op {
	case "search":
		c.value, c.err = st.bridge.Search(st.callCtx, payload)
	case "describe":
		c.value, c.err = st.bridge.Describe(st.callCtx, id)
	case "call":
		if len(args) == 0 || bytes.Equal(args, []byte("null")) {
			args = json.RawMessage("{}")
		}
		c.value, c.err = st.bridge.Call(st.callCtx, id, args)
	}
	switch {
	case c.err != nil:
	case len(c.value) > st.opts.MaxPayloadBytes:
		c.value, c.err = nil, fmt.Errorf("openclaw.tools.%s: result is %d bytes, over the %d byte limit", op, len(c.value), st.opts.MaxPayloadBytes)
	case len(c.value) == 0:
		c.value = json.RawMessage("null")
	case !json.Valid(c.value):
		c.value, c.err = nil, fmt.Errorf("openclaw.tools.%s: the host returned invalid JSON", op)
	}
}

// hostWait blocks until at least one started call has completed and hands back all that have.
func hostWait(ctx context.Context, _ []string) (string, error) {
	st := state(ctx)
	if st.pending == 0 {
		return "[]", nil
	}
	var batch []completion
	select {
	case c := <-st.done:
		batch = append(batch, c)
	case <-ctx.Done():
		return "", ctx.Err()
	}
	for more := true; more; {
		select {
		case c := <-st.done:
			batch = append(batch, c)
		default:
			more = false
		}
	}
	st.pending -= len(batch)
	var b bytes.Buffer
	b.WriteByte('[')
	for i, c := range batch {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"id":"%d",`, c.id)
		if c.err != nil {
			msg, _ := json.Marshal(c.err.Error())
			fmt.Fprintf(&b, `"ok":false,"error":%s}`, msg)
		} else {
			b.WriteString(`"ok":true,"value":`)
			b.Write(c.value)
			b.WriteByte('}')
		}
	}
	b.WriteByte(']')
	return b.String(), nil
}

func hostSettle(ctx context.Context, args []string) (string, error) {
	st := state(ctx)
	if len(args) != 2 || st.settled {
		return "", nil // a forged or repeated settle changes nothing
	}
	st.settled = true
	switch args[0] {
	case "ok":
		if len(args[1]) > st.opts.MaxResultBytes {
			return "", wasm.NewLimitError(wasm.LimitResult, uint64(st.opts.MaxResultBytes), uint64(len(args[1])))
		}
		st.value = json.RawMessage(args[1])
	default:
		var info struct{ Name, Message, Stack string }
		_ = json.Unmarshal([]byte(args[1]), &info)
		st.scriptErr = wasm.ClassifyScriptError(ctx,
			&wasm.ScriptError{Name: info.Name, Message: info.Message, Stack: info.Stack, Line: wasm.LineOf(info.Stack)})
	}
	return "", nil
}

// hostIdle ends the run once the result is known and no call is outstanding, even if the script left timers
// behind. It is scheduled after the microtask queue drains, so callbacks of the last calls have run.
func hostIdle(ctx context.Context, _ []string) (string, error) {
	st := state(ctx)
	if st.settled && st.pending == 0 {
		return "", wasm.ErrStop
	}
	return "", nil
}

// drain waits for bridge calls still running after the guest stopped: at once when the run ended normally, up
// to callGrace after their context was cancelled when it did not.
func (st *runState) drain() {
	finished := make(chan struct{})
	go func() {
		st.inflight.Wait()
		close(finished)
	}()
	select {
	case <-finished:
	case <-time.After(callGrace):
	}
}

// toCodePositions rewrites an exception's positions from the wrapper script to the model's code (one line
// earlier) and drops the frames that belong to the prelude and the wrapper, which mean nothing to the model.
func toCodePositions(e *wasm.ScriptError) {
	if e.Line > 0 {
		e.Line--
	}
	const marker = wasm.ScriptFilename + ":"
	var kept []string
	for _, frame := range strings.Split(e.Stack, "\n") {
		i := strings.Index(frame, marker)
		if i < 0 {
			continue // prelude or native frames
		}
		rest := frame[i+len(marker):]
		end := strings.IndexFunc(rest, func(c rune) bool { return c < '0' || c > '9' })
		if end <= 0 {
			continue
		}
		line, _ := strconv.Atoi(rest[:end])
		if line < 2 {
			continue // the wrapper's own line
		}
		kept = append(kept, frame[:i+len(marker)]+strconv.Itoa(line-1)+rest[end:])
	}
	e.Stack = strings.Join(kept, "\n")
}
