// Package seam is where mcp/front meets mcp/upstream: Upstream, everything the front uses of a Source (its tools,
// the one Status value it reads about the servers, their resources and prompts, the clients' own sessions, the
// notifications of shared sessions); Call, the scope a front attaches to the context of a client's request; and
// the few helpers both sides need. Both packages import it; it imports neither, so the arrows run front →
// upstream (for the Source type alone), and both → seam, never back.
//
// The interface speaks the MCP SDK's types (resources, prompts, log messages, progress), which the API of neither
// package shows; that is why it lives in an internal package rather than in upstream's exported API. Package
// upstream hands out its implementation through Provide (at init) and Open, so a *upstream.Source offers the
// seam only to packages under mcp/.
package seam

import (
	"context"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolsearch/toolsearch/catalog"
)

// Upstream is everything a front uses of a Source: its tools and their status, the servers and what they offer
// besides tools, the clients' own sessions of per-client servers, and the notifications of shared sessions.
type Upstream interface {
	// Tools are the Source's tools, as Source.Tools returns them.
	Tools() []catalog.Tool
	// Status is where every server is now: the one value the front reads about them.
	Status() Status
	// Changed returns a channel closed at the next change of Tools or Status, and at Close. Take it before
	// reading them, so that no change falls between the two.
	Changed() <-chan struct{}
	// Servers are the enabled servers, sorted by name; the list never changes during the Source's life.
	Servers() []Server
	// FeaturesChanged returns a channel closed at the next change of any server's Features, and at Close. Take
	// it before reading the features, as with Changed.
	FeaturesChanged() <-chan struct{}
	// ListedTool is an upstream tool's handler's definition as its server listed it, under name: what off mode
	// offers its clients. ok is false for a handler that is not an upstream tool's, or whose input schema is
	// not an object schema.
	ListedTool(h catalog.Handler, name string) (tool *sdk.Tool, ok bool)
	// SetLogLevel asks every shared session for level, now and whenever one starts again; "" changes nothing
	// but what later sessions are asked for.
	SetLogLevel(level sdk.LoggingLevel)
	// NewClient starts the scope of one client of the front: its own sessions of per-client servers, whose
	// notifications go to events. Requests made for the client carry it (Call.Client).
	NewClient(events Events) Client
	// Watch sends the notifications of shared sessions (log messages, resource updates) to events until stop.
	Watch(events Events) (stop func())
}

// Status is what the upstream side publishes about its servers. Each server's entry is one consistent snapshot;
// Upstream.Changed says when to read it again.
type Status struct {
	Servers []ServerStatus // sorted by name, as Upstream.Servers
	Closed  bool           // Close has begun: every channel of the seam is closed for good
}

// ServerStatus is one server's entry in a Status.
type ServerStatus struct {
	Server    Server
	State     State
	Err       error     // why it is not ready, or its last failure; nil if it never failed
	NextRetry time.Time // StateFailed: when the next attempt starts; StateRetrying: when the one under way started
	Tools     int       // tools of its last listing (or of the schema cache, while idle)
	// Reason is Err as a person reads it about this server: without the server's name in front.
	Reason string
	Since  time.Time // when it entered State
	// AttemptDeadline is when the attempt under way gives up (zero when none is): while StateStarting, the
	// latest a caller waiting for the server's tools needs to wait.
	AttemptDeadline time.Time
	// Installer is the package runner (npx, uvx, ...) still fetching or installing the server during the attempt
	// under way (it shows progress); empty otherwise.
	Installer string
	// FeaturesListed is set once the resources, templates and prompts of the server's current session have been
	// listed (or their listing failed): before, a ready server's empty Features may only mean "not asked yet".
	FeaturesListed bool
}

// State is where a server is in its life, as a front reports it.
type State string

// The states of a server.
const (
	StateIdle     State = "idle"     // a lazy server not started yet: its tools come from the schema cache
	StateStarting State = "starting" // its first attempt is under way
	StateReady    State = "ready"    // connected: its tools can be called
	StateFailed   State = "failed"   // not connected (Err says why); the next attempt starts at NextRetry
	StateRetrying State = "retrying" // not connected (Err says why the last attempt failed); another is under way
	StateClosed   State = "closed"   // the Source closed
)

