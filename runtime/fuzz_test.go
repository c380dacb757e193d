package runtime

import (
	"encoding/json"
	"errors"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/toolsearch/toolsearch/catalog"
)

// FuzzParseConfig: whatever the value of tools.toolSearch, parsing never panics, the resolved values are always
// inside their clamps, and a value CheckConfig accepts parses without problems and resolves the same.
func FuzzParseConfig(f *testing.F) {
	for _, seed := range []string{`true`, `false`, `{}`, `null`, `{"mode":"tools"}`, `{"enabled":false,"mode":"code"}`,
		`{"codeTimeoutMs":1e309}`, `{"maxSearchLimit":-1,"searchDefaultLimit":"8"}`, `{"codeFuel":18446744073709551616}`,
		`{"mode":"directory","codeTimeoutMs":999,"maxSearchLimit":51,"searchDefaultLimit":50}`, `[1]`, `"code"`,
		`{"codeMemoryBytes":1.5,"codeMaxCalls":0}`, `{"enabled":"yes"}`} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		cfg, err := ParseConfig(raw)
		var cerr *ConfigError
		if err != nil && !errors.As(err, &cerr) {
			t.Fatalf("ParseConfig returned %T, want *ConfigError: %v", err, err)
		}
		r := cfg.resolved()
		if r.CodeTimeoutMs < MinCodeTimeoutMs || r.CodeTimeoutMs > MaxCodeTimeoutMs {
			t.Fatalf("codeTimeoutMs %d outside its clamp", r.CodeTimeoutMs)
		}
		if r.MaxSearchLimit < 1 || r.MaxSearchLimit > MaxMaxSearchLimit {
			t.Fatalf("maxSearchLimit %d outside its clamp", r.MaxSearchLimit)
		}
		if r.SearchDefaultLimit < 1 || r.SearchDefaultLimit > r.MaxSearchLimit {
			t.Fatalf("searchDefaultLimit %d outside 1..%d", r.SearchDefaultLimit, r.MaxSearchLimit)
		}
		if r.Enabled && !knownMode(r.Mode) {
			t.Fatalf("enabled with unknown mode %q", r.Mode)
		}
		strict, _, strictErr := CheckConfig(raw)
		if strictErr == nil && err != nil {
			t.Fatalf("CheckConfig accepted what ParseConfig refused: %v", err)
		}
		if !reflect.DeepEqual(strict, cfg) {
			t.Fatalf("CheckConfig resolved %+v, ParseConfig %+v", strict, cfg)
		}
	})
}

// FuzzSearchRequest: decoding tool_search / openclaw.tools.search requests never panics, and every failure is
// one of the documented errors or a refusal that shows the right shape.
func FuzzSearchRequest(f *testing.F) {
	for _, seed := range []string{`{"query":"x"}`, `{"query":"x","limit":3}`, `{"queries":["a","b"],"limit":1.5}`,
		`{"query":1}`, `{"limit":"3","query":"q"}`, `{"query":"q","limit":-0}`, `{"query":"q","limit":1e400}`,
		`{"queries":[1,2]}`, `{"query":null,"queries":null}`, `{"query":"q","limit":[]}`, `{"query":"q","limit":true}`,
		`{"queries":["a","a","a","a","a","a","a","a","a","a","a","a","a","a","a","a","a"]}`, `{"query":"q","limit": 7 }`,
		`{"query":"q","max":3}`, `{"query":"a","query":"b"}`, `"q"`, `[]`} {
		f.Add([]byte(seed))
	}
	documented := map[string]bool{
		"query must be a string.":              true,
		"queries must be an array of strings.": true,
		catalog.ErrInvalidLimit.Error():        true,
		catalog.ErrTooManyQueries.Error():      true,
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		req, err := decodeSearch(opToolSearch, raw)
		if err != nil {
			if !documented[err.Error()] && !refusal(opToolSearch, err) {
				t.Fatalf("undocumented error %q", err)
			}
			return
		}
		if len(req.queries) == 0 || len(req.queries) > catalog.MaxBatchQueries {
			t.Fatalf("%d queries accepted", len(req.queries))
		}
		if req.limit < 0 {
			t.Fatalf("negative limit %d accepted", req.limit)
		}
	})
}

func refusal(o op, err error) bool {
	msg := err.Error()
	return strings.HasPrefix(msg, "Invalid arguments for "+string(o)+": ") && strings.HasSuffix(msg, "Expected "+o.shape()+".")
}

