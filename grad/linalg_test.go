package grad_test

import (
	"testing"

	"github.com/gocu-dev/gocu/array"
	"github.com/gocu-dev/gocu/array/linalg"
	"github.com/gocu-dev/gocu/grad"
)

// wellConditioned draws n×n matrices (a batch shape before) with a strong
// diagonal.
func wellConditioned(d *array.Maker, seed uint64, shape ...int) *array.Array {
	n := shape[len(shape)-1]
	return d.NewRNG(seed).Normal(array.Float64, 0, 1, shape...).Add(d.Eye(array.Float64, n).Mul(float64(n)))
}

// spdOn draws symmetric positive definite matrices X·Xᵀ + n·I.
func spdOn(d *array.Maker, seed uint64, shape ...int) *array.Array {
	n := shape[len(shape)-1]
	x := d.NewRNG(seed).Normal(array.Float64, 0, 1, shape...)
	return x.MatMul(x.SwapAxes(-1, -2)).Add(d.Eye(array.Float64, n).Mul(float64(n)))
}

func TestGradEinsum(t *testing.T) {
	cases := []struct {
		subs   string
		shapes [][]int
	}{
		{"ij,jk->ik", [][]int{{3, 4}, {4, 2}}},
		{"bij,bjk->bik", [][]int{{2, 3, 4}, {2, 4, 2}}},
		{"bhqd,bhkd->bhqk", [][]int{{2, 2, 3, 4}, {2, 2, 5, 4}}},
		{"ii->i", [][]int{{4, 4}}},
		{"iji->j", [][]int{{3, 2, 3}}},
		{"ij->", [][]int{{3, 4}}},
		{"ijk->ik", [][]int{{2, 3, 4}}},
		{"i,j->ij", [][]int{{3}, {4}}},
		{"ij,ij->", [][]int{{3, 4}, {3, 4}}},
		{"...ij,jk", [][]int{{2, 3, 4}, {4, 2}}},
		{"abc,cd,bd->a", [][]int{{2, 3, 4}, {4, 5}, {3, 5}}},
		{"ij,jk", [][]int{{3, 4}, {4, 2}}},
	}
	for dname, d := range devices(t) {
		for ci, c := range cases {
			xs := make([]*array.Array, len(c.shapes))
			for i, s := range c.shapes {
				xs[i] = d.NewRNG(uint64(10*ci+i+1)).Normal(array.Float64, 0, 1, s...)
			}
			f := func(v ...*grad.Var) *grad.Var { return grad.Einsum(c.subs, v...) }
			if err := grad.Check(f, xs, 1e-6); err != nil {
				t.Errorf("%s %s: %v", dname, c.subs, err)
			}
		}
	}
}

func TestGradLinalg(t *testing.T) {
	for dname, d := range devices(t) {
		for name, c := range map[string]struct {
			f  func(x ...*grad.Var) *grad.Var
			xs []*array.Array
		}{
			"Solve matrix": {func(x ...*grad.Var) *grad.Var { return grad.Solve(x[0], x[1]) },
				[]*array.Array{wellConditioned(d, 1, 4, 4), d.NewRNG(2).Normal(array.Float64, 0, 1, 4, 3)}},
			"Solve vector": {func(x ...*grad.Var) *grad.Var { return grad.Solve(x[0], x[1]) },
				[]*array.Array{wellConditioned(d, 3, 2, 4, 4), d.NewRNG(4).Normal(array.Float64, 0, 1, 4)}},
			"Solve constant b": {func(x ...*grad.Var) *grad.Var { return grad.Solve(x[0], d.Ones(array.Float64, 3, 2)) },
				[]*array.Array{wellConditioned(d, 5, 3, 3)}},
			"Inv": {func(x ...*grad.Var) *grad.Var { return grad.Inv(x[0]) },
				[]*array.Array{wellConditioned(d, 6, 2, 4, 4)}},
			"Slogdet": {func(x ...*grad.Var) *grad.Var { _, l := grad.Slogdet(x[0]); return l },
				[]*array.Array{d.NewRNG(7).Normal(array.Float64, 0, 1, 3, 4, 4)}},
			"Cholesky": {func(x ...*grad.Var) *grad.Var { return grad.Cholesky(x[0]) },
				[]*array.Array{spdOn(d, 8, 2, 4, 4)}},
			"Cholesky of X·Xᵀ": {func(x ...*grad.Var) *grad.Var {
				return grad.Cholesky(x[0].MatMul(x[0].T()).Add(d.Eye(array.Float64, 4)))
			}, []*array.Array{d.NewRNG(9).Normal(array.Float64, 0, 1, 4, 4)}},
			"Eigh values": {func(x ...*grad.Var) *grad.Var { w, _ := grad.Eigh(x[0]); return w },
				[]*array.Array{d.NewRNG(10).Normal(array.Float64, 0, 1, 2, 5, 5)}},
			// V·diag(c)·Vᵀ does not depend on the eigenvectors' signs.
			"Eigh vectors": {func(x ...*grad.Var) *grad.Var {
				_, v := grad.Eigh(x[0])
				c := d.Arange(array.Float64, 1, 6)
				return v.Mul(c).MatMul(v.T())
			}, []*array.Array{d.NewRNG(11).Normal(array.Float64, 0, 1, 5, 5)}},
			"Eigh both": {func(x ...*grad.Var) *grad.Var {
				w, v := grad.Eigh(x[0])
				return v.Mul(w.ExpandDims(-2)).MatMul(v.SwapAxes(-1, -2)).Sum().Add(w.Square().Sum())
			}, []*array.Array{d.NewRNG(12).Normal(array.Float64, 0, 1, 4, 4)}},
		} {
			if err := grad.Check(c.f, c.xs, 1e-6); err != nil {
				t.Errorf("%s %s: %v", dname, name, err)
			}
		}
	}
}

