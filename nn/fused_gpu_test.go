package nn_test

import (
	"fmt"
	"math"
	"slices"
	"testing"

	"github.com/gocu-dev/gocu/array"
	"github.com/gocu-dev/gocu/grad"
	"github.com/gocu-dev/gocu/nn"
)

// The fused GPU kernels of LayerNorm, GELU and CrossEntropy against
// float64 references on the host, for float32 and bfloat16 operands:
//
//	go test -run 'GPUFused|GPUCrossEntropyBadLabel' ./nn

// poisonPool fills the device's free memory with NaN, so that a kernel
// that leaves part of an Empty output unwritten shows.
func poisonPool(t *testing.T, m *array.Maker) {
	t.Helper()
	p := m.Full(array.Float32, math.NaN(), 1<<24).Copy()
	if err := p.Err(); err != nil {
		t.Fatal(err)
	}
	p.Close()
}

// held returns x's values as dt holds them, in float64.
func held(t *testing.T, m *array.Maker, x []float64, dt array.DType, shape ...int) (*array.Array, []float64) {
	t.Helper()
	a := array.FromSliceOn(m.Device(), x).Reshape(shape...).AsType(dt).Copy()
	return a, f64(t, a)
}

func randn(seed uint64, n int) []float64 {
	rng := array.CPU().NewRNG(seed)
	v, _ := rng.Normal(array.Float64, 0, 1, n).Float64s()
	return v
}

func tolFor(dts ...array.DType) float64 {
	for _, dt := range dts {
		if dt == array.BFloat16 {
			return 2e-2
		}
	}
	return 2e-4
}

func TestGPUFusedLayerNorm(t *testing.T) {
	gpu := testGPU(t)
	if !nn.Fused(gpu.Device()) {
		t.Skip("GOCU_NOFUSE is set")
	}
	for _, c := range []int{384, 100, 768, 2048} {
		for _, in := range []array.DType{array.Float32, array.BFloat16} {
			for _, out := range []array.DType{0, array.BFloat16} {
				n := 3 * 37
				poisonPool(t, gpu)
				xa, x := held(t, gpu, randn(uint64(c), n*c), in, 3, 37, c)
				wa, w := held(t, gpu, randn(uint64(c+1), c), array.Float32, c)
				ba, b := held(t, gpu, randn(uint64(c+2), c), array.Float32, c)
				ga, g := held(t, gpu, randn(uint64(c+3), n*c), array.Float32, 3, 37, c)
				xv := grad.Param(xa)
				ln := &nn.LayerNorm{Shape: []int{c}, Eps: 1e-5, Weight: grad.Param(wa), Bias: grad.Param(ba), Out: out}
				y := ln.Forward(xv)
				wantDT := out
				if out == 0 {
					wantDT = array.Float32
				}
				if y.DType() != wantDT {
					t.Fatalf("c %d %v→%v: result %v", c, in, out, y.DType())
				}
				if err := y.AsType(array.Float32).Mul(ga).Sum().Backward(); err != nil {
					t.Fatal(err)
				}
				gy := g
				if out == array.BFloat16 {
					// The gradient reaches the kernel through the bf16 result.
					_, gy = held(t, gpu, g, array.BFloat16, n*c)
				}
				wy, wdx, wdw, wdb := lnRef(x, w, b, gy, n, c)
				tol := tolFor(in, out)
				near(t, "y", f64(t, y.Value()), wy, tol)
				near(t, "dx", f64(t, xv.Grad()), wdx, tol)
				near(t, "dweight", f64(t, ln.Weight.Grad()), wdw, tol*float64(n)/10)
				near(t, "dbias", f64(t, ln.Bias.Grad()), wdb, tol*float64(n)/10)
			}
		}
	}
}

