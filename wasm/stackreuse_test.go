package wasm

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A run that overflows the stack trips the guard, which zeroes its low-water mark (the mark of that trap); the
// instance is reused, and the next run on it must start with the mark back, or it has no stack guard and every
// failure of it reads as a stack overflow.
func TestStackGuardIsResetOnReuse(t *testing.T) {
	e := lockedReuseEngine(t)
	drainPool(e)
	_, err := e.Run(context.Background(), "function f() { return f() + 1 } f()", nil)
	requireLimit(t, err, LimitStack)
	inst := idleInstance(e)
	require.NotNil(t, inst, "the instance went back to the pool")

	res, err := e.Run(context.Background(), "6 * 7", nil)
	require.NoError(t, err)
	assert.Equal(t, "42", res.Value)
	require.Equal(t, 2, inst.runs, "the same instance ran it")
	assert.Equal(t, e.snap.stackLow, uint32(inst.stackLow.Get()), "the reused instance's stack guard is armed again")

	_, err = e.Run(context.Background(), "function g() { return g() + 1 } g()", nil)
	requireLimit(t, err, LimitStack)
	require.Equal(t, 3, inst.runs)
}
