package array

import (
	"runtime"

	"github.com/gocu-dev/gocu/array/internal/backend"
	"github.com/gocu-dev/gocu/array/internal/cudagen"
)

// Quantisation is symmetric: a group of values x (a tensor, a row, a
// column) shares one float32 scale s = max|x| / qmax, where qmax is the
// largest value of the quantised type (127 for int8, 448 for
// Float8E4M3, 57344 for Float8E5M2), and each value is stored as q =
// x / s converted to the type: rounded to nearest even and saturated at
// [-128, 127] for int8 (a NaN becomes 0), rounded and saturated by the
// 8-bit float's own conversion otherwise. A group of zeros gets scale 1.
// Everything is computed in float32, as torch's reference
// (s = x.abs().amax(dim, keepdim=True) / 127; q = round(x / s)). Then
// x ≈ q·s, with an error of at most half a step, s/2, for int8.

// Quantize quantises a (converted to float32 first) into dt (Int8,
// Float8E4M3 or Float8E5M2) with one scale per group of the given axes:
// the scales keep a's rank with the reduced axes of length 1, so that
// Dequantize broadcasts them back. With no axes there is one scale for
// the whole array (per tensor); for a matrix (M, K), Quantize(dt, 1) gives
// a scale per row, (M, 1), and Quantize(dt, 0) one per column, (1, K).
//
// On a GPU, quantising along one axis is one fused kernel that reads a
// once (per row of up to 16384 contiguous elements, from registers;
// otherwise a block per group); per tensor it is a reduction and an
// elementwise kernel. Both results fail together.
func (a *Array) Quantize(dt DType, axes ...int) (q, scale *Array) {
	const op = "Quantize"
	defer runtime.KeepAlive(a)
	fail := func(err error) (*Array, *Array) { return failed(err), failed(err) }
	if _, err := a.use(op); err != nil {
		return fail(err)
	}
	if dt != Int8 && !dt.IsFloat8() {
		return fail(errorf(op, ErrDType, "quantises into int8, float8_e4m3fn or float8_e5m2, not %v", dt))
	}
	if a.dt == Bool {
		return fail(errorf(op, ErrDType, "not defined for bool"))
	}
	r := len(a.shape)
	norm, err := normAxes(op, axes, r)
	if err != nil {
		return fail(err)
	}
	sshape := append([]int{}, a.shape...)
	for _, ax := range norm {
		sshape[ax] = 1
	}
	if len(norm) == 0 {
		for i := range sshape {
			sshape[i] = 1
		}
	}
	qmax := cudagen.QMax(dt.be())
	x := a.AsType(Float32)
	defer x.Close()
	if len(norm) == 1 && backend.Size(a.shape) > 0 && a.shape[norm[0]] > 0 {
		return a.dev.quantizeAxis(op, x, dt, norm[0], sshape, qmax)
	}
	// Several axes, or every element: the maximum as a reduction, then
	// one elementwise pass.
	amax := x.Abs().Reduce(OpMax, true, norm...)
	if backend.Size(a.shape) == 0 {
		amax.Close()
		amax = a.dev.Zeros(Float32, sshape...)
	}
	defer amax.Close()
	s0 := amax.Div(float32(qmax))
	s := Where(s0.Eq(0), float32(1), s0).Eval()
	s0.Close()
	y := x.Div(s)
	if dt == Int8 {
		y = y.Round()
	}
	return y.AsType(dt), s
}

// quantizeAxis is Quantize along one axis: one AxisOp.
func (m *Maker) quantizeAxis(op string, x *Array, dt DType, axis int, sshape []int, qmax float64) (*Array, *Array) {
	fail := func(err error) (*Array, *Array) { return failed(err), failed(err) }
	var pn pins
	defer pn.release()
	e, err := x.exprOf(op, &pn)
	if err != nil {
		return fail(err)
	}
	qst, err := m.alloc(op, dt, x.shape)
	if err != nil {
		return fail(err)
	}
	sst, err := m.alloc(op, Float32, sshape)
	if err != nil {
		qst.release()
		return fail(err)
	}
	rows := append(append([]int{}, x.shape[:axis]...), x.shape[axis+1:]...)
	err = m.be.AxisOp(&backend.AxisOp{Kind: backend.Quantize, In: program(e, x.shape), Axis: axis,
		Out:   backend.Operand{Buf: qst.buf, Layout: backend.Contiguous(x.shape)},
		Scale: backend.Operand{Buf: sst.buf, Layout: backend.Contiguous(rows)}, QMax: qmax})
	runtime.KeepAlive(e)
	if err != nil {
		qst.release()
		sst.release()
		return fail(deviceErr(op, err))
	}
	return m.wrap(qst, backend.Contiguous(x.shape), dt), m.wrap(sst, backend.Contiguous(sshape), Float32)
}

// Dequantize returns q·scale in float32 (scale broadcasts, as Quantize
// returns it): one fused elementwise pass, lazy like any elementwise
// result, so that what follows (a bias, an activation) fuses into it.
func Dequantize(q, scale *Array) *Array {
	const op = "Dequantize"
	if _, err := q.use(op); err != nil {
		return failed(err)
	}
	if _, err := scale.use(op); err != nil {
		return failed(err)
	}
	if scale.dt != Float32 {
		return failed(errorf(op, ErrDType, "scales are float32, not %v", scale.dt))
	}
	x := q.AsType(Float32)
	defer x.Close()
	return x.Mul(scale)
}
