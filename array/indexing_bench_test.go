package array

import (
	"fmt"
	"testing"
)

// Indexing benchmarks beside baseline_numpy.py's CuPy and torch figures
// (issue 19): *GPU report the median GPU time of CUDA events and GB/s; the
// others run on the CPU backend at the same sizes but for the vectors.
//
//	take 2^26 float32 by 2^26 random int64        CuPy 1.75 ms
//	embedding gather 16,384 rows of 50304x768     torch 0.0365 ms
//	its scatter-add backward (zeros + index_add)  torch 0.134 ms
//	nonzero of 2^26 (half true)                   CuPy 0.89 ms
//	boolean mask 2^26 float32                     CuPy 1.19 ms

type ixBench struct {
	x, idx, emb, tok, g, mask *Array
	n                         int
}

func newIxBench(b *testing.B, d *Maker, n int) *ixBench {
	r := d.NewRNG(3)
	s := &ixBench{n: n}
	s.x = r.Normal(Float32, 0, 1, n).Eval()
	s.idx = r.Integers(Int64, 0, int64(n), n).Eval()
	s.emb = r.Normal(Float32, 0, 1, 50304, 768).Eval()
	s.tok = r.Integers(Int64, 0, 50304, 16384).Eval()
	s.g = r.Normal(Float32, 0, 1, 16384, 768).Eval()
	s.mask = s.x.Gt(0).Eval()
	if err := s.mask.Err(); err != nil {
		b.Fatal(err)
	}
	return s
}

func (s *ixBench) ops() []struct {
	name  string
	bytes float64
	f     func()
} {
	n := float64(s.n)
	return []struct {
		name  string
		bytes float64
		f     func()
	}{
		{"take", 16 * n, func() { closing(s.x.Take(s.idx, 0)) }},
		{"embedding", 8*16384 + 8*16384*768, func() { closing(s.emb.Take(s.tok, 0)) }},
		{"scatter_add", 4*50304*768 + 8*16384 + 12*16384*768, func() { closing(ZerosLike(s.emb).IndexAdd(0, s.tok, s.g)) }},
		{"nonzero", 1.5 * n, func() {
			for _, y := range s.mask.Nonzero() {
				closing(y)
			}
		}},
		{"mask", 5*n + 2*n, func() { closing(s.x.Mask(s.mask)) }},
	}
}

func BenchmarkIndexingGPU(b *testing.B) {
	g := testGPU(b)
	s := newIxBench(b, g, benchN)
	for _, op := range s.ops() {
		b.Run(op.name, func(b *testing.B) {
			m := medians(b, g, op.f)
			b.ReportMetric(float64(m[0].Microseconds())/1e3, "ms")
			b.ReportMetric(gbps(op.bytes, m[0]), "GB/s")
		})
	}
}

func BenchmarkIndexingCPU(b *testing.B) {
	s := newIxBench(b, CPU(), 1<<22)
	for _, op := range s.ops() {
		b.Run(op.name, func(b *testing.B) {
			for range b.N {
				op.f()
			}
			b.ReportMetric(op.bytes*float64(b.N)/b.Elapsed().Seconds()/1e9, "GB/s")
		})
	}
}

// BenchmarkCPUIndexAdd is the reduction of frame's group-by: 1e7 values
// added into 100 or 1e5 rows. Integer sums may group their additions;
// float sums keep the serial order.
func BenchmarkCPUIndexAdd(b *testing.B) {
	const n = 10_000_000
	d := CPU()
	r := d.NewRNG(5)
	for _, dt := range []DType{Float64, Int64} {
		v := r.Normal(Float64, 0, 100, n).AsType(dt).Eval()
		for _, rows := range []int{100, 100_000} {
			idx := r.Integers(Int64, 0, int64(rows), n).Eval()
			z := d.Zeros(dt, rows).Eval()
			b.Run(fmt.Sprintf("%v/rows=%d", dt, rows), func(b *testing.B) {
				for range b.N {
					closing(z.IndexAdd(0, idx, v))
				}
				b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds()/1e6, "Mindex/s")
			})
			idx.Close()
			z.Close()
		}
		v.Close()
	}
}
