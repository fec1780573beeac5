package array

import (
	"errors"
	"strings"
	"testing"
)

func isKind(err, kind error) bool { return err != nil && errors.Is(err, kind) }

// Each user error gives the documented sentinel, an *Error naming the
// operation, and a message a user can act on; none panics.
func TestUserErrors(t *testing.T) {
	d := CPU()
	x := d.Ones(Float32, 3, 4)
	cases := []struct {
		name string
		a    *Array
		kind error
		msg  string
	}{
		{"broadcast", x.Add(d.Ones(Float32, 5)), ErrShape, "array: Add: shapes (3,4) and (5,) cannot be broadcast"},
		{"where broadcast", Where(d.Ones(Bool, 2), x, 1), ErrShape, "Where: shapes (2,), (3,4) and () cannot be broadcast"},
		{"reshape", x.Reshape(5, 3), ErrShape, "cannot reshape array of size 12 into shape (5,3)"},
		{"reshape two -1", x.Reshape(-1, -1), ErrValue, "bad dimension -1"},
		{"transpose axes", x.Transpose(0), ErrAxis, "don't match"},
		{"transpose repeated", x.Transpose(1, 1), ErrAxis, "repeated axis"},
		{"sum axis", x.Sum(2), ErrAxis, "axis 2 is out of bounds for an array of dimension 2"},
		{"sum repeated", x.Sum(0, -2), ErrAxis, "repeated axis"},
		{"argmax repeated axes", x.ArgMax(0, -2), ErrAxis, "repeated axis"},
		{"max empty", d.Zeros(Float32, 0, 3).Max(0), ErrValue, "zero-size array to reduction operation max"},
		{"softmax axis", x.Softmax(3), ErrAxis, "axis 3 is out of bounds"},
		{"softmax 0-d", d.Scalar(1.0).Softmax(0), ErrAxis, "at least one dimension"},
		{"matmul", x.MatMul(d.Ones(Float32, 5, 2)), ErrShape, "shapes (3,4) and (5,2) not aligned: 4 (dim 1) != 5 (dim 0)"},
		{"matmul 0-d", x.MatMul(d.Scalar(1.0)), ErrShape, "0-d operand"},
		{"matmul batch", d.Ones(Float32, 2, 3, 4).MatMul(d.Ones(Float32, 3, 4, 5)), ErrShape, "batch dimensions"},
		{"slice index", x.Slice(Idx(3)), ErrIndex, "index 3 is out of bounds for axis 0 with size 3"},
		{"slice too many", x.Slice(All, All, All), ErrIndex, "too many indices"},
		{"slice step", x.Slice(S(0, 3, 0)), ErrValue, "step cannot be zero"},
		{"slice S args", x.Slice(S()), ErrValue, "S takes 1 to 3 arguments"},
		{"two ellipses", x.Slice(Ellipsis, Ellipsis), ErrIndex, "single Ellipsis"},
		{"at rank", x.At(1), ErrIndex, "1 indices for an array of dimension 2"},
		{"squeeze", x.Squeeze(0), ErrShape, "size not equal to one"},
		{"expand dims", x.ExpandDims(4), ErrAxis, "axis 4 is out of bounds"},
		{"broadcastTo", x.BroadcastTo(4), ErrShape, "cannot broadcast shape (3,4) to (4,)"},
		{"neg bool", d.Ones(Bool, 2).Neg(), ErrDType, "Neg: not supported for bool"},
		{"sub bool", d.Ones(Bool, 2).Sub(true), ErrDType, "Sub: not supported for bool"},
		{"relu bool", d.Ones(Bool, 2).ReLU(), ErrDType, "not supported for bool"},
		{"operand type", x.Add("one"), ErrDType, "unsupported operand type string"},
		{"nil operand", x.Add(nil), ErrDType, "nil operand"},
		{"nil array", x.Add((*Array)(nil)), ErrValue, "nil array"},
		{"negative shape", d.Zeros(Float32, 2, -1), ErrValue, "negative dimension"},
		{"full overflow", d.Full(Uint8, 256, 2), ErrValue, "256 is out of range for uint8"},
		{"full type", d.Full(Float32, "x", 2), ErrDType, "unsupported value type"},
		{"invalid dtype", d.Zeros(DType(99), 2), ErrDType, "invalid dtype"},
		{"astype invalid", x.AsType(0), ErrDType, "invalid dtype"},
		{"arange step", d.Arange(Float32, 0, 1, 0), ErrValue, "bad range"},
		{"arange args", d.Arange(Float32), ErrValue, "want 1 to 3 arguments"},
		{"linspace", d.Linspace(Float32, 0, 1, -1), ErrValue, "negative"},
		{"eye", d.Eye(Float32, -2), ErrValue, "negative size"},
		{"fromslice", fromSliceOn(d, []float32{1, 2, 3}, 2, 2), ErrShape, "3 values cannot fill shape (2,2)"},
		{"random int", d.NewRNG(1).Uniform(Int32, 0, 1, 3), ErrDType, "float32 or float64"},
	}
	for _, c := range cases {
		err := c.a.Err()
		if err == nil {
			t.Errorf("%s: no error", c.name)
			continue
		}
		if !errors.Is(err, c.kind) {
			t.Errorf("%s: %v is not %v", c.name, err, c.kind)
		}
		var ae *Error
		if !errors.As(err, &ae) || ae.Op == "" {
			t.Errorf("%s: %v is not an *Error with an Op", c.name, err)
		}
		if !strings.Contains(err.Error(), c.msg) {
			t.Errorf("%s: message %q lacks %q", c.name, err.Error(), c.msg)
		}
		if c.a.DType() != 0 || c.a.Shape() != nil {
			t.Errorf("%s: failed array has dtype %v shape %v", c.name, c.a.DType(), c.a.Shape())
		}
	}
}

