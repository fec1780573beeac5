package linalg

import (
	"testing"

	"github.com/gocu-dev/gocu/array"
)

// FuzzEinsum feeds arbitrary subscripts to Einsum over two small operands:
// it must return a result or an error, never panic, and a result must
// match the brute-force reference on its explicit form.
func FuzzEinsum(f *testing.F) {
	for _, s := range []string{"ij,jk->ik", "ii->i", "...ij,jk", "ij,ij", "i...,j...->...", "ab,ba->", "ij,k", "->", ",", "...,...->...", "a.b,c"} {
		f.Add(s)
	}
	a := array.FromSliceOn(cpu.Device(), randn(1, 9), 3, 3)
	b := array.FromSliceOn(cpu.Device(), randn(2, 9), 3, 3)
	av, bv := randn(1, 9), randn(2, 9)
	f.Fuzz(func(t *testing.T, subs string) {
		if len(subs) > 40 {
			return
		}
		y := Einsum(subs, a, b)
		if y.Err() != nil {
			return
		}
		exp, err := ExplicitEinsum(subs, a, b)
		if err != nil {
			t.Fatalf("%q ran but has no explicit form: %v", subs, err)
		}
		want, shape := refEinsum(exp, [][]float64{av, bv}, [][]int{{3, 3}, {3, 3}})
		if !equalInts(y.Shape(), shape) {
			t.Fatalf("%q (%s): shape %v, want %v", subs, exp, y.Shape(), shape)
		}
		if d := maxDiff(vals(t, y), want); d > 1e-12 {
			t.Fatalf("%q (%s): differs by %.3g", subs, exp, d)
		}
	})
}
