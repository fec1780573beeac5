package linalg

import (
	"github.com/gocu-dev/gocu/array"
)

// Solve returns x with a·x = b, as numpy.linalg.solve: a is (..., n, n);
// b is (n,) (solved against every matrix of the stack, giving (..., n)) or
// (..., n, k), whose batch axes broadcast with a's. A singular matrix is
// an error matching ErrSingular.
func Solve(a, b *array.Array) *array.Array {
	const op = "Solve"
	a, batch, n, _, err := matrixArg(op, a, true)
	if err != nil {
		return array.Failed(err)
	}
	dt, err := floatOf(op, b)
	if err != nil {
		return array.Failed(err)
	}
	dt = array.Promote(a.DType(), dt)
	a, b = promote(a, dt), promote(b, dt)
	vec := b.Ndim() == 1
	if vec {
		b = b.ExpandDims(-1)
	}
	bs := b.Shape()
	if b.Ndim() < 2 || bs[len(bs)-2] != n {
		return array.Failed(shapeErr(op, "a is %v and b is %v: b must have %d rows", a.Shape(), b.Shape(), n))
	}
	k := bs[len(bs)-1]
	if !vec {
		batch, err = broadcast(op, batch, bs[:len(bs)-2])
		if err != nil {
			return array.Failed(err)
		}
	}
	var x *array.Array
	if nb := prod(batch); nb > 1 && prod(a.Shape()[:a.Ndim()-2]) == 1 && n > 0 && k > 0 {
		// One matrix for a stack of right-hand sides: factor it once and
		// solve for all their columns together.
		cols := b.BroadcastTo(concat(batch, n, k)...).Reshape(nb, n, k).Transpose(1, 0, 2).Reshape(n, nb*k)
		x = solveOne(op, a.Reshape(n, n), cols, nil, n, nb*k).
			Reshape(n, nb, k).Transpose(1, 0, 2).Reshape(concat(batch, n, k)...)
	} else {
		x = solveOne(op, a.BroadcastTo(concat(batch, n, n)...), b.BroadcastTo(concat(batch, n, k)...), batch, n, k)
	}
	if vec {
		x = x.Squeeze(-1)
	}
	return x
}

// solveOne solves the (batched) systems of a and b, already of shapes
// batch+(n, n) and batch+(n, k), on their device.
func solveOne(op string, a, b *array.Array, batch []int, n, k int) *array.Array {
	if isGPU(a) {
		return gpuSolve(op, a, b, batch, n, k)
	}
	return cpuSolveArrays(op, a, b, batch, n, k)
}

func cpuSolveArrays(op string, a, b *array.Array, batch []int, n, k int) *array.Array {
	ah, err := host(a)
	if err != nil {
		return array.Failed(err)
	}
	bh, err := host(b)
	if err != nil {
		return array.Failed(err)
	}
	if i := firstFailure(cpuSolve(ah, bh, prod(batch), n, k)); i >= 0 {
		return array.Failed(numErr(op, ErrSingular, batch, i, "singular matrix"))
	}
	return fromHost(a.Device(), a.DType(), bh, concat(batch, n, k)...)
}

// broadcast returns the broadcast of two batch shapes.
func broadcast(op string, a, b []int) ([]int, error) {
	n := max(len(a), len(b))
	out := make([]int, n)
	for i := range n {
		x, y := 1, 1
		if j := len(a) - n + i; j >= 0 {
			x = a[j]
		}
		if j := len(b) - n + i; j >= 0 {
			y = b[j]
		}
		switch {
		case x == y || y == 1:
			out[i] = x
		case x == 1:
			out[i] = y
		default:
			return nil, shapeErr(op, "batch shapes %v and %v do not broadcast", a, b)
		}
	}
	return out, nil
}

// Inv returns the inverse of each matrix of a (..., n, n), as
// numpy.linalg.inv. A singular matrix is an error matching ErrSingular.
func Inv(a *array.Array) *array.Array {
	const op = "Inv"
	a, batch, n, _, err := matrixArg(op, a, true)
	if err != nil {
		return array.Failed(err)
	}
	if isGPU(a) {
		return gpuInv(op, a, batch, n)
	}
	return cpuInvArrays(op, a, batch, n)
}

