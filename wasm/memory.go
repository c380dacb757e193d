package wasm

import (
	"sync"

	"github.com/tetratelabs/wazero/experimental"
)

// linearMemory backs one instance's memory. It enforces the run's own memory cap (which may be below the
// engine-wide page limit) and records the peak for Usage. A refused grow (past this cap or wazero's page limit)
// is reported by the instrumentation's memory hook, so that the run's end is classified as a memory limit only
// when one was really hit.
//
// Backing buffers come from a bufferPool. On Linux that is a reservation of address space per buffer, as large
// as the engine's cap, whose pages the OS supplies as the guest touches them: growing never copies (a copying
// grow held the old and the new array at once, and the process peaked at twice the memory limit), and the
// memory lives outside the Go heap, so the garbage collector's headroom does not double it either.
type linearMemory struct {
	limit uint64
	// snapshotBytes is the size of the snapshot every run restores over [0, snapshotBytes) before guest code
	// runs: the buffer is taken at least that large, and only what lies beyond must be zeroed when it is recycled.
	snapshotBytes uint64
	pool          bufferPool
	buf           []byte
	peak          uint64
	refused       bool // a grow was refused: the run hit its memory limit
}

var _ experimental.MemoryAllocator = (*linearMemory)(nil)

func (m *linearMemory) Allocate(capBytes, _ uint64) experimental.LinearMemory {
	m.buf = m.pool.get(max(capBytes, m.snapshotBytes), m.limit)
	return m
}

func (m *linearMemory) Reallocate(size uint64) []byte {
	if size > m.limit {
		return nil // the instrumentation's memory hook records the refusal
	}
	if size > uint64(cap(m.buf)) {
		// Only a Go-heap buffer can be too small: a reservation always covers the limit.
		grown := make([]byte, size, min(max(size, uint64(cap(m.buf))*2), m.limit))
		copy(grown, m.buf)
		m.buf = grown
	} else {
		// Bytes past the old length are zero: new buffers are zero, and put zeroes a recycled one's used part
		// past the snapshot.
		m.buf = m.buf[:size]
	}
	m.peak = max(m.peak, size)
	return m.buf
}

// Free is wazero's signal that the instance is closed. The buffer is not released here: Engine.Close can close
// the instance while the guest still runs on another goroutine, and a recycled (or unmapped) buffer under running
// code would leak into another run or crash the process. The run releases it once its guest has stopped.
func (m *linearMemory) Free() {}

// zero makes each range [from, to) of m.buf zero again, as cheaply as the pool can.
func (m *linearMemory) zero(ranges ...[2]uint64) { m.pool.zero(m.buf[:cap(m.buf)], ranges...) }

// release returns the buffer to the pool. Only the run that owns the memory calls it, after the guest stopped.
func (m *linearMemory) release() {
	if m.buf != nil {
		m.pool.put(m.buf, m.snapshotBytes)
		m.buf = nil
	}
}

// bufferPool hands out linear-memory buffers and takes them back zeroed past the snapshot. A buffer from get has
// length 0 and a capacity of at least min(want, limit); put gets it back with the length it reached.
type bufferPool interface {
	get(want, limit uint64) []byte
	put(buf []byte, zeroFrom uint64)
	// zero makes each range [from, to) of buf zero, where buf is a whole buffer from get; where the OS allows,
	// the pages in the ranges are given back instead of written, so only those a run touched cost anything.
	zero(buf []byte, ranges ...[2]uint64)
	close()
}

// heapPool keeps Go-heap buffers: a run that restores a multi-megabyte snapshot into fresh memory pays for
// page faults and GC work that a recycled buffer does not. It is the fallback where address space cannot be
// reserved.
type heapPool struct{ pool sync.Pool }

func (p *heapPool) get(want, limit uint64) []byte {
	if b, ok := p.pool.Get().(*[]byte); ok && uint64(cap(*b)) >= min(want, limit) && uint64(cap(*b)) <= limit {
		return (*b)[:0]
	}
	return make([]byte, 0, min(want, limit))
}

func (p *heapPool) zero(buf []byte, ranges ...[2]uint64) {
	for _, rg := range ranges {
		clear(buf[rg[0]:rg[1]])
	}
}

func (p *heapPool) put(buf []byte, zeroFrom uint64) {
	if uint64(len(buf)) > zeroFrom {
		clear(buf[zeroFrom:])
	}
	buf = buf[:0]
	p.pool.Put(&buf)
}

func (p *heapPool) close() {}
