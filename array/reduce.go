package array

import (
	"runtime"

	"github.com/gocu-dev/gocu/array/internal/backend"
)

// ReduceOp names a reduction for Reduce.
type ReduceOp uint8

// The reductions.
const (
	OpSum ReduceOp = iota
	OpProd
	OpMax
	OpMin
	OpMean
	OpArgMax
	OpArgMin
	OpAny
	OpAll
)

// String returns the reduction's lower-case name ("sum").
func (r ReduceOp) String() string { return backend.ReduceOp(r).String() }

var reduceNames = map[ReduceOp]string{OpSum: "Sum", OpProd: "Prod", OpMax: "Max", OpMin: "Min",
	OpMean: "Mean", OpArgMax: "ArgMax", OpArgMin: "ArgMin", OpAny: "Any", OpAll: "All"}

// reduceTypes returns the dtype a reduction computes in (its input is cast
// to it) and the result dtype. A storage result (int8, a low-precision
// float) is computed in its compute type and converted at the end.
func reduceTypes(op ReduceOp, dt DType) (in, out DType) {
	switch op {
	case OpSum, OpProd:
		switch {
		case dt.IsFloating():
			return dt, dt
		case dt.IsUnsigned():
			return Int64, Uint64 // NumPy's default unsigned accumulator
		}
		return Int64, Int64
	case OpMean:
		d := dt
		if !dt.IsFloating() {
			d = Float64
		}
		return d, d
	case OpArgMax, OpArgMin:
		return dt, Int64
	case OpAny, OpAll:
		return Bool, Bool
	}
	return dt, dt
}

// Reduce applies a reduction over the given axes (all axes if none; negative
// axes count from the end). With keepDims the reduced axes stay as length 1.
// Result dtypes: Sum and Prod give int64 for bool and signed integers,
// uint64 for unsigned ones (both wrap on overflow) and keep float types; Mean gives float64 for integers;
// Max and Min keep the dtype; ArgMax and ArgMin give int64, the row-major
// flat index over the reduced axes (none: the index into the flattened
// array); Any and All give bool.
func (a *Array) Reduce(op ReduceOp, keepDims bool, axes ...int) *Array {
	name, ok := reduceNames[op]
	if !ok {
		return failed(errorf("Reduce", ErrValue, "unknown reduction %d", op))
	}
	defer runtime.KeepAlive(a)
	if _, err := a.use(name); err != nil {
		return failed(err)
	}
	if a.dt.IsComplex() {
		return a.complexReduce(name, op, keepDims, axes)
	}
	if a.dt == Uint64 && (op == OpMax || op == OpMin || op == OpArgMax || op == OpArgMin) {
		// Extremes of the flipped int64 keys, as sorts (see flipU64).
		k := flipU64(a, Int64)
		defer k.Close()
		r := k.Reduce(op, keepDims, axes...)
		if op == OpArgMax || op == OpArgMin {
			return r
		}
		defer r.Close()
		return flipU64(r, Uint64)
	}
	r := len(a.shape)
	norm, err := normAxes(name, axes, r)
	if err != nil {
		return failed(err)
	}
	inDT, outDT := reduceTypes(op, a.dt)
	final := outDT // storage results compute in their compute type
	inDT, outDT = inDT.Compute(), outDT.Compute()
	reduced := make([]bool, r)
	nR := 1
	for _, ax := range norm {
		reduced[ax] = true
		nR *= a.shape[ax]
	}
	var outShape, keepShape []int
	for d, n := range a.shape {
		if !reduced[d] {
			outShape = append(outShape, n)
			keepShape = append(keepShape, n)
		} else {
			keepShape = append(keepShape, 1)
		}
	}
	if outShape == nil {
		outShape = []int{}
	}
	if nR == 0 && (op == OpMax || op == OpMin || op == OpArgMax || op == OpArgMin) {
		return failed(errorf(name, ErrValue, "zero-size array to reduction operation %v which has no identity", op))
	}
	shape := outShape
	if keepDims {
		shape = keepShape
	}
	var pn pins
	defer pn.release()
	e, err := a.exprOf(name, &pn)
	if err != nil {
		return failed(err)
	}
	if len(norm) == 0 {
		// A 0-d array: nothing to reduce.
		if op == OpArgMax || op == OpArgMin {
			return a.dev.Zeros(Int64)
		}
		return a.dev.lazy(node(backend.OpCast, final, []int{}, castExpr(e, final)))
	}
	p := program(castExpr(e, inDT), a.shape)
	st, err := a.dev.alloc(name, outDT, outShape)
	if err != nil {
		return failed(err)
	}
	outLay := backend.Contiguous(outShape)
	err = a.dev.be.Reduce(&backend.Reduction{Op: backend.ReduceOp(op), In: p, Axes: norm, Out: backend.Operand{Buf: st.buf, Layout: outLay}})
	runtime.KeepAlive(e)
	if err != nil {
		st.release()
		return failed(deviceErr(name, err))
	}
	res := a.dev.wrap(st, backend.Contiguous(shape), outDT)
	if final != outDT {
		return narrowResult(res, final)
	}
	return res
}

