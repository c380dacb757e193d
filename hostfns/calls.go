package hostfns

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"time"
	"unicode/utf8"

	"golang.org/x/sync/semaphore"

	"github.com/toolsearch/toolsearch/wasm"
)

// Bounds on what bridge calls cost the host beyond the per-run limits in RunOptions.
const (
	// maxInflightBytes bounds the request bytes the bridge processes at once. Decoding and validating JSON
	// takes many times its size in memory (an array of numbers, ~12×), so a script starting 100 calls of 1 MiB
	// at once must not have them all decoded together; past this, starting a call waits for earlier ones.
	maxInflightBytes = 2 << 20
	// maxBridgeErrorBytes bounds the text of one rejected call (an unknown id is quoted in its error).
	maxBridgeErrorBytes = 8 << 10
)

// bridgeCall is one openclaw.tools call. Everything the host knows about a call is here, from the moment the
// script starts it until its result is handed back to the script.
type bridgeCall struct {
	seq       int // the id the script's promise waits for: 1, 2, ...
	op        string
	tool      string // the id or name the script gave, for describe and call
	started   time.Time
	request   int // bytes of the request, held against the in-flight bound until the call returns
	finished  time.Time
	value     json.RawMessage
	err       error
	done      bool // the bridge returned
	delivered bool // the script got the outcome
}

func (c *bridgeCall) info(runStart, now time.Time) CallInfo {
	end := c.finished
	if !c.done {
		end = now
	}
	return CallInfo{Op: c.op, Tool: c.tool, Started: c.started.Sub(runStart), Elapsed: end.Sub(c.started)}
}

// callTable holds the bridge calls of one run. The host functions (on the run's goroutine) start calls and
// collect results; each call runs on its own goroutine and completes itself.
type callTable struct {
	bridge  Bridge
	opts    RunOptions
	ctx     context.Context // the run's: its deadline, cancelled when the run ends
	cancel  context.CancelFunc
	began   time.Time           // the run's start
	inbound *semaphore.Weighted // request bytes being processed
	lookups sync.Mutex          // one search or describe at a time

	mu          sync.Mutex
	calls       []*bridgeCall // every call started, in order
	ready       []*bridgeCall // completed, not yet handed to the script, in completion order
	delivered   int
	bridgeBytes int           // requests and responses so far, against MaxBridgeBytes
	hostTime    time.Duration // spent in searches and describes, against MaxHostTime
	closed      bool
	wake        chan struct{} // a call completed (capacity 1)
	running     sync.WaitGroup
}

func newCallTable(runCtx context.Context, bridge Bridge, o RunOptions) *callTable {
	var ctx context.Context
	var cancel context.CancelFunc
	if d, ok := runCtx.Value(deadlineKey{}).(*wasm.Deadline); ok {
		// The run's context is the deadline's: a context derived from it the same way needs no goroutine to
		// follow it, where context.WithCancel of a context type it does not know starts one.
		ctx, cancel = d.Context(runCtx)
	} else {
		ctx, cancel = context.WithCancel(runCtx)
	}
	return &callTable{
		bridge: bridge, opts: o, ctx: ctx, cancel: cancel, began: time.Now(),
		inbound: semaphore.NewWeighted(maxInflightBytes),
		wake:    make(chan struct{}, 1),
	}
}

