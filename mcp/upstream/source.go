package upstream

import (
	"context"
	"fmt"
	"io"
	"sort"
	"strings"
	"sync"
	"time"

	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"

	"github.com/toolsearch/toolsearch/catalog"
	"github.com/toolsearch/toolsearch/internal/textcut"
	"github.com/toolsearch/toolsearch/mcp/internal/seam"
)

// Defaults of Options.
const (
	DefaultStartTimeout  = 30 * time.Second
	DefaultCallTimeout   = 60 * time.Second
	DefaultCloseTimeout  = 5 * time.Second
	DefaultRetryDelay    = time.Second
	DefaultMaxRetryDelay = time.Minute
)

// Bounds on what one server may hand us. A server is untrusted: a listing that never ends, a tool whose schema
// is megabytes, or a thousand pages of them, must not exhaust the host.
const (
	// MaxToolsPerServer is the most tools kept of one server; the rest of its listing is ignored.
	MaxToolsPerServer = 1000
	// MaxSchemaBytes bounds one input or output schema (compact JSON); a tool with a larger one is dropped.
	MaxSchemaBytes = 256 << 10
	// MaxToolBytes bounds one tool definition as the server sent it; a larger one is dropped from its page before
	// anything of it is decoded.
	MaxToolBytes = 1 << 20
	// MaxListingBytes bounds one listing: the pages of one tools/list, as sent, and the tools kept of them.
	// Listing stops at the page that passes it, keeping the tools that fit.
	MaxListingBytes = 16 << 20
	// MaxMessageBytes bounds one message a server sends (a line on stdio, a response body or event over HTTP).
	// A larger one ends the connection, and the server is retried.
	MaxMessageBytes = 16 << 20
)

// The defaults of the bounds on resources/read and prompts/get, which pass whole through the front to its
// clients: a result is decoded, then encoded again, so one costs the host about ten times its size while in
// flight.
const (
	// DefaultMaxReadBytes is Options.MaxReadBytes's default.
	DefaultMaxReadBytes = 4 << 20
	// DefaultMaxConcurrentReads is Options.MaxConcurrentReads's default.
	DefaultMaxConcurrentReads = 4
)

// DefaultMaxClientInstances is Options.MaxClientInstances's default: sixteen browsers or shells, say, which a small
// host still holds, where the front's hundred sessions each with its own would not.
const DefaultMaxClientInstances = 16

// Options configure New. A nil *Options means every default.
type Options struct {
	// Progress receives one line per event a person starting the servers wants to see: starting, ready with
	// the tool count and time taken, failed with the reason and the next retry, tools changed. Usually os.Stderr
	// (never stdout when stdout carries the MCP protocol). nil discards.
	Progress io.Writer
	// ServerStderr receives what child processes write to their stderr, each line prefixed with "[name] ".
	// nil keeps only the last lines, which failures quote.
	ServerStderr io.Writer
	// StartTimeout bounds one attempt to start or connect a server, initialize the session and list its
	// tools. 0 means DefaultStartTimeout.
	StartTimeout time.Duration
	// CallTimeout bounds every tools/call. When it expires, the server is pinged; one that does not answer is
	// marked unavailable and reconnected. 0 means DefaultCallTimeout.
	CallTimeout time.Duration
	// CloseTimeout bounds Close when its context has no earlier deadline, and the shutdown of one session
	// before its process is killed. 0 means DefaultCloseTimeout.
	CloseTimeout time.Duration
	// RetryDelay is the wait before the first retry of a failed server; it doubles (with jitter) up to
	// MaxRetryDelay, and starts over once a server has stayed up for MaxRetryDelay. 0 means DefaultRetryDelay
	// and DefaultMaxRetryDelay.
	RetryDelay, MaxRetryDelay time.Duration
	// SchemaCacheDir holds the cached listings of lazy servers (ServerConfig.Lazy), one file per server config.
	// "" means the toolsearch/mcp-schemas directory of the user's cache directory (os.UserCacheDir); where there
	// is none, lazy servers start at once.
	SchemaCacheDir string
	// ChildEnv is added to the environment of every server started as a child process, before the server's own
	// Env (which wins). The toolsearch command uses it to mark its children, so that a toolsearch started by one
	// of them can tell it would nest.
	ChildEnv map[string]string
	// TracerProvider and MeterProvider receive the Source's spans (each request to a server, each start-up) and
	// metrics (request durations, servers by state); nil means the global providers of go.opentelemetry.io/otel,
	// which do nothing unless the program installs an SDK. A request's span is a child of the span in its
	// context, and its trace context goes to the server in the request's _meta (and, over HTTP, its headers).
	TracerProvider trace.TracerProvider
	MeterProvider  metric.MeterProvider
	// MaxReadBytes bounds one resources/read or prompts/get result as the server sent it; a larger one fails
	// with ErrResultTooLarge before it is decoded. 0 means DefaultMaxReadBytes; at most MaxMessageBytes.
	MaxReadBytes int
	// MaxConcurrentReads is how many resources/read and prompts/get requests one server may have in flight at
	// once; more wait for one to end (within their context). 0 means DefaultMaxConcurrentReads.
	MaxConcurrentReads int
	// MaxClientInstances is how many client sessions of its own (each its own process, for a command) one
	// per-client server (ServerConfig.Isolation) may have running or starting at once; the server's
	// ServerConfig.MaxInstances overrides it. A client whose call would start one more fails at once with
	// ErrTooManyInstances; a slot frees as soon as an instance has stopped (its client went away, it crashed) or
	// its start failed. The server's shared session, which every server keeps, is not counted. 0 means
	// DefaultMaxClientInstances.
	MaxClientInstances int
}

