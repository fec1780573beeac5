package linalg

import (
	"errors"
	"strings"
	"testing"

	"github.com/gocu-dev/gocu/array"
)

// refEinsum evaluates explicit letter subscripts ("ij,jk->ik") by brute
// force over every assignment of the labels, in float64.
func refEinsum(subs string, data [][]float64, shapes [][]int) ([]float64, []int) {
	lhs, out, _ := strings.Cut(subs, "->")
	ins := strings.Split(lhs, ",")
	size := map[byte]int{}
	var labels []byte
	for i, in := range ins {
		for j := range len(in) {
			if _, ok := size[in[j]]; !ok {
				labels = append(labels, in[j])
			}
			size[in[j]] = max(size[in[j]], shapes[i][j])
		}
	}
	oshape := make([]int, len(out))
	for i := range len(out) {
		oshape[i] = size[out[i]]
	}
	res := make([]float64, prod(oshape))
	idx := map[byte]int{}
	var walk func(k int)
	walk = func(k int) {
		if k == len(labels) {
			p := 1.0
			for i, in := range ins {
				off := 0
				for j := range len(in) {
					d := idx[in[j]]
					if shapes[i][j] == 1 {
						d = 0
					}
					off = off*shapes[i][j] + d
				}
				p *= data[i][off]
			}
			o := 0
			for j := range len(out) {
				o = o*oshape[j] + idx[out[j]]
			}
			res[o] += p
			return
		}
		for v := range size[labels[k]] {
			idx[labels[k]] = v
			walk(k + 1)
		}
	}
	walk(0)
	return res, oshape
}

func TestEinsum(t *testing.T) {
	for _, c := range []struct {
		subs   string // run
		ref    string // the explicit letter form for refEinsum
		shapes [][]int
	}{
		{"ij,jk->ik", "", [][]int{{3, 4}, {4, 5}}},
		{"ij,jk", "ij,jk->ik", [][]int{{3, 4}, {4, 5}}},
		{"bhqd,bhkd->bhqk", "", [][]int{{2, 3, 5, 4}, {2, 3, 6, 4}}},
		{"ii->i", "", [][]int{{4, 4}}},
		{"ii", "ii->", [][]int{{4, 4}}},
		{"ij->", "", [][]int{{3, 4}}},
		{"ij->ji", "", [][]int{{3, 4}}},
		{"i,j->ij", "", [][]int{{3}, {4}}},
		{"ij,ij->ij", "", [][]int{{3, 4}, {3, 4}}},
		{"ij,ij->", "", [][]int{{3, 4}, {3, 4}}},
		{"ij,jk,kl->il", "", [][]int{{2, 3}, {3, 4}, {4, 5}}},
		{"abc,cd,bd->a", "", [][]int{{2, 3, 4}, {4, 5}, {3, 5}}},
		{"...ij,...jk->...ik", "zij,zjk->zik", [][]int{{2, 3, 4}, {2, 4, 5}}},
		{"...ij,jk", "zij,jk->zik", [][]int{{2, 3, 4}, {4, 5}}},
		{"bij,bjk->bik", "", [][]int{{1, 3, 4}, {3, 4, 2}}}, // a size-1 batch broadcasts
		{"iij->j", "", [][]int{{3, 3, 2}}},
		{"ijk,ikj->i", "", [][]int{{2, 3, 4}, {2, 4, 3}}},
	} {
		ref := c.ref
		if ref == "" {
			ref = c.subs
		}
		for _, dt := range dtypes {
			var xs []*array.Array
			var data [][]float64
			for i, s := range c.shapes {
				x := mk(t, dt, randn(uint64(20+i), prod(s)), s...)
				xs = append(xs, x)
				data = append(data, vals(t, x))
			}
			got := Einsum(c.subs, xs...)
			if err := got.Err(); err != nil {
				t.Fatalf("%s %v: %v", c.subs, dt, err)
			}
			want, shape := refEinsum(ref, data, c.shapes)
			if !equalInts(got.Shape(), shape) {
				t.Fatalf("%s: shape %v, want %v", c.subs, got.Shape(), shape)
			}
			if d := maxDiff(vals(t, got), want); d > tol(dt) {
				t.Errorf("%s %v: differs by %.3g", c.subs, dt, d)
			}
		}
	}
}

