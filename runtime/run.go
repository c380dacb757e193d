package runtime

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/otel/trace"

	"github.com/toolsearch/toolsearch/catalog"
)

// RunRequest describes one run (one agent turn, or one MCP session): who it is for and which tools it has.
type RunRequest struct {
	// SessionID scopes the catalog cache: runs of one session whose tools did not change reuse its catalog.
	// RunID identifies the run in logs. At least one is required; a run without either is refused rather than
	// given some other run's catalog.
	SessionID, RunID, AgentID string
	// Tools are the run's effective tools, direct-only ones included. Policy-denied tools may be included: they
	// are filtered here and again at call time.
	Tools []catalog.Tool
	// ClientTools are tools the client declared for this run. They are cataloged as client:client:<name> in code
	// and tools mode, and stay directly visible in directory and off mode. Execute runs them through their
	// Handler like any tool (a gateway that forwards them to its client gives them a Handler that does so); one
	// without a Handler fails as unavailable.
	ClientTools []catalog.Tool
	// UserMessage is the turn's user message; directory mode ranks the catalog against it to expose up to four
	// likely tool schemas.
	UserMessage string
	// RequiredTools (names or ids) are exposed with their schemas in directory mode before the likely ones.
	RequiredTools []string
	// Policy replaces the runtime's policy for this run (per session or channel); nil uses the runtime's.
	Policy *catalog.Policy
	// Approver replaces the runtime's approver for this run: a front with many clients asks the user of the
	// client whose run made the call, so that one client's answer can never approve another client's call. nil
	// uses the runtime's (Options.Approver).
	Approver Approver
	// Feed, when set, adds the tools of sources that come and go while the run is in progress (MCP servers
	// starting in the background, reconnecting, changing their listing): the run follows it, and a search,
	// describe or call that would come up empty, unknown or partial while a source is still starting waits for it
	// (see ToolFeed) and then says which sources it could not include.
	Feed ToolFeed
	// MaxSourceWait bounds how long one Execute (a whole tool_search_code script included) waits, in all, for
	// the Feed's starting sources; 0 means DefaultMaxSourceWait. A wait also ends at the source's own ReadyBy and
	// when the call's context ends.
	MaxSourceWait time.Duration
	// CatalogScope, when set, keys the catalog cache instead of SessionID, so that runs of many sessions over the
	// same tools (the clients of one MCP front) share one catalog rather than building one each. Sharing it
	// shares nothing else: every run keeps its own counters, telemetry, hydration and session log.
	CatalogScope string
}

// ToolCall is one call the model made.
type ToolCall struct {
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments,omitempty"`
}

// CallResult is what Execute returns for a call: Content is the text for the model. Details are structured data
// for the transcript (the tool's details, or the envelope/result object of a control tool). IsError marks a
// failed call, Blocked one stopped by policy, approval or a hook (IsError is then set too). Hidden lists the
// catalog calls made through tool_call or tool_search_code, for the transcript projection; Telemetry is set for
// tool_search_code.
type CallResult struct {
	Content   string          `json:"content"`
	Details   json.RawMessage `json:"details,omitempty"`
	IsError   bool            `json:"isError,omitempty"`
	Blocked   bool            `json:"blocked,omitempty"`
	Hidden    []HiddenCall    `json:"hidden,omitempty"`
	Telemetry *CodeTelemetry  `json:"telemetry,omitempty"`
}

// HiddenCall is a catalog tool call the model made through a control tool. ID is
// tool_search_code:<parentCallId>:<toolName>:<n>; Result is the tool's own result (or the pipeline's failure).
type HiddenCall struct {
	ID         string          `json:"id"`
	ParentID   string          `json:"parentId"`
	ToolID     string          `json:"toolId"`
	Name       string          `json:"name"`
	Source     catalog.Source  `json:"source"`
	SourceName string          `json:"sourceName"`
	Arguments  json.RawMessage `json:"arguments"`
	Result     CallResult      `json:"result"`
}

