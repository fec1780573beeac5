package array

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/cmplx"
	"os"
	"strings"
	"testing"

	"github.com/gocu-dev/gocu/array/internal/backend"
	"github.com/gocu-dev/gocu/array/internal/cpu"
	"github.com/gocu-dev/gocu/array/internal/gpu"
)

// poisonComplex fills a new complex buffer with NaN parts.
func poisonComplex(be backend.Backend, b backend.Buffer) error {
	comp := b.DType().Component()
	var v backend.Buffer
	var err error
	if g, ok := be.(*gpu.Backend); ok {
		v, err = g.Reinterpret(b, comp)
	} else {
		v, err = cpu.Reinterpret(b, comp)
	}
	if err != nil {
		return err
	}
	n := v.Len()
	if comp == backend.Float32 {
		return be.Write(v, 0, fillSlice(n, float32(math.NaN())))
	}
	return be.Write(v, 0, fillSlice(n, math.NaN()))
}

// cjarray is an array of testdata/conformance/complex_fft.json.
type cjarray struct {
	DType string            `json:"dtype"`
	Shape []int             `json:"shape"`
	Data  []json.RawMessage `json:"data"`
}

func (j *cjarray) values(t *testing.T) []complex128 {
	v := make([]complex128, len(j.Data))
	for i, d := range j.Data {
		var pair [2]json.RawMessage
		if json.Unmarshal(d, &pair) == nil {
			v[i] = complex(jsonNum(t, pair[0]), jsonNum(t, pair[1]))
			continue
		}
		var b bool
		if json.Unmarshal(d, &b) == nil {
			if b {
				v[i] = 1
			}
			continue
		}
		v[i] = complex(jsonNum(t, d), 0)
	}
	return v
}

// jsonNum reads a number, or "nan", "inf" or "-inf".
func jsonNum(t *testing.T, d json.RawMessage) float64 {
	var f float64
	if json.Unmarshal(d, &f) == nil {
		return f
	}
	var s string
	if err := json.Unmarshal(d, &s); err != nil {
		t.Fatalf("element %s: %v", d, err)
	}
	switch s {
	case "nan":
		return math.NaN()
	case "inf":
		return math.Inf(1)
	case "-inf":
		return math.Inf(-1)
	}
	t.Fatalf("element %q", s)
	return 0
}

func (j *cjarray) on(t *testing.T, d *Maker, dt DType) *Array {
	v := j.values(t)
	if j.DType == "complex128" {
		return fromComplexOn(d, v, j.Shape...).AsType(dt)
	}
	f := make([]float64, len(v))
	for i, c := range v {
		f[i] = real(c)
	}
	return fromSliceOn(d, f, j.Shape...).AsType(dt.component())
}

type cjcase struct {
	Op   string   `json:"op"`
	Want cjarray  `json:"want"`
	X    *cjarray `json:"x"`
	Y    *cjarray `json:"y"`
	Axis *int     `json:"axis"`
}

type cjfile struct {
	Promotion [][3]string `json:"promotion"`
	Cases     []cjcase    `json:"cases"`
}

func loadComplexCases(t *testing.T) cjfile {
	b, err := os.ReadFile("testdata/conformance/complex_fft.json")
	if err != nil {
		t.Fatal(err)
	}
	var f cjfile
	if err := json.Unmarshal(b, &f); err != nil {
		t.Fatal(err)
	}
	return f
}