// Server is one upstream server as the front sees it. Values compare equal when they are the same server.
type Server interface {
	Name() string       // as configured
	SourceName() string // the safe name in its tools' ids
	// Features are the server's resources, templates and prompts of its last listing, and its capabilities.
	Features() Features
	// ReadResource, GetPrompt and Complete send the request to the server (the session of ctx's client for a
	// per-client server) with the call timeout. The server's own JSON-RPC errors come back as they are;
	// everything else is a *upstream.ServerError naming the server.
	ReadResource(ctx context.Context, params *sdk.ReadResourceParams) (*sdk.ReadResourceResult, error)
	GetPrompt(ctx context.Context, params *sdk.GetPromptParams) (*sdk.GetPromptResult, error)
	Complete(ctx context.Context, params *sdk.CompleteParams) (*sdk.CompleteResult, error)
	// Subscribe and Unsubscribe pass on one client's subscription to a resource, by the server's own URI. A
	// shared session is subscribed once however many clients hold it, and again when it starts anew.
	Subscribe(ctx context.Context, uri string) error
	Unsubscribe(ctx context.Context, uri string) error
}

// Features are what a server offers besides tools. The slices are shared and read only.
type Features struct {
	Resources []*sdk.Resource
	Templates []*sdk.ResourceTemplate
	Prompts   []*sdk.Prompt
	Caps      sdk.ServerCapabilities // of the last session that started
}

// Events receive the notifications of upstream sessions that are not about tools. Both must be set; they are
// called on the SDK's read path of the session, so they must not wait on that session.
type Events struct {
	Log             func(s Server, p *sdk.LoggingMessageParams)
	ResourceUpdated func(s Server, uri string) // by the server's own URI
}

// Client is one client's scope in the Source.
type Client interface {
	// SetLevel records the client's log level and passes it to its own sessions that take one.
	SetLevel(ctx context.Context, level sdk.LoggingLevel)
	// Close ends the client's own sessions, each within the close bound.
	Close()
}

// Call is what a front attaches to the context of one client request, so that the upstream calls the request
// causes carry the client's _meta, report their progress to it, use its own sessions of per-client servers and,
// for a direct call in off mode, hand the upstream result back unchanged. The runtime passes contexts down to
// tool handlers, so the scope reaches the upstream tool handler through the whole pipeline and the sandbox.
type Call struct {
	Client   Client                    // nil: shared sessions only
	Meta     map[string]any            // the client's _meta without the keys that belong to its own connection
	Progress Progress                  // nil when the client asked for no progress
	Capture  func(*sdk.CallToolResult) // set for a direct call in off mode
}

// Progress receives the progress notifications of the upstream calls of one client request; server names the
// upstream.
type Progress interface {
	Report(server string, p *sdk.ProgressNotificationParams)
}

type callKey struct{}

// WithCall attaches a request's scope to ctx.
func WithCall(ctx context.Context, c *Call) context.Context {
	return context.WithValue(ctx, callKey{}, c)
}

// CallFrom is the scope WithCall attached, or nil.
func CallFrom(ctx context.Context) *Call {
	c, _ := ctx.Value(callKey{}).(*Call)
	return c
}

var open func(src any) Upstream

// Provide is called once, by package upstream's init, with the function that opens a Source's seam.
func Provide(f func(src any) Upstream) { open = f }

// Open returns the seam of src, a *upstream.Source.
func Open(src any) Upstream { return open(src) }

// Dialed is a transport a Dialer opened, and what ends it.
type Dialed struct {
	Transport sdk.Transport
	Stop      func(deadline time.Time) // nil: closing the session is enough
}

// Dialer opens a transport to the named server in place of what its config says; a nil *Dialed without an error
// leaves that server to its config. Tests of the front use it to put in-process servers behind a real Source.
type Dialer func(ctx context.Context, server string) (*Dialed, error)

type dialerKey struct{}

// WithDialer makes the upstream.New that gets ctx dial through d. Only packages under mcp/ can reach it.
func WithDialer(ctx context.Context, d Dialer) context.Context {
	return context.WithValue(ctx, dialerKey{}, d)
}

// DialerFrom is the Dialer WithDialer attached, or nil.
func DialerFrom(ctx context.Context) Dialer {
	d, _ := ctx.Value(dialerKey{}).(Dialer)
	return d
}
