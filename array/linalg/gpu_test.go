package linalg

import (
	"errors"
	"math"
	"sync"
	"testing"

	"github.com/gocu-dev/gocu"
	"github.com/gocu-dev/gocu/array"
)

var gpuOnce = sync.OnceValues(func() (*array.Maker, error) {
	if err := gocu.GPUUsable(); err != nil {
		return nil, err
	}
	return array.GPU(0)
})

// testGPU returns GPU 0, or skips the test with the reason.
func testGPU(t testing.TB) *array.Maker {
	t.Helper()
	d, err := gpuOnce()
	if err != nil {
		t.Skipf("no usable GPU (%v): the cuSOLVER backend is not tested", err)
	}
	return d
}

// back copies a GPU result to the CPU for checking.
func back(t *testing.T, x *array.Array) *array.Array {
	t.Helper()
	if err := x.Err(); err != nil {
		t.Fatal(err)
	}
	return x.To(cpu.Device())
}

// gpuShapes cover one matrix (the unbatched routines), small batches (the
// batched routines) and a batch of larger matrices (a loop of calls).
var gpuShapes = [][]int{{7, 7}, {5, 4, 4}, {3, 40, 40}, {2, 70, 70}, {1, 33, 33}}

func TestGPUSolveInvDet(t *testing.T) {
	g := testGPU(t)
	for _, dt := range dtypes {
		for _, shape := range gpuShapes {
			n := shape[len(shape)-1]
			av := randn(50, prod(shape))
			for i := 0; i < len(av); i += n * n {
				for j := range n {
					av[i+j*n+j] += 2 * float64(n)
				}
			}
			a := mk(t, dt, av, shape...)
			bshape := append(append([]int{}, shape[:len(shape)-1]...), 3)
			b := mk(t, dt, randn(51, prod(bshape)), bshape...)
			ga, gb := a.To(g.Device()), b.To(g.Device())

			x := back(t, Solve(ga, gb))
			r := a.AsType(array.Float64).MatMul(x.AsType(array.Float64))
			if d := maxDiff(vals(t, r), vals(t, b.AsType(array.Float64))); d > tol(dt) {
				t.Errorf("%v %v: Solve residual %.3g", dt, shape, d)
			}
			// A vector right-hand side is one-dimensional only (NumPy 2):
			// a batch of vectors is a stack of matrices of one column.
			xv := back(t, Solve(ga, gb.Slice(array.Ellipsis, array.S(0, 1))))
			if d := maxDiff(vals(t, xv), vals(t, x.Slice(array.Ellipsis, array.S(0, 1)))); d > tol(dt) {
				t.Errorf("%v %v: one-column Solve differs by %.3g", dt, shape, d)
			}
			if len(shape) == 2 {
				xv := back(t, Solve(ga, gb.Slice(array.All, array.Idx(0))))
				if d := maxDiff(vals(t, xv), vals(t, x.Slice(array.All, array.Idx(0)))); d > tol(dt) {
					t.Errorf("%v %v: vector Solve differs by %.3g", dt, shape, d)
				}
			}

			inv := back(t, Inv(ga))
			id := a.AsType(array.Float64).MatMul(inv.AsType(array.Float64))
			if d := maxDiff(vals(t, id), vals(t, array.FromSliceOn(cpu.Device(), eyeF(n), n, n).BroadcastTo(shape...))); d > tol(dt) {
				t.Errorf("%v %v: A·inv(A) - I = %.3g", dt, shape, d)
			}

			s, l := Slogdet(ga)
			ws, wl := Slogdet(a)
			if maxDiff(vals(t, back(t, s)), vals(t, ws)) != 0 || maxDiff(vals(t, back(t, l)), vals(t, wl)) > 10*tol(dt) {
				t.Errorf("%v %v: Slogdet %v %v, want %v %v", dt, shape, vals(t, back(t, s)), vals(t, back(t, l)), vals(t, ws), vals(t, wl))
			}
		}
	}
}

