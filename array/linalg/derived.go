package linalg

import (
	"math"
	"strconv"

	"github.com/gocu-dev/gocu/array"
)

// The functions of this file are compositions of the factorisations with
// array operations, so they run on whichever device holds the array.

// eps is the machine epsilon of a float dtype.
func eps(dt array.DType) float64 {
	if dt == array.Float32 {
		return 0x1p-23
	}
	return 0x1p-52
}

// Pinv returns the Moore-Penrose pseudo-inverse of each matrix of a (...,
// m, n), shape (..., n, m), as numpy.linalg.pinv: from the SVD, dropping
// singular values at most rcond times the largest (rcond < 0 selects
// NumPy's default, 1e-15).
func Pinv(a *array.Array, rcond float64) *array.Array {
	const op = "Pinv"
	x, batch, m, n, err := matrixArg(op, a, false)
	if err != nil {
		return array.Failed(err)
	}
	if rcond < 0 {
		rcond = 1e-15
	}
	if min(m, n) == 0 {
		return array.On(x.Device()).Zeros(x.DType(), concat(batch, n, m)...)
	}
	u, s, vh := SVD(x, false)
	cut := s.Reduce(array.OpMax, true, -1).Mul(rcond)
	inv := array.Where(s.Gt(cut), s.Reciprocal(), 0)
	return vh.SwapAxes(-1, -2).Mul(inv.ExpandDims(-2)).MatMul(u.SwapAxes(-1, -2))
}

// MatrixRank returns the rank of each matrix of a (..., m, n) as int64
// (..., ), as numpy.linalg.matrix_rank: the number of singular values
// above tol, or, for tol < 0, above max(s)·max(m, n)·eps. For a vector or a
// scalar it is 1 unless all elements are 0.
func MatrixRank(a *array.Array, tol float64) *array.Array {
	const op = "MatrixRank"
	dt, err := floatOf(op, a)
	if err != nil {
		return array.Failed(err)
	}
	if a.Ndim() < 2 {
		return promote(a, dt).Ne(0).Any().AsType(array.Int64)
	}
	x, _, m, n, err := matrixArg(op, a, false)
	if err != nil {
		return array.Failed(err)
	}
	s := SVDVals(x)
	if min(m, n) == 0 {
		return s.Sum(-1).AsType(array.Int64) // all ranks 0
	}
	var cut any = tol
	if tol < 0 {
		cut = s.Reduce(array.OpMax, true, -1).Mul(float64(max(m, n)) * eps(x.DType()))
	}
	return s.Gt(cut).AsType(array.Int64).Sum(-1)
}

// Lstsq returns the least-squares solution x of a·x = b, as
// numpy.linalg.lstsq: a is (m, n), b (m,) or (m, k); x is (n,) or (n, k);
// residuals the squared 2-norms of the residual columns, shape (k,) or
// (1,), when rank is n and m > n, else shape (0,); rank the effective rank
// of a and s its singular values. Singular values at most rcond times the
// largest count as zero; rcond < 0 selects NumPy's default, eps·max(m, n).
// Reading rank waits for the device.
func Lstsq(a, b *array.Array, rcond float64) (x, residuals *array.Array, rank int, s *array.Array) {
	const op = "Lstsq"
	failAll := func(err error) (*array.Array, *array.Array, int, *array.Array) {
		f := fail(3, err)
		return f[0], f[1], 0, f[2]
	}
	a, _, m, n, err := matrixArg(op, a, false)
	if err != nil {
		return failAll(err)
	}
	if a.Ndim() != 2 {
		return failAll(shapeErr(op, "a is %v: Lstsq takes one matrix", a.Shape()))
	}
	dt, err := floatOf(op, b)
	if err != nil {
		return failAll(err)
	}
	dt = array.Promote(a.DType(), dt)
	a, b = promote(a, dt), promote(b, dt)
	vec := b.Ndim() == 1
	if vec {
		b = b.ExpandDims(-1)
	}
	if b.Ndim() != 2 || b.Shape()[0] != m {
		return failAll(shapeErr(op, "a is %v and b is %v: b must be (%d,) or (%d, k)", a.Shape(), b.Shape(), m, m))
	}
	if rcond < 0 {
		rcond = eps(dt) * float64(max(m, n))
	}
	k := b.Shape()[1]
	dev := array.On(a.Device())
	if min(m, n) == 0 {
		x = dev.Zeros(dt, n, k)
		s = dev.Zeros(dt, 0)
		residuals = dev.Zeros(dt, 0)
		if m > 0 && n == 0 {
			residuals = b.Square().Sum(0)
		}
	} else {
		var u, vh *array.Array
		u, s, vh = SVD(a, false)
		cut := s.Max().Mul(rcond)
		keep := s.Gt(cut)
		r, err := keep.AsType(array.Int64).Sum().Item()
		if err != nil {
			return failAll(err)
		}
		rank = int(r)
		inv := array.Where(keep, s.Reciprocal(), 0)
		x = vh.T().MatMul(u.T().MatMul(b).Mul(inv.ExpandDims(-1)))
		if rank == n && m > n {
			residuals = b.Sub(a.MatMul(x)).Square().Sum(0)
		} else {
			residuals = dev.Zeros(dt, 0)
		}
	}
	if vec {
		x = x.Squeeze(-1)
		if residuals.Size() > 0 {
			residuals = residuals.Reshape(1)
		}
	}
	return x, residuals, rank, s
}

