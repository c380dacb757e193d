package upstream

import (
	"context"
	"fmt"
	"sync"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolsearch/toolsearch/mcp/internal/seam"
)

// clientScope is one client of the front, as the Source sees it: the sessions of its own of the servers
// configured with IsolationPerClient, and where their notifications go. The front creates one per client
// session (seam.Upstream.NewClient) and closes it when the client goes away; every upstream request made for the
// client carries it (seam.Call.Client), so that a per-client server is reached through the client's own session,
// started at its first use.
type clientScope struct {
	src *Source

	// events receives the log messages and resource updates (with the server's own URI) of the client's own
	// sessions. It is set before the scope is used and never changes.
	events seam.Events

	mu       sync.Mutex
	sessions map[*server]*isolatedSession
	level    sdk.LoggingLevel // the client's log level, "" until it sets one
	closed   bool
}

// isolatedSession is one client's own session of one server. ready is closed once the attempt to start it has
// finished; err says why it failed.
type isolatedSession struct {
	ready    chan struct{}
	sess     *sdk.ClientSession
	conn     *dialed
	calls    context.Context // ends when the session starts closing
	endCalls context.CancelFunc
	err      error
	// free gives back the session's slot of its server's instance cap (server.instances); it is called once the
	// session's process has stopped, or its start has failed, and only the first call counts.
	free func()
}

// newClientScope starts the scope of one client. Its sessions end at its close or at the Source's, whichever
// comes first.
func (s *Source) newClientScope(events seam.Events) *clientScope {
	return &clientScope{src: s, events: events, sessions: map[*server]*isolatedSession{}}
}

// session returns the client's own session of u, starting it if there is none (or the last one ended). Several
// calls of one client that arrive together share one start. The start is bounded by the start timeout; the
// caller's ctx bounds only its own wait.
func (c *clientScope) session(ctx context.Context, u *server, op string) (*sdk.ClientSession, context.Context, error) {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return nil, nil, &ServerError{Server: u.name, Op: op, Err: ErrClosed}
	}
	is := c.sessions[u]
	if is == nil {
		// The slot is taken before the start, so that clients arriving together cannot start more than the cap
		// between them; a client over it is refused at once rather than queued, since a slot frees only when
		// some other client goes away, which may be in half an hour.
		free, err := u.takeInstance()
		if err != nil {
			c.mu.Unlock()
			return nil, nil, &ServerError{Server: u.name, Op: op, Err: err}
		}
		is = &isolatedSession{ready: make(chan struct{}), free: free}
		if !c.src.goTracked(func() { c.start(u, is) }) {
			c.mu.Unlock()
			free()
			return nil, nil, &ServerError{Server: u.name, Op: op, Err: ErrClosed}
		}
		c.sessions[u] = is
	}
	c.mu.Unlock()
	select {
	case <-is.ready:
	case <-ctx.Done():
		return nil, nil, ctx.Err()
	}
	if is.err != nil {
		return nil, nil, &ServerError{Server: u.name, Op: op, Err: is.err}
	}
	return is.sess, is.calls, nil
}

// start connects the client's own session of u. A session that fails to start is forgotten, so that the next
// call tries again; one that ends later is forgotten when it ends.
func (c *clientScope) start(u *server, is *isolatedSession) {
	// A package runner's start is clocked from its last sign of progress, as the shared session's is: a client's
	// own `npx -y` may be the one that installs (beside the shared session's install, or after a cache was
	// cleared), and an install cut short breaks the runner's cache for every later start.
	ctx, cancel := context.WithCancelCause(c.src.ctx)
	var mu sync.Mutex
	var started *dialed
	sample := func() activity {
		mu.Lock()
		conn := started
		mu.Unlock()
		return conn.activity()
	}
	clocked := make(chan struct{})
	go func() {
		defer close(clocked)
		startClock(ctx, u.config(), time.Now(), u.startTimeout(), cancel, sample, nil)
	}()
	defer func() {
		cancel(nil)
		<-clocked
	}()
	defer close(is.ready)
	conn, err := u.dial(ctx, u)
	mu.Lock()
	started = conn
	mu.Unlock()
	if err != nil {
		is.err = fmt.Errorf("start a session of the client's own: %w", err)
		c.forget(u, is)
		is.free()
		return
	}
	client := sdk.NewClient(&sdk.Implementation{Name: clientName, Version: "1"}, u.clientOptions(c))
	sess, err := client.Connect(ctx, c.src.routes.observeTransport(conn.transport), nil)
	if err != nil {
		u.stopStarting(conn)
		is.err = fmt.Errorf("start a session of the client's own: %w", u.explain(ctx, conn, err))
		c.forget(u, is)
		is.free()
		return
	}
	is.sess, is.conn = sess, conn
	is.calls, is.endCalls = context.WithCancel(c.src.ctx)
	c.mu.Lock()
	closed, level := c.closed, c.level
	c.mu.Unlock()
	if closed {
		// The client went away while its session started: close has already run over the sessions it saw.
		c.closeSession(is)
		is.sess, is.err = nil, ErrClosed
		return
	}
	if level != "" && supportsLogging(sess) {
		setLevelCtx, cancel := context.WithTimeout(c.src.ctx, c.src.opts.callTimeout)
		_ = sess.SetLoggingLevel(setLevelCtx, &sdk.SetLoggingLevelParams{Level: level})
		cancel()
	}
	watch := func() {
		select {
		case <-waitSession(sess):
		case <-c.src.ctx.Done():
		}
		if c.forget(u, is) {
			c.closeSession(is)
		}
	}
	if !c.src.goTracked(watch) {
		c.forget(u, is)
		c.closeSession(is)
		is.sess, is.err = nil, ErrClosed
	}
}

