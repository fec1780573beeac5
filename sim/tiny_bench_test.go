package sim_test

import (
	"testing"

	"github.com/gocu-dev/gocu/kernel"
	"github.com/gocu-dev/gocu/sim"
)

// BenchmarkLaunchOverhead is the fixed cost of a launch: one block of 32
// threads that do nothing.
func BenchmarkLaunchOverhead(b *testing.B) {
	x := make([]float32, 32)
	k := sim.Kernel{Name: "tiny", Func: func(t *kernel.Thread) { x[t.ThreadIdx.X]++ }}
	cfg := sim.Config{Grid: kernel.Dim3{X: 1}, Block: kernel.Dim3{X: 32}, Seed: 1}
	for b.Loop() {
		if err := sim.Launch(cfg, k); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkLaunchOverheadBarrier is the same with one barrier per thread.
func BenchmarkLaunchOverheadBarrier(b *testing.B) {
	x := make([]float32, 32)
	k := sim.Kernel{Name: "tiny", Func: func(t *kernel.Thread) { t.SyncThreads(); x[t.ThreadIdx.X]++ }}
	cfg := sim.Config{Grid: kernel.Dim3{X: 1}, Block: kernel.Dim3{X: 32}, Seed: 1}
	for b.Loop() {
		if err := sim.Launch(cfg, k); err != nil {
			b.Fatal(err)
		}
	}
}
