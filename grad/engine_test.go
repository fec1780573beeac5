package grad_test

import (
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/gocu-dev/gocu/array"
	"github.com/gocu-dev/gocu/grad"
)

func vals(t *testing.T, a *array.Array) []float64 {
	t.Helper()
	v, err := a.AsType(array.Float64).Float64s()
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func near(t *testing.T, what string, got, want []float64, tol float64) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d values, want %d", what, len(got), len(want))
	}
	for i := range got {
		if math.Abs(got[i]-want[i]) > tol*math.Max(1, math.Abs(want[i])) {
			t.Fatalf("%s[%d] = %v, want %v (all: %v, want %v)", what, i, got[i], want[i], got, want)
		}
	}
}

func TestAccumulateAndZeroGrad(t *testing.T) {
	x := grad.Param(array.FromSlice([]float64{1, 2, 3}))
	for i := 1; i <= 3; i++ {
		if err := x.Mul(x).Sum().Backward(); err != nil {
			t.Fatal(err)
		}
		near(t, "grad", vals(t, x.Grad()), []float64{2 * float64(i), 4 * float64(i), 6 * float64(i)}, 0)
	}
	x.ZeroGrad()
	if x.Grad() != nil {
		t.Fatal("ZeroGrad left a gradient")
	}
	if err := x.Sum().Backward(); err != nil {
		t.Fatal(err)
	}
	near(t, "after ZeroGrad", vals(t, x.Grad()), []float64{1, 1, 1}, 0)
}

func TestSharedAndDiamond(t *testing.T) {
	// y = a*b + a*c with b = a+1, c = exp(a): dy/da = b + a + c + a*c.
	a := grad.Param(array.FromSlice([]float64{0.5, -1}))
	b := a.Add(1)
	c := a.Exp()
	y := a.Mul(b).Add(a.Mul(c)).Sum()
	if err := y.Backward(); err != nil {
		t.Fatal(err)
	}
	var want []float64
	for _, v := range []float64{0.5, -1} {
		want = append(want, (v+1)+v+math.Exp(v)+v*math.Exp(v))
	}
	near(t, "grad", vals(t, a.Grad()), want, 1e-14)
}

func TestTwoParamsOneGradient(t *testing.T) {
	// Add passes one gradient array to both operands: each parameter
	// must get a gradient of its own that later steps cannot disturb.
	a := grad.Param(array.FromSlice([]float64{1, 2}))
	b := grad.Param(array.FromSlice([]float64{3, 4}))
	if err := a.Add(b).Sum().Backward(); err != nil {
		t.Fatal(err)
	}
	ga, gb := a.Grad(), b.Grad()
	ga.Close()
	near(t, "b's grad after closing a's", vals(t, gb), []float64{1, 1}, 0)
	a.ZeroGrad() // its array was closed
	if err := a.Add(b).Mul(2).Sum().Backward(); err != nil {
		t.Fatal(err)
	}
	near(t, "a", vals(t, a.Grad()), []float64{2, 2}, 0)
	near(t, "b accumulated", vals(t, b.Grad()), []float64{3, 3}, 0)
}

func TestNoGradDetachConst(t *testing.T) {
	x := grad.Param(array.FromSlice([]float64{1, 2}))
	var y *grad.Var
	grad.NoGrad(func() {
		if grad.Recording() {
			t.Error("Recording inside NoGrad")
		}
		y = x.Mul(3)
	})
	if !grad.Recording() {
		t.Fatal("recording off after NoGrad")
	}
	if y.RequiresGrad() {
		t.Fatal("a Var computed under NoGrad requires a gradient")
	}
	if err := y.Sum().Backward(); err == nil || !strings.Contains(err.Error(), "does not require a gradient") {
		t.Fatalf("Backward of a NoGrad result: %v", err)
	}
	d := x.Mul(2).Detach()
	if d.RequiresGrad() || !d.IsLeaf() {
		t.Fatal("Detach kept history")
	}
	z := x.Mul(d).Sum() // d is a constant: dz/dx = d = 2x
	if err := z.Backward(); err != nil {
		t.Fatal(err)
	}
	near(t, "grad through detached factor", vals(t, x.Grad()), []float64{2, 4}, 0)
	c := grad.Const(array.FromSlice([]float64{5, 6}))
	if c.RequiresGrad() || c.Add(1).RequiresGrad() {
		t.Fatal("a Const requires a gradient")
	}
}

func TestGraphReleased(t *testing.T) {
	x := grad.Param(array.FromSlice([]float64{1, 2}))
	y := x.Exp().Sum()
	if err := y.Backward(); err != nil {
		t.Fatal(err)
	}
	err := y.Backward()
	if err == nil || !strings.Contains(err.Error(), "released") {
		t.Fatalf("second Backward: %v", err)
	}
}

func TestOfIntermediate(t *testing.T) {
	x := grad.Param(array.FromSlice([]float64{1, 2, 3}))
	h := x.Mul(x)                                       // x²
	y := h.Sin().Sum()                                  // dy/dh = cos(h)
	unused := grad.Param(array.FromSlice([]float64{7})) // not in y's graph
	gs, err := grad.Of(y, h, x, unused)
	if err != nil {
		t.Fatal(err)
	}
	var gh, gx []float64
	for _, v := range []float64{1, 2, 3} {
		gh = append(gh, math.Cos(v*v))
		gx = append(gx, math.Cos(v*v)*2*v)
	}
	near(t, "dy/dh", vals(t, gs[0]), gh, 1e-15)
	near(t, "dy/dx", vals(t, gs[1]), gx, 1e-15)
	near(t, "unused", vals(t, gs[2]), []float64{0}, 0)
	if x.Grad() != nil {
		t.Fatal("Of touched Grad")
	}
}

