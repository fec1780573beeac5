package cuda

import (
	"bytes"
	"errors"
	"math"
	"strings"
	"testing"
	"unsafe"
)

// paramBytes returns the bytes parameter i points to.
func paramBytes(f *frame, i, size int) []byte {
	base := uintptr(unsafe.Pointer(&f.vals[0]))
	off := int(f.params[i] - base)
	return f.vals[off : off+size]
}

func paramOffset(f *frame, i int) int {
	return int(f.params[i] - uintptr(unsafe.Pointer(&f.vals[0])))
}

func TestPackWidthsAndAlignment(t *testing.T) {
	f, err := newFrame(frameSize)
	if err != nil {
		t.Fatal(err)
	}
	defer f.free()
	args := []any{
		int8(-2), int32(-7), uint8(200), float64(2.25), int16(-300), float32(1.5), uint16(65000),
		int64(-1 << 40), bool(true), uint32(4000000000), DevicePtr(0xdeadbeef00), uint64(1 << 63),
		complex64(1 + 2i), uintptr(0x1234), complex128(3 - 4i), bool(false),
	}
	if err := f.packArgs("k", args, nil); err != nil {
		t.Fatal(err)
	}
	// Each value sits at its natural alignment right after the previous one.
	want := []struct{ off, size int }{
		{0, 1}, {4, 4}, {8, 1}, {16, 8}, {24, 2}, {28, 4}, {32, 2}, {40, 8}, {48, 1}, {52, 4}, {56, 8}, {64, 8},
		{72, 8}, {80, 8}, {96, 16}, {112, 1},
	}
	if f.nparam != len(args) {
		t.Fatalf("%d parameters, want %d", f.nparam, len(args))
	}
	for i, w := range want {
		if got := paramOffset(f, i); got != w.off {
			t.Errorf("argument %d (%T) at offset %d, want %d", i, args[i], got, w.off)
		}
	}
	le := func(i, size int) uint64 {
		var v uint64
		for j, b := range paramBytes(f, i, size) {
			v |= uint64(b) << (8 * j)
		}
		return v
	}
	checks := []struct {
		i    int
		size int
		want uint64
	}{
		{0, 1, 0xfe}, {1, 4, 0xfffffff9}, {2, 1, 200}, {3, 8, math.Float64bits(2.25)}, {4, 2, 0xfed4},
		{5, 4, uint64(math.Float32bits(1.5))}, {6, 2, 65000}, {7, 8, 0xffffff0000000000}, {8, 1, 1}, {9, 4, 4000000000},
		{10, 8, 0xdeadbeef00}, {11, 8, 1 << 63}, {13, 8, 0x1234}, {15, 1, 0},
	}
	for _, c := range checks {
		if got := le(c.i, c.size); got != c.want {
			t.Errorf("argument %d (%T): bytes hold %#x, want %#x", c.i, args[c.i], got, c.want)
		}
	}
	if c := *(*complex64)(unsafe.Pointer(&paramBytes(f, 12, 8)[0])); c != 1+2i {
		t.Errorf("complex64 = %v", c)
	}
	if c := *(*complex128)(unsafe.Pointer(&paramBytes(f, 14, 16)[0])); c != 3-4i {
		t.Errorf("complex128 = %v", c)
	}
}

// affine mirrors the C struct { float scale; double shift; int n; } (24
// bytes, 8-aligned).
type affine struct {
	Scale float32
	Shift float64
	N     int32
}

