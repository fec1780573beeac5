package linalg

import (
	"errors"
	"math"
	"testing"

	"github.com/gocu-dev/gocu/array"
)

func TestSolve(t *testing.T) {
	for _, dt := range dtypes {
		for _, c := range []struct {
			ashape, bshape []int
		}{
			{[]int{5, 5}, []int{5, 3}},
			{[]int{5, 5}, []int{5}},
			{[]int{4, 6, 6}, []int{4, 6, 2}},
			{[]int{3, 1, 4, 4}, []int{2, 4, 1}}, // batch axes broadcast
			{[]int{2, 7, 7}, []int{7}},          // one vector for the stack
			{[]int{4, 4}, []int{3, 4, 2}},       // one matrix for a stack: factored once
			{[]int{1, 4, 4}, []int{2, 3, 4, 2}},
		} {
			n := c.ashape[len(c.ashape)-1]
			na := prod(c.ashape)
			av := randn(1, na)
			for i := 0; i < na; i += n * n {
				for j := range n {
					av[i+j*n+j] += 4 // keep it well conditioned
				}
			}
			a := mk(t, dt, av, c.ashape...)
			b := mk(t, dt, randn(2, prod(c.bshape)), c.bshape...)
			x := Solve(a, b)
			if err := x.Err(); err != nil {
				t.Fatalf("%v %v %v: %v", dt, c.ashape, c.bshape, err)
			}
			if x.DType() != dt {
				t.Errorf("dtype %v, want %v", x.DType(), dt)
			}
			// The residual a·x - b, in float64 from the stored values.
			vec := len(c.bshape) == 1
			bm := b
			xm := x
			if vec {
				bm, xm = b.ExpandDims(-1), x.ExpandDims(-1)
			}
			ax := a.AsType(array.Float64).MatMul(xm.AsType(array.Float64))
			want := bm.AsType(array.Float64).BroadcastTo(ax.Shape()...)
			if d := maxDiff(vals(t, ax), vals(t, want)); d > tol(dt) {
				t.Errorf("%v a %v b %v: residual %.3g", dt, c.ashape, c.bshape, d)
			}
		}
	}
}

func TestSolveErrors(t *testing.T) {
	sing := mk(t, array.Float64, []float64{1, 2, 2, 4}, 2, 2)
	b := mk(t, array.Float64, []float64{1, 1}, 2)
	err := Solve(sing, b).Err()
	if !errors.Is(err, ErrSingular) || !errors.Is(err, ErrLinAlg) {
		t.Errorf("singular: %v", err)
	}
	batch := mk(t, array.Float64, []float64{2, 0, 0, 2, 1, 2, 2, 4}, 2, 2, 2)
	if err := Solve(batch, b).Err(); !errors.Is(err, ErrSingular) || !contains(err.Error(), "[1]") {
		t.Errorf("singular in a batch: %v", err)
	}
	if err := Solve(mk(t, array.Float64, randn(1, 6), 2, 3), b).Err(); !errors.Is(err, ErrNotSquare) || !errors.Is(err, array.ErrShape) {
		t.Errorf("not square: %v", err)
	}
	if err := Solve(mk(t, array.Float64, randn(1, 9), 3, 3), b).Err(); !errors.Is(err, array.ErrShape) {
		t.Errorf("rows mismatch: %v", err)
	}
	if err := Solve(mk(t, array.Float64, randn(1, 3), 3), b).Err(); !errors.Is(err, array.ErrShape) {
		t.Errorf("1-D a: %v", err)
	}
	a3 := mk(t, array.Float64, randn(1, 3*4), 3, 2, 2)
	b2 := mk(t, array.Float64, randn(1, 2*2*1), 2, 2, 1)
	if err := Solve(a3, b2).Err(); !errors.Is(err, array.ErrShape) {
		t.Errorf("batch mismatch: %v", err)
	}
	if err := Inv(mk(t, array.Float16, []float64{1, 0, 0, 1}, 2, 2)).Err(); !errors.Is(err, array.ErrDType) {
		t.Errorf("float16: %v", err)
	}
	if err := Inv(nil).Err(); !errors.Is(err, array.ErrValue) {
		t.Errorf("nil: %v", err)
	}
	failed := array.Failed(errors.New("earlier"))
	if err := Inv(failed).Err(); err == nil || err.Error() != "earlier" {
		t.Errorf("failed input: %v", err)
	}
}

