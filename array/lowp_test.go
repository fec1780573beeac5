package array

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gocu-dev/gocu/lowp"
)

var storageDTypes = []DType{Int8, Float16, BFloat16, Float8E4M3, Float8E5M2}
var lowpDTypes = []DType{Float16, BFloat16, Float8E4M3, Float8E5M2}

// The promotion table of the package documentation, written out: NumPy's
// promote_types for the types NumPy has (printed by NumPy 1.24), PyTorch's promote_types for bfloat16 and the
// 8-bit floats ("" where PyTorch raises: an 8-bit float combines only
// with itself).
func TestPromotionTable(t *testing.T) {
	order := []DType{Bool, Uint8, Int8, Int32, Int64, Float16, BFloat16, Float32, Float64, Float8E4M3, Float8E5M2}
	table := map[DType][]string{
		Bool:       {"bool", "uint8", "int8", "int32", "int64", "float16", "bfloat16", "float32", "float64", "", ""},
		Uint8:      {"uint8", "uint8", "int16", "int32", "int64", "float16", "bfloat16", "float32", "float64", "", ""},
		Int8:       {"int8", "int16", "int8", "int32", "int64", "float16", "bfloat16", "float32", "float64", "", ""},
		Int32:      {"int32", "int32", "int32", "int32", "int64", "float64", "bfloat16", "float64", "float64", "", ""},
		Int64:      {"int64", "int64", "int64", "int64", "int64", "float64", "bfloat16", "float64", "float64", "", ""},
		Float16:    {"float16", "float16", "float16", "float64", "float64", "float16", "float32", "float32", "float64", "", ""},
		BFloat16:   {"bfloat16", "bfloat16", "bfloat16", "bfloat16", "bfloat16", "float32", "bfloat16", "float32", "float64", "", ""},
		Float32:    {"float32", "float32", "float32", "float64", "float64", "float32", "float32", "float32", "float64", "", ""},
		Float64:    {"float64", "float64", "float64", "float64", "float64", "float64", "float64", "float64", "float64", "", ""},
		Float8E4M3: {"", "", "", "", "", "", "", "", "", "float8_e4m3fn", ""},
		Float8E5M2: {"", "", "", "", "", "", "", "", "", "", "float8_e5m2"},
	}
	for _, a := range order {
		for j, b := range order {
			want := table[a][j]
			got := Promote(a, b)
			name := ""
			if got.Valid() {
				name = got.String()
			}
			if name != want {
				t.Errorf("Promote(%v, %v) = %q, want %q", a, b, name, want)
			}
			// Arrays combine the same way, or fail with ErrDType.
			x, y := CPU().Ones(a, 2), CPU().Ones(b, 2)
			z := x.Add(y)
			if want == "" {
				if err := z.Err(); !errors.Is(err, ErrDType) || !strings.Contains(err.Error(), "no promotion rule") {
					t.Errorf("%v + %v: error %v, want ErrDType naming the missing rule", a, b, err)
				}
				continue
			}
			if a == Bool && b == Bool {
				continue
			}
			if z.DType().String() != want || z.Err() != nil {
				t.Errorf("%v + %v: dtype %v (%v), want %s", a, b, z.DType(), z.Err(), want)
			}
		}
	}
}

// Go scalars are weak: they take a low-precision float's dtype, and an
// int8 array keeps int8 with an integer scalar that fits.
func TestLowpWeakScalars(t *testing.T) {
	d := CPU()
	for _, dt := range lowpDTypes {
		x := d.Ones(dt, 3)
		for _, v := range []any{2, 2.5, true} {
			if got := x.Mul(v); got.DType() != dt || got.Err() != nil {
				t.Errorf("%v * %v: %v (%v)", dt, v, got.DType(), got.Err())
			}
		}
	}
	x := d.Ones(Int8, 3)
	if got := x.Add(100); got.DType() != Int8 {
		t.Errorf("int8 + 100: %v", got.DType())
	}
	if got := x.Add(300); !errors.Is(got.Err(), ErrValue) {
		t.Errorf("int8 + 300: %v, want ErrValue", got.Err())
	}
	if got := x.Mul(0.5); got.DType() != Float64 {
		t.Errorf("int8 * 0.5: %v, want float64 (NumPy)", got.DType())
	}
	if got := x.Sqrt(); got.DType() != Float32 {
		t.Errorf("sqrt(int8): %v, want float32", got.DType())
	}
}

// sweep32 is a dense sweep of float32 bit patterns: every 2^k-th pattern
// plus neighbourhoods of the formats' boundaries (overflow, subnormal,
// ties), both signs, NaNs and infinities.
func sweep32(step uint32) []float32 {
	var out []float32
	for b := uint64(0); b < 1<<31; b += uint64(step) {
		out = append(out, math.Float32frombits(uint32(b)), math.Float32frombits(uint32(b)|1<<31))
	}
	for _, c := range []float32{448, 464, 480, 57344, 61440, 65504, 65520, 0x1p-6, 0x1p-9, 0x1p-10, 0x1p-14, 0x1p-16, 0x1p-17,
		0x1p-24, 0x1p-25, 0x1p-126, 0x1p-133, 0x1p-134, 1, 1.5, 3.3895314e38} {
		b := math.Float32bits(c)
		for d := uint32(0); d < 64; d++ {
			out = append(out, math.Float32frombits(b+d), math.Float32frombits(b-d), -math.Float32frombits(b+d))
		}
	}
	return append(out, float32(math.Inf(1)), float32(math.Inf(-1)), float32(math.NaN()),
		math.Float32frombits(0xffc00001), math.Float32frombits(0x7f800001))
}

