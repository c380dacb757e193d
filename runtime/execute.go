package runtime

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/toolsearch/toolsearch/catalog"
)

// Execute runs one call the model made, whatever it is: a control tool (tool_search_code, tool_search,
// tool_describe, tool_call), a tool the model sees directly, or — in directory mode — a hidden tool called by its
// exact, unique name, which is resolved from the run's authorized catalog (fuzzy names and ids are not). Every
// real tool call goes through the one pipeline (policy, approval, hooks, input validation, output contract,
// logging, telemetry). Tool-level failures, blocks and unknown tools are results with IsError; the Go error is
// for a cancelled ctx or a closed run. Execute writes the call, its result and the projected hidden calls to the
// session log, and is safe for concurrent use.
func (r *Run) Execute(ctx context.Context, call ToolCall) (*CallResult, error) {
	r.mu.Lock()
	closed := r.closing
	r.mu.Unlock()
	if closed {
		return nil, ErrRunClosed
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	ctx = r.withBudgets(ctx, call)
	ctx, span := r.startModelCall(ctx, call)
	var res *CallResult
	var err error
	if r.control[call.Name] {
		res, err = r.executeControl(ctx, call)
	} else {
		res, err = r.executeNamed(ctx, call)
	}
	if err != nil {
		r.endModelCall(ctx, span, call, nil, err)
		return nil, err
	}
	res.Content = boundResult(res.Content, r.rt.cfg.MaxResultBytes)
	for _, e := range Project(call, res) {
		r.recordIn(ctx, Record{Type: RecordTranscript, Transcript: &e})
	}
	r.endModelCall(ctx, span, call, res, nil)
	return res, nil
}

// executeNamed runs a call of a tool the model named directly: a tool it sees, or in directory mode a hidden tool
// by its exact, unique name. A name the run does not know while sources are still starting waits for them.
func (r *Run) executeNamed(ctx context.Context, call ToolCall) (*CallResult, error) {
	st := r.settle(ctx, func(st *runState) bool {
		_, found := r.direct(st, call.Name)
		return found
	})
	t, found := r.direct(st, call.Name)
	switch {
	case t != nil:
		via := ViaDirect
		if st.direct[call.Name] == nil {
			via = ViaHydrated
		}
		return r.executeDirect(ctx, call, t, via)
	case found:
		return failed("Ambiguous tool name: " + call.Name + "; use tool_call with an exact tool id."), nil
	}
	msg := r.unknownTool(call.Name)
	if notes := sourceNotes(st.missing(), time.Now()); len(notes) > 0 {
		msg += " " + strings.Join(notes, " ")
	}
	return failed(msg), nil
}

// direct resolves a name the model called directly: a tool it sees, or in directory mode a cataloged tool by its
// exact name. found without a tool means the name is ambiguous.
func (r *Run) direct(st *runState, name string) (t *catalog.Tool, found bool) {
	if t := st.direct[name]; t != nil {
		return t, true
	}
	if r.mode == ModeDirectory {
		switch ts := st.byName[name]; len(ts) {
		case 0:
		case 1:
			return ts[0], true
		default:
			return nil, true
		}
	}
	return nil, false
}

func (r *Run) unknownTool(name string) string {
	switch r.mode {
	case ModeCode:
		return "Unknown tool: " + name + ". It is not declared; find and call catalog tools from " +
			ToolSearchCodeName + " with openclaw.tools.search and openclaw.tools.call."
	case ModeTools, ModeDirectory:
		return "Unknown tool: " + name + ". It is not declared; find it with " + ToolSearchName +
			" and call it with " + ToolCallName + "."
	}
	return "Unknown tool: " + name + ". Call one of the declared tools."
}

func failed(msg string) *CallResult {
	details, _ := marshalJSON(map[string]string{"error": msg})
	return &CallResult{Content: msg, Details: details, IsError: true}
}

func (r *Run) executeDirect(ctx context.Context, call ToolCall, tool *catalog.Tool, via Via) (*CallResult, error) {
	out, err := r.callTool(ctx, op(call.Name), tool, r.invocation(call.ID, "", via), call.Arguments, nil)
	if err != nil {
		return nil, err
	}
	return outcomeResult(out), nil
}

func (r *Run) invocation(callID, parentID string, via Via) Invocation {
	return Invocation{
		SessionID: r.req.SessionID, RunID: r.req.RunID, AgentID: r.req.AgentID,
		CallID: callID, ParentCallID: parentID, Via: via,
	}
}

// callTool is every real call from the model's arguments on: it makes them the tool's arguments (toolArgs),
// records the repairs, runs the pipeline and counts the call. Arguments that cannot be read are a failed call
// of the tool, counted like any other. The Go error is only ctx's.
func (r *Run) callTool(ctx context.Context, o op, t *catalog.Tool, inv Invocation, raw json.RawMessage, reps []repair) (*outcome, error) {
	ctx, span := r.startCall(ctx, t, &inv)
	args, more, argErr := toolArgs(o, t, raw, r.namesTool(t))
	r.noteRepairs(ctx, inv.CallID, inv.Via, o, t.ID(), append(reps, more...))
	var out *outcome
	if argErr != nil {
		out = &outcome{tool: t, args: loggableJSON(raw), failure: argErr.Error()}
	} else {
		inv.Arguments = args
		var err error
		if out, err = r.invoke(ctx, t, inv); err != nil {
			fail(span, "aborted", err.Error())
			span.End()
			return nil, err
		}
	}
	c := callRecord(inv.CallID, inv.ParentCallID, inv.Via, out)
	r.countCall(ctx, c)
	r.endCall(ctx, span, &c, out)
	return out, nil
}

// namesTool reports whether an id or name the model wrote refers to t.
func (r *Run) namesTool(t *catalog.Tool) func(string) bool {
	return func(s string) bool {
		if strings.EqualFold(s, t.ID()) || strings.EqualFold(s, t.Name) {
			return true
		}
		cat := r.cur().cat
		if cat == nil {
			return false
		}
		found, err := cat.Lookup(s)
		return err == nil && found == t
	}
}

// loggableJSON keeps arguments that could not be read for the transcript and the log: valid JSON as it is,
// anything else as a JSON string.
func loggableJSON(raw json.RawMessage) json.RawMessage {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return json.RawMessage("{}")
	}
	if json.Valid(raw) {
		return append(json.RawMessage(nil), raw...)
	}
	s, _ := json.Marshal(string(raw))
	return s
}

