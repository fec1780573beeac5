package gen

import (
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/gocu-dev/gocu/gen/testdata/kernels/tensor"
	"github.com/gocu-dev/gocu/kernel"
	"github.com/gocu-dev/gocu/meta"
	"github.com/gocu-dev/gocu/sim"
)

// bulkSumCase returns random input for tensor.BulkSum and the sums it
// must give, added in the kernel's order.
func bulkSumCase(blocks, tiles int) (x, want []float32) {
	r := rand.New(rand.NewPCG(11, 12))
	x = make([]float32, blocks*tiles*tensor.BulkTile)
	for i := range x {
		x[i] = float32(r.NormFloat64())
	}
	want = make([]float32, blocks*tensor.BulkTile)
	for b := range blocks {
		for i := range tensor.BulkTile {
			var acc float32
			for k := range tiles {
				acc += x[(b*tiles+k)*tensor.BulkTile+(i+k)%tensor.BulkTile]
			}
			want[b*tensor.BulkTile+i] = acc
		}
	}
	return x, want
}

// TestBulkSumSim runs the translated package's BulkSum (memory barriers
// and bulk copies) on the simulator, checked twin included.
func TestBulkSumSim(t *testing.T) {
	const blocks, tiles = 4, 9
	x, want := bulkSumCase(blocks, tiles)
	for _, checked := range []bool{false, true} {
		out := make([]float32, len(want))
		for i := range out {
			out[i] = -1e30
		}
		cfg := sim.Config{Grid: kernel.Dim3{X: blocks, Y: 1, Z: 1}, Block: kernel.Dim3{X: tensor.BulkTile + 32, Y: 1, Z: 1}, Seed: 3, Checked: checked}
		if err := sim.Run(cfg, tensor.BulkSum, x, out, int32(tiles)); err != nil {
			t.Fatal(err)
		}
		for i := range want {
			if out[i] != want[i] {
				t.Fatalf("checked %v: out[%d] = %v, want %v", checked, i, out[i], want[i])
			}
		}
	}
}

// TestGPUBulkSum runs BulkSum on the GPU (sm_90): the sums must be exact,
// since every thread adds in the same order as the reference.
func TestGPUBulkSum(t *testing.T) {
	needGPU(t)
	const blocks, tiles = 64, 33
	x, want := bulkSumCase(blocks, tiles)
	out := make([]float32, len(want))
	for i := range out {
		out[i] = -1e30
	}
	m, k, _ := meta.Lookup(tensor.BulkSum)
	res, _, err := gpuLaunch(m.Source, k.Entry, nil, kernel.Dim3{X: blocks, Y: 1, Z: 1}, kernel.Dim3{X: tensor.BulkTile + 32, Y: 1, Z: 1}, 0,
		[]any{x, out, int32(tiles)})
	if err != nil {
		t.Fatal(err)
	}
	got := res[1].([]float32)
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("out[%d] = %v, want %v", i, got[i], want[i])
		}
	}
}

// TestMBarrierTranslates checks the calls' C and that a barrier must be
// the address of a shared-array element.
func TestMBarrierTranslates(t *testing.T) {
	p, err := translate(t, kernelSrc("", "x []float32, n int32", `bars := kernel.Shared[[2]kernel.MBarrier](t)
buf := kernel.Shared[[64]float32](t)
kernel.MBarInit(t, &bars[1], n)
kernel.MBarArriveExpectTx(t, &bars[1], 256)
kernel.CpAsyncBulk(t, buf[:], x[:64], &bars[1])
kernel.MBarWait(t, &bars[1], uint32(n)&1)`))
	if err != nil {
		t.Fatal(err)
	}
	body := cbody(p)
	for _, want := range []string{"__shared__ __align__(16) gocu_array<unsigned long long, 2> bars;", "gocu_mbar_init(&bars.v[1LL], n);",
		"gocu_mbar_arrive_tx(&bars.v[1LL], 256);", "gocu_cp_async_bulk(", "gocu_mbar_wait(&bars.v[1LL], (unsigned int)n & 1u);"} {
		if !strings.Contains(body, want) {
			t.Errorf("no %q in\n%s", want, body)
		}
	}
	for _, body := range []string{"var b kernel.MBarrier\nkernel.MBarArrive(t, &b)", "var b [2]kernel.MBarrier\nkernel.MBarWait(t, &b[1], 0)"} {
		_, err = translate(t, kernelSrc("", "x []float32, n int32", body))
		if err == nil || !strings.Contains(err.Error(), "a memory barrier that is not &bars[i] of a shared array is not supported") {
			t.Errorf("a local barrier (%q): got %v", body, err)
		}
	}
}
