package runtime

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"

	"github.com/toolsearch/toolsearch/catalog"
	"github.com/toolsearch/toolsearch/hostfns"
	"github.com/toolsearch/toolsearch/wasm"
)

// Errors of the runtime itself. Tool-level failures are never Go errors: they are a CallResult with IsError.
var (
	// ErrClosed is returned by StartRun after Close.
	ErrClosed = errors.New("runtime: closed")
	// ErrRunClosed is returned by Execute after Run.Close.
	ErrRunClosed = errors.New("runtime: run closed")
	// ErrToolConflict is wrapped by StartRun when two tools the model would see share a name, or a client tool
	// shares its name with a cataloged tool in directory mode ("client tool name conflict: <names>").
	ErrToolConflict = errors.New("tool name conflict")
)

// probeTimeout bounds the start-up probe of the code sandbox, which compiles nothing (the sandbox is compiled
// already) and runs `return 1`.
const probeTimeout = 10 * time.Second

// Options configure New. A nil *Options is the zero value: Tool Search off, no policy, no hooks.
type Options struct {
	// Config is tools.toolSearch, usually from ParseConfig. Zero fields take their defaults.
	Config Config
	// Policy filters every run's tools (nil allows all). Runs may bring their own (RunRequest.Policy), and
	// SetPolicy replaces it while runs are in flight: calls check the policy again when they happen.
	Policy *catalog.Policy
	// Approver is asked before every real tool call; nil approves everything except what needs approval: calls
	// the policy asks about (Rule.Ask) and, with pinning, tools whose definition changed are then blocked.
	Approver Approver
	// Pins turns on pinned tool definitions with this pin file; nil opens Config.PinFile when that is set, and
	// pins nothing otherwise.
	Pins *PinFile
	// Hooks run in order before every real tool call, after approval; each may block the call or rewrite its
	// arguments.
	Hooks []BeforeToolCallHook
	// Logger receives one line per run and per call; nil discards.
	Logger *slog.Logger
	// SessionLog receives each run's records (JSON Lines with NewSessionLogDir); nil keeps none.
	SessionLog SessionLogger
	// Sandbox runs tool_search_code. Share one across runtimes of a process: creating one costs about a second.
	// nil means New creates one (with SandboxFactory) when the mode is code, and Close closes it; a Sandbox
	// passed here is never closed by the runtime.
	Sandbox *hostfns.Sandbox
	// SandboxFactory creates the sandbox when Sandbox is nil; nil means hostfns.New with the memory cap of
	// Config. It exists so tests (and unusual hosts) can make the sandbox fail to start.
	SandboxFactory func(ctx context.Context) (*hostfns.Sandbox, error)
	// CatalogCache keeps each session's catalog between runs while its tools do not change; nil means a cache
	// private to this runtime.
	CatalogCache *catalog.Cache
	// SandboxInBackground makes New return before the code sandbox is ready (in code mode; creating one costs
	// about half a second to a second): the sandbox is created and probed in the background, runs start in code
	// mode meanwhile, and the first tool_search_code waits for it, bounded by its context. Mode reports
	// ModeCode until the outcome is known; if the sandbox cannot start, the fallback is logged, Mode and
	// FallbackReason report it, runs started from then on are in tools mode, and tool_search_code in a run
	// started before says it is unavailable and why. A server that must answer its client at once (`toolsearch
	// mcp serve`) sets it; without it New waits, and Mode is final when New returns.
	SandboxInBackground bool
	// TracerProvider and MeterProvider receive the runtime's spans and metrics (see the README's list); nil
	// means the global providers of go.opentelemetry.io/otel, which do nothing unless the program installs an
	// SDK. Spans take their parent from the context of StartRun and Execute.
	TracerProvider trace.TracerProvider
	MeterProvider  metric.MeterProvider
	// TraceContent also records tool arguments, results and search queries in span attributes. They can hold
	// secrets, so they are left out unless this is set.
	TraceContent bool
}

// Runtime is Tool Search for one deployment: the config, the policy, the hooks and the code sandbox, shared by
// every run. It is safe for concurrent use; runs are independent of each other.
type Runtime struct {
	cfg        Config
	mode       Mode   // cfg.Mode after the sandbox probe
	fallback   string // why code mode fell back to tools mode, or ""
	policy     atomic.Pointer[policyRef]
	approver   Approver
	pins       *PinFile
	hooks      []BeforeToolCallHook
	log        *slog.Logger
	sessionLog SessionLogger
	sandbox    *hostfns.Sandbox
	ownSandbox bool
	// sandboxDone is closed once the sandbox's outcome is known: sandbox, ownSandbox, mode and fallback are
	// written before and only read after (at once in every mode but code, and in code mode unless
	// Options.SandboxInBackground). stopSandbox ends a background start that Close overtakes.
	sandboxDone chan struct{}
	stopSandbox context.CancelFunc
	cache       *catalog.Cache
	schemas     *schemaCache
	tel         *telemetry

	closeOnce sync.Once
	closed    atomic.Bool
}

