package linalg

import (
	"math"
	"testing"

	"github.com/gocu-dev/gocu/array"
)

// On the Hilbert matrix of order 10 (condition number about 1.6e13) the
// answers are inaccurate, but backward stable: residuals and
// reconstructions stay at the rounding level of |A|·|x|.
func TestIllConditioned(t *testing.T) {
	const n = 10
	h := hilbert(n)
	a := mk(t, array.Float64, h, n, n)
	b := mk(t, array.Float64, randn(70, n), n)
	x := vals(t, Solve(a, b))
	bv := vals(t, b)
	for i := range n {
		r, mag := -bv[i], math.Abs(bv[i])
		for j := range n {
			r += h[i*n+j] * x[j]
			mag += math.Abs(h[i*n+j] * x[j])
		}
		if math.Abs(r) > 1e-13*mag {
			t.Errorf("row %d: residual %.3g of magnitude %.3g", i, r, mag)
		}
	}
	l := Cholesky(a)
	if d := maxDiff(vals(t, l.MatMul(l.T())), h); d > 1e-15 {
		t.Errorf("L·Lᵀ - H = %.3g", d)
	}
	q, r := QR(a, Reduced)
	if d := maxDiff(vals(t, q.MatMul(r)), h); d > 1e-14 {
		t.Errorf("QR - H = %.3g", d)
	}
	w, v := Eigh(a)
	if d := maxDiff(vals(t, v.Mul(w.ExpandDims(0)).MatMul(v.T())), h); d > 1e-14 {
		t.Errorf("V·Λ·Vᵀ - H = %.3g", d)
	}
	// The smallest eigenvalue is about 1.1e-13 and must come out positive
	// and tiny; the largest is 1.7519.
	wv := vals(t, w)
	if wv[0] <= 0 || wv[0] > 1e-12 || math.Abs(wv[n-1]-1.7519196702651774) > 1e-13 {
		t.Errorf("eigenvalues %v", wv)
	}
	// Rank: numerically 10 by NumPy's default tolerance.
	if r := vals(t, MatrixRank(a, -1)); r[0] != n {
		t.Errorf("rank %v", r)
	}
}
