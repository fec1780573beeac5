package array

import (
	"math"
	"runtime"
	"strings"
	"unsafe"

	"github.com/gocu-dev/gocu"
	"github.com/gocu-dev/gocu/array/internal/backend"
	"github.com/gocu-dev/gocu/array/internal/cpu"
)

// Complex arrays hold (real, imaginary) pairs of float32 (Complex64) or
// float64 (Complex128), interleaved as Go, NumPy and CUDA lay them out.
// The backends only hold complex buffers: every complex operation works on
// the two float parts through the real kernels of both backends. A
// materialised array's parts are strided views of its memory
// (ViewAsReal). An operation with a complex result is pending, as real
// ones are: a pack node over the real expressions of its two parts (see
// pack). A later complex operation builds on those expressions, so a
// chain such as a.Mul(b).Abs() is one fused pass that reads a and b once;
// evaluating a pack writes both parts in one pass (evalPackInto).

// opPack is the root of a pending complex array: Args[0] and Args[1] are
// the real expressions of the parts, of the array's shape. It never
// reaches a backend: evalPackInto lowers it to a real program.
const opPack = backend.OpInvalid

// The complex element types.
const (
	// Complex64 is a complex number of two float32 parts (Go's complex64).
	Complex64 = DType(backend.Complex64)
	// Complex128 is a complex number of two float64 parts (Go's complex128).
	Complex128 = DType(backend.Complex128)
)

// IsComplex reports whether d is complex64 or complex128.
func (d DType) IsComplex() bool { return d.be().IsComplex() }

// component is the float type of a complex dtype's parts.
func (d DType) component() DType { return DType(d.be().Component()) }

// complexFor is the complex dtype whose parts can hold values of d exactly
// where NumPy says so: complex64 for bool, integers of 8 and 16 bits,
// float16, bfloat16 and float32, complex128 for wider integers and float64.
func complexFor(d DType) DType {
	switch {
	case d.IsComplex():
		return d
	case d.be().Bits() >= 32 || d == Float64:
		return Complex128
	}
	return Complex64
}

// promoteComplex is Promote where a or b is complex (NumPy's
// promote_types): the wider of the complex type and complexFor of the
// other; an 8-bit float has no rule.
func promoteComplex(a, b DType) DType {
	if a.IsFloat8() || b.IsFloat8() {
		return Invalid
	}
	if complexFor(a) == Complex128 || complexFor(b) == Complex128 {
		return Complex128
	}
	return Complex64
}

// ComplexElem is the set of Go complex types arrays hold.
type ComplexElem interface{ ~complex64 | ~complex128 }

func complexDTypeOf[T ComplexElem]() DType {
	var z T
	if unsafe.Sizeof(z) == 8 {
		return Complex64
	}
	return Complex128
}

// FromComplex returns a complex64 or complex128 array holding a copy of
// data (on the default device), shaped like FromSlice.
func FromComplex[T ComplexElem](data []T, shape ...int) *Array {
	return fromComplexOn(Default(), data, shape...)
}

// FromComplexOn is FromComplex on device dev.
func FromComplexOn[T ComplexElem](dev *gocu.Device, data []T, shape ...int) *Array {
	return fromComplexOn(On(dev), data, shape...)
}

func fromComplexOn[T ComplexElem](d *Maker, data []T, shape ...int) *Array {
	dt := complexDTypeOf[T]()
	if len(shape) == 0 {
		shape = []int{len(data)}
	}
	rs := append(append([]int(nil), shape...), 2)
	var re *Array
	if dt == Complex64 {
		re = fromSliceOn(d, unsafe.Slice((*float32)(unsafe.Pointer(unsafe.SliceData(data))), 2*len(data)), rs...)
	} else {
		re = fromSliceOn(d, unsafe.Slice((*float64)(unsafe.Pointer(unsafe.SliceData(data))), 2*len(data)), rs...)
	}
	runtime.KeepAlive(data)
	if err := re.Err(); err != nil {
		return failed(renameOp(err, "FromComplex"))
	}
	defer re.Close()
	return re.ViewAsComplex()
}

// renameOp returns err with its operation renamed, for errors of a helper
// that should read as the caller's.
func renameOp(err error, op string) error {
	if e, ok := err.(*Error); ok {
		c := *e
		c.Op = op
		return &c
	}
	return err
}

// ToComplex copies a complex array to a new host slice of T in row-major
// order: complex64 for a complex64 array, complex128 for a complex128 one
// (another pairing is ErrDType).
func ToComplex[T ComplexElem](a *Array) ([]T, error) {
	const op = "ToComplex"
	defer runtime.KeepAlive(a)
	if err := a.Err(); err != nil {
		return nil, err
	}
	if dt := complexDTypeOf[T](); a.dt != dt {
		var z T
		return nil, errorf(op, ErrDType, "cannot read a %v array as %T (convert it with AsType)", a.dt, z)
	}
	v := a.ViewAsReal()
	defer v.Close()
	h, err := v.hostData(op)
	if err != nil {
		return nil, err
	}
	switch s := h.(type) {
	case []float32:
		return unsafe.Slice((*T)(unsafe.Pointer(unsafe.SliceData(s))), len(s)/2), nil
	case []float64:
		return unsafe.Slice((*T)(unsafe.Pointer(unsafe.SliceData(s))), len(s)/2), nil
	}
	return nil, errorf(op, ErrDType, "internal error: host data %T", h)
}

