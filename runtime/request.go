package runtime

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/toolsearch/toolsearch/catalog"
)

// This file is the one home of what the model sends to the meta-tools: tool_search, tool_describe, tool_call,
// tool_search_code and openclaw.tools.search/describe/call inside code mode. Everything the model wrote is
// decoded, repaired and checked here, so that search, describe and the call pipeline only ever see a
// well-formed request.
//
// Real models make the same few mistakes again and again: "arguments" (the MCP name) instead of "args", args
// as a string holding JSON, a whole {id, args} request nested inside args. A mistake with exactly one meaning is
// repaired, and the repair is recorded (telemetry and the session log); a request that could mean two things
// (both "args" and "arguments", a field we do not know) is refused with a message that names the field and
// shows the right shape. No field is ever dropped silently.

// op is an operation as the model knows it: the name it called, which every message about the request uses.
type op string

// The operations whose requests are decoded here.
const (
	opToolSearch     op = ToolSearchName
	opToolDescribe   op = ToolDescribeName
	opToolCall       op = ToolCallName
	opToolSearchCode op = ToolSearchCodeName
	opCodeSearch     op = "openclaw.tools.search"
	opCodeDescribe   op = "openclaw.tools.describe"
	opCodeCall       op = "openclaw.tools.call"
)

// shape is how a request of the operation is written, shown in every refusal so the model can copy it.
func (o op) shape() string {
	switch o {
	case opToolSearch:
		return `{"query": "<what the tool should do>", "limit": <n>} or {"queries": ["<one need>", "<another>"]}`
	case opToolDescribe:
		return `{"id": "<tool id>"}`
	case opToolCall:
		return `{"id": "<tool id>", "args": {<the tool's arguments>}}`
	case opToolSearchCode:
		return `{"code": "<body of an async JavaScript function>"}`
	case opCodeSearch:
		return `openclaw.tools.search("<query>", {limit: <n>}) or openclaw.tools.search({queries: ["<one need>", "<another>"]})`
	case opCodeDescribe:
		return `openclaw.tools.describe("<tool id>")`
	case opCodeCall:
		return `openclaw.tools.call("<tool id>", {<the tool's arguments>})`
	}
	return ""
}

// invalid is the refusal of a request: what is wrong, then the shape the model should have sent.
func (o op) invalid(format string, args ...any) error {
	return fmt.Errorf("Invalid arguments for %s: %s. Expected %s.", o, fmt.Sprintf(format, args...), o.shape())
}

// RepairKind names a mistake that was repaired.
type RepairKind string

// The mistakes that have exactly one meaning and are repaired rather than refused.
const (
	// RepairAlias: a field under another name, such as "arguments", "params" or "input" for "args", or "name"
	// for "id".
	RepairAlias RepairKind = "alias"
	// RepairStringArgs: the arguments as a string holding a JSON object (or an empty string for none).
	RepairStringArgs RepairKind = "string-args"
	// RepairNestedRequest: a whole {id, args} request nested inside the arguments, or passed where the tool id
	// belongs.
	RepairNestedRequest RepairKind = "nested-request"
	// RepairCodeFence: tool_search_code's code wrapped in a Markdown code fence.
	RepairCodeFence RepairKind = "code-fence"
)

// Repair is one repaired mistake, as telemetry and the session log keep it.
type Repair struct {
	// CallID is the model's call the request came in: the control tool's call, or the tool_search_code call
	// whose script made it; for a call it is the hidden call id once the tool is resolved.
	CallID string     `json:"callId"`
	Via    Via        `json:"via"`
	Op     string     `json:"op"`               // what the model called: tool_call, openclaw.tools.call, a tool's name
	ToolID string     `json:"toolId,omitempty"` // the tool the request was for, when it was resolved
	Kind   RepairKind `json:"kind"`
	Detail string     `json:"detail"` // what was read as what
}

// repair is a Repair before it is attributed to a call.
type repair struct {
	kind   RepairKind
	detail string
}

// Field names of the requests and the other names models give them. Aliases are read as the field (and the
// repair recorded); two names of one field in one request are refused.
var (
	idNames   = []string{"id", "toolId", "name"}
	argsNames = []string{"args", "arguments", "params", "input"}
)

