package grad_test

import (
	"fmt"

	"github.com/gocu-dev/gocu/array"
	"github.com/gocu-dev/gocu/grad"
)

func Example() {
	// Fit y = 2x + 1 by gradient descent.
	x := grad.Const(array.FromSlice([]float64{0, 1, 2, 3}))
	y := array.FromSlice([]float64{1, 3, 5, 7})
	w := grad.Param(array.Zeros(array.Float64, 1))
	b := grad.Param(array.Zeros(array.Float64, 1))
	for range 500 {
		loss := x.Mul(w).Add(b).Sub(y).Square().Mean()
		if err := loss.Backward(); err != nil {
			fmt.Println(err)
			return
		}
		grad.NoGrad(func() {
			w.Value().Assign(w.Value().Sub(w.Grad().Mul(0.1)))
			b.Value().Assign(b.Value().Sub(b.Grad().Mul(0.1)))
		})
		w.ZeroGrad()
		b.ZeroGrad()
	}
	fmt.Printf("w = %.4v, b = %.4v\n", w.Value(), b.Value())
	// Output: w = [2.], b = [1.]
}

func ExampleOf() {
	x := grad.Param(array.FromSlice([]float64{1, 2, 3}))
	y := x.Square().Sum() // y = Σx², dy/dx = 2x
	g, err := grad.Of(y, x)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(g[0])
	// Output: [2. 4. 6.]
}

func ExampleVar_Backward() {
	x := grad.Param(array.FromSlice([]float64{0.5, -1, 2}))
	loss := x.ReLU().Mul(x).Sum() // Σ relu(x)·x
	if err := loss.Backward(); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(x.Grad()) // 2x where x > 0, else 0
	// Output: [1. 0. 4.]
}

func ExampleCheck() {
	f := func(x ...*grad.Var) *grad.Var { return x[0].MatMul(x[1]).Softmax(-1) }
	a := array.NewRNG(1).Normal(array.Float64, 0, 1, 3, 4)
	b := array.NewRNG(2).Normal(array.Float64, 0, 1, 4, 5)
	fmt.Println(grad.Check(f, []*array.Array{a, b}, 1e-6))
	// Output: <nil>
}

func ExampleNoGrad() {
	w := grad.Param(array.FromSlice([]float64{1, 2}))
	var y *grad.Var
	grad.NoGrad(func() { y = w.Mul(3) }) // evaluation: no history kept
	fmt.Println(y.RequiresGrad(), w.Mul(3).RequiresGrad())
	// Output: false true
}
