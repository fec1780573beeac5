package nn_test

import (
	"errors"
	"math"
	"testing"

	"github.com/gocu-dev/gocu/array"
	"github.com/gocu-dev/gocu/grad"
	"github.com/gocu-dev/gocu/nn"
)

// TestGradScalerSchedule follows torch.amp.GradScaler's rules step by
// step: unscaled gradients, skipped steps, backoff and growth.
func TestGradScalerSchedule(t *testing.T) {
	p := grad.Param(array.FromSlice([]float32{1, 2, 3}))
	o := nn.NewSGD([]*grad.Var{p}, 0.5)
	s := nn.NewGradScaler()
	if s.ScaleFactor != 65536 || s.GrowthFactor != 2 || s.BackoffFactor != 0.5 || s.GrowthInterval != 2000 {
		t.Fatalf("defaults %+v, want torch's", s)
	}
	s.GrowthInterval = 3
	rng := array.CPU().NewRNG(70)
	scale := 65536.0
	want := f64(t, p.Value())
	for step, overflow := range []bool{false, true, false, false, false, false, true} {
		g := f64(t, rng.Normal(array.Float32, 0, 1, 3))
		sg := make([]float32, 3)
		for i := range g {
			sg[i] = float32(g[i] * scale)
		}
		if overflow {
			sg[1] = float32(math.Inf(1))
		}
		p.SetGrad(array.FromSlice(sg))
		stepped, err := s.Step(o)
		if err != nil {
			t.Fatal(err)
		}
		if stepped == overflow || s.Overflowed() != overflow {
			t.Fatalf("step %d: stepped %v, overflow %v, want %v", step, stepped, s.Overflowed(), !overflow)
		}
		if !overflow {
			near(t, "unscaled gradient", f64(t, p.Grad()), g, 1e-7)
			for i := range want {
				want[i] -= 0.5 * float64(float32(g[i]))
			}
		}
		near(t, "parameter", f64(t, p.Value()), want, 1e-6)
		if err := s.Update(); err != nil {
			t.Fatal(err)
		}
		// Step 1 overflows: halve. Steps 2, 3, 4 are clean: double.
		// Step 5 is clean, step 6 overflows: halve.
		switch step {
		case 1, 6:
			scale /= 2
		case 4:
			scale *= 2
		}
		if s.ScaleFactor != scale {
			t.Fatalf("after step %d: scale %v, want %v", step, s.ScaleFactor, scale)
		}
	}
	if o.Steps() != 5 {
		t.Fatalf("the optimiser took %d steps, want 5", o.Steps())
	}
	// Scale multiplies the loss.
	l := s.Scale(grad.Const(array.FromSlice([]float32{3})))
	near(t, "scaled loss", f64(t, l.Value()), []float64{3 * scale}, 0)
}

func TestGradScalerErrors(t *testing.T) {
	p := grad.Param(array.FromSlice([]float32{1}))
	o := nn.NewSGD([]*grad.Var{p}, 0.5)
	s := nn.NewGradScaler()
	if err := s.Update(); !errors.Is(err, nn.ErrHyper) {
		t.Errorf("Update first: error %v, want ErrHyper", err)
	}
	p.SetGrad(array.FromSlice([]float32{1}))
	if err := s.Unscale(o); err != nil {
		t.Fatal(err)
	}
	if err := s.Unscale(o); !errors.Is(err, nn.ErrHyper) {
		t.Errorf("Unscale twice: error %v, want ErrHyper", err)
	}
	for _, bad := range []func(s *nn.GradScaler){
		func(s *nn.GradScaler) { s.ScaleFactor = 0 },
		func(s *nn.GradScaler) { s.ScaleFactor = math.Inf(1) },
		func(s *nn.GradScaler) { s.GrowthFactor = 1 },
		func(s *nn.GradScaler) { s.BackoffFactor = 1 },
		func(s *nn.GradScaler) { s.GrowthInterval = 0 },
	} {
		s := nn.NewGradScaler()
		bad(s)
		if err := s.Scale(p).Err(); !errors.Is(err, nn.ErrHyper) {
			t.Errorf("%+v: error %v, want ErrHyper", s, err)
		}
	}
}

