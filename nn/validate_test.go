package nn_test

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/gocu-dev/gocu/array"
	"github.com/gocu-dev/gocu/grad"
	"github.com/gocu-dev/gocu/nn"
)

// param returns a parameter of random values with a gradient.
func param(t *testing.T, seed uint64) (*grad.Var, []float64) {
	t.Helper()
	rng := array.CPU().NewRNG(seed)
	p := grad.Param(rng.Normal(array.Float64, 0, 1, 5).Copy())
	if err := p.Mul(p).Sum().Backward(); err != nil {
		t.Fatal(err)
	}
	return p, f64(t, p.Value())
}

// Hyperparameters that torch.optim refuses are refused at Step and SetLR,
// and the parameters are left as they were.
func TestOptimizerValidation(t *testing.T) {
	nan, inf := math.NaN(), math.Inf(1)
	adam := []struct {
		name string
		set  func(a *nn.Adam)
		want string
	}{
		{"lr NaN", func(a *nn.Adam) { a.LR = nan }, "learning rate NaN"},
		{"lr -1", func(a *nn.Adam) { a.LR = -1 }, "learning rate -1"},
		{"lr +Inf", func(a *nn.Adam) { a.LR = inf }, "learning rate +Inf"},
		{"beta1 1", func(a *nn.Adam) { a.Beta1 = 1 }, "beta1 1: want 0 <= beta < 1"},
		{"beta2 1.5", func(a *nn.Adam) { a.Beta2 = 1.5 }, "beta2 1.5"},
		{"beta2 NaN", func(a *nn.Adam) { a.Beta2 = nan }, "beta2 NaN"},
		{"eps -1", func(a *nn.Adam) { a.Eps = -1 }, "eps -1"},
		{"weight decay -0.1", func(a *nn.Adam) { a.WeightDecay = -0.1 }, "weight decay -0.1"},
	}
	for _, c := range adam {
		p, before := param(t, 1)
		a := nn.NewAdam([]*grad.Var{p}, 1e-3)
		c.set(a)
		err := a.Step()
		if !errors.Is(err, nn.ErrHyper) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Adam %s: %v, want %q", c.name, err, c.want)
		}
		if got := f64(t, p.Value()); !slices.Equal(got, before) {
			t.Errorf("Adam %s changed the parameter", c.name)
		}
	}
	sgd := []struct {
		name string
		set  func(s *nn.SGD)
		want string
	}{
		{"lr NaN", func(s *nn.SGD) { s.LR = nan }, "learning rate NaN"},
		{"momentum -1", func(s *nn.SGD) { s.Momentum = -1 }, "momentum -1"},
		{"Nesterov without momentum", func(s *nn.SGD) { s.Nesterov = true }, "Nesterov momentum requires a momentum > 0"},
		{"Nesterov with dampening", func(s *nn.SGD) { s.Nesterov, s.Momentum, s.Dampening = true, 0.9, 0.1 }, "zero dampening"},
	}
	for _, c := range sgd {
		p, before := param(t, 2)
		s := nn.NewSGD([]*grad.Var{p}, 0.1)
		c.set(s)
		err := s.Step()
		if !errors.Is(err, nn.ErrHyper) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("SGD %s: %v, want %q", c.name, err, c.want)
		}
		if got := f64(t, p.Value()); !slices.Equal(got, before) {
			t.Errorf("SGD %s changed the parameter", c.name)
		}
	}
	p, _ := param(t, 3)
	a, s := nn.NewAdam([]*grad.Var{p}, 1e-3), nn.NewSGD([]*grad.Var{p}, 0.1)
	for _, lr := range []float64{nan, -1, inf} {
		if err := a.SetLR(lr); !errors.Is(err, nn.ErrHyper) || a.LR != 1e-3 {
			t.Errorf("Adam SetLR(%v): %v, LR %v", lr, err, a.LR)
		}
		if err := s.SetLR(lr); !errors.Is(err, nn.ErrHyper) || s.LR != 0.1 {
			t.Errorf("SGD SetLR(%v): %v, LR %v", lr, err, s.LR)
		}
	}
	// lr 0 is allowed, as in torch: the step leaves the parameter.
	if err := a.SetLR(0); err != nil {
		t.Errorf("SetLR(0): %v", err)
	}
}

