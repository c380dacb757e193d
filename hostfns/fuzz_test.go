package hostfns

import (
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
		bridge := &fakeBridge{}
		st := &runState{bridge: bridge, opts: RunOptions{}.withDefaults(), callCtx: context.Background()}
		st.done = make(chan completion, st.opts.MaxCalls)
		ctx := context.WithValue(context.Background(), stateKey{}, st)
		id, err := hostStart(ctx, []string{op, payload})
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
		st.inflight.Wait()
		c := <-st.done
		if c.err == nil && !json.Valid(c.value) {
			t.Fatalf("completion is not JSON: %q", c.value)
		}
	})
}
