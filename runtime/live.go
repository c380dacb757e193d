package runtime

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/toolsearch/toolsearch/catalog"
	"github.com/toolsearch/toolsearch/hostfns"
	"github.com/toolsearch/toolsearch/internal/textcut"
)

// ToolFeed is a tool set that is still filling in: the tools of MCP servers that start in the background, fail,
// reconnect or change their listing while a run is in progress. A run given one (RunRequest.Feed) never tells
// the model that a tool does not exist while the server that has it is merely late: a search, describe or call
// that would come up empty, unknown or partial waits for the servers still starting (bounded), answers from the
// fuller catalog, and says which servers it could not wait for. Implementations must be safe for concurrent use.
type ToolFeed interface {
	// Current returns the tools available now (added to RunRequest.Tools) and every source that is not ready.
	Current() ([]catalog.Tool, []PendingSource)
	// Changed returns a channel that is closed at the next change of either. Take it before calling Current, so
	// that a change between the two is not missed.
	Changed() <-chan struct{}
}

// PendingSource is a source of tools that is not ready: an MCP server still starting, or one that failed and
// is retried.
type PendingSource struct {
	// Name is the server's name as configured: what the model is told.
	Name string
	// SourceName is the name in its tools' ids (mcp:<SourceName>:<tool>).
	SourceName string
	// Starting says its tools may still come: the run waits for it until ReadyBy.
	Starting bool
	// Since is when it entered this state (when it started starting, or failed).
	Since time.Time
	// ReadyBy is when its current attempt gives up. A zero ReadyBy while Starting means no known bound: the run
	// then waits only as long as RunRequest.MaxSourceWait allows.
	ReadyBy time.Time
	// Installer is the package runner (npx, uvx, ...) still fetching or installing it while it starts: the model
	// is told it is installing. Empty when it is not known to be installing.
	Installer string
	// Reason says why it is not ready, in one line (the last failure); empty while it starts for the first time.
	Reason string
	// RetryAt is its next attempt when it is not starting (zero: none scheduled).
	RetryAt time.Time
}

// DefaultMaxSourceWait bounds how long one Execute waits, in all, for sources that are still starting. A call
// waits only when its answer would otherwise be empty, unknown or a false "no such tool" (an answer that the
// sources that are ready can give is given at once), so the wait may use most of the request timeout of common
// MCP clients (60 s, the TypeScript SDK's default) and still leave the answer room to arrive; a tool_search_code
// run gets this less its own timeout (CodeTimeoutMs), since the script runs after what it waited for.
const DefaultMaxSourceWait = 55 * time.Second

// minCodeSourceWait is the least a tool_search_code run may wait for starting sources when its own timeout
// leaves less of DefaultMaxSourceWait.
const minCodeSourceWait = 5 * time.Second

// WaitProgress is one report of a call waiting for sources still starting (see WithWaitProgress).
type WaitProgress struct {
	Waited  time.Duration // since the wait began
	Bound   time.Duration // the longest the wait may take in all, from when it began
	Message string        // for a person: which servers it waits for
}

// waitProgressEvery is how often a wait reports while it lasts: often enough for a client that resets its
// request timeout on progress (the TypeScript SDK's resetTimeoutOnProgress) with a timeout of a few seconds.
const waitProgressEvery = 2 * time.Second

type waitProgressKey struct{}

// WithWaitProgress returns a context under which Execute reports, through report, each time a call has waited
// waitProgressEvery for sources still starting (and once as it begins to wait): a front passes these on as MCP
// progress notifications, so that a client resetting its timeout on progress keeps waiting. report must not
// block.
func WithWaitProgress(ctx context.Context, report func(WaitProgress)) context.Context {
	return context.WithValue(ctx, waitProgressKey{}, report)
}

// maxSourceNotes bounds the sources one notice names: a front with hundreds of failed servers still answers in a
// few lines.
const maxSourceNotes = 8

// waitBudgetKey carries the absolute time until which the calls of one Execute may wait for starting sources,
// shared by every search, describe and call that Execute makes (a script's included).
type waitBudgetKey struct{}

// withBudgets gives one Execute its bounds on waits that are not the model's doing: for approvals (all of them
// together at most approvalTimeoutMs) and for sources still starting (MaxSourceWait).
func (r *Run) withBudgets(ctx context.Context, call ToolCall) context.Context {
	ctx = context.WithValue(ctx, approvalBudgetKey{},
		&approvalBudget{remain: time.Duration(r.rt.cfg.ApprovalTimeoutMs) * time.Millisecond})
	if r.req.Feed == nil {
		return ctx
	}
	wait := r.req.MaxSourceWait
	if wait <= 0 {
		wait = DefaultMaxSourceWait
		if call.Name == ToolSearchCodeName && r.control[call.Name] {
			wait = max(wait-time.Duration(r.rt.cfg.CodeTimeoutMs)*time.Millisecond, minCodeSourceWait)
		}
	}
	return context.WithValue(ctx, waitBudgetKey{}, time.Now().Add(wait))
}

