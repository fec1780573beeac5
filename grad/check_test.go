package grad_test

import (
	"fmt"
	"testing"

	"github.com/gocu-dev/gocu/array"
	"github.com/gocu-dev/gocu/grad"
)

// input draws a float64 array: normal, or uniform in [lo, hi) when given.
type input struct {
	shape  []int
	lo, hi float64 // uniform when lo < hi, else normal
}

func in(shape ...int) input { return input{shape: shape} }

func pos(shape ...int) input { return input{shape: shape, lo: 0.5, hi: 2} }

func (i input) draw(d *array.Maker, seed uint64) *array.Array {
	r := d.NewRNG(seed)
	if i.lo < i.hi {
		return r.Uniform(array.Float64, i.lo, i.hi, i.shape...)
	}
	return r.Normal(array.Float64, 0, 1, i.shape...)
}

type gradCase struct {
	name string
	f    func(x ...*grad.Var) *grad.Var
	in   []input
}

// checkAll runs grad.Check on every case, on every device.
func checkAll(t *testing.T, cases []gradCase) {
	t.Helper()
	for dname, d := range devices(t) {
		for ci, c := range cases {
			t.Run(dname+"/"+c.name, func(t *testing.T) {
				xs := make([]*array.Array, len(c.in))
				for i, s := range c.in {
					xs[i] = s.draw(d, uint64(100*ci+i+1))
				}
				if err := grad.Check(c.f, xs, 1e-6); err != nil {
					t.Fatal(err)
				}
			})
		}
	}
}

