package array

import (
	"cmp"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/gocu-dev/gocu/array/internal/cpu"
)

// radixData draws n float32 values with ties, ±0, ±Inf and NaNs of both
// signs and several payloads; narrow keeps them to a few values, so that
// most radix digits are constant.
func radixData(r *rand.Rand, n int, narrow bool) []float32 {
	v := make([]float32, n)
	for i := range v {
		switch r.IntN(30) {
		case 0:
			v[i] = math.Float32frombits(0x7fc00000 | r.Uint32()&0x3fffff | r.Uint32()&1<<31)
		case 1:
			v[i] = float32(math.Copysign(0, -1))
		case 2:
			v[i] = 0
		case 3:
			v[i] = float32(math.Inf(1 - 2*r.IntN(2)))
		default:
			if narrow {
				v[i] = float32(r.IntN(4))
			} else {
				v[i] = float32(r.NormFloat64() * 100)
			}
		}
	}
	return v
}

// radixRef sorts each row of L values by Sort's order, stably.
func radixRef[T float32 | int32](v []T, L int) []T {
	w := slices.Clone(v)
	for base := 0; base < len(w); base += L {
		slices.SortStableFunc(w[base:base+L], func(a, b T) int {
			return ssOrder(float64(a), float64(b))
		})
	}
	return w
}

// TestSortValuesRadix checks Sort of float32 and int32 values, which
// radix sorts keys alone, at sizes around the points where its path
// changes, with 1, 2 and 4 workers, against a stable reference sort.
func TestSortValuesRadix(t *testing.T) {
	r := newRand(t)
	shapes := [][]int{{1}, {255}, {256}, {257}, {4095}, {4096}, {8191}, {8192}, {8193},
		{65535}, {65536}, {65537}, {3, 65536}, {2, 70001}, {300, 255}, {40, 257}, {5, 1 << 17}}
	for _, workers := range []int{1, 2, 4} {
		be := cpu.New(0)
		be.SetWorkers(workers)
		d := &Maker{be: poisonBackend{be, t}}
		for _, shape := range shapes {
			L := shape[len(shape)-1]
			for _, kind := range []string{"wide", "narrow", "equal"} {
				what := fmt.Sprintf("workers %d %v %s", workers, shape, kind)
				f := radixData(r, prod(shape), kind == "narrow")
				i32 := make([]int32, len(f))
				for j := range i32 {
					i32[j] = r.Int32() - math.MaxInt32/2
					if kind == "narrow" {
						i32[j] = int32(r.IntN(5) - 2)
					}
				}
				if kind == "equal" {
					for j := range f {
						f[j], i32[j] = -1.5, -7
					}
				}
				x := fromTyped(d, f, shape)
				got, err := ToSlice[float32](x.Sort(-1))
				if err != nil {
					t.Fatalf("%s: %v", what, err)
				}
				want := radixRef(f, L)
				for j := range want {
					if !ssSame(float64(got[j]), float64(want[j])) {
						t.Fatalf("%s: float32 element %d is %v, want %v", what, j, got[j], want[j])
					}
				}
				xi := fromTyped(d, i32, shape)
				goti, err := ToSlice[int32](xi.Sort(-1))
				if err != nil {
					t.Fatalf("%s: %v", what, err)
				}
				if wanti := radixRef(i32, L); !slices.Equal(goti, wanti) {
					t.Fatalf("%s: int32 sort differs from the reference", what)
				}
				closeAll(x, xi)
			}
		}
	}
}

// TestUniqueValuesRadix checks Unique of float32 and int32 values (a
// radix sort and a typed pass) against a sorted, deduplicated reference.
func TestUniqueValuesRadix(t *testing.T) {
	r := newRand(t)
	d := &Maker{be: poisonBackend{cpu.New(0), t}}
	for _, n := range []int{1, 255, 256, 70001} {
		f := radixData(r, n, n > 256)
		x := fromTyped(d, f, []int{n})
		got, err := ToSlice[float32](x.Unique())
		if err != nil {
			t.Fatal(err)
		}
		var want []float32
		for _, v := range radixRef(f, n) {
			if v == 0 {
				v = 0 // -0 is +0's value
			}
			if len(want) == 0 || !(v == want[len(want)-1] || v != v && want[len(want)-1] != want[len(want)-1]) {
				want = append(want, v)
			}
		}
		if len(got) != len(want) {
			t.Fatalf("n %d: %d float32 values, want %d", n, len(got), len(want))
		}
		for j := range want {
			if !ssSame(float64(got[j]), float64(want[j])) {
				t.Fatalf("n %d: float32 value %d is %v, want %v", n, j, got[j], want[j])
			}
		}
		i32 := make([]int32, n)
		for j := range i32 {
			i32[j] = int32(r.IntN(1000) - 500)
		}
		xi := fromTyped(d, i32, []int{n})
		goti, err := ToSlice[int32](xi.Unique())
		if err != nil {
			t.Fatal(err)
		}
		wanti := slices.Compact(slices.SortedFunc(slices.Values(i32), cmp.Compare[int32]))
		if !slices.Equal(goti, wanti) {
			t.Fatalf("n %d: int32 unique differs from the reference", n)
		}
		closeAll(x, xi)
	}
}
