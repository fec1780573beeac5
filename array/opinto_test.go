package array

import (
	"errors"
	"fmt"
	"math"
	"testing"

	"github.com/gocu-dev/gocu/array/internal/cpu"
)

// intoSameValues reports the first element where a and b differ, NaNs equal.
func intoSameValues(t *testing.T, what string, got, want *Array) {
	t.Helper()
	g, w := readCase(t, what, got), readCase(t, what, want)
	if !sameShape(g.shape, w.shape) {
		t.Errorf("%s: shape %v, want %v", what, g.shape, w.shape)
		return
	}
	for i := range w.v {
		if g.v[i] != w.v[i] && !(math.IsNaN(g.v[i]) && math.IsNaN(w.v[i])) {
			t.Errorf("%s: element %d is %v, want %v (the allocating path's)", what, i, g.v[i], w.v[i])
			return
		}
	}
}

// intoSameErr checks that BinaryInto or UnaryInto failed as the allocating
// path did, or succeeded as it did.
func intoSameErr(t *testing.T, what string, got, want error) bool {
	t.Helper()
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("%s: error %v, want the allocating path's %v", what, got, want)
	}
	return want == nil
}

// intoDTypes are the dtypes the Into tests draw operands and
// destinations from: the short path's and ones it leaves to Into.
var intoDTypes = []DType{Float32, Float64, Int32, Int64, Uint8, Bool, Float16}

// BinaryInto writes what x.Op(y).Into(dst) writes, for every binary
// operation and dtype, with arrays of one shape or broadcast, scalars on
// either side, and destinations of the result's dtype (the short path) or
// another (a conversion), on fresh random inputs into poisoned memory.
func TestBinaryIntoMatchesOps(t *testing.T) {
	forEachBackend(t, func(t *testing.T, d *Maker) {
		r := newRand(t)
		for op := OpAdd; op <= OpRightShift; op++ {
			bop := binaryOps[op]
			for _, dt := range intoDTypes {
				x := makeArray(t, d, dt, randHost(r, dt, []int{3, 4}, -20, 20), contiguous).Eval()
				y := makeArray(t, d, dt, randHost(r, dt, []int{3, 4}, -20, 20), contiguous).Eval()
				row := makeArray(t, d, dt, randHost(r, dt, []int{4}, -20, 20), contiguous).Eval()
				cases := []intoCase{
					intoBinary("x, y", op, x, y, true),
					intoBinary("x, row", op, x, row, true),
					intoBinary("row, x", op, row, x, true),
					intoBinary("x, x", op, x, x, true),
				}
				if dt.IsFloating() {
					f := float32(r.Float64()*4 - 2)
					cases = append(cases, intoBinary("x, float32", op, x, f, true),
						intoBinary("float64, x", op, float64(f), x, true))
				} else {
					cases = append(cases, intoBinary("x, int", op, x, 3, dt != Bool),
						intoBinary("int8, x", op, int8(3), x, dt != Bool))
				}
				for _, c := range cases {
					ref := c.ref()
					for _, ddt := range []DType{ref.DType(), Float64} {
						what := fmt.Sprintf("%v %v (%s) into %v", op, dt, c.name, ddt)
						dst, want := d.Empty(ddt, 3, 4).Eval(), d.Empty(ddt, 3, 4).Eval()
						if intoSameErr(t, what, c.run(dst), ref.Into(want)) {
							intoSameValues(t, what, dst, want)
						}
						if c.fast && ddt == dt && shortOp(bop, dt) {
							// The short path itself, not through BinaryInto.
							short := d.Empty(ddt, 3, 4).Eval()
							if done, err := binaryInto(bop, short, c.ox, c.oy); !done || err != nil {
								t.Errorf("%s: the short path was not taken (%v)", what, err)
							} else {
								intoSameValues(t, what+", short path", short, want)
							}
							short.Close()
						}
						dst.Close()
						want.Close()
					}
					ref.Close()
				}
				for _, a := range []*Array{x, y, row} {
					a.Close()
				}
			}
		}
	})
}

// intoCase is BinaryInto of two operands, its allocating counterpart,
// the operands as binaryInto takes them, and whether it takes them.
type intoCase struct {
	name   string
	run    func(dst *Array) error
	ref    func() *Array
	ox, oy operand
	fast   bool
}

func intoBinary[X, Y Operand](name string, op BinaryOp, x X, y Y, fast bool) intoCase {
	ox, _ := operandOf(x)
	oy, _ := operandOf(y)
	return intoCase{name: name, ox: ox, oy: oy, fast: fast,
		run: func(dst *Array) error { return BinaryInto(dst, op, x, y) },
		ref: func() *Array { return binaryOp(op.String(), binaryOps[op], x, y) }}
}