// State is where a server is in its life.
type State string

// The states of a server.
const (
	StateIdle     State = "idle"     // a lazy server not started yet: its tools come from the schema cache
	StateStarting State = "starting" // the first attempt has not finished yet
	StateReady    State = "ready"    // connected; its tools can be called
	StateFailed   State = "failed"   // not connected; a retry is scheduled (Status.NextRetry)
	StateClosed   State = "closed"   // Close was called
)

// Status is a snapshot of one server.
type Status struct {
	Name       string // as configured
	SourceName string // the safe name in its tools' ids
	State      State
	Tools      int           // tools of the last successful listing
	Attempts   int           // connection attempts so far
	StartTime  time.Duration // how long the last successful attempt took (start, initialize, list)
	Err        error         // why it is not ready (or the last failure), nil if it never failed
	NextRetry  time.Time     // when StateFailed: the next attempt
	Since      time.Time     // when it entered State
	// AttemptDeadline is when the attempt under way gives up (zero when none is): while StateStarting, the
	// latest a caller waiting for this server's tools needs to wait.
	AttemptDeadline time.Time
	// Installer is the package runner (npx, uvx, ...) starting the server while that start shows progress: it
	// is still fetching or installing it. Empty otherwise.
	Installer string
}

// Source turns the MCP servers of a Config into catalog tools (source "mcp"). It connects to every server in
// parallel, keeps each connected (a server that fails is retried with backoff while the others keep working),
// follows notifications/tools/list_changed, and routes each tool's calls to its server. A Source is safe for
// concurrent use.
type Source struct {
	opts    options
	servers []*server // sorted by name

	ctx    context.Context // ends at Close: every goroutine of the Source watches it
	cancel context.CancelFunc
	wg     sync.WaitGroup // the supervisors

	mu            sync.Mutex
	changed       chan struct{}
	closed        bool
	closeDeadline time.Time

	closeOnce sync.Once
	closeErr  error

	tel    *telemetry
	routes progressRoutes // progress of upstream calls in flight, by token
	events events         // notifications of shared sessions for the fronts
}

// options are Options with defaults applied.
type options struct {
	progress        io.Writer
	serverStderr    io.Writer
	startTimeout    time.Duration
	startTimeoutSet bool // Options.StartTimeout was given: it applies to package runners too
	callTimeout     time.Duration
	closeTimeout    time.Duration
	retryDelay      time.Duration
	maxRetryDelay   time.Duration
	cacheDir        string
	childEnv        map[string]string
	maxReadBytes    int
	maxReads        int
	maxInstances    int
	progressMu      *sync.Mutex
}

