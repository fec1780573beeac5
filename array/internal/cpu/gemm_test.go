package cpu

import (
	"math"
	"math/rand/v2"
	"testing"
)

func refGemm(m, n, k int, a func(i, p int) float64, b func(p, j int) float64) []float64 {
	c := make([]float64, m*n)
	for i := 0; i < m; i++ {
		for j := 0; j < n; j++ {
			s := 0.0
			for p := 0; p < k; p++ {
				s += a(i, p) * b(p, j)
			}
			c[i*n+j] = s
		}
	}
	return c
}

// The packed GEMM on odd sizes (edge tiles in every direction, k across
// several kc blocks), with row-major and transposed operands.
func TestGemmSizesAndTransposes(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, sz := range [][3]int{{1, 1, 1}, {7, 17, 5}, {13, 33, 300}, {6, 16, 256}, {100, 50, 513}, {97, 129, 64}} {
		m, n, k := sz[0], sz[1], sz[2]
		for _, ta := range []bool{false, true} {
			for _, tb := range []bool{false, true} {
				for _, workers := range []int{1, 3} {
					a := make([]float32, m*k+3)
					bb := make([]float32, k*n+5)
					for i := range a {
						a[i] = rng.Float32()*2 - 1
					}
					for i := range bb {
						bb[i] = rng.Float32()*2 - 1
					}
					A := mat[float32]{a, 3, k, 1}
					if ta {
						A = mat[float32]{a, 3, 1, m}
					}
					B := mat[float32]{bb, 5, n, 1}
					if tb {
						B = mat[float32]{bb, 5, 1, k}
					}
					c := make([]float32, m*n+2)
					for i := range c {
						c[i] = float32(math.NaN())
					}
					ref := refGemm(m, n, k, func(i, p int) float64 { return float64(A.at(i, p)) }, func(p, j int) float64 { return float64(B.at(p, j)) })
					if hasGemmKernel {
						gemm(workers, sGeom, sKernel, m, n, k, A, B, c, 2, n)
					} else {
						t.Skip("no AVX2/FMA: the gonum path is tested through MatMul")
					}
					for i, want := range ref {
						got := float64(c[2+i])
						if math.Abs(got-want) > 1e-5*float64(k) {
							t.Fatalf("%v ta=%v tb=%v w=%d: c[%d] = %v, want %v", sz, ta, tb, workers, i, got, want)
						}
					}
					if !math.IsNaN(float64(c[0])) || !math.IsNaN(float64(c[1])) {
						t.Fatalf("gemm wrote before its output")
					}
					// float64 kernel on the same data.
					a64 := make([]float64, len(a))
					b64 := make([]float64, len(bb))
					for i := range a {
						a64[i] = float64(a[i])
					}
					for i := range bb {
						b64[i] = float64(bb[i])
					}
					c64 := make([]float64, m*n)
					gemm(workers, dGeom, dKernel, m, n, k, mat[float64]{a64, A.off, A.rs, A.cs}, mat[float64]{b64, B.off, B.rs, B.cs}, c64, 0, n)
					for i, want := range ref {
						if math.Abs(c64[i]-want) > 1e-12*float64(k) {
							t.Fatalf("dgemm %v: c[%d] = %v, want %v", sz, i, c64[i], want)
						}
					}
				}
			}
		}
	}
}

func BenchmarkSgemm1024(b *testing.B) {
	n := 1024
	a := make([]float32, n*n)
	bb := make([]float32, n*n)
	c := make([]float32, n*n)
	for i := range a {
		a[i] = float32(i%7) - 3
		bb[i] = float32(i%5) - 2
	}
	be := New(0)
	for b.Loop() {
		gemm(be.workers, sGeom, sKernel, n, n, n, mat[float32]{a, 0, n, 1}, mat[float32]{bb, 0, n, 1}, c, 0, n)
	}
	b.ReportMetric(2*float64(n*n*n)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
}