func TestGPUErrors(t *testing.T) {
	g := testGPU(t)
	sing := array.FromSliceOn(g.Device(), []float64{1, 0, 0, 1, 1, 2, 2, 4}, 2, 2, 2)
	if err := Inv(sing).Err(); !errors.Is(err, ErrSingular) || !contains(err.Error(), "[1]") {
		t.Errorf("Inv of a singular matrix: %v", err)
	}
	one := sing.Slice(array.Idx(1))
	if err := Solve(one, array.FromSliceOn(g.Device(), []float64{1, 1}, 2)).Err(); !errors.Is(err, ErrSingular) {
		t.Errorf("Solve: %v", err)
	}
	if err := Cholesky(array.FromSliceOn(g.Device(), []float32{1, 2, 2, 1}, 2, 2)).Err(); !errors.Is(err, ErrNotPositiveDefinite) {
		t.Errorf("Cholesky: %v", err)
	}
	s, _ := Slogdet(one)
	if v := vals(t, back(t, s)); v[0] != 0 {
		t.Errorf("sign of a singular matrix = %v", v)
	}
	defer SetCheckInfo(SetCheckInfo(false))
	if err := Inv(sing).Err(); err != nil {
		t.Errorf("Inv without the info check: %v", err)
	}
}

func TestGPUCholeskyEigh(t *testing.T) {
	g := testGPU(t)
	for _, dt := range dtypes {
		for _, shape := range gpuShapes {
			nb, n := prod(shape[:len(shape)-2]), shape[len(shape)-1]
			a := mk(t, dt, spd(52, nb, n), shape...)
			ga := a.To(g.Device())
			l := back(t, Cholesky(ga))
			if d := maxDiff(vals(t, l), vals(t, Cholesky(a))); d > 10*tol(dt) {
				t.Errorf("%v %v: Cholesky differs from the CPU's by %.3g", dt, shape, d)
			}
			// Garbage above the diagonal must not be read.
			dirty := array.Where(lowerMask(g, n), ga, 1e3)
			if d := maxDiff(vals(t, back(t, Cholesky(dirty))), vals(t, l)); d > 0 {
				t.Errorf("%v %v: Cholesky read the upper triangle (%.3g)", dt, shape, d)
			}
			w, v := Eigh(ga)
			w, v = back(t, w), back(t, v)
			a64, v64, w64 := a.AsType(array.Float64), v.AsType(array.Float64), w.AsType(array.Float64)
			if d := maxDiff(vals(t, a64.MatMul(v64)), vals(t, v64.Mul(w64.ExpandDims(-2)))); d > 20*tol(dt) {
				t.Errorf("%v %v: A·V - V·Λ = %.3g", dt, shape, d)
			}
			if d := maxDiff(vals(t, w), vals(t, Eigvalsh(a))); d > 20*tol(dt) {
				t.Errorf("%v %v: eigenvalues differ from the CPU's by %.3g", dt, shape, d)
			}
			if d := maxDiff(vals(t, back(t, Eigvalsh(dirty))), vals(t, w)); d > 20*tol(dt) {
				t.Errorf("%v %v: Eigvalsh read the upper triangle (%.3g)", dt, shape, d)
			}
		}
	}
}

