package hostfns

import (
	"runtime"
	"syscall"
	"time"
	"unsafe"
)

// lookupClock measures the CPU time of the OS thread a search or describe runs on, which its goroutine is locked
// to while it runs: what the host spent on it, without the time it waited for a core (or for anything else).
type lookupClock struct {
	clock int32 // the thread's CPU clock, readable from any thread
	start time.Duration
}

func startLookupClock() *lookupClock {
	runtime.LockOSThread()
	// MAKE_THREAD_CPUCLOCK(tid, CPUCLOCK_SCHED), as glibc's pthread_getcpuclockid builds it.
	c := &lookupClock{clock: (^int32(syscall.Gettid()))<<3 | 6}
	c.start = c.read()
	return c
}

func (c *lookupClock) read() time.Duration {
	var ts syscall.Timespec
	if _, _, errno := syscall.Syscall(syscall.SYS_CLOCK_GETTIME, uintptr(c.clock), uintptr(unsafe.Pointer(&ts)), 0); errno != 0 {
		return 0
	}
	return time.Duration(ts.Nano())
}

// used is the CPU time the thread has spent since the start; safe to call from any goroutine until stop.
func (c *lookupClock) used() time.Duration { return max(c.read()-c.start, 0) }

// stop returns the CPU time used and unlocks the thread. It must be called on the goroutine that started it.
func (c *lookupClock) stop() time.Duration {
	d := c.used()
	runtime.UnlockOSThread()
	return d
}