// Complex64s copies a complex64 array to the host (see ToComplex).
func (a *Array) Complex64s() ([]complex64, error) { return ToComplex[complex64](a) }

// Complex128s copies a complex128 array to the host (see ToComplex).
func (a *Array) Complex128s() ([]complex128, error) { return ToComplex[complex128](a) }

// reinterpret views a buffer as another dtype (see cpu.Reinterpret).
func (m *Maker) reinterpret(buf backend.Buffer, dt DType) (backend.Buffer, error) {
	if m.gpu != nil {
		g, err := m.gpu.Reinterpret(buf, dt.be())
		if err != nil {
			return nil, err
		}
		return g, nil
	}
	c, err := cpu.Reinterpret(buf, dt.be())
	if err != nil {
		return nil, err
	}
	return c, nil
}

// ViewAsReal returns a view of a complex array as its float parts: a
// float32 (complex64) or float64 (complex128) array with a last axis of 2
// (real, imaginary), sharing a's memory (PyTorch's view_as_real). Writing
// through the view writes a.
func (a *Array) ViewAsReal() *Array {
	const op = "ViewAsReal"
	defer runtime.KeepAlive(a)
	s, err := a.force(op)
	if err != nil {
		return failed(err)
	}
	if !a.dt.IsComplex() {
		return failed(errorf(op, ErrDType, "%v is not a complex dtype", a.dt))
	}
	rdt := a.dt.component()
	buf, err := a.dev.reinterpret(s.st.buf, rdt)
	if err != nil {
		return failed(deviceErr(op, err))
	}
	s.st.retain() // released with the view's storage (storage.release)
	st := a.dev.newStorage(buf, s.st)
	r := len(a.shape)
	lay := backend.Layout{Shape: make([]int, r+1), Strides: make([]int, r+1), Offset: 2 * s.lay.Offset}
	copy(lay.Shape, s.lay.Shape)
	lay.Shape[r] = 2
	for i, x := range s.lay.Strides {
		lay.Strides[i] = 2 * x
	}
	lay.Strides[r] = 1
	return a.dev.wrap(st, lay, rdt)
}

// ViewAsComplex returns a view of a float32 or float64 array whose last
// axis has length 2 (real, imaginary) as complex64 or complex128 values,
// sharing a's memory (PyTorch's view_as_complex). The last axis must have
// stride 1 and the others even strides (a contiguous array has them).
func (a *Array) ViewAsComplex() *Array {
	const op = "ViewAsComplex"
	defer runtime.KeepAlive(a)
	s, err := a.force(op)
	if err != nil {
		return failed(err)
	}
	if !a.dt.IsFloat() {
		return failed(errorf(op, ErrDType, "needs float32 or float64, not %v", a.dt))
	}
	r := len(a.shape)
	if r == 0 || a.shape[r-1] != 2 {
		return failed(errorf(op, ErrShape, "needs a last axis of length 2, got shape %s", shapeString(a.shape)))
	}
	ok := s.lay.Strides[r-1] == 1 && s.lay.Offset%2 == 0
	for _, x := range s.lay.Strides[:r-1] {
		ok = ok && x%2 == 0
	}
	if !ok {
		return failed(errorf(op, ErrValue, "the last axis needs stride 1 and the others even strides (strides %v, offset %d): use Contiguous first", s.lay.Strides, s.lay.Offset))
	}
	cdt := complexFor(a.dt)
	buf, err := a.dev.reinterpret(s.st.buf, cdt)
	if err != nil {
		return failed(deviceErr(op, err))
	}
	s.st.retain()
	st := a.dev.newStorage(buf, s.st)
	lay := backend.Layout{Shape: append([]int(nil), s.lay.Shape[:r-1]...), Strides: make([]int, r-1), Offset: s.lay.Offset / 2}
	for i, x := range s.lay.Strides[:r-1] {
		lay.Strides[i] = x / 2
	}
	return a.dev.wrap(st, lay, cdt)
}

// parts returns a complex array's real and imaginary parts: views of its
// memory, or a pending array's part expressions (its first use).
func (a *Array) parts(op string) (re, im *Array, err error) {
	if a != nil && a.dt.IsComplex() && a.isPending() {
		var pn pins
		defer pn.release()
		e, err := a.exprOf(op, &pn)
		if err != nil {
			return nil, nil, err
		}
		if e.op == opPack {
			return a.dev.partOf(e.argv[0]), a.dev.partOf(e.argv[1]), nil
		}
	}
	v := a.ViewAsReal()
	defer v.Close()
	vs, err := v.use(op)
	if err != nil {
		return nil, nil, err
	}
	r := len(a.shape)
	lay := backend.Layout{Shape: vs.lay.Shape[:r:r], Strides: vs.lay.Strides[:r:r], Offset: vs.lay.Offset}
	re = a.dev.view(vs.st, lay, v.dt)
	lay.Offset++
	im = a.dev.view(vs.st, lay, v.dt)
	return re, im, nil
}

// errOf is a's error, without evaluating a pending array as Err does.
func errOf(op string, a *Array) error {
	_, err := a.use(op)
	return err
}

// isPending reports whether a has a pending expression.
func (a *Array) isPending() bool {
	if a.dev == nil {
		return false
	}
	return a.isLazy()
}

// partOf is a pending part expression as an array: a view for a leaf
// (several uses read the memory), else a pending array.
func (m *Maker) partOf(e *expr) *Array {
	if e.op == backend.OpInput {
		return m.view(e.st, e.lay, e.dt)
	}
	return shared(m.lazy(e))
}

