package front

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// Approvals for clients of the 2026-07-28 protocol. That protocol forbids a server to send its client a request
// while it serves one of the client's; a server that needs the user's input returns it as input requests of an
// "input required" result, and the client calls again with the answers and the result's requestState (multi
// round-trip). A call that needs approval cannot be restarted from the top, though: in code mode the script is
// half-way through, and its earlier calls have already run. So such a client's tools/call runs in a goroutine of
// its own (a parked call); when its run asks for approval, the request returns the question, the run stays
// suspended where it is, and the client's retry delivers the answer to it and waits for what comes next (the
// result, or the next question).
//
// The requestState is a random handle to the parked call, kept by this client only: it is not a capability the
// model could forge (nothing of it is derived from the call), another client cannot use it, and a late or replayed
// retry finds nothing and is told so.

// MaxPendingRoundTrips bounds the questions of one client's calls that wait for an answer, asked through round
// trips or inline with elicitation requests (a call that would ask one more is blocked unasked, and told so), and
// the finished calls kept for a late retry. A client that never calls again
// holds a question for at most approvalTimeoutMs, and a finished call for at most parkedResultTTL.
const MaxPendingRoundTrips = 16

// parkedResultTTL is how long a parked call whose run finished while nobody waited (its approval timed out
// before the client called again) keeps its result for a late retry.
const parkedResultTTL = time.Minute

// errRoundTripsFull blocks a call when too many of the client's calls wait for their answers already.
var errRoundTripsFull = errors.New("too many approvals of this client are waiting for an answer")

// parkedCall is one tools/call of a multi round-trip client: its run, and the questions it waits on.
type parkedCall struct {
	c     *client
	token string
	tool  string // the called tool: a retry must call the same

	asks   chan *pendingAsk // questions the run puts to the user, in the order asked
	done   chan struct{}    // closed once the run returned
	res    *sdk.CallToolResult
	err    error
	cancel context.CancelFunc

	// progress is the request the call's progress is reported to: each retry is a request of its own.
	progress atomic.Pointer[progressTarget]

	mu      sync.Mutex
	waiting map[string]*pendingAsk // asked of the client in the last round, by input request id
	nextID  int
}

// progressTarget is a request progress is reported to.
type progressTarget struct {
	ctx   context.Context
	req   *sdk.CallToolRequest
	token any
}

// pendingAsk is one approval the run waits for.
type pendingAsk struct {
	params *sdk.ElicitParams
	answer chan *sdk.ElicitResult // buffered: the answer is never lost when the run has stopped waiting
}

type parkedKey struct{}

// parkedFrom returns the parked call a run's context belongs to, or nil.
func parkedFrom(ctx context.Context) *parkedCall {
	p, _ := ctx.Value(parkedKey{}).(*parkedCall)
	return p
}

// roundTrips reports whether this client is asked for approvals with input requests: it speaks the 2026-07-28
// protocol and declared form elicitation.
func (c *client) roundTrips() bool {
	if c.ss == nil {
		return false
	}
	ip := c.ss.InitializeParams()
	if ip == nil || ip.ProtocolVersion < firstMRTRProtocol || ip.Capabilities == nil {
		return false
	}
	e := ip.Capabilities.Elicitation
	return e != nil && (e.Form != nil || e.URL == nil)
}

// park starts execute in a goroutine as a parked call of c and returns it. execute gets a context that lives
// on after the request that started it (its values, not its cancellation), ended by cancelling the call or by
// the client going away, and the call itself; progress is where its progress goes until a retry takes over.
func (c *client) park(ctx context.Context, tool string, progress *progressTarget,
	execute func(context.Context, *parkedCall) (*sdk.CallToolResult, error)) (*parkedCall, error) {
	var raw [16]byte
	if _, err := rand.Read(raw[:]); err != nil {
		return nil, fmt.Errorf("mcp: request state: %w", err)
	}
	p := &parkedCall{c: c, token: hex.EncodeToString(raw[:]), tool: tool, asks: make(chan *pendingAsk),
		done: make(chan struct{})}
	p.progress.Store(progress)
	runCtx, cancel := context.WithCancel(context.WithValue(context.WithoutCancel(ctx), parkedKey{}, p))
	p.cancel = cancel
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		cancel()
		return nil, ErrServerClosed
	}
	if c.parked == nil {
		c.parked = map[string]*parkedCall{}
	}
	c.parked[p.token] = p
	c.mu.Unlock()
	go func() {
		defer cancel()
		p.res, p.err = execute(runCtx, p)
		close(p.done)
		// A call whose last round returned questions may finish while nobody waits (its approval timed out
		// before the client called again): its result stays for a late retry, then goes; the oldest goes first
		// when more than MaxPendingRoundTrips wait so.
		c.mu.Lock()
		defer c.mu.Unlock()
		if c.parked[p.token] != p {
			return // collected, or given up
		}
		c.retained = append(c.retained, p)
		if len(c.retained) > MaxPendingRoundTrips {
			old := c.retained[0]
			c.retained = c.retained[1:]
			if c.parked[old.token] == old {
				delete(c.parked, old.token)
			}
		}
		time.AfterFunc(c.s.parkedTTL, p.forget)
	}()
	return p, nil
}