func cpuInvArrays(op string, a *array.Array, batch []int, n int) *array.Array {
	ah, err := host(a)
	if err != nil {
		return array.Failed(err)
	}
	if i := firstFailure(cpuInv(ah, prod(batch), n)); i >= 0 {
		return array.Failed(numErr(op, ErrSingular, batch, i, "singular matrix"))
	}
	return fromHost(a.Device(), a.DType(), ah, concat(batch, n, n)...)
}

// Slogdet returns the sign and the natural logarithm of the absolute value
// of the determinant of each matrix of a (..., n, n), as
// numpy.linalg.slogdet: sign 0 and logabsdet -Inf for a singular matrix.
func Slogdet(a *array.Array) (sign, logabsdet *array.Array) {
	const op = "Slogdet"
	a, batch, n, _, err := matrixArg(op, a, true)
	if err != nil {
		f := fail(2, err)
		return f[0], f[1]
	}
	if isGPU(a) {
		return gpuSlogdet(op, a, batch, n)
	}
	return cpuSlogdetArrays(a, batch, n)
}

func cpuSlogdetArrays(a *array.Array, batch []int, n int) (sign, logabsdet *array.Array) {
	ah, err := host(a)
	if err != nil {
		f := fail(2, err)
		return f[0], f[1]
	}
	s, l := cpuSlogdet(ah, prod(batch), n)
	return fromHost(a.Device(), a.DType(), s, batch...), fromHost(a.Device(), a.DType(), l, batch...)
}

// Det returns the determinant of each matrix of a (..., n, n), as
// numpy.linalg.det (sign·exp(logabsdet), so it under- and overflows only
// where the determinant itself does).
func Det(a *array.Array) *array.Array {
	s, l := Slogdet(a)
	return s.Mul(l.Exp())
}

// Cholesky returns the lower-triangular L with a = L·Lᵀ for each matrix
// of a (..., n, n), as numpy.linalg.cholesky: only the lower triangle of
// a is read. A matrix that is not positive definite is an error matching
// ErrNotPositiveDefinite.
func Cholesky(a *array.Array) *array.Array {
	const op = "Cholesky"
	a, batch, n, _, err := matrixArg(op, a, true)
	if err != nil {
		return array.Failed(err)
	}
	if isGPU(a) {
		return gpuCholesky(op, a, batch, n)
	}
	return cpuCholeskyArrays(op, a, batch, n)
}

func cpuCholeskyArrays(op string, a *array.Array, batch []int, n int) *array.Array {
	ah, err := host(a)
	if err != nil {
		return array.Failed(err)
	}
	if i := firstFailure(cpuCholesky(ah, prod(batch), n)); i >= 0 {
		return array.Failed(numErr(op, ErrNotPositiveDefinite, batch, i, "matrix is not positive definite"))
	}
	return fromHost(a.Device(), a.DType(), ah, concat(batch, n, n)...)
}

// QRMode selects QR's outputs, as numpy.linalg.qr's mode.
type QRMode int

// The modes. For a of shape (..., m, n) and k = min(m, n):
const (
	Reduced  QRMode = iota // q (..., m, k), r (..., k, n)
	Complete               // q (..., m, m), r (..., m, n)
	ROnly                  // r (..., k, n) only; q is nil
)

// QR returns the factorisation a = q·r of each matrix of a (..., m, n),
// q with orthonormal columns and r upper triangular, as numpy.linalg.qr
// (the signs of the rows of r are LAPACK's, as NumPy's).
func QR(a *array.Array, mode QRMode) (q, r *array.Array) {
	const op = "QR"
	if mode < Reduced || mode > ROnly {
		f := fail(2, valueErr(op, "unknown mode %d", mode))
		return f[0], f[1]
	}
	a, batch, m, n, err := matrixArg(op, a, false)
	if err != nil {
		f := fail(2, err)
		return f[0], f[1]
	}
	if isGPU(a) {
		return gpuQR(op, a, batch, m, n, mode)
	}
	return cpuQRArrays(a, batch, m, n, mode)
}

