package array

import (
	"runtime"

	"github.com/gocu-dev/gocu/array/internal/backend"
	"github.com/gocu-dev/gocu/array/internal/gpu"
)

// ErrUnsupported is wrapped by the error of an operation the device cannot
// run: an FP8 product on a GPU older than compute capability 8.9.
var ErrUnsupported = backend.ErrUnsupported

// ScaledMatMul returns scaleA·scaleB·(a·b) for 8-bit float matrices a (M×K)
// and b (K×N), accumulated in float32 and rounded to out (Float32,
// BFloat16 or Float16), as torch._scaled_mm. a and b are Float8E4M3 or
// Float8E5M2 (not both E5M2); scaleA and scaleB are float32 arrays of one
// element (per-tensor scales, nil for 1), typically the ones Quantize
// returned. Only 2-D operands are taken.
//
// On a GPU the product runs on FP8 tensor cores through cuBLASLt
// (compute capability 8.9 and later; on an older GPU the result fails
// with ErrUnsupported). Those kernels take a row-major a and a
// column-major b (a transposed view, such as w.T() for a contiguous N×K
// w) with K and N multiples of 16: other layouts are copied, and K and N
// padded with zeros, before the product (a cost of one pass over the
// operands). The CPU computes the same product exactly in float32 on all
// cores.
func ScaledMatMul(a, b, scaleA, scaleB *Array, out DType) *Array {
	const op = "ScaledMatMul"
	defer runtime.KeepAlive(a)
	defer runtime.KeepAlive(b)
	for _, x := range []*Array{a, b} {
		if _, err := x.use(op); err != nil {
			return failed(err)
		}
	}
	switch {
	case !a.dt.IsFloat8() || !b.dt.IsFloat8():
		return failed(errorf(op, ErrDType, "takes float8 operands, not %v and %v (convert with AsType, or scale with Quantize)", a.dt, b.dt))
	case a.dt == Float8E5M2 && b.dt == Float8E5M2:
		return failed(errorf(op, ErrDType, "two float8_e5m2 operands have no product (E5M2 is for gradients: pair it with E4M3)"))
	case out != Float32 && out != BFloat16 && out != Float16:
		return failed(errorf(op, ErrDType, "writes float32, bfloat16 or float16, not %v", out))
	case len(a.shape) != 2 || len(b.shape) != 2:
		return failed(errorf(op, ErrShape, "takes 2-D operands, got shapes %s and %s", shapeString(a.shape), shapeString(b.shape)))
	}
	for _, s := range []*Array{scaleA, scaleB} {
		if s == nil {
			continue
		}
		if _, err := s.use(op); err != nil {
			return failed(err)
		}
		if s.dt != Float32 || backend.Size(s.shape) != 1 {
			return failed(errorf(op, ErrValue, "a scale is a float32 array of one element, not %v of shape %s", s.dt, shapeString(s.shape)))
		}
		if s.dev != a.dev {
			return failed(errorf(op, ErrDevice, "a scale on %v, the operands on %v", s.dev, a.dev))
		}
	}
	if g := a.dev.gpu; g != nil {
		if err := g.SupportsFP8(); err != nil {
			return failed(&Error{Op: op, Kind: ErrUnsupported, Msg: "no FP8 tensor cores", Cause: err})
		}
	}
	return lowpMatMul(op, a, b, a.dt, b.dt, out, scaleA, scaleB)
}

