package wasm

import (
	"bytes"
	"os"
	"runtime"
	"slices"
	"sync"
	"syscall"
	"unsafe"
)

// newBufferPool reserves address space per buffer where the OS allows it, and falls back to the Go heap.
func newBufferPool(reserve uint64) bufferPool {
	p := &mmapPool{reserve: int(reserve), keep: 2 * runtime.GOMAXPROCS(0), page: os.Getpagesize()}
	p.zeroPage = make([]byte, p.page)
	p.entries.New = func() any { return new([]uint64) }
	probe, err := p.mmap()
	if err != nil {
		return &heapPool{}
	}
	if f, err := os.Open("/proc/self/pagemap"); err == nil {
		p.pagemap = f
		if _, ok := p.populated(probe[:p.page], nil); !ok {
			_ = f.Close() // readable but not answering (a sandboxed /proc): every zero goes through madvise
			p.pagemap = nil
		}
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
	// pagemap is /proc/self/pagemap, or nil where it cannot be read: it says which pages of a range have ever
	// been populated since they were last given back, so that zero looks only at those (see zero).
	pagemap  *os.File
	entries  sync.Pool // *[]uint64, pagemap entries read by one zero
	zeroPage []byte    // a page of zeros to compare with

	mu     sync.Mutex
	free   [][]byte // full-capacity mappings
	closed bool
}

func (p *mmapPool) mmap() ([]byte, error) {
	b, err := syscall.Mmap(-1, 0, p.reserve, syscall.PROT_READ|syscall.PROT_WRITE,
		syscall.MAP_PRIVATE|syscall.MAP_ANON|syscall.MAP_NORESERVE)
	if err == nil {
		// Small pages, also where transparent huge pages are on for every mapping: a run that touches only the
		// snapshot holds 1.4 MiB instead of 2 MiB, and zero checks the populated pages of a range one by one.
		_ = syscall.Madvise(b, madvNoHugepage)
	}
	return b, err
}

// madvNoHugepage is MADV_NOHUGEPAGE, which package syscall does not define.
const madvNoHugepage = 15

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

// zero makes each range [from, to) of buf zero. It runs on every restore over the snapshot's zero ranges (2 MiB
// of them), most of which no run ever touches: giving them all back with MADV_DONTNEED was 80% of a reused
// instance's restore, though the kernel had nothing to drop. So it first asks the kernel which pages of the
// ranges are populated (present or swapped out, in /proc/self/pagemap: one read for all of them, as each read
// costs a system call). A page that is neither reads as zero in a private anonymous mapping, whoever wrote to
// it before: the guest, the host, a copy. Populated pages that are not zero are cleared in place, or given back
// when a run dirtied many (a run that touched megabytes should not keep them resident in an idle instance).
// Without pagemap, or if the read fails, each range goes through madvise as before.
func (p *mmapPool) zero(buf []byte, ranges ...[2]uint64) {
	if p.zeroPopulated(buf, ranges) {
		return
	}
	for _, rg := range ranges {
		if !p.zeroPages(buf, int(rg[0]), int(rg[1])) {
			clear(buf[rg[0]:rg[1]])
		}
	}
}

// maxClearedPages is how many dirty pages of one range zero clears in place; past it, it gives the whole range
// back with madvise, whose cost no longer stands out next to the run that wrote them.
const maxClearedPages = 64

// zeroPopulated is zero's fast path; it reports false, having changed nothing, when it cannot answer.
func (p *mmapPool) zeroPopulated(full []byte, ranges [][2]uint64) bool {
	if p.pagemap == nil || cap(full) != p.reserve {
		return false
	}
	full = full[:cap(full)]
	// The whole pages of the ranges, and the span of pages one pagemap read covers.
	spanStart, spanEnd := len(full), 0
	for _, rg := range ranges {
		if pageStart, pageEnd := p.wholePages(int(rg[0]), int(rg[1])); pageEnd > pageStart {
			spanStart, spanEnd = min(spanStart, pageStart), max(spanEnd, pageEnd)
		}
	}
	var entries []uint64
	if spanEnd > spanStart {
		scratch := p.entries.Get().(*[]uint64)
		defer p.entries.Put(scratch)
		var ok bool
		if entries, ok = p.populated(full[spanStart:spanEnd], *scratch); !ok {
			return false
		}
		*scratch = entries
	}
	for _, rg := range ranges {
		from, to := int(rg[0]), int(rg[1])
		pageStart, pageEnd := p.wholePages(from, to)
		if pageEnd <= pageStart {
			clear(full[from:to]) // less than two pages
			continue
		}
		clear(full[from:pageStart])
		clear(full[pageEnd:to])
		var dirtyBuf [maxClearedPages + 1]int
		dirty := dirtyBuf[:0]
		for page := pageStart; page < pageEnd && len(dirty) <= maxClearedPages; page += p.page {
			if entries[(page-spanStart)/p.page]&(pagemapPresent|pagemapSwapped) == 0 {
				continue // never populated since it was last given back: it reads as zero
			}
			if !bytes.Equal(full[page:page+p.page], p.zeroPage) {
				dirty = append(dirty, page)
			}
		}
		if len(dirty) > maxClearedPages {
			if syscall.Madvise(full[pageStart:pageEnd], syscall.MADV_DONTNEED) != nil {
				clear(full[pageStart:pageEnd])
			}
			continue
		}
		for _, page := range dirty {
			clear(full[page : page+p.page])
		}
	}
	return true
}

// wholePages is the part of [from, to) made of whole pages (empty when there is none).
func (p *mmapPool) wholePages(from, to int) (int, int) {
	pageStart := (from + p.page - 1) / p.page * p.page
	pageEnd := to / p.page * p.page
	return pageStart, max(pageEnd, pageStart)
}

func clearAll(b []byte) bool {
	clear(b)
	return true
}

// Bits of a /proc/self/pagemap entry (Documentation/admin-guide/mm/pagemap.rst).
const (
	pagemapPresent = 1 << 63
	pagemapSwapped = 1 << 62
)

// populated reads the pagemap entries of the pages of b (page-aligned), one per page, into dst's backing array
// (grown as needed).
func (p *mmapPool) populated(b []byte, dst []uint64) ([]uint64, bool) {
	pages := len(b) / p.page
	dst = slices.Grow(dst[:0], pages)[:pages]
	raw := unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(dst))), pages*8) // entries are native-endian
	offset := int64(uintptr(unsafe.Pointer(unsafe.SliceData(b)))/uintptr(p.page)) * 8
	if n, err := p.pagemap.ReadAt(raw, offset); err != nil || n != len(raw) {
		return nil, false
	}
	return dst, true
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
	if p.pagemap != nil {
		_ = p.pagemap.Close()
	}
}

// tracksPages reports whether zero reads which pages are populated (tests ask, so that they do not pass on the
// fallback without noticing).
func (p *mmapPool) tracksPages() bool { return p.pagemap != nil }