// retry finds the parked call a retry's requestState names, for this client only.
func (c *client) retry(state, tool string) (*parkedCall, error) {
	c.mu.Lock()
	p := c.parked[state]
	c.mu.Unlock()
	if p == nil {
		return nil, errors.New("the approval this call answers is no longer pending: it was answered already, " +
			"timed out, or was asked of another session; call the tool again")
	}
	if p.tool != tool {
		return nil, fmt.Errorf("the approval this call answers was asked for %s, not %s", p.tool, tool)
	}
	return p, nil
}

// forget drops p from its client's parked calls.
func (p *parkedCall) forget() {
	c := p.c
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.parked[p.token] == p {
		delete(c.parked, p.token)
	}
	if i := slices.Index(c.retained, p); i >= 0 {
		c.retained = slices.Delete(c.retained, i, i+1)
	}
}

// answer hands the client's responses to the questions of the last round. A question the client left
// unanswered counts as dismissed: the run must not wait on it for ever.
func (p *parkedCall) answer(responses sdk.InputResponseMap) {
	p.mu.Lock()
	waiting := p.waiting
	p.waiting = nil
	p.mu.Unlock()
	for id, ask := range waiting {
		res, _ := responses[id].(*sdk.ElicitResult)
		if res == nil {
			res = &sdk.ElicitResult{Action: "cancel"}
		}
		ask.answer <- res
	}
}

// wait serves one round of p: the run's result once it returns, or the questions it asks meanwhile as an
// input-required result. A request that ends before either (the client cancelled it) cancels the call.
func (p *parkedCall) wait(ctx context.Context) (*sdk.CallToolResult, error) {
	select {
	case <-p.done:
		p.forget()
		return p.res, p.err
	case ask := <-p.asks:
		requests := sdk.InputRequestMap{}
		p.mu.Lock()
		p.waiting = map[string]*pendingAsk{}
		for ask != nil {
			p.nextID++
			id := "approval-" + strconv.Itoa(p.nextID)
			p.waiting[id] = ask
			requests[id] = ask.params
			// Calls of a script made at once ask at once: put them all to the user in this round.
			select {
			case ask = <-p.asks:
			default:
				ask = nil
			}
		}
		p.mu.Unlock()
		return &sdk.CallToolResult{InputRequests: requests, RequestState: p.token}, nil
	case <-ctx.Done():
		p.cancel()
		p.forget()
		return nil, ctx.Err()
	}
}

// ask puts one approval to the user through the parked call's next round and waits for the answer, as long as
// ctx (the approval's own deadline) allows.
func (p *parkedCall) ask(ctx context.Context, params *sdk.ElicitParams) (*sdk.ElicitResult, error) {
	c := p.c
	release, err := c.openQuestion()
	if err != nil {
		return nil, err
	}
	defer release()
	a := &pendingAsk{params: params, answer: make(chan *sdk.ElicitResult, 1)}
	select {
	case p.asks <- a:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	select {
	case res := <-a.answer:
		return res, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// report sends a progress notification to the request now serving p.
func (p *parkedCall) report(n *sdk.ProgressNotificationParams) {
	if t := p.progress.Load(); t != nil {
		t.send(n)
	}
}

// send reports n to the client as progress of t's request, under the client's own token; without one it
// sends nothing.
func (t *progressTarget) send(n *sdk.ProgressNotificationParams) {
	if t.token == nil {
		return
	}
	n.ProgressToken = t.token
	_ = t.req.Session.NotifyProgress(t.ctx, n)
}
