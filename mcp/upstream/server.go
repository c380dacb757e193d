package upstream

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"regexp"
	"sync"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolsearch/toolsearch/catalog"
)

// clientName is how toolsearch introduces itself to the servers it connects to.
const clientName = "toolsearch"

// server is one configured server and the goroutine (supervise) that keeps it connected.
type server struct {
	src        *Source
	name       string
	sourceName string
	cfgMu      sync.Mutex   // guards cfg, which Reconfigure may change between attempts
	cfg        ServerConfig // read through config()
	dial       dialFunc
	stderr     *stderrTail
	feat       *features // resources, templates and prompts, for the front

	relist   chan struct{} // tools/list_changed arrived; capacity 1, so a flood coalesces
	restart  chan struct{} // Restart or Reconfigure asked for a new attempt now; capacity 1
	suspect  chan struct{} // a call timed out: is the server still there? capacity 1
	done     chan struct{} // closed when supervise returns
	first    chan struct{} // closed when the first attempt has finished either way (at once for an idle server)
	wake     chan struct{} // closed by the first use of an idle lazy server
	wakeOnce sync.Once
	reads    chan struct{} // a slot per resources/read or prompts/get in flight (Options.MaxConcurrentReads)
	// instances holds a slot per client session of its own, running or starting (Options.MaxClientInstances).
	instances chan struct{}

	mu        sync.Mutex
	state     State
	session   *sdk.ClientSession
	calls     context.Context    // the calls made on session; ends when it starts closing
	endCalls  context.CancelFunc // ends calls: closing a session waits for its calls in flight otherwise
	conn      *dialed
	tools     []catalog.Tool
	offered   map[string]bool // remote tool names of the last listing
	lastErr   error
	attempts  int
	startTime time.Duration
	nextRetry time.Time
	since     time.Time // when state was entered
	deadline  time.Time // when the attempt under way gives up; zero between attempts
	// installer is the package runner (npx, uvx, ...) of the attempt under way once it has shown progress: it is
	// fetching or installing the server. Empty between attempts.
	installer string
	abandoned bool // a session's Close did not return in time
	// cancelAttempt ends the attempt under way (nil between attempts), for a restart.
	cancelAttempt context.CancelFunc
	// next is a changed config entry (Reconfigure) the next attempt adopts; nil when none is waiting.
	next *ServerConfig
}

func newServer(s *Source, name, sourceName string, cfg ServerConfig, dial dialFunc) *server {
	return &server{
		src:        s,
		name:       name,
		sourceName: sourceName,
		cfg:        cfg,
		dial:       dial,
		stderr:     newStderrTail(name, s.opts.serverStderr),
		feat:       newFeatures(),
		relist:     make(chan struct{}, 1),
		restart:    make(chan struct{}, 1),
		suspect:    make(chan struct{}, 1),
		done:       make(chan struct{}),
		first:      make(chan struct{}),
		wake:       make(chan struct{}),
		reads:      make(chan struct{}, s.opts.maxReads),
		instances:  make(chan struct{}, cmp.Or(cfg.MaxInstances, s.opts.maxInstances)),
		state:      StateStarting,
		since:      time.Now(),
	}
}

