package hostfns

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"strconv"
	"testing"

	"github.com/toolsearch/toolsearch/wasm"
)

// FuzzHostStart: whatever a script hands the host as (op, payload), decoding never panics: the call is either
// refused inside the script (*wasm.JSException) or dispatched to the bridge with a non-empty string id.
func FuzzHostStart(f *testing.F) {
	for _, seed := range [][2]string{
		{"search", `{"query":"x","limit":2}`}, {"describe", `{"id":"openclaw:core:x"}`}, {"call", `{"id":"a","args":{"b":1}}`},
		{"call", `{"id":42}`}, {"call", `{"id":""}`}, {"describe", `[]`}, {"call", `{"id":"a","args":null}`},
		{"delete", `{}`}, {"call", `{`}, {"call", `{"id":"\u0000"}`},
	} {
		f.Add(seed[0], seed[1])
	}
	f.Fuzz(func(t *testing.T, op, payload string) {
		calls := newCallTable(context.Background(), &fakeBridge{}, RunOptions{}.withDefaults())
		err := calls.admit(op, len(payload))
		var id string
		if err == nil {
			id, err = calls.start(context.Background(), op, payload)
		}
		if err != nil {
			var jsErr *wasm.JSException
			if !errors.As(err, &jsErr) {
				t.Fatalf("refusal is not a JSException: %v", err)
			}
			return
		}
		if n, convErr := strconv.Atoi(id); convErr != nil || n < 1 {
			t.Fatalf("bad call id %q", id)
		}
		calls.running.Wait()
		batch, err := calls.wait(context.Background())
		if err != nil || !json.Valid([]byte(batch)) {
			t.Fatalf("the batch is not JSON (%v): %q", err, batch)
		}
	})
}

// FuzzJSONStringBytes: the console limit counts what an entry adds to the logs as the CLI and the model see them,
// so the count must be exactly the length of Go's own encoding (without HTML escaping) of any text.
func FuzzJSONStringBytes(f *testing.F) {
	for _, seed := range []string{"", "plain", "<a href=\"x\">&amp;</a>", "tab\tnew\nline\r\x00\x01\x1f\x7f",
		"\u2028\u2029", "é✓😀", "\xff\xfe bad utf-8 \xc3", "\\ and \"", "[warn] {\"a\":1}"} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, s string) {
		var b bytes.Buffer
		writeJSONString(&b, s)
		if got := jsonStringBytes(s); got != b.Len() {
			t.Fatalf("jsonStringBytes(%q) = %d, encoded %q is %d bytes", s, got, b.String(), b.Len())
		}
		var back string
		if err := json.Unmarshal(b.Bytes(), &back); err != nil {
			t.Fatalf("%q does not decode: %v", b.String(), err)
		}
	})
}
