package array

import (
	"fmt"
	"math"
	"testing"
)

// The float functions of issue 19 at NaN, infinities, signed zeros and the
// edges of their domains, against package math, on every backend.
func TestMoreFloatFunctionsSpecialValues(t *testing.T) {
	nan, inf := math.NaN(), math.Inf(1)
	in := []float64{nan, inf, -inf, 0, math.Copysign(0, -1), 1, -1, 2, -2, 0.5, 1e-30, 40}
	unary := []struct {
		name string
		f    func(*Array) *Array
		ref  func(float64) float64
	}{
		{"Arcsin", (*Array).Arcsin, math.Asin}, {"Arccos", (*Array).Arccos, math.Acos},
		{"Arctan", (*Array).Arctan, math.Atan}, {"Sinh", (*Array).Sinh, math.Sinh},
		{"Cosh", (*Array).Cosh, math.Cosh}, {"Arcsinh", (*Array).Arcsinh, math.Asinh},
		{"Arccosh", (*Array).Arccosh, math.Acosh}, {"Arctanh", (*Array).Arctanh, math.Atanh},
		{"Erf", (*Array).Erf, math.Erf}, {"Erfc", (*Array).Erfc, math.Erfc},
		{"Deg2Rad", (*Array).Deg2Rad, func(x float64) float64 { return x * (math.Pi / 180) }},
		{"Rad2Deg", (*Array).Rad2Deg, func(x float64) float64 { return x * (180 / math.Pi) }},
	}
	binary := []struct {
		name string
		f    func(*Array, any) *Array
		ref  func(a, b float64) float64
	}{
		{"Arctan2", (*Array).Arctan2, math.Atan2}, {"Hypot", (*Array).Hypot, math.Hypot},
		{"Copysign", (*Array).Copysign, math.Copysign},
	}
	forEachBackend(t, func(t *testing.T, d *Maker) {
		for _, dt := range []DType{Float32, Float64} {
			// CUDA's functions are within a few ulp, not correctly rounded.
			ulp := 4 * math.Pow(2, -23)
			if dt == Float64 {
				ulp = 4 * math.Pow(2, -52)
			}
			x := fromTyped(d, typed(dt, in), []int{len(in)})
			xv := readHost(t, x).v
			for _, c := range unary {
				want := make([]float64, len(xv))
				for i, v := range xv {
					want[i] = roundTo(dt, c.ref(v))
				}
				y := c.f(x)
				if y.DType() != dt {
					t.Fatalf("%s(%v) has dtype %v", c.name, dt, y.DType())
				}
				checkHost(t, fmt.Sprintf("%s %v", c.name, dt), readHost(t, y), []int{len(in)}, want, ulp)
			}
			// Every pair of the inputs: the special cases of atan2, hypot
			// and copysign are a grid.
			n := len(xv)
			a := x.Reshape(n, 1)
			for _, c := range binary {
				want := make([]float64, n*n)
				for i := range n {
					for j := range n {
						want[i*n+j] = roundTo(dt, c.ref(xv[i], xv[j]))
					}
				}
				got := readHost(t, c.f(a, x))
				checkHost(t, fmt.Sprintf("%s %v", c.name, dt), got, []int{n, n}, want, ulp)
				if c.name == "Copysign" {
					for i, w := range want {
						if !math.IsNaN(w) && math.Signbit(got.v[i]) != math.Signbit(w) {
							t.Errorf("Copysign %v: element %d = %v, want %v", dt, i, got.v[i], w)
						}
					}
				}
			}
		}
	})
}

// Integer and bool arguments of the float functions compute in float32
// (bool, uint8) or float64 (int32, int64), with Go scalars as NEP 50 says.
func TestMoreFloatFunctionsDTypes(t *testing.T) {
	forEachBackend(t, func(t *testing.T, d *Maker) {
		i := fromSliceOn(d, []int32{-2, 0, 3})
		checkDType := func(what string, a *Array, dt DType, want []float64) {
			t.Helper()
			if a.DType() != dt {
				t.Fatalf("%s: dtype %v, want %v (%v)", what, a.DType(), dt, a.Err())
			}
			checkHost(t, what, readHost(t, a), []int{len(want)}, want, 1e-15)
		}
		checkDType("int32 Arctan2 int", i.Arctan2(2), Float64, []float64{math.Atan2(-2, 2), 0, math.Atan2(3, 2)})
		checkDType("int32 Hypot int32", i.Hypot(i), Float64, []float64{math.Hypot(2, 2), 0, math.Hypot(3, 3)})
		checkDType("2.5 Copysign int32", d.Full(Float64, 2.5, 3).Copysign(i), Float64, []float64{-2.5, 2.5, 2.5})
		u := fromSliceOn(d, []uint8{0, 1, 200})
		checkDType("uint8 Arcsinh", u.Arcsinh(), Float32, []float64{0, roundTo(Float32, math.Asinh(1)), roundTo(Float32, math.Asinh(200))})
		b := fromSliceOn(d, []bool{false, true, true})
		checkDType("bool Arctan2 bool", b.Arctan2(b.LogicalNot()), Float32, []float64{0, roundTo(Float32, math.Pi/2), roundTo(Float32, math.Pi/2)})
		f := fromSliceOn(d, []float32{-1, 0.5, 3})
		checkDType("float32 Arctan2 1.5", f.Arctan2(1.5), Float32, []float64{roundTo(Float32, math.Atan2(-1, 1.5)), roundTo(Float32, math.Atan2(0.5, 1.5)), roundTo(Float32, math.Atan2(3, 1.5))})
		if err := u.Hypot(1000).Err(); !isKind(err, ErrValue) {
			t.Errorf("uint8 Hypot 1000: want ErrValue, got %v", err)
		}
	})
}