// supervise connects, serves and reconnects the server until the Source closes. u.first is closed when the first
// attempt has finished either way, with its outcome already recorded. An idle server's first attempt waits for
// its first use.
func (u *server) supervise() {
	defer u.src.wg.Done()
	defer close(u.done)
	first := u.first
	if u.status().State == StateIdle && !u.awaitIdle() {
		u.setClosed()
		u.closeFirst(first)
		return
	}
	delay := u.src.opts.retryDelay
	var same failureRun
	for {
		sess, conn, err := u.connect()
		if err == nil {
			u.closeFirst(first)
			same = failureRun{}
			began := time.Now()
			err = u.serve(sess, conn)
			if time.Since(began) >= u.src.opts.maxRetryDelay {
				delay = u.src.opts.retryDelay // it was healthy for a while: this is a new problem, not a loop
			}
		}
		if closing, _ := u.src.closing(); closing {
			u.setClosed()
			u.closeFirst(first)
			return
		}
		if u.restartRequested() {
			// Asked for by a person or a changed config entry: a new attempt at once, and the backoff starts over.
			delay, same = u.src.opts.retryDelay, failureRun{}
			u.setStarting("restarting")
			continue
		}
		wait := u.retryDelay(jitter(delay), errors.Is(err, context.DeadlineExceeded))
		if n := same.add(err); n >= RepeatedFailures {
			wait = max(wait, DefaultRepeatedFailureDelay)
			err = &RepeatedFailureError{Err: err, Times: n, Wait: wait}
		}
		u.setFailed(err, wait)
		u.closeFirst(first)
		timer := time.NewTimer(wait)
		select {
		case <-timer.C:
		case <-u.restart:
			timer.Stop()
			delay, same = u.src.opts.retryDelay, failureRun{}
			u.setStarting("restarting")
			continue
		case <-u.src.ctx.Done():
			timer.Stop()
			u.setClosed()
			return
		}
		delay = min(2*delay, u.src.opts.maxRetryDelay)
	}
}

// errRestarting ends an attempt that Restart or Reconfigure cut short.
var errRestarting = errors.New("restarting")

// RepeatedFailures is how many identical failures in a row make a server wait DefaultRepeatedFailureDelay
// before its next attempt.
const RepeatedFailures = 3

// DefaultRepeatedFailureDelay is the wait before the next attempt of a server whose last RepeatedFailures
// attempts failed identically: such a failure (a missing package, a missing file, a syntax error) comes back
// until someone fixes it, and each attempt of a package runner costs a core for seconds. A restart (Restart, a
// changed config entry) tries at once.
const DefaultRepeatedFailureDelay = 10 * time.Minute

// failureRun counts the failures in a row that read the same, numbers aside (pids, durations, ports): a timeout
// is not counted, since a slow start on a busy machine is not a fault that repeats for sure.
type failureRun struct {
	key string
	n   int
}

var digits = regexp.MustCompile(`[0-9]+`)

// add counts err and returns how many failures in a row it ends.
func (r *failureRun) add(err error) int {
	if err == nil || errors.Is(err, context.DeadlineExceeded) {
		*r = failureRun{}
		return 0
	}
	key := digits.ReplaceAllString(err.Error(), "#")
	if key != r.key {
		*r = failureRun{key: key}
	}
	r.n++
	return r.n
}

// restartRequested reports, and consumes, a restart asked for while the server was starting or serving.
func (u *server) restartRequested() bool {
	select {
	case <-u.restart:
		return true
	default:
		return false
	}
}

// requestRestart asks the supervisor for a new attempt now: it ends the attempt or session under way, or the
// wait for the next attempt.
func (u *server) requestRestart(next *ServerConfig) {
	u.mu.Lock()
	if next != nil {
		u.next = next
	}
	wake(u.restart) // under the lock, with next: an attempt beginning now takes both or neither
	cancel := u.cancelAttempt
	u.mu.Unlock()
	if cancel != nil {
		cancel()
	}
}

func (u *server) setStarting(why string) {
	u.mu.Lock()
	u.state, u.since, u.nextRetry = StateStarting, time.Now(), time.Time{}
	u.mu.Unlock()
	u.src.notify()
	u.src.progressf("mcp: %s: %s", u.name, why)
}

// config is the server's config entry as the current attempt uses it.
func (u *server) config() ServerConfig {
	u.cfgMu.Lock()
	defer u.cfgMu.Unlock()
	return u.cfg
}

func (u *server) closeFirst(first chan struct{}) {
	select {
	case <-first:
	default:
		close(first)
	}
}

// jitter spreads retries of servers that failed together (a network blip) over ±20%.
func jitter(d time.Duration) time.Duration {
	return d + time.Duration((rand.Float64()*0.4-0.2)*float64(d))
}

// connect makes one attempt, in a span of its own.
func (u *server) connect() (*sdk.ClientSession, *dialed, error) {
	began := time.Now()
	u.mu.Lock()
	attempt := u.attempts + 1
	u.mu.Unlock()
	ctx, span := u.startAttempt(u.src.ctx, attempt)
	sess, conn, err := u.attempt(ctx)
	u.endAttempt(ctx, span, began, len(u.snapshot()), err)
	return sess, conn, err
}