// admit checks a call before its request is copied out of the guest: the per-request size, the budget of bridge
// bytes and the number of calls.
func (t *callTable) admit(op string, requestBytes int) error {
	if requestBytes > t.opts.MaxPayloadBytes {
		return &wasm.JSException{Message: fmt.Sprintf("openclaw.tools.%s: request is %d bytes, over the %d byte limit",
			op, requestBytes, t.opts.MaxPayloadBytes)}
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if len(t.calls) >= t.opts.MaxCalls {
		return wasm.NewLimitError(wasm.LimitCalls, uint64(t.opts.MaxCalls), uint64(len(t.calls)+1))
	}
	if t.bridgeBytes+requestBytes > t.opts.MaxBridgeBytes {
		return &wasm.JSException{Message: fmt.Sprintf("openclaw.tools.%s: this run has sent and received %d bytes through "+
			"openclaw.tools, and the request would take it over its %d byte budget", op, t.bridgeBytes, t.opts.MaxBridgeBytes)}
	}
	return nil
}

// start decodes a request and dispatches it on its own goroutine, so that calls a script starts together run
// together. It returns the call's id. ctx is the host function's: starting waits (within the deadline) while
// too many request bytes are being processed.
func (t *callTable) start(ctx context.Context, op, payload string) (string, error) {
	c := &bridgeCall{op: op, request: len(payload)}
	request := json.RawMessage(payload)
	if !json.Valid(request) {
		return "", &wasm.JSException{Message: "openclaw.tools." + op + ": bad request"}
	}
	if op != "search" {
		c.tool = toolOf(request)
	}
	if err := t.inbound.Acquire(ctx, int64(min(c.request, maxInflightBytes))); err != nil {
		return "", err
	}
	t.mu.Lock()
	if t.closed {
		t.mu.Unlock()
		t.inbound.Release(int64(min(c.request, maxInflightBytes)))
		return "", context.Canceled
	}
	t.calls = append(t.calls, c)
	c.seq = len(t.calls)
	c.started = time.Now()
	t.bridgeBytes += c.request
	t.running.Add(1)
	t.mu.Unlock()
	go t.dispatch(c, request)
	return strconv.Itoa(c.seq), nil
}

// toolOf names the tool a describe or call request is for, for CallInfo: the id as the script gave it, or its
// JSON (bounded) when it is not a string. Checking it is the Bridge's business.
func toolOf(request json.RawMessage) string {
	var req struct {
		ID json.RawMessage `json:"id"`
	}
	_ = json.Unmarshal(request, &req)
	var id string
	if json.Unmarshal(req.ID, &id) == nil {
		return cutString(id, 256)
	}
	return cutString(string(bytes.TrimSpace(req.ID)), 256)
}

// dispatch runs one call on the bridge and completes it.
func (t *callTable) dispatch(c *bridgeCall, request json.RawMessage) {
	defer t.running.Done()
	var value json.RawMessage
	var err error
	func() {
		defer func() {
			if p := recover(); p != nil {
				value, err = nil, fmt.Errorf("openclaw.tools.%s failed: internal error (%v)", c.op, p)
			}
		}()
		switch c.op {
		case "search":
			value, err = t.lookup(c.op, func(ctx context.Context) (json.RawMessage, error) { return t.bridge.Search(ctx, request) })
		case "describe":
			value, err = t.lookup(c.op, func(ctx context.Context) (json.RawMessage, error) { return t.bridge.Describe(ctx, request) })
		case "call":
			value, err = t.bridge.Call(t.ctx, request)
		}
	}()
	t.inbound.Release(int64(min(c.request, maxInflightBytes)))
	t.complete(c, value, err)
}

// lookup runs a search or describe: one at a time per run, within what is left of the run's host time for them.
// The host time is the CPU the lookup's thread spent (see lookupClock): on a busy machine a search that waited
// for a core, or a search that waited for a server to start, did not cost the host what the wall clock says,
// and the script must not be told it used up its budget. A lookup still running when it has spent what is left
// is cut then: a timer fires when that much wall time has passed (the earliest the CPU could reach it) and reads
// the thread's clock, again after each shortfall.
func (t *callTable) lookup(op string, run func(context.Context) (json.RawMessage, error)) (json.RawMessage, error) {
	t.lookups.Lock()
	defer t.lookups.Unlock()
	t.mu.Lock()
	left := t.opts.MaxHostTime - t.hostTime
	t.mu.Unlock()
	exhausted := fmt.Errorf("openclaw.tools.%s: this run has used its %v of host CPU time for searches and describes; "+
		"use the results you have", op, t.opts.MaxHostTime)
	if left <= 0 {
		return nil, exhausted
	}
	ctx, cancel := context.WithCancelCause(t.ctx)
	defer cancel(nil)
	clock := startLookupClock()
	var watch *time.Timer
	var watchMu sync.Mutex
	check := func() {
		watchMu.Lock()
		defer watchMu.Unlock()
		if watch == nil {
			return // the lookup is over: its thread may be running something else now
		}
		if rest := left - clock.used(); rest > 0 {
			watch.Reset(max(rest, time.Millisecond))
			return
		}
		cancel(errHostTimeSpent)
	}
	watchMu.Lock()
	watch = time.AfterFunc(left, check)
	watchMu.Unlock()
	value, err := run(ctx)
	watchMu.Lock()
	watch.Stop()
	watch = nil
	watchMu.Unlock()
	spent := clock.stop()
	t.mu.Lock()
	t.hostTime += spent
	t.mu.Unlock()
	if err != nil && errors.Is(context.Cause(ctx), errHostTimeSpent) && t.ctx.Err() == nil {
		return nil, exhausted
	}
	return value, err
}

// errHostTimeSpent is the cause of a lookup's context ending because the lookup spent the run's host time.
var errHostTimeSpent = errors.New("the run's host time for searches and describes is spent")

// complete records a call's outcome, checking the response against the payload and budget limits, and wakes
// the script's pump.
func (t *callTable) complete(c *bridgeCall, value json.RawMessage, err error) {
	switch {
	case err != nil:
		err = errors.New(cutString(err.Error(), maxBridgeErrorBytes))
		value = nil
	case len(value) > t.opts.MaxPayloadBytes:
		value, err = nil, fmt.Errorf("openclaw.tools.%s: result is %d bytes, over the %d byte limit", c.op, len(value), t.opts.MaxPayloadBytes)
	case len(value) == 0:
		value = json.RawMessage("null")
	case !json.Valid(value):
		value, err = nil, fmt.Errorf("openclaw.tools.%s: the host returned invalid JSON", c.op)
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if err == nil && t.bridgeBytes+len(value) > t.opts.MaxBridgeBytes {
		value, err = nil, fmt.Errorf("openclaw.tools.%s: the %d byte result would take the run over its %d byte budget "+
			"for openclaw.tools", c.op, len(value), t.opts.MaxBridgeBytes)
	}
	t.bridgeBytes += len(value)
	c.value, c.err, c.done, c.finished = value, err, true, time.Now()
	t.ready = append(t.ready, c)
	select {
	case t.wake <- struct{}{}:
	default:
	}
}

// wait blocks until at least one call has completed, then hands back as many completed calls as fit in about one
// payload: the rest wait for the next pump, so the host never builds a string of every result at once.
func (t *callTable) wait(ctx context.Context) (string, error) {
	for {
		t.mu.Lock()
		if len(t.calls)-t.delivered == 0 {
			t.mu.Unlock()
			return "[]", nil
		}
		if len(t.ready) > 0 && t.ctx.Err() == nil {
			break
		}
		t.mu.Unlock()
		if t.ctx.Err() != nil {
			// The run's deadline has passed (or the turn ended): a call that honours its context has just
			// returned because of that, and handing its outcome over would race the run's own end. The guest's
			// context ends with it at once; wait for that and report it, leaving the call pending.
			<-ctx.Done()
			return "", ctx.Err()
		}
		select {
		case <-t.wake:
		case <-ctx.Done():
			return "", ctx.Err()
		}
	}
	var b bytes.Buffer
	b.WriteByte('[')
	n := 0
	for n < len(t.ready) && (n == 0 || b.Len()+len(t.ready[n].value) <= t.opts.MaxPayloadBytes) {
		c := t.ready[n]
		if n > 0 {
			b.WriteByte(',')
		}
		b.WriteString(`{"id":"` + strconv.Itoa(c.seq) + `",`)
		if c.err != nil {
			b.WriteString(`"ok":false,"error":`)
			writeJSONString(&b, c.err.Error())
		} else {
			b.WriteString(`"ok":true,"value":`)
			b.Write(c.value)
		}
		b.WriteByte('}')
		c.value, c.delivered = nil, true // handed over: the guest has its own copy now
		n++
	}
	b.WriteByte(']')
	t.ready = t.ready[n:]
	t.delivered += n
	t.mu.Unlock()
	return b.String(), nil
}

// outstanding is the number of calls started and not yet handed back to the script.
func (t *callTable) outstanding() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.calls) - t.delivered
}

