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

func (p *mmapPool) put(buf []byte, zeroFrom uint64) {
	if cap(buf) != p.reserve {
		return // a Go-heap fallback buffer: the garbage collector takes it
	}
	used, full := len(buf), buf[:cap(buf)]
	from := min(int(zeroFrom), used)
	pageStart := min((from+p.page-1)/p.page*p.page, used)
	clear(full[from:pageStart])
	if used > pageStart && syscall.Madvise(full[pageStart:used], syscall.MADV_DONTNEED) != nil {
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
