//go:build !linux

package wasm

import "time"

// threadID and taskCPU are measured on Linux only: elsewhere the deadline tests check wall time.
func threadID() int { return 0 }

func taskCPU(int) (time.Duration, bool) { return 0, false }