// An operation on a failed array yields a failed array with the first
// error, through a whole chain, and every read reports it.
func TestStickyErrors(t *testing.T) {
	d := CPU()
	x := d.Ones(Float32, 3, 4)
	bad := x.Add(d.Ones(Float32, 5))
	first := bad.Err()
	w := d.Ones(Float32, 4, 2)
	chain := bad.MatMul(w).Add(1).ReLU().Sum(0).Reshape(2).Softmax(0).Transpose().Slice(All).AsType(Float64)
	if err := chain.Err(); err == nil || err.Error() != first.Error() {
		t.Fatalf("chain error %v, want %v", err, first)
	}
	if _, err := chain.Float64s(); err == nil || err.Error() != first.Error() {
		t.Errorf("ToSlice: %v", err)
	}
	if _, err := chain.Item(); err == nil {
		t.Errorf("Item: no error")
	}
	if s := chain.String(); !strings.Contains(s, first.Error()) {
		t.Errorf("String = %q", s)
	}
	if err := chain.SaveNPY(t.TempDir() + "/x.npy"); err == nil || err.Error() != first.Error() {
		t.Errorf("SaveNPY: %v", err)
	}
	// Used as the second operand, and in Where.
	if err := x.Mul(bad).Err(); err == nil || err.Error() != first.Error() {
		t.Errorf("x * failed: %v", err)
	}
	if err := Where(x.Gt(0), bad, x).Err(); err == nil || err.Error() != first.Error() {
		t.Errorf("Where with failed: %v", err)
	}
	if err := x.Assign(bad); err == nil {
		t.Errorf("Assign(failed): no error")
	}
	// The good operand is untouched.
	if _, err := x.Float32s(); err != nil {
		t.Errorf("x itself failed: %v", err)
	}
	// Item on a bigger array.
	if _, err := x.Item(); !isKind(err, ErrShape) {
		t.Errorf("Item of (3,4): %v", err)
	}
}

