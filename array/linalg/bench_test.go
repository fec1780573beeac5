package linalg

import (
	"testing"

	"github.com/gocu-dev/gocu/array"
)

// The Go benchmarks of the common calls, on the CPU (small sizes) and on
// GPU 0 (the linalg suite's sizes) when there is one; gocu bench --suite
// linalg times the same calls beside CuPy.

func benchDevices(b *testing.B) map[string]*array.Maker {
	ds := map[string]*array.Maker{"cpu": cpu}
	if g, err := gpuOnce(); err == nil {
		ds["gpu"] = g
	}
	return ds
}

func benchOp(b *testing.B, cpuN, gpuN int, f func(d *array.Maker, n int) func() []*array.Array) {
	for dn, d := range benchDevices(b) {
		n := cpuN
		if d.IsGPU() {
			n = gpuN
		}
		b.Run(dn, func(b *testing.B) {
			run := f(d, n)
			for b.Loop() {
				out := run()
				for _, x := range out {
					if err := x.Err(); err != nil {
						b.Fatal(err)
					}
				}
				if err := d.Sync(); err != nil {
					b.Fatal(err)
				}
				for _, x := range out {
					x.Close()
				}
			}
		})
	}
}

func diagDominant(d *array.Maker, dt array.DType, n int, batch ...int) *array.Array {
	s := append(append([]int{}, batch...), n, n)
	return d.NewRNG(1).Normal(dt, 0, 1, s...).Add(d.Eye(dt, n).Mul(float64(n))).Eval()
}

func BenchmarkSolveF32(b *testing.B) {
	benchOp(b, 256, 4096, func(d *array.Maker, n int) func() []*array.Array {
		a, rhs := diagDominant(d, array.Float32, n), d.NewRNG(2).Normal(array.Float32, 0, 1, n, 64)
		return func() []*array.Array { return []*array.Array{Solve(a, rhs)} }
	})
}

func BenchmarkSolveBatched(b *testing.B) {
	benchOp(b, 256, 4096, func(d *array.Maker, nb int) func() []*array.Array {
		a := diagDominant(d, array.Float32, 32, nb)
		rhs := a.Slice(array.Ellipsis, array.S(0, 1))
		return func() []*array.Array { return []*array.Array{Solve(a, rhs)} }
	})
}

func BenchmarkCholeskyF32(b *testing.B) {
	benchOp(b, 256, 4096, func(d *array.Maker, n int) func() []*array.Array {
		g := diagDominant(d, array.Float32, n)
		a := g.MatMul(g.T()).Eval()
		return func() []*array.Array { return []*array.Array{Cholesky(a)} }
	})
}

func BenchmarkSVDF32(b *testing.B) {
	benchOp(b, 128, 1024, func(d *array.Maker, n int) func() []*array.Array {
		a := d.NewRNG(3).Normal(array.Float32, 0, 1, n, n).Eval()
		return func() []*array.Array { u, s, vh := SVD(a, true); return []*array.Array{u, s, vh} }
	})
}

func BenchmarkEighF32(b *testing.B) {
	benchOp(b, 128, 2048, func(d *array.Maker, n int) func() []*array.Array {
		g := d.NewRNG(4).Normal(array.Float32, 0, 1, n, n)
		a := g.Add(g.T()).Eval()
		return func() []*array.Array { w, v := Eigh(a); return []*array.Array{w, v} }
	})
}

func BenchmarkEinsumAttention(b *testing.B) {
	benchOp(b, 128, 1024, func(d *array.Maker, s int) func() []*array.Array {
		h := 16
		if !d.IsGPU() {
			h = 2
		}
		q := d.NewRNG(5).Normal(array.Float32, 0, 1, 4, h, s, 64).Eval()
		k := d.NewRNG(6).Normal(array.Float32, 0, 1, 4, h, s, 64).Eval()
		return func() []*array.Array { return []*array.Array{Einsum("bhqd,bhkd->bhqk", q, k)} }
	})
}
