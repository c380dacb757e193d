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

// zero clears exactly [from, to) on both pools, also where the range starts or ends inside an OS page.
func TestPoolZeroClearsExactlyTheRange(t *testing.T) {
	for name, pool := range map[string]bufferPool{"heap": &heapPool{}, "os": newBufferPool(64 * pageSize)} {
		t.Run(name, func(t *testing.T) {
			defer pool.close()
			for _, rg := range [][2]uint64{{0, 0}, {0, 8192}, {100, 5000}, {4096, 3 * 4096}, {10, 4 * pageSize}, {7, 11}} {
				buf := pool.get(4*pageSize, 64*pageSize)[:4*pageSize]
				for i := range buf {
					buf[i] = 0xcd
				}
				pool.zero(buf[:cap(buf)], rg)
				for i, c := range buf {
					want := byte(0xcd)
					if uint64(i) >= rg[0] && uint64(i) < rg[1] {
						want = 0
					}
					if c != want {
						t.Fatalf("range %v: byte %d is %#x, want %#x", rg, i, c, want)
					}
				}
				pool.put(buf, 0)
			}
		})
	}
}

// snapshotRanges covers the memory exactly, in order, and every range it marks zero is zero: restoring from the
// ranges over any garbage gives the snapshot back.
func FuzzSnapshotRanges(f *testing.F) {
	f.Add([]byte{1, 2, 3}, uint16(0), uint32(40000))
	f.Add([]byte{}, uint16(9000), uint32(70000))
	f.Add([]byte{0xff}, uint16(60000), uint32(65535))
	f.Fuzz(func(t *testing.T, data []byte, at uint16, size uint32) {
		size %= 1 << 18
		memory := make([]byte, int(size)+len(data))
		copy(memory[min(int(at), int(size)):], data)
		// Sprinkle a byte every few pages so that short and long zero runs both occur.
		for i := int(at) * 3; i < len(memory) && at > 0; i += int(at) * 5 {
			memory[i] = 1
		}
		ranges := snapshotRanges(memory)
		restored := bytes.Repeat([]byte{0xee}, len(memory))
		next := uint32(0)
		for _, rg := range ranges {
			require.Equal(t, next, rg.from, "ranges are contiguous")
			require.Less(t, rg.from, rg.to, "no empty range")
			if rg.zero {
				require.True(t, isZero(memory[rg.from:rg.to]))
				clear(restored[rg.from:rg.to])
			} else {
				copy(restored[rg.from:rg.to], memory[rg.from:rg.to])
			}
			next = rg.to
		}
		require.EqualValues(t, len(memory), next, "the ranges cover all of the memory")
		require.Equal(t, memory, restored)
	})
}

// zero over several ranges at once (one pagemap read for all) clears exactly their bytes: ranges inside a page,
// across pages, with more dirty pages than are cleared in place, and pages never touched between them.
func TestPoolZeroClearsSeveralRanges(t *testing.T) {
	const size = 8 * pageSize // 128 OS pages
	ranges := [][2]uint64{{100, 5000}, {3 * 4096, 6*4096 + 7}, {8*4096 + 1, 8*4096 + 9}, {10 * 4096, 90 * 4096}, {100*4096 - 5, 120 * 4096}}
	for name, pool := range map[string]bufferPool{"heap": &heapPool{}, "os": newBufferPool(16 * pageSize)} {
		t.Run(name, func(t *testing.T) {
			defer pool.close()
			buf := pool.get(size, 16*pageSize)[:size]
			for i := range buf {
				if (i/4096)%7 != 5 { // every seventh page left untouched
					buf[i] = 0xcd
				}
			}
			pool.zero(buf[:cap(buf)], ranges...)
			for i, c := range buf {
				want := byte(0xcd)
				if (i/4096)%7 == 5 {
					want = 0
				}
				for _, rg := range ranges {
					if uint64(i) >= rg[0] && uint64(i) < rg[1] {
						want = 0
					}
				}
				if c != want {
					t.Fatalf("byte %d is %#x, want %#x", i, c, want)
				}
			}
			pool.put(buf, 0)
		})
	}
}
