package runtime

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"
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
	sb := r.rt.sandbox
	if sb == nil {
		return failed("tool_search_code is unavailable: the sandbox is not running."), nil
	}
	cfg := r.rt.cfg
	timeout := time.Duration(cfg.CodeTimeoutMs) * time.Millisecond
	b := &codeBridge{run: r, parent: callID}
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
		if err := ctxEnded(ctx); err != nil {
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
		if e.Kind == "timeout" {
			e.Message = fmt.Sprintf("%s timed out after %d ms", ToolSearchCodeName, cfg.CodeTimeoutMs)
		}
		if e.Kind == "internal" || e.Kind == "unavailable" {
			r.rt.log.Error("tool search: sandbox failure", "call", callID, "error", runErr)
		}
		body.Error, info.ErrorKind = &e, e.Kind
	}
	r.record(Record{Type: RecordCode, Code: info})

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

	mu      sync.Mutex
	hidden  []HiddenCall
	notices []string // distinct, at most maxNotices
}

func (b *codeBridge) Search(ctx context.Context, request json.RawMessage) (json.RawMessage, error) {
	req, err := decodeSearch(opCodeSearch, request)
	if err != nil {
		b.run.searchRefused(b.parent, ViaCode, err)
		return nil, err
	}
	hits, err := b.run.search(ctx, b.parent, ViaCode, req)
	if err != nil {
		return nil, err
	}
	if len(hits) == 0 {
		// The script gets [] (no hits is simply an empty list); the model gets the reason in the result.
		b.notice(b.run.noMatchNotices(req))
	}
	return marshalJSON(hits)
}

func (b *codeBridge) Describe(ctx context.Context, id string) (json.RawMessage, error) {
	d, err := b.run.describe(ctx, b.parent, ViaCode, id)
	if err != nil {
		return nil, err
	}
	return marshalJSON(d)
}

// Call resolves with the {tool, result} envelope when the tool ran (its result may still be an isError result of
// its own) and rejects, with the reason, when it could not be resolved or did not run: unknown, blocked, invalid
// arguments, a broken output contract.
func (b *codeBridge) Call(ctx context.Context, id string, args json.RawMessage) (json.RawMessage, error) {
	hc, out, err := b.run.callCatalog(ctx, opCodeCall, b.parent, ViaCode, callRequest{id: strings.TrimSpace(id), args: args})
	if err != nil {
		return nil, err
	}
	b.mu.Lock()
	b.hidden = append(b.hidden, *hc)
	b.mu.Unlock()
	if out.result == nil {
		return nil, errors.New(out.failure)
	}
	return marshalJSON(envelope{Tool: b.run.cat.Descriptor(out.tool), Result: out.result})
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

func (b *codeBridge) noticesSoFar() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return slices.Clone(b.notices)
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
