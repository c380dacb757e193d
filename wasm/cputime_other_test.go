//go:build !unix

package wasm

import "time"

// processCPU is not measured here: the deadline tests then check wall time only.
func processCPU() time.Duration { return 0 }