func contains(s, sub string) bool {
	for i := 0; i+len(sub) <= len(s); i++ {
		if s[i:i+len(sub)] == sub {
			return true
		}
	}
	return false
}

func TestIntegersPromote(t *testing.T) {
	a := array.FromSliceOn(cpu.Device(), []int64{2, 1, 1, 3}, 2, 2)
	x := Inv(a)
	if x.DType() != array.Float64 {
		t.Fatalf("Inv of int64 is %v, want float64", x.DType())
	}
	if d := maxDiff(vals(t, x), []float64{0.6, -0.2, -0.2, 0.4}); d > 1e-15 {
		t.Errorf("Inv = %v", vals(t, x))
	}
	b := array.FromSliceOn(cpu.Device(), []int32{1, 2}, 2)
	if x := Solve(mk(t, array.Float32, []float64{2, 1, 1, 3}, 2, 2), b); x.DType() != array.Float64 {
		t.Errorf("float32 with int32 gives %v, want float64 (NumPy's promotion)", x.DType())
	}
}

func TestInv(t *testing.T) {
	for _, dt := range dtypes {
		for _, shape := range [][]int{{1, 1}, {6, 6}, {3, 5, 5}, {0, 4, 4}, {2, 0, 0}} {
			n := shape[len(shape)-1]
			av := randn(3, prod(shape))
			for i := 0; i < len(av); i += n * n {
				for j := range n {
					av[i+j*n+j] += 4
				}
			}
			a := mk(t, dt, av, shape...)
			x := Inv(a)
			prodA := a.AsType(array.Float64).MatMul(x.AsType(array.Float64))
			want := array.FromSliceOn(cpu.Device(), eyeF(n), n, n).BroadcastTo(shape...)
			if d := maxDiff(vals(t, prodA), vals(t, want)); d > tol(dt) {
				t.Errorf("%v %v: a·inv(a) - I = %.3g", dt, shape, d)
			}
		}
	}
	if err := Inv(mk(t, array.Float32, []float64{1, 2, 3, 2, 4, 6, 0, 1, 1}, 3, 3)).Err(); !errors.Is(err, ErrSingular) {
		t.Errorf("singular: %v", err)
	}
}

// refDet is the determinant by Gaussian elimination with partial
// pivoting, in float64.
func refDet(a []float64, n int) float64 {
	a = append([]float64(nil), a...)
	det := 1.0
	for c := range n {
		p := c
		for r := c + 1; r < n; r++ {
			if math.Abs(a[r*n+c]) > math.Abs(a[p*n+c]) {
				p = r
			}
		}
		if a[p*n+c] == 0 {
			return 0
		}
		if p != c {
			for j := range n {
				a[c*n+j], a[p*n+j] = a[p*n+j], a[c*n+j]
			}
			det = -det
		}
		det *= a[c*n+c]
		for r := c + 1; r < n; r++ {
			f := a[r*n+c] / a[c*n+c]
			for j := c; j < n; j++ {
				a[r*n+j] -= f * a[c*n+j]
			}
		}
	}
	return det
}

func TestDetSlogdet(t *testing.T) {
	for _, dt := range dtypes {
		const nb, n = 5, 6
		a := mk(t, dt, randn(4, nb*n*n), nb, n, n)
		av := vals(t, a)
		d := vals(t, Det(a))
		sign, logdet := Slogdet(a)
		s, l := vals(t, sign), vals(t, logdet)
		for i := range nb {
			want := refDet(av[i*n*n:(i+1)*n*n], n)
			if math.Abs(d[i]-want) > 10*tol(dt)*math.Abs(want) {
				t.Errorf("%v det %d = %g, want %g", dt, i, d[i], want)
			}
			if s[i] != math.Copysign(1, want) || math.Abs(l[i]-math.Log(math.Abs(want))) > 10*tol(dt) {
				t.Errorf("%v slogdet %d = %g, %g; want det %g", dt, i, s[i], l[i], want)
			}
		}
	}
	s, l := Slogdet(mk(t, array.Float64, []float64{1, 2, 2, 4}, 2, 2))
	if sv, lv := vals(t, s), vals(t, l); sv[0] != 0 || !math.IsInf(lv[0], -1) {
		t.Errorf("singular slogdet = %v %v, want 0 -Inf", sv, lv)
	}
	if d := vals(t, Det(mk(t, array.Float64, nil, 0, 0))); d[0] != 1 {
		t.Errorf("det of 0×0 = %v, want 1", d)
	}
	// A large determinant that overflows as a product of pivots in float32
	// is still right in logabsdet.
	big := mk(t, array.Float32, eyeF(64), 64, 64).Mul(100)
	if _, l := Slogdet(big); math.Abs(vals(t, l)[0]-64*math.Log(100)) > 1e-3 {
		t.Errorf("logdet of 100·I = %v", vals(t, l))
	}
}