func allBits16() []uint16 {
	out := make([]uint16, 1<<16)
	for i := range out {
		out[i] = uint16(i)
	}
	return out
}

// Conversions are bit-exact with package lowp on every backend: float32 to
// each format over a dense sweep, float64 to each format, and every value
// of each format back to float32 and float64.
func TestLowpConversionsBitExact(t *testing.T) {
	forEachBackend(t, func(t *testing.T, d *Maker) {
		src := sweep32(1 << 13)
		x := fromSliceOn(d, src)
		r := rand.New(rand.NewPCG(1, 2))
		src64 := make([]float64, 50000)
		for i := range src64 {
			src64[i] = math.Float64frombits(r.Uint64())
			if i%2 == 0 { // near the formats' range
				src64[i] = math.Ldexp(r.Float64()-0.5, r.IntN(60)-40)
			}
		}
		x64 := fromSliceOn(d, src64)
		check := func(dt DType, got, want []byte) {
			t.Helper()
			bad := 0
			for i := range want {
				if got[i] != want[i] && bad < 5 {
					t.Errorf("%v: byte %d: got %#x, want %#x", dt, i, got[i], want[i])
					bad++
				}
			}
		}
		{
			got, err := ToSlice[lowp.Float16](x.AsType(Float16))
			want := make([]lowp.Float16, len(src))
			lowp.FromFloat32s(want, src)
			if err != nil {
				t.Fatal(err)
			}
			check(Float16, rawBytes(got), rawBytes(want))
			got64, _ := ToSlice[lowp.Float16](x64.AsType(Float16))
			want64 := make([]lowp.Float16, len(src64))
			lowp.FromFloat64s(want64, src64)
			check(Float16, rawBytes(got64), rawBytes(want64))
		}
		{
			got, err := ToSlice[lowp.BFloat16](x.AsType(BFloat16))
			want := make([]lowp.BFloat16, len(src))
			lowp.FromFloat32s(want, src)
			if err != nil {
				t.Fatal(err)
			}
			check(BFloat16, rawBytes(got), rawBytes(want))
			got64, _ := ToSlice[lowp.BFloat16](x64.AsType(BFloat16))
			want64 := make([]lowp.BFloat16, len(src64))
			lowp.FromFloat64s(want64, src64)
			check(BFloat16, rawBytes(got64), rawBytes(want64))
		}
		{
			got, err := ToSlice[lowp.Float8E4M3](x.AsType(Float8E4M3))
			want := make([]lowp.Float8E4M3, len(src))
			lowp.FromFloat32s(want, src)
			if err != nil {
				t.Fatal(err)
			}
			check(Float8E4M3, e4m3Bytes(got), e4m3Bytes(want))
			got64, _ := ToSlice[lowp.Float8E4M3](x64.AsType(Float8E4M3))
			want64 := make([]lowp.Float8E4M3, len(src64))
			lowp.FromFloat64s(want64, src64)
			check(Float8E4M3, e4m3Bytes(got64), e4m3Bytes(want64))
		}
		{
			got, err := ToSlice[lowp.Float8E5M2](x.AsType(Float8E5M2))
			want := make([]lowp.Float8E5M2, len(src))
			lowp.FromFloat32s(want, src)
			if err != nil {
				t.Fatal(err)
			}
			check(Float8E5M2, e5m2Bytes(got), e5m2Bytes(want))
			got64, _ := ToSlice[lowp.Float8E5M2](x64.AsType(Float8E5M2))
			want64 := make([]lowp.Float8E5M2, len(src64))
			lowp.FromFloat64s(want64, src64)
			check(Float8E5M2, e5m2Bytes(got64), e5m2Bytes(want64))
		}
		// Widening every value.
		bits := allBits16()
		h := make([]lowp.Float16, len(bits))
		bf := make([]lowp.BFloat16, len(bits))
		e4 := make([]lowp.Float8E4M3, 256)
		e5 := make([]lowp.Float8E5M2, 256)
		for i, b := range bits {
			h[i], bf[i] = lowp.Float16FromBits(b), lowp.BFloat16FromBits(b)
			if i < 256 {
				e4[i], e5[i] = lowp.Float8E4M3FromBits(uint8(i)), lowp.Float8E5M2FromBits(uint8(i))
			}
		}
		widen := func(name string, a *Array, w32 []float32, w64 []float64) {
			t.Helper()
			g32, err := a.Float32s()
			if err != nil {
				t.Fatal(err)
			}
			g64, err := a.Float64s()
			if err != nil {
				t.Fatal(err)
			}
			bad := 0
			for i := range w32 {
				if (math.Float32bits(g32[i]) != math.Float32bits(w32[i]) || math.Float64bits(g64[i]) != math.Float64bits(w64[i])) && bad < 5 {
					t.Errorf("%s %#x: widened to %#x / %#x, want %#x / %#x", name, i, math.Float32bits(g32[i]), math.Float64bits(g64[i]),
						math.Float32bits(w32[i]), math.Float64bits(w64[i]))
					bad++
				}
			}
		}
		w32, w64 := make([]float32, len(bits)), make([]float64, len(bits))
		lowp.ToFloat32s(w32, h)
		lowp.ToFloat64s(w64, h)
		widen("float16", fromSliceOn(d, h), w32, w64)
		lowp.ToFloat32s(w32, bf)
		lowp.ToFloat64s(w64, bf)
		widen("bfloat16", fromSliceOn(d, bf), w32, w64)
		lowp.ToFloat32s(w32[:256], e4)
		lowp.ToFloat64s(w64[:256], e4)
		widen("e4m3", fromSliceOn(d, e4), w32[:256], w64[:256])
		lowp.ToFloat32s(w32[:256], e5)
		lowp.ToFloat64s(w64[:256], e5)
		widen("e5m2", fromSliceOn(d, e5), w32[:256], w64[:256])
		// Between formats: through float32, exactly one rounding.
		gotH, err := ToSlice[lowp.Float16](fromSliceOn(d, bf).AsType(Float16))
		if err != nil {
			t.Fatal(err)
		}
		for i, v := range bf {
			if want := lowp.Float16FromFloat32(v.Float32()); gotH[i] != want {
				t.Fatalf("bfloat16 %#x to float16: %#x, want %#x", i, gotH[i], want)
			}
		}
	})
}