// shared marks a pending temporary of a complex operation to be inlined
// at every use: its uses are nodes of one program, which computes it once.
func shared(a *Array) *Array {
	a.mu.Lock()
	if a.ex != nil {
		a.shared = true
		if a.ex == &a.node {
			// exprOf copies a node held in the array: hold it apart, so
			// that every use gets the same node.
			c := a.node
			a.ex = &c
			a.dropNode()
		}
	}
	a.mu.Unlock()
	return a
}

// lazyCopy is a pending copy of a (it fuses into what reads it).
func (a *Array) lazyCopy(op string) *Array {
	defer runtime.KeepAlive(a)
	var pn pins
	defer pn.release()
	e, err := a.exprOf(op, &pn)
	if err != nil {
		return failed(err)
	}
	return a.dev.lazy(node(backend.OpCast, a.dt, a.shape, e))
}

// fromParts is the pending complex array re + i·im of dtype dt (its
// parts broadcast together and converted to dt's component type).
func (m *Maker) fromParts(op string, dt DType, re, im *Array) *Array {
	if err := firstErr(errOf(op, re), errOf(op, im)); err != nil {
		return failed(err)
	}
	shape, err := broadcastShapes(op, re.shape, im.shape)
	if err != nil {
		return failed(err)
	}
	if _, ok := byteSize(dt, shape); !ok {
		return failed(tooBig(op, dt, shape))
	}
	// Both parts take the full shape, so that parts gives them back as
	// they are. A broadcast operand becomes a view (evaluated first).
	for _, p := range []**Array{&re, &im} {
		if !sameShape((*p).shape, shape) {
			b := (*p).BroadcastTo(shape...)
			defer b.Close()
			*p = b
		}
	}
	var es [2]*expr
	var pn pins
	defer pn.release()
	// The two parts are two expressions computed side by side: each
	// may have a program's worth of nodes.
	if err := operandExprsUpTo(es[:], &pn, op, shape, []*Array{re, im}, 2*maxExprNodes); err != nil {
		return failed(err)
	}
	rdt := dt.component()
	return m.lazy(node(opPack, dt, shape, castExpr(es[0], rdt), castExpr(es[1], rdt)))
}

// packOf returns complex expression e as a pack node: e itself, a
// complex leaf read through a float view of its storage, or a conversion
// to complex applied to the parts. done releases the views it made.
func (m *Maker) packOf(e *expr) (pk *expr, done func(), err error) {
	done = func() {}
	rdt := e.dt.component()
	switch {
	case e.op == opPack:
		return e, done, nil
	case e.op == backend.OpInput:
		buf, err := m.reinterpret(e.st.buf, rdt)
		if err != nil {
			return nil, nil, err
		}
		e.st.retain() // released with the view (storage.release)
		st := m.newStorage(buf, e.st)
		r := len(e.lay.Shape)
		lay := backend.Layout{Shape: e.lay.Shape, Strides: make([]int, r), Offset: 2 * e.lay.Offset}
		for i, x := range e.lay.Strides {
			lay.Strides[i] = 2 * x
		}
		re := leafExpr(snap{st: st, lay: lay}, rdt)
		lay.Offset++
		im := leafExpr(snap{st: st, lay: lay}, rdt)
		return node(opPack, e.dt, e.shape, re, im), st.release, nil
	case e.op == backend.OpCast && e.argv[0].dt.IsComplex():
		in, done, err := m.packOf(e.argv[0])
		if err != nil {
			return nil, nil, err
		}
		return node(opPack, e.dt, e.shape, castExpr(in.argv[0], rdt), castExpr(in.argv[1], rdt)), done, nil
	case e.op == backend.OpCast:
		zero := scalarExpr(scalar{kind: weakFloat}.as(rdt))
		return node(opPack, e.dt, e.shape, castExpr(e.argv[0], rdt), zero), done, nil
	}
	return nil, nil, errorf("eval", ErrDType, "not supported for %v", e.dt)
}

// evalPackInto evaluates pack node e into the complex operand out: one
// real program over out's float view, whose element (i, k) is part k of
// element i (chosen by the parity of its flat index).
func (m *Maker) evalPackInto(e *expr, shape []int, out backend.Operand) error {
	rdt := e.dt.component()
	buf, err := m.reinterpret(out.Buf, rdt)
	if err != nil {
		return err
	}
	re, im := e.argv[0], e.argv[1]
	r := len(shape)
	if re.iota || im.iota {
		// Iota counts the complex elements: write each part through a
		// strided view of its own.
		lay := backend.Layout{Shape: shape, Strides: make([]int, r), Offset: 2 * out.Layout.Offset}
		for i, st := range out.Layout.Strides {
			lay.Strides[i] = 2 * st
		}
		if err := m.evalInto(re, shape, backend.Operand{Buf: buf, Layout: lay}); err != nil {
			return err
		}
		lay.Offset++
		return m.evalInto(im, shape, backend.Operand{Buf: buf, Layout: lay})
	}
	fshape := append(append(make([]int, 0, r+1), shape...), 2)
	lay := backend.Layout{Shape: fshape, Strides: make([]int, r+1), Offset: 2 * out.Layout.Offset}
	for i, st := range out.Layout.Strides {
		lay.Strides[i] = 2 * st
	}
	lay.Strides[r] = 1
	seen := map[*expr]*expr{}
	ur, ui := unitExpr(re, seen), unitExpr(im, seen)
	iota := &expr{op: backend.OpIota, dt: Int64, shape: fshape, nodes: 1, iota: true}
	one := scalarExpr(scalar{kind: weakInt, i: 1}.as(Int64))
	zero := scalarExpr(scalar{kind: weakInt, i: 0}.as(Int64))
	isRe := node(backend.OpEq, Bool, fshape, node(backend.OpBitAnd, Int64, fshape, iota, one), zero)
	return m.evalInto(node(backend.OpWhere, rdt, fshape, isRe, ur, ui), fshape, backend.Operand{Buf: buf, Layout: lay})
}

