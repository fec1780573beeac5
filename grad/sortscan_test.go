package grad_test

import (
	"testing"

	"github.com/gocu-dev/gocu/array"
	"github.com/gocu-dev/gocu/grad"
)

func TestGradSortScan(t *testing.T) {
	cases := []gradCase{
		{"Sort last", func(x ...*grad.Var) *grad.Var { return x[0].Sort(-1) }, []input{in(4, 9)}},
		{"Sort axis 0", func(x ...*grad.Var) *grad.Var { return x[0].Sort(0) }, []input{in(5, 3, 2)}},
		{"TopK largest", func(x ...*grad.Var) *grad.Var { v, _ := x[0].TopK(3, true); return v }, []input{in(4, 10)}},
		{"TopK smallest", func(x ...*grad.Var) *grad.Var { v, _ := x[0].TopK(4, false); return v }, []input{in(2, 3, 7)}},
		{"TopK all", func(x ...*grad.Var) *grad.Var { v, _ := x[0].TopK(6, true); return v }, []input{in(6)}},
		{"Cumsum 0", func(x ...*grad.Var) *grad.Var { return x[0].Cumsum(0) }, []input{in(5, 4)}},
		{"Cumsum -1", func(x ...*grad.Var) *grad.Var { return x[0].Cumsum(-1) }, []input{in(3, 4, 6)}},
		{"Cumprod 1", func(x ...*grad.Var) *grad.Var { return x[0].Cumprod(1) }, []input{in(3, 6)}},
		{"Cumprod 0", func(x ...*grad.Var) *grad.Var { return x[0].Cumprod(0) }, []input{pos(6, 2)}},
		{"Var all", func(x ...*grad.Var) *grad.Var { return x[0].Var(0) }, []input{in(4, 5)}},
		{"Var axes ddof 1", func(x ...*grad.Var) *grad.Var { return x[0].Var(1, 0, 2) }, []input{in(3, 4, 5)}},
		{"Std axis", func(x ...*grad.Var) *grad.Var { return x[0].Std(1, -1) }, []input{in(4, 6)}},
		{"Std all", func(x ...*grad.Var) *grad.Var { return x[0].Std(0) }, []input{in(7)}},
	}
	checkAll(t, cases)
}

// TestGradCumprodZeros: the cumulative product's gradient with zeros in
// the rows (one zero, two zeros, a zero first and last) is exact.
func TestGradCumprodZeros(t *testing.T) {
	for name, d := range devices(t) {
		x := d.NewRNG(7).Normal(array.Float64, 0, 1, 4, 6)
		mask := array.FromSliceOn(d.Device(), []bool{
			false, false, true, false, false, false,
			false, true, false, false, true, false,
			true, false, false, false, false, true,
			false, false, false, false, false, false}, 4, 6)
		xz := array.Where(mask, 0.0, x)
		f := func(v ...*grad.Var) *grad.Var { return v[0].Cumprod(1) }
		if err := grad.Check(f, []*array.Array{xz}, 1e-6); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
}
