//go:build !linux

package wasm

import "time"

// threadID and threadCPU are measured on Linux only: elsewhere the deadline tests check wall time.
func threadID() int { return 0 }

func threadCPU(int) (time.Duration, bool) { return 0, false }