// unitExpr is e with a trailing axis of length 1 (stride 0) on every
// node and leaf, which broadcasts along the (real, imaginary) axis of a
// float view. seen maps the nodes done to their copies, so that shared
// nodes stay shared. e does not read OpIota.
func unitExpr(e *expr, seen map[*expr]*expr) *expr {
	if c, ok := seen[e]; ok {
		return c
	}
	var c *expr
	switch e.op {
	case backend.OpScalar:
		c = e
	case backend.OpInput:
		n := len(e.lay.Shape)
		lay := backend.Layout{Shape: make([]int, n+1), Strides: make([]int, n+1), Offset: e.lay.Offset}
		copy(lay.Shape, e.lay.Shape)
		copy(lay.Strides, e.lay.Strides)
		lay.Shape[n] = 1
		c = &expr{op: backend.OpInput, dt: e.dt, shape: lay.Shape, st: e.st, lay: lay, nodes: 1}
	default:
		var args [3]*expr
		for i, a := range e.args() {
			args[i] = unitExpr(a, seen)
		}
		shape := append(append(make([]int, 0, len(e.shape)+1), e.shape...), 1)
		c = node(e.op, e.dt, shape, args[:e.nargs]...)
	}
	seen[e] = c
	return c
}

// Complex returns re + i·im (broadcast together) as a complex array:
// complex64 where both parts fit float32 (see Promote), else complex128.
func Complex(re, im *Array) *Array {
	const op = "Complex"
	if err := errOf(op, re); err != nil {
		return failed(err)
	}
	if err := errOf(op, im); err != nil {
		return failed(err)
	}
	if re.dt.IsComplex() || im.dt.IsComplex() {
		return failed(errorf(op, ErrDType, "parts must be real, got %v and %v", re.dt, im.dt))
	}
	if re.dev != im.dev {
		return failed(errorf(op, ErrDevice, "arrays on different devices (%v and %v)", re.dev, im.dev))
	}
	dt := promoteComplex(re.dt, im.dt)
	return re.dev.fromParts(op, dt, re, im)
}

// complexParts returns the parts of operand v in float dtype rdt on d: a
// complex array's views, a real array and zero, a Go number's parts.
func (m *Maker) complexParts(op string, v any, rdt DType) (re, im *Array, err error) {
	switch x := v.(type) {
	case *Array:
		if x.dt.IsComplex() {
			re, im, err := x.parts(op)
			if err != nil {
				return nil, nil, err
			}
			if x.dt.component() != rdt {
				cr, ci := re.AsType(rdt), im.AsType(rdt)
				closeAll(re, im)
				return cr, ci, nil
			}
			return re, im, nil
		}
		return x.AsType(rdt), m.Zeros(rdt), nil
	case complex128:
		return m.Full(rdt, real(x)), m.Full(rdt, imag(x)), nil
	case complex64:
		return m.Full(rdt, float64(real(x))), m.Full(rdt, float64(imag(x))), nil
	}
	s, ok, err := scalarOf(v)
	if err != nil || !ok {
		_, err := toOperand(op, v)
		return nil, nil, err
	}
	f := s.f
	switch s.kind {
	case weakBool:
		f = 0
		if s.b {
			f = 1
		}
	case weakInt:
		f = float64(s.i)
	}
	return m.Full(rdt, f), m.Zeros(rdt), nil
}

// isComplexOperand reports whether v is a complex array or Go number.
func isComplexOperand(v any) bool {
	switch x := v.(type) {
	case *Array:
		return x != nil && x.dt.IsComplex()
	case complex64, complex128:
		return true
	}
	return false
}

// complexResult is the complex dtype of a binary operation on x and y (one
// of them complex): arrays promote; a Go complex number is weak (NEP 50), so
// it takes complexFor of a real array's dtype; a real Go number takes the
// array's dtype.
func complexResult(op string, x, y any) (DType, *Maker, error) {
	var arr DType
	var d *Maker
	weakComplex := false
	for _, v := range []any{x, y} {
		switch a := v.(type) {
		case *Array:
			if err := errOf(op, a); err != nil {
				return 0, nil, err
			}
			if d == nil {
				d = a.dev
			} else if a.dev != d {
				return 0, nil, errorf(op, ErrDevice, "arrays on different devices (%v and %v)", d, a.dev)
			}
			if arr == 0 {
				arr = a.dt
			} else if p := Promote(arr, a.dt); p.Valid() {
				arr = p
			} else {
				return 0, nil, noPromotion(op, arr, a.dt)
			}
		case complex64, complex128:
			weakComplex = true
		}
	}
	if d == nil {
		d = Default()
	}
	switch {
	case arr == 0:
		return Complex128, d, nil
	case arr.IsFloat8():
		return 0, nil, noPromotion(op, arr, Complex64)
	case weakComplex && !arr.IsComplex():
		if arr.IsFloating() {
			return complexFor(arr), d, nil
		}
		return Complex128, d, nil // NumPy: an integer array with a Python complex
	}
	return complexFor(arr), d, nil
}