// FuzzCallRequest: whatever the model sends to tool_call, decoding never panics; a decoded request has an id; a
// refusal shows the right shape; the arguments a tool gets are always one JSON object, and a well-formed
// request is never "repaired".
func FuzzCallRequest(f *testing.F) {
	for _, seed := range []string{
		`{"id":"echo","args":{"message":"hi"}}`, `{"id":"echo","arguments":{"message":"hi"}}`,
		`{"id":"echo","args":"{\"message\":\"hi\"}"}`, `{"id":"echo","args":{"id":"echo","args":{"message":"hi"}}}`,
		`{"args":{"id":"echo","arguments":{"message":"hi"}}}`, `{"id":"echo","args":{},"arguments":{}}`,
		`{"id":"echo","bogus":1}`, `{"id":"echo","message":"hi"}`, `{"id":5}`, `{"name":"echo","input":{}}`,
		`{"id":"echo","args":""}`, `{"id":"echo","args":[1]}`, `{"id":"echo","args":"[1]"}`, `{"id":"echo","args":{"args":{"args":{}}}}`,
		`{"id":"echo","id":"other"}`, `null`, `{`, `{"id":"echo","args":{"message":"hi","args":1}}`,
		`{"id":{"id":"echo","args":{"message":"hi"}}}`, `{"id":{"name":"echo"}}`, `{"code":"` + "```js\\nreturn 1\\n```" + `"}`,
		`{"code":"return 1","language":"js"}`, `{"id":{"id":"echo"},"args":{"x":1}}`,
	} {
		f.Add([]byte(seed), true)
		f.Add([]byte(seed), false)
	}
	f.Fuzz(func(t *testing.T, raw []byte, declares bool) {
		// Every other decoder of what the model sends gets the same bytes: no panic, refusals show the shape.
		if _, err := decodeCodeCall(raw); err != nil && !refusal(opCodeCall, err) {
			t.Fatalf("openclaw.tools.call refusal without the shape: %q", err)
		}
		for _, d := range []struct {
			o      op
			decode func(json.RawMessage) (string, []repair, error)
		}{
			{opToolDescribe, func(r json.RawMessage) (string, []repair, error) { return decodeDescribe(opToolDescribe, r) }},
			{opCodeDescribe, decodeCodeDescribe},
			{opToolSearchCode, decodeCode},
		} {
			if s, _, err := d.decode(raw); err != nil && !refusal(d.o, err) {
				t.Fatalf("%s refusal without the shape: %q", d.o, err)
			} else if err == nil && strings.TrimSpace(s) == "" {
				t.Fatalf("%s accepted an empty value", d.o)
			}
		}
		req, err := decodeCall(opToolCall, raw)
		if err != nil {
			if !refusal(opToolCall, err) {
				t.Fatalf("refusal without the shape: %q", err)
			}
			return
		}
		if strings.TrimSpace(req.id) == "" {
			t.Fatal("a request without an id was accepted")
		}
		tool := &catalog.Tool{Source: catalog.SourceMCP, SourceName: "s", Name: "echo"}
		if declares {
			tool.Parameters = json.RawMessage(`{"type":"object","properties":{"message":{"type":"string"}}}`)
		}
		args, reps, err := toolArgs(opToolCall, tool, req.args, func(s string) bool { return s == "echo" })
		if err != nil {
			return
		}
		var obj map[string]json.RawMessage
		if json.Unmarshal(args, &obj) != nil || obj == nil {
			t.Fatalf("the tool would get %s, not a JSON object", args)
		}
		if wellFormed(raw) && len(req.repairs)+len(reps) > 0 {
			t.Fatalf("a well-formed request was repaired: %+v %+v", req.repairs, reps)
		}
	})
}

// wellFormed: exactly {"id": string, "args": object} whose args are not themselves a request.
func wellFormed(raw []byte) bool {
	var top map[string]json.RawMessage
	if json.Unmarshal(raw, &top) != nil || len(top) != 2 || top["id"] == nil || top["args"] == nil {
		return false
	}
	var id string
	var args map[string]json.RawMessage
	if json.Unmarshal(top["id"], &id) != nil || json.Unmarshal(top["args"], &args) != nil || args == nil {
		return false
	}
	for k := range args {
		if !slices.Contains(idNames, k) && !slices.Contains(argsNames, k) {
			return true
		}
	}
	return len(args) == 0
}
