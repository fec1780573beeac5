package safetensors_test

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gocu-dev/gocu"
	"github.com/gocu-dev/gocu/array"
	"github.com/gocu-dev/gocu/safetensors"
)

func TestMain(m *testing.M) {
	if os.Getenv("GOCU_DEVICE") == "" {
		array.SetDefault(gocu.MustOpen("cpu"))
	}
	os.Exit(m.Run())
}

func cpu() *gocu.Device { return gocu.MustOpen("cpu") }

// TestFixture reads the file testdata/make_fixture.py wrote by hand from
// the specification.
func TestFixture(t *testing.T) {
	f, err := safetensors.ReadFile("testdata/fixture.safetensors", cpu())
	if err != nil {
		t.Fatal(err)
	}
	if f.Metadata["format"] != "pt" || f.Metadata["note"] != "written by hand" {
		t.Fatalf("metadata %v", f.Metadata)
	}
	var names []string
	for _, x := range f.Tensors {
		names = append(names, x.Name)
	}
	if got := fmt.Sprint(names); got != "[bias steps count empty weight mask pixels]" {
		t.Fatalf("tensors in data order: %s", got)
	}
	check := func(name string, dt array.DType, shape []int, want string) {
		t.Helper()
		a := f.Get(name)
		if a == nil {
			t.Fatalf("no tensor %s", name)
		}
		if a.DType() != dt || fmt.Sprint(a.Shape()) != fmt.Sprint(shape) {
			t.Fatalf("%s: %v %v, want %v %v", name, a.DType(), a.Shape(), dt, shape)
		}
		var got string
		switch dt {
		case array.Float32:
			v, _ := a.Float32s()
			got = fmt.Sprint(v)
		case array.Float64:
			v, _ := a.Float64s()
			got = fmt.Sprint(v)
		case array.Int64:
			v, _ := a.Int64s()
			got = fmt.Sprint(v)
		case array.Int32:
			v, _ := a.Int32s()
			got = fmt.Sprint(v)
		case array.Uint8:
			v, _ := a.Uint8s()
			got = fmt.Sprint(v)
		case array.Bool:
			v, _ := a.Bools()
			got = fmt.Sprint(v)
		}
		if got != want {
			t.Fatalf("%s = %s, want %s", name, got, want)
		}
	}
	check("weight", array.Float32, []int{2, 3}, "[0.5 -1.25 3 0.001 -0 65504]")
	check("bias", array.Float64, []int{3}, fmt.Sprint([]float64{1.0 / 3, -2.5, 1e300}))
	check("steps", array.Int64, []int{2, 2}, fmt.Sprint([]int64{1, -2, 1 << 40, -(1 << 62)}))
	check("count", array.Int32, []int{}, "[-7]")
	check("pixels", array.Uint8, []int{4}, "[0 1 128 255]")
	check("mask", array.Bool, []int{3}, "[true false true]")
	check("empty", array.Float32, []int{0, 4}, "[]")
}

func TestRoundTrip(t *testing.T) {
	rng := array.NewRNG(1)
	in := []safetensors.Tensor{
		{Name: "b.w", Array: rng.Normal(array.Float32, 0, 1, 3, 5)},
		{Name: "a \"quoted\" ünïcode", Array: rng.Normal(array.Float64, 0, 1, 7)},
		{Name: "ids", Array: array.FromSlice([]int64{3, 1, 4})},
		{Name: "scalar", Array: array.Full(array.Int32, 42)},
		{Name: "flags", Array: array.FromSlice([]bool{true, false})},
		{Name: "img", Array: array.FromSlice([]uint8{9, 8, 7, 6}, 2, 2)},
		{Name: "view", Array: rng.Normal(array.Float32, 0, 1, 4, 3).T()}, // written row-major
	}
	var buf bytes.Buffer
	if err := safetensors.Write(&buf, in, map[string]string{"epoch": "5"}); err != nil {
		t.Fatal(err)
	}
	hl := binary.LittleEndian.Uint64(buf.Bytes())
	if hl%8 != 0 {
		t.Fatalf("header length %d is not a multiple of 8", hl)
	}
	out, err := safetensors.Read(bytes.NewReader(buf.Bytes()), nil)
	if err != nil {
		t.Fatal(err)
	}
	if out.Metadata["epoch"] != "5" || len(out.Tensors) != len(in) {
		t.Fatalf("metadata %v, %d tensors", out.Metadata, len(out.Tensors))
	}
	for i, x := range in {
		got := out.Tensors[i]
		if got.Name != x.Name {
			t.Fatalf("tensor %d is %q, want %q", i, got.Name, x.Name)
		}
		eq := got.Array.Eq(x.Array).All()
		if ok, err := array.ItemOf[bool](eq); err != nil || !ok || got.Array.DType() != x.Array.DType() || fmt.Sprint(got.Array.Shape()) != fmt.Sprint(x.Array.Shape()) {
			t.Fatalf("%s: %v, want %v (%v)", x.Name, got.Array, x.Array, err)
		}
	}
	// Files: written atomically, read back.
	path := filepath.Join(t.TempDir(), "m.safetensors")
	if err := safetensors.WriteFile(path, in[:2], nil); err != nil {
		t.Fatal(err)
	}
	if f, err := safetensors.ReadFile(path, nil); err != nil || len(f.Tensors) != 2 {
		t.Fatalf("ReadFile: %v", err)
	}
}

