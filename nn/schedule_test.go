package nn_test

import (
	"errors"
	"math"
	"testing"

	"github.com/gocu-dev/gocu/array"
	"github.com/gocu-dev/gocu/grad"
	"github.com/gocu-dev/gocu/nn"
)

func rates(t *testing.T, s nn.Schedule, base float64, n int) []float64 {
	t.Helper()
	out := make([]float64, n)
	for i := range out {
		lr, err := s.LR(base, i)
		if err != nil {
			t.Fatal(err)
		}
		out[i] = lr
	}
	return out
}

// TestSchedules checks each schedule against values worked out from
// torch's documented formulas.
func TestSchedules(t *testing.T) {
	near(t, "StepLR", rates(t, nn.StepLR{Size: 3, Gamma: 0.1}, 0.5, 8),
		[]float64{0.5, 0.5, 0.5, 0.05, 0.05, 0.05, 0.005, 0.005}, 1e-15)
	near(t, "LinearLR", rates(t, nn.LinearLR{Start: 0.25, End: 1, Iters: 4}, 0.4, 6),
		[]float64{0.1, 0.175, 0.25, 0.325, 0.4, 0.4}, 1e-15)
	near(t, "LambdaLR", rates(t, nn.LambdaLR{F: func(s int) float64 { return math.Pow(0.95, float64(s)) }}, 2, 4),
		[]float64{2, 1.9, 1.805, 1.71475}, 1e-15)
	// CosineAnnealingLR: torch's recursive form (its get_lr) from step 1
	// to T_max must agree with the closed form LR uses.
	const tmax, lo, base = 7, 0.1, 1.1
	got := rates(t, nn.CosineAnnealingLR{TMax: tmax, Min: lo}, base, tmax+2)
	want := []float64{base}
	for s := 1; s <= tmax; s++ {
		prev := want[s-1]
		want = append(want, lo+(prev-lo)*(1+math.Cos(math.Pi*float64(s)/tmax))/(1+math.Cos(math.Pi*float64(s-1)/tmax)))
	}
	want = append(want, lo+(base-lo)*(1-math.Cos(math.Pi/tmax))/2) // torch's restart branch at T_max+1
	near(t, "CosineAnnealingLR", got, want, 1e-14)
	near(t, "CosineAnnealingLR halfway", rates(t, nn.CosineAnnealingLR{TMax: 4, Min: 0.1}, 1.1, 3)[2:], []float64{0.6}, 1e-15)
	// nanoGPT's get_lr with warmup_iters 2, lr_decay_iters 6, min_lr 0.1.
	near(t, "WarmupCosine", rates(t, nn.WarmupCosine{Warmup: 2, Decay: 6, Min: 0.1}, 1, 8),
		[]float64{1.0 / 3, 2.0 / 3, 1, 0.1 + 0.9*(1+math.Sqrt(0.5))/2, 0.55, 0.1 + 0.9*(1-math.Sqrt(0.5))/2, 0.1, 0.1}, 1e-15)
}

func TestScheduleErrors(t *testing.T) {
	for name, s := range map[string]nn.Schedule{
		"StepLR size 0":     nn.StepLR{Gamma: 0.1},
		"StepLR NaN gamma":  nn.StepLR{Size: 1, Gamma: math.NaN()},
		"Cosine T_max 0":    nn.CosineAnnealingLR{},
		"Cosine min < 0":    nn.CosineAnnealingLR{TMax: 3, Min: -1},
		"LinearLR start 0":  nn.LinearLR{End: 1, Iters: 3},
		"LinearLR end 2":    nn.LinearLR{Start: 0.5, End: 2, Iters: 3},
		"LinearLR iters 0":  nn.LinearLR{Start: 0.5, End: 1},
		"LambdaLR nil":      nn.LambdaLR{},
		"WarmupCosine 3, 3": nn.WarmupCosine{Warmup: 3, Decay: 3},
	} {
		if _, err := s.LR(1, 0); !errors.Is(err, nn.ErrHyper) {
			t.Errorf("%s: error %v, want ErrHyper", name, err)
		}
	}
}

