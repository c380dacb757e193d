package front

import (
	"context"
	"strings"
	"sync"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolsearch/toolsearch/catalog"
	"github.com/toolsearch/toolsearch/mcp/internal/seam"
	"github.com/toolsearch/toolsearch/runtime"
)

// sourceFeed is the upstream Source as the runtime's ToolFeed: the front's runs follow the servers as they start,
// fail and relist, and a call made while a server is still starting waits for it instead of telling the model
// that its tools do not exist. One feed serves every run of the front.
type sourceFeed struct {
	up seam.Upstream

	mu   sync.Mutex
	last []catalog.Tool // the tools before the Source closed: its runs keep them, and their calls say it closed
	// onChanged, set by tests, runs once at the next Changed call: a test learns that a run has begun to follow
	// the feed (to wait for a server) without sleeping for it.
	onChanged func()
}

func (f *sourceFeed) Changed() <-chan struct{} {
	f.mu.Lock()
	hook := f.onChanged
	f.onChanged = nil
	f.mu.Unlock()
	if hook != nil {
		go hook()
	}
	return f.up.Changed()
}

func (f *sourceFeed) Current() ([]catalog.Tool, []runtime.PendingSource) {
	st := f.up.Status()
	f.mu.Lock()
	defer f.mu.Unlock()
	if !st.Closed {
		f.last = f.up.Tools()
	}
	return f.last, pendingSources(st)
}

// pendingSources are the servers whose tools a run may lack: those starting with no tools yet (a lazy server
// waking up already has its cached ones), and those that failed.
func pendingSources(st seam.Status) []runtime.PendingSource {
	var out []runtime.PendingSource
	for _, s := range st.Servers {
		p := runtime.PendingSource{Name: s.Server.Name(), SourceName: s.Server.SourceName(), Since: s.Since, Reason: s.Reason}
		switch {
		case s.State == seam.StateStarting && s.Tools == 0:
			p.Starting, p.ReadyBy, p.Installer = true, s.AttemptDeadline, s.Installer
		case s.State == seam.StateFailed || s.State == seam.StateRetrying:
			p.RetryAt = s.NextRetry
		default:
			continue
		}
		out = append(out, p)
	}
	return out
}

// runRequest is how every run of the front gets its tools: the in-process ones, and the Source's through the
// feed.
func (s *Server) runRequest(sessionID, runID string) runtime.RunRequest {
	req := runtime.RunRequest{SessionID: sessionID, RunID: runID, Tools: s.opts.Tools, CatalogScope: s.opts.SessionID,
		MaxSourceWait: s.opts.StartWait}
	if s.feed != nil {
		req.Feed = s.feed
	}
	return req
}

// listWaits says whether tools/list (and a call of a name not offered yet) waits for servers still starting: in
// off mode, where every tool is listed, and when tools.toolSearch.visible keeps upstream tools in the list beside
// the control tools, so that a client listing at connect sees them.
func (s *Server) listWaits() bool { return s.off || len(s.rt.Config().Visible) > 0 }

// visibleMayGrow reports whether a server still starting may bring a tool that tools.toolSearch.visible keeps in
// view: one a server-scoped selector names (server:, mcp:<server>:, listed:<server>:), or any server at all
// when a selector is not scoped to one (a name, a glob, an annotation, a group).
func (s *Server) visibleMayGrow() bool {
	visible := s.rt.Config().Visible
	if s.off || len(visible) == 0 || s.up == nil {
		return false
	}
	for _, p := range pendingSources(s.up.Status()) {
		if !p.Starting {
			continue
		}
		for _, sel := range visible {
			server, scoped := selectorServer(sel)
			if !scoped || strings.EqualFold(server, p.SourceName) || strings.EqualFold(server, p.Name) {
				return true
			}
		}
	}
	return false
}

// selectorServer is the server a policy selector is scoped to, if it is scoped to one.
func selectorServer(sel string) (server string, scoped bool) {
	kind, rest, ok := strings.Cut(sel, ":")
	if !ok {
		return "", false
	}
	switch strings.ToLower(kind) {
	case "server":
		return rest, !strings.ContainsAny(rest, "*?")
	case "mcp", "listed":
		server, _, ok := strings.Cut(rest, ":")
		return server, ok && !strings.ContainsAny(server, "*?")
	}
	return "", false
}

// awaitStarting is off mode's wait for servers still starting, before a tools/list or a tools/call of a name the
// front does not offer yet: the SDK answers those from the tools registered with it, so the front brings its view
// up to date first, until no server is starting with no tools, ready(), the wait's bound (the servers' own start
// deadlines, ServerOptions.StartWait) or ctx's end. report, when set, hears how the wait goes.
func (s *Server) awaitStarting(ctx context.Context, report func(runtime.WaitProgress), ready func() bool) []runtime.PendingSource {
	return s.awaitPending(ctx, report, func(st seam.Status) []runtime.PendingSource {
		var starting []runtime.PendingSource
		for _, p := range pendingSources(st) {
			if p.Starting {
				starting = append(starting, p)
			}
		}
		return starting
	}, func() bool {
		s.refreshView()
		return ready()
	})
}

// offered reports whether the front offers a tool of that name right now.
func (s *Server) offered(name string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, ok := s.exposed[name]
	return ok
}

// offersAny reports whether the front offers any tool right now.
func (s *Server) offersAny() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.exposed) > 0
}

// unknownWhileStarting is off mode's answer to a call of a tool no server offers while some servers are not
// ready: the model hears which, rather than that the tool does not exist.
func unknownWhileStarting(name string, pending []runtime.PendingSource) *sdk.CallToolResult {
	text := runtime.UnknownWhilePending(name, pending, time.Now())
	return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: text}}, IsError: true}
}