// waitSession is a channel closed when a session ends.
func waitSession(sess *sdk.ClientSession) <-chan struct{} {
	ended := make(chan struct{})
	go func() {
		_ = sess.Wait()
		close(ended)
	}()
	return ended
}

// forget drops is from the scope if it is still the session of u there, and reports whether it was.
func (c *clientScope) forget(u *server, is *isolatedSession) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.sessions[u] != is {
		return false
	}
	delete(c.sessions, u)
	return true
}

// closeSession ends one isolated session within the Source's close bound, stops its process, and then gives back
// its slot of the instance cap.
func (c *clientScope) closeSession(is *isolatedSession) {
	defer is.free()
	if is.sess == nil {
		return
	}
	is.endCalls()
	deadline := c.src.closeDeadlineFor(time.Now())
	closeWithin(is.sess, deadline)
	if is.conn != nil && is.conn.stop != nil {
		is.conn.stop(deadline)
	}
}

// takeInstance takes one of u's slots for a client's own session, or fails with ErrTooManyInstances when every
// slot is held by a session that runs or starts. The returned func gives the slot back; calls after the first do
// nothing.
func (u *server) takeInstance() (free func(), err error) {
	select {
	case u.instances <- struct{}{}:
		return sync.OnceFunc(func() { <-u.instances }), nil
	default:
		return nil, fmt.Errorf(`%w: the cap of %d (its "maxInstances") is taken: that many client sessions of it `+
			`are running or starting; try again once one of those clients has gone away, or raise "maxInstances" in `+
			`the server's config entry`, ErrTooManyInstances, cap(u.instances))
	}
}

// SetLevel records the client's log level and passes it to the client's sessions that take one.
func (c *clientScope) SetLevel(ctx context.Context, level sdk.LoggingLevel) {
	c.mu.Lock()
	c.level = level
	var sessions []*sdk.ClientSession
	for _, is := range c.sessions {
		select {
		case <-is.ready:
			if is.sess != nil && supportsLogging(is.sess) {
				sessions = append(sessions, is.sess)
			}
		default: // it sets the level itself once started
		}
	}
	c.mu.Unlock()
	for _, sess := range sessions {
		_ = sess.SetLoggingLevel(ctx, &sdk.SetLoggingLevelParams{Level: level})
	}
}

// Close ends every session of the client, in parallel, each within the close bound. Starts in progress finish
// by themselves (they see the scope closed) and stop what they started.
func (c *clientScope) Close() {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return
	}
	c.closed = true
	var started []*isolatedSession
	for u, is := range c.sessions {
		select {
		case <-is.ready:
			if is.sess != nil {
				started = append(started, is)
			}
			delete(c.sessions, u)
		default:
		}
	}
	c.mu.Unlock()
	var wg sync.WaitGroup
	for _, is := range started {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c.closeSession(is)
		}()
	}
	wg.Wait()
}

// goTracked runs f in a goroutine that Close waits for, unless Close has begun.
func (s *Source) goTracked(f func()) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return false
	}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		f()
	}()
	return true
}

// target picks the session a request of ctx's client goes to: the client's own for a per-client server, the
// shared one otherwise. The shared session must be up either way: its listing is what the client's own session
// offers, and a server that cannot start fails the same way for every client.
func (u *server) target(ctx context.Context, op string) (*sdk.ClientSession, context.Context, error) {
	sess, calls, err := u.readySession(op)
	if err != nil {
		return nil, nil, err
	}
	return u.own(ctx, op, sess, calls)
}

// own swaps a shared session for the client's own when u is a per-client server and ctx carries a client.
func (u *server) own(ctx context.Context, op string, sess *sdk.ClientSession, calls context.Context) (*sdk.ClientSession, context.Context, error) {
	if scope := u.ownScope(ctx); scope != nil {
		return scope.session(ctx, u, op)
	}
	return sess, calls, nil
}

// ownScope is the client whose own session of u the requests of ctx go to, or nil when they go to the shared
// session: u is not a per-client server, or ctx carries no client.
func (u *server) ownScope(ctx context.Context) *clientScope {
	if u.config().Isolation != IsolationPerClient {
		return nil
	}
	if cs := seam.CallFrom(ctx); cs != nil {
		c, _ := cs.Client.(*clientScope) // nil when the request carries no client
		return c
	}
	return nil
}

// supportsLogging reports whether a session takes logging/setLevel: its server declares logging and speaks a
// protocol older than 2026-07-28 (which sets the level per request instead).
func supportsLogging(sess *sdk.ClientSession) bool {
	res := sess.InitializeResult()
	return res != nil && res.Capabilities != nil && res.Capabilities.Logging != nil && !sessionless(sess)
}