// TestGPUFusedRMSNorm checks RMSNorm on LayerNorm's kernels (the mean
// taken as 0) against the float64 reference, with and without a weight.
func TestGPUFusedRMSNorm(t *testing.T) {
	gpu := testGPU(t)
	if !nn.Fused(gpu.Device()) {
		t.Skip("GOCU_NOFUSE is set")
	}
	for _, c := range []int{100, 768} {
		for _, in := range []array.DType{array.Float32, array.BFloat16} {
			for _, weighted := range []bool{true, false} {
				n := 3 * 37
				poisonPool(t, gpu)
				xa, x := held(t, gpu, scaled(randn(uint64(c), n*c), 2, 0.5), in, 3, 37, c)
				wa, w := held(t, gpu, scaled(randn(uint64(c+1), c), 1, 1), array.Float32, c)
				ga, g := held(t, gpu, randn(uint64(c+3), n*c), array.Float32, 3, 37, c)
				xv := grad.Param(xa)
				l := &nn.RMSNorm{Shape: []int{c}, Eps: 1e-5, Weight: grad.Param(wa)}
				wantDT := array.Float32
				if !weighted {
					l.Weight = nil
					wantDT = in
					for i := range w {
						w[i] = 1
					}
				}
				y := l.Forward(xv)
				what := fmt.Sprintf("c %d %v weight %v", c, in, weighted)
				if y.DType() != wantDT {
					t.Fatalf("%s: result %v, want %v", what, y.DType(), wantDT)
				}
				if err := y.AsType(array.Float32).Mul(ga).Sum().Backward(); err != nil {
					t.Fatal(err)
				}
				gy := g
				if wantDT == array.BFloat16 {
					_, gy = held(t, gpu, g, array.BFloat16, n*c)
				}
				wy, wdx, wdw, _ := normRef(x, w, make([]float64, c), gy, n, c, true, 1e-5)
				tol := tolFor(in)
				near(t, what+" y", f64(t, y.Value()), wy, tol)
				near(t, what+" dx", f64(t, xv.Grad()), wdx, tol)
				if weighted {
					near(t, what+" dweight", f64(t, l.Weight.Grad()), wdw, tol*float64(n)/10)
				}
			}
		}
	}
}

func TestGPUFusedGELU(t *testing.T) {
	gpu := testGPU(t)
	if !nn.Fused(gpu.Device()) {
		t.Skip("GOCU_NOFUSE is set")
	}
	const n = 100003 // not a multiple of the block
	for _, tanh := range []bool{false, true} {
		for _, in := range []array.DType{array.Float32, array.BFloat16} {
			for _, out := range []array.DType{0, array.BFloat16} {
				poisonPool(t, gpu)
				xs := randn(7, n)
				for i := range xs {
					xs[i] *= 3
				}
				xa, x := held(t, gpu, xs, in, n)
				ga, g := held(t, gpu, randn(8, n), array.Float32, n)
				xv := grad.Param(xa)
				y := nn.GELU{Tanh: tanh, Out: out}.Forward(xv)
				wantDT := out
				if out == 0 {
					wantDT = in
				}
				if y.DType() != wantDT {
					t.Fatalf("%v→%v: result %v", in, out, y.DType())
				}
				if err := y.AsType(array.Float32).Mul(ga).Sum().Backward(); err != nil {
					t.Fatal(err)
				}
				gy := g
				if wantDT == array.BFloat16 {
					_, gy = held(t, gpu, g, array.BFloat16, n)
				}
				wy, wdx := geluRef(x, gy, tanh)
				tol := tolFor(in, out)
				near(t, "y", f64(t, y.Value()), wy, tol)
				near(t, "dx", f64(t, xv.Grad()), wdx, tol)
			}
		}
	}
}