// fields is a request object by field name, with the names in the order they were sent.
type fields struct {
	values map[string]json.RawMessage
	order  []string
}

// decodeFields reads the model's request as one JSON object. Absent or null is an empty object. A field sent
// twice is refused: a plain decode would keep the last one and drop the other without a word.
func decodeFields(o op, raw json.RawMessage) (fields, error) {
	f := fields{values: map[string]json.RawMessage{}}
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
		return f, nil
	}
	if !json.Valid(raw) {
		return f, o.invalid("the request is not valid JSON")
	}
	notObject := o.invalid("the request must be a JSON object, not %s", jsonKind(raw))
	if raw[0] != '{' {
		return f, notObject
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	if _, err := dec.Token(); err != nil {
		return f, notObject
	}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return f, notObject
		}
		key, _ := tok.(string)
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return f, notObject
		}
		if _, dup := f.values[key]; dup {
			return f, o.invalid("the field %q is sent twice", key)
		}
		f.values[key] = v
		f.order = append(f.order, key)
	}
	return f, nil
}

// take reads one field under its name or an alias and consumes it. Two present names of one field are refused.
// A null value counts as absent.
func (f *fields) take(o op, names []string, reps *[]repair) (json.RawMessage, error) {
	var found []string
	for _, n := range names {
		if v, ok := f.values[n]; ok && !isNull(v) {
			found = append(found, n)
		}
	}
	var v json.RawMessage
	switch len(found) {
	case 0:
	case 1:
		v = f.values[found[0]]
		if found[0] != names[0] {
			*reps = append(*reps, repair{RepairAlias, fmt.Sprintf("%q read as %q", found[0], names[0])})
		}
	case 2:
		return nil, o.invalid("both %q and %q are set, two names for one field; send it once, as %q", found[0], found[1], names[0])
	default:
		return nil, o.invalid("%s are all set, names for one field; send it once, as %q", quoteList(found), names[0])
	}
	for _, n := range names {
		delete(f.values, n)
	}
	return v, nil
}

// rest refuses whatever take did not consume: a field the operation does not have is never dropped.
func (f *fields) rest(o op, hint string) error {
	var unknown []string
	for _, k := range f.order {
		if _, ok := f.values[k]; ok {
			unknown = append(unknown, k)
		}
	}
	if len(unknown) == 0 {
		return nil
	}
	what := "unknown field "
	if len(unknown) > 1 {
		what = "unknown fields "
	}
	return o.invalid("%s%s%s", what, quoteList(unknown), hint)
}

func quoteList(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = strconv.Quote(n)
	}
	return strings.Join(q, ", ")
}

// jsonKind names the JSON type of a value for messages: "a number", "an array", ...
func jsonKind(raw json.RawMessage) string {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return "nothing"
	}
	switch raw[0] {
	case '{':
		return "an object"
	case '[':
		return "an array"
	case '"':
		return "a string"
	case 't', 'f':
		return "a boolean"
	case 'n':
		return "null"
	}
	return "a number"
}

// stringField reads a required field as a non-empty string (trimmed).
func stringField(o op, name string, raw json.RawMessage) (string, error) {
	label := strconv.Quote(name)
	if o.inCode() && name == "id" {
		label = "the tool id" // a positional argument in code mode, not a field the model wrote
	}
	var s string
	switch {
	case raw == nil:
		return "", o.invalid("%s is missing", label)
	case json.Unmarshal(raw, &s) != nil:
		return "", o.invalid("%s must be a string, not %s", label, jsonKind(raw))
	case strings.TrimSpace(s) == "":
		return "", o.invalid("%s is empty", label)
	}
	return strings.TrimSpace(s), nil
}

// inCode reports whether the operation is one of openclaw.tools.* inside tool_search_code.
func (o op) inCode() bool {
	return o == opCodeSearch || o == opCodeDescribe || o == opCodeCall
}

// searchRequest is a search as tool_search or openclaw.tools.search asked for it.
type searchRequest struct {
	queries []string
	limit   int // 0: the configured default
}

