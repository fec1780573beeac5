package bench

import (
	"strings"
	"testing"

	"github.com/gocu-dev/gocu/cuda"
	"github.com/gocu-dev/gocu/nvrtc"
)

// TestCUDASuite runs every GPU workload at small sizes: each must pass its
// correctness check, and the figures must be plausible.
func TestCUDASuite(t *testing.T) {
	if err := cuda.Init(); err != nil {
		t.Skipf("no GPU: %v", err)
	}
	if !nvrtc.Available() {
		t.Skip("no NVRTC library")
	}
	rep, err := Run(Options{Device: CUDA, Small: true, Reps: 3, Seed: 7})
	var tb strings.Builder
	if rep != nil {
		rep.WriteTable(&tb)
	}
	if err != nil {
		t.Fatalf("%v\n%s", err, tb.String())
	}
	t.Logf("\n%s", tb.String())
	if rep.Ceilings.MemoryGBps < 50 || rep.Ceilings.FP32TFLOPs <= 0 {
		t.Errorf("ceilings %+v", rep.Ceilings)
	}
	for _, w := range Workloads(CUDA) {
		x := rep.Result(w.Name)
		if x == nil {
			t.Errorf("no result for %s", w.Name)
			continue
		}
		if x.Skipped != "" {
			t.Logf("%s skipped: %s", w.Name, x.Skipped)
			continue
		}
		if x.Seconds <= 0 || x.Reps != 3 {
			t.Errorf("%s: %+v", w.Name, x)
		}
		if w.Clock == Events && x.Clock != "cuda events" {
			t.Errorf("%s timed with %q", w.Name, x.Clock)
		}
	}
	if l := rep.Result("launch"); l.PerOp < 0.3 || l.PerOp > 100 {
		t.Errorf("launch overhead %v us", l.PerOp)
	}
	if g := rep.Result("graph"); g.PerOp <= 0 || g.PerOp > 50 {
		t.Errorf("graph replay %v us per kernel", g.PerOp)
	}
	if w := rep.Result("nvrtc_warm"); w.PerOp <= 0 || w.PerOp > rep.Result("nvrtc_cold").PerOp {
		t.Errorf("warm load %v ms, cold compile %v ms", w.PerOp, rep.Result("nvrtc_cold").PerOp)
	}
	checkPlots(t, rep, []string{"gray", "matmul_tiled"})
}