func TestGPUQRSVD(t *testing.T) {
	g := testGPU(t)
	for _, dt := range dtypes {
		for _, shape := range [][]int{{9, 5}, {5, 9}, {6, 6}, {4, 7, 3}, {3, 3, 8}, {2, 50, 40}, {2, 40, 50}} {
			m, n := shape[len(shape)-2], shape[len(shape)-1]
			a := mk(t, dt, randn(53, prod(shape)), shape...)
			ga := a.To(g.Device())
			for _, mode := range []QRMode{Reduced, Complete} {
				q, r := QR(ga, mode)
				q, r = back(t, q), back(t, r)
				q64, r64 := q.AsType(array.Float64), r.AsType(array.Float64)
				if d := maxDiff(vals(t, q64.MatMul(r64)), vals(t, a.AsType(array.Float64))); d > 10*tol(dt) {
					t.Errorf("%v %v mode %d: QR - A = %.3g", dt, shape, mode, d)
				}
				c := q.Shape()[q.Ndim()-1]
				if d := maxDiff(vals(t, q64.SwapAxes(-1, -2).MatMul(q64)), vals(t, array.FromSliceOn(cpu.Device(), eyeF(c), c, c).BroadcastTo(concat(shape[:len(shape)-2], c, c)...))); d > 10*tol(dt) {
					t.Errorf("%v %v mode %d: QᵀQ - I = %.3g", dt, shape, mode, d)
				}
				_, rc := QR(a, mode)
				// R is unique up to the signs of its rows.
				if d := maxDiff(vals(t, r64.Abs()), vals(t, rc.AsType(array.Float64).Abs())); d > 10*tol(dt) {
					t.Errorf("%v %v mode %d: |R| differs from the CPU's by %.3g", dt, shape, mode, d)
				}
			}
			for _, full := range []bool{false, true} {
				u, s, vh := SVD(ga, full)
				u, s, vh = back(t, u), back(t, s), back(t, vh)
				k := min(m, n)
				uk, vk := u.AsType(array.Float64), vh.AsType(array.Float64)
				if full {
					uk = uk.Slice(array.Ellipsis, array.S(0, k))
					vk = vk.Slice(array.Ellipsis, array.S(0, k), array.All)
				}
				rec := uk.Mul(s.AsType(array.Float64).ExpandDims(-2)).MatMul(vk)
				if d := maxDiff(vals(t, rec), vals(t, a.AsType(array.Float64))); d > 10*tol(dt) {
					t.Errorf("%v %v full %v: U·S·Vᵀ - A = %.3g", dt, shape, full, d)
				}
				if d := maxDiff(vals(t, s), vals(t, SVDVals(a))); d > 10*tol(dt) {
					t.Errorf("%v %v: singular values differ from the CPU's by %.3g", dt, shape, d)
				}
				wu, wv := m, n
				if !full {
					wu, wv = k, k
				}
				if u.Shape()[u.Ndim()-1] != wu || vh.Shape()[vh.Ndim()-2] != wv {
					t.Errorf("%v %v full %v: u %v vh %v", dt, shape, full, u.Shape(), vh.Shape())
				}
			}
		}
	}
}

func TestGPUComposed(t *testing.T) {
	g := testGPU(t)
	a := mk(t, array.Float32, randn(60, 2*3*5*4), 2, 3, 5, 4)
	b := mk(t, array.Float32, randn(61, 2*3*6*4), 2, 3, 6, 4)
	e := back(t, Einsum("bhqd,bhkd->bhqk", a.To(g.Device()), b.To(g.Device())))
	if d := maxDiff(vals(t, e), vals(t, Einsum("bhqd,bhkd->bhqk", a, b))); d > 1e-5 {
		t.Errorf("Einsum differs from the CPU's by %.3g", d)
	}
	m := mk(t, array.Float64, randn(62, 6*4), 6, 4)
	gm := m.To(g.Device())
	if d := maxDiff(vals(t, back(t, Pinv(gm, -1))), vals(t, Pinv(m, -1))); d > 1e-10 {
		t.Errorf("Pinv differs by %.3g", d)
	}
	for _, o := range []Ord{Default, Nuc, P(2), P(-2), P(1), Inf} {
		if d := maxDiff(vals(t, back(t, Norm(gm, o, false))), vals(t, Norm(m, o, false))); d > 1e-10 {
			t.Errorf("Norm %v differs by %.3g", o, d)
		}
	}
	if d := maxDiff(vals(t, back(t, Det(gm.Slice(array.S(0, 4))))), vals(t, Det(m.Slice(array.S(0, 4))))); d > 1e-10 {
		t.Errorf("Det differs by %.3g", d)
	}
}