// decodeSearch reads {query, limit?} or {queries: [...], limit?}. A limit must be a positive integer (a JSON
// number: the string "3" is refused); one above maxSearchLimit is capped later.
func decodeSearch(o op, raw json.RawMessage) (searchRequest, error) {
	var req searchRequest
	f, err := decodeFields(o, raw)
	if err != nil {
		return req, err
	}
	query, queries, limit := f.values["query"], f.values["queries"], f.values["limit"]
	delete(f.values, "query")
	delete(f.values, "queries")
	delete(f.values, "limit")
	if err := f.rest(o, ""); err != nil {
		return req, err
	}
	if !isNull(query) {
		var q string
		if json.Unmarshal(query, &q) != nil {
			return req, errors.New("query must be a string.")
		}
		req.queries = append(req.queries, q)
	}
	if !isNull(queries) {
		var qs []string
		if json.Unmarshal(queries, &qs) != nil {
			return req, errors.New("queries must be an array of strings.")
		}
		req.queries = append(req.queries, qs...)
	}
	if req.queries == nil {
		return req, errors.New("query must be a string.")
	}
	if len(req.queries) > catalog.MaxBatchQueries {
		return req, catalog.ErrTooManyQueries
	}
	if !isNull(limit) {
		limit = bytes.TrimSpace(limit)
		var n json.Number
		// json.Number would also take the string "3"; a limit must be a JSON number.
		if limit[0] != '-' && (limit[0] < '0' || limit[0] > '9') || json.Unmarshal(limit, &n) != nil {
			return req, catalog.ErrInvalidLimit
		}
		u, ok := positiveInteger(n)
		if !ok {
			return req, catalog.ErrInvalidLimit
		}
		req.limit = int(min(u, math.MaxInt32))
	}
	return req, nil
}

// decodeDescribe reads tool_describe's {id} (o names the operation in messages).
func decodeDescribe(o op, raw json.RawMessage) (string, []repair, error) {
	var reps []repair
	f, err := decodeFields(o, raw)
	if err != nil {
		return "", nil, err
	}
	id, err := f.take(o, idNames, &reps)
	if err != nil {
		return "", nil, err
	}
	if err := f.rest(o, ""); err != nil {
		return "", nil, err
	}
	s, err := stringField(o, "id", id)
	return s, reps, err
}

// decodeCodeDescribe reads openclaw.tools.describe's request, {"id": <its argument>}. A whole request passed as
// the argument, describe({id: "x"}), is read as describe("x").
func decodeCodeDescribe(raw json.RawMessage) (string, []repair, error) {
	o := opCodeDescribe
	f, err := decodeFields(o, raw)
	if err != nil {
		return "", nil, err
	}
	if obj, reps, ids, args, ok := requestLike(f.values["id"]); ok && ids == 1 && args == 0 {
		id, more, err := decodeDescribe(o, obj)
		return id, append(append(reps, passedAsID(o)), more...), err
	}
	return decodeDescribe(o, raw)
}

// passedAsID is the repair of a whole request passed where the tool id belongs.
func passedAsID(o op) repair {
	return repair{RepairNestedRequest, "the whole request was passed as the first argument of " + string(o) + "; it was read as the request"}
}

// callRequest is a call before its tool is resolved: args are as sent (nil when absent), and only become the
// tool's arguments in toolArgs, which knows the tool's schema.
type callRequest struct {
	id      string
	args    json.RawMessage
	repairs []repair
}

// maxNesting bounds how many requests nested in requests are unwrapped.
const maxNesting = 4

// decodeCall reads tool_call's {id, args} (o names the operation in messages). A request whose only field is
// args holding a whole {id, args} request is unwrapped (RepairNestedRequest).
func decodeCall(o op, raw json.RawMessage) (callRequest, error) {
	var req callRequest
	for depth := 0; ; depth++ {
		f, err := decodeFields(o, raw)
		if err != nil {
			return req, err
		}
		id, err := f.take(o, idNames, &req.repairs)
		if err != nil {
			return req, err
		}
		args, err := f.take(o, argsNames, &req.repairs)
		if err != nil {
			return req, err
		}
		if err := f.rest(o, `; the tool's own arguments go inside "args"`); err != nil {
			return req, err
		}
		if id == nil && depth < maxNesting {
			if inner, reps, ids, n, ok := requestLike(args); ok && ids == 1 && n == 1 {
				req.repairs = append(req.repairs, reps...)
				req.repairs = append(req.repairs, repair{RepairNestedRequest,
					`"args" held the whole request; its "id" and "args" were used`})
				raw = inner
				continue
			}
		}
		if req.id, err = stringField(o, "id", id); err != nil {
			return req, err
		}
		req.args = args
		return req, nil
	}
}