func (o *Options) resolve() options {
	var r options
	if o != nil {
		r = options{
			progress:      o.Progress,
			serverStderr:  o.ServerStderr,
			startTimeout:  o.StartTimeout,
			callTimeout:   o.CallTimeout,
			closeTimeout:  o.CloseTimeout,
			retryDelay:    o.RetryDelay,
			maxRetryDelay: o.MaxRetryDelay,
			cacheDir:      o.SchemaCacheDir,
			childEnv:      o.ChildEnv,
			maxReadBytes:  o.MaxReadBytes,
			maxReads:      o.MaxConcurrentReads,
			maxInstances:  o.MaxClientInstances,
		}
	}
	if r.maxReadBytes <= 0 {
		r.maxReadBytes = DefaultMaxReadBytes
	}
	r.maxReadBytes = min(r.maxReadBytes, MaxMessageBytes)
	if r.maxReads <= 0 {
		r.maxReads = DefaultMaxConcurrentReads
	}
	if r.maxInstances <= 0 {
		r.maxInstances = DefaultMaxClientInstances
	}
	orDefault := func(d *time.Duration, def time.Duration) {
		if *d <= 0 {
			*d = def
		}
	}
	r.startTimeoutSet = r.startTimeout > 0
	orDefault(&r.startTimeout, DefaultStartTimeout)
	orDefault(&r.callTimeout, DefaultCallTimeout)
	orDefault(&r.closeTimeout, DefaultCloseTimeout)
	orDefault(&r.retryDelay, DefaultRetryDelay)
	orDefault(&r.maxRetryDelay, DefaultMaxRetryDelay)
	r.maxRetryDelay = max(r.maxRetryDelay, r.retryDelay)
	if r.progress == nil {
		r.progress = io.Discard
	}
	r.progressMu = new(sync.Mutex)
	return r
}

// New starts every enabled server of cfg in parallel and returns once each has connected and listed its tools
// or failed its first attempt (each attempt is bounded by Options.StartTimeout or the server's StartTimeoutMs),
// or when ctx ends; meanwhile the progress writer says which servers it is still waiting for. A lazy server with
// cached tools is not waited for: it starts on first use. ctx bounds only that wait: servers still starting
// then, and failed ones, keep being tried in the background until Close. A server that fails never makes New
// fail; the error is reserved for an invalid config. The caller must Close the Source.
func New(ctx context.Context, cfg *Config, opts *Options) (*Source, error) {
	dial := dialConfigured
	if d := seam.DialerFrom(ctx); d != nil {
		// Only tests under mcp/ can set one: the front's put in-process servers behind a real Source this way.
		dial = func(ctx context.Context, u *server) (*dialed, error) {
			conn, err := d(ctx, u.name)
			switch {
			case err != nil:
				return nil, err
			case conn == nil:
				return dialConfigured(ctx, u)
			}
			return &dialed{transport: conn.Transport, stop: conn.Stop}, nil
		}
	}
	return newSource(ctx, cfg, opts, dial)
}

func newSource(ctx context.Context, cfg *Config, opts *Options, dial dialFunc) (*Source, error) {
	if cfg == nil {
		cfg = &Config{}
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	s := &Source{opts: opts.resolve(), changed: make(chan struct{})}
	var tp trace.TracerProvider
	var mp metric.MeterProvider
	if opts != nil {
		tp, mp = opts.TracerProvider, opts.MeterProvider
	}
	s.tel = newTelemetry(tp, mp)
	s.observeServers(mp)
	if s.opts.cacheDir == "" {
		s.opts.cacheDir = defaultSchemaCacheDir()
	}
	s.ctx, s.cancel = context.WithCancel(context.Background())

	var names []string
	for _, name := range cfg.names() {
		if !cfg.Servers[name].Disabled {
			names = append(names, name)
		}
	}
	sourceNames := uniqueSourceNames(names)
	for i, name := range names {
		s.servers = append(s.servers, newServer(s, name, sourceNames[i], cfg.Servers[name], dial))
	}
	if len(names) > 0 {
		s.progressf("mcp: starting %d server(s): %s", len(names), strings.Join(names, ", "))
	}
	var waitFor []*server
	for _, u := range s.servers {
		if !u.config().Lazy || !u.startLazily() {
			waitFor = append(waitFor, u)
		}
		s.wg.Add(1)
		go u.supervise()
	}
	s.awaitFirstAttempts(ctx, waitFor)
	return s, nil
}

// firstProgressAfter is when New first says which servers it is still waiting for; it then says so again after
// twice as long each time.
const firstProgressAfter = 2 * time.Second

// awaitFirstAttempts waits until each server's first attempt has finished or ctx ends, saying on the progress
// writer which servers it is still waiting for, at growing intervals.
func (s *Source) awaitFirstAttempts(ctx context.Context, servers []*server) {
	began := time.Now()
	interval := firstProgressAfter
	tick := time.NewTimer(interval)
	defer tick.Stop()
	for _, u := range servers {
		for waiting := true; waiting; {
			select {
			case <-u.first:
				waiting = false
			case <-ctx.Done():
				return
			case <-tick.C:
				var names []string
				for _, v := range servers {
					select {
					case <-v.first:
					default:
						names = append(names, v.name)
					}
				}
				s.progressf("mcp: still starting after %s: %s", time.Since(began).Round(time.Second), strings.Join(names, ", "))
				interval *= 2
				tick.Reset(interval)
			}
		}
	}
}

// uniqueSourceNames makes the server names safe ([A-Za-z0-9_-], at most 30 characters) and unique: two configured
// names that differ only in characters made safe ("my server", "my_server") would otherwise share tool ids.
func uniqueSourceNames(names []string) []string {
	out := make([]string, len(names))
	used := make(map[string]bool, len(names))
	for i, name := range names {
		base, _ := catalog.SafeMCPNames(name, nil)
		s := base
		for n := 2; used[s]; n++ {
			suffix := fmt.Sprintf("-%d", n)
			s = textcut.Prefix(base, catalog.MaxMCPServerName-len(suffix)) + suffix
		}
		used[s] = true
		out[i] = s
	}
	return out
}

// Tools returns every tool of every server, in server-name order and then in the order each server listed
// them: source "mcp", safe names, the server's schemas as they came (untrusted), and a Handler that calls the
// server. Tools of a server that is down stay in the list: their calls (and the runtime's availability check)
// fail with an error naming the server, until it is back. A server that never connected has no tools yet. The
// slice is the caller's; after Close it is empty.
func (s *Source) Tools() []catalog.Tool {
	s.mu.Lock()
	closed := s.closed
	s.mu.Unlock()
	if closed {
		return nil
	}
	var tools []catalog.Tool
	for _, u := range s.servers {
		tools = append(tools, u.snapshot()...)
	}
	return tools
}

// Changed returns a channel that is closed at the next change of what Tools returns or of a server's
// availability (a server came up, failed, or sent tools/list_changed), and at Close. Take the channel before
// calling Tools, so no change falls between the two:
//
//	for {
//		changed := src.Changed()
//		rebuild(src.Tools())
//		<-changed
//	}
func (s *Source) Changed() <-chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.changed
}