// The Hilbert matrix of order 10 on the GPU: backward-stable residuals and
// reconstructions, as on the CPU.
func TestGPUIllConditioned(t *testing.T) {
	g := testGPU(t)
	const n = 10
	h := hilbert(n)
	a := array.FromSliceOn(g.Device(), h, n, n)
	b := array.FromSliceOn(g.Device(), randn(71, n), n)
	x := vals(t, back(t, Solve(a, b)))
	bv := vals(t, back(t, b))
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
	l := back(t, Cholesky(a))
	if d := maxDiff(vals(t, l.MatMul(l.T())), h); d > 1e-15 {
		t.Errorf("L·Lᵀ - H = %.3g", d)
	}
	u, s, vh := SVD(a, false)
	u, s, vh = back(t, u), back(t, s), back(t, vh)
	if d := maxDiff(vals(t, u.Mul(s.ExpandDims(0)).MatMul(vh)), h); d > 1e-14 {
		t.Errorf("U·S·Vᵀ - H = %.3g", d)
	}
	w, v := Eigh(a)
	w, v = back(t, w), back(t, v)
	if d := maxDiff(vals(t, v.Mul(w.ExpandDims(0)).MatMul(v.T())), h); d > 1e-14 {
		t.Errorf("V·Λ·Vᵀ - H = %.3g", d)
	}
}

// One matrix against a stack of right-hand sides is factored once.
func TestGPUSolveSharedMatrix(t *testing.T) {
	g := testGPU(t)
	a := wellConditionedHost(t, 6)
	b := mk(t, array.Float64, randn(72, 5*6*2), 5, 6, 2)
	x := back(t, Solve(a.To(g.Device()), b.To(g.Device())))
	if d := maxDiff(vals(t, a.MatMul(x)), vals(t, b)); d > 1e-12 {
		t.Errorf("residual %.3g", d)
	}
}

func wellConditionedHost(t *testing.T, n int) *array.Array {
	v := randn(73, n*n)
	for i := range n {
		v[i*n+i] += float64(n)
	}
	return mk(t, array.Float64, v, n, n)
}

// Both SVD drivers give SVDs: wide, tall, square and batched matrices.
func TestGPUSVDDrivers(t *testing.T) {
	g := testGPU(t)
	for _, drv := range []SVDDriver{Jacobi, QRIteration} {
		prev := SetSVDDriver(drv)
		for _, dt := range dtypes {
			for _, shape := range [][]int{{9, 5}, {5, 9}, {6, 6}, {3, 7, 4}, {2, 4, 7}} {
				m, n := shape[len(shape)-2], shape[len(shape)-1]
				k := min(m, n)
				a := mk(t, dt, randn(80, prod(shape)), shape...)
				for _, full := range []bool{false, true} {
					u, s, vh := SVD(a.To(g.Device()), full)
					u, s, vh = back(t, u), back(t, s), back(t, vh)
					wu, wv := k, k
					if full {
						wu, wv = m, n
					}
					if u.Shape()[u.Ndim()-1] != wu || u.Shape()[u.Ndim()-2] != m || vh.Shape()[vh.Ndim()-2] != wv || vh.Shape()[vh.Ndim()-1] != n {
						t.Fatalf("driver %d %v %v full %v: u %v vh %v", drv, dt, shape, full, u.Shape(), vh.Shape())
					}
					uk := u.AsType(array.Float64).Slice(array.Ellipsis, array.S(0, k))
					vk := vh.AsType(array.Float64).Slice(array.Ellipsis, array.S(0, k), array.All)
					rec := uk.Mul(s.AsType(array.Float64).ExpandDims(-2)).MatMul(vk)
					if d := maxDiff(vals(t, rec), vals(t, a.AsType(array.Float64))); d > 10*tol(dt) {
						t.Errorf("driver %d %v %v full %v: U·S·Vᵀ - A = %.3g", drv, dt, shape, full, d)
					}
					u64 := u.AsType(array.Float64)
					c := u.Shape()[u.Ndim()-1]
					if d := maxDiff(vals(t, u64.SwapAxes(-1, -2).MatMul(u64)), vals(t, array.FromSliceOn(cpu.Device(), eyeF(c), c, c).BroadcastTo(concat(shape[:len(shape)-2], c, c)...))); d > 10*tol(dt) {
						t.Errorf("driver %d %v %v full %v: UᵀU - I = %.3g", drv, dt, shape, full, d)
					}
				}
				if d := maxDiff(vals(t, back(t, SVDVals(a.To(g.Device())))), vals(t, SVDVals(a))); d > 10*tol(dt) {
					t.Errorf("driver %d %v %v: singular values differ by %.3g", drv, dt, shape, d)
				}
			}
		}
		SetSVDDriver(prev)
	}
}