func e4m3Bytes(s []lowp.Float8E4M3) []byte {
	b := make([]byte, len(s))
	for i, v := range s {
		b[i] = v.Bits()
	}
	return b
}

func e5m2Bytes(s []lowp.Float8E5M2) []byte {
	b := make([]byte, len(s))
	for i, v := range s {
		b[i] = v.Bits()
	}
	return b
}

// Float to int8 truncates toward zero, saturates and maps NaN to 0;
// integers wrap to int8; int8 arithmetic wraps.
func TestInt8ConversionsAndArithmetic(t *testing.T) {
	forEachBackend(t, func(t *testing.T, d *Maker) {
		f := fromSliceOn(d, []float32{-1e9, -128.9, -128, -127.5, -0.9, 0.9, 126.99, 127, 127.5, 1e9, float32(math.NaN()), float32(math.Inf(-1))})
		got, err := f.Int8s()
		if err != nil {
			t.Fatal(err)
		}
		want := []int8{-128, -128, -128, -127, 0, 0, 126, 127, 127, 127, 0, -128}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("float32 to int8: %v, want %v", got, want)
		}
		i := fromSliceOn(d, []int64{-129, 128, 255, 256, 1 << 40})
		got, _ = i.Int8s()
		if fmt.Sprint(got) != "[127 -128 -1 0 0]" {
			t.Errorf("int64 to int8: %v, want wrapping", got)
		}
		u := fromSliceOn(d, []uint8{200, 127, 128})
		got, _ = u.AsType(Int8).Int8s()
		if fmt.Sprint(got) != "[-56 127 -128]" {
			t.Errorf("uint8 to int8: %v", got)
		}
		a := fromSliceOn(d, []int8{127, -128, 100, -7, 3})
		b := fromSliceOn(d, []int8{1, -1, 100, 2, -2})
		check := func(name string, x *Array, want string) {
			t.Helper()
			if x.DType() != Int8 {
				t.Errorf("%s: dtype %v, want int8", name, x.DType())
			}
			g, err := x.Int8s()
			if err != nil {
				t.Fatal(err)
			}
			if fmt.Sprint(g) != want {
				t.Errorf("%s = %v, want %v", name, g, want)
			}
		}
		check("add", a.Add(b), "[-128 127 -56 -5 1]")
		check("mul", a.Mul(b), "[127 -128 16 -14 -6]")
		check("neg", a.Neg(), "[-127 -128 -100 7 -3]")
		check("floordiv", a.FloorDiv(b), "[127 -128 1 -4 -2]")
		check("mod", a.Mod(b), "[0 0 0 1 -1]")
		check("max", a.Maximum(b), "[127 -1 100 2 3]")
		s, err := a.Sum().Item()
		if err != nil || s != 95 || a.Sum().DType() != Int64 {
			t.Errorf("sum = %v %v (%v), want 95 int64", s, a.Sum().DType(), err)
		}
		check("max reduce", a.Max(0).Reshape(1), "[127]")
		if g, _ := a.Gt(b).Bools(); fmt.Sprint(g) != "[true false false false true]" {
			t.Errorf("gt: %v", g)
		}
	})
}