// A parameter listed twice is refused instead of being updated twice.
func TestOptimizerDuplicateParams(t *testing.T) {
	p, before := param(t, 4)
	q, _ := param(t, 5)
	for _, o := range []nn.Optimizer{nn.NewAdam([]*grad.Var{p, q, p}, 1e-3), nn.NewSGD([]*grad.Var{p, q, p}, 0.1)} {
		err := o.Step()
		if !errors.Is(err, nn.ErrHyper) || !strings.Contains(err.Error(), "parameter 2 is parameter 0 again") {
			t.Errorf("%T: %v", o, err)
		}
	}
	if got := f64(t, p.Value()); !slices.Equal(got, before) {
		t.Error("a refused step changed the parameter")
	}
	if err := nn.NewSGD([]*grad.Var{p, nil}, 0.1).Step(); !errors.Is(err, grad.ErrNilVar) {
		t.Errorf("a nil parameter: %v", err)
	}
}

// Layers with arguments torch refuses fail with an error naming them.
func TestLayerValidation(t *testing.T) {
	rng := array.CPU().NewRNG(6)
	x := grad.Const(rng.Normal(array.Float32, 0, 1, 2, 3, 8, 8))
	for _, p := range []float64{-0.5, 1, 1.5, math.NaN()} {
		if err := nn.NewDropout(rng, p).Forward(x).Err(); !errors.Is(err, nn.ErrHyper) || !strings.Contains(err.Error(), fmt.Sprintf("Dropout: probability %v", p)) {
			t.Errorf("Dropout(%v): %v", p, err)
		}
	}
	for _, c := range [][2]int{{-1, 0}, {1, -2}} {
		err := nn.NewConv2d(rng, 3, 4, 3, c[0], c[1]).Forward(x).Err()
		if !errors.Is(err, nn.ErrHyper) || !strings.Contains(err.Error(), fmt.Sprintf("stride (%d, %d), padding (%d, %d)", c[0], c[0], c[1], c[1])) {
			t.Errorf("Conv2d stride %d padding %d: %v", c[0], c[1], err)
		}
	}
	if err := nn.NewConv2d(rng, 3, 4, 3, 0, 1).Forward(x).Err(); err != nil {
		t.Errorf("Conv2d stride 0 (means 1): %v", err)
	}
	lin := nn.NewLinear(rng, 3, 2)
	for _, dt := range []array.DType{array.Float16, array.BFloat16} {
		if err := nn.Cast(lin, dt); err == nil || !strings.Contains(err.Error(), "master weights") {
			t.Errorf("Cast to %v: %v, want an error pointing to float32 master weights", dt, err)
		}
	}
	if err := nn.Cast(lin, array.Int32); err == nil || !strings.Contains(err.Error(), "Cast to int32") {
		t.Errorf("Cast to int32: %v", err)
	}
	if lin.Weight.DType() != array.Float32 {
		t.Errorf("a refused Cast changed the weights to %v", lin.Weight.DType())
	}
	for name, y := range map[string]*grad.Var{
		"nil layer":      nn.NewSequential(nil).Forward(x),
		"nil *Linear":    nn.NewSequential(lin, (*nn.Linear)(nil)).Forward(grad.Const(rng.Normal(array.Float32, 0, 1, 2, 3))),
		"nil Sequential": (*nn.Sequential)(nil).Forward(x),
	} {
		if err := y.Err(); err == nil || !strings.Contains(err.Error(), "nil") {
			t.Errorf("%s: %v", name, err)
		}
	}
	if n := nn.NewSequential(nil, lin).Named(); len(n) != 2 {
		t.Errorf("Named of a Sequential with a nil layer: %v", n)
	}
}
