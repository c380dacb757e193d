package runtime

import (
	"encoding/json"
	"errors"
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
		if strict != cfg {
			t.Fatalf("CheckConfig resolved %+v, ParseConfig %+v", strict, cfg)
		}
	})
}

// FuzzSearchRequest: the bridge's decoding of openclaw.tools.search / tool_search arguments never panics, and
// every failure is one of the documented errors.
func FuzzSearchRequest(f *testing.F) {
	for _, seed := range []string{`{"query":"x"}`, `{"query":"x","limit":3}`, `{"queries":["a","b"],"limit":1.5}`,
		`{"query":1}`, `{"limit":"3","query":"q"}`, `{"query":"q","limit":-0}`, `{"query":"q","limit":1e400}`,
		`{"queries":[1,2]}`, `{"query":null,"queries":null}`, `{"query":"q","limit":[]}`, `{"query":"q","limit":true}`,
		`{"queries":["a","a","a","a","a","a","a","a","a","a","a","a","a","a","a","a","a"]}`, `{"query":"q","limit": 7 }`} {
		f.Add([]byte(seed))
	}
	documented := map[string]bool{
		"query must be a string.":              true,
		"queries must be an array of strings.": true,
		catalog.ErrInvalidLimit.Error():        true,
		catalog.ErrTooManyQueries.Error():      true,
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		var args map[string]json.RawMessage
		if json.Unmarshal(raw, &args) != nil || args == nil {
			return
		}
		req, err := parseSearchRequest(args)
		if err != nil {
			if !documented[err.Error()] {
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