// refresh adopts the feed's current tools if they changed since the run last looked, and returns the state to
// answer from.
func (r *Run) refresh() *runState {
	st := r.cur()
	if r.req.Feed == nil {
		return st
	}
	select {
	case <-st.changed:
	default:
		return st // nothing changed since this state was built
	}
	r.refreshMu.Lock()
	defer r.refreshMu.Unlock()
	if st = r.cur(); !isClosed(st.changed) {
		return st // another call refreshed meanwhile
	}
	changed := r.req.Feed.Changed()
	tools, pending := r.req.Feed.Current()
	next, err := r.build(tools, pending, changed)
	if err != nil {
		// The run keeps answering from what it has; the sources are still reported, so nothing false is said.
		r.rt.log.Warn("tool search: rebuilding the catalog with the tools that arrived failed", "session",
			r.req.SessionID, "run", r.req.RunID, "error", err)
		kept := *st
		kept.pending, kept.changed = pending, changed
		next = &kept
	}
	r.st.Store(next)
	return next
}

func isClosed(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

// settle waits, bounded, until the answer no longer depends on sources still starting, and returns the state to
// answer from: until answered(state) holds (nil: never), no source of the run is starting any more (each has
// finished its attempt, or its ReadyBy has passed), the Execute's wait budget is spent, or ctx ends. In code mode
// the script is suspended meanwhile, its deadline held: a server starting is not the script's doing, and the
// wait has its own bounds. While it waits it reports progress (WithWaitProgress).
func (r *Run) settle(ctx context.Context, answered func(*runState) bool) *runState {
	st := r.refresh()
	if r.req.Feed == nil || !anyStarting(st.pending) || (answered != nil && answered(st)) {
		return st
	}
	budget, _ := ctx.Value(waitBudgetKey{}).(time.Time)
	resume := hostfns.Suspend(ctx)
	defer resume()
	report, _ := ctx.Value(waitProgressKey{}).(func(WaitProgress))
	began := time.Now()
	var tick <-chan time.Time
	if report != nil {
		ticker := time.NewTicker(waitProgressEvery)
		defer ticker.Stop()
		tick = ticker.C
	}
	// pending is what the wait goes by: the state's, or fresher when a source's ReadyBy moved (a package runner
	// still installing) without a change the feed announces.
	var seen *runState
	var pending []PendingSource
	reported := false
	for {
		changed := r.req.Feed.Changed() // before reading the state, so that no change in between is missed
		st = r.refresh()
		if st != seen {
			seen, pending = st, st.pending
		}
		if !anyStarting(st.pending) || (answered != nil && answered(st)) {
			return st
		}
		until := WaitBound(pending, budget)
		wait := time.Until(until)
		if until.IsZero() || wait <= 0 {
			return st
		}
		if report != nil && !reported {
			reported = true
			report(waitProgress(began, until, pending))
		}
		timer := time.NewTimer(wait)
		select {
		case <-changed:
			timer.Stop()
		case <-tick:
			timer.Stop()
			report(waitProgress(began, until, pending))
		case <-timer.C:
			_, fresh := r.req.Feed.Current()
			if b := WaitBound(fresh, budget); b.After(time.Now()) {
				pending = fresh
				continue
			}
			return r.refresh()
		case <-ctx.Done():
			timer.Stop()
			return st
		}
	}
}

// waitProgress describes a wait that began at began and may last until until, for the sources still starting.
func waitProgress(began, until time.Time, pending []PendingSource) WaitProgress {
	var names []string
	for _, p := range pending {
		if p.Starting {
			names = append(names, strconv.Quote(p.Name))
		}
	}
	if len(names) > maxSourceNotes {
		names = append(names[:maxSourceNotes], fmt.Sprintf("%d more", len(names)-maxSourceNotes))
	}
	waited := time.Since(began)
	return WaitProgress{Waited: waited, Bound: until.Sub(began),
		Message: "waiting for servers still starting: " + strings.Join(names, ", ") + " (" + seconds(waited) + " so far)"}
}

func anyStarting(ps []PendingSource) bool {
	for _, p := range ps {
		if p.Starting {
			return true
		}
	}
	return false
}

// WaitBound is how long a caller may wait for the starting sources of ps: until the latest of their ReadyBy
// deadlines, but never past budget (zero: none). It is zero when no source is starting, or when one has no
// ReadyBy and there is no budget either.
func WaitBound(ps []PendingSource, budget time.Time) time.Time {
	if !anyStarting(ps) {
		return time.Time{}
	}
	until := startingBound(ps)
	if !budget.IsZero() && (until.IsZero() || budget.Before(until)) {
		until = budget
	}
	return until
}

// startingBound is the latest ReadyBy of the starting sources, or zero when one of them has no bound.
func startingBound(ps []PendingSource) time.Time {
	var until time.Time
	for _, p := range ps {
		if !p.Starting {
			continue
		}
		if p.ReadyBy.IsZero() {
			return time.Time{}
		}
		if p.ReadyBy.After(until) {
			until = p.ReadyBy
		}
	}
	return until
}

// missing lists the sources whose tools a search over st cannot have found: those still starting, and failed
// ones none of whose tools are in the catalog (a failed server that listed its tools before keeps them, and a
// call to one says the server is down).
func (st *runState) missing() []PendingSource {
	var out []PendingSource
	for _, p := range st.pending {
		if p.Starting || !st.hasSource(p.SourceName) {
			out = append(out, p)
		}
	}
	return out
}

func (st *runState) hasSource(sourceName string) bool {
	for _, t := range st.tools {
		if t.Source == catalog.SourceMCP && t.SourceName == sourceName {
			return true
		}
	}
	return false
}

// pendingFor returns the not-ready source an id the model wrote names (mcp:<sourceName>:<tool>), if any.
func (st *runState) pendingFor(id string) (PendingSource, bool) {
	rest, ok := strings.CutPrefix(strings.TrimSpace(id), string(catalog.SourceMCP)+":")
	if !ok {
		return PendingSource{}, false
	}
	sourceName, _, ok := strings.Cut(rest, ":")
	if !ok {
		return PendingSource{}, false
	}
	for _, p := range st.pending {
		if strings.EqualFold(p.SourceName, sourceName) || strings.EqualFold(p.Name, sourceName) {
			return p, true
		}
	}
	return PendingSource{}, false
}

// sourceNotes says, one line per source, which sources the answer could not include and when to retry: the
// text that keeps a model from concluding that a tool does not exist.
func sourceNotes(ps []PendingSource, now time.Time) []string {
	var out []string
	for i, p := range ps {
		if i == maxSourceNotes {
			out = append(out, fmt.Sprintf("%d more servers are not available yet.", len(ps)-i))
			break
		}
		out = append(out, sourceNote(p, now)+" Its tools are not in this answer.")
	}
	return out
}

// UnknownWhilePending is the answer to a call of a name that no tool has while sources are not ready (a front
// that offers tools directly says it when its client calls one no server has listed yet): the name is unknown
// now, and the model hears which sources may still bring it.
func UnknownWhilePending(name string, pending []PendingSource, now time.Time) string {
	msg := "Unknown tool: " + name + "."
	if notes := sourceNotes(pending, now); len(notes) > 0 {
		msg += " " + strings.Join(notes, " ")
	}
	return msg
}

// sourceNote is one source's state as the model reads it: "server memory is still starting (...)" or
// "server git is not available: <reason>; next attempt in 20 s".
func sourceNote(p PendingSource, now time.Time) string {
	var b strings.Builder
	b.WriteString("Server " + strconv.Quote(p.Name))
	if p.Starting {
		b.WriteString(" is still starting")
		var parts []string
		if p.Installer != "" {
			parts = append(parts, "installing with "+p.Installer)
		}
		if !p.Since.IsZero() {
			parts = append(parts, "for "+seconds(now.Sub(p.Since))+" so far")
		}
		if !p.ReadyBy.IsZero() && p.ReadyBy.After(now) {
			parts = append(parts, "at most "+seconds(p.ReadyBy.Sub(now))+" more")
		}
		if len(parts) > 0 {
			b.WriteString(" (" + strings.Join(parts, ", ") + ")")
		}
		b.WriteString("; retry in a few seconds.")
		return b.String()
	}
	b.WriteString(" is not available")
	if p.Reason != "" {
		b.WriteString(": " + oneLine(p.Reason))
	}
	switch {
	case p.RetryAt.After(now):
		b.WriteString("; next attempt in " + seconds(p.RetryAt.Sub(now)))
	case !p.RetryAt.IsZero():
		b.WriteString("; reconnecting now")
	}
	b.WriteString(".")
	return b.String()
}

// seconds writes a duration the way a person reads a wait: whole seconds, at least 1.
func seconds(d time.Duration) string {
	s := int64((d + time.Second - 1) / time.Second)
	return strconv.FormatInt(max(s, 1), 10) + " s"
}

// oneLine keeps a reason short enough to quote in a notice: one line (a child's stderr has several), at most
// maxReasonBytes.
func oneLine(s string) string { return textcut.Words(s, maxReasonBytes, "...") }

const maxReasonBytes = 300

// unavailableSourceError is the lookup error of an id whose server is not ready: it says so, rather than that
// the tool is unknown.
type unavailableSourceError struct {
	source PendingSource
	now    time.Time
}

func (e *unavailableSourceError) Error() string {
	n := sourceNote(e.source, e.now)
	// "Server" starts a notice; as an error it reads as the issue it is: "server memory is not available: ...".
	return "s" + n[1:]
}
