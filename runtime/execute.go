package runtime

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

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
	var res *CallResult
	var err error
	switch {
	case r.control[call.Name]:
		res, err = r.executeControl(ctx, call)
	case r.direct[call.Name] != nil:
		res, err = r.executeDirect(ctx, call, r.direct[call.Name], ViaDirect)
	case r.mode == ModeDirectory && len(r.byName[call.Name]) == 1:
		res, err = r.executeDirect(ctx, call, r.byName[call.Name][0], ViaHydrated)
	case r.mode == ModeDirectory && len(r.byName[call.Name]) > 1:
		res = failed("Ambiguous tool name: " + call.Name + "; use tool_call with an exact tool id.")
	default:
		res = failed(r.unknownTool(call.Name))
	}
	if err != nil {
		return nil, err
	}
	res.Content = boundResult(res.Content, r.rt.cfg.MaxResultBytes)
	for _, e := range Project(call, res) {
		r.record(Record{Type: RecordTranscript, Transcript: &e})
	}
	return res, nil
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
	args, more, argErr := toolArgs(o, t, raw, r.namesTool(t))
	r.noteRepairs(inv.CallID, inv.Via, o, t.ID(), append(reps, more...))
	var out *outcome
	if argErr != nil {
		out = &outcome{tool: t, args: loggableJSON(raw), failure: argErr.Error()}
	} else {
		inv.Arguments = args
		var err error
		if out, err = r.invoke(ctx, t, inv); err != nil {
			return nil, err
		}
	}
	r.countCall(callRecord(inv.CallID, inv.ParentCallID, inv.Via, out))
	return out, nil
}

// namesTool reports whether an id or name the model wrote refers to t.
func (r *Run) namesTool(t *catalog.Tool) func(string) bool {
	return func(s string) bool {
		if strings.EqualFold(s, t.ID()) || strings.EqualFold(s, t.Name) {
			return true
		}
		if r.cat == nil {
			return false
		}
		found, err := r.cat.Lookup(s)
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
	}
}

// executeControl runs a control tool. What the model sent is decoded in request.go first; a request that
// cannot be read is a result the model can correct.
func (r *Run) executeControl(ctx context.Context, call ToolCall) (*CallResult, error) {
	switch call.Name {
	case ToolSearchCodeName:
		code, reps, err := decodeCode(call.Arguments)
		r.noteRepairs(call.ID, ViaCode, opToolSearchCode, "", reps)
		if err != nil {
			return failed(err.Error()), nil
		}
		return r.runCode(ctx, call.ID, code)
	case ToolSearchName:
		req, err := decodeSearch(opToolSearch, call.Arguments)
		if err != nil {
			r.searchRefused(call.ID, ViaToolCall, err)
			return failed(err.Error()), nil
		}
		hits, err := r.search(ctx, call.ID, ViaToolCall, req)
		if err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			return failed(err.Error()), nil
		}
		res := jsonResult(hits)
		if len(hits) == 0 {
			// Details stay the (empty) list of hits; the model reads why nothing matched and how to retry.
			res.Content = strings.Join(r.noMatchNotices(req), "\n")
		}
		return res, nil
	case ToolDescribeName:
		id, reps, err := decodeDescribe(opToolDescribe, call.Arguments)
		r.noteRepairs(call.ID, ViaToolCall, opToolDescribe, "", reps)
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
			r.noteRepairs(call.ID, ViaToolCall, opToolCall, "", req.repairs)
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
			env := envelope{Tool: r.cat.Descriptor(out.tool), Result: out.result}
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
func (r *Run) searchRefused(callID string, via Via, err error) {
	r.searches.Add(1)
	r.record(Record{Type: RecordSearch, Search: &SearchInfo{CallID: callID, Via: via, Error: err.Error()}})
}

// search runs a search against the run's catalog and drops hits the policy denies now.
func (r *Run) search(ctx context.Context, callID string, via Via, req searchRequest) ([]catalog.Descriptor, error) {
	r.searches.Add(int64(len(req.queries)))
	info := &SearchInfo{CallID: callID, Via: via, Queries: req.queries, Limit: req.limit, Hits: []string{}}
	defer r.record(Record{Type: RecordSearch, Search: info})
	var hits []catalog.Hit
	var err error
	if len(req.queries) == 1 {
		hits, err = r.cat.Search(ctx, req.queries[0], req.limit)
	} else {
		hits, err = r.cat.SearchBatch(ctx, req.queries, req.limit)
	}
	if err != nil {
		info.Error = err.Error()
		return nil, err
	}
	out := make([]catalog.Descriptor, 0, len(hits))
	for _, h := range hits {
		if t, err := r.cat.Lookup(h.ID); err == nil && r.allowed(t) {
			out = append(out, h.Descriptor)
			info.Hits = append(info.Hits, h.ID)
		}
	}
	return out, nil
}

// describe returns a tool's full schemas. A tool the policy denies now is unknown.
func (r *Run) describe(ctx context.Context, callID string, via Via, id string) (*catalog.Description, error) {
	r.describes.Add(1)
	info := &DescribeInfo{CallID: callID, Via: via, ID: id}
	defer r.record(Record{Type: RecordDescribe, Describe: info})
	t, err := r.cat.Lookup(id)
	if err == nil && !r.allowed(t) {
		err = &catalog.UnknownToolError{Query: strings.TrimSpace(id)}
	}
	if err != nil {
		err = r.withSuggestions(ctx, err)
		info.Error = err.Error()
		return nil, err
	}
	d, err := r.cat.Describe(t.ID())
	if err != nil {
		info.Error = err.Error()
		return nil, err
	}
	info.ToolID = t.ID()
	return d, nil
}

// withSuggestions adds to an unknown-tool error the ids that come closest to what was asked among the tools the
// run's policy allows now (it can have changed since the catalog was built). The catalog finds them with one
// bounded search of its index, whatever its size.
func (r *Run) withSuggestions(ctx context.Context, err error) error {
	var unknown *catalog.UnknownToolError
	if errors.As(err, &unknown) {
		unknown.Suggestions = r.cat.Suggest(ctx, unknown.Query, r.allowed)
	}
	return err
}

// callCatalog resolves a catalog tool by exact id or unique name and runs it through the pipeline under a
// hidden call id. err is a lookup error (unknown or ambiguous tool) or, when ctx ended, ctx's error.
func (r *Run) callCatalog(ctx context.Context, o op, parentID string, via Via, req callRequest) (*HiddenCall, *outcome, error) {
	t, err := r.cat.Lookup(req.id)
	if err != nil {
		r.noteRepairs(parentID, via, o, "", req.repairs)
		return nil, nil, r.withSuggestions(ctx, err)
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
