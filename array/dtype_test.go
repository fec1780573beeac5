package array

import (
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/gocu-dev/gocu/array/internal/backend"
)

func dtypeByName(t testing.TB, s string) DType {
	for _, d := range []DType{Bool, Uint8, Int32, Int64, Float32, Float64, Int8, Int16, Uint16, Uint32, Uint64} {
		if d.String() == s {
			return d
		}
	}
	t.Fatalf("unknown dtype %q", s)
	return 0
}

type promotionFixture struct {
	Promote map[string]string
	Weak    map[string]string
	Truediv map[string]string
	Sqrt    map[string]string
}

func loadPromotion(t *testing.T) promotionFixture {
	b, err := os.ReadFile("testdata/promotion.json")
	if err != nil {
		t.Fatal(err)
	}
	var f promotionFixture
	if err := json.Unmarshal(b, &f); err != nil {
		t.Fatal(err)
	}
	return f
}

// Array-array promotion equals numpy.promote_types for every pair, both
// through Promote and through the dtype of an actual Add.
func TestPromotionMatchesNumPy(t *testing.T) {
	f := loadPromotion(t)
	if len(f.Promote) != 121 {
		t.Fatalf("fixture has %d pairs", len(f.Promote))
	}
	d := CPU()
	for k, want := range f.Promote {
		ab := strings.Split(k, ",")
		a, b := dtypeByName(t, ab[0]), dtypeByName(t, ab[1])
		w := dtypeByName(t, want)
		if got := Promote(a, b); got != w {
			t.Errorf("Promote(%v, %v) = %v, numpy says %v", a, b, got, w)
		}
		x, y := d.Ones(a, 2), d.Ones(b, 2)
		if got := x.Maximum(y); got.DType() != w || got.Err() != nil {
			t.Errorf("Maximum(%v, %v) has dtype %v (%v), want %v", a, b, got.DType(), got.Err(), w)
		}
	}
}

// Go scalars are weak (NEP 50): results match numpy in "weak" promotion
// state for Python bool, int and float operands.
func TestWeakScalarsMatchNumPy(t *testing.T) {
	f := loadPromotion(t)
	d := CPU()
	for k, want := range f.Weak {
		ab := strings.Split(k, ",")
		a := dtypeByName(t, ab[0])
		var s any
		switch ab[1] {
		case "bool":
			s = true
		case "int":
			s = 1
		case "float":
			s = 2.5
		}
		got := d.Ones(a, 3).Add(s)
		if err := got.Err(); err != nil {
			t.Errorf("%v + %v: %v", a, ab[1], err)
			continue
		}
		if w := dtypeByName(t, want); got.DType() != w {
			t.Errorf("%v array + Go %s = %v, numpy (weak) gives %v", a, ab[1], got.DType(), w)
		}
	}
	// The headline case: float32 * 2.5 stays float32 and computes in float32.
	x := d.Full(Float32, 3, 4).Mul(2.5)
	if x.DType() != Float32 {
		t.Fatalf("float32 * 2.5 is %v", x.DType())
	}
	// A typed Go float32 or int64 scalar is just as weak.
	if y := d.Ones(Uint8, 2).Add(int64(3)); y.DType() != Uint8 {
		t.Errorf("uint8 + int64(3) = %v, want uint8", y.DType())
	}
	if y := d.Ones(Int32, 2).Mul(float32(0.5)); y.DType() != Float64 {
		t.Errorf("int32 * float32(0.5) = %v, want float64", y.DType())
	}
}

func TestTrueDivisionAndFloatFunctionDTypes(t *testing.T) {
	f := loadPromotion(t)
	d := CPU()
	for name, want := range f.Truediv {
		a := dtypeByName(t, name)
		if got := d.Ones(a, 2).Div(d.Ones(a, 2)); got.DType() != dtypeByName(t, want) {
			t.Errorf("%v / %v = %v, numpy %v", a, a, got.DType(), want)
		}
	}
	for name, want := range f.Sqrt {
		a := dtypeByName(t, name)
		w := want
		if w == "float16" {
			w = "float32" // documented: no float16 in gocu
		}
		if got := d.Ones(a, 2).Sqrt(); got.DType() != dtypeByName(t, w) {
			t.Errorf("sqrt(%v) = %v, want %v (numpy %v)", a, got.DType(), w, want)
		}
	}
}

