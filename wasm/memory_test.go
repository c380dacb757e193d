package wasm

import (
	"bytes"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A recycled backing array must come back zeroed past the snapshot (everything before is overwritten by the
// restore): the next run's freshly grown pages must never show a previous run's bytes.
func TestRecycledMemoryIsZeroedPastTheSnapshot(t *testing.T) {
	for name, pool := range map[string]bufferPool{"heap": &heapPool{}, "os": newBufferPool(64 * pageSize)} {
		t.Run(name, func(t *testing.T) { testRecycledMemoryIsZeroed(t, pool) })
	}
}

func testRecycledMemoryIsZeroed(t *testing.T, pool bufferPool) {
	defer pool.close()
	const snap, grown = 4*pageSize + 100, 16 * pageSize // a snapshot that ends inside an OS page
	reused := false
	for range 20 {
		m := &linearMemory{limit: 64 * pageSize, snapshotBytes: snap, pool: pool}
		m.Allocate(snap, 64*pageSize)
		buf := m.Reallocate(grown)
		require.Len(t, buf, grown)
		assert.True(t, bytes.Equal(buf[snap:], make([]byte, grown-snap)), "bytes past the snapshot are zero")
		first := unsafe.SliceData(buf)
		for i := range buf {
			buf[i] = 0xab // what a run leaves behind
		}
		m.Free()
		m.release()

		next := &linearMemory{limit: 64 * pageSize, snapshotBytes: snap, pool: pool}
		next.Allocate(snap, 64*pageSize)
		again := next.Reallocate(grown)
		if unsafe.SliceData(again) == first {
			reused = true
			assert.True(t, bytes.Equal(again[snap:], make([]byte, grown-snap)), "a recycled array is zero past the snapshot")
		}
		next.Free()
		next.release()
	}
	require.True(t, reused, "the pool never handed an array back, so the test proved nothing")
}

func TestMemoryCapAndPeak(t *testing.T) {
	m := &linearMemory{limit: 8 * pageSize, pool: &heapPool{}}
	m.Allocate(pageSize, 8*pageSize)
	require.NotNil(t, m.Reallocate(4*pageSize))
	assert.Nil(t, m.Reallocate(9*pageSize), "a grow past the run's cap is refused")
	assert.EqualValues(t, 4*pageSize, m.peak)
	m.release()
}