// Arithmetic on low-precision floats is computed in float32 and rounded
// once per operation: bit-exact with lowp applied to float32 results, on
// every backend.
func TestLowpArithmeticRoundsPerOperation(t *testing.T) {
	forEachBackend(t, func(t *testing.T, d *Maker) {
		r := newRand(t)
		n := 4099
		xs, ys := make([]float32, n), make([]float32, n)
		for i := range xs {
			xs[i] = float32(r.NormFloat64() * 3)
			ys[i] = float32(r.NormFloat64()*3 + 0.1)
		}
		for _, dt := range lowpDTypes {
			x := fromSliceOn(d, xs).AsType(dt)
			y := fromSliceOn(d, ys).AsType(dt)
			xv, _ := x.Float32s()
			yv, _ := y.Float32s()
			for _, op := range []struct {
				name string
				f    func(a, b *Array) *Array
				g    func(a, b float32) float32
			}{
				{"add", func(a, b *Array) *Array { return a.Add(b) }, func(a, b float32) float32 { return a + b }},
				{"mul", func(a, b *Array) *Array { return a.Mul(b) }, func(a, b float32) float32 { return a * b }},
				{"div", func(a, b *Array) *Array { return a.Div(b) }, func(a, b float32) float32 { return a / b }},
				{"fused a*b+a", func(a, b *Array) *Array { return a.Mul(b).Add(a) }, func(a, b float32) float32 {
					return float32(roundLowp(float64(a*b), x.DType())) + a
				}},
			} {
				z := op.f(x, y)
				if z.DType() != dt {
					t.Fatalf("%v %s: dtype %v", dt, op.name, z.DType())
				}
				got, err := z.Float64s()
				if err != nil {
					t.Fatal(err)
				}
				bad := 0
				for i := range got {
					want := roundLowp(float64(op.g(xv[i], yv[i])), dt)
					if math.Float64bits(got[i]) != math.Float64bits(want) && !(math.IsNaN(got[i]) && math.IsNaN(want)) && bad < 5 {
						t.Errorf("%v %s(%v, %v) = %v, want %v", dt, op.name, xv[i], yv[i], got[i], want)
						bad++
					}
				}
			}
			// Functions: within one ulp of the format (the backends' float32
			// functions differ by an ulp of float32 at most).
			e, err := x.Tanh().Float64s()
			if err != nil {
				t.Fatal(err)
			}
			for i, v := range e {
				want := math.Tanh(float64(xv[i]))
				if math.Abs(v-want) > 2*lowpEps(dt)*math.Max(math.Abs(want), lowpTiny(dt)) {
					t.Errorf("%v tanh(%v) = %v, want %v", dt, xv[i], v, want)
					break
				}
			}
			// Reductions accumulate in float32 (and float64 inside) and
			// round once.
			s := x.Sum()
			if s.DType() != dt {
				t.Errorf("%v sum: dtype %v", dt, s.DType())
			}
			sv, _ := s.Item()
			ref := 0.0
			for _, v := range xv {
				ref += float64(v)
			}
			if want := roundLowp(float64(float32(ref)), dt); sv != want {
				t.Errorf("%v sum = %v, want %v", dt, sv, want)
			}
			m, _ := x.Max().Item()
			mref := math.Inf(-1)
			for _, v := range xv {
				mref = math.Max(mref, float64(v))
			}
			if m != mref || x.Max().DType() != dt {
				t.Errorf("%v max = %v (%v), want %v", dt, m, x.Max().DType(), mref)
			}
			am, _ := x.ArgMax().Item()
			if xv[int(am)] != float32(mref) {
				t.Errorf("%v argmax %v: value %v, want %v", dt, am, xv[int(am)], mref)
			}
			// Softmax computes in float32 and rounds.
			sm := x.Reshape(1, n).Softmax(1)
			if sm.DType() != dt {
				t.Errorf("%v softmax dtype %v", dt, sm.DType())
			}
			smv, _ := sm.Float64s()
			tot := 0.0
			for _, v := range smv {
				tot += v
			}
			if math.Abs(tot-1) > 0.02*float64(n)*lowpEps(dt) {
				t.Errorf("%v softmax sums to %v", dt, tot)
			}
			// Comparisons and predicates.
			if g, _ := x.Gt(y).Bools(); len(g) != n {
				t.Errorf("%v gt: %d values", dt, len(g))
			}
			if g, _ := x.IsFinite().All().Item(); g != 1 {
				t.Errorf("%v isfinite: %v", dt, g)
			}
			w := Where(x.Gt(0), x, y)
			if w.DType() != dt {
				t.Errorf("%v where dtype %v", dt, w.DType())
			}
			wv, _ := w.Float32s()
			for i := range wv {
				want := yv[i]
				if xv[i] > 0 {
					want = xv[i]
				}
				if wv[i] != want {
					t.Fatalf("%v where[%d] = %v, want %v", dt, i, wv[i], want)
				}
			}
		}
	})
}

func lowpEps(dt DType) float64 {
	switch dt {
	case Float16:
		return lowp.EpsilonFloat16
	case BFloat16:
		return lowp.EpsilonBFloat16
	case Float8E4M3:
		return lowp.EpsilonFloat8E4M3
	}
	return lowp.EpsilonFloat8E5M2
}

func lowpTiny(dt DType) float64 {
	switch dt {
	case Float16:
		return lowp.SmallestNormalFloat16
	case BFloat16:
		return lowp.SmallestNormalBFloat16
	case Float8E4M3:
		return lowp.SmallestNormalFloat8E4M3
	}
	return lowp.SmallestNormalFloat8E5M2
}

// Creation, random draws, views and copies work on every storage dtype.
func TestStorageCreationAndViews(t *testing.T) {
	forEachBackend(t, func(t *testing.T, d *Maker) {
		for _, dt := range storageDTypes {
			z := d.Full(dt, 3, 2, 3)
			v, err := z.Float64s()
			if err != nil || z.DType() != dt || fmt.Sprint(v) != "[3 3 3 3 3 3]" {
				t.Errorf("Full(%v, 3): %v %v (%v)", dt, z.DType(), v, err)
			}
			a := d.Arange(dt, 6).Reshape(2, 3)
			tr := a.T().Copy()
			tv, _ := tr.Float64s()
			if fmt.Sprint(tv) != "[0 3 1 4 2 5]" || tr.DType() != dt {
				t.Errorf("%v transpose copy: %v %v", dt, tv, tr.DType())
			}
			s := a.Slice(All, S(None, None, -2)).Contiguous()
			sv, _ := s.Float64s()
			if fmt.Sprint(sv) != "[2 0 5 3]" {
				t.Errorf("%v reversed slice: %v", dt, sv)
			}
			e := d.Eye(dt, 3)
			ev, _ := e.Sum().Item()
			if ev != 3 {
				t.Errorf("%v eye sum %v", dt, ev)
			}
			c := Concat(0, a, a)
			cv, _ := c.Float64s()
			if c.DType() != dt || len(cv) != 12 || cv[11] != 5 {
				t.Errorf("%v concat: %v %v", dt, c.DType(), cv)
			}
			dst := d.Zeros(dt, 2, 3)
			if err := dst.Slice(Idx(1)).Assign(a.Slice(Idx(0))); err != nil {
				t.Fatal(err)
			}
			dv, _ := dst.Float64s()
			if fmt.Sprint(dv) != "[0 0 0 0 1 2]" {
				t.Errorf("%v assign: %v", dt, dv)
			}
		}
		for _, dt := range lowpDTypes {
			x := d.NewRNG(7).Normal(dt, 0, 1, 1000)
			y := d.NewRNG(7).Normal(Float32, 0, 1, 1000).AsType(dt)
			xv, err := x.Float64s()
			if err != nil {
				t.Fatal(err)
			}
			yv, _ := y.Float64s()
			if x.DType() != dt || fmt.Sprint(xv) != fmt.Sprint(yv) {
				t.Errorf("Normal(%v) is not Normal(float32) rounded", dt)
			}
		}
		if r := d.NewRNG(1).Uniform(Int8, 0, 1, 3); !errors.Is(r.Err(), ErrDType) {
			t.Errorf("Uniform(int8): %v", r.Err())
		}
	})
}