// decodeCodeCall reads openclaw.tools.call's request, {"id": <first argument>, "args": <second>} (no "args"
// when the script passed none). A whole request passed as the first argument with nothing beside it,
// call({id, args}), is read as call(id, args).
func decodeCodeCall(raw json.RawMessage) (callRequest, error) {
	o := opCodeCall
	f, err := decodeFields(o, raw)
	if err != nil {
		return callRequest{}, err
	}
	if obj, reps, ids, n, ok := requestLike(f.values["id"]); ok && ids == 1 && n <= 1 && isEmptyObject(f.values["args"]) {
		req, err := decodeCall(o, obj)
		req.repairs = append(append(reps, passedAsID(o)), req.repairs...)
		return req, err
	}
	id, err := stringField(o, "id", f.values["id"])
	return callRequest{id: id, args: f.values["args"]}, err
}

func isEmptyObject(raw json.RawMessage) bool {
	raw = bytes.TrimSpace(raw)
	return isNull(raw) || bytes.Equal(bytes.Join(bytes.Fields(raw), nil), []byte("{}"))
}

// requestLike reads raw (an object, or a string holding one) as a request whose every field is an id or args
// field under one of their names, and says how many of each it has. It returns the request as an object.
func requestLike(raw json.RawMessage) (obj json.RawMessage, reps []repair, ids, args int, ok bool) {
	obj, reps, ok = objectValue(raw)
	if !ok {
		return nil, nil, 0, 0, false
	}
	f, err := decodeFields("", obj)
	if err != nil {
		return nil, nil, 0, 0, false
	}
	for k := range f.values {
		switch {
		case slices.Contains(idNames, k):
			ids++
		case slices.Contains(argsNames, k):
			args++
		default:
			return nil, nil, 0, 0, false
		}
	}
	return obj, reps, ids, args, true
}

// objectValue returns raw when it is a JSON object, or the object a JSON string holds (RepairStringArgs).
func objectValue(raw json.RawMessage) (json.RawMessage, []repair, bool) {
	raw = bytes.TrimSpace(raw)
	if len(raw) > 0 && raw[0] == '{' {
		return raw, nil, true
	}
	var s string
	if len(raw) == 0 || raw[0] != '"' || json.Unmarshal(raw, &s) != nil {
		return nil, nil, false
	}
	inner := bytes.TrimSpace([]byte(s))
	if len(inner) == 0 || inner[0] != '{' || !json.Valid(inner) {
		return nil, nil, false
	}
	return inner, []repair{{RepairStringArgs, "the arguments were a string holding a JSON object; the object was used"}}, true
}

// toolArgs turns the arguments the model sent for a resolved tool into the JSON object the pipeline gets:
// absent or null is {}, an empty string is {}, a string holding a JSON object is that object, and a whole
// request nested inside the arguments is unwrapped when that reading is the only one (see nestedArgs). Anything
// else that is not a JSON object is refused. sameTool reports whether an id names the tool.
func toolArgs(o op, t *catalog.Tool, raw json.RawMessage, sameTool func(string) bool) (json.RawMessage, []repair, error) {
	var reps []repair
	for depth := 0; ; depth++ {
		raw = bytes.TrimSpace(raw)
		switch {
		case len(raw) == 0 || bytes.Equal(raw, []byte("null")):
			return json.RawMessage("{}"), reps, nil
		case !json.Valid(raw):
			return nil, reps, fmt.Errorf("Invalid arguments for %s: not valid JSON.", t.ID())
		case bytes.Equal(raw, []byte(`""`)):
			reps = append(reps, repair{RepairStringArgs, "the arguments were an empty string; read as no arguments"})
			return json.RawMessage("{}"), reps, nil
		}
		obj, more, ok := objectValue(raw)
		if !ok {
			return nil, reps, argsNotObject(o, t, raw)
		}
		reps = append(reps, more...)
		if depth == maxNesting {
			return obj, reps, nil
		}
		inner, detail, ok := nestedArgs(t, obj, sameTool)
		if !ok {
			return obj, reps, nil
		}
		reps = append(reps, repair{RepairNestedRequest, detail})
		raw = inner
	}
}

