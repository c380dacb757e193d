package main

import (
	"runtime"
	"runtime/debug"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// heapGoal is the Go runtime's next heap goal for live bytes at GOGC=percent (stacks and globals aside).
func heapGoal(live uint64, percent int) uint64 {
	return max(live+live*uint64(percent)/100, runtimeHeapMinimum*uint64(percent)/100)
}

func TestGCPercentForKeepsTheFloor(t *testing.T) {
	const mib = 1 << 20
	for _, live := range []uint64{0, 512 << 10, 1 * mib, 3 * mib, 8 * mib, 20 * mib, 31 * mib} {
		p := gcPercentFor(live, proxyHeapFloor)
		goal := heapGoal(max(live, 1), p)
		// The goal lands at live+floor, give or take the integer division's rounding.
		assert.InDelta(t, float64(max(live, 1)+proxyHeapFloor), float64(goal), float64(proxyHeapFloor)/50, "live %d: GOGC %d", live, p)
		assert.GreaterOrEqual(t, p, 100)
	}
	// A live heap past the floor gets Go's default back: its own doubling is more headroom than the floor.
	for _, live := range []uint64{32 * mib, 100 * mib, 4 << 30} {
		assert.Equal(t, 100, gcPercentFor(live, proxyHeapFloor), "live %d", live)
	}
}

// TestKeepHeapFloorFollowsEveryCollection: after each collection the GOGC in force is the one for the live heap
// found, until stop, which restores the GOGC of before; with GOGC in the environment nothing changes.
func TestKeepHeapFloorFollowsEveryCollection(t *testing.T) {
	current := func() int { p := debug.SetGCPercent(-1); debug.SetGCPercent(p); return p }
	before := current()

	t.Run("GOGC set", func(t *testing.T) {
		t.Setenv("GOGC", "100")
		debug.SetGCPercent(137)
		defer debug.SetGCPercent(before)
		stop := keepHeapFloor(proxyHeapFloor)
		runtime.GC()
		runtime.GC()
		assert.Equal(t, 137, current())
		stop()
		assert.Equal(t, 137, current())
	})

	stop := keepHeapFloor(proxyHeapFloor)
	defer stop()
	require.Greater(t, current(), 100, "the test's own live heap is far below the floor")
	// Hold 64 MiB live: the next collection's cleanup must give Go's default back.
	held := make([]*[1 << 20]byte, 64)
	for i := range held {
		held[i] = new([1 << 20]byte)
	}
	runtime.GC()
	require.Eventually(t, func() bool { runtime.GC(); return current() == 100 }, 30*time.Second, 10*time.Millisecond,
		"GOGC %d with %d live", current(), liveHeap())
	runtime.KeepAlive(held)
	held = nil
	require.Eventually(t, func() bool { runtime.GC(); return current() > 100 }, 30*time.Second, 10*time.Millisecond,
		"GOGC %d with %d live", current(), liveHeap())
	stop()
	assert.Equal(t, before, current())
	runtime.GC()
	runtime.GC()
	assert.Equal(t, before, current(), "a cleanup after stop changed GOGC")
}
