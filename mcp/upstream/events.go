package upstream

import (
	"context"
	"sync"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolsearch/toolsearch/mcp/internal/seam"
)

// events fans the notifications of shared sessions out to the fronts of a Source, and keeps what the fronts
// asked of those sessions (a log level, resource subscriptions) so that a session that starts again gets it too.
type events struct {
	mu      sync.Mutex
	fronts  map[*seam.Events]struct{}
	changed chan struct{} // closed at the next change of any server's features
	level   sdk.LoggingLevel
	subs    map[subscription]int // shared subscriptions by how many clients hold them
	closed  bool
}

type subscription struct {
	u   *server
	uri string
}

// watch sends the notifications of shared sessions to ev until stop is called.
func (e *events) watch(ev seam.Events) (stop func()) {
	key := &ev
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.fronts == nil {
		e.fronts = map[*seam.Events]struct{}{}
	}
	e.fronts[key] = struct{}{}
	return func() {
		e.mu.Lock()
		defer e.mu.Unlock()
		delete(e.fronts, key)
	}
}

func (e *events) each(fn func(*seam.Events)) {
	e.mu.Lock()
	fronts := make([]*seam.Events, 0, len(e.fronts))
	for f := range e.fronts {
		fronts = append(fronts, f)
	}
	e.mu.Unlock()
	for _, f := range fronts {
		fn(f)
	}
}

// featuresChanged returns a channel closed at the next change of a server's resources, templates or prompts, and
// at Close. Take it before reading the features, as with Changed.
func (s *Source) featuresChanged() <-chan struct{} {
	s.events.mu.Lock()
	defer s.events.mu.Unlock()
	if s.events.changed == nil {
		s.events.changed = make(chan struct{})
		if s.events.closed {
			close(s.events.changed)
		}
	}
	return s.events.changed
}

func (s *Source) notifyFeatures() {
	s.events.mu.Lock()
	defer s.events.mu.Unlock()
	if s.events.changed != nil && !s.events.closed {
		close(s.events.changed)
		s.events.changed = nil
	}
}

// closeEvents wakes every waiter for good; Close calls it.
func (s *Source) closeEvents() {
	s.events.mu.Lock()
	defer s.events.mu.Unlock()
	s.events.closed = true
	if s.events.changed == nil {
		s.events.changed = make(chan struct{})
	}
	close(s.events.changed)
}

// clientOptions are the options of a session of u: the shared one (scope nil), or a client's own. Notifications
// are routed from there: tools/list_changed and the features' list_changed re-list the shared session (a
// client's own session offers what the shared one listed), progress goes to the call that owns the token, and
// log messages and resource updates go to the fronts (shared) or to the one client (its own session).
func (u *server) clientOptions(scope *clientScope) *sdk.ClientOptions {
	opts := &sdk.ClientOptions{
		// Servers must not ask us for roots: toolsearch has none to offer, and a server such as
		// server-filesystem would replace its configured directories with our empty list.
		Capabilities: &sdk.ClientCapabilities{},
		ProgressNotificationHandler: func(_ context.Context, req *sdk.ProgressNotificationClientRequest) {
			u.src.routes.deliver(req.Params)
		},
	}
	if scope != nil {
		opts.LoggingMessageHandler = func(_ context.Context, req *sdk.LoggingMessageRequest) {
			scope.events.Log(u, req.Params)
		}
		opts.ResourceUpdatedHandler = func(_ context.Context, req *sdk.ResourceUpdatedNotificationRequest) {
			scope.events.ResourceUpdated(u, req.Params.URI)
		}
		return opts
	}
	// The SDK calls these on its read path; listing there would wait on that same path.
	opts.ToolListChangedHandler = func(context.Context, *sdk.ToolListChangedRequest) {
		wake(u.relist)
	}
	opts.ResourceListChangedHandler = func(context.Context, *sdk.ResourceListChangedRequest) {
		wake(u.feat.relist)
	}
	opts.PromptListChangedHandler = func(context.Context, *sdk.PromptListChangedRequest) {
		wake(u.feat.relist)
	}
	opts.LoggingMessageHandler = func(_ context.Context, req *sdk.LoggingMessageRequest) {
		u.src.events.each(func(f *seam.Events) { f.Log(u, req.Params) })
	}
	opts.ResourceUpdatedHandler = func(_ context.Context, req *sdk.ResourceUpdatedNotificationRequest) {
		u.src.events.each(func(f *seam.Events) { f.ResourceUpdated(u, req.Params.URI) })
	}
	return opts
}

// wake wakes a capacity-1 channel without blocking.
func wake(ch chan struct{}) {
	select {
	case ch <- struct{}{}:
	default:
	}
}

// setLogLevel asks every shared session that takes a log level for level, and remembers it for sessions that
// start later. "" leaves the sessions as they are.
func (s *Source) setLogLevel(level sdk.LoggingLevel) {
	s.events.mu.Lock()
	if s.events.level == level {
		s.events.mu.Unlock()
		return
	}
	s.events.level = level
	s.events.mu.Unlock()
	if level == "" {
		return
	}
	for _, u := range s.servers {
		sess, calls, err := u.readySession("set log level")
		if err != nil || !supportsLogging(sess) {
			continue
		}
		u.withTimeout(calls, func(ctx context.Context) error {
			return sess.SetLoggingLevel(ctx, &sdk.SetLoggingLevelParams{Level: level})
		})
	}
}

// logLevel is the most verbose level a front's client asked for, "" if none did.
func (s *Source) logLevel() sdk.LoggingLevel {
	s.events.mu.Lock()
	defer s.events.mu.Unlock()
	return s.events.level
}