// outcomeResult is a tool's own result as the model sees it, or the pipeline's failure.
func outcomeResult(out *outcome) *CallResult {
	if out.result == nil {
		res := failed(out.failure)
		if out.blocked {
			res.Blocked = true
			res.Details, _ = marshalJSON(map[string]any{"error": out.failure, "blocked": true})
		}
		return res
	}
	return &CallResult{
		Content: resultText(out.result),
		Details: append(json.RawMessage(nil), out.result.Details...),
		IsError: out.result.IsError,
	}
}

func callRecord(callID, parentID string, via Via, out *outcome) CallRecord {
	return CallRecord{
		CallID:        callID,
		ParentCallID:  parentID,
		ToolID:        out.tool.ID(),
		Name:          out.tool.Name,
		Source:        out.tool.Source,
		SourceName:    out.tool.SourceName,
		Via:           via,
		IsError:       out.isError(),
		Blocked:       out.blocked,
		Error:         out.failure,
		ArgumentBytes: len(out.args),
		Duration:      out.duration,
		Decision:      out.decision,
	}
}

// executeControl runs a control tool. What the model sent is decoded in request.go first; a request that
// cannot be read is a result the model can correct.
func (r *Run) executeControl(ctx context.Context, call ToolCall) (*CallResult, error) {
	switch call.Name {
	case ToolSearchCodeName:
		code, reps, err := decodeCode(call.Arguments)
		r.noteRepairs(ctx, call.ID, ViaCode, opToolSearchCode, "", reps)
		if err != nil {
			return failed(err.Error()), nil
		}
		return r.runCode(ctx, call.ID, code)
	case ToolSearchName:
		req, err := decodeSearch(opToolSearch, call.Arguments)
		if err != nil {
			r.searchRefused(ctx, call.ID, ViaToolCall, err)
			return failed(err.Error()), nil
		}
		hits, missing, err := r.search(ctx, call.ID, ViaToolCall, req)
		if err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			return failed(err.Error()), nil
		}
		// Details stay the list of hits; the model also reads why nothing matched and how to retry, and which
		// servers the answer could not include (a search while they start is not the whole truth).
		res := jsonResult(hits)
		notes := sourceNotes(missing, time.Now())
		switch {
		case len(hits) == 0:
			res.Content = strings.Join(append(r.noMatchNotices(req, len(missing) > 0), notes...), "\n")
		case len(notes) > 0:
			res.Content += "\n" + strings.Join(notes, "\n")
		}
		return res, nil
	case ToolDescribeName:
		id, reps, err := decodeDescribe(opToolDescribe, call.Arguments)
		r.noteRepairs(ctx, call.ID, ViaToolCall, opToolDescribe, "", reps)
		if err != nil {
			return failed(err.Error()), nil
		}
		d, err := r.describe(ctx, call.ID, ViaToolCall, id)
		if err != nil {
			return failed(err.Error()), nil
		}
		return jsonResult(d), nil
	case ToolCallName:
		req, err := decodeCall(opToolCall, call.Arguments)
		if err != nil {
			r.noteRepairs(ctx, call.ID, ViaToolCall, opToolCall, "", req.repairs)
			return failed(err.Error()), nil
		}
		hc, out, err := r.callCatalog(ctx, opToolCall, call.ID, ViaToolCall, req)
		if err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			return failed(err.Error()), nil
		}
		res := outcomeResult(out)
		if out.result != nil {
			env := envelope{Tool: r.cur().cat.Descriptor(out.tool), Result: out.result}
			res = jsonResult(env)
			res.IsError = out.result.IsError
		}
		res.Hidden = []HiddenCall{*hc}
		return res, nil
	}
	return failed(r.unknownTool(call.Name)), nil
}