// UnaryInto writes what x.Op().Into(dst) writes, for every unary operation
// and dtype, into the result's dtype and into float64.
func TestUnaryIntoMatchesOps(t *testing.T) {
	forEachBackend(t, func(t *testing.T, d *Maker) {
		r := newRand(t)
		for op := OpNeg; op <= OpLogicalNot; op++ {
			uop := unaryOps[op]
			for _, dt := range intoDTypes {
				x := makeArray(t, d, dt, randHost(r, dt, []int{2, 5}, -3, 3), contiguous).Eval()
				ref := x.unary(op.String(), uop)
				for _, ddt := range []DType{ref.DType(), Float64} {
					what := fmt.Sprintf("%v %v into %v", op, dt, ddt)
					dst, want := d.Empty(ddt, 2, 5).Eval(), d.Empty(ddt, 2, 5).Eval()
					if intoSameErr(t, what, UnaryInto(dst, op, x), ref.Into(want)) {
						intoSameValues(t, what, dst, want)
					}
					dst.Close()
					want.Close()
				}
				ref.Close()
				x.Close()
			}
		}
		// The short path is taken for float functions of floats and
		// arithmetic of numbers.
		for _, c := range []struct {
			op UnaryOp
			dt DType
		}{{OpExp, Float32}, {OpTanh, Float64}, {OpNeg, Int32}, {OpAbs, Uint8}, {OpFloor, Int64}, {OpSquare, Float32}} {
			x, dst := d.Ones(c.dt, 4).Eval(), d.Empty(c.dt, 4).Eval()
			if done, err := unaryInto(unaryOps[c.op], dst, x); !done || err != nil {
				t.Errorf("%v of %v: the short path was not taken (%v)", c.op, c.dt, err)
			}
		}
	})
}

// BinaryInto in place, against a float64 reference: x = x*s + y, then
// dst read transposed (through a temporary), then a pending reader of
// dst, which is evaluated before dst is written.
func TestBinaryIntoInPlace(t *testing.T) {
	forEachBackend(t, func(t *testing.T, d *Maker) {
		r := newRand(t)
		xh, yh := randHost(r, Float32, []int{4, 4}, -2, 2), randHost(r, Float32, []int{4, 4}, -2, 2)
		x, y := makeArray(t, d, Float32, xh, contiguous).Eval(), makeArray(t, d, Float32, yh, contiguous).Eval()
		s := float32(r.Float64() + 0.5)
		want := make([]float64, 16)
		for i := range want {
			want[i] = float64(float32(float32(xh.v[i])*s) + float32(yh.v[i]))
		}
		reader := x.Add(1) // pending: reads x's old values
		if err := BinaryInto(x, OpMul, x, s); err != nil {
			t.Fatal(err)
		}
		if err := BinaryInto(x, OpAdd, x, y); err != nil {
			t.Fatal(err)
		}
		checkHost(t, "x*s + y in place", readHost(t, x), []int{4, 4}, want, 0)
		old := make([]float64, 16)
		for i, v := range xh.v {
			old[i] = float64(float32(v) + 1)
		}
		checkHost(t, "a pending reader of dst", readHost(t, reader), []int{4, 4}, old, 0)
		tw := make([]float64, 16)
		for i := range 4 {
			for j := range 4 {
				tw[i*4+j] = float64(float32(want[j*4+i]) - float32(want[i*4+j]))
			}
		}
		if err := BinaryInto(x, OpSub, x.T(), x); err != nil {
			t.Fatal(err)
		}
		checkHost(t, "x.T() - x into x", readHost(t, x), []int{4, 4}, tw, 0)
		ex := make([]float64, 16)
		for i, v := range tw {
			ex[i] = float64(float32(math.Exp(v)))
		}
		if err := UnaryInto(x, OpExp, x); err != nil {
			t.Fatal(err)
		}
		checkHost(t, "exp in place", readHost(t, x), []int{4, 4}, ex, 1e-6)
	})
}

// BinaryInto writes a strided view (a column of a matrix) and nothing
// else, from operands that are views too (a transposed matrix's column).
func TestBinaryIntoView(t *testing.T) {
	forEachBackend(t, func(t *testing.T, d *Maker) {
		r := newRand(t)
		mh, qh := randHost(r, Float32, []int{5, 3}, -2, 2), randHost(r, Float32, []int{3, 5}, -2, 2)
		m, q := makeArray(t, d, Float32, mh, contiguous).Eval(), makeArray(t, d, Float32, qh, contiguous).Eval()
		col, qcol := m.Slice(All, Idx(1)).Eval(), q.T().Slice(All, Idx(2)).Eval()
		ox, _ := operandOf(qcol)
		oy, _ := operandOf(1.5)
		if done, err := binaryInto(binaryOps[OpMul], col, ox, oy); !done || err != nil {
			t.Fatalf("the short path was not taken (%v)", err)
		}
		want := append([]float64{}, mh.v...)
		for i := range 5 {
			want[i*3+1] = float64(float32(qh.v[2*5+i]) * 1.5)
		}
		checkHost(t, "m[:, 1] = q.T[:, 2] * 1.5", readHost(t, m), []int{5, 3}, want, 0)
	})
}