func TestScheduler(t *testing.T) {
	p := grad.Param(array.FromSlice([]float32{1, 2}))
	o := nn.NewSGD([]*grad.Var{p}, 0.5)
	sc, err := nn.NewScheduler(o, nn.StepLR{Size: 2, Gamma: 0.5})
	if err != nil {
		t.Fatal(err)
	}
	var got []float64
	for range 5 {
		got = append(got, o.LR)
		if sc.LR() != o.LR {
			t.Fatalf("scheduler says %v, optimiser has %v", sc.LR(), o.LR)
		}
		if err := sc.Step(); err != nil {
			t.Fatal(err)
		}
	}
	near(t, "SGD rates", got, []float64{0.5, 0.5, 0.25, 0.25, 0.125}, 0)
	if sc.Steps() != 5 {
		t.Fatalf("%d steps", sc.Steps())
	}
	a := nn.NewAdam([]*grad.Var{p}, 1)
	sc, err = nn.NewScheduler(a, nn.LambdaLR{F: func(s int) float64 { return 1 - float64(s) }})
	if err != nil || a.LR != 1 {
		t.Fatalf("Adam: %v, rate %v", err, a.LR)
	}
	sc.Step()
	if err := sc.Step(); !errors.Is(err, nn.ErrHyper) {
		t.Fatalf("a negative rate: error %v, want ErrHyper", err)
	}
	if _, err := nn.NewScheduler(a, nil); !errors.Is(err, nn.ErrHyper) {
		t.Fatalf("nil schedule: %v", err)
	}
}

func TestClipGradNorm(t *testing.T) {
	rng := array.NewRNG(5)
	shapes := [][]int{{3, 4}, {5}, {2, 2, 2}}
	for _, p := range []float64{2, 1, 3, math.Inf(1)} {
		for _, maxNorm := range []float64{0.5, 1e6} {
			var ps []*grad.Var
			var want float64
			var all [][]float64
			for _, s := range shapes {
				g := rng.Normal(array.Float32, 0, 1, s...)
				v := grad.Param(rng.Normal(array.Float32, 0, 1, s...))
				v.SetGrad(g)
				ps = append(ps, v)
				all = append(all, f64(t, g))
			}
			ps = append(ps, grad.Param(array.Zeros(array.Float32, 2))) // no gradient: skipped
			for _, g := range all {
				for _, x := range g {
					if math.IsInf(p, 1) {
						want = math.Max(want, math.Abs(x))
					} else {
						want += math.Pow(math.Abs(x), p)
					}
				}
			}
			if !math.IsInf(p, 1) {
				want = math.Pow(want, 1/p)
			}
			norm, err := nn.ClipGradNorm(ps, maxNorm, &nn.ClipOptions{Norm: p})
			if err != nil {
				t.Fatal(err)
			}
			near(t, "total norm", f64(t, norm), []float64{want}, 1e-6)
			coef := math.Min(maxNorm/(want+1e-6), 1)
			for i, g := range all {
				for j := range g {
					g[j] *= coef
				}
				near(t, "clipped gradient", f64(t, ps[i].Grad()), g, 1e-6)
			}
			if ps[3].Grad() != nil {
				t.Fatal("a parameter without a gradient got one")
			}
		}
	}
}

func TestClipGradNormNonfinite(t *testing.T) {
	for _, bad := range []float32{float32(math.NaN()), float32(math.Inf(1))} {
		mk := func() []*grad.Var {
			a := grad.Param(array.Zeros(array.Float32, 3))
			a.SetGrad(array.FromSlice([]float32{1, bad, 2}))
			b := grad.Param(array.Zeros(array.Float32, 2))
			b.SetGrad(array.FromSlice([]float32{3, 4}))
			return []*grad.Var{a, b}
		}
		ps := mk()
		if _, err := nn.ClipGradNorm(ps, 1, &nn.ClipOptions{ErrorIfNonfinite: true}); !errors.Is(err, nn.ErrNonfinite) {
			t.Fatalf("%v: error %v, want ErrNonfinite", bad, err)
		}
		near(t, "gradient left alone", f64(t, ps[1].Grad()), []float64{3, 4}, 0)
		ps = mk()
		norm, err := nn.ClipGradNorm(ps, 1, nil)
		if err != nil {
			t.Fatal(err)
		}
		n := f64(t, norm)[0]
		g := f64(t, ps[1].Grad())
		// torch: a NaN norm makes every gradient NaN; an infinite one
		// scales by 0.
		if math.IsNaN(float64(bad)) {
			if !math.IsNaN(n) || !math.IsNaN(g[0]) || !math.IsNaN(g[1]) {
				t.Fatalf("NaN gradient: norm %v, gradient %v", n, g)
			}
		} else if !math.IsInf(n, 1) || g[0] != 0 || g[1] != 0 {
			t.Fatalf("infinite gradient: norm %v, gradient %v", n, g)
		}
	}
	if _, err := nn.ClipGradNorm(nil, -1, nil); !errors.Is(err, nn.ErrHyper) {
		t.Fatalf("max norm -1: %v", err)
	}
	if _, err := nn.ClipGradNorm(nil, 1, &nn.ClipOptions{Norm: -2}); !errors.Is(err, nn.ErrHyper) {
		t.Fatalf("norm type -2: %v", err)
	}
	if n, err := nn.ClipGradNorm(nil, 1, nil); err != nil || f64(t, n)[0] != 0 {
		t.Fatalf("no gradients: %v, %v", n, err)
	}
}