// Run is one run of Tool Search: the catalog, what the model sees, and the calls it makes. Execute may be called
// from many goroutines at once; runs never see each other's tools.
type Run struct {
	rt            *Runtime
	req           RunRequest
	mode          Mode
	requestedMode Mode
	notApplied    string // why Tool Search was not applied to this run
	own           atomic.Pointer[policyRef]

	st        atomic.Pointer[runState] // what the run answers from; replaced when its ToolFeed changes
	refreshMu sync.Mutex               // one rebuild at a time
	scope     string
	reused    bool // the first catalog came from the cache
	visible   []ToolDefinition
	control   map[string]bool
	hydrated  []string
	directory string

	searches, describes, calls atomic.Int64
	seq                        atomic.Int64 // numbers hidden calls

	closeOnce sync.Once
	closeErr  error
	span      trace.Span // the run's: StartRun to Close

	mu          sync.Mutex // guards the fields below
	callLog     []CallRecord
	repairs     []Repair
	repairCount int64
	usage       SandboxUsage
	requests    []RequestStats
	records     []Record
	closing     bool // Close has begun: no new Execute
	closed      bool // run_end is written: no record after it
	flushErrs   []error
}

// ConflictError reports tools the model could not tell apart by name. It matches ErrToolConflict.
type ConflictError struct {
	Client bool // a client tool collides with a cataloged tool (directory mode)
	Names  []string
}

func (e *ConflictError) Error() string {
	prefix := "tool name conflict: "
	if e.Client {
		prefix = "client tool name conflict: "
	}
	return prefix + strings.Join(e.Names, ", ")
}

// Is makes errors.Is(err, ErrToolConflict) hold.
func (e *ConflictError) Is(target error) bool { return target == ErrToolConflict }

// StartRun builds what the model sees for a run: it filters the tools by policy, catalogs the hidden ones
// (reusing the session's catalog when nothing changed), and renders the control tools, the directory text and
// the exposed schemas of the mode. If the policy denies the mode's control tools, Tool Search is not applied to
// this run (it runs as off) and the log says why. Errors: a missing scope (wraps catalog.ErrNoScope), duplicate
// or invalid tools (catalog errors), name conflicts (*ConflictError), a closed runtime (ErrClosed).
func (rt *Runtime) StartRun(ctx context.Context, req RunRequest) (*Run, error) {
	if rt.closed.Load() {
		return nil, ErrClosed
	}
	r := &Run{
		rt:            rt,
		req:           req,
		mode:          rt.Mode(),
		requestedMode: rt.cfg.Mode,
		control:       make(map[string]bool),
	}
	switch {
	case req.CatalogScope != "":
		r.scope = "shared:" + req.CatalogScope
	case req.SessionID != "":
		r.scope = "session:" + req.SessionID
	case req.RunID != "":
		r.scope = "run:" + req.RunID
	default:
		return nil, fmt.Errorf("runtime: StartRun needs a SessionID or a RunID: %w", catalog.ErrNoScope)
	}
	if err := req.Policy.Validate(); err != nil {
		return nil, fmt.Errorf("runtime: RunRequest.Policy: %w", err)
	}
	if req.Policy != nil {
		r.own.Store(&policyRef{req.Policy})
	}
	policy := r.policy()

	for _, name := range controlToolNames(r.mode) {
		if !policy.Allows(controlTool(name)) {
			r.notApplied = fmt.Sprintf("the policy denies the %s control tool", name)
			r.mode = ModeOff
			rt.log.Warn("tool search: not applied to this run", "reason", r.notApplied,
				"session", req.SessionID, "run", req.RunID)
			break
		}
	}
	if r.mode != r.requestedMode && r.notApplied == "" && rt.FallbackReason() != "" {
		r.notApplied = "code mode fell back to tools mode: " + rt.FallbackReason()
	}

	var feedTools []catalog.Tool
	var pending []PendingSource
	var changed <-chan struct{}
	if req.Feed != nil {
		changed = req.Feed.Changed()
		feedTools, pending = req.Feed.Current()
	}
	for _, d := range controlTools(r.mode) {
		r.visible = append(r.visible, d)
		r.control[d.Function.Name] = true
	}
	st, err := r.build(feedTools, pending, changed)
	if err != nil {
		return nil, err
	}
	r.st.Store(st)
	r.reused = st.reused
	for _, name := range st.directNames {
		r.visible = append(r.visible, definition(name, st.direct[name]))
	}
	if r.mode == ModeDirectory {
		r.directory = directoryText(st.cat)
		for _, t := range r.likelyTools(ctx) {
			r.hydrated = append(r.hydrated, t.Name)
			r.visible = append(r.visible, definition(t.Name, t))
		}
	}

	r.startRunSpan(ctx)
	r.recordIn(trace.ContextWithSpan(ctx, r.span), Record{Type: RecordRunStart, Run: r.runInfo()})
	rt.log.Info("tool search: run started", "session", req.SessionID, "run", req.RunID, "mode", r.mode,
		"catalogSize", r.catalogSize(), "visibleTools", len(r.visible), "catalogReused", r.reused)
	return r, nil
}