// Low-precision floats print with the fewest digits that identify each
// value in its format, as NumPy prints float16.
func TestLowpPrinting(t *testing.T) {
	d := CPU()
	for _, c := range []struct {
		a    *Array
		want string
	}{
		{fromSliceOn(d, []float32{0.1, 1.5, -2.25}).AsType(Float16), "[ 0.1   1.5  -2.25]"},
		{fromSliceOn(d, []float32{1e-5, 3, 70000, 1.0 / 3}).AsType(Float16), "[1.001e-05 3.000e+00       inf 3.333e-01]"},
		{fromSliceOn(d, []float32{0.333, 2, 100.5, -7}, 2, 2).AsType(Float16), "[[  0.333   2.   ]\n [100.5    -7.   ]]"},
		{fromSliceOn(d, []int8{-128, 127, 5}), "[-128  127    5]"},
		{fromSliceOn(d, []float32{0.1, 1}).AsType(BFloat16), "[0.1 1. ]"},
		{fromSliceOn(d, []float32{0.3, 500}).AsType(Float8E4M3), "[3.1e-01 4.5e+02]"},
		{fromSliceOn(d, []float32{0.5, 500}).AsType(Float8E4M3), "[  0.5 448. ]"},
	} {
		if got := c.a.String(); got != c.want {
			t.Errorf("got\n%s\nwant\n%s", got, c.want)
		}
	}
	if got := fmt.Sprintf("%#v", fromSliceOn(d, []float32{0.1, 1.5, -2.25}).AsType(Float16)); !strings.HasSuffix(got, "dtype=float16)") {
		t.Errorf("repr: %s", got)
	}
}

// .npy: float16 and int8 as NumPy's; bfloat16 as ml_dtypes' '<V2'; the
// 8-bit floats refused with a clear error.
func TestLowpNPY(t *testing.T) {
	d := CPU()
	for _, c := range []struct {
		a     *Array
		descr string
	}{
		{fromSliceOn(d, []float32{0.1, -2, 65504}).AsType(Float16), "'<f2'"},
		{fromSliceOn(d, []float32{0.1, -2, 3e38}).AsType(BFloat16), "'<V2'"},
		{fromSliceOn(d, []int8{-128, 0, 127}), "'|i1'"},
	} {
		var buf bytes.Buffer
		if err := c.a.WriteNPY(&buf); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(buf.String(), c.descr) {
			t.Errorf("%v: header lacks %s", c.a.DType(), c.descr)
		}
		b, err := d.ReadNPY(&buf)
		if err != nil {
			t.Fatalf("%v: %v", c.a.DType(), err)
		}
		if b.DType() != c.a.DType() || b.String() != c.a.String() {
			t.Errorf("%v: read back %v %v", c.a.DType(), b.DType(), b)
		}
	}
	e := fromSliceOn(d, []float32{1, 2}).AsType(Float8E4M3)
	if err := e.WriteNPY(&bytes.Buffer{}); !errors.Is(err, ErrDType) || !strings.Contains(err.Error(), "AsType(array.Float16)") {
		t.Errorf("float8 WriteNPY: %v", err)
	}
}

// ToSlice and FromSlice take the lowp types and int8; a plain uint16 has
// no dtype.
func TestLowpHostSlices(t *testing.T) {
	d := CPU()
	h := []lowp.Float16{lowp.Float16FromFloat32(1.5), lowp.Float16FromFloat32(-0.25)}
	a := fromSliceOn(d, h)
	if a.DType() != Float16 {
		t.Fatalf("dtype %v", a.DType())
	}
	f, _ := a.Float32s()
	if fmt.Sprint(f) != "[1.5 -0.25]" {
		t.Errorf("values %v", f)
	}
	b, err := ToSlice[lowp.BFloat16](a)
	if err != nil || b[0].Float32() != 1.5 {
		t.Errorf("ToSlice[BFloat16]: %v %v", b, err)
	}
	if x := fromSliceOn(d, []uint16{1}); x.DType() != Uint16 {
		t.Errorf("FromSlice([]uint16): %v %v", x.DType(), x.Err())
	}
	if DTypeOf[lowp.Float8E4M3]() != Float8E4M3 || DTypeOf[uint8]() != Uint8 || DTypeOf[int8]() != Int8 {
		t.Errorf("DTypeOf")
	}
}

