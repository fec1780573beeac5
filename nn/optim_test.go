package nn_test

import (
	"errors"
	"fmt"
	"math"
	"testing"

	"github.com/gocu-dev/gocu/array"
	"github.com/gocu-dev/gocu/grad"
	"github.com/gocu-dev/gocu/nn"
)

// refOpt is torch.optim's algorithms in float64, one parameter as a slice.
type refOpt struct {
	name                           string
	lr, mom, damp, wd, b1, b2, eps float64
	nesterov, decoupled, adam      bool
	m, v                           []float64
	t                              int
}

func (r *refOpt) step(p, g []float64) {
	r.t++
	if r.m == nil {
		r.m, r.v = make([]float64, len(p)), make([]float64, len(p))
	}
	for i := range p {
		gi := g[i]
		if r.adam {
			if r.decoupled {
				p[i] *= 1 - r.lr*r.wd
			} else {
				gi += r.wd * p[i]
			}
			r.m[i] += (1 - r.b1) * (gi - r.m[i])
			r.v[i] = r.b2*r.v[i] + (1-r.b2)*gi*gi
			bc1 := 1 - math.Pow(r.b1, float64(r.t))
			bc2 := 1 - math.Pow(r.b2, float64(r.t))
			p[i] -= r.lr / bc1 * r.m[i] / (math.Sqrt(r.v[i])/math.Sqrt(bc2) + r.eps)
			continue
		}
		gi += r.wd * p[i]
		if r.mom != 0 {
			if r.t == 1 {
				r.m[i] = gi
			} else {
				r.m[i] = r.mom*r.m[i] + (1-r.damp)*gi
			}
			if r.nesterov {
				gi += r.mom * r.m[i]
			} else {
				gi = r.m[i]
			}
		}
		p[i] -= r.lr * gi
	}
}

func (r *refOpt) make(ps []*grad.Var, unfused bool) nn.Optimizer {
	if r.adam {
		a := nn.NewAdam(ps, r.lr)
		a.Beta1, a.Beta2, a.Eps, a.WeightDecay, a.Decoupled, a.Unfused = r.b1, r.b2, r.eps, r.wd, r.decoupled, unfused
		return a
	}
	s := nn.NewSGD(ps, r.lr)
	s.Momentum, s.Dampening, s.WeightDecay, s.Nesterov, s.Unfused = r.mom, r.damp, r.wd, r.nesterov, unfused
	return s
}

func optCases() []refOpt {
	return []refOpt{
		{name: "SGD", lr: 0.1},
		{name: "SGD/momentum", lr: 0.05, mom: 0.9},
		{name: "SGD/momentum dampening wd", lr: 0.05, mom: 0.8, damp: 0.3, wd: 0.01},
		{name: "SGD/nesterov", lr: 0.05, mom: 0.9, nesterov: true, wd: 1e-3},
		{name: "Adam", adam: true, lr: 1e-2, b1: 0.9, b2: 0.999, eps: 1e-8},
		{name: "Adam/L2", adam: true, lr: 1e-2, b1: 0.8, b2: 0.99, eps: 1e-6, wd: 0.1},
		{name: "AdamW", adam: true, decoupled: true, lr: 1e-2, b1: 0.9, b2: 0.999, eps: 1e-8, wd: 0.05},
	}
}

// run takes 5 steps with fixed gradients on two parameters (one large
// enough to be split over goroutines) and returns their values.
func runOpt(t *testing.T, d *array.Maker, dt array.DType, c refOpt, unfused bool) [][]float64 {
	t.Helper()
	rng := d.NewRNG(5)
	ps := []*grad.Var{grad.Param(rng.Normal(dt, 0, 1, 300, 250)), grad.Param(rng.Normal(dt, 0, 1, 7))}
	o := c.make(ps, unfused)
	for s := 0; s < 5; s++ {
		for _, p := range ps {
			p.SetGrad(rng.Normal(dt, 0, 1, p.Shape()...))
		}
		if err := o.Step(); err != nil {
			t.Fatal(err)
		}
	}
	var out [][]float64
	for _, p := range ps {
		out = append(out, f64(t, p.Value()))
	}
	return out
}