// complexBinary computes binary operation op where an operand is complex;
// ok is false when neither is.
func complexBinary(name string, op backend.Op, x, y any) (z *Array, ok bool) {
	if !isComplexOperand(x) && !isComplexOperand(y) {
		return nil, false
	}
	dt, d, err := complexResult(name, x, y)
	if err != nil {
		return failed(err), true
	}
	switch op {
	case backend.OpAdd, backend.OpSub, backend.OpMul, backend.OpDiv, backend.OpEq, backend.OpNe, backend.OpPow:
	case backend.OpMaximum, backend.OpMinimum, backend.OpLt, backend.OpLe, backend.OpGt, backend.OpGe:
		return failed(errorf(name, ErrDType, "not supported for %v: complex numbers are not ordered", dt)), true
	default:
		return failed(errorf(name, ErrDType, "not supported for %v", dt)), true
	}
	rdt := dt.component()
	ar, ai, err := d.complexParts(name, x, rdt)
	if err != nil {
		return failed(err), true
	}
	defer closeAll(ar, ai)
	br, bi := ar, ai
	if xa, ok := x.(*Array); !ok || x != y || !xa.dt.IsComplex() {
		// The same complex array twice reads its parts once.
		br, bi, err = d.complexParts(name, y, rdt)
		if err != nil {
			return failed(err), true
		}
		defer closeAll(br, bi)
	}
	var re, im *Array
	var tmp temps
	defer tmp.close()
	t := tmp.add
	switch op {
	case backend.OpEq:
		return t(ar.Eq(br)).LogicalAnd(t(ai.Eq(bi))), true
	case backend.OpNe:
		return t(ar.Ne(br)).LogicalOr(t(ai.Ne(bi))), true
	case backend.OpAdd:
		re, im = ar.Add(br), ai.Add(bi)
	case backend.OpSub:
		re, im = ar.Sub(br), ai.Sub(bi)
	case backend.OpMul:
		re, im = t(ar.Mul(br)).Sub(t(ai.Mul(bi))), t(ar.Mul(bi)).Add(t(ai.Mul(br)))
	case backend.OpDiv:
		re, im = complexDiv(t, ar, ai, br, bi)
	case backend.OpPow:
		re, im = complexPow(ar, ai, br, bi)
	}
	t(re)
	t(im)
	return d.fromParts(name, dt, re, im), true
}

// temps are the temporary arrays of a complex operation, closed when it
// returns: a pending one left to the collector would keep its inputs'
// memory until a collection.
type temps []*Array

// add adds a to the temporaries and returns it.
func (t *temps) add(a *Array) *Array {
	*t = append(*t, a)
	return a
}

func (t *temps) close() { closeAll(*t...) }

// complexDiv is (ar + i·ai) / (br + i·bi) by Smith's algorithm, as NumPy:
// it scales by the larger part of the divisor, so that squaring it cannot
// overflow.
// t keeps the temporaries for closing.
func complexDiv(t func(*Array) *Array, ar, ai, br, bi *Array) (re, im *Array) {
	big := t(shared(t(br.Abs()).Ge(t(bi.Abs()))))
	// |br| >= |bi|: r = bi/br, den = br + bi·r.
	r1 := t(shared(bi.Div(br)))
	d1 := t(shared(br.Add(t(bi.Mul(r1)))))
	re1 := t(t(ar.Add(t(ai.Mul(r1)))).Div(d1))
	im1 := t(t(ai.Sub(t(ar.Mul(r1)))).Div(d1))
	// |bi| > |br|: r = br/bi, den = br·r + bi.
	r2 := t(shared(br.Div(bi)))
	d2 := t(shared(t(br.Mul(r2)).Add(bi)))
	re2 := t(t(t(ar.Mul(r2)).Add(ai)).Div(d2))
	im2 := t(t(t(ai.Mul(r2)).Sub(ar)).Div(d2))
	return Where(big, re1, re2), Where(big, im1, im2)
}

// complexUnary computes unary operation op of a complex array.
func (a *Array) complexUnary(name string, op backend.Op) *Array {
	re, im, err := a.parts(name)
	if err != nil {
		return failed(err)
	}
	defer closeAll(re, im)
	d, dt := a.dev, a.dt
	var tmp temps
	defer tmp.close()
	t := tmp.add
	fromParts := func(name string, dt DType, r, i *Array) *Array {
		return d.fromParts(name, dt, t(r), t(i))
	}
	switch op {
	case backend.OpNeg:
		return fromParts(name, dt, re.Neg(), im.Neg())
	case backend.OpAbs:
		return re.Hypot(im)
	case backend.OpSquare:
		return fromParts(name, dt, t(re.Mul(re)).Sub(t(im.Mul(im))), t(re.Mul(im)).Mul(2))
	case backend.OpReciprocal:
		one, zero := t(d.Ones(re.dt)), t(d.Zeros(re.dt))
		r, i := complexDiv(t, one, zero, re, im)
		return fromParts(name, dt, r, i)
	case backend.OpExp:
		e := t(shared(re.Exp()))
		return fromParts(name, dt, e.Mul(t(im.Cos())), e.Mul(t(im.Sin())))
	case backend.OpLog:
		return fromParts(name, dt, t(re.Hypot(im)).Log(), im.Arctan2(re))
	case backend.OpSqrt:
		r, i := complexSqrt(re, im)
		return fromParts(name, dt, r, i)
	case backend.OpIsNaN:
		return re.IsNaN().LogicalOr(im.IsNaN())
	case backend.OpIsInf:
		return re.IsInf().LogicalOr(im.IsInf())
	case backend.OpIsFinite:
		return re.IsFinite().LogicalAnd(im.IsFinite())
	case backend.OpNot:
		return re.Eq(0).LogicalAnd(im.Eq(0))
	}
	return failed(errorf(name, ErrDType, "not supported for %v", dt))
}

