package array

import (
	"fmt"
	"testing"
)

// BenchmarkSortScan times the sort, scan and counting operations: on the
// CPU at 2^22 elements, and with a GPU (BenchmarkSortScan/gpu) at the
// issue's sizes, 2^26. Each iteration waits for the device; the numpy
// suite of gocu bench times the GPU with events beside its peers.
func BenchmarkSortScan(b *testing.B) {
	devs := []struct {
		name string
		n    int
		dev  func(b *testing.B) *Maker
	}{
		{"cpu", 1 << 22, func(*testing.B) *Maker { return CPU() }},
		{"gpu", 1 << 26, func(b *testing.B) *Maker { return testGPU(b) }},
	}
	for _, dv := range devs {
		b.Run(dv.name, func(b *testing.B) {
			d := dv.dev(b)
			n := dv.n
			r := d.NewRNG(1)
			x := r.Normal(Float32, 0, 1, n).Eval()
			xi := r.Uniform(Float32, 0, 65536, n).AsType(Int32).Eval()
			m := r.Normal(Float32, 0, 1, 1<<12, n>>12).Eval()
			logits := r.Normal(Float32, 0, 1, 64, 50304).Eval()
			sorted := x.Sort(0).Eval()
			defer closeAll(x, xi, m, logits, sorted)
			for _, c := range []struct {
				name string
				op   func() []*Array
			}{
				{"sort_f32", func() []*Array { return []*Array{x.Sort(0)} }},
				{"argsort_f32", func() []*Array { return []*Array{x.Argsort(0)} }},
				{"sort_i32", func() []*Array { return []*Array{xi.Sort(0)} }},
				{"sort_rows", func() []*Array { return []*Array{m.Sort(1)} }},
				{"topk_k100", func() []*Array { v, i := x.Slice(S(n/4)).TopK(100, true); return []*Array{v, i} }},
				{"topk_rows_k50", func() []*Array { v, i := logits.TopK(50, true); return []*Array{v, i} }},
				{"unique_i32", func() []*Array { return []*Array{xi.Unique()} }},
				{"searchsorted", func() []*Array { return []*Array{SearchSorted(sorted, x, false)} }},
				{"bincount", func() []*Array { return []*Array{xi.BincountN(nil, 1<<16)} }},
				{"histogram", func() []*Array { h, e := x.Histogram(256, -4, 4); return []*Array{h, e} }},
				{"cumsum_f32", func() []*Array { return []*Array{x.Cumsum(0)} }},
				{"var_rows", func() []*Array { return []*Array{m.Var(0, 1)} }},
				{"median_rows", func() []*Array { return []*Array{m.Median(1)} }},
			} {
				b.Run(fmt.Sprintf("%s/n=%d", c.name, n), func(b *testing.B) {
					run := func() {
						rs := c.op()
						for _, a := range rs {
							if err := a.Eval().Err(); err != nil {
								b.Fatal(err)
							}
						}
						if err := d.Sync(); err != nil {
							b.Fatal(err)
						}
						closeAll(rs...)
					}
					run() // compile the kernels
					for b.Loop() {
						run()
					}
				})
			}
		})
	}
}