func (t *callTable) started() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.calls)
}

// pending describes the calls whose outcome the script never got: still running, or finished while the script
// could no longer take the result (a call that honours its context returns the moment the deadline passes).
func (t *callTable) pending() []CallInfo {
	t.mu.Lock()
	defer t.mu.Unlock()
	now := time.Now()
	var out []CallInfo
	for _, c := range t.calls {
		if !c.delivered {
			out = append(out, c.info(t.began, now))
		}
	}
	return out
}

// close cancels the calls' context and refuses new calls.
func (t *callTable) close() {
	t.mu.Lock()
	t.closed = true
	t.mu.Unlock()
	t.cancel()
}

// drain waits for calls still running: at once when they all returned, at most grace otherwise.
func (t *callTable) drain(grace time.Duration) {
	t.mu.Lock()
	returned := true
	for _, c := range t.calls {
		returned = returned && c.done
	}
	t.mu.Unlock()
	if returned {
		return // nothing to wait for (most runs start no call): no goroutine, no timer
	}
	finished := make(chan struct{})
	go func() {
		t.running.Wait()
		close(finished)
	}()
	timer := time.NewTimer(grace)
	defer timer.Stop()
	select {
	case <-finished:
	case <-timer.C:
	}
}

// writeJSONString writes s as a JSON string without HTML escaping: '<' stays one byte instead of six.
func writeJSONString(b *bytes.Buffer, s string) {
	enc := json.NewEncoder(b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s)
	b.Truncate(b.Len() - 1) // Encode's newline
}

// jsonStringBytes is the length of s encoded as a JSON string without HTML escaping, quotes included.
func jsonStringBytes(s string) int {
	n := 2
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			switch {
			case c == '"' || c == '\\' || c == '\n' || c == '\r' || c == '\t' || c == '\b' || c == '\f':
				n += 2
			case c < 0x20:
				n += 6
			default:
				n++
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			n += 6 // invalid UTF-8 becomes \ufffd
		case r == '\u2028' || r == '\u2029':
			n += 6
		default:
			n += size
		}
		i += size
	}
	return n
}
