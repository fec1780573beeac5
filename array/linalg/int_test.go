package linalg

import (
	"testing"

	"github.com/gocu-dev/gocu/array"
)

// Einsum keeps integer dtypes, as numpy.einsum does.
func TestEinsumIntegers(t *testing.T) {
	a := array.FromSliceOn(cpu.Device(), []int64{1, 2, 3, 4, 5, 6}, 2, 3)
	b := array.FromSliceOn(cpu.Device(), []int32{1, 0, 2, 1, 0, 3}, 3, 2)
	y := Einsum("ij,jk->ik", a, b)
	if y.DType() != array.Int64 {
		t.Fatalf("dtype %v, want int64", y.DType())
	}
	got, err := y.Int64s()
	if err != nil {
		t.Fatal(err)
	}
	want := []int64{5, 11, 14, 23}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("got %v, want %v", got, want)
		}
	}
	if tr, _ := Einsum("ii", array.FromSliceOn(cpu.Device(), []int32{1, 2, 3, 4}, 2, 2)).Int64s(); len(tr) != 1 || tr[0] != 5 {
		t.Errorf("trace %v", tr)
	}
}