// notify wakes everyone waiting on Changed.
func (s *Source) notify() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return
	}
	close(s.changed)
	s.changed = make(chan struct{})
}

// Status reports every enabled server, sorted by name.
func (s *Source) Status() []Status {
	out := make([]Status, len(s.servers))
	for i, u := range s.servers {
		out[i] = u.status()
	}
	return out
}

// Close ends every session and child process. It returns within the earlier of ctx's deadline and
// Options.CloseTimeout: a server that does not shut down in time has its process group killed, and one whose
// transport still does not let go is abandoned and named in the error (which then wraps
// context.DeadlineExceeded). Calls in flight fail. Close is idempotent.
func (s *Source) Close(ctx context.Context) error {
	s.closeOnce.Do(func() {
		if s.tel.reg != nil {
			_ = s.tel.reg.Unregister()
		}
		deadline := time.Now().Add(s.opts.closeTimeout)
		if d, ok := ctx.Deadline(); ok && d.Before(deadline) {
			deadline = d
		}
		s.mu.Lock()
		s.closed = true
		// The sessions get a little less than the whole bound, so that a kill at their deadline still has time
		// to reap the process before Close itself must return.
		s.closeDeadline = deadline.Add(-min(time.Until(deadline)/5, 500*time.Millisecond))
		close(s.changed)
		s.mu.Unlock()
		s.closeEvents()
		s.cancel()

		done := make(chan struct{})
		go func() {
			s.wg.Wait()
			close(done)
		}()
		timer := time.NewTimer(time.Until(deadline))
		defer timer.Stop()
		select {
		case <-done:
		case <-ctx.Done():
		case <-timer.C:
		}
		var stuck []string
		for _, u := range s.servers {
			if !u.exited() {
				u.killNow()
				stuck = append(stuck, u.name)
			} else if u.abandonedSession() {
				stuck = append(stuck, u.name)
			}
		}
		if len(stuck) > 0 {
			sort.Strings(stuck)
			s.closeErr = fmt.Errorf("mcp: close: the session(s) of %s did not shut down in time and were abandoned: %w",
				strings.Join(stuck, ", "), context.DeadlineExceeded)
		}
	})
	return s.closeErr
}

func (s *Source) isClosed() bool {
	closed, _ := s.closing()
	return closed
}

// closing reports whether Close has begun, and the deadline it set.
func (s *Source) closing() (bool, time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.closed, s.closeDeadline
}

func (s *Source) progressf(format string, args ...any) {
	s.opts.progressMu.Lock()
	defer s.opts.progressMu.Unlock()
	fmt.Fprintf(s.opts.progress, format+"\n", args...)
}