// complexSqrt is the principal square root, computed without cancellation:
// t = sqrt((|re| + |z|)/2) is the larger part of the result.
func complexSqrt(re, im *Array) (r, i *Array) {
	t := re.Abs().Add(re.Hypot(im)).Mul(0.5).Sqrt()
	small := im.Abs().Div(t.Mul(2)) // the other part's magnitude
	small = Where(t.Eq(0), 0, small)
	pos := re.Ge(0)
	r = Where(pos, t, small)
	i = Where(pos, Where(t.Eq(0), im, im.Div(t.Mul(2))), t.Copysign(im))
	return r, i
}

// Real returns the real part of a complex array (a new array; NumPy's
// real is a view: use ViewAsReal for one) and a itself for a real one.
func (a *Array) Real() *Array {
	if err := errOf("Real", a); err != nil {
		return failed(err)
	}
	if !a.dt.IsComplex() {
		return a.lazyCopy("Real")
	}
	re, im, err := a.parts("Real")
	if err != nil {
		return failed(err)
	}
	defer im.Close()
	defer re.Close()
	return re.lazyCopy("Real")
}

// Imag returns the imaginary part of a complex array (a new array), and
// zeros of a's dtype for a real one.
func (a *Array) Imag() *Array {
	if err := errOf("Imag", a); err != nil {
		return failed(err)
	}
	if !a.dt.IsComplex() {
		return a.dev.Zeros(a.dt, a.shape...)
	}
	re, im, err := a.parts("Imag")
	if err != nil {
		return failed(err)
	}
	defer im.Close()
	defer re.Close()
	return im.lazyCopy("Imag")
}

// Conj returns the complex conjugate (a copy of a real array).
func (a *Array) Conj() *Array {
	if err := errOf("Conj", a); err != nil {
		return failed(err)
	}
	if !a.dt.IsComplex() {
		return a.lazyCopy("Conj")
	}
	re, im, err := a.parts("Conj")
	if err != nil {
		return failed(err)
	}
	neg := im.Neg()
	defer closeAll(re, im, neg)
	return a.dev.fromParts("Conj", a.dt, re, neg)
}

// Angle returns the argument of each complex value in radians, in
// (-π, π] (NumPy's angle): float32 for complex64, float64 for complex128.
// A real array gives 0 or π (float64 for integers, as NumPy).
func (a *Array) Angle() *Array {
	if err := errOf("Angle", a); err != nil {
		return failed(err)
	}
	if !a.dt.IsComplex() {
		f := a.AsType(floatFor(a.dt))
		return f.dev.Zeros(f.dt).Arctan2(f)
	}
	re, im, err := a.parts("Angle")
	if err != nil {
		return failed(err)
	}
	defer closeAll(re, im)
	return im.Arctan2(re)
}

// complexAsType converts where a or dt is complex. Complex to a real
// dtype other than bool is an ErrDType error: NumPy drops the imaginary
// part with a ComplexWarning; gocu asks for Real, Imag or Abs instead.
func (a *Array) complexAsType(dt DType) *Array {
	const op = "AsType"
	if err := errOf(op, a); err != nil {
		return failed(err)
	}
	switch {
	case a.dt.IsComplex() && dt == Bool:
		return a.Ne(0)
	case a.dt.IsComplex() && !dt.IsComplex():
		return failed(errorf(op, ErrDType, "%v to %v would discard the imaginary part (NumPy warns ComplexWarning): use Real, Imag or Abs", a.dt, dt))
	case dt.component().IsFloat() && a.dt.IsFloat8():
		return failed(noPromotion(op, a.dt, dt))
	}
	re, im, err := a.dev.complexParts(op, a, dt.component())
	if err != nil {
		return failed(err)
	}
	defer closeAll(re, im)
	return a.dev.fromParts(op, dt, re, im)
}

// complexAssign is Assign where a or src is complex: src, converted to
// a's complex dtype, is written as a pending complex array. A complex
// source for a real destination is an ErrDType error, as in AsType.
func (a *Array) complexAssign(src any) error {
	const op = "Assign"
	if !a.dt.IsComplex() {
		return errorf(op, ErrDType, "assigning complex values to %v would discard the imaginary part: assign Real, Imag or Abs", a.dt)
	}
	if s, ok := src.(*Array); ok && s != nil && s.dt.IsFloat8() {
		return noPromotion(op, s.dt, a.dt)
	}
	re, im, err := a.dev.complexParts(op, src, a.dt.component())
	if err != nil {
		return err
	}
	defer closeAll(re, im)
	c := a.dev.fromParts(op, a.dt, re, im)
	defer c.Close()
	if err := errOf(op, c); err != nil {
		return err
	}
	return a.Assign(c)
}