func TestPackStructs(t *testing.T) {
	f, _ := newFrame(frameSize)
	defer f.free()
	v := affine{Scale: 1.25, Shift: -3.5, N: 77}
	raw, err := Value(v)
	if err != nil {
		t.Fatal(err)
	}
	if raw.Align != 8 || len(raw.Bytes) != 24 {
		t.Fatalf("Value: align %d, %d bytes", raw.Align, len(raw.Bytes))
	}
	vec := [4]float32{1, 2, 3, 4}
	if err := f.packArgs("k", []any{int8(1), v, raw, Raw{Bytes: []byte{9, 8, 7}, Align: 16}, vec}, nil); err != nil {
		t.Fatal(err)
	}
	if paramOffset(f, 1) != 8 || paramOffset(f, 2) != 32 || paramOffset(f, 3) != 64 || paramOffset(f, 4) != 68 {
		t.Errorf("offsets %d %d %d %d", paramOffset(f, 1), paramOffset(f, 2), paramOffset(f, 3), paramOffset(f, 4))
	}
	want := unsafe.Slice((*byte)(unsafe.Pointer(&v)), 24)
	for _, i := range []int{1, 2} {
		got := paramBytes(f, i, 24)
		if *(*affine)(unsafe.Pointer(&got[0])) != v {
			t.Errorf("struct argument %d: %v, want %v", i, got, want)
		}
	}
	if got := paramBytes(f, 3, 3); got[0] != 9 || got[2] != 7 {
		t.Errorf("raw bytes %v", got)
	}
	if got := *(*[4]float32)(unsafe.Pointer(&paramBytes(f, 4, 16)[0])); got != vec {
		t.Errorf("array argument %v", got)
	}
}

func TestPackRejects(t *testing.T) {
	f, _ := newFrame(frameSize)
	defer f.free()
	x := float32(1)
	cases := []struct {
		arg  any
		want string
	}{
		{int(3), "int32(x) for a C int"},
		{uint(3), "int32(x) for a C int"},
		{[]float32{1}, "Go slice"},
		{"text", "Go string"},
		{&x, "host pointer"},
		{nil, "nil argument"},
		{struct{ A int }{1}, ".A is Go int"},
		{struct{ P *int }{nil}, "host pointer"},
		{map[int]int{}, "no C counterpart"},
		{func() {}, "no C counterpart"},
		{make(chan int), "no C counterpart"},
		{Raw{Bytes: []byte{1}, Align: 3}, "power of two"},
		{Raw{}, "no bytes"},
		{(*Memory)(nil), "nil *Memory"},
		{In([]float32{1}), "use Function.Call"},
		{struct{}{}, "zero-size"},
	}
	for _, c := range cases {
		err := f.packArgs("kern", []any{int32(1), c.arg}, nil)
		if !errors.Is(err, ErrInvalidArg) || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "kern argument 1") {
			t.Errorf("%T: %v (want %q)", c.arg, err, c.want)
		}
	}
	if _, err := Value(struct{ N int }{}); !errors.Is(err, ErrInvalidArg) {
		t.Errorf("Value of a struct with int: %v", err)
	}
}

func TestPackFreedMemory(t *testing.T) {
	fn := FakeFunction(t, "k", 0)
	m := FakeMemory(fn, 1024)
	f, _ := newFrame(frameSize)
	defer f.free()
	if err := f.packArgs("k", []any{m}, nil); err != nil {
		t.Fatal(err)
	}
	if got := *(*uint64)(unsafe.Pointer(&paramBytes(f, 0, 8)[0])); got != uint64(m.Ptr()) {
		t.Fatalf("*Memory packed as %#x, want %#x", got, m.Ptr())
	}
	if err := m.Free(); err != nil {
		t.Fatal(err)
	}
	err := f.packArgs("k", []any{m}, nil)
	if !errors.Is(err, ErrFreed) || !errors.Is(err, ErrInvalidArg) {
		t.Fatalf("freed memory as an argument: %v", err)
	}
}