// refMatMul2D is the float64 product of row-major float64 matrices.
func refMatMul2D(a, b []float64, m, n, k int) (c, mag []float64) {
	c, mag = make([]float64, m*n), make([]float64, m*n)
	for i := 0; i < m; i++ {
		for p := 0; p < k; p++ {
			x := a[i*k+p]
			for j := 0; j < n; j++ {
				c[i*n+j] += x * b[p*n+j]
				mag[i*n+j] += math.Abs(x * b[p*n+j])
			}
		}
	}
	return c, mag
}

// float16 and bfloat16 products accumulate in float32: against a float64
// reference of the same (rounded) inputs the error is the float32
// accumulation's plus the output's rounding, relative to sum |a||b|. On
// fresh random inputs, with transposed and batched operands, outputs
// poisoned first (the poison backend).
func TestLowpMatMul(t *testing.T) {
	forEachBackend(t, func(t *testing.T, d *Maker) {
		r := newRand(t)
		for _, dt := range []DType{Float16, BFloat16} {
			for _, c := range []struct{ m, n, k int }{{1, 1, 1}, {7, 5, 3}, {33, 17, 65}, {64, 48, 96}} {
				for _, trans := range []bool{false, true} {
					a64 := make([]float64, c.m*c.k)
					b64 := make([]float64, c.k*c.n)
					for i := range a64 {
						a64[i] = roundLowp(r.NormFloat64(), dt)
					}
					for i := range b64 {
						b64[i] = roundLowp(r.NormFloat64(), dt)
					}
					a := fromSliceOn(d, a64, c.m, c.k).AsType(dt)
					var b *Array
					if trans { // a transposed view of an n×k matrix
						bt := make([]float64, c.n*c.k)
						for p := 0; p < c.k; p++ {
							for j := 0; j < c.n; j++ {
								bt[j*c.k+p] = b64[p*c.n+j]
							}
						}
						b = fromSliceOn(d, bt, c.n, c.k).AsType(dt).Eval().T()
					} else {
						b = fromSliceOn(d, b64, c.k, c.n).AsType(dt)
					}
					z := a.MatMul(b)
					if z.DType() != dt {
						t.Fatalf("%v matmul: dtype %v", dt, z.DType())
					}
					got, err := z.Float64s()
					if err != nil {
						t.Fatal(err)
					}
					want, mag := refMatMul2D(a64, b64, c.m, c.n, c.k)
					tol := 2 * lowpEps(dt) // the output's rounding, and float32 sums well below
					for i := range want {
						if math.Abs(got[i]-want[i]) > tol*math.Max(mag[i], 1e-3) {
							t.Fatalf("%v %dx%dx%d trans=%v: element %d = %v, want %v (sum |ab| %v)", dt, c.m, c.n, c.k, trans, i, got[i], want[i], mag[i])
						}
					}
				}
			}
			// Batched, broadcast over the batch, a vector operand.
			x := d.NewRNG(3).Normal(dt, 0, 1, 3, 4, 8)
			w := d.NewRNG(4).Normal(dt, 0, 1, 8, 5)
			y := x.MatMul(w)
			y32 := x.AsType(Float32).MatMul(w.AsType(Float32))
			gv, err := y.Float64s()
			if err != nil {
				t.Fatal(err)
			}
			wv, _ := y32.Float64s()
			for i := range gv {
				if gv[i] != roundLowp(wv[i], dt) && math.Abs(gv[i]-wv[i]) > 2*lowpEps(dt)*math.Abs(wv[i])+1e-6 {
					t.Fatalf("%v batched: %v, float32 product %v", dt, gv[i], wv[i])
				}
			}
			v := x.Slice(Idx(0), Idx(0)).MatMul(w)
			if !sameShape(v.Shape(), []int{5}) || v.DType() != dt {
				t.Errorf("%v vector product: shape %v %v", dt, v.Shape(), v.DType())
			}
		}
	})
}

// int8 by int8 gives int32, exactly, in every layout and shape (on a GPU
// through cuBLASLt, with padding where K or N is not a multiple of 4).
func TestInt8MatMul(t *testing.T) {
	forEachBackend(t, func(t *testing.T, d *Maker) {
		r := newRand(t)
		for _, c := range []struct{ m, n, k int }{{1, 1, 1}, {5, 3, 7}, {16, 32, 64}, {33, 20, 130}, {64, 64, 256}, {6, 9, 2500}} {
			for _, trans := range []bool{false, true} {
				a8 := make([]int8, c.m*c.k)
				b8 := make([]int8, c.k*c.n)
				for i := range a8 {
					a8[i] = int8(r.IntN(256) - 128)
				}
				for i := range b8 {
					b8[i] = int8(r.IntN(256) - 128)
				}
				a := fromSliceOn(d, a8, c.m, c.k)
				var b *Array
				if trans {
					bt := make([]int8, c.n*c.k)
					for p := 0; p < c.k; p++ {
						for j := 0; j < c.n; j++ {
							bt[j*c.k+p] = b8[p*c.n+j]
						}
					}
					b = fromSliceOn(d, bt, c.n, c.k).T()
				} else {
					b = fromSliceOn(d, b8, c.k, c.n)
				}
				z := a.MatMul(b)
				if z.DType() != Int32 {
					t.Fatalf("int8 matmul: dtype %v (%v)", z.DType(), z.Err())
				}
				got, err := z.Int32s()
				if err != nil {
					t.Fatal(err)
				}
				for i := 0; i < c.m; i++ {
					for j := 0; j < c.n; j++ {
						var want int32
						for p := 0; p < c.k; p++ {
							want += int32(a8[i*c.k+p]) * int32(b8[p*c.n+j])
						}
						if got[i*c.n+j] != want {
							t.Fatalf("%dx%dx%d trans=%v: C[%d,%d] = %d, want %d", c.m, c.n, c.k, trans, i, j, got[i*c.n+j], want)
						}
					}
				}
			}
		}
		// Batched with broadcasting, and a vector.
		x := d.Arange(Int8, 2*3*8).Reshape(2, 3, 8).Sub(20)
		w := d.Arange(Int8, 8*6).Reshape(8, 6).Sub(24)
		y := x.MatMul(w)
		y64 := x.AsType(Int64).MatMul(w.AsType(Int64))
		gv, err := y.Int64s()
		if err != nil {
			t.Fatal(err)
		}
		wv, _ := y64.Int64s()
		if fmt.Sprint(gv) != fmt.Sprint(wv) || !sameShape(y.Shape(), []int{2, 3, 6}) {
			t.Errorf("batched int8: %v, want %v", gv, wv)
		}
		v := x.Slice(Idx(0), Idx(1)).MatMul(w)
		vv, _ := v.Int64s()
		if fmt.Sprint(vv) != fmt.Sprint(wv[6:12]) {
			t.Errorf("vector by matrix: %v, want %v", vv, wv[6:12])
		}
	})
}