func TestGradElementwise(t *testing.T) {
	u := func(f func(v *grad.Var) *grad.Var) func(x ...*grad.Var) *grad.Var {
		return func(x ...*grad.Var) *grad.Var { return f(x[0]) }
	}
	cases := []gradCase{
		{"Neg", u((*grad.Var).Neg), []input{in(3, 4)}},
		{"Abs", u((*grad.Var).Abs), []input{in(3, 4)}},
		{"Square", u((*grad.Var).Square), []input{in(3, 4)}},
		{"Reciprocal", u((*grad.Var).Reciprocal), []input{pos(3, 4)}},
		{"Sqrt", u((*grad.Var).Sqrt), []input{pos(3, 4)}},
		{"Exp", u((*grad.Var).Exp), []input{in(3, 4)}},
		{"Exp2", u((*grad.Var).Exp2), []input{in(3, 4)}},
		{"Expm1", u((*grad.Var).Expm1), []input{in(3, 4)}},
		{"Log", u((*grad.Var).Log), []input{pos(3, 4)}},
		{"Log2", u((*grad.Var).Log2), []input{pos(3, 4)}},
		{"Log10", u((*grad.Var).Log10), []input{pos(3, 4)}},
		{"Log1p", u((*grad.Var).Log1p), []input{pos(3, 4)}},
		{"Sin", u((*grad.Var).Sin), []input{in(3, 4)}},
		{"Cos", u((*grad.Var).Cos), []input{in(3, 4)}},
		{"Tan", u((*grad.Var).Tan), []input{{shape: []int{3, 4}, lo: -1, hi: 1}}},
		{"Tanh", u((*grad.Var).Tanh), []input{in(3, 4)}},
		{"Sigmoid", u((*grad.Var).Sigmoid), []input{in(3, 4)}},
		{"ReLU", u((*grad.Var).ReLU), []input{in(3, 4)}},
		{"Clip", u(func(v *grad.Var) *grad.Var { return v.Clip(-0.5, 0.7) }), []input{in(4, 5)}},
		{"chain", u(func(v *grad.Var) *grad.Var { return v.Mul(1.5).Add(0.5).Tanh().Mul(v).Exp() }), []input{in(3, 4)}},
		{"reuse", u(func(v *grad.Var) *grad.Var { return v.Mul(v).Add(v.Sin().Mul(v)) }), []input{in(5)}},
		{"Add", func(x ...*grad.Var) *grad.Var { return x[0].Add(x[1]) }, []input{in(3, 4), in(4)}},
		{"Add/both broadcast", func(x ...*grad.Var) *grad.Var { return x[0].Add(x[1]) }, []input{in(2, 1, 4), in(3, 1)}},
		{"Sub", func(x ...*grad.Var) *grad.Var { return x[0].Sub(x[1]) }, []input{in(3, 1), in(1, 4)}},
		{"Mul", func(x ...*grad.Var) *grad.Var { return x[0].Mul(x[1]) }, []input{in(2, 3, 4), in(3, 1)}},
		{"Div", func(x ...*grad.Var) *grad.Var { return x[0].Div(x[1]) }, []input{in(3, 4), pos(4)}},
		{"Pow", func(x ...*grad.Var) *grad.Var { return x[0].Pow(x[1]) }, []input{pos(3, 4), in(3, 4)}},
		{"Pow/scalar", u(func(v *grad.Var) *grad.Var { return v.Pow(3) }), []input{in(3, 4)}},
		{"Pow/float scalar", u(func(v *grad.Var) *grad.Var { return v.Pow(2.5) }), []input{pos(3, 4)}},
		{"Maximum", func(x ...*grad.Var) *grad.Var { return x[0].Maximum(x[1]) }, []input{in(3, 4), in(4)}},
		{"Minimum", func(x ...*grad.Var) *grad.Var { return x[0].Minimum(x[1]) }, []input{in(3, 1), in(3, 4)}},
		{"scalar operands", u(func(v *grad.Var) *grad.Var { return v.Sub(1).Div(3).Mul(-2).Add(0.25) }), []input{in(2, 3)}},
		{"array constant", u(func(v *grad.Var) *grad.Var {
			c := array.On(v.Value().Device()).Arange(array.Float64, 1, 5)
			return v.Mul(c).Div(c.Add(1)).Add(c).Mul(v).Sub(c)
		}), []input{in(3, 4)}},
		{"Where", func(x ...*grad.Var) *grad.Var {
			return grad.Where(x[0].Value().Gt(0), x[1], x[2])
		}, []input{in(3, 4), in(3, 4), in(4)}},
		{"Mod", func(x ...*grad.Var) *grad.Var { return x[0].Mod(x[1]) }, []input{in(3, 4), pos(4)}},
		{"Mod/scalar", u(func(v *grad.Var) *grad.Var { return v.Mod(0.75) }), []input{in(3, 4)}},
		{"FloorDiv", func(x ...*grad.Var) *grad.Var { return x[0].FloorDiv(x[1]).Add(x[0]) }, []input{in(3, 4), pos(4)}},
		{"Arcsin", u((*grad.Var).Arcsin), []input{{shape: []int{3, 4}, lo: -0.9, hi: 0.9}}},
		{"Arccos", u((*grad.Var).Arccos), []input{{shape: []int{3, 4}, lo: -0.9, hi: 0.9}}},
		{"Arctan", u((*grad.Var).Arctan), []input{in(3, 4)}},
		{"Sinh", u((*grad.Var).Sinh), []input{in(3, 4)}},
		{"Cosh", u((*grad.Var).Cosh), []input{in(3, 4)}},
		{"Arcsinh", u((*grad.Var).Arcsinh), []input{in(3, 4)}},
		{"Arccosh", u((*grad.Var).Arccosh), []input{{shape: []int{3, 4}, lo: 1.2, hi: 3}}},
		{"Arctanh", u((*grad.Var).Arctanh), []input{{shape: []int{3, 4}, lo: -0.9, hi: 0.9}}},
		{"Erf", u((*grad.Var).Erf), []input{in(3, 4)}},
		{"Erfc", u((*grad.Var).Erfc), []input{in(3, 4)}},
		{"Deg2Rad", u((*grad.Var).Deg2Rad), []input{in(3, 4)}},
		{"Rad2Deg", u((*grad.Var).Rad2Deg), []input{in(3, 4)}},
		{"Arctan2", func(x ...*grad.Var) *grad.Var { return x[0].Arctan2(x[1]) }, []input{in(3, 4), in(4)}},
		{"Arctan2/scalar", u(func(v *grad.Var) *grad.Var { return v.Arctan2(-1.5) }), []input{in(3, 4)}},
		{"Arctan2/scalar y", u(func(v *grad.Var) *grad.Var {
			return grad.Const(array.On(v.Value().Device()).Full(array.Float64, 0.7, 3, 4)).Arctan2(v)
		}), []input{in(3, 4)}},
		{"Hypot", func(x ...*grad.Var) *grad.Var { return x[0].Hypot(x[1]) }, []input{in(3, 1), in(3, 4)}},
		{"Hypot/scalar", u(func(v *grad.Var) *grad.Var { return v.Hypot(2) }), []input{in(3, 4)}},
		{"Copysign", func(x ...*grad.Var) *grad.Var { return x[0].Copysign(x[1]).Mul(x[1]) }, []input{in(3, 4), in(3, 4)}},
		{"Where/scalar", func(x ...*grad.Var) *grad.Var {
			return grad.Where(x[0].Value().Gt(0), x[0], 0)
		}, []input{in(3, 4)}},
	}
	checkAll(t, cases)
}

