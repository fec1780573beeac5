package linalg

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/gocu-dev/gocu/array"
)

// cpu is the device of the CPU tests.
var cpu = array.CPU()

// randn returns n normal float64 values from seed.
func randn(seed uint64, n int) []float64 {
	r := rand.New(rand.NewPCG(seed, 7))
	out := make([]float64, n)
	for i := range out {
		out[i] = r.NormFloat64()
	}
	return out
}

// mk makes a CPU array of dtype dt from float64 values.
func mk(t *testing.T, dt array.DType, v []float64, shape ...int) *array.Array {
	t.Helper()
	return array.FromSliceOn(cpu.Device(), v, shape...).AsType(dt)
}

// vals reads an array as float64, failing the test on an error.
func vals(t *testing.T, x *array.Array) []float64 {
	t.Helper()
	v, err := array.ToSlice[float64](x)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// mm is the float64 product of row-major a (m×k) and b (k×n).
func mm(a, b []float64, m, k, n int) []float64 {
	c := make([]float64, m*n)
	for i := range m {
		for p := range k {
			for j := range n {
				c[i*n+j] += a[i*k+p] * b[p*n+j]
			}
		}
	}
	return c
}

// tr transposes row-major a (m×n).
func tr(a []float64, m, n int) []float64 {
	t := make([]float64, m*n)
	for i := range m {
		for j := range n {
			t[j*m+i] = a[i*n+j]
		}
	}
	return t
}

func eyeF(n int) []float64 {
	e := make([]float64, n*n)
	for i := range n {
		e[i*n+i] = 1
	}
	return e
}

// maxDiff returns max|a-b| / max(1, max|b|).
func maxDiff(a, b []float64) float64 {
	if len(a) != len(b) {
		return math.Inf(1)
	}
	d, s := 0.0, 1.0
	for i := range a {
		d = math.Max(d, math.Abs(a[i]-b[i]))
		s = math.Max(s, math.Abs(b[i]))
	}
	if math.IsNaN(d) {
		return math.Inf(1)
	}
	return d / s
}

// tol is the accepted relative error of results in dt.
func tol(dt array.DType) float64 {
	if dt == array.Float32 {
		return 2e-4
	}
	return 1e-10
}

// spd returns a batch of symmetric positive definite n×n matrices.
func spd(seed uint64, nb, n int) []float64 {
	g := randn(seed, nb*n*n)
	out := make([]float64, 0, nb*n*n)
	for b := range nb {
		m := g[b*n*n : (b+1)*n*n]
		a := mm(m, tr(m, n, n), n, n, n)
		for i := range n {
			a[i*n+i] += float64(n)
		}
		out = append(out, a...)
	}
	return out
}

// hilbert returns the ill-conditioned Hilbert matrix of order n.
func hilbert(n int) []float64 {
	h := make([]float64, n*n)
	for i := range n {
		for j := range n {
			h[i*n+j] = 1 / float64(i+j+1)
		}
	}
	return h
}

var dtypes = []array.DType{array.Float32, array.Float64}
