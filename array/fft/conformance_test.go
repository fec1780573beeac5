package fft_test

import (
	"encoding/json"
	"math"
	"math/cmplx"
	"os"
	"testing"

	"github.com/gocu-dev/gocu/array"
	"github.com/gocu-dev/gocu/array/fft"
)

// jarray is an array of complex_fft.json: complex elements are [re, im].
type jarray struct {
	DType string            `json:"dtype"`
	Shape []int             `json:"shape"`
	Data  []json.RawMessage `json:"data"`
}

func (j *jarray) values(t *testing.T) []complex128 {
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

func (j *jarray) array(t *testing.T) *array.Array {
	v := j.values(t)
	if j.DType == "complex128" {
		return array.FromComplex(v, j.Shape...)
	}
	f := make([]float64, len(v))
	for i, c := range v {
		f[i] = real(c)
	}
	return array.FromSlice(f, j.Shape...)
}

type jcase struct {
	Op   string  `json:"op"`
	Want jarray  `json:"want"`
	X    *jarray `json:"x"`
	N    int     `json:"n"`
	Axis *int    `json:"axis"`
	Axes []int   `json:"axes"`
	S    []int   `json:"s"`
	Norm string  `json:"norm"`
	D    float64 `json:"d"`
}

func loadCases(t *testing.T) []jcase {
	b, err := os.ReadFile("../testdata/conformance/complex_fft.json")
	if err != nil {
		t.Fatal(err)
	}
	var f struct {
		Cases []jcase `json:"cases"`
	}
	if err := json.Unmarshal(b, &f); err != nil {
		t.Fatal(err)
	}
	return f.Cases
}

// values reads a result as complex128 values.
func values(t *testing.T, y *array.Array) []complex128 {
	t.Helper()
	if y.DType().IsComplex() {
		v, err := y.AsType(array.Complex128).Complex128s()
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	f, err := y.AsType(array.Float64).Float64s()
	if err != nil {
		t.Fatal(err)
	}
	v := make([]complex128, len(f))
	for i, x := range f {
		v[i] = complex(x, 0)
	}
	return v
}

func close(got, want []complex128, tol float64) (int, bool) {
	scale := 1.0
	for _, w := range want {
		scale = math.Max(scale, cmplx.Abs(w))
	}
	for i := range want {
		if cmplx.Abs(got[i]-want[i]) > tol*scale || cmplx.IsNaN(got[i]) {
			return i, false
		}
	}
	return 0, true
}

func TestConformanceNumPy(t *testing.T) {
	checked := 0
	for i, c := range loadCases(t) {
		var opts []fft.Option
		if c.N != 0 {
			opts = append(opts, fft.N(c.N))
		}
		if c.Axis != nil {
			opts = append(opts, fft.Axis(*c.Axis))
		}
		if c.Axes != nil {
			opts = append(opts, fft.Axes(c.Axes...))
		}
		if c.S != nil {
			opts = append(opts, fft.S(c.S...))
		}
		if c.Norm != "" {
			opts = append(opts, fft.Norm(c.Norm))
		}
		var y *array.Array
		switch c.Op {
		case "fft":
			y = fft.FFT(c.X.array(t), opts...)
		case "ifft":
			y = fft.IFFT(c.X.array(t), opts...)
		case "rfft":
			y = fft.RFFT(c.X.array(t), opts...)
		case "irfft":
			y = fft.IRFFT(c.X.array(t), opts...)
		case "fft2":
			y = fft.FFT2(c.X.array(t), opts...)
		case "ifft2":
			y = fft.IFFT2(c.X.array(t), opts...)
		case "fftn":
			y = fft.FFTN(c.X.array(t), opts...)
		case "ifftn":
			y = fft.IFFTN(c.X.array(t), opts...)
		case "rfftn":
			y = fft.RFFTN(c.X.array(t), opts...)
		case "irfftn":
			y = fft.IRFFTN(c.X.array(t), opts...)
		case "fftfreq":
			y = fft.FFTFreq(c.N, c.D)
		case "rfftfreq":
			y = fft.RFFTFreq(c.N, c.D)
		case "fftshift":
			y = fft.FFTShift(c.X.array(t), c.Axes...)
		case "ifftshift":
			y = fft.IFFTShift(c.X.array(t), c.Axes...)
		default:
			continue // elementwise cases: package array's test
		}
		if err := y.Err(); err != nil {
			t.Errorf("case %d %s: %v", i, c.Op, err)
			continue
		}
		if !equalShape(y.Shape(), c.Want.Shape) {
			t.Errorf("case %d %s: shape %v, want %v", i, c.Op, y.Shape(), c.Want.Shape)
			continue
		}
		want := c.Want.values(t)
		got := values(t, y)
		checked++
		if k, ok := close(got, want, 1e-12); !ok {
			t.Errorf("case %d %s (n=%d axes=%v s=%v norm=%q): element %d = %v, want %v", i, c.Op, c.N, c.Axes, c.S, c.Norm, k, got[k], want[k])
		}
	}
	if checked < 250 {
		t.Errorf("checked %d FFT cases, want at least 250", checked)
	}
	t.Logf("%d FFT cases match NumPy", checked)
}

func equalShape(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