func cpuQRArrays(a *array.Array, batch []int, m, n int, mode QRMode) (q, r *array.Array) {
	ah, err := host(a)
	if err != nil {
		f := fail(2, err)
		return f[0], f[1]
	}
	k := min(m, n)
	qh, rh := cpuQR(ah, prod(batch), m, n, mode == Complete, mode != ROnly)
	qc, rr := k, k
	if mode == Complete {
		qc, rr = m, m
	}
	r = fromHost(a.Device(), a.DType(), rh, concat(batch, rr, n)...)
	if mode != ROnly {
		q = fromHost(a.Device(), a.DType(), qh, concat(batch, m, qc)...)
	}
	return q, r
}

// SVD returns the singular value decomposition a = u·diag(s)·vh of each
// matrix of a (..., m, n), as numpy.linalg.svd: s (..., k) descending, k =
// min(m, n); u (..., m, m) and vh (..., n, n) when full, else (..., m, k)
// and (..., k, n). An SVD that does not converge is an error matching
// ErrNoConvergence.
func SVD(a *array.Array, full bool) (u, s, vh *array.Array) {
	f := svd("SVD", a, full, true)
	return f[0], f[1], f[2]
}

// SVDVals returns the singular values of each matrix of a (..., m, n),
// descending, as numpy.linalg.svdvals.
func SVDVals(a *array.Array) *array.Array { return svd("SVDVals", a, false, false)[1] }

func svd(op string, a *array.Array, full, uv bool) []*array.Array {
	a, batch, m, n, err := matrixArg(op, a, false)
	if err != nil {
		return fail(3, err)
	}
	if isGPU(a) {
		return gpuSVD(op, a, batch, m, n, full, uv)
	}
	return cpuSVDArrays(op, a, batch, m, n, full, uv)
}

func cpuSVDArrays(op string, a *array.Array, batch []int, m, n int, full, uv bool) []*array.Array {
	ah, err := host(a)
	if err != nil {
		return fail(3, err)
	}
	k := min(m, n)
	uh, sh, vth, bad := cpuSVD(ah, prod(batch), m, n, full, uv)
	if i := firstFailure(bad); i >= 0 {
		return fail(3, numErr(op, ErrNoConvergence, batch, i, "SVD did not converge"))
	}
	dev, dt := a.Device(), a.DType()
	out := []*array.Array{nil, fromHost(dev, dt, sh, concat(batch, k)...), nil}
	if uv {
		uc, vr := k, k
		if full {
			uc, vr = m, n
		}
		out[0] = fromHost(dev, dt, uh, concat(batch, m, uc)...)
		out[2] = fromHost(dev, dt, vth, concat(batch, vr, n)...)
	}
	return out
}

// Eigh returns the eigenvalues w (..., n), ascending, and the orthonormal
// eigenvectors v (..., n, n), column v[..., :, i] for w[..., i], of each
// symmetric matrix of a, as numpy.linalg.eigh: only the lower triangle of
// a is read.
func Eigh(a *array.Array) (w, v *array.Array) {
	f := eigh("Eigh", a, true)
	return f[0], f[1]
}

// Eigvalsh returns the eigenvalues of each symmetric matrix of a,
// ascending, as numpy.linalg.eigvalsh.
func Eigvalsh(a *array.Array) *array.Array { return eigh("Eigvalsh", a, false)[0] }

func eigh(op string, a *array.Array, vectors bool) []*array.Array {
	a, batch, n, _, err := matrixArg(op, a, true)
	if err != nil {
		return fail(2, err)
	}
	if isGPU(a) {
		return gpuEigh(op, a, batch, n, vectors)
	}
	return cpuEighArrays(op, a, batch, n, vectors)
}

func cpuEighArrays(op string, a *array.Array, batch []int, n int, vectors bool) []*array.Array {
	ah, err := host(a)
	if err != nil {
		return fail(2, err)
	}
	w, bad := cpuEigh(ah, prod(batch), n, vectors)
	if i := firstFailure(bad); i >= 0 {
		return fail(2, numErr(op, ErrNoConvergence, batch, i, "eigenvalues did not converge"))
	}
	out := []*array.Array{fromHost(a.Device(), a.DType(), w, concat(batch, n)...), nil}
	if vectors {
		out[1] = fromHost(a.Device(), a.DType(), ah, concat(batch, n, n)...)
	}
	return out
}
