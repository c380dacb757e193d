package wasm

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"
)

// A run that overflows the stack trips the guard, which zeroes its low-water mark; the instance is reused, and
// the next run on it must have the mark back: its failures are its own (memory here), and a later overflow is
// caught by the guard again.
func TestStackGuardIsResetOnReuse(t *testing.T) {
	e := lockedReuseEngine(t)
	drainPool(e)
	_, err := e.Run(context.Background(), "function f() { return f() + 1 } f()", nil)
	requireLimit(t, err, LimitStack)
	inst := idleInstance(e)
	require.NotNil(t, inst, "the instance went back to the pool")

	_, err = e.Run(context.Background(), "new Uint8Array(20 << 20).length", &RunOptions{MemoryBytes: 16 << 20})
	requireLimit(t, err, LimitMemory)
	require.Equal(t, 2, inst.runs, "the same instance ran it")

	if idleInstance(e) == inst {
		_, err = e.Run(context.Background(), "function g() { return g() + 1 } g()", nil)
		requireLimit(t, err, LimitStack)
	}
}