// policyRef boxes a policy so that "no policy" (allow all) can be stored atomically.
type policyRef struct{ p *catalog.Policy }

// New builds a runtime. In code mode it makes sure the sandbox can run here — it creates one if Options has
// none, then runs `return 1` in it — and when that fails it falls back to tools mode and logs why, so
// New does not fail because of the host. The error is reserved for invalid options and a ctx that ended.
func New(ctx context.Context, opts *Options) (*Runtime, error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	for i, h := range o.Hooks {
		if h == nil {
			return nil, fmt.Errorf("runtime: Options.Hooks[%d] is nil", i)
		}
	}
	if err := o.Policy.Validate(); err != nil {
		return nil, fmt.Errorf("runtime: Options.Policy: %w", err)
	}
	rt := &Runtime{
		cfg:        o.Config.resolved(),
		approver:   o.Approver,
		pins:       o.Pins,
		hooks:      append([]BeforeToolCallHook(nil), o.Hooks...),
		log:        o.Logger,
		sessionLog: o.SessionLog,
		cache:      o.CatalogCache,
		schemas:    newSchemaCache(0),
		tel:        newTelemetry(o.TracerProvider, o.MeterProvider, o.TraceContent),
	}
	if rt.log == nil {
		rt.log = slog.New(slog.DiscardHandler)
	}
	if rt.pins == nil && rt.cfg.PinFile != "" {
		pins, err := OpenPinFile(rt.cfg.PinFile)
		if err != nil {
			return nil, fmt.Errorf("runtime: pinFile: %w", err)
		}
		rt.pins = pins
	}
	if rt.cache == nil {
		rt.cache = catalog.NewCache(nil)
	}
	rt.policy.Store(&policyRef{o.Policy})
	rt.mode = rt.cfg.Mode
	rt.sandboxDone = make(chan struct{})
	switch {
	case rt.mode != ModeCode:
		close(rt.sandboxDone)
	case o.SandboxInBackground:
		// Not New's ctx, which may end as soon as New returns: the start lives until it is done or Close.
		bg, cancel := context.WithCancel(context.WithoutCancel(ctx))
		rt.stopSandbox = cancel
		go func() {
			defer cancel()
			rt.settleSandbox(rt.openSandbox(bg, &o))
		}()
	default:
		err := rt.openSandbox(ctx, &o)
		if err != nil && ctx.Err() != nil {
			return nil, ctx.Err() // the caller gave up; that says nothing about this host
		}
		rt.settleSandbox(err)
	}
	return rt, nil
}

// settleSandbox records the outcome of starting the sandbox: on failure, code mode falls back to tools mode.
func (rt *Runtime) settleSandbox(err error) {
	if err != nil {
		rt.mode = ModeTools
		rt.fallback = err.Error()
		if !rt.closed.Load() {
			rt.log.Warn("tool search: the code sandbox cannot start on this host; using tools mode instead",
				"error", err)
		}
	}
	close(rt.sandboxDone)
}

// awaitSandbox returns the sandbox once it is ready, waiting for a background start no longer than ctx. With
// no sandbox it says why, for the model.
func (rt *Runtime) awaitSandbox(ctx context.Context) (sb *hostfns.Sandbox, unavailable string, err error) {
	select {
	case <-rt.sandboxDone:
	case <-ctx.Done():
		return nil, "", ctx.Err()
	}
	switch {
	case rt.sandbox != nil:
		return rt.sandbox, "", nil
	case rt.fallback != "":
		return nil, "the code sandbox could not start on this host (" + rt.fallback + "); runs started from now " +
			"on use tools mode (tool_search, tool_describe, tool_call)", nil
	}
	return nil, "the sandbox is not running", nil
}

// SandboxReady is closed once the code sandbox is ready or has failed (see Options.SandboxInBackground); it
// is closed from the start in every mode but code, and when New waited for the sandbox.
func (rt *Runtime) SandboxReady() <-chan struct{} { return rt.sandboxDone }