func TestBackwardWith(t *testing.T) {
	x := grad.Param(array.FromSlice([]float64{1, 2, 3}))
	y := x.Mul(x) // not a scalar
	if err := y.Backward(); err == nil || !strings.Contains(err.Error(), "BackwardWith") {
		t.Fatalf("Backward of a vector: %v", err)
	}
	if err := y.BackwardWith(array.FromSlice([]float64{1, 0, -1})); err != nil {
		t.Fatal(err)
	}
	near(t, "vjp", vals(t, x.Grad()), []float64{2, 0, -6}, 0)
	if err := x.Mul(2).BackwardWith(array.FromSlice([]float64{1})); err == nil {
		t.Fatal("BackwardWith of the wrong shape succeeded")
	}
}

func TestErrorsPropagate(t *testing.T) {
	x := grad.Param(array.FromSlice([]float64{1, 2, 3}))
	y := x.Add(grad.Param(array.FromSlice([]float64{1, 2})))
	if err := y.Err(); !errors.Is(err, array.ErrShape) {
		t.Fatalf("Err = %v, want ErrShape", err)
	}
	if err := y.Sum().Backward(); !errors.Is(err, array.ErrShape) {
		t.Fatalf("Backward of a failed Var: %v", err)
	}
	if err := (*grad.Var)(nil).Backward(); err == nil {
		t.Fatal("Backward of nil succeeded")
	}
	if err := x.Mul(2).SetValue(array.FromSlice([]float64{1})); err == nil {
		t.Fatal("SetValue of a computed Var succeeded")
	}
}

func TestAsTypeGradient(t *testing.T) {
	x := grad.Param(array.FromSlice([]float64{1, 2}))
	y := x.AsType(array.Float32).Mul(array.FromSlice([]float32{3, 4})).Sum()
	if y.DType() != array.Float32 {
		t.Fatalf("dtype %v", y.DType())
	}
	if err := y.Backward(); err != nil {
		t.Fatal(err)
	}
	if x.Grad().DType() != array.Float64 {
		t.Fatalf("gradient dtype %v, want the parameter's float64", x.Grad().DType())
	}
	near(t, "grad", vals(t, x.Grad()), []float64{3, 4}, 0)
	if x.AsType(array.Int32).RequiresGrad() {
		t.Fatal("conversion to int32 kept history")
	}
	// Mixed precision: a float32 parameter in a float64 computation gets
	// a float32 gradient.
	w := grad.Param(array.FromSlice([]float32{1, 2}))
	if err := w.Mul(array.FromSlice([]float64{0.5, 0.25})).Sum().Backward(); err != nil {
		t.Fatal(err)
	}
	if w.Grad().DType() != array.Float32 {
		t.Fatalf("gradient dtype %v, want float32", w.Grad().DType())
	}
}

// The backward pass of an elementwise chain is itself a pending
// expression: it fuses into one pass when the gradient is read.
func TestBackwardFuses(t *testing.T) {
	x := grad.Param(array.NewRNG(1).Normal(array.Float32, 0, 1, 1000))
	loss := x.Mul(1.5).Add(0.5).Tanh().Mul(x).Sigmoid().Mean()
	if err := loss.Backward(); err != nil {
		t.Fatal(err)
	}
	if !x.Grad().IsLazy() {
		t.Fatal("the gradient of an elementwise chain was evaluated during Backward; it should fuse lazily")
	}
	// And it is right: compare with float64.
	x64 := grad.Param(x.Value().AsType(array.Float64))
	if err := x64.Mul(1.5).Add(0.5).Tanh().Mul(x64).Sigmoid().Mean().Backward(); err != nil {
		t.Fatal(err)
	}
	near(t, "float32 vs float64", vals(t, x.Grad()), vals(t, x64.Grad()), 1e-6)
}

func TestFunc(t *testing.T) {
	cube := func(x *grad.Var) *grad.Var {
		v := x.Value()
		return grad.Func("Cube", v.Mul(v).Mul(v), []*grad.Var{x}, func(g *array.Array) []*array.Array {
			return []*array.Array{g.Mul(v.Square()).Mul(3)}
		})
	}
	x := array.NewRNG(3).Normal(array.Float64, 0, 1, 4)
	if err := grad.Check(func(x ...*grad.Var) *grad.Var { return cube(x[0]) }, []*array.Array{x}, 1e-6); err != nil {
		t.Fatal(err)
	}
	wrong := func(x ...*grad.Var) *grad.Var {
		v := x[0].Value()
		return grad.Func("Wrong", v.Mul(v), x, func(g *array.Array) []*array.Array { return []*array.Array{g} })
	}
	if err := grad.Check(wrong, []*array.Array{x}, 1e-6); err == nil || !strings.Contains(err.Error(), "differs") {
		t.Fatalf("Check of a wrong gradient: %v", err)
	}
}

// A Func whose gradient fails reports that failure from Backward.
func TestFuncFailedGradient(t *testing.T) {
	boom := errors.New("boom")
	x := grad.Param(array.FromSlice([]float64{1, 2}))
	y := grad.Func("Fails", x.Value().Mul(2), []*grad.Var{x}, func(g *array.Array) []*array.Array {
		return []*array.Array{array.Failed(boom)}
	})
	if err := y.Sum().Backward(); !errors.Is(err, boom) || !strings.Contains(err.Error(), "Fails") {
		t.Fatalf("Backward: %v, want the gradient's error naming Fails", err)
	}
}

func TestCheckRejects(t *testing.T) {
	if err := grad.Check(func(x ...*grad.Var) *grad.Var { return x[0] }, nil, 1e-6); err == nil {
		t.Fatal("Check without inputs succeeded")
	}
}