// Ord is the order of a norm, as numpy.linalg.norm's ord: Default, Fro,
// Nuc, or P(p) for a number (Inf and NegInf are P(±∞)).
type Ord struct {
	kind ordKind
	p    float64
}

type ordKind uint8

const (
	ordDefault ordKind = iota
	ordFro
	ordNuc
	ordP
)

// The named orders.
var (
	// Default is the 2-norm of vectors and the Frobenius norm of matrices.
	Default = Ord{}
	// Fro is the Frobenius norm of matrices.
	Fro = Ord{kind: ordFro}
	// Nuc is the nuclear norm of matrices (the sum of singular values).
	Nuc = Ord{kind: ordNuc}
	// Inf is P(+∞): max|x| of vectors, the largest absolute row sum of
	// matrices.
	Inf = P(math.Inf(1))
	// NegInf is P(-∞): min|x| of vectors, the smallest absolute row sum.
	NegInf = P(math.Inf(-1))
)

// P is the order p: for vectors sum(|x|^p)^(1/p) (0 counts the nonzero
// elements, ±∞ the largest and smallest |x|); for matrices 1 and -1
// (largest and smallest absolute column sum), 2 and -2 (largest and
// smallest singular value), ±∞.
func P(p float64) Ord { return Ord{kind: ordP, p: p} }

// Value returns p for an order made by P, and false for Default, Fro and
// Nuc.
func (o Ord) Value() (p float64, ok bool) { return o.p, o.kind == ordP }

func (o Ord) String() string {
	switch o.kind {
	case ordDefault:
		return "default"
	case ordFro:
		return "fro"
	case ordNuc:
		return "nuc"
	}
	return formatP(o.p)
}

func formatP(p float64) string {
	switch {
	case math.IsInf(p, 1):
		return "inf"
	case math.IsInf(p, -1):
		return "-inf"
	}
	return strconv.FormatFloat(p, 'g', -1, 64)
}

