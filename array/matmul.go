package array

import (
	"runtime"

	"github.com/gocu-dev/gocu/array/internal/backend"
)

// MatMul returns the matrix product a·b with NumPy's matmul rules: 2-D
// operands multiply as matrices; higher ranks are stacks of matrices in the
// last two axes whose leading (batch) axes broadcast; a 1-D a is a row
// vector and a 1-D b a column vector, whose added axis is removed from the
// result. The operands promote to a common dtype. Transposed views are
// passed to the engine as transpose flags, not copied.
//
// float16 and bfloat16 products accumulate in float32 and round the result
// to the operands' dtype (tensor cores through cuBLAS on a GPU). int8 by
// int8 gives int32 (as torch._int_mm; NumPy would give int8), computed
// exactly in int32 (IMMA tensor cores through cuBLASLt on a GPU, see
// ScaledMatMul for their layout). 8-bit floats multiply only through
// ScaledMatMul; operands without a promotion rule (an 8-bit float with
// another dtype) are an ErrDType error.
func (a *Array) MatMul(b *Array) *Array {
	const op = "MatMul"
	defer runtime.KeepAlive(a)
	defer runtime.KeepAlive(b)
	if _, err := a.use(op); err != nil {
		return failed(err)
	}
	if _, err := b.use(op); err != nil {
		return failed(err)
	}
	if a.dt.IsComplex() || b.dt.IsComplex() {
		return complexMatMul(a, b)
	}
	dt := Promote(a.dt, b.dt)
	switch {
	case !dt.Valid():
		return failed(noPromotion(op, a.dt, b.dt))
	case dt.IsFloat8():
		return failed(errorf(op, ErrDType, "%v operands multiply through ScaledMatMul, with per-tensor scales and an output dtype (as torch._scaled_mm)", dt))
	case dt == Int8:
		return lowpMatMul(op, a, b, Int8, Int8, Int32, nil, nil)
	case dt.IsStorageInt():
		// In the compute type, whose wrapped sums keep the low bits.
		c := dt.Compute()
		x, y := a.AsType(c), b.AsType(c)
		defer closeAll(x, y)
		return narrowResult(matmul(op, x, y, c, c, c, nil, nil), dt)
	}
	return matmul(op, a, b, dt, dt, dt, nil, nil)
}

// matmul is the product of a and b converted to da and db, into an array
// of dtype out, with the scales of an 8-bit float product.
func matmul(op string, a, b *Array, da, db, out DType, sa, sb *Array) *Array {
	if a.dev != b.dev {
		return failed(errorf(op, ErrDevice, "arrays on different devices (%v and %v)", a.dev, b.dev))
	}
	if len(a.shape) == 0 || len(b.shape) == 0 {
		return failed(errorf(op, ErrShape, "shapes %s and %s: a 0-d operand has no matrix dimensions", shapeString(a.shape), shapeString(b.shape)))
	}
	as, bs := a.shape, b.shape
	if len(as) == 1 {
		as = []int{1, as[0]}
	}
	if len(bs) == 1 {
		bs = []int{bs[0], 1}
	}
	m, k, k2, n := as[len(as)-2], as[len(as)-1], bs[len(bs)-2], bs[len(bs)-1]
	if k != k2 {
		return failed(errorf(op, ErrShape, "shapes %s and %s not aligned: %d (dim %d) != %d (dim %d)",
			shapeString(a.shape), shapeString(b.shape), k, len(a.shape)-1, k2, max(len(b.shape)-2, 0)))
	}
	batch, err := broadcastShapes(op, as[:len(as)-2], bs[:len(bs)-2])
	if err != nil {
		return failed(errorf(op, ErrShape, "shapes %s and %s: batch dimensions cannot be broadcast", shapeString(a.shape), shapeString(b.shape)))
	}
	full := append(append([]int{}, batch...), m, n)
	if err := checkShape(op, out, full); err != nil {
		return failed(err)
	}
	A, freeA, err := matOperand(op, a, da, batch, m, k)
	if err != nil {
		return failed(err)
	}
	defer freeA()
	B, freeB, err := matOperand(op, b, db, batch, k, n)
	if err != nil {
		return failed(err)
	}
	defer freeB()
	var scales [2]backend.Operand
	for i, s := range []*Array{sa, sb} {
		if s == nil {
			continue
		}
		ss, err := s.force(op)
		if err != nil {
			return failed(err)
		}
		scales[i] = backend.Operand{Buf: ss.st.buf, Layout: ss.lay}
		defer runtime.KeepAlive(s)
	}
	st, err := a.dev.alloc(op, out, full)
	if err != nil {
		return failed(err)
	}
	err = a.dev.be.MatMul(&backend.MatMul{A: A, B: B, C: backend.Matrix{Buf: st.buf, RowStride: n, ColStride: 1},
		Batch: batch, M: m, N: n, K: k, Precision: backend.Precision(a.dev.MatMulPrecision()), ScaleA: scales[0], ScaleB: scales[1]})
	if err != nil {
		st.release()
		return failed(deviceErr(op, err))
	}
	res := append([]int{}, batch...)
	if len(a.shape) > 1 {
		res = append(res, m)
	}
	if len(b.shape) > 1 {
		res = append(res, n)
	}
	return a.dev.wrap(st, backend.Contiguous(res), out)
}