// complexCopy is Copy of a complex array: a materialised one is copied
// through its float view (the contiguous kernels move vectors), a pending
// one evaluated into the copy.
func (a *Array) complexCopy() *Array {
	if a != nil && a.dev != nil && !a.isPending() {
		v := a.ViewAsReal()
		defer v.Close()
		c := v.Copy()
		defer c.Close()
		return c.ViewAsComplex()
	}
	re, im, err := a.parts("Copy")
	if err != nil {
		return failed(err)
	}
	defer re.Close()
	defer im.Close()
	return a.dev.fromParts("Copy", a.dt, re, im)
}

// fullComplex is Full for a complex dtype.
func (m *Maker) fullComplex(dt DType, value any, shape []int) *Array {
	re, im, err := m.complexParts("Full", value, dt.component())
	if err != nil {
		return failed(err)
	}
	// The broadcast view is closed too: left to the collector, it kept a
	// small device buffer per call.
	rb := re.BroadcastTo(shape...)
	defer closeAll(re, im, rb)
	return m.fromParts("Full", dt, rb, im)
}

// complexNormal draws standard complex normal values scaled by std around
// mean: each part N(mean or 0, std²/2), so E|z - mean|² = std² (PyTorch's
// randn for complex dtypes).
func (r *RNG) complexNormal(op string, dt DType, mean, std float64, shape []int) *Array {
	s := std / math.Sqrt2
	re := r.Normal(dt.component(), mean, s, shape...)
	im := r.Normal(dt.component(), 0, s, shape...)
	defer re.Close()
	defer im.Close()
	if re.Err() != nil || im.Err() != nil {
		return failed(renameOp(firstErr(re.Err(), im.Err()), op))
	}
	return r.dev.fromParts(op, dt, re, im)
}

func firstErr(errs ...error) error {
	for _, e := range errs {
		if e != nil {
			return e
		}
	}
	return nil
}

// complexReduce is Reduce of a complex array: Sum and Mean reduce the
// parts; Prod multiplies pairs in a tree; Any and All test for nonzero
// values; the ordering reductions are ErrDType errors.
func (a *Array) complexReduce(name string, op ReduceOp, keepDims bool, axes []int) *Array {
	if err := a.Err(); err != nil {
		return failed(err)
	}
	r := len(a.shape)
	norm, err := normAxes(name, axes, r)
	if err != nil {
		return failed(err)
	}
	if len(axes) == 0 {
		norm = make([]int, r)
		for i := range norm {
			norm[i] = i
		}
	}
	switch op {
	case OpAny, OpAll:
		nz := a.Ne(0)
		defer nz.Close()
		return nz.Reduce(op, keepDims, norm...)
	case OpSum, OpMean:
		v := a.ViewAsReal()
		defer v.Close()
		s := v.Reduce(op, keepDims, norm...)
		if err := s.Err(); err != nil {
			return failed(err)
		}
		c := s.Contiguous()
		s.Close()
		defer c.Close()
		return c.ViewAsComplex()
	case OpProd:
		return a.complexProd(name, keepDims, norm)
	}
	return failed(errorf(name, ErrDType, "not supported for %v (complex numbers are not ordered)", a.dt))
}

// complexProd multiplies the values along the axes pairwise: the reduced
// axes are moved last and flattened, then halved until one value remains.
func (a *Array) complexProd(name string, keepDims bool, axes []int) *Array {
	r := len(a.shape)
	red := make([]bool, r)
	for _, ax := range axes {
		red[ax] = true
	}
	var perm, kept, kd []int
	k := 1
	for i := 0; i < r; i++ {
		if !red[i] {
			perm = append(perm, i)
			kept = append(kept, a.shape[i])
			kd = append(kd, a.shape[i])
		} else {
			kd = append(kd, 1)
		}
	}
	for i := 0; i < r; i++ {
		if red[i] {
			perm = append(perm, i)
			k *= a.shape[i]
		}
	}
	x := a.Transpose(perm...).Copy().Reshape(append(append([]int(nil), kept...), k)...)
	if k == 0 {
		x, k = a.dev.Full(a.dt, 1, append(append([]int(nil), kept...), 1)...), 1
	}
	for k > 1 {
		h := k / 2
		y := x.Slice(Ellipsis, S(0, h)).Mul(x.Slice(Ellipsis, S(h, 2*h)))
		if k%2 == 1 {
			y = Concat(len(kept), y, x.Slice(Ellipsis, S(2*h, k)))
		}
		x, k = y, h+k%2
	}
	if err := x.Err(); err != nil {
		return failed(renameOp(err, name))
	}
	if keepDims {
		return x.Reshape(kd...)
	}
	return x.Reshape(kept...)
}

// complexMatMul is MatMul where a or b is complex: cuBLAS's complex GEMM
// (Cgemm, Zgemm through cublasGemmEx) on a GPU; on the CPU four real
// products of the parts (two where one operand is real) on the CPU GEMM.
func complexMatMul(a, b *Array) *Array {
	const op = "MatMul"
	dt, d, err := complexResult(op, a, b)
	if err != nil {
		return failed(err)
	}
	if d.gpu != nil {
		return matmul(op, a, b, dt, dt, dt, nil, nil)
	}
	rdt := dt.component()
	ar, ai, err := d.complexParts(op, a, rdt)
	if err != nil {
		return failed(err)
	}
	defer closeAll(ar, ai)
	br, bi, err := d.complexParts(op, b, rdt)
	if err != nil {
		return failed(err)
	}
	defer closeAll(br, bi)
	var re, im *Array
	switch {
	case !a.dt.IsComplex():
		re, im = ar.MatMul(br.Contiguous()), ar.MatMul(bi.Contiguous())
	case !b.dt.IsComplex():
		re, im = ar.Contiguous().MatMul(br), ai.Contiguous().MatMul(br)
	default:
		arc, aic, brc, bic := ar.Contiguous(), ai.Contiguous(), br.Contiguous(), bi.Contiguous()
		re = arc.MatMul(brc).Sub(aic.MatMul(bic))
		im = arc.MatMul(bic).Add(aic.MatMul(brc))
	}
	return d.fromParts(op, dt, re, im)
}