// complexValues reads any array as complex128 values.
func complexValues(t *testing.T, y *Array) []complex128 {
	t.Helper()
	if y.DType().IsComplex() {
		v, err := y.AsType(Complex128).Complex128s()
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	f, err := y.AsType(Float64).Float64s()
	if err != nil {
		t.Fatal(err)
	}
	v := make([]complex128, len(f))
	for i, x := range f {
		v[i] = complex(x, 0)
	}
	return v
}

// TestComplexConformance runs NumPy's complex128 results in complex128
// and complex64 (each part compared relative to the largest magnitude).
func TestComplexConformance(t *testing.T) {
	f := loadComplexCases(t)
	forEachBackend(t, func(t *testing.T, d *Maker) {
		for _, dt := range []DType{Complex128, Complex64} {
			tol := 1e-13
			if dt == Complex64 {
				tol = 1e-5
			}
			checked := 0
			for i, c := range f.Cases {
				var y *Array
				var x, w *Array
				if c.X != nil {
					x = c.X.on(t, d, dt)
				}
				if c.Y != nil {
					w = c.Y.on(t, d, dt)
				}
				var axes []int
				if c.Axis != nil {
					axes = []int{*c.Axis}
				}
				switch c.Op {
				case "add":
					y = x.Add(w)
				case "sub":
					y = x.Sub(w)
				case "mul":
					y = x.Mul(w)
				case "div":
					y = x.Div(w)
				case "eq":
					y = x.Eq(w)
				case "ne":
					y = x.Ne(w)
				case "pow":
					y = x.Pow(w)
				case "abs":
					y = x.Abs()
				case "angle":
					y = x.Angle()
				case "conj":
					y = x.Conj()
				case "real":
					y = x.Real()
				case "imag":
					y = x.Imag()
				case "exp":
					y = x.Exp()
				case "log":
					y = x.Log()
				case "sqrt":
					y = x.Sqrt()
				case "neg":
					y = x.Neg()
				case "square":
					y = x.Square()
				case "reciprocal":
					y = x.Reciprocal()
				case "sum":
					y = x.Sum(axes...)
				case "mean":
					y = x.Mean(axes...)
				case "prod":
					y = x.Prod(axes...)
				case "matmul":
					y = x.MatMul(w)
				default:
					continue
				}
				if err := y.Err(); err != nil {
					t.Errorf("%v case %d %s: %v", dt, i, c.Op, err)
					continue
				}
				if !sameShape(y.Shape(), c.Want.Shape) {
					t.Errorf("%v case %d %s: shape %v, want %v", dt, i, c.Op, y.Shape(), c.Want.Shape)
					continue
				}
				if c.Op != "eq" && c.Op != "ne" && y.DType() != dt && y.DType() != dt.component() {
					t.Errorf("%v case %d %s: dtype %v", dt, i, c.Op, y.DType())
				}
				want := c.Want.values(t)
				got := complexValues(t, y)
				scale := 1.0
				for _, v := range want {
					scale = math.Max(scale, cmplx.Abs(v))
				}
				for k := range want {
					if c.Op == "eq" || c.Op == "ne" {
						if got[k] != want[k] && dt == Complex128 {
							t.Errorf("%v case %d %s: element %d = %v, want %v", dt, i, c.Op, k, got[k], want[k])
							break
						}
						continue
					}
					if e := cmplx.Abs(got[k] - want[k]); !(e <= tol*scale) {
						t.Errorf("%v case %d %s: element %d = %v, want %v", dt, i, c.Op, k, got[k], want[k])
						break
					}
				}
				checked++
			}
			if checked < 30 {
				t.Errorf("%v: checked %d cases, want at least 30", dt, checked)
			}
		}
	})
}

func TestComplexPromotion(t *testing.T) {
	names := map[string]DType{}
	for _, dt := range []DType{Bool, Uint8, Int8, Int32, Int64, Float16, Float32, Float64, Complex64, Complex128} {
		names[dt.String()] = dt
	}
	f := loadComplexCases(t)
	if len(f.Promotion) == 0 {
		t.Fatal("no promotion table")
	}
	for _, p := range f.Promotion {
		a, b, want := names[p[0]], names[p[1]], names[p[2]]
		if got := Promote(a, b); got != want {
			t.Errorf("Promote(%v, %v) = %v, want %v", a, b, got, want)
		}
		if got := Promote(b, a); got != want {
			t.Errorf("Promote(%v, %v) = %v, want %v", b, a, got, want)
		}
	}
	if got := Promote(Float8E4M3, Complex64); got.Valid() {
		t.Errorf("Promote(float8_e4m3fn, complex64) = %v, want no rule", got)
	}
	if got := Promote(BFloat16, Complex64); got != Complex64 {
		t.Errorf("Promote(bfloat16, complex64) = %v, want complex64", got)
	}
}

// TestComplexWeakScalars checks NEP 50 for Go complex and real numbers.
func TestComplexWeakScalars(t *testing.T) {
	x32 := FromSlice([]float32{1, 2}, 2)
	c64 := FromComplex([]complex64{1 + 1i, 2 - 1i}, 2)
	i64 := FromSlice([]int64{1, 2}, 2)
	for _, c := range []struct {
		z    *Array
		want DType
		v    []complex128
	}{
		{x32.Mul(complex(0, 2)), Complex64, []complex128{2i, 4i}},
		{i64.Add(1i), Complex128, []complex128{1 + 1i, 2 + 1i}},
		{c64.Mul(2.5), Complex64, []complex128{2.5 + 2.5i, 5 - 2.5i}},
		{c64.Add(3), Complex64, []complex128{4 + 1i, 5 - 1i}},
		{c64.Sub(complex64(1i)), Complex64, []complex128{1, 2 - 2i}},
		{c64.Add(FromSlice([]float64{1, 1}, 2)), Complex128, []complex128{2 + 1i, 3 - 1i}},
		{c64.Mul(i64), Complex128, []complex128{1 + 1i, 4 - 2i}},
	} {
		if c.z.DType() != c.want {
			t.Errorf("dtype %v, want %v", c.z.DType(), c.want)
		}
		got := complexValues(t, c.z)
		for i := range got {
			if got[i] != c.v[i] {
				t.Errorf("got %v, want %v", got, c.v)
				break
			}
		}
	}
}

func TestComplexCreation(t *testing.T) {
	forEachBackend(t, func(t *testing.T, d *Maker) {
		z := d.Full(Complex64, 1.5-2i, 2, 3)
		v, err := z.Complex64s()
		if err != nil || len(v) != 6 {
			t.Fatal(v, err)
		}
		for _, x := range v {
			if x != 1.5-2i {
				t.Fatalf("Full: %v", v)
			}
		}
		zz, err := d.Zeros(Complex128, 4).Complex128s()
		if err != nil || len(zz) != 4 || zz[0] != 0 || zz[3] != 0 {
			t.Fatal(zz, err)
		}
		o, err := d.Full(Complex128, 2, 3).Complex128s()
		if err != nil || o[2] != 2 {
			t.Fatal(o, err)
		}
		// A round trip keeps every bit, through views.
		data := []complex128{1 + 2i, -3.5 + 0.25i, cmplx.Inf(), complex(math.NaN(), -1), 0, -1i}
		a := fromComplexOn(d, data, 2, 3)
		got, err := a.Complex128s()
		if err != nil {
			t.Fatal(err)
		}
		for i := range data {
			if math.Float64bits(real(got[i])) != math.Float64bits(real(data[i])) || math.Float64bits(imag(got[i])) != math.Float64bits(imag(data[i])) {
				t.Errorf("round trip [%d] = %v, want %v", i, got[i], data[i])
			}
		}
		tr, err := a.T().Complex128s()
		if err != nil {
			t.Fatal(err)
		}
		if tr[2] != data[1] || tr[4] != data[2] || !cmplx.IsNaN(tr[1]) {
			t.Errorf("transposed = %v", tr)
		}
		s, err := a.Slice(Idx(1), S(None, None, -1)).Complex128s()
		if err != nil || s[0] != data[5] || s[2] != (complex(math.NaN(), -1)) && !cmplx.IsNaN(s[2]) {
			t.Errorf("slice = %v, %v", s, err)
		}
		// Real and Imag of a strided view.
		re, err := a.T().Real().Float64s()
		if err != nil || re[2] != -3.5 || re[0] != 1 || !math.IsNaN(re[1]) {
			t.Errorf("Real of T = %v, %v", re, err)
		}
		im, err := a.T().Imag().Float64s()
		if err != nil || im[1] != -1 || im[2] != 0.25 || im[3] != 0 {
			t.Errorf("Imag of T = %v, %v", im, err)
		}
		// Complex builds from broadcast parts.
		c, err := Complex(fromSliceOn(d, []float32{1, 2}, 2), fromSliceOn(d, []float32{3}, 1)).Complex64s()
		if err != nil || c[0] != 1+3i || c[1] != 2+3i {
			t.Errorf("Complex = %v, %v", c, err)
		}
	})
}

func TestComplexRandom(t *testing.T) {
	forEachBackend(t, func(t *testing.T, d *Maker) {
		const n = 1 << 16
		z := d.NewRNG(7).Normal(Complex64, 0, 1, n)
		v, err := z.Complex64s()
		if err != nil {
			t.Fatal(err)
		}
		var sr, si, sr2, si2, sri float64
		for _, x := range v {
			r, i := float64(real(x)), float64(imag(x))
			sr, si, sr2, si2, sri = sr+r, si+i, sr2+r*r, si2+i*i, sri+r*i
		}
		// Standard complex normal: parts N(0, 1/2), uncorrelated.
		for name, got := range map[string]float64{"mean re": sr / n, "mean im": si / n, "cov": sri / n} {
			if math.Abs(got) > 0.02 {
				t.Errorf("%s = %v, want about 0", name, got)
			}
		}
		for name, got := range map[string]float64{"var re": sr2 / n, "var im": si2 / n} {
			if math.Abs(got-0.5) > 0.02 {
				t.Errorf("%s = %v, want about 0.5", name, got)
			}
		}
		if err := d.NewRNG(1).Uniform(Complex64, 0, 1, 3).Err(); !errors.Is(err, ErrDType) {
			t.Errorf("Uniform complex: %v, want ErrDType", err)
		}
	})
}

func TestComplexErrors(t *testing.T) {
	x := FromComplex([]complex64{1 + 1i, 2}, 2)
	for name, z := range map[string]*Array{
		"Lt":        x.Lt(x),
		"Ge":        x.Ge(1),
		"Maximum":   x.Maximum(x),
		"FloorDiv":  x.FloorDiv(x),
		"Floor":     x.Floor(),
		"Max":       x.Max(),
		"ArgMin":    x.ArgMin(),
		"Softmax":   x.Softmax(0),
		"Sin":       x.Sin(),
		"AsType":    x.AsType(Float32),
		"Where":     Where(x, 1, 2),
		"Float8":    FromSlice([]float32{1, 2}, 2).AsType(Float8E4M3).Add(x),
		"ToSlice":   failedRead(x),
		"ToComplex": failedComplex(x),
	} {
		if err := z.Err(); !errors.Is(err, ErrDType) {
			t.Errorf("%s: %v, want ErrDType", name, err)
		}
	}
	if err := FromSlice([]float32{1, 2, 3}, 3).ViewAsComplex().Err(); !errors.Is(err, ErrShape) {
		t.Errorf("ViewAsComplex of 3 floats: %v, want ErrShape", err)
	}
	if err := FromSlice([]float32{1, 2, 3, 4}, 2, 2).T().ViewAsComplex().Err(); !errors.Is(err, ErrValue) {
		t.Errorf("ViewAsComplex of a transposed view: %v, want ErrValue", err)
	}
	if err := FromSlice([]float32{1, 2}, 2).ViewAsReal().Err(); !errors.Is(err, ErrDType) {
		t.Errorf("ViewAsReal of float32: %v, want ErrDType", err)
	}
}

func failedRead(x *Array) *Array {
	if _, err := x.Float32s(); err != nil {
		return Failed(err)
	}
	return x
}

func failedComplex(x *Array) *Array {
	if _, err := x.Complex128s(); err != nil {
		return Failed(err)
	}
	return x
}

// TestComplexViews writes through ViewAsReal and reads the complex array.
func TestComplexViews(t *testing.T) {
	forEachBackend(t, func(t *testing.T, d *Maker) {
		x := fromComplexOn(d, []complex64{1 + 2i, 3 + 4i}, 2)
		v := x.ViewAsReal()
		if err := v.Slice(All, Idx(1)).Assign(0); err != nil {
			t.Fatal(err)
		}
		v.Close()
		got, err := x.Complex64s()
		if err != nil || got[0] != 1 || got[1] != 3 {
			t.Errorf("after zeroing the imaginary parts: %v, %v", got, err)
		}
		// The view outlives a closed parent.
		y := fromComplexOn(d, []complex64{5 - 1i}, 1)
		w := y.ViewAsReal()
		y.Close()
		f, err := w.Float32s()
		if err != nil || f[0] != 5 || f[1] != -1 {
			t.Errorf("view after Close of its parent: %v, %v", f, err)
		}
		c, err := Concat(0, x, fromSliceOn(d, []float64{7}, 1)).Complex128s()
		if err != nil || len(c) != 3 || c[2] != 7 || c[1] != 3 {
			t.Errorf("Concat = %v, %v", c, err)
		}
		b, err := x.AsType(Bool).Bools()
		if err != nil || !b[0] || !b[1] {
			t.Errorf("AsType(Bool) = %v, %v", b, err)
		}
	})
}

func TestComplexPrint(t *testing.T) {
	b, err := os.ReadFile("testdata/conformance/complex_fft.json")
	if err != nil {
		t.Fatal(err)
	}
	var f struct {
		Print []struct {
			X    cjarray `json:"x"`
			Str  string  `json:"str"`
			Repr string  `json:"repr"`
		} `json:"print"`
	}
	if err := json.Unmarshal(b, &f); err != nil {
		t.Fatal(err)
	}
	if len(f.Print) == 0 {
		t.Fatal("no print cases")
	}
	for _, c := range f.Print {
		dt := Complex128
		if c.X.DType == "complex64" {
			dt = Complex64
		}
		c.X.DType = "complex128"
		x := c.X.on(t, Default(), dt)
		if got := x.String(); got != c.Str {
			t.Errorf("String:\n%s\nwant\n%s", got, c.Str)
		}
		// gocu's repr differs from NumPy's for every dtype (no commas, a
		// dtype always): check the dtype only.
		if got := fmt.Sprintf("%#v", x); !strings.HasSuffix(got, "dtype="+dt.String()+")") {
			t.Errorf("repr: %s", got)
		}
	}
}

// TestComplexNPY reads NumPy's complex .npy files and writes them back
// byte for byte.
func TestComplexNPY(t *testing.T) {
	forEachBackend(t, func(t *testing.T, d *Maker) {
		c8 := make([]complex64, 6)
		for i := range c8 {
			c8[i] = complex64(complex(float64(i), 0)*(1-0.5i) + 0.25i)
		}
		for _, c := range []struct {
			file string
			dt   DType
			want []complex128 // row-major
		}{
			{"complex64_2x3.npy", Complex64, nil},
			{"complex128_fortran_3x2.npy", Complex128, nil},
		} {
			b, err := os.ReadFile("testdata/npy/" + c.file)
			if err != nil {
				t.Fatal(err)
			}
			a, err := d.ReadNPY(bytes.NewReader(b))
			if err != nil {
				t.Fatalf("%s: %v", c.file, err)
			}
			if a.DType() != c.dt {
				t.Errorf("%s: dtype %v", c.file, a.DType())
			}
			got := complexValues(t, a)
			for i := 0; i < 2; i++ {
				for j := 0; j < 3; j++ {
					w := complex128(c8[i*3+j])
					g := got[i*3+j]
					if c.dt == Complex128 {
						w *= 1 + 1i
						g = got[j*2+i] // the 3x2 transpose
					}
					if g != w {
						t.Errorf("%s [%d,%d] = %v, want %v", c.file, i, j, g, w)
					}
				}
			}
			if c.dt == Complex64 {
				var out bytes.Buffer
				if err := a.WriteNPY(&out); err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(out.Bytes(), b) {
					t.Errorf("%s: WriteNPY differs from NumPy's file", c.file)
				}
			}
			// A round trip through a strided view.
			var out bytes.Buffer
			if err := a.T().WriteNPY(&out); err != nil {
				t.Fatal(err)
			}
			r, err := d.ReadNPY(&out)
			if err != nil {
				t.Fatal(err)
			}
			eq, err := r.Eq(a.T()).All().Bools()
			if err != nil || !eq[0] {
				t.Errorf("%s: round trip of the transpose differs (%v)", c.file, err)
			}
		}
	})
}

// TestComplexShapes runs the shape operations that copy complex arrays.
func TestComplexShapes(t *testing.T) {
	forEachBackend(t, func(t *testing.T, d *Maker) {
		data := []complex128{1 + 1i, 2, 3 - 1i, 4i, 5, 6}
		x := fromComplexOn(d, data, 2, 3)
		for _, c := range []struct {
			name string
			z    *Array
			want []complex128
		}{
			{"T.Reshape", x.T().Reshape(-1), []complex128{1 + 1i, 4i, 2, 5, 3 - 1i, 6}},
			{"Flatten", x.T().Flatten(), []complex128{1 + 1i, 4i, 2, 5, 3 - 1i, 6}},
			{"Stack", Stack(0, x.Slice(Idx(0)), x.Slice(Idx(1))), data},
			{"Contiguous", x.Slice(All, S(None, None, 2)).Contiguous(), []complex128{1 + 1i, 3 - 1i, 4i, 6}},
			{"BroadcastTo", x.Slice(Idx(1)).BroadcastTo(2, 3).Copy(), []complex128{4i, 5, 6, 4i, 5, 6}},
			{"Mean keepDims", x.Reduce(OpMean, true, 1), []complex128{2, complex(11.0/3, 4.0/3)}},
			{"Arange", d.Arange(Complex64, 3), []complex128{0, 1, 2}},
			{"Eye", d.Eye(Complex128, 2), []complex128{1, 0, 0, 1}},
			{"Scalar", d.Scalar(1 + 2i), []complex128{1 + 2i}},
			{"Linspace", d.Linspace(Complex64, 0, 1, 3), []complex128{0, 0.5, 1}},
		} {
			if err := c.z.Err(); err != nil {
				t.Errorf("%s: %v", c.name, err)
				continue
			}
			got := complexValues(t, c.z)
			if len(got) != len(c.want) {
				t.Errorf("%s: %v, want %v", c.name, got, c.want)
				continue
			}
			for i := range got {
				if cmplx.Abs(got[i]-c.want[i]) > 1e-6 {
					t.Errorf("%s: %v, want %v", c.name, got, c.want)
					break
				}
			}
		}
		if s := d.Scalar(1 + 2i); len(s.Shape()) != 0 || s.DType() != Complex128 {
			t.Errorf("Scalar: shape %v dtype %v", s.Shape(), s.DType())
		}
	})
}

func TestComplexItem(t *testing.T) {
	z, err := FromComplex([]complex64{3 - 4i}).ComplexItem()
	if err != nil || z != 3-4i {
		t.Errorf("ComplexItem = %v, %v", z, err)
	}
	z, err = FromSlice([]int32{7}).ComplexItem()
	if err != nil || z != 7 {
		t.Errorf("ComplexItem of int32 = %v, %v", z, err)
	}
	if _, err := FromComplex([]complex64{1, 2}).ComplexItem(); !errors.Is(err, ErrShape) {
		t.Errorf("ComplexItem of 2 values: %v, want ErrShape", err)
	}
}