func TestCholesky(t *testing.T) {
	for _, dt := range dtypes {
		const nb, n = 3, 7
		a := mk(t, dt, spd(5, nb, n), nb, n, n)
		l := Cholesky(a)
		lv := vals(t, l)
		for b := range nb {
			m := lv[b*n*n : (b+1)*n*n]
			for i := range n {
				for j := i + 1; j < n; j++ {
					if m[i*n+j] != 0 {
						t.Fatalf("%v L[%d,%d] = %g above the diagonal", dt, i, j, m[i*n+j])
					}
				}
			}
		}
		llt := l.AsType(array.Float64).MatMul(l.AsType(array.Float64).SwapAxes(-1, -2))
		if d := maxDiff(vals(t, llt), vals(t, a.AsType(array.Float64))); d > tol(dt) {
			t.Errorf("%v: L·Lᵀ - A = %.3g", dt, d)
		}
	}
	notPD := mk(t, array.Float64, []float64{1, 2, 2, 1}, 2, 2)
	if err := Cholesky(notPD).Err(); !errors.Is(err, ErrNotPositiveDefinite) || !errors.Is(err, ErrLinAlg) {
		t.Errorf("not positive definite: %v", err)
	}
	if err := Cholesky(mk(t, array.Float64, randn(1, 6), 2, 3)).Err(); !errors.Is(err, ErrNotSquare) {
		t.Errorf("not square: %v", err)
	}
}

func TestQR(t *testing.T) {
	for _, dt := range dtypes {
		for _, shape := range [][]int{{6, 4}, {4, 6}, {5, 5}, {3, 7, 3}, {2, 3, 5}} {
			m, n := shape[len(shape)-2], shape[len(shape)-1]
			k := min(m, n)
			a := mk(t, dt, randn(6, prod(shape)), shape...)
			for _, mode := range []QRMode{Reduced, Complete} {
				q, r := QR(a, mode)
				qc := k
				if mode == Complete {
					qc = m
				}
				if got := q.Shape(); got[len(got)-1] != qc || got[len(got)-2] != m {
					t.Fatalf("%v %v mode %d: q %v", dt, shape, mode, got)
				}
				q64, r64 := q.AsType(array.Float64), r.AsType(array.Float64)
				if d := maxDiff(vals(t, q64.MatMul(r64)), vals(t, a.AsType(array.Float64))); d > tol(dt) {
					t.Errorf("%v %v mode %d: QR - A = %.3g", dt, shape, mode, d)
				}
				qtq := q64.SwapAxes(-1, -2).MatMul(q64)
				if d := maxDiff(vals(t, qtq), vals(t, array.FromSliceOn(cpu.Device(), eyeF(qc), qc, qc).BroadcastTo(qtq.Shape()...))); d > tol(dt) {
					t.Errorf("%v %v mode %d: QᵀQ - I = %.3g", dt, shape, mode, d)
				}
				rv := vals(t, r64)
				rr, rn := r.Shape()[r.Ndim()-2], n
				for b := 0; b < len(rv); b += rr * rn {
					for i := range rr {
						for j := 0; j < min(i, rn); j++ {
							if rv[b+i*rn+j] != 0 {
								t.Fatalf("%v %v: R[%d,%d] = %g below the diagonal", dt, shape, i, j, rv[b+i*rn+j])
							}
						}
					}
				}
			}
			q, r := QR(a, ROnly)
			_, r2 := QR(a, Reduced)
			if q != nil || maxDiff(vals(t, r), vals(t, r2)) != 0 {
				t.Errorf("%v %v: ROnly differs from Reduced's r", dt, shape)
			}
		}
	}
	if q, _ := QR(mk(t, array.Float64, randn(1, 4), 2, 2), QRMode(9)); !errors.Is(q.Err(), array.ErrValue) {
		t.Errorf("bad mode: %v", q.Err())
	}
}

