package wasm

import (
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// threadID is the kernel's id of the calling thread; with the goroutine locked to its thread
// (runtime.LockOSThread) it names where that goroutine runs.
func threadID() int { return syscall.Gettid() }

// taskCPU is the CPU time thread tid of this process has had, from the scheduler's own count (nanoseconds,
// unlike the 10 ms ticks of /proc/.../stat); ok is false where it cannot be read.
func taskCPU(tid int) (time.Duration, bool) {
	raw, err := os.ReadFile("/proc/self/task/" + strconv.Itoa(tid) + "/schedstat")
	if err != nil {
		return 0, false
	}
	onCPU, _, _ := strings.Cut(string(raw), " ")
	ns, err := strconv.ParseInt(onCPU, 10, 64)
	if err != nil {
		return 0, false
	}
	return time.Duration(ns), true
}
