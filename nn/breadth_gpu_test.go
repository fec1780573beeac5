package nn_test

import (
	"errors"
	"math"
	"testing"

	"github.com/gocu-dev/gocu"
	"github.com/gocu-dev/gocu/array"
	"github.com/gocu-dev/gocu/grad"
	"github.com/gocu-dev/gocu/nn"
)

// TestGPUCrossEntropyBadLabel checks the GPU's report of an out-of-range
// label: a NaN loss and NaN gradient row, with no wait for the labels
// (SyncDebugError refuses a hidden one).
func TestGPUCrossEntropyBadLabel(t *testing.T) {
	gpu := testGPU(t)
	x := grad.Param(gpu.NewRNG(3).Normal(array.Float32, 0, 1, 4, 5))
	labels := array.FromSliceOn(x.Value().Device(), []int64{4, 7, 0, 1})
	if err := gpu.Sync(); err != nil {
		t.Fatal(err)
	}
	old := gocu.SetSyncDebugMode(gocu.SyncDebugError)
	l := nn.CrossEntropy(x, labels)
	err := l.Backward()
	gocu.SetSyncDebugMode(old)
	if err != nil {
		t.Fatal(err)
	}
	if v := f64(t, l.Value())[0]; !math.IsNaN(v) {
		t.Fatalf("loss %v, want NaN", v)
	}
	for i, v := range f64(t, x.Grad()) {
		if (i/5 == 1) != math.IsNaN(v) {
			t.Fatalf("gradient element %d is %v: only row 1 should be NaN", i, v)
		}
	}
}

// TestGPUClipGradNorm clips the same gradients on the GPU and the CPU.
func TestGPUClipGradNorm(t *testing.T) {
	gpu := testGPU(t)
	var norms [2][]float64
	var grads [2][]float64
	for k, d := range []*array.Maker{array.CPU(), gpu} {
		rng := d.NewRNG(9)
		var ps []*grad.Var
		for _, n := range []int{1000, 37, 4096} {
			p := grad.Param(d.Zeros(array.Float32, n))
			p.SetGrad(rng.Normal(array.Float32, 0, 1, n))
			ps = append(ps, p)
		}
		norm, err := nn.ClipGradNorm(ps, 1, nil)
		if err != nil {
			t.Fatal(err)
		}
		norms[k] = f64(t, norm)
		for _, p := range ps {
			grads[k] = append(grads[k], f64(t, p.Grad())...)
		}
	}
	near(t, "norm", norms[1], norms[0], 1e-5)
	near(t, "gradients", grads[1], grads[0], 1e-5)
	p := grad.Param(gpu.Zeros(array.Float32, 2))
	p.SetGrad(gpu.Full(array.Float32, math.Inf(1), 2))
	if _, err := nn.ClipGradNorm([]*grad.Var{p}, 1, &nn.ClipOptions{ErrorIfNonfinite: true}); !errors.Is(err, nn.ErrNonfinite) {
		t.Fatalf("error %v, want ErrNonfinite", err)
	}
}

// TestGPUNormsMatchCPU runs RMSNorm, BatchNorm2d (training, then
// evaluation), SiLU and Softmax forward and backward on the GPU and the
// CPU from the same seed.
func TestGPUNormsMatchCPU(t *testing.T) {
	gpu := testGPU(t)
	var got [2][][]float64
	for k, d := range []*array.Maker{array.CPU(), gpu} {
		rng := d.NewRNG(4)
		bn := nn.NewBatchNorm2d(d, 3)
		m := nn.NewSequential(nn.NewConv2d(rng, 2, 3, 3, 1, 1), bn, nn.SiLU{}, nn.NewRMSNorm(d, 5), nn.Softmax{Axis: -1})
		x := rng.Normal(array.Float32, 0, 1, 4, 2, 6, 5)
		if err := m.Forward(grad.Const(x)).Square().Mean().Backward(); err != nil {
			t.Fatal(err)
		}
		for _, p := range nn.Params(m) {
			if p.RequiresGrad() {
				got[k] = append(got[k], f64(t, p.Grad()))
			}
		}
		got[k] = append(got[k], f64(t, bn.RunningMean.Value()), f64(t, bn.RunningVar.Value()))
		nn.Train(m, false)
		got[k] = append(got[k], f64(t, m.Forward(grad.Const(x)).Value()))
	}
	for i := range got[0] {
		near(t, "value", got[1][i], got[0][i], 1e-5)
	}
}
