package array

import (
	"runtime"

	"github.com/gocu-dev/gocu/array/internal/backend"
)

// Out-of-place results without allocation: Into evaluates an elementwise
// expression straight into an existing array, ReduceInto writes a
// reduction into one, so that a loop reuses its buffers (NumPy's out=).

// Into evaluates a (a pending elementwise expression, or any array) into
// dst's memory, broadcast to dst's shape and converted to its dtype, and
// returns dst's error. When a has dst's shape and dtype it becomes a view
// of dst (as NumPy's out= returns out). It allocates no device memory
// when a reads dst only element for element (x.Mul(2).Add(y).Into(x)
// updates x in place) and no other pending array still reads dst: those
// are evaluated first, as for Assign, so close intermediates a loop makes
// (or write its body as one expression). An expression that reads dst at
// other positions is evaluated into a temporary first.
func (a *Array) Into(dst *Array) error {
	// Not deferred: with into's many returns the deferred calls were not
	// open-coded, 7% of a tiny Into's profile.
	pn := pins{scratch: true} // the expression does not outlive the call
	err := a.into(dst, &pn)
	pn.release()
	runtime.KeepAlive(a)
	runtime.KeepAlive(dst)
	return err
}

// into is Into with the pins it releases.
func (a *Array) into(dst *Array, pn *pins) error {
	const op = "Into"
	if _, err := a.use(op); err != nil {
		return err
	}
	s, err := dst.force(op)
	if err != nil {
		return err
	}
	if a.dev != dst.dev {
		return errorf(op, ErrDevice, "arrays on different devices (%v and %v)", a.dev, dst.dev)
	}
	for i, d := range s.lay.Shape {
		if d > 1 && s.lay.Strides[i] == 0 {
			return errorf(op, ErrValue, "destination is a broadcast view; the result would write one element several times")
		}
	}
	if !broadcastsTo(a.shape, dst.shape) {
		return errorf(op, ErrShape, "could not broadcast a result of shape %s into shape %s", shapeString(a.shape), shapeString(dst.shape))
	}
	if a.dt.IsComplex() && !dst.dt.IsComplex() {
		// Backends do not convert complex values to real ones.
		return errorf(op, ErrDType, "cannot write %v values into a %v array (take Real or Abs first)", a.dt, dst.dt)
	}
	var es [1]*expr
	if err := exprs(es[:], pn, op, dst.shape, dst.dt, []operand{{arr: a}}); err != nil {
		return err
	}
	e := es[0]
	if !pointwise(e, s) {
		return dst.Assign(a) // reads dst elsewhere: through a temporary
	}
	if a != dst && a.dt == dst.dt && sameShape(a.shape, dst.shape) {
		a.becomeView(s)
	}
	s.st.flushDeps()
	return deviceErr(op, dst.dev.evalInto(e, dst.shape, backend.Operand{Buf: s.st.buf, Layout: s.lay}))
}

// becomeView makes a, if pending, a view of the materialised s: Into
// writes a's values there, so the flush before the write need not
// evaluate a.
func (a *Array) becomeView(s snap) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.ex == nil || a.closed || a.err != nil {
		return
	}
	s.st.retain()
	a.st, a.lay, a.ex = s.st, s.lay, nil
	a.dropNode()
	a.notPending()
	a.replaceHeld(s.st)
	a.leaf.Store(nil)
}

// pointwise reports whether every leaf of e that reads dst's storage
// reads it with dst's exact layout (each output element only from itself).
func pointwise(e *expr, dst snap) bool {
	if e.op == backend.OpInput {
		return e.st != dst.st || sameLayout(&e.lay, &dst.lay)
	}
	for _, x := range e.args() {
		if !pointwise(x, dst) {
			return false
		}
	}
	return true
}

// ReduceInto computes a reduction of a (see Reduce) into dst, which must
// be C-contiguous, of the reduction's shape (with or without the reduced
// axes kept as 1) and of its result dtype, and must not share memory with
// a. It allocates no device memory.
func (a *Array) ReduceInto(dst *Array, op ReduceOp, axes ...int) error {
	name, ok := reduceNames[op]
	if !ok {
		return errorf("ReduceInto", ErrValue, "unknown reduction %d", op)
	}
	name += "Into"
	defer runtime.KeepAlive(a)
	defer runtime.KeepAlive(dst)
	if _, err := a.use(name); err != nil {
		return err
	}
	ds, err := dst.force(name)
	if err != nil {
		return err
	}
	if a.dev != dst.dev {
		return errorf(name, ErrDevice, "arrays on different devices (%v and %v)", a.dev, dst.dev)
	}
	if (op == OpArgMax || op == OpArgMin) && len(axes) > 1 {
		return errorf(name, ErrAxis, "takes at most one axis, got %v", axes)
	}
	norm, err := normAxes(name, axes, len(a.shape))
	if err != nil {
		return err
	}
	inDT, outDT := reduceTypes(op, a.dt)
	if outDT.IsStorage() || inDT.IsStorage() {
		return errorf(name, ErrDType, "ReduceInto of %v: reduce with Reduce, whose result is converted", a.dt)
	}
	if dst.dt != outDT {
		return errorf(name, ErrDType, "the result is %v; dst is %v", outDT, dst.dt)
	}
	reduced := make([]bool, len(a.shape))
	nR := 1
	for _, ax := range norm {
		reduced[ax] = true
		nR *= a.shape[ax]
	}
	var outShape []int
	for d, n := range a.shape {
		if !reduced[d] {
			outShape = append(outShape, n)
		}
	}
	if backend.Size(outShape) != dst.Size() || !ixSqueezedEqual(outShape, dst.shape) {
		return errorf(name, ErrShape, "the result has shape %s; dst has %s", shapeString(outShape), shapeString(dst.shape))
	}
	if !ds.lay.IsContiguous() {
		return errorf(name, ErrValue, "dst must be C-contiguous")
	}
	if nR == 0 && (op == OpMax || op == OpMin || op == OpArgMax || op == OpArgMin) {
		return errorf(name, ErrValue, "zero-size array to reduction operation %v which has no identity", op)
	}
	if len(norm) == 0 {
		return a.Into(dst)
	}
	var pn pins
	defer pn.release()
	e, err := a.exprOf(name, &pn)
	if err != nil {
		return err
	}
	for _, st := range e.leaves() {
		if st == ds.st {
			return errorf(name, ErrValue, "dst shares memory with the input")
		}
	}
	ds.st.flushDeps()
	p := program(castExpr(e, inDT), a.shape)
	out := backend.Operand{Buf: ds.st.buf, Layout: backend.Layout{Shape: outShape, Strides: backend.ContiguousStrides(outShape), Offset: ds.lay.Offset}}
	err = a.dev.be.Reduce(&backend.Reduction{Op: backend.ReduceOp(op), In: p, Axes: norm, Out: out})
	runtime.KeepAlive(e)
	return deviceErr(name, err)
}

// ixSqueezedEqual reports whether two shapes are equal once their 1s are
// dropped (keepdims or not).
func ixSqueezedEqual(a, b []int) bool {
	var x, y []int
	for _, d := range a {
		if d != 1 {
			x = append(x, d)
		}
	}
	for _, d := range b {
		if d != 1 {
			y = append(y, d)
		}
	}
	return sameShape(x, y)
}
