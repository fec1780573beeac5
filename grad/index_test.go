package grad_test

import (
	"testing"

	"github.com/gocu-dev/gocu/array"
	"github.com/gocu-dev/gocu/grad"
)

// TestGradIndexing checks the gradients of the gathers and scatter-adds
// against finite differences in float64; the indices repeat, so the
// scatter-add of the backward pass accumulates.
func TestGradIndexing(t *testing.T) {
	ints := func(x *grad.Var, v []int64, shape ...int) *array.Array {
		return array.FromSliceOn(x.Value().Device(), v, shape...)
	}
	bools := func(x *grad.Var, v []bool, shape ...int) *array.Array {
		return array.FromSliceOn(x.Value().Device(), v, shape...)
	}
	checkAll(t, []gradCase{
		{"Take", func(x ...*grad.Var) *grad.Var {
			return x[0].Take(ints(x[0], []int64{2, 0, 2, -1, 1, 2}, 2, 3), 1).Square()
		}, []input{in(3, 4)}},
		{"IndexSelect", func(x ...*grad.Var) *grad.Var {
			return x[0].IndexSelect(0, ints(x[0], []int64{1, 1, 0}, 3)).Mul(x[1])
		}, []input{in(2, 5), in(3, 5)}},
		{"TakeAlongAxis", func(x ...*grad.Var) *grad.Var {
			return x[0].TakeAlongAxis(ints(x[0], []int64{0, 0, 2, 1, 1, 1}, 3, 2), 1).Square()
		}, []input{in(3, 3)}},
		{"TakeAlongAxis/broadcast", func(x ...*grad.Var) *grad.Var {
			return x[0].TakeAlongAxis(ints(x[0], []int64{0, 2, 2, 1}, 4, 1), 1).Mul(x[1])
		}, []input{in(1, 3), in(4, 1)}},
		{"Fancy", func(x ...*grad.Var) *grad.Var {
			return x[0].Slice(array.Fancy(ints(x[0], []int64{0, 2, 0}, 3)), array.S(1, 3), array.Fancy(ints(x[0], []int64{1, 1, 0}, 3))).Square()
		}, []input{in(3, 4, 2)}},
		{"Mask", func(x ...*grad.Var) *grad.Var {
			return x[0].Mask(bools(x[0], []bool{true, false, true, true, false, true}, 2, 3)).Square()
		}, []input{in(2, 3, 2)}},
		{"IndexAdd", func(x ...*grad.Var) *grad.Var {
			return x[0].IndexAdd(1, ints(x[0], []int64{0, 2, 0}, 3), x[1]).Square()
		}, []input{in(2, 3), in(2, 3)}},
		{"ScatterAdd", func(x ...*grad.Var) *grad.Var {
			return x[0].ScatterAdd(0, ints(x[0], []int64{1, 0, 1, 1, 1, 0}, 2, 3), x[1]).Square()
		}, []input{in(2, 3), in(2, 3)}},
	})
}