func checkSVD(t *testing.T, name string, dt array.DType, a *array.Array, full bool) {
	t.Helper()
	shape := a.Shape()
	m, n := shape[len(shape)-2], shape[len(shape)-1]
	k := min(m, n)
	u, s, vh := SVD(a, full)
	if err := errors.Join(u.Err(), s.Err(), vh.Err()); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	sv := vals(t, s)
	for i := 0; i < len(sv); i += k {
		for j := 1; j < k; j++ {
			if sv[i+j] > sv[i+j-1] || sv[i+j] < 0 {
				t.Fatalf("%s: singular values not descending and ≥ 0: %v", name, sv[i:i+k])
			}
		}
	}
	u64, vh64 := u.AsType(array.Float64), vh.AsType(array.Float64)
	uk, vk := u64, vh64
	if full {
		uk = u64.Slice(array.Ellipsis, array.All, array.S(0, k))
		vk = vh64.Slice(array.Ellipsis, array.S(0, k), array.All)
	}
	rec := uk.Mul(s.AsType(array.Float64).ExpandDims(-2)).MatMul(vk)
	if d := maxDiff(vals(t, rec), vals(t, a.AsType(array.Float64))); d > tol(dt) {
		t.Errorf("%s: U·S·Vᵀ - A = %.3g", name, d)
	}
	for _, q := range []*array.Array{u64.SwapAxes(-1, -2).MatMul(u64), vh64.MatMul(vh64.SwapAxes(-1, -2))} {
		c := q.Shape()[q.Ndim()-1]
		if d := maxDiff(vals(t, q), vals(t, array.FromSliceOn(cpu.Device(), eyeF(c), c, c).BroadcastTo(q.Shape()...))); d > tol(dt) {
			t.Errorf("%s: not orthonormal by %.3g", name, d)
		}
	}
	if d := maxDiff(vals(t, SVDVals(a)), sv); d > tol(dt) {
		t.Errorf("%s: SVDVals differs from SVD's s by %.3g", name, d)
	}
}

func TestSVD(t *testing.T) {
	for _, dt := range dtypes {
		for _, shape := range [][]int{{6, 4}, {4, 6}, {5, 5}, {3, 7, 2}} {
			for _, full := range []bool{false, true} {
				checkSVD(t, dt.String()+" random", dt, mk(t, dt, randn(7, prod(shape)), shape...), full)
			}
		}
		checkSVD(t, dt.String()+" hilbert", dt, mk(t, dt, hilbert(10), 10, 10), false)
	}
}

func TestEigh(t *testing.T) {
	for _, dt := range dtypes {
		const nb, n = 4, 8
		g := randn(8, nb*n*n)
		sym := make([]float64, len(g))
		for b := range nb {
			for i := range n {
				for j := range n {
					sym[b*n*n+i*n+j] = g[b*n*n+i*n+j] + g[b*n*n+j*n+i]
				}
			}
		}
		a := mk(t, dt, sym, nb, n, n)
		w, v := Eigh(a)
		wv := vals(t, w)
		for b := range nb {
			for i := 1; i < n; i++ {
				if wv[b*n+i] < wv[b*n+i-1] {
					t.Fatalf("%v eigenvalues not ascending: %v", dt, wv[b*n:(b+1)*n])
				}
			}
		}
		a64, v64, w64 := a.AsType(array.Float64), v.AsType(array.Float64), w.AsType(array.Float64)
		if d := maxDiff(vals(t, a64.MatMul(v64)), vals(t, v64.Mul(w64.ExpandDims(-2)))); d > 10*tol(dt) {
			t.Errorf("%v: A·V - V·Λ = %.3g", dt, d)
		}
		if d := maxDiff(vals(t, v64.SwapAxes(-1, -2).MatMul(v64)), vals(t, array.FromSliceOn(cpu.Device(), eyeF(n), n, n).BroadcastTo(nb, n, n))); d > tol(dt) {
			t.Errorf("%v: VᵀV - I = %.3g", dt, d)
		}
		if d := maxDiff(vals(t, Eigvalsh(a)), wv); d > tol(dt) {
			t.Errorf("%v: Eigvalsh differs by %.3g", dt, d)
		}
		// Only the lower triangle counts: garbage above it changes nothing.
		upper := mk(t, array.Float64, randn(9, n*n), n, n).Mul(100)
		mask := cpu.Arange(array.Int64, n).ExpandDims(1).Lt(cpu.Arange(array.Int64, n).ExpandDims(0))
		dirty := array.Where(mask, upper.AsType(dt), a)
		if d := maxDiff(vals(t, Eigvalsh(dirty)), wv); d > tol(dt) {
			t.Errorf("%v: the upper triangle changed the eigenvalues by %.3g", dt, d)
		}
	}
}

