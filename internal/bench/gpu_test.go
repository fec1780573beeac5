package bench

import (
	"strings"
	"testing"

	"github.com/gocu-dev/gocu/cuda"
	"github.com/gocu-dev/gocu/internal/gputest"
	"github.com/gocu-dev/gocu/nvrtc"
)

// TestCUDASuite runs every GPU workload at small sizes: each must pass its
// correctness check, and the figures must be plausible.
func TestCUDASuite(t *testing.T) {
	gputest.Need(t, cuda.Init())
	gputest.Need(t, nvrtc.Load())
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
	for _, name := range []string{"gpt_bytes_step_eager", "gpt_bytes_step_graph", "gpt2_step_eager", "gpt2_step_graph"} {
		if x := rep.Result(name); x == nil || x.PerOp <= 0 || x.Unit != "ms" || !strings.Contains(x.Note, "MiB in use") {
			t.Errorf("%s: %+v", name, x)
		}
	}
	checkPlots(t, rep, []string{"gray", "matmul_tiled", "gray_fast", "sgemm_go", "add", "chain_fused", "matmul_array_tf32"})
}

// newGPUWorkloads are the workloads of the Go kernels and of the arrays on
// the GPU.
var newGPUWorkloads = []string{"gray_go", "gray_fast", "matmul_naive_go", "matmul_tiled_go", "sgemm_go", "gemm_bf16_go", "flash_attn_go", "flash_attn_causal_go",
	"add", "sum", "chain_fused", "chain_unfused", "matmul_array_fp32", "matmul_array_tf32", "array_op_overhead", "array_op_overhead_into"}

// TestCUDAGoAndArrays runs the Go kernels and the array workloads at small
// sizes: none may skip on a GPU with NVRTC and cuBLAS, each passes its
// check (Run fails otherwise), the array work is timed with events on the
// array stream, and the figures are plausible.
func TestCUDAGoAndArrays(t *testing.T) {
	gputest.Need(t, cuda.Init())
	gputest.Need(t, nvrtc.Load())
	rep, err := Run(Options{Device: CUDA, Only: newGPUWorkloads, Small: true, Reps: 5, Seed: 11})
	var tb strings.Builder
	if rep != nil {
		rep.WriteTable(&tb)
	}
	if err != nil {
		t.Fatalf("%v\n%s", err, tb.String())
	}
	t.Logf("\n%s", tb.String())
	for _, name := range newGPUWorkloads {
		x := rep.Result(name)
		if x == nil {
			t.Errorf("no result for %s", name)
			continue
		}
		if x.Skipped != "" || x.Error != "" || x.Reps != 5 || x.Seconds <= 0 {
			t.Errorf("%s: %+v", name, x)
			continue
		}
		w := find(Workloads(CUDA), name)
		if w.Kind == Latency {
			if x.Clock != "wall" || x.Unit != "us" || x.PerOp <= 0 || x.PerOp > 200 {
				t.Errorf("%s: %v %s per op on the %s clock", name, x.PerOp, x.Unit, x.Clock)
			}
			continue
		}
		if x.Clock != "cuda events" {
			t.Errorf("%s timed with %q", name, x.Clock)
		}
		// Even small sizes move more than 1 GB/s (they may beat the small
		// copy's ceiling from L2: no upper bound here).
		if x.GBps < 1 || x.Percent <= 0 {
			t.Errorf("%s: %.3g GB/s, %.3g%% of the %s ceiling", name, x.GBps, x.Percent, x.Roof)
		}
	}
	if g, f := rep.Result("gray_go"), rep.Result("gray_fast"); g.Seconds > 0 && f.Seconds > 2*g.Seconds {
		t.Errorf("GrayFast %v s, Gray %v s", f.Seconds, g.Seconds)
	}
}

// TestCUDAArrayEventsOnItsStream proves that the array work is timed on
// the stream it runs on: a full-size 4096^3 FP32 product cannot beat the
// FP32 rate of any H100 or H200 (about 67 TFLOP/s at most), while events
// on another stream, which the array stream does not wait for, would time
// almost nothing.
func TestCUDAArrayEventsOnItsStream(t *testing.T) {
	gputest.Need(t, cuda.Init())
	gputest.Need(t, nvrtc.Load())
	rep, err := Run(Options{Device: CUDA, Only: []string{"matmul_array_fp32", "sum"}, Reps: 3, Seed: 5})
	if err != nil {
		t.Fatal(err)
	}
	m, s := rep.Result("matmul_array_fp32"), rep.Result("sum")
	if m.TFLOPs < 5 || m.TFLOPs > 80 {
		t.Errorf("array FP32 matmul at %.3g TFLOP/s (cuBLAS: %.3g)", m.TFLOPs, rep.Ceilings.FP32TFLOPs)
	}
	// A 2^26 sum reads 256 MiB: no faster than the HBM can deliver.
	if th := rep.Device.TheoreticalGBps; s.GBps < 100 || th > 0 && s.GBps > 1.2*th {
		t.Errorf("array sum at %.4g GB/s (theoretical %.4g)", s.GBps, rep.Device.TheoreticalGBps)
	}
}