// matOperand returns x (cast to dt) as a BLAS-compatible matrix operand of
// rows×cols matrices broadcast over batch, copying only when its strides
// are not usable as they are (negative, zero or non-unit in both axes).
func matOperand(op string, x *Array, dt DType, batch []int, rows, cols int) (backend.Matrix, func(), error) {
	src := x
	free := func() {}
	if x.dt != dt {
		src = x.AsType(dt)
		free = func() { src.Close() }
	}
	s, err := src.force(op)
	if err != nil {
		free()
		return backend.Matrix{}, nil, err
	}
	l := s.lay
	if len(l.Shape) == 1 { // vector: as a row (a) or column (b) of the matrix
		if rows == 1 {
			l = backend.Layout{Shape: []int{1, l.Shape[0]}, Strides: []int{0, l.Strides[0]}, Offset: l.Offset}
		} else {
			l = backend.Layout{Shape: []int{l.Shape[0], 1}, Strides: []int{l.Strides[0], 0}, Offset: l.Offset}
		}
	}
	r := len(l.Shape)
	rs, cs, ok := blasStrides(rows, cols, l.Strides[r-2], l.Strides[r-1])
	if !ok {
		c := src.Copy()
		old := free
		free = func() { c.Close(); old() }
		cs2, err := c.use(op)
		if err != nil {
			free()
			return backend.Matrix{}, nil, err
		}
		s = cs2
		l = s.lay
		if len(l.Shape) == 1 {
			if rows == 1 {
				l = backend.Layout{Shape: []int{1, l.Shape[0]}, Strides: []int{0, 1}}
			} else {
				l = backend.Layout{Shape: []int{l.Shape[0], 1}, Strides: []int{1, 0}}
			}
		}
		r = len(l.Shape)
		rs, cs, _ = blasStrides(rows, cols, l.Strides[r-2], l.Strides[r-1])
	}
	// Batch strides, broadcast to the full batch shape.
	bl := backend.Layout{Shape: l.Shape[:r-2], Strides: l.Strides[:r-2]}.BroadcastTo(batch)
	return backend.Matrix{Buf: s.st.buf, Offset: l.Offset, BatchStrides: bl.Strides, RowStride: rs, ColStride: cs}, free, nil
}

// blasStrides normalises the strides of a rows×cols matrix to a form BLAS
// accepts: row-major (column stride 1, row stride >= cols) or column-major
// (row stride 1, column stride >= rows); ok is false if neither fits.
func blasStrides(rows, cols, rs, cs int) (int, int, bool) {
	r, c := rs, cs
	if cols <= 1 {
		c = 1
	}
	if rows <= 1 {
		r = max(cols, 1)
	}
	if c == 1 && r >= max(cols, 1) {
		return r, c, true
	}
	r, c = rs, cs
	if rows <= 1 {
		r = 1
	}
	if cols <= 1 {
		c = max(rows, 1)
	}
	if r == 1 && c >= max(rows, 1) {
		return r, c, true
	}
	return 0, 0, false
}