func TestLstsq(t *testing.T) {
	for _, dt := range dtypes {
		const m, n = 9, 4
		a := mk(t, dt, randn(10, m*n), m, n)
		b := mk(t, dt, randn(11, m*2), m, 2)
		x, res, rank, s := Lstsq(a, b, -1)
		if err := errors.Join(x.Err(), res.Err(), s.Err()); err != nil {
			t.Fatal(err)
		}
		if rank != n {
			t.Errorf("rank %d, want %d", rank, n)
		}
		// The normal equations: Aᵀ(A·x - b) = 0.
		a64, x64, b64 := a.AsType(array.Float64), x.AsType(array.Float64), b.AsType(array.Float64)
		r := a64.MatMul(x64).Sub(b64)
		if d := maxDiff(vals(t, a64.T().MatMul(r)), make([]float64, n*2)); d > 10*tol(dt) {
			t.Errorf("%v: Aᵀ(Ax-b) = %.3g", dt, d)
		}
		if d := maxDiff(vals(t, res), vals(t, r.Square().Sum(0))); d > 10*tol(dt) {
			t.Errorf("%v: residuals differ by %.3g", dt, d)
		}
		// A vector right-hand side, and a rank-deficient a (two equal
		// columns): no residuals, the minimum-norm solution.
		av := vals(t, a)
		for i := range m {
			av[i*n+1] = av[i*n]
		}
		ad := mk(t, dt, av, m, n)
		x1, res1, rank1, _ := Lstsq(ad, b.Slice(array.All, array.Idx(0)), -1)
		if rank1 != n-1 || res1.Size() != 0 || len(x1.Shape()) != 1 {
			t.Errorf("%v deficient: rank %d, residuals %v, x %v", dt, rank1, res1.Shape(), x1.Shape())
		}
		xv := vals(t, x1)
		if math.Abs(xv[0]-xv[1]) > 10*tol(dt)*math.Max(1, math.Abs(xv[0])) {
			t.Errorf("%v: the minimum-norm solution splits equal columns evenly, got %v", dt, xv[:2])
		}
	}
	if x, _, _, _ := Lstsq(mk(t, array.Float64, randn(1, 6), 3, 2), mk(t, array.Float64, randn(1, 2), 2), -1); !errors.Is(x.Err(), array.ErrShape) {
		t.Errorf("row mismatch: %v", x.Err())
	}
}

func TestPinvRank(t *testing.T) {
	for _, dt := range dtypes {
		for _, shape := range [][]int{{5, 3}, {3, 5}, {2, 4, 4}} {
			a := mk(t, dt, randn(12, prod(shape)), shape...)
			p := Pinv(a, -1)
			a64, p64 := a.AsType(array.Float64), p.AsType(array.Float64)
			if d := maxDiff(vals(t, a64.MatMul(p64).MatMul(a64)), vals(t, a64)); d > 10*tol(dt) {
				t.Errorf("%v %v: A·A⁺·A - A = %.3g", dt, shape, d)
			}
			if d := maxDiff(vals(t, p64.MatMul(a64).MatMul(p64)), vals(t, p64)); d > 10*tol(dt) {
				t.Errorf("%v %v: A⁺·A·A⁺ - A⁺ = %.3g", dt, shape, d)
			}
		}
		// Rank 2 from a product of 6×2 and 2×5 factors.
		l, r := randn(13, 12), randn(14, 10)
		a := mk(t, dt, mm(l, r, 6, 2, 5), 6, 5)
		if got := vals(t, MatrixRank(a, -1)); got[0] != 2 {
			t.Errorf("%v: rank %v, want 2", dt, got)
		}
		if got := vals(t, MatrixRank(mk(t, dt, append(eyeF(3), 0, 0, 0), 4, 3), -1)); got[0] != 3 {
			t.Errorf("%v: rank %v, want 3", dt, got)
		}
	}
	if r := MatrixRank(mk(t, array.Float64, []float64{0, 0}, 2), -1); vals(t, r)[0] != 0 {
		t.Errorf("rank of a zero vector = %v", vals(t, r))
	}
	if r := MatrixRank(mk(t, array.Float64, []float64{0, 3}, 2), -1); vals(t, r)[0] != 1 {
		t.Errorf("rank of a vector = %v", vals(t, r))
	}
}

