package bench

import (
	"math"
	"math/rand/v2"
	"os"
	"strings"
	"testing"

	"github.com/gocu-dev/gocu"
	"github.com/gocu-dev/gocu/kernel"
)

// The tensor-core kernels written in Go (suite go) are compared with
// baseline_lowp.py's figures: cuBLAS's bf16 GEMM and SDPA's flash backend,
// in TFLOP/s.
var goTensorPeers = map[string]string{
	"gemm_bf16_go":         "matmul_4096_bf16_TFLOPs",
	"flash_attn_go":        "sdpa_flash_bf16_full_TFLOPs",
	"flash_attn_causal_go": "sdpa_flash_bf16_causal_TFLOPs",
}

func TestGoTensorWorkloads(t *testing.T) {
	f, err := os.Open("testdata/baseline_lowp.json")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	base, err := ReadBaseline(f)
	if err != nil {
		t.Fatal(err)
	}
	r := &Report{Device: DeviceInfo{Kind: "cuda", Name: "NVIDIA H100 80GB HBM3", Arch: "sm_90"},
		Ceilings: Ceilings{MemoryGBps: 2983, FP32TFLOPs: 51.3, BF16TFLOPs: 700}}
	n, s := 4096.0, 4096.0
	attn := 4 * 64 * s * s * 128
	// Round 1 on the H100 (2026-11-25): 605.0, 325.9 and 297.5 TFLOP/s.
	for _, x := range []Result{
		{Name: "gemm_bf16_go", Seconds: 2 * n * n * n / 605.0e12, Flops: 2 * n * n * n, Bytes: 6 * n * n},
		{Name: "flash_attn_go", Seconds: attn / 325.9e12, Flops: attn, Bytes: 8 * 64 * s * 128},
		{Name: "flash_attn_causal_go", Seconds: attn / 2 / 297.5e12, Flops: attn / 2, Bytes: 8 * 64 * s * 128},
	} {
		x.Device, x.Reps = "cuda", 20
		r.Results = append(r.Results, x)
	}
	for i := range r.Results {
		r.derive(&r.Results[i], find(Workloads(CUDA), r.Results[i].Name))
	}
	r.CompareBaseline(base, "baseline_lowp.json")
	for name, key := range goTensorPeers {
		w := find(Workloads(CUDA), name)
		if w == nil {
			t.Errorf("no CUDA workload %s", name)
			continue
		}
		if len(w.Peers) != 1 || w.Peers[0].Key != key || w.Peers[0].Metric != TFLOPs || w.Roof != RoofBF16 || w.Suites[0] != "go" {
			t.Errorf("%s: peers %+v, roof %v, suites %v", name, w.Peers, w.Roof, w.Suites)
		}
		x := r.Result(name)
		if len(x.Peers) != 1 {
			t.Errorf("%s: peers %+v", name, x.Peers)
			continue
		}
		if want := x.TFLOPs / base.Values[key]; math.Abs(x.Peers[0].Speed-want) > 1e-9*want {
			t.Errorf("%s: speed %v against %s, want %v", name, x.Peers[0].Speed, key, want)
		}
		if x.Roof != "bf16" || x.Percent <= 0 {
			t.Errorf("%s: roof %q, %v%%", name, x.Roof, x.Percent)
		}
	}
	var tb strings.Builder
	r.WriteTable(&tb)
	for _, s := range []string{"gemm_bf16_go", "flash_attn_causal_go", "torch SDPA flash", "torch cuBLAS"} {
		if !strings.Contains(tb.String(), s) {
			t.Errorf("the table lacks %q:\n%s", s, tb.String())
		}
	}
}

// The go suite's tensor-core workloads run on the GPU only; their setup,
// run and check work the same on the simulator, at the small sizes (which
// takes a few seconds), and their checks catch a wrong result.
func TestGoTensorWorkloadsOnSim(t *testing.T) {
	if testing.Short() {
		t.Skip("simulates a 512^3 GEMM and attention at 2x256x128")
	}
	d, err := gocu.Open("sim")
	if err != nil {
		t.Fatal(err)
	}
	for name := range goTensorPeers {
		t.Run(name, func(t *testing.T) {
			e := &Env{Device: Sim, Dev: d, Small: true, Rand: rand.New(rand.NewPCG(3, 4))}
			c, err := find(Workloads(CUDA), name).Setup(e)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			if err := c.Check(); err == nil {
				t.Error("the check passes before the run (outputs are NaN)")
			}
			if err := c.Run(); err != nil {
				t.Fatal(err)
			}
			if err := c.Check(); err != nil {
				t.Fatal(err)
			}
			if c.Flops <= 0 || c.Bytes <= 0 {
				t.Errorf("flops %v, bytes %v", c.Flops, c.Bytes)
			}
		})
	}
	// A result off by one bf16 step in a few elements fails.
	r := rand.New(rand.NewPCG(1, 2))
	const n = 64
	a, b := bf16Host(r, n*n), bf16Host(r, n*n)
	c := make([]kernel.BFloat16, n*n)
	for i := range n {
		for j := range n {
			var s float32
			for p := range n {
				s += a[i*n+p].Float32() * b[p*n+j].Float32()
			}
			c[i*n+j] = kernel.ToBFloat16(s)
		}
	}
	if err := checkGemmBF16(a, b, c, n, r); err != nil {
		t.Fatalf("a correct product fails: %v", err)
	}
	for i := range c {
		c[i] = kernel.ToBFloat16(c[i].Float32()*1.05 + 0.01)
	}
	if err := checkGemmBF16(a, b, c, n, r); err == nil {
		t.Error("a product 5% off passes")
	}
}
