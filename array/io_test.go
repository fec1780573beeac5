package array

import (
	"bytes"
	"encoding/json"
	"fmt"
	"image"
	"image/color"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// npyValues recomputes the values gen_fixtures.py stored.
func npyValues(dt DType, n int) []float64 {
	v := make([]float64, n)
	for i := range v {
		switch dt {
		case Bool:
			v[i] = b2f(i%3 == 1)
		case Uint8:
			v[i] = float64((i*37 + 11) % 256)
		case Int32:
			v[i] = float64(i*7919 - 5000)
		case Int64:
			v[i] = float64((i*7919 - 5000) * 1000003)
		case Int8:
			v[i] = float64(int8(i*7919 - 5000))
		case Int16:
			v[i] = float64(int16(i*7919 - 5000))
		case Uint16:
			v[i] = float64((i*40503 + 11) % 65536)
		case Uint32:
			v[i] = float64((i*2654435761 + 7) % (1 << 32))
		case Uint64:
			v[i] = float64(npyUint64(i))
		case Float32:
			v[i] = roundTo(Float32, (float64(i)-3.25)/7)
		default:
			v[i] = (float64(i) - 3.25) / 7
		}
	}
	return v
}

// npyUint64 is gen_fixtures.py's uint64 value i, exactly.
func npyUint64(i int) uint64 { return uint64(i)*0x9E3779B97F4A7C15 + 3 }

// Files written by NumPy load: every dtype, 0-d and empty, C and Fortran
// order, big-endian, format 2.0.
func TestLoadNumPyFiles(t *testing.T) {
	b, err := os.ReadFile("testdata/npy/cases.json")
	if err != nil {
		t.Fatal(err)
	}
	var cases []struct {
		File  string
		DType string
		Shape []int
	}
	if err := json.Unmarshal(b, &cases); err != nil {
		t.Fatal(err)
	}
	if len(cases) < 50 {
		t.Fatalf("only %d fixture files", len(cases))
	}
	for _, c := range cases {
		a, err := LoadNPY(filepath.Join("testdata/npy", c.File))
		if err != nil {
			t.Errorf("%s: %v", c.File, err)
			continue
		}
		dt := dtypeByName(t, c.DType)
		if a.DType() != dt {
			t.Errorf("%s: dtype %v, want %v", c.File, a.DType(), dt)
		}
		want := npyValues(dt, backendSize(c.Shape))
		checkHost(t, c.File, readHost(t, a), c.Shape, want, 0)
		if dt == Uint64 { // every bit, beyond float64's 53
			got, err := ToSlice[uint64](a)
			for i := range got {
				if err != nil || got[i] != npyUint64(i) {
					t.Fatalf("%s: element %d = %d (%v), want %d", c.File, i, got[i], err, npyUint64(i))
				}
			}
		}
		if strings.HasSuffix(c.File, "_f.npy") && a.IsContiguous() {
			t.Errorf("%s: a Fortran-order file should load as a transposed view", c.File)
		}
	}
}

func TestNPYRoundTrip(t *testing.T) {
	forEachBackend(t, func(t *testing.T, d *Maker) {
		r := newRand(t)
		dir := t.TempDir()
		for _, dt := range allDTypes {
			for i, shape := range testShapes {
				h := randHost(r, dt, shape, -100, 100)
				a := makeArray(t, d, dt, h, layoutKinds[i%4])
				var buf bytes.Buffer
				if err := a.WriteNPY(&buf); err != nil {
					t.Fatal(err)
				}
				if hl := buf.Bytes(); (len(hl)-len(h.v)*dt.Size())%64 != 0 || !bytes.HasPrefix(hl, []byte("\x93NUMPY\x01\x00")) {
					t.Errorf("%v %v: header not 64-byte aligned v1.0", dt, shape)
				}
				b, err := d.ReadNPY(&buf)
				if err != nil {
					t.Fatalf("%v %v: %v", dt, shape, err)
				}
				if b.DType() != dt {
					t.Fatalf("dtype %v, want %v", b.DType(), dt)
				}
				checkHost(t, fmt.Sprintf("npy %v %v", dt, shape), readHost(t, b), shape, h.v, 0)
			}
			path := filepath.Join(dir, dt.String()+".npy")
			x := d.Arange(dt, 10)
			if dt == Bool {
				x = d.Arange(Int32, 10).Mod(2).AsType(Bool)
			}
			if err := x.SaveNPY(path); err != nil {
				t.Fatal(err)
			}
			y, err := LoadNPY(path)
			if err != nil {
				t.Fatal(err)
			}
			checkHost(t, "file "+dt.String(), readHost(t, y), []int{10}, readHost(t, x).v, 0)
		}
	})
}

// The files gocu writes load in NumPy (when python3-numpy is installed).
func TestNumPyReadsOurFiles(t *testing.T) {
	py := "/usr/bin/python3"
	if _, err := os.Stat(py); err != nil {
		t.Skip("no /usr/bin/python3")
	}
	dir := t.TempDir()
	x := CPU().Arange(Float32, 12).Reshape(3, 4).T().Mul(0.5)
	if err := x.SaveNPY(filepath.Join(dir, "x.npy")); err != nil {
		t.Fatal(err)
	}
	out, err := runPython(py, fmt.Sprintf("import numpy as np; a = np.load(%q); print(a.dtype, a.shape, a.sum(), a[1, 2])", filepath.Join(dir, "x.npy")))
	if err != nil {
		t.Skipf("numpy unavailable: %v", err)
	}
	if strings.TrimSpace(out) != "float32 (4, 3) 33.0 4.5" {
		t.Errorf("numpy read %q", out)
	}
}

func TestNPYErrors(t *testing.T) {
	bad := map[string]string{
		"magic":     "\x93NUMPX\x01\x00",
		"version":   "\x93NUMPY\x09\x00\x00\x00",
		"truncated": "\x93NUMPY\x01\x00\x40\x00{'descr'",
		"dtype":     npyHeader("{'descr': '<c32', 'fortran_order': False, 'shape': (2,), }") + strings.Repeat("\x00", 32),
		"shape":     npyHeader("{'descr': '<f4', 'fortran_order': False, 'shape': (2, x), }"),
		"missing":   npyHeader("{'descr': '<f4', 'shape': (2,), }"),
		"data":      npyHeader("{'descr': '<f8', 'fortran_order': False, 'shape': (4,), }") + "12345678",
	}
	for name, s := range bad {
		_, err := ReadNPY(strings.NewReader(s))
		if !isKind(err, ErrValue) {
			t.Errorf("%s: %v", name, err)
		}
	}
	// Structured and sub-array dtypes are named as unsupported dtypes,
	// not as a malformed header.
	for _, descr := range []string{"[('a', '<f4'), ('b', '<i4')]", "[('a', '<f4', (2,))]", "('<f4', (2,))"} {
		s := npyHeader("{'descr': "+descr+", 'fortran_order': False, 'shape': (2,), }") + strings.Repeat("\x00", 32)
		_, err := ReadNPY(strings.NewReader(s))
		if !isKind(err, ErrDType) || !isKind(err, ErrValue) || !strings.Contains(err.Error(), "unsupported dtype "+descr+": structured and sub-array dtypes are not supported") {
			t.Errorf("descr %s: %v", descr, err)
		}
	}
	// Shapes are tuples whose end is found past nested brackets too.
	s := npyHeader("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 1), }") + strings.Repeat("\x00", 8)
	if a, err := ReadNPY(strings.NewReader(s)); err != nil || fmt.Sprint(a.Shape()) != "[2 1]" {
		t.Errorf("a (2, 1) array: %v", err)
	}
	if _, err := LoadNPY("/nonexistent/x.npy"); !isKind(err, ErrValue) || !errorsIsNotExist(err) {
		t.Errorf("missing file: %v", err)
	}
}

func npyHeader(dict string) string {
	h := dict + strings.Repeat(" ", 63-(10+len(dict))%64) + "\n"
	return "\x93NUMPY\x01\x00" + string([]byte{byte(len(h)), byte(len(h) >> 8)}) + h
}

func errorsIsNotExist(err error) bool {
	return err != nil && strings.Contains(err.Error(), "no such file")
}

// String matches NumPy's str() on the cases of testdata/print.json.
func TestPrintMatchesNumPy(t *testing.T) {
	b, err := os.ReadFile("testdata/print.json")
	if err != nil {
		t.Fatal(err)
	}
	var cases []struct{ Key, Str string }
	if err := json.Unmarshal(b, &cases); err != nil {
		t.Fatal(err)
	}
	d := CPU()
	build := map[string]*Array{
		"arange12f32/7": d.Arange(Float32, 12).Reshape(3, 4).Div(float32(7)),
		"arange2000":    d.Arange(Float64, 2000),
		"arange2000x2":  d.Arange(Float64, 2000).Reshape(2, 1000),
		"sci":           FromSlice([]float64{1e-5, 1, 1e5}),
		"pad":           FromSlice([]float64{1.5, 2, 3}),
		"bool":          FromSlice([]bool{true, false}),
		"scalar":        d.Scalar(3.5),
		"int2x2":        FromSlice([]int64{1, 2, 3, 4}, 2, 2),
		"nonfinite":     FromSlice([]float64{math.NaN(), math.Inf(1), math.Inf(-1), 1.25}),
		"empty":         d.Zeros(Float64, 2, 0, 3),
		"u8cube":        d.Zeros(Uint8, 2, 2, 2),
		"f32tenth":      FromSlice([]float32{0.1, 0.25, 100}),
		"int3d":         d.Arange(Int64, 30).Reshape(2, 3, 5),
		"big":           FromSlice([]float64{123456789, 0.5}),
		"wrap":          d.Arange(Float64, 40).Mul(1.1),
		"int3000":       d.Arange(Int32, 3000),
		"neg":           FromSlice([]float64{-1, 2}),
		"tiny":          FromSlice([]float64{1e-10, 1}),
		"f32neg":        FromSlice([]float32{-0.5, 0, 0.5}),
		"cube":          d.Arange(Float32, 1200).Reshape(10, 10, 12).Div(float32(3)),
		"i16":           FromSlice([]int16{-32768, 5, 32767, 0}, 2, 2),
		"u16":           FromSlice([]uint16{0, 65535, 7}),
		"u32":           FromSlice([]uint32{4294967295, 1, 0}),
		"u64":           FromSlice([]uint64{18446744073709551615, 9223372036854775808, 3}),
	}
	for _, c := range cases {
		a, ok := build[c.Key]
		if !ok {
			t.Errorf("no Go array for %q", c.Key)
			continue
		}
		if got := a.String(); got != c.Str {
			t.Errorf("%s:\n got: %q\nwant: %q", c.Key, got, c.Str)
		}
	}
	// fmt verbs: precision and repr.
	x := FromSlice([]float64{1.0 / 3, 2})
	if s := fmt.Sprintf("%.3v", x); s != "[0.333 2.   ]" {
		t.Errorf("%%.3v = %q", s)
	}
	if s := fmt.Sprintf("%#v", FromSlice([]int32{1, 2})); s != "array([1, 2], dtype=int32)" && s != "array([1 2], dtype=int32)" {
		t.Errorf("%%#v = %q", s)
	}
	old := SetPrintOptions(PrintOptions{Threshold: 5, EdgeItems: 1})
	defer SetPrintOptions(old)
	if s := d.Arange(Int32, 10).String(); s != "[0 ... 9]" {
		t.Errorf("threshold 5: %q", s)
	}
}

func TestImages(t *testing.T) {
	forEachBackend(t, func(t *testing.T, d *Maker) {
		img := image.NewNRGBA(image.Rect(10, 20, 14, 23)) // offset bounds, 4x3
		for y := 20; y < 23; y++ {
			for x := 10; x < 14; x++ {
				img.SetNRGBA(x, y, color.NRGBA{uint8(x), uint8(y), uint8(x * y), uint8(200 + x)})
			}
		}
		hwc := fromImageOn(d, img, HWC, 4)
		chw := fromImageOn(d, img, CHW, 3)
		if !sameShape(hwc.Shape(), []int{3, 4, 4}) || !sameShape(chw.Shape(), []int{3, 3, 4}) {
			t.Fatalf("shapes %v %v", hwc.Shape(), chw.Shape())
		}
		px := readHost(t, hwc.Slice(Idx(1), Idx(2))) // row 1 (y=21), column 2 (x=12)
		checkHost(t, "hwc pixel", px, []int{4}, []float64{12, 21, float64(uint8(12 * 21)), 212}, 0)
		checkHost(t, "chw green plane row", readHost(t, chw.Slice(Idx(1), Idx(2))), []int{4}, []float64{22, 22, 22, 22}, 0)
		back, err := hwc.Image(HWC)
		if err != nil {
			t.Fatal(err)
		}
		if c := back.At(2, 1).(color.NRGBA); c != img.NRGBAAt(12, 21) {
			t.Errorf("round trip pixel %v, want %v", c, img.NRGBAAt(12, 21))
		}
		rgb, err := chw.Image(CHW)
		if err != nil {
			t.Fatal(err)
		}
		if r, g, _, a := rgb.At(3, 2).RGBA(); r>>8 != 13 || g>>8 != 22 || a>>8 != 255 {
			t.Errorf("CHW RGB pixel %v", rgb.At(3, 2))
		}
		gray := fromImageOn(d, img, HWC, 1)
		want := color.GrayModel.Convert(img.At(11, 20)).(color.Gray).Y
		checkHost(t, "gray", readHost(t, gray.At(0, 1, 0)), []int{}, []float64{float64(want)}, 0)
		g2 := image.NewGray(image.Rect(0, 0, 3, 2))
		copy(g2.Pix, []uint8{1, 2, 3, 4, 5, 6})
		ga := fromImageOn(d, g2, CHW, 1)
		checkHost(t, "gray fast path", readHost(t, ga), []int{1, 2, 3}, []float64{1, 2, 3, 4, 5, 6}, 0)
		gi, err := ga.Squeeze().Image(HWC)
		if err != nil || gi.(*image.Gray).Pix[4] != 5 {
			t.Errorf("gray image back: %v", err)
		}
		if _, err := d.Ones(Float32, 2, 2).Image(HWC); !isKind(err, ErrDType) {
			t.Errorf("float image: %v", err)
		}
		if _, err := d.Ones(Uint8, 2, 2, 5).Image(HWC); !isKind(err, ErrShape) {
			t.Errorf("5 channels: %v", err)
		}
	})
}