func TestOptimizersMatchTorch(t *testing.T) {
	for _, c := range optCases() {
		t.Run(c.name, func(t *testing.T) {
			// The reference, from the same draws.
			rng := array.CPU().NewRNG(5)
			ps := [][]float64{f64(t, rng.Normal(array.Float64, 0, 1, 300, 250)), f64(t, rng.Normal(array.Float64, 0, 1, 7))}
			refs := []*refOpt{ptr(c), ptr(c)}
			for s := 0; s < 5; s++ {
				for i := range ps {
					g := f64(t, rng.Normal(array.Float64, 0, 1, len(ps[i])))
					refs[i].step(ps[i], g)
				}
			}
			for _, unfused := range []bool{false, true} {
				got := runOpt(t, array.CPU(), array.Float64, c, unfused)
				for i := range ps {
					near(t, fmt.Sprintf("float64 unfused=%v param %d", unfused, i), got[i], ps[i], 1e-12)
				}
			}
			// float32: fused and unfused agree closely, and with float64.
			f := runOpt(t, array.CPU(), array.Float32, c, false)
			u := runOpt(t, array.CPU(), array.Float32, c, true)
			for i := range ps {
				near(t, fmt.Sprintf("float32 fused vs unfused, param %d", i), f[i], u[i], 1e-6)
				near(t, fmt.Sprintf("float32 vs float64, param %d", i), f[i], ps[i], 1e-5)
			}
		})
	}
}

func ptr(c refOpt) *refOpt { return &c }

func TestOptimizerGPUMatchesCPU(t *testing.T) {
	gpu := testGPU(t)
	for _, c := range optCases() {
		t.Run(c.name, func(t *testing.T) {
			cpu := runOpt(t, array.CPU(), array.Float32, c, false)
			for _, unfused := range []bool{false, true} {
				g := runOpt(t, gpu, array.Float32, c, unfused)
				for i := range cpu {
					near(t, fmt.Sprintf("GPU unfused=%v param %d", unfused, i), g[i], cpu[i], 1e-6)
				}
			}
			g64 := runOpt(t, gpu, array.Float64, c, false)
			c64 := runOpt(t, array.CPU(), array.Float64, c, false)
			for i := range c64 {
				near(t, fmt.Sprintf("GPU float64 param %d", i), g64[i], c64[i], 1e-13)
			}
		})
	}
}

func TestOptimizerDetails(t *testing.T) {
	// Parameters without a gradient are skipped; ZeroGrad clears all.
	a := grad.Param(array.FromSlice([]float32{1, 2}))
	b := grad.Param(array.FromSlice([]float32{3, 4}))
	o := nn.NewSGD([]*grad.Var{a, b}, 0.5)
	a.SetGrad(array.FromSlice([]float32{1, 1}))
	if err := o.Step(); err != nil {
		t.Fatal(err)
	}
	near(t, "a", f64(t, a.Value()), []float64{0.5, 1.5}, 0)
	near(t, "b untouched", f64(t, b.Value()), []float64{3, 4}, 0)
	o.ZeroGrad()
	if a.Grad() != nil || b.Grad() != nil {
		t.Fatal("ZeroGrad")
	}
	// A strided gradient (a broadcast view) takes the expression path.
	a.SetGrad(array.FromSlice([]float32{2}).BroadcastTo(2))
	if err := o.Step(); err != nil {
		t.Fatal(err)
	}
	near(t, "strided gradient", f64(t, a.Value()), []float64{-0.5, 0.5}, 0)
	// A failed gradient's error comes back from Step.
	boom := errors.New("boom")
	a.SetGrad(array.Failed(boom))
	if err := o.Step(); !errors.Is(err, boom) {
		t.Fatalf("Step with a failed gradient: %v", err)
	}
	// A gradient of the wrong shape is an error.
	a.SetGrad(array.FromSlice([]float32{1, 2, 3}))
	if err := o.Step(); err == nil {
		t.Fatal("Step took a gradient of the wrong shape")
	}
	// Pending expressions that read a parameter keep their values.
	w := grad.Param(array.FromSlice([]float32{1, 2}))
	pending := w.Value().Mul(10)
	w.SetGrad(array.FromSlice([]float32{1, 1}))
	if err := nn.NewAdam([]*grad.Var{w}, 0.1).Step(); err != nil {
		t.Fatal(err)
	}
	near(t, "pending expression", f64(t, pending), []float64{10, 20}, 0)
}