// attempt makes one attempt: start or dial, initialize, list every tool. On success the server is ready. parent
// is the Source's context, with the attempt's span.
func (u *server) attempt(parent context.Context) (*sdk.ClientSession, *dialed, error) {
	began := time.Now()
	u.mu.Lock()
	// A restart asked for until now is this attempt, with the config entry as it is now.
	select {
	case <-u.restart:
	default:
	}
	if u.next != nil {
		u.cfgMu.Lock()
		u.cfg, u.next = *u.next, nil
		u.cfgMu.Unlock()
	}
	u.attempts++
	u.mu.Unlock()
	timeout := u.startTimeout()
	u.mu.Lock()
	u.deadline = began.Add(timeout)
	u.mu.Unlock()
	defer func() {
		u.mu.Lock()
		u.deadline, u.cancelAttempt, u.installer = time.Time{}, nil, ""
		u.mu.Unlock()
	}()
	// What the last connection left behind says nothing about this one.
	u.stderr.reset()
	for _, ch := range []chan struct{}{u.relist, u.suspect} {
		select {
		case <-ch:
		default:
		}
	}
	ctx, cancel := context.WithCancelCause(parent)
	u.mu.Lock()
	u.cancelAttempt = func() { cancel(errRestarting) }
	u.mu.Unlock()
	clocked := make(chan struct{})
	go func() {
		defer close(clocked)
		u.clockStart(ctx, began, timeout, cancel)
	}()
	defer func() {
		cancel(nil)
		<-clocked
	}()

	conn, err := u.dial(ctx, u)
	if err != nil {
		return nil, nil, &ServerError{Server: u.name, Op: "start", Err: err}
	}
	transport := conn.transport
	if !conn.filtersListings {
		transport = listingTransport{inner: transport, maxReadBytes: u.src.opts.maxReadBytes}
	}
	u.mu.Lock()
	u.conn = conn // from now on Close can kill what the dial started, even mid-handshake
	u.mu.Unlock()
	client := sdk.NewClient(&sdk.Implementation{Name: clientName, Version: "1"}, u.clientOptions(nil))
	sess, err := client.Connect(ctx, u.src.routes.observeTransport(transport), nil)
	if err != nil {
		u.stopStarting(conn)
		return nil, nil, &ServerError{Server: u.name, Op: "start", Err: u.explain(ctx, conn, err)}
	}
	l, err := u.list(ctx, sess)
	if err != nil {
		u.closeSession(sess, conn)
		return nil, nil, &ServerError{Server: u.name, Op: "list tools", Err: u.explain(ctx, conn, err)}
	}
	took := time.Since(began)
	u.feat.mu.Lock()
	u.feat.listed = false // this session's resources and prompts are listed next (watchFeatures)
	u.feat.mu.Unlock()
	u.adoptListing(l)
	tools := l.kept
	u.mu.Lock()
	u.state, u.session, u.since = StateReady, sess, time.Now()
	u.calls, u.endCalls = context.WithCancel(u.src.ctx)
	u.lastErr, u.startTime, u.nextRetry = nil, took, time.Time{}
	calls := u.calls
	u.mu.Unlock()
	u.src.goTracked(func() { u.watchFeatures(sess, calls) })
	// Consumers hear of the tools before a person reads "ready": a call made on seeing the line finds them.
	u.src.notify()
	u.src.progressf("mcp: %s: ready: %d tool(s) in %s", u.name, len(tools), took.Round(time.Millisecond))
	return sess, conn, nil
}

// explain turns a failed attempt into the reason a person needs: a timeout says so, a dead process says how
// it died and what it last wrote to stderr.
func (u *server) explain(ctx context.Context, conn *dialed, err error) error {
	if cause := context.Cause(ctx); ctx.Err() != nil && u.src.ctx.Err() == nil && errors.Is(cause, context.DeadlineExceeded) {
		err = cause
	}
	return u.withExit(conn, err)
}

