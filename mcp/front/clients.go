package front

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"go.opentelemetry.io/otel/trace"

	"github.com/toolsearch/toolsearch/catalog"
	"github.com/toolsearch/toolsearch/mcp/internal/seam"
	"github.com/toolsearch/toolsearch/runtime"
)

// client is one client session of the front: its runs, its call ids, its log level, its resource subscriptions,
// and its scope in the Source (its own sessions of per-client servers).
type client struct {
	s     *Server
	id    string // "c1", "c2", ...: never the Mcp-Session-Id, which lets whoever knows it into the session
	ss    *sdk.ServerSession
	scope seam.Client  // nil without an upstream Source
	seq   atomic.Int64 // call ids
	// profile is the profile the client's token selected, fixed when its session began; nil for the runtime's
	// policy (BearerToken, stdio, no tokens).
	profile *Profile

	mu    sync.Mutex
	live  *liveRun
	gen   int // the view generation live was started from
	level sdk.LoggingLevel
	subs  map[string]int // URIs the client subscribed to, as it sees them
	// approved are the tools (as defined when approved, see rememberKey) the user approved for this session.
	approved map[string]bool
	// parked are the calls of a multi round-trip client that run on while their approvals are asked, by the
	// requestState that names them (roundtrip.go).
	parked map[string]*parkedCall
	// asking counts the parked calls' questions not yet answered or given up; retained are the parked calls that
	// finished while nobody waited, oldest first, kept for a late retry.
	asking   int
	retained []*parkedCall
	closed   bool
}

// liveRun is a run and the calls still using it, so that it is closed only after they finish.
type liveRun struct {
	run   *runtime.Run
	calls sync.WaitGroup
}

// clientOf returns the state of a client session, creating it at the session's first request. A goroutine
// waits for the session to end and then closes the client. Requests without a session (a handler called
// directly, in-process) share one client, which Close ends.
func (s *Server) clientOf(ss *sdk.ServerSession) (*client, error) {
	return s.clientWith(ss, nil, false)
}

// clientWith is clientOf for a request that presented a token (hasToken): a new client gets the token's
// profile, and a known client that began with another profile is refused, so that a session cannot change what
// it may do halfway (the SDK's streamable handler refuses such a request first; this holds whatever transport).
func (s *Server) clientWith(ss *sdk.ServerSession, profile *Profile, hasToken bool) (*client, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if c := s.clients[ss]; c != nil {
		if hasToken && c.profile != profile {
			return nil, ErrProfileChanged
		}
		return c, nil
	}
	if s.closed {
		return nil, ErrServerClosed
	}
	s.nclients++
	c := &client{s: s, id: "c" + strconv.Itoa(s.nclients), ss: ss, subs: map[string]int{}, profile: profile,
		approved: map[string]bool{}}
	if s.up != nil {
		c.scope = s.up.NewClient(seam.Events{Log: c.log, ResourceUpdated: s.mirror.updatedFor(ss)})
	}
	s.clients[ss] = c
	s.log.Info("mcp serve: client connected", "client", c.id, "profile", profileName(profile))
	if ss == nil {
		return c, nil
	}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		_ = ss.Wait()
		s.mu.Lock()
		delete(s.clients, ss)
		s.mu.Unlock()
		c.close()
		s.levelsChanged(context.Background())
		s.log.Info("mcp serve: client went away", "client", c.id)
	}()
	return c, nil
}

func (c *client) sessionID() string { return c.s.opts.SessionID + "-" + c.id }

func (c *client) nextCallID() string {
	return "mcp-" + strconv.FormatInt(c.seq.Add(1), 10)
}

// acquire returns the client's run for the current view, starting it when the view changed since the last call
// (the old run is closed once its calls finish), and counts the caller as one of its calls: the caller must call
// calls.Done when it is finished.
func (c *client) acquire(ctx context.Context) (*liveRun, error) {
	v := c.s.currentView()
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return nil, ErrServerClosed
	}
	if c.live == nil || c.gen != v.gen {
		req := c.s.runRequest(c.sessionID(), c.sessionID()+"-"+strconv.Itoa(v.gen))
		req.Policy, req.Approver = c.runPolicy(), c
		// The run outlives the request that starts it: its span is no child of the request's.
		runCtx := trace.ContextWithSpanContext(ctx, trace.SpanContext{})
		run, err := c.s.rt.StartRun(runCtx, req)
		switch {
		case err != nil && c.live == nil:
			return nil, fmt.Errorf("mcp: start run: %w", err)
		case err != nil:
			// The old run keeps serving the tools it has; the next call tries again.
			c.s.log.Error("mcp serve: starting a client's run failed", "client", c.id, "error", err)
		default:
			old := c.live
			c.live, c.gen = &liveRun{run: run}, v.gen
			if old != nil {
				c.retire(old)
			}
		}
	}
	c.live.calls.Add(1)
	return c.live, nil
}

