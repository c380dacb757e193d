package wasm

import (
	"sync"

	"github.com/tetratelabs/wazero/experimental"
)

// linearMemory backs one instance's memory. It enforces the run's own memory cap (which may be below the
// engine-wide page limit), records the peak for Usage, and notes when a grow was refused so that a resulting
// "out of memory" is reported as a memory limit rather than a script error.
//
// Backing arrays come from a pool: a run that restores a multi-megabyte snapshot into fresh memory pays for page
// faults and GC work that a recycled array does not.
type linearMemory struct {
	limit      uint64
	initialCap uint64 // the snapshot size: allocate it up front so restoring never reallocates
	// zeroFrom is where the zeroing of a recycled array may start: every run writes the whole snapshot over
	// [0, snapshot size) before any guest code runs, so only what lies beyond can leak into the next run.
	zeroFrom uint64
	pool     *sync.Pool
	buf      []byte
	peak     uint64
	refused  bool
}

var _ experimental.MemoryAllocator = (*linearMemory)(nil)

func (m *linearMemory) Allocate(capBytes, _ uint64) experimental.LinearMemory {
	want := max(capBytes, m.initialCap)
	if p, ok := m.pool.Get().(*[]byte); ok && uint64(cap(*p)) >= want && uint64(cap(*p)) <= m.limit {
		m.buf = (*p)[:0]
	} else {
		m.buf = make([]byte, 0, min(want, m.limit))
	}
	return m
}

func (m *linearMemory) Reallocate(size uint64) []byte {
	if size > m.limit {
		m.refused = true
		return nil
	}
	if size > uint64(cap(m.buf)) {
		grown := make([]byte, size, min(max(size, uint64(cap(m.buf))*2), m.limit))
		copy(grown, m.buf)
		m.buf = grown
	} else {
		// Bytes past the old length are zero: fresh arrays are zeroed by Go, and Free zeroes a recycled array's
		// used part past zeroFrom before it goes back to the pool.
		m.buf = m.buf[:size]
	}
	m.peak = max(m.peak, size)
	return m.buf
}

func (m *linearMemory) Free() {
	if m.buf == nil {
		return
	}
	buf := m.buf
	m.buf = nil
	if uint64(len(buf)) > m.zeroFrom {
		clear(buf[m.zeroFrom:])
	}
	buf = buf[:0]
	m.pool.Put(&buf)
}