// runState is what a run answers from: its catalog and the tools it shows directly. A run with a ToolFeed
// replaces it when the feed's tools change; what the model was shown this turn, and every counter, stay.
type runState struct {
	cat         *catalog.Catalog           // nil in off mode
	reused      bool                       // cat came from the cache
	direct      map[string]*catalog.Tool   // directly visible tools by the name the model sees
	directNames []string                   // the keys of direct, in the order they are shown
	byName      map[string][]*catalog.Tool // cataloged tools by exact name, for hydration
	tools       []catalog.Tool             // every tool of the run (RunRequest.Tools and the feed's)
	pending     []PendingSource            // the feed's sources that are not ready
	changed     <-chan struct{}            // closed once the feed changed after this state; nil without a feed
}

// build makes the run's state from its tools: it filters them by policy, names the directly shown ones and
// catalogs the hidden ones (reusing the scope's catalog when nothing changed).
func (r *Run) build(feedTools []catalog.Tool, pending []PendingSource, changed <-chan struct{}) (*runState, error) {
	policy := r.policy()
	st := &runState{
		direct:  make(map[string]*catalog.Tool),
		byName:  make(map[string][]*catalog.Tool),
		tools:   append(copyTools(r.req.Tools), feedTools...),
		pending: pending,
		changed: changed,
	}
	tools := copyTools(st.tools)
	clients := copyTools(r.req.ClientTools)
	for i := range clients {
		clients[i].Source, clients[i].SourceName = catalog.SourceClient, "client"
	}

	var cataloged, shown []catalog.Tool
	switch r.mode {
	case ModeOff:
		shown = append(tools, clients...)
	case ModeDirectory:
		cataloged = tools
		shown = append(directOnly(tools), clients...)
	default:
		cataloged = append(tools, clients...)
		shown = directOnly(cataloged)
	}
	// Visible tools are shown as direct-only ones are, and stay in the catalog too.
	firstVisible := len(shown)
	if r.mode != ModeOff {
		shown = append(shown, r.visibleTools(cataloged, policy)...)
	}

	var allowed []*catalog.Tool
	visible := map[*catalog.Tool]bool{}
	for i := range shown {
		t := &shown[i]
		if !policy.Allows(t) {
			continue
		}
		if strings.TrimSpace(t.Name) == "" {
			return nil, fmt.Errorf("runtime: %w: a tool the model sees needs a name", catalog.ErrInvalidTool)
		}
		allowed = append(allowed, t)
		if i >= firstVisible {
			visible[t] = true
		}
	}
	if r.mode != ModeOff {
		if err := clientConflicts(clients, policy.Allows); err != nil {
			return nil, err
		}
	}
	names, err := shownNames(allowed, r.control)
	if err != nil {
		return nil, err
	}
	// The bound is on what the model is shown, which is fixed when the run starts; a later rebuild (a ToolFeed
	// change) keeps that list, so tools arriving later never stop the catalog from following them.
	if r.st.Load() == nil {
		if err := checkVisible(names, allowed, visible); err != nil {
			return nil, err
		}
	}
	for i, t := range allowed {
		st.direct[names[i]] = t
	}
	st.directNames = names

	if r.mode != ModeOff {
		cat, reused, err := r.rt.cache.Get(r.scope, cataloged, &catalog.Options{
			Policy:             policy,
			SearchDefaultLimit: r.rt.cfg.SearchDefaultLimit,
			MaxSearchLimit:     r.rt.cfg.MaxSearchLimit,
			ReservedNames:      allControlToolNames(),
			CheckSchema:        r.rt.schemas.checkInput,
		})
		if err != nil {
			return nil, fmt.Errorf("runtime: %w", err)
		}
		st.cat, st.reused = cat, reused
		if !reused {
			for _, bad := range cat.Rejected() {
				r.rt.log.Warn("tool search: tool left out of the catalog", "tool", bad.ID, "reason", bad.Reason, "error", bad.Err)
			}
		}
		for _, t := range cat.Tools() {
			st.byName[t.Name] = append(st.byName[t.Name], t)
		}
	}
	if r.mode == ModeDirectory {
		var clash []string
		for i := range clients {
			if len(st.byName[clients[i].Name]) > 0 && policy.Allows(&clients[i]) {
				clash = append(clash, clients[i].Name)
			}
		}
		if len(clash) > 0 {
			return nil, &ConflictError{Client: true, Names: sortedUnique(clash)}
		}
	}
	return st, nil
}