// Norm returns a vector or matrix norm of x, as numpy.linalg.norm. With no
// axes, x is one vector (Default order: the 2-norm of all its elements)
// unless ord is given, when x must be 1-D (a vector norm) or 2-D (a matrix
// norm). One axis is a vector norm along it, two axes a matrix norm over
// them (rows, columns). keepDims keeps the reduced axes with length 1.
// Integer inputs give float64.
func Norm(x *array.Array, ord Ord, keepDims bool, axes ...int) *array.Array {
	const op = "Norm"
	dt, err := floatOf(op, x)
	if err != nil {
		return array.Failed(err)
	}
	x = promote(x, dt)
	nd := x.Ndim()
	if len(axes) == 0 {
		switch {
		case ord.kind == ordDefault:
			all := make([]int, nd)
			for i := range all {
				all[i] = i
			}
			if nd == 0 {
				return x.Abs()
			}
			return x.Square().Reduce(array.OpSum, keepDims, all...).Sqrt()
		case nd == 1:
			axes = []int{0}
		case nd == 2:
			axes = []int{0, 1}
		default:
			return array.Failed(shapeErr(op, "ord %v needs a 1-D or 2-D array or explicit axes, not %d-D", ord, nd))
		}
	}
	for i, ax := range axes {
		if ax < -nd || ax >= nd {
			return array.Failed(errorf(op, []error{array.ErrAxis}, "axis %d out of range for %d-D array", ax, nd))
		}
		if ax < 0 {
			axes[i] = ax + nd
		}
	}
	switch len(axes) {
	case 1:
		return vectorNorm(op, x, ord, keepDims, axes[0])
	case 2:
		if axes[0] == axes[1] {
			return array.Failed(errorf(op, []error{array.ErrAxis}, "duplicate axes %v", axes))
		}
		return matrixNorm(op, x, ord, keepDims, axes[0], axes[1])
	}
	return array.Failed(errorf(op, []error{array.ErrAxis}, "%d axes given: a norm is over 1 (vector) or 2 (matrix) axes", len(axes)))
}

func vectorNorm(op string, x *array.Array, ord Ord, keep bool, ax int) *array.Array {
	switch ord.kind {
	case ordDefault:
		return x.Square().Reduce(array.OpSum, keep, ax).Sqrt()
	case ordFro, ordNuc:
		return array.Failed(valueErr(op, "invalid norm order %v for vectors", ord))
	}
	switch p := ord.p; {
	case math.IsInf(p, 1):
		return x.Abs().Reduce(array.OpMax, keep, ax)
	case math.IsInf(p, -1):
		return x.Abs().Reduce(array.OpMin, keep, ax)
	case p == 0:
		return x.Ne(0).AsType(x.DType()).Reduce(array.OpSum, keep, ax)
	case p == 1:
		return x.Abs().Reduce(array.OpSum, keep, ax)
	case p == 2:
		return x.Square().Reduce(array.OpSum, keep, ax).Sqrt()
	case math.IsNaN(p):
		return array.Failed(valueErr(op, "norm order NaN"))
	default:
		return x.Abs().Pow(p).Reduce(array.OpSum, keep, ax).Pow(1 / p)
	}
}

func matrixNorm(op string, x *array.Array, ord Ord, keep bool, r, c int) *array.Array {
	squeeze := func(y *array.Array) *array.Array {
		if keep {
			return y
		}
		return y.Squeeze(r, c)
	}
	svals := func() *array.Array {
		// The order of the two axes does not matter: a matrix and its
		// transpose have the same singular values.
		return SVDVals(x.MoveAxis(max(r, c), -1).MoveAxis(min(r, c), -2))
	}
	// reduced puts back the two removed axes for keepDims.
	reduced := func(y *array.Array) *array.Array {
		if !keep {
			return y
		}
		return y.ExpandDims(min(r, c)).ExpandDims(max(r, c))
	}
	switch ord.kind {
	case ordDefault, ordFro:
		return squeeze(x.Square().Reduce(array.OpSum, true, r, c).Sqrt())
	case ordNuc:
		return reduced(svals().Sum(-1))
	}
	switch p := ord.p; {
	case p == 2:
		return reduced(svals().Max(-1))
	case p == -2:
		return reduced(svals().Min(-1))
	case p == 1:
		return squeeze(x.Abs().Reduce(array.OpSum, true, r).Reduce(array.OpMax, true, c))
	case p == -1:
		return squeeze(x.Abs().Reduce(array.OpSum, true, r).Reduce(array.OpMin, true, c))
	case math.IsInf(p, 1):
		return squeeze(x.Abs().Reduce(array.OpSum, true, c).Reduce(array.OpMax, true, r))
	case math.IsInf(p, -1):
		return squeeze(x.Abs().Reduce(array.OpSum, true, c).Reduce(array.OpMin, true, r))
	}
	return array.Failed(valueErr(op, "invalid norm order %v for matrices", ord))
}