func TestWriteErrors(t *testing.T) {
	a := array.Zeros(array.Float32, 2)
	for _, ts := range [][]safetensors.Tensor{
		{{Name: "x", Array: a}, {Name: "x", Array: a}},
		{{Name: "", Array: a}},
		{{Name: "__metadata__", Array: a}},
		{{Name: "bad", Array: a.Add(array.Zeros(array.Float32, 3))}},
		{{Name: "x\xff", Array: a}},
	} {
		if err := safetensors.Write(&bytes.Buffer{}, ts, nil); err == nil {
			t.Fatalf("Write(%v) succeeded", ts[0].Name)
		}
	}
	// Metadata must be UTF-8 too: the reference refuses other headers.
	err := safetensors.Write(&bytes.Buffer{}, []safetensors.Tensor{{Name: "x", Array: a}}, map[string]string{"k": "\xc3("})
	if err == nil || !strings.Contains(err.Error(), "not valid UTF-8") {
		t.Fatalf("Write of metadata that is not UTF-8: %v", err)
	}
}

// file builds a file from a header string and data.
func file(header string, data []byte) []byte {
	b := binary.LittleEndian.AppendUint64(nil, uint64(len(header)))
	return append(append(b, header...), data...)
}

func TestCorrupt(t *testing.T) {
	good := file(`{"x":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}}`, make([]byte, 8))
	if _, err := safetensors.Read(bytes.NewReader(good), nil); err != nil {
		t.Fatalf("good file: %v", err)
	}
	huge := binary.LittleEndian.AppendUint64(nil, 1<<40)
	cases := map[string]struct {
		data []byte
		want string
	}{
		"empty":            {nil, "shorter than the 8-byte header length"},
		"short length":     {[]byte{1, 2, 3}, "shorter than the 8-byte header length"},
		"huge header":      {huge, "exceeds"},
		"truncated header": {good[:20], "truncated header"},
		"truncated data":   {good[:len(good)-3], "truncated data"},
		"trailing bytes":   {append(append([]byte{}, good...), 0), "after the last tensor"},
		"not an object":    {file(`[1,2]   `, nil), "not a JSON object"},
		"bad JSON":         {file(`{"x":{"dtype":"F32",`, nil), "unexpected EOF"},
		"bad key":          {file(`{5:1}`, nil), "header JSON"},
		"unknown dtype":    {file(`{"x":{"dtype":"F33","shape":[2],"data_offsets":[0,8]}}`, make([]byte, 8)), "unknown dtype"},
		"missing field":    {file(`{"x":{"dtype":"F32","shape":[2]}}`, make([]byte, 8)), `lacks "data_offsets"`},
		"negative dim":     {file(`{"x":{"dtype":"F32","shape":[-2],"data_offsets":[0,8]}}`, make([]byte, 8)), "negative dimension"},
		"size mismatch":    {file(`{"x":{"dtype":"F32","shape":[3],"data_offsets":[0,8]}}`, make([]byte, 8)), "needs 12"},
		"reversed offsets": {file(`{"x":{"dtype":"F32","shape":[0],"data_offsets":[8,0]}}`, nil), "bad data_offsets"},
		"hole":             {file(`{"x":{"dtype":"F32","shape":[2],"data_offsets":[4,12]}}`, make([]byte, 12)), "hole"},
		"overlap": {file(`{"x":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},"y":{"dtype":"F32","shape":[2],"data_offsets":[4,12]}}`, make([]byte, 12)),
			"overlaps"},
		"duplicate":       {file(`{"x":{"dtype":"U8","shape":[1],"data_offsets":[0,1]},"x":{"dtype":"U8","shape":[1],"data_offsets":[1,2]}}`, make([]byte, 2)), "twice"},
		"forged size":     {file(`{"x":{"dtype":"F64","shape":[1000000000000],"data_offsets":[0,8000000000000]}}`, nil), "truncated data"},
		"overflow":        {file(`{"x":{"dtype":"F64","shape":[4294967296,4294967296],"data_offsets":[0,8]}}`, nil), "too large"},
		"bad metadata":    {file(`{"__metadata__":{"a":1}}`, nil), "__metadata__"},
		"garbage after":   {file(`{} x`, nil), "after the header"},
		"tensor not obj":  {file(`{"x":5}`, nil), "not a JSON object"},
		"float offsets":   {file(`{"x":{"dtype":"U8","shape":[1],"data_offsets":[0.5,1]}}`, make([]byte, 1)), "bad \"data_offsets\""},
		"unsupported C64": {file(`{"h":{"dtype":"C64","shape":[2],"data_offsets":[0,16]}}`, make([]byte, 16)), "does not have"},
		"invalid UTF-8 name": {file("{\"x\xff\":{\"dtype\":\"U8\",\"shape\":[1],\"data_offsets\":[0,1]}}", make([]byte, 1)),
			"the header is not valid UTF-8 (at byte 3)"},
		"invalid UTF-8 metadata": {file("{\"__metadata__\":{\"a\":\"\xc3(\"}}", nil), "the header is not valid UTF-8 (at byte 22)"},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			_, err := safetensors.Read(bytes.NewReader(c.data), nil)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error %v, want one containing %q", err, c.want)
			}
			if name != "unsupported C64" && !errors.Is(err, safetensors.ErrFormat) {
				t.Fatalf("%v does not wrap ErrFormat", err)
			}
		})
	}
	// A file shorter than 8 bytes names itself.
	path := filepath.Join(t.TempDir(), "short.safetensors")
	if err := os.WriteFile(path, []byte{1}, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := safetensors.ReadFile(path, nil); err == nil || !strings.Contains(err.Error(), path) {
		t.Fatalf("short file: %v", err)
	}
	if _, err := safetensors.ReadFile(filepath.Join(t.TempDir(), "missing"), nil); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("missing file: %v", err)
	}
}