// TestGradScalerFloat16 trains a layer whose products run in float16 on
// a loss so small that its gradients flush to zero in float16: without
// the scaler the weight gradient is lost, with it the gradient is
// float32's within float16's rounding.
func TestGradScalerFloat16(t *testing.T) {
	makers := []*array.Maker{array.CPU()}
	if g, err := gpuOnce(); err == nil {
		makers = append(makers, g)
	}
	for _, d := range makers {
		t.Run(d.String(), func(t *testing.T) {
			x := d.NewRNG(71).Normal(array.Float32, 0, 1, 64, 32)
			y := d.NewRNG(72).Integers(array.Int64, 0, 10, 64)
			run := func(compute array.DType, scaler *nn.GradScaler) []float64 {
				l := nn.NewLinear(d.NewRNG(73), 32, 10)
				l.Compute = compute
				// A loss scaled down as a long sequence's mean would be.
				loss := nn.CrossEntropy(l.Forward(grad.Const(x)), y).Mul(1e-6)
				if scaler != nil {
					loss = scaler.Scale(loss)
				}
				if err := loss.Backward(); err != nil {
					t.Fatal(err)
				}
				if scaler != nil {
					if err := scaler.Unscale(nn.NewSGD(nn.Params(l), 0)); err != nil {
						t.Fatal(err)
					}
					if scaler.Overflowed() {
						t.Fatal("overflow")
					}
				}
				return f64(t, l.Weight.Grad())
			}
			want := run(0, nil)
			if e := relErr(run(array.Float16, nil), want); e < 0.5 {
				t.Fatalf("float16 without a scaler: relative error %.3g; the test needs gradients that flush to zero", e)
			}
			if e := relErr(run(array.Float16, nn.NewGradScaler()), want); e > 1e-2 {
				t.Fatalf("float16 with the scaler: relative error %.3g against float32", e)
			}
		})
	}
}

// TestAutocast runs a model's products in bfloat16 and float16 with
// Autocast: outputs and gradients stay float32, within the rounding of
// the low precision, and Autocast(m, 0) gives float32's results again.
func TestAutocast(t *testing.T) {
	makers := []*array.Maker{array.CPU()}
	if g, err := gpuOnce(); err == nil {
		makers = append(makers, g)
	}
	for _, d := range makers {
		t.Run(d.String(), func(t *testing.T) {
			rng := d.NewRNG(74)
			m := nn.NewSequential(nn.NewLinear(rng, 16, 32), nn.NewMultiheadAttention(rng, 32, 4), nn.NewLayerNorm(d, 32), nn.GELU{}, nn.NewLinear(rng, 32, 8))
			x := grad.Const(rng.Normal(array.Float32, 0, 1, 2, 12, 16))
			run := func() [][]float64 {
				for _, p := range nn.Params(m) {
					p.ZeroGrad()
				}
				y := m.Forward(x)
				if y.DType() != array.Float32 {
					t.Fatalf("output dtype %v, want float32", y.DType())
				}
				if err := y.Square().Mean().Backward(); err != nil {
					t.Fatal(err)
				}
				out := [][]float64{f64(t, y.Value())}
				for _, p := range nn.Params(m) {
					if p.Grad().DType() != array.Float32 {
						t.Fatalf("gradient dtype %v, want float32", p.Grad().DType())
					}
					out = append(out, f64(t, p.Grad()))
				}
				return out
			}
			want := run()
			for _, dt := range []array.DType{array.BFloat16, array.Float16} {
				if err := nn.Autocast(m, dt); err != nil {
					t.Fatal(err)
				}
				got := run()
				for i := range want {
					if e := relErr(got[i], want[i]); e > 3e-2 || e == 0 || math.IsNaN(e) {
						t.Errorf("%v: value %d: relative error %.3g against float32", dt, i, e)
					}
				}
			}
			if err := nn.Autocast(m, 0); err != nil {
				t.Fatal(err)
			}
			sameBits(t, "Autocast off", run(), want)
			if err := nn.Autocast(m, array.Int8); !errors.Is(err, nn.ErrHyper) {
				t.Errorf("Autocast to int8: error %v, want ErrHyper", err)
			}
		})
	}
}