func TestGradNorm(t *testing.T) {
	for dname, d := range devices(t) {
		x := d.NewRNG(20).Normal(array.Float64, 0, 1, 3, 4)
		v := d.NewRNG(21).Normal(array.Float64, 0, 1, 5)
		for name, c := range map[string]struct {
			x    *array.Array
			ord  linalg.Ord
			keep bool
			axes []int
		}{
			"vector default": {v, linalg.Default, false, nil},
			"vector 1":       {v, linalg.P(1), false, nil},
			"vector inf":     {v, linalg.Inf, false, nil},
			"vector -inf":    {v, linalg.NegInf, false, nil},
			"vector 3":       {v, linalg.P(3), false, nil},
			"vector 0.5":     {v, linalg.P(0.5), false, nil},
			"all elements":   {x, linalg.Default, true, nil},
			"rows":           {x, linalg.Default, false, []int{1}},
			"columns keep":   {x, linalg.P(1), true, []int{0}},
			"fro":            {x, linalg.Fro, false, nil},
			"nuc":            {x, linalg.Nuc, false, nil},
			"nuc swapped":    {x, linalg.Nuc, true, []int{1, 0}},
			"spectral":       {x, linalg.P(2), false, nil},
			"spectral -2":    {x, linalg.P(-2), false, []int{1, 0}},
			"matrix 1":       {x, linalg.P(1), false, nil},
			"matrix inf":     {x, linalg.Inf, false, nil},
			"matrix -1":      {x, linalg.P(-1), false, nil},
		} {
			f := func(xs ...*grad.Var) *grad.Var { return grad.Norm(xs[0], c.ord, c.keep, c.axes...) }
			if err := grad.Check(f, []*array.Array{c.x}, 1e-6); err != nil {
				t.Errorf("%s %s: %v", dname, name, err)
			}
			// The value is linalg.Norm's.
			got, err := grad.Norm(grad.Const(c.x), c.ord, c.keep, c.axes...).Value().Float64s()
			want, err2 := linalg.Norm(c.x, c.ord, c.keep, c.axes...).Float64s()
			if err != nil || err2 != nil || len(got) != len(want) {
				t.Fatalf("%s: %v %v", name, err, err2)
			}
			for i := range got {
				if d := got[i] - want[i]; d > 1e-12 || d < -1e-12 {
					t.Errorf("%s %s: value %v, want %v", dname, name, got, want)
					break
				}
			}
		}
	}
}

func TestGradLinalgErrors(t *testing.T) {
	d := array.CPU()
	a := grad.Param(d.Ones(array.Float64, 2, 3))
	if err := grad.Inv(a).Err(); err == nil {
		t.Error("Inv of a 2×3 matrix: no error")
	}
	if err := grad.Einsum("ij,jk->ik", a).Err(); err == nil {
		t.Error("Einsum with a missing operand: no error")
	}
	if err := grad.Solve(grad.Param(d.Eye(array.Float64, 2)), 3).Err(); err == nil {
		t.Error("Solve with a number: no error")
	}
}