func equalInts(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestEinsumErrors(t *testing.T) {
	a := mk(t, array.Float32, randn(1, 12), 3, 4)
	b := mk(t, array.Float32, randn(2, 10), 5, 2)
	for subs, xs := range map[string][]*array.Array{
		"ij,jk->ik": {a, b}, // sizes of j differ
		"ij->ik":    {a},    // k is not an input label
		"ijk->i":    {a},    // too many labels
		"ij,jk":     {a},    // too few operands
		"i1->i":     {a},    // not a letter
		"ij->ii":    {a},    // repeated output label
		"..i.->i":   {a},    // a bad ellipsis
	} {
		if err := Einsum(subs, xs...).Err(); err == nil {
			t.Errorf("%s: no error", subs)
		} else if !errors.Is(err, array.ErrShape) && !errors.Is(err, array.ErrValue) {
			t.Errorf("%s: %v matches neither ErrShape nor ErrValue", subs, err)
		}
	}
	if err := Einsum("ij").Err(); !errors.Is(err, array.ErrValue) {
		t.Errorf("no operands: %v", err)
	}
}

func TestProducts(t *testing.T) {
	a := mk(t, array.Float64, randn(30, 2*3*4), 2, 3, 4)
	b := mk(t, array.Float64, randn(31, 4*3*5), 4, 3, 5)
	av, bv := vals(t, a), vals(t, b)

	td := Tensordot(a, b, []int{1, 2}, []int{1, 0})
	want, _ := refEinsum("ajk,kjb->ab", [][]float64{av, bv}, [][]int{{2, 3, 4}, {4, 3, 5}})
	if d := maxDiff(vals(t, td), want); d > 1e-12 || !equalInts(td.Shape(), []int{2, 5}) {
		t.Errorf("Tensordot %v differs by %.3g", td.Shape(), d)
	}
	if err := Tensordot(a, b, []int{0}, []int{0}).Err(); !errors.Is(err, array.ErrShape) {
		t.Errorf("Tensordot size mismatch: %v", err)
	}

	c := mk(t, array.Float64, randn(32, 5*4), 5, 4)
	in := Inner(a, c)
	want, _ = refEinsum("ijk,lk->ijl", [][]float64{av, vals(t, c)}, [][]int{{2, 3, 4}, {5, 4}})
	if d := maxDiff(vals(t, in), want); d > 1e-12 || !equalInts(in.Shape(), []int{2, 3, 5}) {
		t.Errorf("Inner %v differs by %.3g", in.Shape(), d)
	}

	out := Outer(a, c)
	cv := vals(t, c)
	ov := vals(t, out)
	if !equalInts(out.Shape(), []int{24, 20}) || ov[7*20+13] != av[7]*cv[13] {
		t.Errorf("Outer %v", out.Shape())
	}

	vd := vals(t, Vdot(a, mk(t, array.Float64, randn(33, 24), 4, 6)))
	w := vals(t, mk(t, array.Float64, randn(33, 24), 24))
	s := 0.0
	for i := range av {
		s += av[i] * w[i]
	}
	if d := maxDiff(vd, []float64{s}); d > 1e-12 {
		t.Errorf("Vdot = %v, want %v", vd, s)
	}
	if err := Vdot(a, c).Err(); !errors.Is(err, array.ErrShape) {
		t.Errorf("Vdot sizes: %v", err)
	}

	k1 := mk(t, array.Float64, []float64{1, 2, 3, 4}, 2, 2)
	k2 := mk(t, array.Float64, []float64{0, 5, 6, 7, 1, 1}, 2, 3)
	kr := Kron(k1, k2)
	wantK := []float64{
		0, 5, 6, 0, 10, 12,
		7, 1, 1, 14, 2, 2,
		0, 15, 18, 0, 20, 24,
		21, 3, 3, 28, 4, 4,
	}
	if d := maxDiff(vals(t, kr), wantK); d != 0 || !equalInts(kr.Shape(), []int{4, 6}) {
		t.Errorf("Kron %v = %v", kr.Shape(), vals(t, kr))
	}
	if s := Kron(mk(t, array.Float64, []float64{1, 2}, 2), k2).Shape(); !equalInts(s, []int{2, 6}) {
		t.Errorf("Kron of 1-D and 2-D: %v", s)
	}
}

func TestExplicitEinsum(t *testing.T) {
	a := mk(t, array.Float64, randn(1, 24), 2, 3, 4)
	b := mk(t, array.Float64, randn(2, 20), 4, 5)
	for subs, want := range map[string]string{
		"...ij,jk":     "Aij,jk->Aik",
		"aij,jk":       "aij,jk->aik",
		"ijk,kl->li":   "ijk,kl->li",
		"...k,kl->...": "ABk,kl->AB",
	} {
		got, err := ExplicitEinsum(subs, a, b)
		if err != nil || got != want {
			t.Errorf("%s: %q %v, want %q", subs, got, err, want)
		}
		if d := maxDiff(vals(t, Einsum(got, a, b)), vals(t, Einsum(subs, a, b))); d != 0 {
			t.Errorf("%s and %s differ by %.3g", subs, got, d)
		}
	}
	if _, err := ExplicitEinsum("ij->k", a); err == nil {
		t.Error("bad subscripts: no error")
	}
}
