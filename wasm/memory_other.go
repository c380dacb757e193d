//go:build !linux

package wasm

// newBufferPool keeps linear memory on the Go heap where no address-space reservation is implemented.
func newBufferPool(uint64) bufferPool { return &heapPool{} }