// envelope is what tool_call and openclaw.tools.call return: the tool's descriptor and its result, with JSON
// values in result.details.
type envelope struct {
	Tool   catalog.Descriptor `json:"tool"`
	Result *catalog.Result    `json:"result"`
}

func (e envelope) MarshalJSON() ([]byte, error) {
	res := *e.Result
	if res.Content == nil {
		res.Content = []catalog.Content{}
	}
	return marshalJSON(struct {
		Tool   catalog.Descriptor `json:"tool"`
		Result catalog.Result     `json:"result"`
	}{e.Tool, res})
}

// jsonResult shows a structured result to the model as compact JSON, the same bytes as Details.
func jsonResult(v any) *CallResult {
	raw, err := marshalJSON(v)
	if err != nil {
		return failed("internal error: " + err.Error())
	}
	return &CallResult{Content: string(raw), Details: raw}
}

func isNull(raw json.RawMessage) bool {
	raw = bytes.TrimSpace(raw)
	return len(raw) == 0 || bytes.Equal(raw, []byte("null"))
}

// searchRefused counts and logs a search request that could not be read: the model did try to search.
func (r *Run) searchRefused(ctx context.Context, callID string, via Via, err error) {
	r.searches.Add(1)
	r.recordIn(ctx, Record{Type: RecordSearch, Search: &SearchInfo{CallID: callID, Via: via, Error: err.Error()}})
}

// search runs a search against the run's catalog and drops hits the policy denies now. While sources of the run
// are still starting it first waits for them (bounded, see settle); missing lists the sources whose tools the
// answer could not include, for the model to be told.
func (r *Run) search(ctx context.Context, callID string, via Via, req searchRequest) (hits []catalog.Descriptor, missing []PendingSource, err error) {
	r.searches.Add(int64(len(req.queries)))
	info := &SearchInfo{CallID: callID, Via: via, Queries: req.queries, Limit: req.limit, Hits: []string{}}
	ctx, span := r.rt.tel.step(ctx, SpanSearch, "")
	defer r.endSearch(ctx, span, info)
	defer r.recordIn(ctx, Record{Type: RecordSearch, Search: info})
	var found []catalog.Hit
	// An answer that the ready sources give well (hits, and every word of each query known to some tool) is given
	// at once, naming the sources still starting; only one that would be empty or miss words waits for them.
	st := r.settle(ctx, func(st *runState) bool {
		hits, err := searchIn(ctx, st, req)
		return err != nil || goodAnswer(st, req, hits)
	})
	found, err = searchIn(ctx, st, req)
	if err != nil {
		info.Error = err.Error()
		return nil, nil, err
	}
	hits = make([]catalog.Descriptor, 0, len(found))
	for _, h := range found {
		if t, err := st.cat.Lookup(h.ID); err == nil && r.allowed(t) {
			hits = append(hits, h.Descriptor)
			info.Hits = append(info.Hits, h.ID)
		}
	}
	missing = st.missing()
	for _, p := range missing {
		info.Missing = append(info.Missing, p.Name)
	}
	return hits, missing, nil
}

// searchIn runs the queries of req over st's catalog.
func searchIn(ctx context.Context, st *runState, req searchRequest) ([]catalog.Hit, error) {
	if len(req.queries) == 1 {
		return st.cat.Search(ctx, req.queries[0], req.limit)
	}
	return st.cat.SearchBatch(ctx, req.queries, req.limit)
}

// goodAnswer reports whether hits answer req without the sources still starting: there are hits, no word of any
// query is missing from every tool of st (a word no ready tool has may be a starting server's), and no query
// names a server still starting ("current time" while the server "time" starts: its tools are the likeliest
// answer, though ready servers have both words).
func goodAnswer(st *runState, req searchRequest, hits []catalog.Hit) bool {
	if len(hits) == 0 {
		return false
	}
	for _, q := range req.queries {
		if len(st.cat.Unmatched(q)) > 0 || namesStartingSource(q, st.pending) {
			return false
		}
	}
	return true
}