// retire closes a run once the calls that still use it have finished.
func (c *client) retire(lr *liveRun) {
	c.s.wg.Add(1)
	go func() {
		defer c.s.wg.Done()
		lr.calls.Wait()
		lr.run.Close()
	}()
}

// close ends the client: no new calls, its run closed once its calls finish, its subscriptions released and its
// own sessions of per-client servers closed. It is idempotent.
func (c *client) close() {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return
	}
	c.closed = true
	live, subs, parked := c.live, c.subs, c.parked
	c.subs, c.approved, c.parked, c.retained = nil, nil, nil, nil
	c.mu.Unlock()
	for _, p := range parked {
		p.cancel() // their runs stop waiting for answers that will not come, so live's calls end
	}
	if live != nil {
		live.calls.Wait()
		live.run.Close()
	}
	if c.s.mirror != nil {
		c.s.mirror.release(c, subs)
	}
	if c.scope != nil {
		c.scope.Close()
	}
}

// runPolicy is the policy of the client's runs (RunRequest.Policy): its profile's, or nil for the runtime's.
func (c *client) runPolicy() *catalog.Policy {
	switch {
	case c.profile == nil:
		return nil
	case c.profile.Policy == nil:
		return allowAll()
	}
	return c.profile.Policy
}

// policy is the policy the client's calls are checked against now.
func (c *client) policy() *catalog.Policy {
	if p := c.runPolicy(); p != nil {
		return p
	}
	return c.s.rt.Policy()
}

// allowAll is the policy that allows every tool: a nil Policy in a RunRequest would mean the runtime's.
func allowAll() *catalog.Policy { return &catalog.Policy{} }

// log forwards a log message of the client's own session of a per-client server.
func (c *client) log(u seam.Server, p *sdk.LoggingMessageParams) {
	if c.ss != nil {
		_ = c.ss.Log(context.Background(), forwardedLog(u, p))
	}
}

// forwardedLog is an upstream's log message as the front's clients get it: the logger names the server.
func forwardedLog(u seam.Server, p *sdk.LoggingMessageParams) *sdk.LoggingMessageParams {
	out := *p
	out.Logger = u.Name()
	if p.Logger != "" {
		out.Logger = u.Name() + "/" + p.Logger
	}
	return &out
}

// upstreamLog forwards a log message of a shared session to every client; the SDK sends each client only what
// its own level (logging/setLevel) admits, and nothing to a client that set none.
func (s *Server) upstreamLog(u seam.Server, p *sdk.LoggingMessageParams) {
	msg := forwardedLog(u, p)
	for ss := range s.sdk.Sessions() {
		_ = ss.Log(context.Background(), msg)
	}
}

// upstreamResourceUpdated passes a shared session's resource update on to the clients subscribed to it.
func (s *Server) upstreamResourceUpdated(u seam.Server, uri string) {
	s.mirror.updated(u, uri)
}

// setLevel records a client's log level, passes it to the client's own sessions, and sets the shared sessions
// to the most verbose level any client asked for, so that they send what some client wants.
func (s *Server) setLevel(ctx context.Context, ss *sdk.ServerSession, level sdk.LoggingLevel) {
	c, err := s.clientOf(ss)
	if err != nil {
		return
	}
	c.mu.Lock()
	c.level = level
	c.mu.Unlock()
	if c.scope != nil {
		c.scope.SetLevel(ctx, level)
	}
	s.levelsChanged(ctx)
}

// levelsChanged sets the shared sessions' level to the most verbose of the clients' levels.
func (s *Server) levelsChanged(ctx context.Context) {
	if s.up == nil {
		return
	}
	s.mu.Lock()
	var most sdk.LoggingLevel
	for _, c := range s.clients {
		c.mu.Lock()
		if c.level != "" && (most == "" || levelRank(c.level) < levelRank(most)) {
			most = c.level
		}
		c.mu.Unlock()
	}
	s.mu.Unlock()
	s.up.SetLogLevel(most)
}

// levelRank orders the MCP log levels from the most verbose (debug) up.
func levelRank(l sdk.LoggingLevel) int {
	for i, name := range []sdk.LoggingLevel{"debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"} {
		if l == name {
			return i
		}
	}
	return 0
}