func TestNorm(t *testing.T) {
	v := []float64{3, -4, 0, 1}
	x := mk(t, array.Float64, v, 4)
	for _, c := range []struct {
		ord  Ord
		want float64
	}{
		{Default, math.Sqrt(26)}, {P(2), math.Sqrt(26)}, {P(1), 8}, {Inf, 4}, {NegInf, 0},
		{P(0), 3}, {P(3), math.Cbrt(27 + 64 + 1)}, {P(-1), 0},
	} {
		if got := vals(t, Norm(x, c.ord, false)); math.Abs(got[0]-c.want) > 1e-12 {
			t.Errorf("vector ord %v = %v, want %v", c.ord, got, c.want)
		}
	}
	m := []float64{1, -2, 3, 4, 5, -6}
	a := mk(t, array.Float64, m, 2, 3)
	sv := vals(t, SVDVals(a))
	for _, c := range []struct {
		ord  Ord
		want float64
	}{
		{Default, math.Sqrt(91)}, {Fro, math.Sqrt(91)}, {Nuc, sv[0] + sv[1]}, {P(2), sv[0]}, {P(-2), sv[1]},
		{P(1), 9}, {P(-1), 5}, {Inf, 15}, {NegInf, 6},
	} {
		if got := vals(t, Norm(a, c.ord, false)); math.Abs(got[0]-c.want) > 1e-12 {
			t.Errorf("matrix ord %v = %v, want %v", c.ord, got, c.want)
		}
		// Over swapped axes, a matrix norm is the transpose's.
		tc := map[Ord]Ord{P(1): Inf, Inf: P(1), P(-1): NegInf, NegInf: P(-1)}
		o2, ok := tc[c.ord]
		if !ok {
			o2 = c.ord
		}
		if got := vals(t, Norm(a, o2, false, 1, 0)); math.Abs(got[0]-c.want) > 1e-12 {
			t.Errorf("matrix ord %v over axes (1, 0) = %v, want %v", o2, got, c.want)
		}
	}
	// Along one axis of a batch, with keepDims.
	b := mk(t, array.Float32, randn(15, 2*3*4), 2, 3, 4)
	n := Norm(b, Default, true, 1)
	if s := n.Shape(); len(s) != 3 || s[0] != 2 || s[1] != 1 || s[2] != 4 {
		t.Errorf("keepDims shape %v", s)
	}
	if d := maxDiff(vals(t, n), vals(t, b.Square().Reduce(array.OpSum, true, 1).Sqrt())); d > 1e-6 {
		t.Errorf("axis norm differs by %.3g", d)
	}
	if s := Norm(b, Nuc, true, 0, 2).Shape(); len(s) != 3 || s[0] != 1 || s[1] != 3 || s[2] != 1 {
		t.Errorf("nuclear keepDims shape %v", s)
	}
	if nd := Norm(array.FromSliceOn(cpu.Device(), []int32{3, 4}, 2), Default, false); nd.DType() != array.Float64 || vals(t, nd)[0] != 5 {
		t.Errorf("int norm = %v %v", nd.DType(), vals(t, nd))
	}
	for name, err := range map[string]error{
		"fro of vector": Norm(x, Fro, false).Err(),
		"bad matrix":    Norm(a, P(3), false).Err(),
		"3-D with ord":  Norm(b, P(1), false).Err(),
		"three axes":    Norm(b, Default, false, 0, 1, 2).Err(),
		"axis range":    Norm(b, Default, false, 5).Err(),
	} {
		if err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}