// TestGPUFusedCrossEntropy checks the classifier's loss and gradient for
// a loss gradient of 1 (the fused pass's, kept) and 2.5 (recomputed), and
// that two runs give the same bits.
func TestGPUFusedCrossEntropy(t *testing.T) {
	gpu := testGPU(t)
	if !nn.Fused(gpu.Device()) {
		t.Skip("GOCU_NOFUSE is set")
	}
	for _, c := range []int{50, 256, 50304} {
		for _, dt := range []array.DType{array.Float32, array.BFloat16} {
			for _, g := range []float64{1, 2.5} {
				n := 97
				xs := randn(uint64(c), n*c)
				for i := range xs {
					xs[i] *= 4
				}
				lab := make([]int64, n)
				rng := array.CPU().NewRNG(uint64(c) + 1)
				ls, err := rng.Uniform(array.Float64, 0, float64(c), n).Float64s()
				if err != nil {
					t.Fatal(err)
				}
				for i := range lab {
					lab[i] = min(int64(ls[i]), int64(c-1))
				}
				var first []float64
				for run := range 2 {
					poisonPool(t, gpu)
					xa, x := held(t, gpu, xs, dt, n, c)
					xv := grad.Param(xa)
					l := nn.CrossEntropy(xv, array.FromSliceOn(gpu.Device(), lab).AsType(array.Int32))
					if l.DType() != array.Float32 {
						t.Fatalf("%v logits: loss %v, want float32", dt, l.DType())
					}
					root := l
					if g != 1 {
						root = l.Mul(g)
					}
					if err := root.Backward(); err != nil {
						t.Fatal(err)
					}
					want, wdx := xentRef(x, lab, n, c, g)
					what := fmt.Sprintf("c=%d %v g=%v", c, dt, g)
					near(t, what+" loss", f64(t, l.Value()), []float64{want}, 1e-5)
					// Gradients are about 1/N: compare them scaled by N.
					got := f64(t, xv.Grad())
					bits := append(slices.Clone(got), f64(t, l.Value())...)
					for i := range got {
						got[i] *= float64(n)
						wdx[i] *= float64(n)
					}
					near(t, what+" dlogits", got, wdx, tolFor(dt)/4)
					if run == 0 {
						first = bits
						continue
					}
					for i := range bits {
						if math.Float64bits(bits[i]) != math.Float64bits(first[i]) {
							t.Fatalf("%s: run 2 differs from run 1 at %d: %v, %v", what, i, bits[i], first[i])
						}
					}
				}
			}
		}
	}
}

// TestGPUFusedCrossEntropyNoGrad checks the loss of logits that need no
// gradient (the forward kernel alone) against the reference.
func TestGPUFusedCrossEntropyNoGrad(t *testing.T) {
	gpu := testGPU(t)
	const n, c = 33, 50304
	for _, dt := range []array.DType{array.Float32, array.BFloat16} {
		xa, x := held(t, gpu, randn(5, n*c), dt, n, c)
		lab := make([]int64, n)
		for i := range lab {
			lab[i] = int64(i * 1523 % c)
		}
		var l *grad.Var
		grad.NoGrad(func() {
			l = nn.CrossEntropy(grad.Param(xa), array.FromSliceOn(gpu.Device(), lab))
		})
		want, _ := xentRef(x, lab, n, c, 1)
		near(t, fmt.Sprintf("%v loss", dt), f64(t, l.Value()), []float64{want}, 1e-5)
		if l.RequiresGrad() {
			t.Fatalf("%v: a loss under NoGrad requires a gradient", dt)
		}
	}
}

func TestGPUFusedBiasGELU(t *testing.T) {
	gpu := testGPU(t)
	if !nn.Fused(gpu.Device()) {
		t.Skip("GOCU_NOFUSE is set")
	}
	const rows, c = 1000, 3072 // GPT-2's MLP width; 4 blocks of rows
	for _, in := range []array.DType{array.Float32, array.BFloat16} {
		for _, out := range []array.DType{0, array.BFloat16} {
			poisonPool(t, gpu)
			xa, x := held(t, gpu, randn(21, rows*c), in, 10, rows/10, c)
			ba, b := held(t, gpu, randn(22, c), array.Float32, c)
			ga, g := held(t, gpu, randn(23, rows*c), array.Float32, 10, rows/10, c)
			xv, bv := grad.Param(xa), grad.Param(ba)
			y := nn.BiasGELU(xv, bv, true, out)
			wantDT := out
			if out == 0 {
				wantDT = in
			}
			if y.DType() != wantDT {
				t.Fatalf("%v→%v: result %v", in, out, y.DType())
			}
			if err := y.AsType(array.Float32).Mul(ga).Sum().Backward(); err != nil {
				t.Fatal(err)
			}
			gy := g
			if wantDT == array.BFloat16 {
				_, gy = held(t, gpu, g, array.BFloat16, rows*c)
			}
			xb := make([]float64, rows*c)
			for i := range xb {
				xb[i] = x[i] + b[i%c]
			}
			wy, wdx := geluRef(xb, gy, true)
			wdb := make([]float64, c)
			for i, v := range wdx {
				wdb[i%c] += v
			}
			tol := tolFor(in, out)
			near(t, "y", f64(t, y.Value()), wy, tol)
			near(t, "dx", f64(t, xv.Grad()), wdx, tol)
			near(t, "dbias", f64(t, bv.Grad()), wdb, 1e-3)
		}
	}
}