// The bitwise operations follow NumPy: bitwise on integers, logical on
// bool, rejected on floats; shifts of the width or more give 0 or the sign.
func TestBitwiseOps(t *testing.T) {
	forEachBackend(t, func(t *testing.T, d *Maker) {
		r := newRand(t)
		for _, dt := range []DType{Uint8, Int32, Int64} {
			h := randHost(r, dt, []int{300}, -1e9, 1e9)
			x := makeArray(t, d, dt, h, reversed)
			want := make([]float64, len(h.v))
			for i, v := range h.v {
				want[i] = wrapInt(dt, float64(^int64(v)))
			}
			checkHost(t, fmt.Sprintf("BitwiseNot %v", dt), readHost(t, x.BitwiseNot()), []int{300}, want, 0)
		}
		b := fromSliceOn(d, []bool{false, true})
		checkHost(t, "BitwiseNot bool", readHost(t, b.BitwiseNot()), []int{2}, []float64{1, 0}, 0)
		if dt := b.BitwiseAnd(b).DType(); dt != Bool {
			t.Errorf("bool & bool has dtype %v", dt)
		}
		checkHost(t, "bool ^ true", readHost(t, b.BitwiseXor(true)), []int{2}, []float64{1, 0}, 0)
		checkHost(t, "bool | int32", readHost(t, b.BitwiseOr(fromSliceOn(d, []int32{6, 6}))), []int{2}, []float64{6, 7}, 0)

		// int8 computes in int32 and wraps back.
		i8 := fromSliceOn(d, []int8{-128, 127, -1, 5})
		for _, c := range []struct {
			what string
			a    *Array
			want []float64
		}{
			{"int8 << 1", i8.LeftShift(1), []float64{0, -2, -2, 10}},
			{"int8 >> 7", i8.RightShift(7), []float64{-1, 0, -1, 0}},
			{"int8 >> 9", i8.RightShift(9), []float64{-1, 0, -1, 0}},
			{"int8 << 8", i8.LeftShift(8), []float64{0, 0, 0, 0}},
			{"int8 & 0x0f", i8.BitwiseAnd(0x0f), []float64{0, 15, 15, 5}},
			{"^int8", i8.BitwiseNot(), []float64{127, -128, 0, -6}},
		} {
			if c.a.DType() != Int8 {
				t.Errorf("%s: dtype %v", c.what, c.a.DType())
			}
			checkHost(t, c.what, readHost(t, c.a), []int{4}, c.want, 0)
		}
		// Counts past the width and negative counts, as NumPy.
		u := fromSliceOn(d, []uint8{255, 1, 128})
		checkHost(t, "uint8 << 7", readHost(t, u.LeftShift(7)), []int{3}, []float64{128, 128, 0}, 0)
		checkHost(t, "uint8 >> 8", readHost(t, u.RightShift(8)), []int{3}, []float64{0, 0, 0}, 0)
		i64 := fromSliceOn(d, []int64{-5, 5, math.MinInt64})
		checkHost(t, "int64 >> 64", readHost(t, i64.RightShift(64)), []int{3}, []float64{-1, 0, -1}, 0)
		checkHost(t, "int64 >> -1", readHost(t, i64.RightShift(-1)), []int{3}, []float64{-1, 0, -1}, 0)
		checkHost(t, "int64 << 63", readHost(t, i64.LeftShift(63)), []int{3}, []float64{math.MinInt64, math.MinInt64, 0}, 0)
		checkHost(t, "int64 << 64", readHost(t, i64.LeftShift(64)), []int{3}, []float64{0, 0, 0}, 0)

		f := fromSliceOn(d, []float32{1, 2})
		for what, a := range map[string]*Array{
			"float32 & float32": f.BitwiseAnd(f), "int32 | 1.5": fromSliceOn(d, []int32{1}).BitwiseOr(1.5),
			"^float32": f.BitwiseNot(), "bool << bool": b.LeftShift(b), "float32 >> 1": f.RightShift(1),
		} {
			if err := a.Err(); !isKind(err, ErrDType) {
				t.Errorf("%s: want ErrDType, got %v", what, err)
			}
		}
	})
}

// The new operations fuse: a chain of them is one program.
func TestMoreOpsFuse(t *testing.T) {
	d, c := countingDevice()
	x := d.NewRNG(3).Uniform(Float64, -0.9, 0.9, 1000).Eval()
	i := d.Arange(Int32, 0, 1000).Eval()
	if x.Err() != nil || i.Err() != nil {
		t.Fatal(x.Err(), i.Err())
	}
	e0 := c.evals.Load()
	y := x.Arcsin().Sinh().Erf().Arctan2(x.Hypot(0.5)).Copysign(x).Deg2Rad()
	z := i.LeftShift(3).BitwiseXor(i).RightShift(1).BitwiseNot().BitwiseAnd(0xff)
	if _, err := y.Float64s(); err != nil {
		t.Fatal(err)
	}
	if n := c.evals.Load() - e0; n != 1 {
		t.Errorf("float chain: %d evaluations, want 1", n)
	}
	zi, err := z.Int32s()
	if err != nil {
		t.Fatal(err)
	}
	if n := c.evals.Load() - e0; n != 2 {
		t.Errorf("integer chain: %d evaluations, want 1", n-1)
	}
	for k, v := range zi {
		if want := int32(^((int32(k)<<3 ^ int32(k)) >> 1) & 0xff); v != want {
			t.Fatalf("element %d = %d, want %d", k, v, want)
		}
	}
}