func TestGradReductions(t *testing.T) {
	red := func(op array.ReduceOp, keep bool, axes ...int) func(x ...*grad.Var) *grad.Var {
		return func(x ...*grad.Var) *grad.Var { return x[0].Reduce(op, keep, axes...) }
	}
	var cases []gradCase
	for _, op := range []array.ReduceOp{array.OpSum, array.OpMean, array.OpProd, array.OpMax, array.OpMin} {
		for _, keep := range []bool{false, true} {
			for _, axes := range [][]int{nil, {0}, {1}, {-1}, {0, 2}, {2, 1}} {
				cases = append(cases, gradCase{fmt.Sprintf("%v/keep=%v/axes=%v", op, keep, axes), red(op, keep, axes...), []input{in(2, 3, 4)}})
			}
		}
	}
	cases = append(cases,
		gradCase{"Sum/0-d", func(x ...*grad.Var) *grad.Var { return x[0].Sum().Sum() }, []input{in(3)}},
		gradCase{"Prod/one zero", func(x ...*grad.Var) *grad.Var {
			z := array.FromSliceOn(x[0].Value().Device(), []float64{1, 0, 1, 1, 1, 1}, 2, 3)
			return x[0].Mul(z).Prod(1)
		}, []input{in(2, 3)}},
		gradCase{"Prod/two zeros", func(x ...*grad.Var) *grad.Var {
			z := array.FromSliceOn(x[0].Value().Device(), []float64{1, 0, 0, 1, 1, 1}, 2, 3)
			return x[0].Mul(z).Prod(1)
		}, []input{in(2, 3)}},
	)
	for _, ax := range []int{0, 1, -1} {
		cases = append(cases,
			gradCase{fmt.Sprintf("Softmax/%d", ax), func(x ...*grad.Var) *grad.Var { return x[0].Softmax(ax) }, []input{in(3, 5)}},
			gradCase{fmt.Sprintf("LogSoftmax/%d", ax), func(x ...*grad.Var) *grad.Var { return x[0].LogSoftmax(ax) }, []input{in(3, 5)}},
			gradCase{fmt.Sprintf("LogSumExp/%d", ax), func(x ...*grad.Var) *grad.Var { return x[0].LogSumExp(ax) }, []input{in(3, 5)}},
		)
	}
	cases = append(cases, gradCase{"LogSumExp/1-d", func(x ...*grad.Var) *grad.Var { return x[0].LogSumExp(0) }, []input{in(6)}})
	checkAll(t, cases)
}

func TestGradMatMul(t *testing.T) {
	mm := func(x ...*grad.Var) *grad.Var { return x[0].MatMul(x[1]) }
	checkAll(t, []gradCase{
		{"2-D", mm, []input{in(3, 4), in(4, 5)}},
		{"batched", mm, []input{in(2, 3, 4), in(2, 4, 5)}},
		{"broadcast b", mm, []input{in(2, 3, 4), in(4, 5)}},
		{"broadcast a", mm, []input{in(3, 4), in(2, 4, 5)}},
		{"broadcast both", mm, []input{in(2, 1, 3, 4), in(3, 4, 2)}},
		{"vector a", mm, []input{in(4), in(4, 5)}},
		{"vector b", mm, []input{in(3, 4), in(4)}},
		{"dot", mm, []input{in(4), in(4)}},
		{"batched vector b", mm, []input{in(2, 3, 4), in(4)}},
		{"transposed operands", func(x ...*grad.Var) *grad.Var { return x[0].T().MatMul(x[1].T()) }, []input{in(4, 3), in(5, 4)}},
		{"batched transposed", func(x ...*grad.Var) *grad.Var { return x[0].SwapAxes(-1, -2).MatMul(x[1]) }, []input{in(2, 4, 3), in(4, 5)}},
		{"constant b", func(x ...*grad.Var) *grad.Var {
			return x[0].MatMul(array.On(x[0].Value().Device()).NewRNG(9).Normal(array.Float64, 0, 1, 4, 2))
		}, []input{in(3, 4)}},
	})
}