// halfFile builds, byte by byte from the IEEE 754 and bfloat16 encodings,
// a file of the low-precision dtypes of published checkpoints, laid out
// as Write lays it out; it returns the file and each tensor's values.
func halfFile() ([]byte, map[string][]float64) {
	u16 := func(v ...uint16) []byte {
		var b []byte
		for _, x := range v {
			b = binary.LittleEndian.AppendUint16(b, x)
		}
		return b
	}
	var data []byte
	// F16: 1, -2, 65504 (largest), 2^-14 (smallest normal), 2^-24
	// (smallest subnormal), -Inf.
	data = append(data, u16(0x3c00, 0xc000, 0x7bff, 0x0400, 0x0001, 0xfc00)...)
	// BF16: 1, -2, 3.140625, 2^-133 (subnormal), +Inf, -0.
	data = append(data, u16(0x3f80, 0xc000, 0x4049, 0x0001, 0x7f80, 0x8000)...)
	// I8: -128, -1, 0, 127.
	data = append(data, 0x80, 0xff, 0x00, 0x7f)
	// F8_E4M3 (e4m3fn): 1, -448 (largest), 2^-9 (smallest subnormal), 0.
	data = append(data, 0x38, 0xfe, 0x01, 0x00)
	// F8_E5M2: 1, -57344 (largest), +Inf, 2^-16 (smallest subnormal).
	data = append(data, 0x3c, 0xfb, 0x7c, 0x01)
	hdr := `{"h":{"dtype":"F16","shape":[2,3],"data_offsets":[0,12]},` +
		`"b":{"dtype":"BF16","shape":[6],"data_offsets":[12,24]},` +
		`"i":{"dtype":"I8","shape":[4],"data_offsets":[24,28]},` +
		`"e4":{"dtype":"F8_E4M3","shape":[2,2],"data_offsets":[28,32]},` +
		`"e5":{"dtype":"F8_E5M2","shape":[4],"data_offsets":[32,36]}}`
	for len(hdr)%8 != 0 {
		hdr += " "
	}
	want := map[string][]float64{
		"h":  {1, -2, 65504, math.Ldexp(1, -14), math.Ldexp(1, -24), math.Inf(-1)},
		"b":  {1, -2, 3.140625, math.Ldexp(1, -133), math.Inf(1), math.Copysign(0, -1)},
		"i":  {-128, -1, 0, 127},
		"e4": {1, -448, math.Ldexp(1, -9), 0},
		"e5": {1, -57344, math.Inf(1), math.Ldexp(1, -16)},
	}
	return file(hdr, data), want
}

