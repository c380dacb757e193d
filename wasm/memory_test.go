package wasm

import (
	"bytes"
	"sync"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A recycled backing array must come back zeroed past the snapshot (everything before is overwritten by the
// restore): the next run's freshly grown pages must never show a previous run's bytes.
func TestRecycledMemoryIsZeroedPastTheSnapshot(t *testing.T) {
	pool := &sync.Pool{}
	const snap, grown = 4 * pageSize, 16 * pageSize
	reused := false
	for range 20 {
		m := &linearMemory{limit: 64 * pageSize, initialCap: snap, zeroFrom: snap, pool: pool}
		m.Allocate(snap, 64*pageSize)
		buf := m.Reallocate(grown)
		require.Len(t, buf, grown)
		assert.True(t, bytes.Equal(buf[snap:], make([]byte, grown-snap)), "bytes past the snapshot are zero")
		first := unsafe.SliceData(buf)
		for i := range buf {
			buf[i] = 0xab // what a run leaves behind
		}
		m.Free()

		next := &linearMemory{limit: 64 * pageSize, initialCap: snap, zeroFrom: snap, pool: pool}
		next.Allocate(snap, 64*pageSize)
		again := next.Reallocate(grown)
		if unsafe.SliceData(again) == first {
			reused = true
			assert.True(t, bytes.Equal(again[snap:], make([]byte, grown-snap)), "a recycled array is zero past the snapshot")
		}
		next.Free()
	}
	require.True(t, reused, "the pool never handed an array back, so the test proved nothing")
}

func TestMemoryCapAndPeak(t *testing.T) {
	m := &linearMemory{limit: 8 * pageSize, pool: &sync.Pool{}}
	m.Allocate(pageSize, 8*pageSize)
	require.NotNil(t, m.Reallocate(4*pageSize))
	assert.False(t, m.refused)
	assert.Nil(t, m.Reallocate(9*pageSize), "a grow past the run's cap is refused")
	assert.True(t, m.refused)
	assert.EqualValues(t, 4*pageSize, m.peak)
	m.Free()
}