// namesStartingSource reports whether a word of query is a word of the name of a source still starting.
func namesStartingSource(query string, pending []PendingSource) bool {
	var queryWords map[string]bool
	for _, p := range pending {
		if !p.Starting {
			continue
		}
		if queryWords == nil {
			queryWords = map[string]bool{}
			for _, w := range catalog.Words(query) {
				queryWords[w] = true
			}
		}
		for _, w := range catalog.Words(p.Name + " " + p.SourceName) {
			if queryWords[w] {
				return true
			}
		}
	}
	return false
}

// lookup resolves an id or name the model wrote to a tool the policy allows now. An id the run does not know
// while sources are still starting waits for them (bounded); one whose server is not ready says so, and an
// unknown one gets suggestions and the sources the run could not look in.
// A tool the policy denies now is unknown to describe (denyUnknown); a call of it reaches the pipeline, which
// blocks it and says so.
func (r *Run) lookup(ctx context.Context, id string, denyUnknown bool) (*runState, *catalog.Tool, error) {
	st := r.settle(ctx, func(st *runState) bool {
		_, err := r.lookupIn(st, id, denyUnknown)
		return err == nil
	})
	t, err := r.lookupIn(st, id, denyUnknown)
	var unknown *catalog.UnknownToolError
	if !errors.As(err, &unknown) {
		return st, t, err
	}
	now := time.Now()
	if p, ok := st.pendingFor(id); ok {
		return st, nil, &unavailableSourceError{source: p, now: now}
	}
	unknown.Suggestions = st.cat.Suggest(ctx, unknown.Query, r.allowed)
	if notes := sourceNotes(st.missing(), now); len(notes) > 0 {
		return st, nil, &notedError{err: err, notes: notes}
	}
	return st, nil, err
}

func (r *Run) lookupIn(st *runState, id string, denyUnknown bool) (*catalog.Tool, error) {
	t, err := st.cat.Lookup(id)
	if err == nil && denyUnknown && !r.allowed(t) {
		return nil, &catalog.UnknownToolError{Query: strings.TrimSpace(id)}
	}
	return t, err
}

// notedError is a lookup error followed by what the model should know about sources that are not ready.
type notedError struct {
	err   error
	notes []string
}

func (e *notedError) Error() string { return e.err.Error() + " " + strings.Join(e.notes, " ") }
func (e *notedError) Unwrap() error { return e.err }

// describe returns a tool's full schemas. A tool the policy denies now is unknown.
func (r *Run) describe(ctx context.Context, callID string, via Via, id string) (*catalog.Description, error) {
	r.describes.Add(1)
	info := &DescribeInfo{CallID: callID, Via: via, ID: id}
	ctx, span := r.rt.tel.step(ctx, SpanDescribe, "")
	defer r.endDescribe(ctx, span, info)
	defer r.recordIn(ctx, Record{Type: RecordDescribe, Describe: info})
	st, t, err := r.lookup(ctx, id, true)
	if err != nil {
		info.Error = err.Error()
		return nil, err
	}
	d, err := st.cat.Describe(t.ID())
	if err != nil {
		info.Error = err.Error()
		return nil, err
	}
	info.ToolID = t.ID()
	return d, nil
}

// callCatalog resolves a catalog tool by exact id or unique name and runs it through the pipeline under a
// hidden call id. err is a lookup error (unknown or ambiguous tool, or its server not ready) or, when ctx ended,
// ctx's error.
func (r *Run) callCatalog(ctx context.Context, o op, parentID string, via Via, req callRequest) (*HiddenCall, *outcome, error) {
	_, t, err := r.lookup(ctx, req.id, false)
	if err != nil {
		r.noteRepairs(ctx, parentID, via, o, "", req.repairs)
		return nil, nil, err
	}
	hid := fmt.Sprintf("%s:%s:%s:%d", ToolSearchCodeName, safeCallID(parentID), t.Name, r.seq.Add(1))
	out, err := r.callTool(ctx, o, t, r.invocation(hid, parentID, via), req.args, req.repairs)
	if err != nil {
		return nil, nil, err
	}
	return &HiddenCall{
		ID: hid, ParentID: parentID, ToolID: t.ID(), Name: t.Name, Source: t.Source, SourceName: t.SourceName,
		Arguments: out.args, Result: *outcomeResult(out),
	}, out, nil
}

// safeCallID keeps a parent call id usable inside a hidden id: [A-Za-z0-9_.:-], at most 120 bytes.
func safeCallID(id string) string {
	b := []byte(strings.TrimSpace(id))
	for i, c := range b {
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9', c == '_', c == '.', c == ':', c == '-':
		default:
			b[i] = '_'
		}
	}
	if len(b) > 120 {
		b = b[:120]
	}
	if len(b) == 0 {
		return "call"
	}
	return string(b)
}
