package wasm

import (
	"context"
	"runtime"
	"slices"
	"testing"
	"time"

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

// BenchmarkSandboxCPUInterleaved is BenchmarkSandboxCPU measured in pairs: each iteration runs the script on
// both engines, one right after the other (in alternating order), on one locked thread, and counts that
// thread's CPU time for each. On a shared machine the CPU time of the same work moves with what else runs (by
// ±15% from one second to the next here); two runs a few milliseconds apart see nearly the same machine, so
// metered/unmetered is the median of the pairs' ratios, and each engine's figure the median of its runs.
func BenchmarkSandboxCPUInterleaved(b *testing.B) {
	metered, err := sharedEngine()
	require.NoError(b, err)
	unmetered, err := unmeteredEngine()
	require.NoError(b, err)
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	var spent [2][]float64
	var ratios []float64
	i := 0
	for b.Loop() {
		var pair [2]time.Duration
		for k := range 2 {
			which := (i + k) % 2
			e := metered
			if which == 1 {
				e = unmetered
			}
			start := threadCPU()
			if _, err := e.Run(context.Background(), cpuScript, nil); err != nil {
				b.Fatal(err)
			}
			pair[which] = threadCPU() - start
			spent[which] = append(spent[which], float64(pair[which]))
		}
		if pair[1] > 0 {
			ratios = append(ratios, float64(pair[0])/float64(pair[1]))
		}
		i++
	}
	b.ReportMetric(median(spent[0]), "metered-cpu-ns/op")
	b.ReportMetric(median(spent[1]), "unmetered-cpu-ns/op")
	if len(ratios) > 0 {
		b.ReportMetric(median(ratios), "metered/unmetered")
	}
}

func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	return s[len(s)/2]
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