// NumPy 2 raises OverflowError for uint8 + 300; comparisons with such a
// scalar are computed exactly.
func TestWeakIntegerOutOfRange(t *testing.T) {
	d := CPU()
	x := fromSliceOn(d, []uint8{0, 100, 255})
	if err := x.Add(300).Err(); !isKind(err, ErrValue) || !strings.Contains(err.Error(), "300 is out of range for uint8") {
		t.Errorf("uint8 + 300: %v", err)
	}
	if err := x.Add(-1).Err(); !isKind(err, ErrValue) {
		t.Errorf("uint8 + -1: %v", err)
	}
	lt, err := x.Lt(300).Bools()
	if err != nil || !lt[0] || !lt[1] || !lt[2] {
		t.Errorf("uint8 < 300 = %v, %v", lt, err)
	}
	eq, err := x.Eq(-1).Bools()
	if err != nil || eq[0] || eq[1] || eq[2] {
		t.Errorf("uint8 == -1 = %v, %v", eq, err)
	}
	if err := d.Ones(Int32, 2).Mul(1 << 40).Err(); !isKind(err, ErrValue) {
		t.Errorf("int32 * 2^40: %v", err)
	}
	if err := d.Ones(Int32, 2).Add(uint64(1) << 63).Err(); !isKind(err, ErrValue) {
		t.Errorf("int32 + 2^63: %v", err)
	}
}

// TestTypesMatchBackend checks that array's DType, ReduceOp and Precision,
// defined here so that go doc shows them, convert to the backend's
// unchanged: same values, same names, same answers.
func TestTypesMatchBackend(t *testing.T) {
	all := []DType{Invalid, Bool, Uint8, Int32, Int64, Float32, Float64, Int8, Float16, BFloat16, Float8E4M3, Float8E5M2,
		Int16, Uint16, Uint32, Uint64}
	if len(all) != len(backend.DTypes)+1 {
		t.Fatalf("array has %d dtypes, the backend %d", len(all)-1, len(backend.DTypes))
	}
	for i, d := range all[1:] {
		b := backend.DTypes[i]
		if d.be() != b || d.String() != b.String() || d.Size() != b.Size() || d.Valid() != b.Valid() ||
			d.IsFloat() != b.IsFloat() || d.IsLowp() != b.IsLowp() || d.IsFloating() != b.IsFloating() ||
			d.IsFloat8() != b.IsFloat8() || d.IsInt() != b.IsInt() || d.IsSigned() != b.IsSigned() ||
			d.IsStorage() != b.IsStorage() || d.Compute().be() != b.Compute() ||
			d.IsStorageInt() != b.IsStorageInt() || d.IsUnsigned() != b.IsUnsigned() {
			t.Errorf("%v differs from the backend's %v", d, b)
		}
	}
	if Invalid.Valid() || Invalid.be() != backend.Invalid {
		t.Error("Invalid is not the backend's")
	}
	ops := []ReduceOp{OpSum, OpProd, OpMax, OpMin, OpMean, OpArgMax, OpArgMin, OpAny, OpAll}
	bops := []backend.ReduceOp{backend.Sum, backend.Prod, backend.Max, backend.Min, backend.Mean, backend.ArgMax, backend.ArgMin, backend.Any, backend.All}
	for i, op := range ops {
		if backend.ReduceOp(op) != bops[i] || op.String() != bops[i].String() {
			t.Errorf("%v is not the backend's %v", op, bops[i])
		}
	}
	if backend.Precision(FP32) != backend.FP32 || backend.Precision(TF32) != backend.TF32 {
		t.Error("precisions differ from the backend's")
	}
}
