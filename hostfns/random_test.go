package hostfns

import (
	"context"
	"encoding/json"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const drawScript = `return [Math.random(), Math.random(), Math.random(), Array.from(crypto.getRandomValues(new Uint32Array(4)))]`

func draw(t *testing.T, s *Sandbox, opts *RunOptions) string {
	t.Helper()
	res, err := s.Run(context.Background(), drawScript, &fakeBridge{}, opts)
	require.NoError(t, err)
	var v []any
	require.NoError(t, json.Unmarshal(res.Value, &v))
	for _, x := range v[:3] {
		f := x.(float64)
		require.True(t, f >= 0 && f < 1, "%v", f)
	}
	return string(res.Value)
}

// TestRandomPerRun: every run (a reused instance, another sandbox) draws its own Math.random sequence and
// crypto bytes from the host, and a fixed seed reproduces one.
func TestRandomPerRun(t *testing.T) {
	a := sandbox(t)
	b, err := New(context.Background(), nil)
	require.NoError(t, err)
	t.Cleanup(func() { _ = b.Close(context.Background()) })
	seen := map[string]bool{}
	for i := 0; i < 4; i++ {
		for _, s := range []*Sandbox{a, b} {
			got := draw(t, s, nil)
			require.False(t, seen[got], "run %d drew a sequence an earlier run drew: %s", i, got)
			seen[got] = true
		}
	}
	fixed := draw(t, a, &RunOptions{RandomSeed: 42})
	assert.Equal(t, fixed, draw(t, b, &RunOptions{RandomSeed: 42}), "a fixed seed reproduces, in any sandbox")
	assert.Equal(t, fixed, draw(t, a, &RunOptions{RandomSeed: 42}))
	assert.NotEqual(t, fixed, draw(t, a, &RunOptions{RandomSeed: 43}))
}

func TestGetRandomValues(t *testing.T) {
	n := strconv.Itoa(MaxRandomBytes)
	res, err := run(t, `const a = new Uint8Array(`+n+`); crypto.getRandomValues(a); return a.some(x => x !== 0) && crypto.getRandomValues(a) === a`, nil, nil)
	require.NoError(t, err)
	assert.Equal(t, "true", string(res.Value), "fills up to MaxRandomBytes")
	res, err = run(t, `try { crypto.getRandomValues(new Uint8Array(`+n+` + 1)); return "filled" } catch (e) { return e.name }`, nil, nil)
	require.NoError(t, err)
	assert.Equal(t, `"QuotaExceededError"`, string(res.Value), "one byte more than MaxRandomBytes is refused")
	res, err = run(t, `const out = []; for (const a of [new Float64Array(2), new DataView(new ArrayBuffer(2)), [1, 2], {}]) {
		try { crypto.getRandomValues(a); out.push("filled") } catch (e) { out.push(e.name) } } return out`, nil, nil)
	require.NoError(t, err)
	assert.Equal(t, `["TypeError","TypeError","TypeError","TypeError"]`, string(res.Value))
	res, err = run(t, `const b = new Uint16Array(new ArrayBuffer(8), 2, 2); crypto.getRandomValues(b); return new Uint16Array(b.buffer)[0] + new Uint16Array(b.buffer)[3]`, nil, nil)
	require.NoError(t, err)
	assert.Equal(t, "0", string(res.Value), "only the view's own bytes are filled")
}