// TestHalf reads the low-precision dtypes from bytes built by hand, checks
// the values, and writes them back to the very same bytes.
func TestHalf(t *testing.T) {
	in, want := halfFile()
	f, err := safetensors.Read(bytes.NewReader(in), cpu())
	if err != nil {
		t.Fatal(err)
	}
	dts := map[string]array.DType{"h": array.Float16, "b": array.BFloat16, "i": array.Int8,
		"e4": array.Float8E4M3, "e5": array.Float8E5M2}
	for name, w := range want {
		a := f.Get(name)
		if a == nil || a.DType() != dts[name] {
			t.Fatalf("%s: %v, want dtype %v", name, a, dts[name])
		}
		got, err := a.AsType(array.Float64).Float64s()
		if err != nil {
			t.Fatal(err)
		}
		for i := range w {
			if got[i] != w[i] || math.Signbit(got[i]) != math.Signbit(w[i]) {
				t.Fatalf("%s = %v, want %v", name, got, w)
			}
		}
	}
	if s := fmt.Sprint(f.Get("h").Shape()); s != "[2 3]" {
		t.Fatalf("h has shape %s", s)
	}
	var out bytes.Buffer
	if err := safetensors.Write(&out, f.Tensors, nil); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(out.Bytes(), in) {
		t.Fatalf("written back:\n%q\nwant\n%q", out.Bytes(), in)
	}
}

// TestHalfRoundTrip writes float16 and bfloat16 arrays made from random
// values and reads back the same bits.
func TestHalfRoundTrip(t *testing.T) {
	rng := array.NewRNG(3)
	x := rng.Normal(array.Float32, 0, 100, 5, 7)
	in := []safetensors.Tensor{
		{Name: "h", Array: x.AsType(array.Float16)},
		{Name: "b", Array: x.AsType(array.BFloat16).T()},
	}
	var buf bytes.Buffer
	if err := safetensors.Write(&buf, in, nil); err != nil {
		t.Fatal(err)
	}
	out, err := safetensors.Read(&buf, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i, w := range in {
		got := out.Tensors[i].Array
		a, err1 := w.Array.AsType(array.Float64).Float64s()
		b, err2 := got.AsType(array.Float64).Float64s()
		if err1 != nil || err2 != nil || got.DType() != w.Array.DType() || fmt.Sprint(got.Shape()) != fmt.Sprint(w.Array.Shape()) {
			t.Fatalf("%s: %v %v, %v %v", w.Name, got, w.Array, err1, err2)
		}
		for j := range a {
			if a[j] != b[j] {
				t.Fatalf("%s[%d] = %v, want %v", w.Name, j, b[j], a[j])
			}
		}
	}
}

// FuzzRead feeds the reader arbitrary bytes: it must return a file or an
// error, never panic, hang or allocate what a forged header claims; what
// it accepts must write back to a file that reads the same.
func FuzzRead(f *testing.F) {
	good, err := os.ReadFile("testdata/fixture.safetensors")
	if err != nil {
		f.Fatal(err)
	}
	f.Add(good)
	f.Add(file(`{"x":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}}`, make([]byte, 8)))
	f.Add(file(`{}`, nil))
	half, _ := halfFile()
	f.Add(half)
	var eight bytes.Buffer
	var ts []safetensors.Tensor
	for _, e := range eightBit() {
		ts = append(ts, safetensors.Tensor{Name: e.name, Array: e.a})
	}
	if err := safetensors.Write(&eight, ts, map[string]string{"format": "pt"}); err != nil {
		f.Fatal(err)
	}
	f.Add(eight.Bytes())
	f.Add(file("{\"x\xff\":{\"dtype\":\"U8\",\"shape\":[1],\"data_offsets\":[0,1]}}", make([]byte, 1)))
	f.Fuzz(func(t *testing.T, data []byte) {
		got, err := safetensors.Read(bytes.NewReader(data), cpu())
		if err != nil {
			return
		}
		var buf bytes.Buffer
		if err := safetensors.Write(&buf, got.Tensors, got.Metadata); err != nil {
			t.Fatalf("accepted file does not write back: %v", err)
		}
		written := bytes.Clone(buf.Bytes())
		again, err := safetensors.Read(&buf, cpu())
		if err != nil {
			t.Fatalf("written file does not read back: %v", err)
		}
		// Writing what was read back gives the same bytes: every bit of
		// every dtype (NaN payloads included) survives.
		var twice bytes.Buffer
		if err := safetensors.Write(&twice, again.Tensors, again.Metadata); err != nil {
			t.Fatalf("a file read back does not write: %v", err)
		}
		if !bytes.Equal(twice.Bytes(), written) {
			t.Fatalf("written twice, the files differ:\n%q\n%q", written, twice.Bytes())
		}
		if len(again.Tensors) != len(got.Tensors) {
			t.Fatalf("%d tensors, then %d", len(got.Tensors), len(again.Tensors))
		}
		for i, x := range got.Tensors {
			y := again.Tensors[i].Array
			a, _ := x.Array.AsType(array.Float64).Float64s()
			b, _ := y.AsType(array.Float64).Float64s()
			for j := range a {
				if a[j] != b[j] && !(math.IsNaN(a[j]) && math.IsNaN(b[j])) {
					t.Fatalf("tensor %q changed: %v, then %v", x.Name, a, b)
				}
			}
		}
	})
}
