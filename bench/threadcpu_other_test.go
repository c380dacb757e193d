//go:build !linux

package bench

import "time"

var clockStart = time.Now()

// threadCPU falls back to the wall clock where no thread CPU clock is read.
func threadCPU() time.Duration { return time.Since(clockStart) }