// openSandbox provides the sandbox and proves it works. A sandbox that fails the probe is closed if we made it.
func (rt *Runtime) openSandbox(ctx context.Context, o *Options) error {
	sb, owned := o.Sandbox, false
	if sb == nil {
		factory := o.SandboxFactory
		if factory == nil {
			memory := max(rt.cfg.CodeMemoryBytes, wasm.DefaultMaxMemoryBytes)
			factory = func(ctx context.Context) (*hostfns.Sandbox, error) {
				return hostfns.New(ctx, &hostfns.Options{Engine: wasm.Options{MaxMemoryBytes: memory}})
			}
		}
		var err error
		if sb, err = callFactory(ctx, factory); err != nil {
			return err
		}
		if sb == nil {
			return fmt.Errorf("%w: the sandbox factory returned no sandbox", wasm.ErrStartup)
		}
		owned = true
	}
	if err := probe(ctx, sb); err != nil {
		if owned {
			closeCtx, cancel := context.WithTimeout(context.Background(), probeTimeout)
			_ = sb.Close(closeCtx)
			cancel()
		}
		return err
	}
	rt.sandbox, rt.ownSandbox = sb, owned
	return nil
}

// callFactory turns a panicking factory into a start-up failure: the fallback exists for exactly this case.
func callFactory(ctx context.Context, f func(context.Context) (*hostfns.Sandbox, error)) (sb *hostfns.Sandbox, err error) {
	defer func() {
		if p := recover(); p != nil {
			sb, err = nil, fmt.Errorf("%w: the sandbox factory panicked: %v", wasm.ErrStartup, p)
		}
	}()
	return f(ctx)
}

func probe(ctx context.Context, sb *hostfns.Sandbox) error {
	ctx, cancel := context.WithTimeout(ctx, probeTimeout)
	defer cancel()
	res, err := sb.Run(ctx, "return 1", probeBridge{}, &hostfns.RunOptions{Timeout: probeTimeout})
	if err != nil {
		return fmt.Errorf("sandbox probe failed: %w", err)
	}
	if string(res.Value) != "1" {
		return fmt.Errorf("%w: sandbox probe returned %s, want 1", wasm.ErrStartup, res.Value)
	}
	return nil
}

// probeBridge answers the probe script, which never calls it.
type probeBridge struct{}

func (probeBridge) Search(context.Context, json.RawMessage) (json.RawMessage, error) {
	return nil, errors.New("probe")
}
func (probeBridge) Describe(context.Context, json.RawMessage) (json.RawMessage, error) {
	return nil, errors.New("probe")
}
func (probeBridge) Call(context.Context, json.RawMessage) (json.RawMessage, error) {
	return nil, errors.New("probe")
}

// Config is the resolved configuration the runtime was built with.
func (rt *Runtime) Config() Config { return rt.cfg }

// Mode is the mode runs get: Config().Mode, or ModeTools when code mode fell back. While the sandbox starts in
// the background it is ModeCode.
func (rt *Runtime) Mode() Mode {
	select {
	case <-rt.sandboxDone:
		return rt.mode
	default:
		return rt.cfg.Mode
	}
}

// FallbackReason says why code mode fell back to tools mode, or "" when it did not (or has not yet: see
// SandboxReady).
func (rt *Runtime) FallbackReason() string {
	select {
	case <-rt.sandboxDone:
		return rt.fallback
	default:
		return ""
	}
}

// SetPolicy replaces the policy of runs that did not bring their own. It applies to calls and searches from now
// on, including those of runs already started: a tool that the new policy denies can no longer be called.
// Check it with Validate first: an entry Validate refuses fails closed (see catalog.Policy.Validate).
func (rt *Runtime) SetPolicy(p *catalog.Policy) { rt.policy.Store(&policyRef{p}) }

// Policy is the current runtime-wide policy.
func (rt *Runtime) Policy() *catalog.Policy { return rt.policy.Load().p }

// Close releases the sandbox if the runtime created it, bounded by ctx; a sandbox still starting in the
// background is stopped and waited for. Runs should be closed first. Close is idempotent.
func (rt *Runtime) Close(ctx context.Context) error {
	var err error
	rt.closeOnce.Do(func() {
		rt.closed.Store(true)
		if rt.stopSandbox != nil {
			rt.stopSandbox()
		}
		started := false // the sandbox start is over: closing it must not depend on ctx, which select would pick at random
		select {
		case <-rt.sandboxDone:
			started = true
		default:
		}
		if !started {
			select {
			case <-rt.sandboxDone:
			case <-ctx.Done():
				// The start ignores its cancellation for now; what it made is closed when it is done.
				go func() {
					<-rt.sandboxDone
					rt.closeSandbox(context.Background())
				}()
				err = ctx.Err()
				return
			}
		}
		err = rt.closeSandbox(ctx)
	})
	return err
}

func (rt *Runtime) closeSandbox(ctx context.Context) error {
	if rt.ownSandbox && rt.sandbox != nil {
		return rt.sandbox.Close(ctx)
	}
	return nil
}