// lowpMatMul is an int8 or 8-bit float product. On a GPU its operands are
// first put in the layout cuBLASLt's kernels take (gpu.LtLayout): a
// row-major, b column-major, K and N multiples of gpu.LtMultiple, each in
// memory of its own (aligned); operands already so are used as they are,
// others are copied, padded with zeros along K and N (zeros add nothing
// to the sums), and the padding columns are cut from the result.
func lowpMatMul(op string, a, b *Array, da, db, out DType, sa, sb *Array) *Array {
	if a.dev.gpu == nil || a.dev != b.dev || len(a.shape) == 0 || len(b.shape) == 0 {
		return matmul(op, a, b, da, db, out, sa, sb)
	}
	K := a.shape[len(a.shape)-1]
	kb := b.shape[max(len(b.shape)-2, 0)]
	if K != kb {
		return matmul(op, a, b, da, db, out, sa, sb) // the shape error
	}
	var tmp []*Array
	defer func() {
		for _, t := range tmp {
			t.Close()
		}
	}()
	keep := func(x *Array) *Array { tmp = append(tmp, x); return x }
	av, bv := a, b
	if da != a.dt {
		av = keep(a.AsType(da))
	}
	if db != b.dt {
		bv = keep(b.AsType(db))
	}
	vecA, vecB := len(a.shape) == 1, len(b.shape) == 1
	if vecA {
		av = keep(av.Reshape(1, K))
	}
	if vecB {
		bv = keep(bv.Reshape(K, 1))
	}
	mul := gpu.LtMultiple(da.be())
	N := bv.shape[len(bv.shape)-1]
	K2, N2 := (K+mul-1)/mul*mul, (N+mul-1)/mul*mul
	if !ltReady(av, false, K2, 0) {
		av = keep(padded(op, av, false, K2, 0))
	}
	if !ltReady(bv, true, K2, N2) {
		bv = keep(padded(op, bv, true, K2, N2))
	}
	c := matmul(op, av, bv, da, db, out, sa, sb)
	if N2 != N {
		full := keep(c)
		c = full.Slice(Ellipsis, S(0, N)).Contiguous()
	}
	if vecA {
		c = keep(c).Squeeze(-2)
	}
	if vecB {
		c = keep(c).Squeeze(-1)
	}
	tmp = deleteArray(tmp, c)
	return c
}

func deleteArray(s []*Array, x *Array) []*Array {
	out := s[:0]
	for _, y := range s {
		if y != x {
			out = append(out, y)
		}
	}
	return out
}

// ltReady reports whether x is an operand cuBLASLt takes as it is: its
// own memory from element 0 (as allocated: aligned), row-major (or, for
// the column-major b, its last two axes swapped), K columns (rows for b)
// and, for b, N columns, as given.
func ltReady(x *Array, colMajor bool, K, N int) bool {
	s, err := x.force("MatMul") // a pending expression evaluates into fresh memory
	if err != nil {
		return false
	}
	r := len(s.lay.Shape)
	lay := s.lay
	if colMajor {
		lay = lay.Clone()
		lay.Shape[r-1], lay.Shape[r-2] = lay.Shape[r-2], lay.Shape[r-1]
		lay.Strides[r-1], lay.Strides[r-2] = lay.Strides[r-2], lay.Strides[r-1]
		return lay.Offset == 0 && lay.IsContiguous() && lay.Shape[r-1] == K && lay.Shape[r-2] == N
	}
	return lay.Offset == 0 && lay.IsContiguous() && lay.Shape[r-1] == K
}

// padded copies x into fresh memory in cuBLASLt's layout, zero-padded to K
// (and N for the column-major b).
func padded(op string, x *Array, colMajor bool, K, N int) *Array {
	r := len(x.shape)
	src := x
	if colMajor {
		src = x.SwapAxes(-1, -2)
		defer src.Close()
	}
	shape := append([]int{}, src.shape...)
	shape[r-1] = K
	if colMajor {
		shape[r-2] = N
	}
	var dst *Array
	if sameShape(shape, src.shape) {
		dst = src.Copy()
	} else {
		dst = x.dev.Zeros(x.dt, shape...).Eval()
		idx := []Index{Ellipsis, S(0, src.shape[r-1])}
		if colMajor {
			idx = []Index{Ellipsis, S(0, src.shape[r-2]), S(0, src.shape[r-1])}
		}
		view := dst.Slice(idx...)
		err := view.Assign(src)
		view.Close()
		if err != nil {
			dst.Close()
			return failed(err)
		}
	}
	if colMajor {
		t := dst.SwapAxes(-1, -2)
		dst.Close()
		return t
	}
	return dst
}
