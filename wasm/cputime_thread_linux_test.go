package wasm

import (
	"syscall"
	"time"
)

// threadCPU is the CPU time the calling thread has used, user and system (RUSAGE_THREAD): with the goroutine
// locked to its thread it is the guest's own time, without the garbage collector's or other goroutines'.
func threadCPU() time.Duration {
	const rusageThread = 1
	var ru syscall.Rusage
	if syscall.Getrusage(rusageThread, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