func (u *server) withExit(conn *dialed, err error) error {
	var extra string
	if conn != nil && conn.exit != nil {
		if e := conn.exit(); e != "" {
			extra += "; " + e
		}
	}
	if line := u.stderr.reason(); line != "" {
		extra += "; stderr: " + line
	}
	if extra == "" {
		return err
	}
	return fmt.Errorf("%w (%s)", err, extra[2:])
}

// serve watches a ready session until it ends, re-listing on tools/list_changed and pinging after a call timed
// out. It returns why the session ended; the session is closed when it returns.
func (u *server) serve(sess *sdk.ClientSession, conn *dialed) error {
	ended := make(chan error, 1)
	go func() { ended <- sess.Wait() }()
	for {
		select {
		case <-u.src.ctx.Done():
			u.closeSession(sess, conn)
			return nil
		case <-u.restart:
			u.closeSession(sess, conn)
			wake(u.restart) // for supervise, which starts the next attempt at once
			return nil
		case err := <-ended:
			u.closeSession(sess, conn)
			if err == nil {
				err = errors.New("closed by the server")
			}
			return &ServerError{Server: u.name, Op: "connection", Err: u.withExit(conn, err)}
		case <-u.relist:
			ctx, cancel := context.WithTimeout(u.src.ctx, u.startTimeout())
			l, err := u.list(ctx, sess)
			cancel()
			if err != nil {
				u.closeSession(sess, conn)
				return &ServerError{Server: u.name, Op: "list tools after tools/list_changed", Err: err}
			}
			if !u.adoptListing(l) {
				continue // a notification that changed nothing: consumers keep their catalogs
			}
			u.src.progressf("mcp: %s: tools changed: %d tool(s)", u.name, len(l.kept))
			u.src.notify()
		case <-u.suspect:
			ctx, cancel := context.WithTimeout(u.src.ctx, min(u.src.opts.callTimeout, 5*time.Second))
			err := sess.Ping(ctx, nil)
			cancel()
			if err != nil && u.src.ctx.Err() == nil {
				u.closeSession(sess, conn)
				return &ServerError{Server: u.name, Op: "ping after a call timed out", Err: err}
			}
		}
	}
}

// closeSession ends a session within the close bound, then stops what the transport started (the process
// group), so nothing the server spawned outlives it. A transport that does not let go is abandoned (and
// Close says so): its goroutine ends whenever the transport does.
func (u *server) closeSession(sess *sdk.ClientSession, conn *dialed) {
	u.mu.Lock()
	if u.session == sess {
		u.session = nil
		// The SDK's Close waits for the calls in flight, which a server that stopped answering never ends: they
		// fail now instead, and the session closes at once.
		u.endCalls()
	}
	u.mu.Unlock()
	deadline := u.src.closeDeadlineFor(time.Now())
	if !closeWithin(sess, deadline) {
		u.mu.Lock()
		u.abandoned = true
		u.mu.Unlock()
	}
	u.stop(conn, deadline)
}

// closeDeadlineFor is the deadline of closing one session that starts now: the close bound, or the Source's own
// deadline when it is closing.
func (s *Source) closeDeadlineFor(now time.Time) time.Time {
	deadline := now.Add(s.opts.closeTimeout)
	if closing, d := s.closing(); closing && d.Before(deadline) {
		deadline = d
	}
	return deadline
}

// closeWithin closes a session and reports whether it let go by deadline. One that did not is abandoned: its
// goroutine ends whenever the transport does.
func closeWithin(sess *sdk.ClientSession, deadline time.Time) bool {
	closed := make(chan struct{})
	go func() {
		sess.Close()
		close(closed)
	}()
	timer := time.NewTimer(time.Until(deadline))
	defer timer.Stop()
	select {
	case <-closed:
		return true
	case <-timer.C:
		return false
	}
}

func (u *server) abandonedSession() bool {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.abandoned
}

func (u *server) stop(conn *dialed, deadline time.Time) {
	if conn != nil && conn.stop != nil {
		conn.stop(deadline)
	}
}

