package front

import (
	"context"
	"reflect"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolsearch/toolsearch/mcp/internal/seam"
	"github.com/toolsearch/toolsearch/runtime"
)

// progressOf returns how a wait made for req reports progress to its client: MCP progress notifications under
// the request's own token, or nil when the client gave none. Progress is the seconds waited, Total the most the
// wait may take, so a client that resets its request timeout on progress keeps waiting.
func progressOf(ctx context.Context, req sdk.Request) func(runtime.WaitProgress) {
	ss, _ := req.GetSession().(*sdk.ServerSession)
	params := req.GetParams()
	if ss == nil || params == nil {
		return nil
	}
	if v := reflect.ValueOf(params); v.Kind() == reflect.Pointer && v.IsNil() {
		return nil // a request sent without params arrives as a typed nil
	}
	token := params.GetMeta()["progressToken"]
	if token == nil {
		return nil
	}
	return func(p runtime.WaitProgress) {
		_ = ss.NotifyProgress(ctx, &sdk.ProgressNotificationParams{ProgressToken: token, Message: p.Message,
			Progress: p.Waited.Seconds(), Total: p.Bound.Seconds()})
	}
}

// featuresPending are the servers whose resources, templates and prompts a listing may lack now: those whose
// attempt is under way, and ready ones whose session has not been listed yet. A failed server waiting for its
// next attempt is not waited for.
func featuresPending(st seam.Status) []runtime.PendingSource {
	var out []runtime.PendingSource
	for _, s := range st.Servers {
		p := runtime.PendingSource{Name: s.Server.Name(), SourceName: s.Server.SourceName(), Since: s.Since, Starting: true}
		switch {
		case s.State == seam.StateStarting || s.State == seam.StateRetrying:
			p.ReadyBy, p.Installer = s.AttemptDeadline, s.Installer
		case s.State == seam.StateReady && !s.FeaturesListed:
			// Listed right after it became ready: bounded by the wait's own budget only.
		default:
			continue
		}
		out = append(out, p)
	}
	return out
}

// awaitFeatures is the wait of a resources or prompts request whose answer would be empty (or not found) while
// servers are still starting: until answered() (checked after bringing the mirror up to date), no server is
// pending, the wait's bound (the servers' own start deadlines, ServerOptions.StartWait) or ctx's end. report,
// when set, hears how it goes.
func (s *Server) awaitFeatures(ctx context.Context, report func(runtime.WaitProgress), answered func() bool) {
	s.awaitPending(ctx, report, func(st seam.Status) []runtime.PendingSource { return featuresPending(st) },
		func() bool {
			s.mirror.sync()
			return answered()
		})
}

// awaitPending waits until pending(status) names no server, answered(), the bound or ctx's end, reporting
// progress every few seconds through report (nil: none).
func (s *Server) awaitPending(ctx context.Context, report func(runtime.WaitProgress),
	pending func(seam.Status) []runtime.PendingSource, answered func() bool) []runtime.PendingSource {
	wait := s.opts.StartWait
	if wait <= 0 {
		wait = runtime.DefaultMaxSourceWait
	}
	began := time.Now()
	budget := began.Add(wait)
	var tick <-chan time.Time
	if report != nil {
		ticker := time.NewTicker(waitProgressEvery)
		defer ticker.Stop()
		tick = ticker.C
	}
	reported := false
	for {
		changed := s.up.Changed()
		// The status before what it tells of: a server is ready only once its tools are adopted, and listed
		// once its features are.
		p := pending(s.up.Status())
		if answered() || len(p) == 0 {
			return p
		}
		bound := runtime.WaitBound(p, budget)
		if bound.IsZero() || !time.Now().Before(bound) {
			return p
		}
		if report != nil && !reported {
			reported = true
			report(progressReport(began, bound, p))
		}
		timer := time.NewTimer(time.Until(bound))
		select {
		case <-changed:
		case <-tick:
			report(progressReport(began, bound, p))
		case <-timer.C:
			timer.Stop()
			return pending(s.up.Status())
		case <-ctx.Done():
			timer.Stop()
			return p
		}
		timer.Stop()
	}
}

// waitProgressEvery is how often a wait of the front reports progress, as the runtime's waits do.
const waitProgressEvery = 2 * time.Second

func progressReport(began, bound time.Time, p []runtime.PendingSource) runtime.WaitProgress {
	names := ""
	for i, ps := range p {
		if i > 0 {
			names += ", "
		}
		if i == 8 {
			names += "..."
			break
		}
		names += `"` + ps.Name + `"`
	}
	waited := time.Since(began)
	return runtime.WaitProgress{Waited: waited, Bound: bound.Sub(began),
		Message: "waiting for servers still starting: " + names}
}

// emptyListing reports whether res is the first page of a resources, templates or prompts listing with nothing
// in it.
func emptyListing(res sdk.Result) bool {
	switch r := res.(type) {
	case *sdk.ListResourcesResult:
		return len(r.Resources) == 0 && r.NextCursor == ""
	case *sdk.ListResourceTemplatesResult:
		return len(r.ResourceTemplates) == 0 && r.NextCursor == ""
	case *sdk.ListPromptsResult:
		return len(r.Prompts) == 0 && r.NextCursor == ""
	}
	return false
}
