//go:build !linux

package wasm

import "time"

// threadCPU falls back to the process's CPU time where a thread's is not read.
func threadCPU() time.Duration { return processCPU() }