// An FP8 product scales by scaleA·scaleB and rounds to the output dtype;
// it mixes E4M3 and E5M2 but not two E5M2; MatMul refuses 8-bit floats
// and operands without a promotion rule.
func TestScaledMatMul(t *testing.T) {
	forEachBackend(t, func(t *testing.T, d *Maker) {
		if d.gpu != nil && d.gpu.SupportsFP8() != nil {
			t.Skip("no FP8 tensor cores")
		}
		r := newRand(t)
		m, n, k := 24, 40, 72
		a64 := make([]float64, m*k)
		b64 := make([]float64, k*n)
		for i := range a64 {
			a64[i] = roundLowp(r.NormFloat64()*8, Float8E4M3)
		}
		for i := range b64 {
			b64[i] = roundLowp(r.NormFloat64()*8, Float8E4M3)
		}
		a := fromSliceOn(d, a64, m, k).AsType(Float8E4M3)
		b := fromSliceOn(d, b64, k, n).AsType(Float8E4M3)
		sa, sb := fromSliceOn(d, []float32{0.5}).Reshape(), fromSliceOn(d, []float32{0.125}, 1)
		want, mag := refMatMul2D(a64, b64, m, n, k)
		for _, out := range []DType{Float32, BFloat16, Float16} {
			z := ScaledMatMul(a, b, sa, sb, out)
			if z.DType() != out {
				t.Fatalf("ScaledMatMul to %v: %v (%v)", out, z.DType(), z.Err())
			}
			got, err := z.Float64s()
			if err != nil {
				t.Fatal(err)
			}
			tol := 1e-6
			if d.gpu != nil {
				tol = fp8AccumTol // the tensor cores' FP8 accumulation
			}
			if out != Float32 {
				tol = max(tol, lowpEps(out))
			}
			for i := range want {
				w := want[i] * 0.0625
				if math.Abs(got[i]-w) > tol*mag[i]*0.0625+1e-6 {
					t.Fatalf("%v: element %d = %v, want %v", out, i, got[i], w)
				}
			}
		}
		e5 := b.AsType(Float8E5M2)
		if z := ScaledMatMul(a, e5, nil, nil, Float32); z.Err() != nil {
			t.Errorf("e4m3 x e5m2: %v", z.Err())
		}
		for _, c := range []struct {
			z    *Array
			kind error
		}{
			{ScaledMatMul(e5, e5.T(), nil, nil, Float32), ErrDType},
			{ScaledMatMul(a, b, nil, nil, Int32), ErrDType},
			{ScaledMatMul(a.AsType(Float32), b, nil, nil, Float32), ErrDType},
			{ScaledMatMul(a, b, fromSliceOn(d, []float32{1, 2}), nil, Float32), ErrValue},
			{a.MatMul(b), ErrDType},
			{a.MatMul(b.AsType(BFloat16)), ErrDType},
			{a.AsType(Float32).MatMul(b), ErrDType},
		} {
			if err := c.z.Err(); !errors.Is(err, c.kind) {
				t.Errorf("error %v, want %v", err, c.kind)
			}
		}
	})
}

