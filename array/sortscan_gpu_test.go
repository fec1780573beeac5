package array

import (
	"fmt"
	"math"
	"testing"

	"github.com/gocu-dev/gocu/array/internal/cpu"
)

// TestSortScanLargeGPU compares the GPU with the CPU backend at sizes
// that take many tiles and every radix pass: sorts (keys only, with
// positions, rows, descending), scans of a long line, Unique, searches and
// counts, on fresh random data with ties and NaN, into poisoned outputs.
func TestSortScanLargeGPU(t *testing.T) {
	g := testGPU(t)
	gd := &Maker{be: poisonBackend{g.be, t}, gpu: g.gpu}
	cd := &Maker{be: poisonBackend{CPU().be, t}}
	ssCompareBackends(t, gd, cd, 3<<20+17)
}

// TestSortScanSerialParallel runs the same comparison between the serial
// and the parallel CPU backend (their long-line paths differ).
func TestSortScanSerialParallel(t *testing.T) {
	serial := cpu.New(0)
	serial.SetWorkers(1)
	par := cpu.New(0)
	par.SetWorkers(4)
	ssCompareBackends(t, &Maker{be: poisonBackend{par, t}}, &Maker{be: poisonBackend{serial, t}}, 3<<16+17)
}

// ssCompareBackends compares the results of backend gd with those of cd
// on n-element inputs (and their reshapes into rows).
func ssCompareBackends(t *testing.T, gd, cd *Maker, n int) {
	r := newRand(t)
	for _, dt := range ssDTypes {
		v := ssData(r, dt, n)
		xg, xc := fromTyped(gd, typed(dt, v), []int{n}), fromTyped(cd, typed(dt, v), []int{n})
		rows := 300
		mg, mc := xg.Slice(S(0, n/rows*rows)).Reshape(rows, -1), xc.Slice(S(0, n/rows*rows)).Reshape(rows, -1)
		type pair struct {
			name string
			f    func(x, m *Array) []*Array
		}
		ops := []pair{
			{"Sort", func(x, _ *Array) []*Array { return []*Array{x.Sort(0)} }},
			{"Argsort", func(x, _ *Array) []*Array { return []*Array{x.Argsort(0)} }},
			{"SortRows", func(_, m *Array) []*Array { v, i := m.SortWithIndices(1); return []*Array{v, i} }},
			{"SortRowsKeys", func(_, m *Array) []*Array { return []*Array{m.Sort(1), m.Slice(S(0, 7)).Sort(-1)} }},
			{"SortRowsDescending", func(_, m *Array) []*Array { v, i := m.SortDescending(1); return []*Array{v, i} }},
			{"TopKRows", func(_, m *Array) []*Array { v, i := m.TopK(min(1000, m.Shape()[1]), false); return []*Array{v, i} }},
			{"SortCols", func(_, m *Array) []*Array { return []*Array{m.Argsort(0)} }},
			{"SortDescending", func(x, _ *Array) []*Array { v, i := x.SortDescending(0); return []*Array{v, i} }},
			{"TopK", func(_, m *Array) []*Array { v, i := m.TopK(37, true); return []*Array{v, i} }},
			{"TopKLong", func(x, _ *Array) []*Array { v, i := x.Reshape(1, -1).TopK(100, false); return []*Array{v, i} }},
			{"Unique", func(x, _ *Array) []*Array { a, b, c, d := x.UniqueAll(); return []*Array{a, b, c, d, x.Unique()} }},
			{"SortBy", func(x, _ *Array) []*Array { return []*Array{SortBy(x, x.AsType(Float64).Mul(3), 0)} }},
		}
		// Sums of small integers are exact in any order: float inputs keep
		// their multiples of 1/4 (times 4) and lose their large values.
		ints := func(x *Array) *Array {
			if !dt.IsFloat() {
				return x
			}
			return Where(x.Abs().Gt(10), 1, x).Mul(4)
		}
		if dt != Bool {
			ops = append(ops,
				pair{"Cumsum", func(x, _ *Array) []*Array { return []*Array{ints(x).Cumsum(0)} }},
				pair{"Cummax", func(x, _ *Array) []*Array { return []*Array{x.Cummax(0)} }},
				pair{"CumminRows", func(_, m *Array) []*Array { return []*Array{m.Cummin(1)} }},
				pair{"CumsumCols", func(_, m *Array) []*Array { return []*Array{ints(m).Cumsum(0)} }},
				pair{"SearchSorted", func(x, _ *Array) []*Array {
					s := x.Slice(S(0, n/3)).Sort(0)
					return []*Array{SearchSorted(s, x, false), SearchSorted(s, x, true)}
				}},
			)
		}
		if dt.IsInt() || dt == Bool {
			ops = append(ops, pair{"BincountN", func(x, _ *Array) []*Array {
				return []*Array{x.BincountN(nil, 300), x.BincountN(x.AsType(Float64), 10000)}
			}})
		} else {
			ops = append(ops, pair{"Histogram", func(x, _ *Array) []*Array {
				a, _ := x.Histogram(100, -3, 3)
				b, _ := x.Histogram(5000, -1e3, 1e3)
				return []*Array{a, b}
			}})
		}
		for _, op := range ops {
			what := fmt.Sprintf("%s of %v[%d]", op.name, dt, n)
			got, want := op.f(xg, mg), op.f(xc, mc)
			for k := range want {
				gh, wh := readCase(t, what, got[k]), readCase(t, what, want[k])
				if !sameShape(gh.shape, wh.shape) {
					t.Fatalf("%s result %d: shape %v, want %v", what, k, gh.shape, wh.shape)
				}
				tol := 0.0 // every sum here is of integers, exact in any order
				bad := 0
				for i := range wh.v {
					if !(near(gh.v[i], wh.v[i], tol) || math.IsInf(wh.v[i], 0) && gh.v[i] == wh.v[i]) {
						if bad < 3 {
							t.Errorf("%s result %d: element %d = %v, want %v", what, k, i, gh.v[i], wh.v[i])
						}
						bad++
					}
				}
				if bad > 0 {
					t.Fatalf("%s result %d: %d of %d elements differ", what, k, bad, len(wh.v))
				}
			}
			closeAll(got...)
			closeAll(want...)
		}
		closeAll(xg, xc, mg, mc)
	}
}

// TestSortWideGPU sorts 2^30+3 float32 on the GPU, the size from which
// the sort's look-back statuses are 64-bit, and checks the order and that
// the values are the input's (an order-independent hash). It takes about
// 20 GB of device memory and is skipped with -short.
func TestSortWideGPU(t *testing.T) {
	if testing.Short() {
		t.Skip("sorts 2^30 keys: skipped with -short")
	}
	d := testGPU(t)
	n := 1<<30 + 3
	x := d.NewRNG(3).Normal(Float32, 0, 1, n).Eval()
	s := x.Sort(0)
	defer closeAll(x, s)
	xs, err := ToSlice[float32](x)
	if err != nil {
		t.Fatal(err)
	}
	ss, err := ToSlice[float32](s)
	if err != nil {
		t.Fatal(err)
	}
	hash := func(v []float32) (h uint64) {
		for _, f := range v {
			b := uint64(math.Float32bits(f))
			h += b*b*0x9e3779b97f4a7c15 + b
		}
		return h
	}
	for i := 1; i < n; i++ {
		if !(ss[i-1] <= ss[i]) {
			t.Fatalf("element %d = %v after %v", i, ss[i], ss[i-1])
		}
	}
	if hash(xs) != hash(ss) {
		t.Fatal("the sorted values are not the input's")
	}
}