func TestGradViews(t *testing.T) {
	u := func(f func(v *grad.Var) *grad.Var) func(x ...*grad.Var) *grad.Var {
		return func(x ...*grad.Var) *grad.Var { return f(x[0]).Mul(f(x[0])) } // nonlinear, so positions matter
	}
	checkAll(t, []gradCase{
		{"Reshape", u(func(v *grad.Var) *grad.Var { return v.Reshape(4, -1) }), []input{in(2, 3, 2)}},
		{"Ravel", u((*grad.Var).Ravel), []input{in(2, 3)}},
		{"Flatten", u((*grad.Var).Flatten), []input{in(2, 3)}},
		{"Transpose", u(func(v *grad.Var) *grad.Var { return v.Transpose(1, 2, 0) }), []input{in(2, 3, 4)}},
		{"T", func(x ...*grad.Var) *grad.Var { return x[0].T().Mul(x[1]) }, []input{in(2, 3, 4), in(4, 3, 2)}},
		{"Permute", func(x ...*grad.Var) *grad.Var { return x[0].Transpose(2, 0, 1).Mul(x[1]) }, []input{in(2, 3, 4), in(4, 2, 3)}},
		{"SwapAxes", func(x ...*grad.Var) *grad.Var { return x[0].SwapAxes(0, 2).Mul(x[1]) }, []input{in(2, 3, 4), in(4, 3, 2)}},
		{"MoveAxis", func(x ...*grad.Var) *grad.Var { return x[0].MoveAxis(0, 2).Mul(x[1]) }, []input{in(2, 3, 4), in(3, 4, 2)}},
		{"Squeeze", u(func(v *grad.Var) *grad.Var { return v.Squeeze(1) }), []input{in(3, 1, 2)}},
		{"ExpandDims", func(x ...*grad.Var) *grad.Var { return x[0].ExpandDims(1).Mul(x[1]) }, []input{in(3, 2), in(3, 4, 2)}},
		{"BroadcastTo", func(x ...*grad.Var) *grad.Var { return x[0].BroadcastTo(2, 3, 4).Mul(x[1]) }, []input{in(3, 1), in(2, 3, 4)}},
		{"Contiguous", u(func(v *grad.Var) *grad.Var { return v.T().Contiguous() }), []input{in(3, 4)}},
		{"Copy", u((*grad.Var).Copy), []input{in(3, 4)}},
		{"Slice/steps", func(x ...*grad.Var) *grad.Var {
			return x[0].Slice(array.S(0, 5, 2), array.S(array.None, array.None, -1)).Mul(x[1])
		}, []input{in(5, 4), in(3, 4)}},
		{"Slice/Idx NewAxis Ellipsis", func(x ...*grad.Var) *grad.Var {
			return x[0].Slice(array.Ellipsis, array.Idx(1), array.NewAxis).Mul(x[0].Slice(array.Idx(-1)).ExpandDims(0))
		}, []input{in(3, 4)}},
		{"Slice/twice", func(x ...*grad.Var) *grad.Var {
			return x[0].Slice(array.S(1, 3)).Add(x[0].Slice(array.S(0, 2))).Square()
		}, []input{in(4, 3)}},
		{"At", func(x ...*grad.Var) *grad.Var { return x[0].At(1, 2).Mul(x[0]) }, []input{in(3, 4)}},
		{"Concat", func(x ...*grad.Var) *grad.Var { return grad.Concat(1, x[0], x[1], x[0]).Square() }, []input{in(2, 3), in(2, 1)}},
		{"Stack", func(x ...*grad.Var) *grad.Var { return grad.Stack(-1, x[0], x[1]).Square() }, []input{in(2, 3), in(2, 3)}},
	})
}