// killNow stops the current connection's process at once; Close uses it when its deadline passed.
func (u *server) killNow() {
	u.mu.Lock()
	conn := u.conn
	u.mu.Unlock()
	u.stop(conn, time.Now())
}

func (u *server) exited() bool {
	select {
	case <-u.done:
		return true
	default:
		return false
	}
}

// setFailed says the failure before it publishes it, the reverse of ready's order: what acts on a server having
// failed (mcp serve's warning that a selector naming its tools matches none) then follows the "failed" line in
// the log. Published first, a watcher woken by another server's change could see the state and write its warning
// above the line that explains it.
func (u *server) setFailed(err error, wait time.Duration) {
	u.src.progressf("mcp: %s: failed: %v (retrying in %s)", u.name, unwrapServer(err), wait.Round(time.Millisecond))
	u.mu.Lock()
	u.state, u.lastErr, u.nextRetry, u.since = StateFailed, err, time.Now().Add(wait), time.Now()
	u.mu.Unlock()
	u.src.notify()
}

// unwrapServer drops the "mcp server "x":" prefix from progress lines that already start with the name.
func unwrapServer(err error) error {
	if re, ok := err.(*RepeatedFailureError); ok {
		return &RepeatedFailureError{Err: unwrapServer(re.Err), Times: re.Times, Wait: re.Wait}
	}
	var se *ServerError
	if errors.As(err, &se) {
		return fmt.Errorf("%s: %w", se.Op, se.Err)
	}
	return err
}

func (u *server) setClosed() {
	u.mu.Lock()
	u.state, u.session, u.since = StateClosed, nil, time.Now()
	u.mu.Unlock()
}

func (u *server) status() Status {
	u.mu.Lock()
	defer u.mu.Unlock()
	return Status{
		Name:       u.name,
		SourceName: u.sourceName,
		State:      u.state,
		Tools:      len(u.tools),
		Attempts:   u.attempts,
		StartTime:  u.startTime,
		Err:        u.lastErr,
		NextRetry:  u.nextRetry,
		Since:      u.since,

		AttemptDeadline: u.deadline,
		Installer:       u.installer,
	}
}

// sessionFor returns the session to call a remote tool on, or why there is none.
func (u *server) sessionFor(remote string) (*sdk.ClientSession, error) {
	sess, _, err := u.callTarget(remote)
	return sess, err
}

// callTarget is sessionFor with the context of the session's calls, which ends when the session starts closing.
func (u *server) callTarget(remote string) (*sdk.ClientSession, context.Context, error) {
	sess, calls, err := u.readySession("call " + remote)
	if err != nil {
		return nil, nil, err
	}
	u.mu.Lock()
	defer u.mu.Unlock()
	if !u.offered[remote] {
		return nil, nil, &ServerError{Server: u.name, Op: "call " + remote, Err: ErrToolGone}
	}
	return sess, calls, nil
}

// readySession returns the current session and the context of its calls, or why there is none (op names what
// the caller wanted, for the error).
func (u *server) readySession(op string) (*sdk.ClientSession, context.Context, error) {
	u.mu.Lock()
	defer u.mu.Unlock()
	switch {
	case u.state == StateClosed:
		return nil, nil, &ServerError{Server: u.name, Op: op, Err: ErrClosed}
	case u.session == nil || u.state != StateReady:
		cause := u.lastErr
		if cause != nil {
			cause = unwrapServer(cause)
		}
		msg := "not connected"
		if cause != nil {
			msg = cause.Error()
		}
		if !u.nextRetry.IsZero() {
			if wait := time.Until(u.nextRetry); wait > 0 {
				msg += fmt.Sprintf("; next attempt in %s", wait.Round(time.Millisecond))
			} else {
				msg += "; reconnecting now"
			}
		}
		return nil, nil, &ServerError{Server: u.name, Op: op, Err: fmt.Errorf("%w (%s)", ErrUnavailable, msg)}
	}
	return u.session, u.calls, nil
}

// suspectHang asks the supervisor to ping the server, without waiting.
func (u *server) suspectHang() { wake(u.suspect) }