// Two Go scalars are computed on dst's device, as NumPy computes
// np.add(1, 2.5, out=dst).
func TestBinaryIntoScalars(t *testing.T) {
	d := &Maker{be: poisonBackend{cpu.New(0), t}}
	dst := d.Empty(Float32, 3)
	if err := BinaryInto(dst, OpAdd, 1, 2.5); err != nil {
		t.Fatal(err)
	}
	checkHost(t, "1 + 2.5", readHost(t, dst), []int{3}, []float64{3.5, 3.5, 3.5}, 0)
	c := d.Empty(Complex128, 2)
	if err := BinaryInto(c, OpMul, complex(2, 1), 1.5); err != nil {
		t.Fatal(err)
	}
	got, err := ToComplex[complex128](c)
	if err != nil || got[0] != complex(3, 1.5) || got[1] != complex(3, 1.5) {
		t.Errorf("(2+1i) * 1.5 = %v (%v), want 3+1.5i", got, err)
	}
}

// Every user error of BinaryInto and UnaryInto is reported, as Into and
// the operation report it.
func TestBinaryIntoErrors(t *testing.T) {
	d := &Maker{be: poisonBackend{cpu.New(0), t}}
	other := &Maker{be: poisonBackend{cpu.New(0), t}}
	x, y := d.Ones(Float32, 3, 4).Eval(), d.Ones(Float32, 3, 4).Eval()
	u8 := d.Ones(Uint8, 4).Eval()
	closed := d.Zeros(Float32, 3, 4).Eval()
	closed.Close()
	for _, c := range []struct {
		name string
		err  error
		want error
	}{
		{"dst of another shape", BinaryInto(d.Empty(Float32, 4, 3), OpAdd, x, y), ErrShape},
		{"dst smaller than the result", BinaryInto(d.Empty(Float32, 4), OpAdd, x, 1), ErrShape},
		{"operands that do not broadcast", BinaryInto(d.Empty(Float32, 3, 4), OpAdd, x, d.Ones(Float32, 3)), ErrShape},
		{"unary into another shape", UnaryInto(d.Empty(Float32, 12), OpExp, x), ErrShape},
		{"a complex result into a real dst", BinaryInto(d.Empty(Float32, 3, 4), OpMul, x, 1i), ErrDType},
		{"a complex array into a real dst", d.Full(Complex64, 1i, 4).Into(d.Empty(Float32, 4)), ErrDType},
		{"dst on another device", BinaryInto(other.Empty(Float32, 3, 4), OpAdd, x, y), ErrDevice},
		{"operands on two devices", BinaryInto(d.Empty(Float32, 3, 4), OpAdd, x, other.Ones(Float32, 3, 4)), ErrDevice},
		{"unary into another device", UnaryInto(other.Empty(Float32, 3, 4), OpExp, x), ErrDevice},
		{"a float operand of a bitwise operation", BinaryInto(d.Empty(Float32, 3, 4), OpBitwiseAnd, x, y), ErrDType},
		{"bool subtraction", BinaryInto(d.Empty(Bool, 3), OpSub, d.Ones(Bool, 3), d.Ones(Bool, 3)), ErrDType},
		{"bitwise not of a float", UnaryInto(d.Empty(Float32, 3, 4), OpBitwiseNot, x), ErrDType},
		{"a broadcast destination", BinaryInto(d.Zeros(Float32, 4).BroadcastTo(3, 4), OpAdd, x, y), ErrValue},
		{"a scalar out of range", BinaryInto(d.Empty(Uint8, 4), OpAdd, u8, 300), ErrValue},
		{"a uint64 above int64", BinaryInto(d.Empty(Uint8, 4), OpAdd, u8, uint64(1)<<63), ErrValue},
		{"an unknown binary operation", BinaryInto(d.Empty(Float32, 3, 4), BinaryOp(200), x, y), ErrValue},
		{"an unknown unary operation", UnaryInto(d.Empty(Float32, 3, 4), UnaryOp(200), x), ErrValue},
		{"a closed dst", BinaryInto(closed, OpAdd, x, y), ErrClosed},
		{"a closed operand", BinaryInto(d.Empty(Float32, 3, 4), OpAdd, x, closed), ErrClosed},
		{"a closed unary operand", UnaryInto(d.Empty(Float32, 3, 4), OpExp, closed), ErrClosed},
		{"a nil dst", BinaryInto(nil, OpAdd, x, y), ErrValue},
		{"a nil operand", BinaryInto(d.Empty(Float32, 3, 4), OpAdd, x, (*Array)(nil)), ErrValue},
		{"a nil unary operand", UnaryInto(d.Empty(Float32, 3, 4), OpExp, nil), ErrValue},
	} {
		if !errors.Is(c.err, c.want) {
			t.Errorf("%s: %v, want %v", c.name, c.err, c.want)
		}
	}
	if OpHypot.String() != "Hypot" || OpLogicalNot.String() != "LogicalNot" || BinaryOp(200).String() != "BinaryOp(200)" {
		t.Errorf("names: %v %v %v", OpHypot, OpLogicalNot, BinaryOp(200))
	}
}
