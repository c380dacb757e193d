package runtime

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/toolsearch/toolsearch/hostfns"
)

// codeResult is the JSON a tool_search_code call returns: {ok, value, logs, telemetry} or {ok: false, error}.
type codeResult struct {
	OK        bool               `json:"ok"`
	Value     json.RawMessage    `json:"value,omitempty"`
	Error     *hostfns.ErrorInfo `json:"error,omitempty"`
	Logs      []string           `json:"logs"`
	Notices   []string           `json:"notices,omitempty"` // why a search found nothing, and how to retry
	Telemetry *CodeTelemetry     `json:"telemetry"`
}

// runCode runs tool_search_code in the sandbox with the run as the bridge. Script failures (syntax errors,
// exceptions, limits) are results with ok: false; only the end of ctx is a Go error.
func (r *Run) runCode(ctx context.Context, callID, code string) (*CallResult, error) {
	sb, unavailable, err := r.rt.awaitSandbox(ctx) // a sandbox starting in the background is waited for
	if err != nil {
		return nil, err
	}
	if sb == nil {
		return failed("tool_search_code is unavailable: " + unavailable + "."), nil
	}
	cfg := r.rt.cfg
	timeout := time.Duration(cfg.CodeTimeoutMs) * time.Millisecond
	b := &codeBridge{run: r, parent: callID}
	outer := ctx
	ctx, span := r.rt.tel.step(ctx, SpanCode, "")
	res, runErr := sb.Run(ctx, code, b, &hostfns.RunOptions{
		Timeout:        timeout,
		Fuel:           cfg.CodeFuel,
		MemoryBytes:    cfg.CodeMemoryBytes,
		MaxOutputBytes: cfg.CodeMaxOutputBytes,
		MaxCalls:       cfg.CodeMaxCalls,
	})
	if res == nil {
		res = &hostfns.Result{}
	}
	r.addUsage(SandboxUsage{Runs: 1, Fuel: res.Usage.Fuel, Wall: res.Usage.Wall, PeakMemoryBytes: res.Usage.MemoryBytes})
	if runErr != nil {
		if err := ctxEnded(outer); err != nil {
			fail(span, "aborted", err.Error())
			span.End()
			return nil, err
		}
	}

	body := codeResult{OK: runErr == nil, Logs: res.Logs, Notices: b.noticesSoFar(), Telemetry: r.codeTelemetry()}
	if body.Logs == nil {
		body.Logs = []string{}
	}
	info := &CodeInfo{CallID: callID, OK: body.OK, CodeBytes: len(code), Bridged: res.Calls,
		Fuel: res.Usage.Fuel, Wall: res.Usage.Wall, MemoryBytes: res.Usage.MemoryBytes}
	if runErr == nil {
		body.Value = res.Value
		if len(body.Value) == 0 {
			body.Value = json.RawMessage("null")
		}
	} else {
		e := hostfns.Describe(runErr)
		switch e.Kind {
		case "timeout":
			e.Message = fmt.Sprintf("%s timed out after %d ms", ToolSearchCodeName, cfg.CodeTimeoutMs) +
				pendingText(res.Pending) + b.completedText() + "."
		case "fuel", "memory", "output", "calls":
			// Say which limit, its value, and the setting it comes from, so that a person can raise it.
			e.Message += " (" + limitKeys[e.Kind] + ")"
		}
		if e.Kind == "internal" || e.Kind == "unavailable" {
			r.rt.log.Error("tool search: sandbox failure", "call", callID, "error", runErr)
		}
		body.Error, info.ErrorKind = &e, e.Kind
	}
	r.recordIn(ctx, Record{Type: RecordCode, Code: info})
	message := ""
	if body.Error != nil {
		message = body.Error.Message
	}
	r.endCode(ctx, span, info, message)

	out := jsonResult(body)
	out.IsError = !body.OK
	out.Telemetry = body.Telemetry
	out.Hidden = b.hiddenCalls()
	return out, nil
}

// codeBridge is the hostfns.Bridge of one tool_search_code call: openclaw.tools.* land here and go through the
// same search, describe and call paths as the structured tools. hostfns calls it from several goroutines.
type codeBridge struct {
	run    *Run
	parent string

	searches, describes atomic.Int64 // completed, for the timeout message

	mu      sync.Mutex
	hidden  []HiddenCall
	notices []string // distinct, at most maxNotices
	// pending are the sources a search answered without, by source name: told to the model only
	// if they are still missing when the script ends (a server that came up later in the run, and was perhaps
	// called, is not "still starting" in the answer).
	pending map[string]bool
}

// limitKeys are the tools.toolSearch keys that set the sandbox's limits, by limit kind.
var limitKeys = map[string]string{
	"fuel": "tools.toolSearch.codeFuel", "memory": "tools.toolSearch.codeMemoryBytes",
	"output": "tools.toolSearch.codeMaxOutputBytes", "calls": "tools.toolSearch.codeMaxCalls",
}

// maxListedCalls bounds how many calls a timeout message names of each kind.
const maxListedCalls = 5

// pendingText names the bridged calls still running when the script timed out, and for how long they had run:
// what the model needs to know to retry with a longer-running call left out, or awaited differently.
func pendingText(pending []hostfns.CallInfo) string {
	if len(pending) == 0 {
		return "; no openclaw.tools call was pending"
	}
	parts := make([]string, 0, min(len(pending), maxListedCalls))
	for i, c := range pending {
		if i == maxListedCalls {
			parts = append(parts, fmt.Sprintf("and %d more", len(pending)-i))
			break
		}
		what := "openclaw.tools." + c.Op
		if c.Tool != "" {
			what += "(" + strconv.Quote(c.Tool) + ")"
		}
		parts = append(parts, fmt.Sprintf("%s, running for %d ms", what, c.Elapsed.Milliseconds()))
	}
	return "; still running: " + strings.Join(parts, "; ")
}

