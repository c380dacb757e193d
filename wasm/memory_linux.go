package wasm

import (
	"os"
	"runtime"
	"sync"
	"syscall"
)

// newBufferPool reserves address space per buffer where the OS allows it, and falls back to the Go heap.
func newBufferPool(reserve uint64) bufferPool {
	p := &mmapPool{reserve: int(reserve), keep: 2 * runtime.GOMAXPROCS(0), page: os.Getpagesize()}
	probe, err := p.mmap()
	if err != nil {
		return &heapPool{}
	}
	p.free = append(p.free, probe)
	return p
}

// mmapPool hands out private anonymous mappings as large as the engine's memory cap. MAP_NORESERVE takes only
// address space: the kernel supplies zeroed pages as the guest touches them, so a run holds the resident memory
// it used, never the cap. A returned buffer gives its pages past the snapshot back with MADV_DONTNEED, which on
// Linux also guarantees they read as zero the next time they are touched.
type mmapPool struct {
	reserve int // bytes per mapping
	keep    int // idle mappings kept for reuse; more are unmapped
	page    int

	mu     sync.Mutex
	free   [][]byte // full-capacity mappings
	closed bool
}

func (p *mmapPool) mmap() ([]byte, error) {
	// Small pages (no MADV_HUGEPAGE): a run that touches only the snapshot holds 1.4 MiB instead of 2 MiB.
	return syscall.Mmap(-1, 0, p.reserve, syscall.PROT_READ|syscall.PROT_WRITE,
		syscall.MAP_PRIVATE|syscall.MAP_ANON|syscall.MAP_NORESERVE)
}

func (p *mmapPool) get(want, limit uint64) []byte {
	if min(want, limit) > uint64(p.reserve) {
		return make([]byte, 0, min(want, limit)) // cannot happen: limits never exceed the engine's cap
	}
	p.mu.Lock()
	if n := len(p.free); n > 0 {
		b := p.free[n-1]
		p.free = p.free[:n-1]
		p.mu.Unlock()
		return b[:0]
	}
	p.mu.Unlock()
	b, err := p.mmap()
	if err != nil {
		// Out of address space (a tight RLIMIT_AS): this run gets a Go-heap buffer instead.
		return make([]byte, 0, min(want, limit))
	}
	return b[:0]
}

// zero clears buf[from:to] where it is not whole OS pages and gives the whole pages back with MADV_DONTNEED:
// the kernel drops only the pages a run touched, and supplies zeroed ones again if the next run touches them.
func (p *mmapPool) zero(buf []byte, from, to uint64) {
	if !p.zeroPages(buf, int(from), int(to)) {
		clear(buf[from:to])
	}
}

// zeroPages zeroes full[from:to] of one of this pool's mappings; it reports false when full is not one or
// madvise failed.
func (p *mmapPool) zeroPages(full []byte, from, to int) bool {
	if cap(full) != p.reserve {
		return false
	}
	full = full[:cap(full)]
	pageStart := min((from+p.page-1)/p.page*p.page, to)
	pageEnd := max(to/p.page*p.page, pageStart)
	clear(full[from:pageStart])
	clear(full[pageEnd:to])
	return pageEnd == pageStart || syscall.Madvise(full[pageStart:pageEnd], syscall.MADV_DONTNEED) == nil
}

func (p *mmapPool) put(buf []byte, zeroFrom uint64) {
	if cap(buf) != p.reserve {
		return // a Go-heap fallback buffer: the garbage collector takes it
	}
	full := buf[:cap(buf)]
	if !p.zeroPages(full, min(int(zeroFrom), len(buf)), len(buf)) {
		_ = syscall.Munmap(full)
		return
	}
	p.mu.Lock()
	if !p.closed && len(p.free) < p.keep {
		p.free = append(p.free, full)
		full = nil
	}
	p.mu.Unlock()
	if full != nil {
		_ = syscall.Munmap(full)
	}
}

// close unmaps the idle mappings; buffers still in use are unmapped when they come back.
func (p *mmapPool) close() {
	p.mu.Lock()
	free := p.free
	p.free, p.closed = nil, true
	p.mu.Unlock()
	for _, b := range free {
		_ = syscall.Munmap(b)
	}
}