func argsNotObject(o op, t *catalog.Tool, raw json.RawMessage) error {
	what := jsonKind(raw)
	if what == "a string" {
		what = "a string (a string is read only when it holds a JSON object)"
	}
	switch o {
	case opToolCall, opCodeCall:
		return o.invalid("the arguments of %s must be a JSON object, not %s", t.ID(), what)
	}
	return fmt.Errorf("Invalid arguments for %s: expected a JSON object of arguments, not %s.", t.ID(), what)
}

// nestedArgs unwraps arguments that hold a whole request ({"args": {...}}, {"id": ..., "arguments": {...}})
// when that is their only meaning: none of their fields is a property the tool declares, an id among them names
// this tool, and either the tool declares properties (so we know what it takes, and it is not this) or an id
// is there to say it is a request. A tool that really has a property called "args" gets it as sent.
func nestedArgs(t *catalog.Tool, obj json.RawMessage, sameTool func(string) bool) (json.RawMessage, string, bool) {
	f, err := decodeFields("", obj)
	if err != nil || len(f.values) == 0 {
		return nil, "", false
	}
	var id, args json.RawMessage
	var argsName string
	for k, v := range f.values {
		switch {
		case slices.Contains(idNames, k) && id == nil:
			id = v
		case slices.Contains(argsNames, k) && args == nil:
			args, argsName = v, k
		default:
			return nil, "", false // another field, or two names of one field: the tool's own arguments
		}
	}
	if args == nil {
		return nil, "", false
	}
	declared := outlineOf(t.Parameters).properties
	for k := range f.values {
		if _, ok := declared[k]; ok {
			return nil, "", false
		}
	}
	if id != nil {
		var s string
		if json.Unmarshal(id, &s) != nil || !sameTool(strings.TrimSpace(s)) {
			return nil, "", false
		}
	} else if len(declared) == 0 {
		return nil, "", false
	}
	return args, fmt.Sprintf("the arguments held a whole request; its %q was used as the arguments", argsName), true
}

// decodeCode reads tool_search_code's {code}. Code wrapped in a Markdown fence (```js ... ```) is unwrapped:
// in JavaScript the fence would parse as tagged template literals and do nothing the model meant.
func decodeCode(raw json.RawMessage) (string, []repair, error) {
	o := opToolSearchCode
	f, err := decodeFields(o, raw)
	if err != nil {
		return "", nil, err
	}
	v := f.values["code"]
	delete(f.values, "code")
	if err := f.rest(o, ""); err != nil {
		return "", nil, err
	}
	if _, err := stringField(o, "code", v); err != nil {
		return "", nil, err
	}
	var code string
	_ = json.Unmarshal(v, &code)
	if inner, ok := unfence(code); ok {
		return inner, []repair{{RepairCodeFence, "the code was wrapped in a Markdown code fence; the fence was removed"}}, nil
	}
	return code, nil, nil
}

// unfence returns the body of code that is exactly one Markdown fenced block.
func unfence(code string) (string, bool) {
	s := strings.TrimSpace(code)
	if !strings.HasPrefix(s, "```") || !strings.HasSuffix(s, "```") || len(s) < 6 {
		return "", false
	}
	body := s[3 : len(s)-3]
	nl := strings.IndexByte(body, '\n')
	if nl < 0 {
		return "", false
	}
	if lang := strings.TrimSpace(body[:nl]); strings.ContainsAny(lang, " `(){};=") {
		return "", false // not an info string: the first line is code
	}
	body = body[nl+1:]
	if strings.Contains(body, "```") || strings.TrimSpace(body) == "" {
		return "", false
	}
	return body, true
}