// completedText says what the script's bridged calls had finished before it timed out.
func (b *codeBridge) completedText() string {
	b.mu.Lock()
	var ids []string
	for _, h := range b.hidden {
		ids = append(ids, h.ToolID)
	}
	b.mu.Unlock()
	var parts []string
	for _, c := range []struct {
		n            int64
		one, several string
	}{{b.searches.Load(), "search", "searches"}, {b.describes.Load(), "describe", "describes"}, {int64(len(ids)), "call", "calls"}} {
		switch {
		case c.n == 1:
			parts = append(parts, "1 "+c.one)
		case c.n > 1:
			parts = append(parts, fmt.Sprintf("%d %s", c.n, c.several))
		}
	}
	if len(parts) == 0 {
		return "; none had completed"
	}
	text := "; completed: " + strings.Join(parts, ", ")
	if len(ids) > 0 {
		more := ""
		if len(ids) > maxListedCalls {
			more = fmt.Sprintf(" and %d more", len(ids)-maxListedCalls)
			ids = ids[:maxListedCalls]
		}
		text += " (calls: " + strings.Join(ids, ", ") + more + ")"
	}
	return text
}

func (b *codeBridge) Search(ctx context.Context, request json.RawMessage) (json.RawMessage, error) {
	req, err := decodeSearch(opCodeSearch, request)
	if err != nil {
		b.run.searchRefused(ctx, b.parent, ViaCode, err)
		return nil, err
	}
	hits, missing, err := b.run.search(ctx, b.parent, ViaCode, req)
	if err != nil {
		return nil, err
	}
	b.searches.Add(1)
	if len(hits) == 0 {
		// The script gets [] (no hits is simply an empty list); the model gets the reason in the result.
		b.notice(b.run.noMatchNotices(req, len(missing) > 0))
	}
	b.notePending(missing)
	return marshalJSON(hits)
}

func (b *codeBridge) Describe(ctx context.Context, request json.RawMessage) (json.RawMessage, error) {
	id, reps, err := decodeCodeDescribe(request)
	b.run.noteRepairs(ctx, b.parent, ViaCode, opCodeDescribe, "", reps)
	if err != nil {
		return nil, err
	}
	d, err := b.run.describe(ctx, b.parent, ViaCode, id)
	if err != nil {
		return nil, err
	}
	b.describes.Add(1)
	return marshalJSON(d)
}

// Call resolves with the {tool, result} envelope when the tool ran (its result may still be an isError result of
// its own) and rejects, with the reason, when it could not be resolved or did not run: unknown, blocked, invalid
// arguments, a broken output contract.
func (b *codeBridge) Call(ctx context.Context, request json.RawMessage) (json.RawMessage, error) {
	req, err := decodeCodeCall(request)
	if err != nil {
		b.run.noteRepairs(ctx, b.parent, ViaCode, opCodeCall, "", req.repairs)
		return nil, err
	}
	hc, out, err := b.run.callCatalog(ctx, opCodeCall, b.parent, ViaCode, req)
	if err != nil {
		return nil, err
	}
	b.mu.Lock()
	b.hidden = append(b.hidden, *hc)
	b.mu.Unlock()
	if out.result == nil {
		return nil, errors.New(out.failure)
	}
	return marshalJSON(envelope{Tool: b.run.cur().cat.Descriptor(out.tool), Result: out.result})
}

func (b *codeBridge) notice(ns []string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, n := range ns {
		if len(b.notices) < maxNotices && !slices.Contains(b.notices, n) {
			b.notices = append(b.notices, n)
		}
	}
}

func (b *codeBridge) notePending(missing []PendingSource) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, p := range missing {
		if b.pending == nil {
			b.pending = map[string]bool{}
		}
		b.pending[p.SourceName] = true
	}
}

// noticesSoFar is what the model is told besides the value: the searches' notices, then the sources a search
// answered without that are still missing from the run now (with their state now).
func (b *codeBridge) noticesSoFar() []string {
	b.mu.Lock()
	out := slices.Clone(b.notices)
	told := maps.Clone(b.pending)
	b.mu.Unlock()
	if len(told) == 0 {
		return out
	}
	var still []PendingSource
	for _, p := range b.run.refresh().missing() {
		if told[p.SourceName] {
			still = append(still, p)
		}
	}
	for _, n := range sourceNotes(still, time.Now()) {
		if len(out) < maxNotices && !slices.Contains(out, n) {
			out = append(out, n)
		}
	}
	return out
}

// hiddenCalls returns the calls in the order they were numbered, which is the order the script started them.
func (b *codeBridge) hiddenCalls() []HiddenCall {
	b.mu.Lock()
	defer b.mu.Unlock()
	out := append([]HiddenCall(nil), b.hidden...)
	sort.SliceStable(out, func(i, j int) bool { return hiddenSeq(out[i].ID) < hiddenSeq(out[j].ID) })
	return out
}

// hiddenSeq is the <n> of tool_search_code:<parent>:<name>:<n>.
func hiddenSeq(id string) int {
	i := strings.LastIndexByte(id, ':')
	n := 0
	for _, c := range id[i+1:] {
		if c < '0' || c > '9' {
			return 0
		}
		n = n*10 + int(c-'0')
	}
	return n
}