// cur is the state the run answers from right now.
func (r *Run) cur() *runState { return r.st.Load() }

// controlTool is the catalog form of a control tool, for policy checks: an OpenClaw core tool. It is read-only:
// a control tool itself only reads the catalog, and every tool it reaches is checked on its own, so a read-only
// session (Allow: annotation:readOnly) keeps Tool Search.
func controlTool(name string) *catalog.Tool {
	readOnly := true
	return &catalog.Tool{Source: catalog.SourceOpenClaw, SourceName: "core", Name: name,
		Annotations: &catalog.Annotations{ReadOnlyHint: &readOnly}}
}

func copyTools(ts []catalog.Tool) []catalog.Tool {
	return append([]catalog.Tool(nil), ts...)
}

func directOnly(ts []catalog.Tool) []catalog.Tool {
	var out []catalog.Tool
	for _, t := range ts {
		if t.CatalogMode == catalog.CatalogModeDirectOnly {
			out = append(out, t)
		}
	}
	return out
}

// definition is a tool as the model sees it when it is exposed directly, under name.
func definition(name string, t *catalog.Tool) ToolDefinition {
	params := json.RawMessage(emptyObjectSchema)
	if !isNull(t.Parameters) {
		params = append(json.RawMessage(nil), t.Parameters...)
	}
	return ToolDefinition{Type: "function", Function: FunctionDefinition{
		Name: name, Description: t.Description, Parameters: params,
	}}
}

func sortedUnique(s []string) []string {
	sort.Strings(s)
	out := s[:0]
	for i, v := range s {
		if i == 0 || v != s[i-1] {
			out = append(out, v)
		}
	}
	return out
}

// policy is the policy calls are checked against right now: the run's own, else the runtime's current one.
func (r *Run) policy() *catalog.Policy {
	if own := r.own.Load(); own != nil {
		return own.p
	}
	return r.rt.policy.Load().p
}

// allowed is the call-time policy check: a tool the policy denies now is treated as absent, even if it was in
// the catalog when the run started.
func (r *Run) allowed(t *catalog.Tool) bool { return r.policy().Allows(t) }

// SetPolicy gives the run its own policy from now on (searches, describes and calls check it). The catalog is
// not rebuilt: newly denied tools simply stop being returned or callable; newly allowed ones appear in the next
// run.
func (r *Run) SetPolicy(p *catalog.Policy) { r.own.Store(&policyRef{p}) }

// Mode is the mode of this run: the runtime's, or ModeOff when the policy denies the control tools.
func (r *Run) Mode() Mode { return r.mode }