// Sum adds over the axes (all if none).
func (a *Array) Sum(axes ...int) *Array { return a.Reduce(OpSum, false, axes...) }

// Prod multiplies over the axes.
func (a *Array) Prod(axes ...int) *Array { return a.Reduce(OpProd, false, axes...) }

// Mean averages over the axes.
func (a *Array) Mean(axes ...int) *Array { return a.Reduce(OpMean, false, axes...) }

// Max takes the maximum over the axes (NaN if any element is NaN).
func (a *Array) Max(axes ...int) *Array { return a.Reduce(OpMax, false, axes...) }

// Min takes the minimum over the axes (NaN if any element is NaN).
func (a *Array) Min(axes ...int) *Array { return a.Reduce(OpMin, false, axes...) }

// Any reports whether any element over the axes is nonzero.
func (a *Array) Any(axes ...int) *Array { return a.Reduce(OpAny, false, axes...) }

// All reports whether every element over the axes is nonzero.
func (a *Array) All(axes ...int) *Array { return a.Reduce(OpAll, false, axes...) }

// ArgMax returns the index of the first maximum along the axis, or into
// the flattened array when no axis is given (a NaN counts as the maximum).
func (a *Array) ArgMax(axis ...int) *Array { return a.Reduce(OpArgMax, false, axis...) }

// ArgMin returns the index of the first minimum (see ArgMax).
func (a *Array) ArgMin(axis ...int) *Array { return a.Reduce(OpArgMin, false, axis...) }

func (a *Array) axisOp(name string, kind backend.AxisKind, axis int) *Array {
	defer runtime.KeepAlive(a)
	if _, err := a.use(name); err != nil {
		return failed(err)
	}
	if len(a.shape) == 0 {
		return failed(errorf(name, ErrAxis, "needs an array of at least one dimension"))
	}
	if a.dt.IsComplex() {
		return failed(errorf(name, ErrDType, "not supported for %v", a.dt))
	}
	ax, err := normAxis(name, axis, len(a.shape))
	if err != nil {
		return failed(err)
	}
	final := floatFor(a.dt)
	dt := final.Compute() // low-precision floats compute in float32
	var pn pins
	defer pn.release()
	e, err := a.exprOf(name, &pn)
	if err != nil {
		return failed(err)
	}
	outShape := a.shape
	if kind == backend.LogSumExp {
		outShape = append(append([]int{}, a.shape[:ax]...), a.shape[ax+1:]...)
	}
	st, err := a.dev.alloc(name, dt, outShape)
	if err != nil {
		return failed(err)
	}
	lay := backend.Contiguous(outShape)
	err = a.dev.be.AxisOp(&backend.AxisOp{Kind: kind, In: program(castExpr(e, dt), a.shape), Axis: ax,
		Out: backend.Operand{Buf: st.buf, Layout: lay}})
	runtime.KeepAlive(e)
	if err != nil {
		st.release()
		return failed(deviceErr(name, err))
	}
	res := a.dev.wrap(st, lay, dt)
	if final != dt {
		return narrowResult(res, final)
	}
	return res
}

// Softmax returns exp(a - max) / sum(exp(a - max)) along the axis.
// Integer inputs compute in float64 (int32, int64) or float32 (uint8, bool).
func (a *Array) Softmax(axis int) *Array { return a.axisOp("Softmax", backend.Softmax, axis) }

// LogSoftmax returns a - LogSumExp(a) along the axis, computed stably.
func (a *Array) LogSoftmax(axis int) *Array { return a.axisOp("LogSoftmax", backend.LogSoftmax, axis) }

// LogSumExp returns log(sum(exp(a))) along the axis (removed), computed as
// max + log(sum(exp(a - max))) so that it neither overflows nor underflows.
func (a *Array) LogSumExp(axis int) *Array { return a.axisOp("LogSumExp", backend.LogSumExp, axis) }