func TestClosedArrays(t *testing.T) {
	d := CPU()
	x := d.Ones(Float32, 3)
	y := x.Reshape(3, 1)
	if err := x.Close(); err != nil {
		t.Fatal(err)
	}
	if err := x.Close(); err != nil {
		t.Fatal("second Close:", err)
	}
	if err := x.Add(1).Err(); !isKind(err, ErrClosed) || !strings.Contains(err.Error(), "array: Add: use of closed array") {
		t.Errorf("use after close: %v", err)
	}
	// A view of a closed array keeps the memory alive.
	if v, err := y.Float32s(); err != nil || len(v) != 3 || v[2] != 1 {
		t.Errorf("view after Close: %v %v", v, err)
	}
	var nilArr *Array
	if err := nilArr.Err(); !isKind(err, ErrValue) {
		t.Errorf("nil Err: %v", err)
	}
	if err := nilArr.Close(); err != nil {
		t.Errorf("nil Close: %v", err)
	}
}

func TestDeviceMismatch(t *testing.T) {
	other := &Maker{be: CPU().be}
	x := CPU().Ones(Float32, 2)
	y := other.Ones(Float32, 2)
	for _, a := range []*Array{x.Add(y), x.MatMul(y), Where(x.Gt(0), x, y)} {
		if err := a.Err(); !isKind(err, ErrDevice) || !strings.Contains(err.Error(), "different devices") {
			t.Errorf("mixed devices: %v", err)
		}
	}
	if err := x.Assign(y); !isKind(err, ErrDevice) {
		t.Errorf("Assign across devices: %v", err)
	}
	z, err := y.to(CPU()).Float32s()
	if err != nil || z[1] != 1 {
		t.Errorf("To: %v %v", z, err)
	}
}

// No user error panics: a sweep of hostile arguments.
func TestNoPanics(t *testing.T) {
	d := CPU()
	x := d.Ones(Float32, 2, 3)
	defer func() {
		if r := recover(); r != nil {
			t.Fatalf("panic: %v", r)
		}
	}()
	var nilA *Array
	_ = nilA.Add(1).Err()
	_ = x.Add(nilA).Err()
	_ = nilA.Sum().Err()
	_ = nilA.MatMul(x).Err()
	_ = x.MatMul(nilA).Err()
	_ = nilA.String()
	_, _ = nilA.Float32s()
	_ = nilA.Reshape(2).Err()
	_ = x.Reduce(ReduceOp(200), false).Err()
	_ = x.Slice(S(5, -7, -3), Idx(-3)).Err()
	_ = x.Slice(NewAxis, Ellipsis, NewAxis, Idx(-1)).Err()
	_ = x.At(-1, -1).Err()
	_ = x.BroadcastTo(-1, 3).Err()
	_ = x.MoveAxis(5, 0).Err()
	_ = x.SwapAxes(0, -4).Err()
	_ = d.Linspace(Float32, 1, 0, 0).Err()
	_, _ = ItemOf[int32](nilA)
	_ = fromSliceOn[float32](d, nil).Err()
	_, _ = x.Image(HWC)
	_ = FromImage(nil, HWC, 3).Err()
	_ = FromImage(nil, HWC, 2).Err()
	var nd *Maker
	for _, a := range []*Array{nd.Zeros(Float32, 2), nd.Empty(Float32, 2), nd.Arange(Float32, 3), nd.Linspace(Float32, 0, 1, 3),
		nd.Eye(Float32, 2), fromSliceOn(nd, []float32{1}), nd.NewRNG(1).Rand(2), x.to(nd), (*RNG)(nil).Rand(2)} {
		if err := a.Err(); err == nil {
			t.Errorf("nil device or RNG: no error")
		}
	}
	if _, err := nd.ReadNPY(nil); !isKind(err, ErrDevice) {
		t.Errorf("nil device ReadNPY: %v", err)
	}
	if err := nd.Sync(); !isKind(err, ErrDevice) {
		t.Errorf("nil device Sync: %v", err)
	}
}
