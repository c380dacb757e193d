package wasm

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"
)

// BenchmarkRestore is the reset of a reused instance to the snapshot after a `1` run, by reading which pages
// are populated (pagemap) and, its twin in the same run, by giving every zero range back (madvise), as before.
// TestRestoreErasesWritesAnywhere is its correctness twin.
func BenchmarkRestore(b *testing.B) {
	e := engine(b)
	p, ok := e.buffers.(*mmapPool)
	if !ok || p.pagemap == nil {
		b.Skip("no pagemap here: restores always madvise")
	}
	pagemap := p.pagemap
	defer func() { p.pagemap = pagemap }()
	for _, tc := range []struct {
		name string
		use  bool
	}{{"pagemap", true}, {"madvise", false}} {
		b.Run(tc.name, func(b *testing.B) {
			drainPool(e)
			if _, err := e.Run(context.Background(), "1", nil); err != nil {
				b.Fatal(err)
			}
			inst := e.pool.get()
			require.NotNil(b, inst)
			defer e.pool.put(inst, e.snap.size, &e.closing)
			stack := e.snap.ranges[len(e.snap.ranges)-2] // the top of the stack block a run touches
			mem := inst.mod.Memory()
			p.pagemap = nil
			if tc.use {
				p.pagemap = pagemap
			}
			cpu := processCPU()
			for b.Loop() {
				// What a small run dirties: a few pages at the top of the stack and of the heap.
				for k := uint32(1); k <= 4; k++ {
					mem.WriteByte(stack.to-k*4096, 1)
				}
				if err := e.restore(inst); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(processCPU()-cpu)/float64(b.N), "cpu-ns/op")
			p.pagemap = pagemap
		})
	}
}