func TestPackManyArgs(t *testing.T) {
	fn := FakeFunction(t, "k", 0)
	args := make([]any, 600) // more than a pooled frame holds
	for i := range args {
		args[i] = int32(i)
	}
	fr, err := fn.pack(args, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer putFrame(fr)
	if fr.nparam != 600 || *(*int32)(unsafe.Pointer(&paramBytes(fr, 599, 4)[0])) != 599 {
		t.Fatalf("600 arguments packed as %d", fr.nparam)
	}
	big := Raw{Bytes: make([]byte, 5<<20)}
	if _, err := fn.pack([]any{big}, nil); !errors.Is(err, ErrInvalidArg) {
		t.Fatalf("5 MiB of arguments: %v", err)
	}
}

// TestPackAllocatesNothing is the guarantee behind cheap launches: packing
// the common argument types takes no heap allocation.
func TestPackAllocatesNothing(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts are not meaningful under the race detector")
	}
	fn := FakeFunction(t, "k", 0)
	m := FakeMemory(fn, 4096)
	n, x := int32(1<<20), float32(0.5)
	allocs := testing.AllocsPerRun(1000, func() {
		f := getFrame()
		if err := f.packArgs("k", []any{m, m.Ptr(), n, x, float64(x), int64(n), uint32(n), true}, nil); err != nil {
			t.Fatal(err)
		}
		putFrame(f)
	})
	if allocs != 0 {
		t.Fatalf("packing allocated %v times per call", allocs)
	}
}

func BenchmarkPackArgs(b *testing.B) {
	fn := FakeFunction(b, "k", 0)
	m := FakeMemory(fn, 4096)
	n, x := int32(1<<20), float32(0.5)
	b.ReportAllocs()
	for b.Loop() {
		f := getFrame()
		_ = f.packArgs("k", []any{m, m, m, n, x}, nil)
		putFrame(f)
	}
}

// packWords lays out 8-byte words exactly as packArgs lays out uint64s.
func TestPackWords(t *testing.T) {
	words := []uint64{1, 1 << 40, ^uint64(0), 0, 0x3ff0000000000000}
	args := make([]any, len(words))
	for i, w := range words {
		args[i] = w
	}
	f, _ := newFrame(frameSize)
	defer f.free()
	g, _ := newFrame(frameSize)
	defer g.free()
	if err := f.packArgs("k", args, nil); err != nil {
		t.Fatal(err)
	}
	if !g.packWords(words) {
		t.Fatal("five words do not fit a frame")
	}
	if f.nparam != g.nparam || f.nval != g.nval {
		t.Fatalf("packWords: %d parameters, %d bytes; packArgs: %d, %d", g.nparam, g.nval, f.nparam, f.nval)
	}
	for i := range words {
		if a, b := paramBytes(f, i, 8), paramBytes(g, i, 8); !bytes.Equal(a, b) {
			t.Fatalf("parameter %d: %x, want %x", i, b, a)
		}
	}
	if g.packWords(make([]uint64, 1000)) {
		t.Fatal("1000 words fit a frame")
	}
}

// LaunchWords checks what Launch checks, and allocates nothing.
func TestLaunchWords(t *testing.T) {
	fn := FakeFunction(t, "k", 0)
	m := FakeMemory(fn, 4096)
	cfg := Config{Grid: Dim3{X: 1}, Block: Dim3{X: 32}}
	if err := fn.LaunchWords(cfg, []uint64{uint64(m.Ptr()), 16}); err != nil {
		t.Fatal(err)
	}
	var ce *ConfigError
	if err := fn.LaunchWords(Config{Grid: Dim3{X: 1}, Block: Dim3{X: 4096}}, nil); !errors.As(err, &ce) {
		t.Fatalf("a block of 4096 threads: %v", err)
	}
	if err := fn.LaunchWords(cfg, make([]uint64, 1000)); !errors.Is(err, ErrInvalidArg) {
		t.Fatalf("1000 words: %v", err)
	}
	failing := FakeFunction(t, "k", 700)
	var le *LaunchError
	if err := failing.LaunchWords(cfg, []uint64{1}); !errors.As(err, &le) || !errors.Is(err, ErrIllegalAddress) {
		t.Fatalf("a failing launch: %v", err)
	}
	if raceEnabled {
		return
	}
	words := []uint64{uint64(m.Ptr()), uint64(m.Ptr()), 16}
	if n := testing.AllocsPerRun(1000, func() { _ = fn.LaunchWords(cfg, words) }); n != 0 {
		t.Fatalf("LaunchWords allocated %v times per launch", n)
	}
}
