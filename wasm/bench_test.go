package wasm

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The CPU-bound script of bench/BenchmarkSandboxCPU, run on the metered engine and on the module as shipped:
// the ratio is what fuel and the stack guard cost.
const cpuScript = "let s = 0; for (let i = 0; i < 300000; i++) { s = (s + (i * i) % 7) | 0 } s"

func TestSandboxCPUTwin(t *testing.T) {
	unmetered, err := unmeteredEngine()
	require.NoError(t, err)
	want, err := unmetered.Run(context.Background(), cpuScript, nil)
	require.NoError(t, err)
	got, err := engine(t).Run(context.Background(), cpuScript, nil)
	require.NoError(t, err)
	assert.Equal(t, want.Value, got.Value)
	assert.Zero(t, want.Usage.Fuel, "the unmetered engine counts nothing")
	assert.Greater(t, got.Usage.Fuel, uint64(300000))
}

func BenchmarkSandboxCPU(b *testing.B) {
	for _, tc := range []struct {
		name string
		get  func() (*Engine, error)
	}{{"metered", sharedEngine}, {"unmetered", unmeteredEngine}} {
		b.Run(tc.name, func(b *testing.B) {
			e, err := tc.get()
			require.NoError(b, err)
			cpu := processCPU()
			for b.Loop() {
				if _, err := e.Run(context.Background(), cpuScript, nil); err != nil {
					b.Fatal(err)
				}
			}
			// CPU time per run, beside wall time: on a shared machine the wall clock also counts waiting for a
			// core, and the ratio of the two engines is only meaningful in CPU.
			b.ReportMetric(float64(processCPU()-cpu)/float64(b.N), "cpu-ns/op")
		})
	}
}

func TestInstantiateTwin(t *testing.T) {
	e := engine(t)
	drainPool(e)
	fresh, err := e.Run(context.Background(), "1", nil)
	require.NoError(t, err)
	assert.Equal(t, "1", fresh.Value)
	reused, err := e.Run(context.Background(), "1", nil)
	require.NoError(t, err)
	assert.Equal(t, fresh.Value, reused.Value)
	assert.Equal(t, fresh.Usage.Fuel, reused.Usage.Fuel)
	assert.Positive(t, e.pool.size(), "the run's instance went back to the pool")
}

// BenchmarkInstantiate is the engine's part of a cold run, evaluating a constant: reused is an instance from the
// pool reset to the snapshot (what nearly every run gets), fresh a newly instantiated one (what a run gets after
// the last one grew its memory, or when more runs are in flight than the pool keeps).
func BenchmarkInstantiate(b *testing.B) {
	e := engine(b)
	for _, fresh := range []bool{false, true} {
		name := "reused"
		if fresh {
			name = "fresh"
		}
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			cpu := processCPU()
			for b.Loop() {
				if fresh {
					drainPool(e)
				}
				if _, err := e.Run(context.Background(), "1", nil); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(processCPU()-cpu)/float64(b.N), "cpu-ns/op")
		})
	}
}

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
			defer e.pool.put(inst, e.snap.size)
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