// complexConcat is Concat where an array is complex: the float views of
// the arrays, converted to the common complex dtype, are joined.
func complexConcat(axis int, arrs []*Array) *Array {
	const op = "Concat"
	dt := arrs[0].dt
	for _, a := range arrs[1:] {
		if p := Promote(dt, a.dt); p.Valid() {
			dt = p
		} else {
			return failed(noPromotion(op, dt, a.dt))
		}
	}
	r := len(arrs[0].shape)
	if r == 0 {
		return failed(errorf(op, ErrShape, "zero-dimensional arrays cannot be concatenated"))
	}
	ax, err := normAxis(op, axis, r)
	if err != nil {
		return failed(err)
	}
	views := make([]*Array, len(arrs))
	for i, a := range arrs {
		c := a
		if a.dt != dt {
			c = a.AsType(dt)
			defer c.Close()
		}
		views[i] = c.ViewAsReal()
		defer views[i].Close()
	}
	j := Concat(ax, views...)
	defer j.Close()
	return j.ViewAsComplex()
}

// complexWhere is Where where x or y is complex: each part is chosen
// separately. A complex condition is an ErrDType error.
func complexWhere(cond, x, y any) *Array {
	const op = "Where"
	if isComplexOperand(cond) {
		return failed(errorf(op, ErrDType, "the condition must not be complex (test it with Ne(0))"))
	}
	dt, d, err := complexResult(op, x, y)
	if err != nil {
		return failed(err)
	}
	if c, ok := cond.(*Array); ok && c != nil {
		d = c.dev
	}
	rdt := dt.component()
	xr, xi, err := d.complexParts(op, x, rdt)
	if err != nil {
		return failed(err)
	}
	defer closeAll(xr, xi)
	yr, yi, err := d.complexParts(op, y, rdt)
	if err != nil {
		return failed(err)
	}
	defer closeAll(yr, yi)
	return d.fromParts(op, dt, Where(cond, xr, yr), Where(cond, xi, yi))
}

// printData is hostData for printing: complex arrays as []complex64 or
// []complex128.
func (a *Array) printData() (any, error) {
	switch a.DType() {
	case Complex64:
		return ToComplex[complex64](a)
	case Complex128:
		return ToComplex[complex128](a)
	}
	return a.hostData("String")
}

// complexFormatter formats complex elements as NumPy: the real parts
// aligned as a float array, then the imaginary parts, signed, with "j".
func complexFormatter(get func(int) complex128, ff floatFmt, shown []int, prec int) func(i int) string {
	fr := floatFormatter(func(i int) float64 { return real(get(i)) }, ff, shown, prec)
	fi := floatFormatter(func(i int) float64 { return imag(get(i)) }, ff, shown, prec)
	signed := func(i int) string {
		s := strings.TrimLeft(fi(i), " ")
		if !strings.HasPrefix(s, "-") {
			s = "+" + s
		}
		return s
	}
	w := 0
	for _, i := range shown {
		w = max(w, len(signed(i)))
	}
	return func(i int) string {
		s := signed(i)
		s = strings.Repeat(" ", w-len(s)) + s
		k := len(strings.TrimRight(s, " "))
		return fr(i) + s[:k] + "j" + s[k:]
	}
}

// complexPow is a**b = exp(b·log a), with 0**b = 0 for b with a positive
// real part and a**0 = 1 (NumPy's special cases; NumPy multiplies out
// small integer powers, so results differ from it by rounding).
func complexPow(ar, ai, br, bi *Array) (re, im *Array) {
	lr, li := ar.Hypot(ai).Log(), ai.Arctan2(ar)
	// b·log a
	pr := br.Mul(lr).Sub(bi.Mul(li))
	pi := br.Mul(li).Add(bi.Mul(lr))
	e := pr.Exp()
	re, im = e.Mul(pi.Cos()), e.Mul(pi.Sin())
	zero := ar.Eq(0).LogicalAnd(ai.Eq(0)).LogicalAnd(br.Gt(0))
	one := br.Eq(0).LogicalAnd(bi.Eq(0))
	re = Where(one, 1, Where(zero, 0, re))
	im = Where(one, 0, Where(zero, 0, im))
	return re, im
}

// ComplexItem returns the value of a one-element array as a complex128
// (a real array's value with a zero imaginary part).
func (a *Array) ComplexItem() (complex128, error) {
	const op = "ComplexItem"
	if err := a.Err(); err != nil {
		return 0, err
	}
	if n := backend.Size(a.shape); n != 1 {
		return 0, errorf(op, ErrShape, "can only convert an array of size 1, not %d", n)
	}
	if !a.dt.IsComplex() {
		f, err := a.Item()
		return complex(f, 0), err
	}
	v, err := ToComplex[complex128](a.AsType(Complex128))
	if err != nil {
		return 0, err
	}
	return v[0], nil
}

// closeAll closes the temporary arrays of a complex operation (the views
// of the parts): what was built from them holds its own references.
func closeAll(arrs ...*Array) {
	for _, a := range arrs {
		if a != nil {
			a.Close()
		}
	}
}