// Quantize per tensor, per row and per column into int8 and the 8-bit
// floats: the scales are max|x|/qmax, the values round(x/scale) saturated,
// bit for bit what a float32 reference computes; Dequantize gets back
// within half a step; zeros get scale 1.
func TestQuantize(t *testing.T) {
	forEachBackend(t, func(t *testing.T, d *Maker) {
		r := newRand(t)
		M, K := 37, 300
		xs := make([]float32, M*K)
		for i := range xs {
			xs[i] = float32(r.NormFloat64() * math.Exp(r.NormFloat64()))
		}
		for j := 0; j < K; j++ { // a zero row
			xs[5*K+j] = 0
		}
		x := fromSliceOn(d, xs, M, K)
		for _, dt := range []DType{Int8, Float8E4M3, Float8E5M2} {
			qmax := map[DType]float32{Int8: 127, Float8E4M3: 448, Float8E5M2: 57344}[dt]
			for _, axes := range [][]int{nil, {1}, {0}, {-1}} {
				q, s := x.Quantize(dt, axes...)
				if q.DType() != dt || s.DType() != Float32 {
					t.Fatalf("%v %v: dtypes %v %v (%v)", dt, axes, q.DType(), s.DType(), q.Err())
				}
				qv, err := q.Float32s()
				if err != nil {
					t.Fatal(err)
				}
				sv, err := s.Float32s()
				if err != nil {
					t.Fatal(err)
				}
				// The reference, group by group.
				group := func(i, j int) int { return 0 }
				switch {
				case len(axes) == 1 && (axes[0] == 1 || axes[0] == -1):
					group = func(i, j int) int { return i }
					if !sameShape(s.Shape(), []int{M, 1}) {
						t.Fatalf("per-row scales of shape %v", s.Shape())
					}
				case len(axes) == 1:
					group = func(i, j int) int { return j }
					if !sameShape(s.Shape(), []int{1, K}) {
						t.Fatalf("per-column scales of shape %v", s.Shape())
					}
				default:
					if !sameShape(s.Shape(), []int{1, 1}) {
						t.Fatalf("per-tensor scale of shape %v", s.Shape())
					}
				}
				amax := map[int]float32{}
				for i := 0; i < M; i++ {
					for j := 0; j < K; j++ {
						g := group(i, j)
						amax[g] = float32(math.Max(float64(amax[g]), math.Abs(float64(xs[i*K+j]))))
					}
				}
				for i := 0; i < M; i++ {
					for j := 0; j < K; j++ {
						g := group(i, j)
						sc := amax[g] / qmax
						if sc == 0 {
							sc = 1
						}
						if sv[g] != sc {
							t.Fatalf("%v %v: scale of group %d = %v, want %v", dt, axes, g, sv[g], sc)
						}
						y := xs[i*K+j] / sc
						var want float32
						switch dt {
						case Int8:
							want = float32(math.Max(-128, math.Min(127, math.RoundToEven(float64(y)))))
						case Float8E4M3:
							want = lowp.Float8E4M3FromFloat32(y).Float32()
						default:
							want = lowp.Float8E5M2FromFloat32(y).Float32()
						}
						if qv[i*K+j] != want {
							t.Fatalf("%v %v: q[%d,%d] = %v, want %v (x %v, scale %v)", dt, axes, i, j, qv[i*K+j], want, xs[i*K+j], sc)
						}
					}
				}
				back, err := Dequantize(q, s).Float32s()
				if err != nil {
					t.Fatal(err)
				}
				for i := range back {
					g := group(i/K, i%K)
					step := sv[g] // int8: one step; the floats: relative
					tol := float64(step) / 2 * 1.0001
					if dt != Int8 {
						tol = math.Abs(float64(xs[i]))*lowpEps(dt)/2*1.0001 + float64(step)*lowpTiny(dt)
					}
					if math.Abs(float64(back[i]-xs[i])) > tol {
						t.Fatalf("%v %v: dequantised %v, x %v (scale %v)", dt, axes, back[i], xs[i], step)
					}
				}
			}
		}
		if q, s := x.Quantize(Float16); !errors.Is(q.Err(), ErrDType) || !errors.Is(s.Err(), ErrDType) {
			t.Errorf("Quantize(float16): %v", q.Err())
		}
		// Float to int8 saturates rather than wrapping (the documented
		// overflow rule, also through AsType).
		big := fromSliceOn(d, []float32{300, -300, 127.5, -128.5})
		if g, _ := big.Int8s(); fmt.Sprint(g) != "[127 -128 127 -128]" {
			t.Errorf("float32 to int8 saturation: %v", g)
		}
	})
}

// float16 and int8 files round-trip with NumPy (when python3-numpy is
// installed): NumPy reads ours bit for bit, and we read NumPy's.
func TestNumPyFloat16RoundTrip(t *testing.T) {
	py := "/usr/bin/python3"
	if _, err := os.Stat(py); err != nil {
		t.Skip("no /usr/bin/python3")
	}
	dir := t.TempDir()
	h := make([]lowp.Float16, 1<<16)
	for i := range h {
		h[i] = lowp.Float16FromBits(uint16(i))
	}
	ours := filepath.Join(dir, "ours.npy")
	if err := fromSliceOn(CPU(), h, 256, 256).SaveNPY(ours); err != nil {
		t.Fatal(err)
	}
	theirs := filepath.Join(dir, "theirs.npy")
	out, err := runPython(py, fmt.Sprintf(`import numpy as np
a = np.load(%q)
assert a.dtype == np.float16 and a.shape == (256, 256)
assert (a.view(np.uint16).ravel() == np.arange(65536, dtype=np.uint16)).all()
np.save(%q, np.array([[0.1, -2.5, 65504], [1e-7, np.inf, 3.14159]], dtype=np.float16))
np.save(%q, np.array([-128, 0, 127], dtype=np.int8))
print("ok")`, ours, theirs, filepath.Join(dir, "i8.npy")))
	if err != nil {
		t.Skipf("numpy unavailable or failed: %v\n%s", err, out)
	}
	if strings.TrimSpace(out) != "ok" {
		t.Fatalf("numpy: %s", out)
	}
	a, err := LoadNPY(theirs)
	if err != nil {
		t.Fatal(err)
	}
	got, _ := ToSlice[lowp.Float16](a)
	for i, v := range []float32{0.1, -2.5, 65504, 1e-7, float32(math.Inf(1)), 3.14159} {
		if want := lowp.Float16FromFloat32(v); got[i] != want {
			t.Errorf("numpy's float16 %v: read %#x, want %#x", v, got[i], want)
		}
	}
	b, err := LoadNPY(filepath.Join(dir, "i8.npy"))
	if err != nil {
		t.Fatal(err)
	}
	if v, _ := b.Int8s(); b.DType() != Int8 || fmt.Sprint(v) != "[-128 0 127]" {
		t.Errorf("numpy's int8: %v %v", b.DType(), v)
	}
}
