//go:build !race

package cuda_test

import (
	"testing"

	"github.com/gocu-dev/gocu/cuda"
)

// With no tracer the launch path must stay allocation-free: tracing costs
// one atomic load when it is off.
func TestLaunchAllocatesNothingWithoutTracer(t *testing.T) {
	f := cuda.FakeFunction(t, "k", 0)
	m := cuda.FakeMemory(f, 4096)
	cfg := cuda.Config{Grid: cuda.Dim3{X: 1}, Block: cuda.Dim3{X: 1}}
	cuda.SetTracer(nil)
	allocs := testing.AllocsPerRun(1000, func() { _ = f.Launch(cfg, m, int32(1)) })
	if allocs != 0 {
		t.Errorf("a launch with tracing off allocates %v times, want 0", allocs)
	}
}
