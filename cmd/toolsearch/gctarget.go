package main

import (
	"os"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync"
)

// proxyHeapFloor is how far `mcp serve` lets its heap grow past the live heap between two collections, at
// least. A proxy's live heap is small (its catalog, a few MB) while every call through it allocates hundreds of
// KB of short-lived garbage (the MCP SDK decodes each message with a fresh 32 KB buffer, several times per
// message): under Go's default (a collection each time the heap doubles, at 4 MB at least) it collected every
// few calls, and collection was a third of its CPU per call. 32 MiB of headroom makes that about ten times
// rarer; once the live heap outgrows it (a huge catalog), the default proportion holds again.
const proxyHeapFloor = 32 << 20

// runtimeHeapMinimum is the Go runtime's smallest heap goal at GOGC=100 (its defaultHeapMinimum); it scales
// with GOGC like the goal itself, so gcPercentFor keeps it in the sum.
const runtimeHeapMinimum = 4 << 20

// gcPercentFor is the GOGC that puts the next heap goal near live+floor (and never below Go's default, 100):
// the goal is the larger of live×(1+GOGC/100) and runtimeHeapMinimum×GOGC/100, so GOGC is bounded by both.
func gcPercentFor(live, floor uint64) int {
	if live == 0 {
		live = 1
	}
	byLive := floor * 100 / live
	byMinimum := (live + floor) * 100 / runtimeHeapMinimum
	p := min(byLive, byMinimum)
	if p < 100 {
		return 100
	}
	return int(min(p, 1<<20))
}

// gcTargetSentinel is what each cycle's cleanup hangs on: an object of its own (it holds a pointer, so the
// allocator's tiny blocks, which would tie it to its neighbours, never hold it).
type gcTargetSentinel struct {
	_ *byte
	_ [16]byte
}

// keepHeapFloor keeps the heap goal at live+floor, at least, after every collection, until the returned
// function is called (which restores the GOGC in force before). It does nothing, and returns a no-op, when the
// GOGC environment variable is set: the user has chosen the collector's pace themselves.
func keepHeapFloor(floor uint64) (stop func()) {
	if _, set := os.LookupEnv("GOGC"); set {
		return func() {}
	}
	var (
		mu      sync.Mutex // a cleanup's setting and stop's restoring do not cross
		stopped bool
	)
	before := debug.SetGCPercent(gcPercentFor(liveHeap(), floor))
	var arm func()
	arm = func() {
		runtime.AddCleanup(&gcTargetSentinel{}, func(struct{}) {
			mu.Lock()
			defer mu.Unlock()
			if stopped {
				return
			}
			debug.SetGCPercent(gcPercentFor(liveHeap(), floor))
			arm()
		}, struct{}{})
	}
	arm()
	return func() {
		mu.Lock()
		defer mu.Unlock()
		if !stopped {
			stopped = true
			debug.SetGCPercent(before)
		}
	}
}

// liveHeap is the heap the last collection found live, in bytes.
func liveHeap() uint64 {
	s := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return s[0].Value.Uint64()
}