// ToolID returns the id of the tool the model sees directly under name (a direct-only, client, hydrated or, in
// off mode, any tool), and false for any other name. Names are the tools' own, except MCP tools that share a
// name with another shown tool: the model sees those as "<server>__<tool>".
func (r *Run) ToolID(name string) (string, bool) {
	st := r.cur()
	if t := st.direct[name]; t != nil {
		return t.ID(), true
	}
	for _, h := range r.hydrated {
		if h == name && len(st.byName[name]) > 0 {
			return st.byName[name][0].ID(), true // hydrated tools have a name unique in the catalog
		}
	}
	return "", false
}

// Tools returns exactly the tool definitions the model sees this turn: the mode's control tools, the
// direct-only tools, and (directory mode) client tools and the exposed likely schemas; every allowed tool in
// off mode. The slice is a copy.
func (r *Run) Tools() []ToolDefinition {
	return append([]ToolDefinition(nil), r.visible...)
}

// DirectTool returns the tool behind a name the model sees directly — every tool in off mode, direct-only tools,
// and client tools in directory mode — so that a front can describe it as its source did. The tool belongs to
// the run: read it, never modify it.
func (r *Run) DirectTool(name string) (*catalog.Tool, bool) {
	t, ok := r.cur().direct[name]
	return t, ok
}

// SystemPromptSection is the text to add to the system prompt: the tool directory in directory mode, "" in
// every other mode.
func (r *Run) SystemPromptSection() string { return r.directory }

// Catalog is the run's catalog (nil in off mode): the current one, for a run with a ToolFeed. It is shared with
// later runs of the session: read only.
func (r *Run) Catalog() *catalog.Catalog { return r.cur().cat }

func (r *Run) catalogSize() int {
	if cat := r.cur().cat; cat != nil {
		return cat.Len()
	}
	return 0
}

func (r *Run) sources() SourceCounts {
	cat := r.cur().cat
	if cat == nil {
		return SourceCounts{}
	}
	s := cat.Sources()
	return SourceCounts{OpenClaw: s[catalog.SourceOpenClaw], MCP: s[catalog.SourceMCP], Client: s[catalog.SourceClient]}
}

func (r *Run) runInfo() *RunInfo {
	names := make([]string, len(r.visible))
	for i, d := range r.visible {
		names[i] = d.Function.Name
	}
	return &RunInfo{
		Mode:           r.mode,
		RequestedMode:  r.requestedMode,
		NotApplied:     r.notApplied,
		CatalogSize:    r.catalogSize(),
		CatalogReused:  r.reused,
		Sources:        r.sources(),
		VisibleTools:   names,
		SchemasUpFront: len(names),
		Hydrated:       r.hydrated,
		DirectoryBytes: len(r.directory),
	}
}

// Close ends the run: it writes the run_end record with the run's telemetry and flushes its records to the
// session log. A run scoped only by RunID drops its catalog from the cache, since no later run can reuse it.
// Close is idempotent, also when called from several goroutines at once: exactly one run_end is written, and the
// others wait for it and return the same error. Execute fails with ErrRunClosed afterwards, and a record that
// arrives later (a tool that ignored its cancelled context and finished after its run) is not written after
// run_end: it is reported to the runtime's logger instead.
func (r *Run) Close() error {
	r.closeOnce.Do(func() { r.closeErr = r.close() })
	return r.closeErr
}

func (r *Run) close() error {
	r.mu.Lock()
	r.closing = true // Execute refuses from now on; records still land before run_end
	r.mu.Unlock()
	t := r.Telemetry()
	r.recordIn(trace.ContextWithSpan(context.Background(), r.span), Record{Type: RecordRunEnd, Telemetry: &t})
	defer r.endRunSpan(t)

	r.mu.Lock()
	r.closed = true
	batch := r.records
	r.records = nil
	err := r.writeLocked(batch)
	errs := r.flushErrs
	r.mu.Unlock()

	if r.req.SessionID == "" && r.req.CatalogScope == "" && r.cur().cat != nil {
		r.rt.cache.Forget(r.scope)
	}
	r.rt.log.Info("tool search: run ended", "session", r.req.SessionID, "run", r.req.RunID, "mode", r.mode,
		"searches", t.SearchCount, "describes", t.DescribeCount, "calls", t.CallCount)
	if err != nil {
		return err
	}
	if len(errs) > 0 {
		return errs[0]
	}
	return nil
}
