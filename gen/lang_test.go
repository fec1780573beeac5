package gen

import (
	"bytes"
	"errors"
	"reflect"
	"runtime"
	"strings"
	"testing"

	"github.com/gocu-dev/gocu"
	"github.com/gocu-dev/gocu/gen/testdata/kernels/lang"
	"github.com/gocu-dev/gocu/kernel"
	"github.com/gocu-dev/gocu/meta"
	"github.com/gocu-dev/gocu/sim"
)

// The kernels of testdata/kernels/lang use the Go a kernel author writes
// first: generics, constant tables, pointer-receiver methods on shared
// tiles, printing. These tests run them as Go, as their checked twins, as
// host C++ and through their generated launchers on the simulator, and
// check them against plain Go references; gpu_test.go runs them on a GPU.

// langCase is a launch of a lang kernel with a reference check.
type langCase struct {
	name        string
	fn          any
	grid, block kernel.Dim3
	args        []any
	hostOK      bool // barrier-free: runs as host C++ too
	check       func(t *testing.T, out []any)
}

func langCases(t *testing.T) []langCase {
	r := newRand(t)
	const n = 1000
	x32, y32 := randF32(r, n), randF32(r, n)
	x64, y64 := make([]float64, n), make([]float64, n)
	for i := range x64 {
		x64[i], y64[i] = float64(x32[i]), float64(y32[i])
	}
	ints32 := make([]int32, n)
	ints64 := make([]int64, n)
	for i := range ints32 {
		ints32[i] = r.Int32N(2000) - 1000
		ints64[i] = int64(ints32[i]) << 20
	}
	const w, h = 37, 23
	img := make([]int32, w*h)
	for i := range img {
		img[i] = r.Int32N(256)
	}
	const m = 45 // not a multiple of the tile
	mat := randF32(r, m*m)
	return []langCase{
		{name: "Axpy[float32]", fn: lang.Axpy[float32], grid: dim(4, 1, 1), block: dim(256, 1, 1), hostOK: true,
			args: []any{float32(1.5), x32, y32},
			check: func(t *testing.T, out []any) {
				got := out[2].([]float32)
				for i := range got {
					if want := 1.5*x32[i] + y32[i]; got[i] != want {
						t.Fatalf("y[%d] = %v, want %v", i, got[i], want)
					}
				}
			}},
		{name: "Axpy[float64]", fn: lang.Axpy[float64], grid: dim(4, 1, 1), block: dim(256, 1, 1), hostOK: true,
			args: []any{-0.25, x64, y64},
			check: func(t *testing.T, out []any) {
				got := out[2].([]float64)
				for i := range got {
					if want := -0.25*x64[i] + y64[i]; got[i] != want {
						t.Fatalf("y[%d] = %v, want %v", i, got[i], want)
					}
				}
			}},
		{name: "Clamp[int32]", fn: lang.Clamp[int32], grid: dim(2, 1, 1), block: dim(128, 1, 1), hostOK: true,
			args: []any{ints32, int32(-300), int32(300)},
			check: func(t *testing.T, out []any) {
				for i, v := range out[0].([]int32) {
					if want := min(max(ints32[i], -300), 300); v != want { // T(1)/2 == 0
						t.Fatalf("x[%d] = %d, want %d", i, v, want)
					}
				}
			}},
		{name: "Clamp[int64]", fn: lang.Clamp[int64], grid: dim(2, 1, 1), block: dim(128, 1, 1), hostOK: true,
			args: []any{ints64, int64(-300 << 20), int64(300 << 20)},
			check: func(t *testing.T, out []any) {
				for i, v := range out[0].([]int64) {
					if want := min(max(ints64[i], -300<<20), 300<<20); v != want {
						t.Fatalf("x[%d] = %d, want %d", i, v, want)
					}
				}
			}},
		{name: "Clamp[float32]", fn: lang.Clamp[float32], grid: dim(2, 1, 1), block: dim(128, 1, 1), hostOK: true,
			args: []any{x32, float32(-0.5), float32(0.25)},
			check: func(t *testing.T, out []any) {
				for i, v := range out[0].([]float32) {
					if want := min(max(x32[i], -0.5), 0.25) + 0.5; v != want { // T(1)/2 == 0.5
						t.Fatalf("x[%d] = %v, want %v", i, v, want)
					}
				}
			}},
		{name: "Scale[float32, int32]", fn: lang.Scale[float32, int32], grid: dim(4, 1, 1), block: dim(256, 1, 1), hostOK: true,
			args: []any{x32, int32(3)},
			check: func(t *testing.T, out []any) {
				for i, v := range out[0].([]float32) {
					s := x32[i] * 3
					if want := s + 0.5*(s*2-s); v != want {
						t.Fatalf("x[%d] = %v, want %v", i, v, want)
					}
				}
			}},
		{name: "Scale[float64, int64]", fn: lang.Scale[float64, int64], grid: dim(4, 1, 1), block: dim(256, 1, 1), hostOK: true,
			args: []any{x64, int64(-7)},
			check: func(t *testing.T, out []any) {
				for i, v := range out[0].([]float64) {
					s := x64[i] * -7
					if want := s + 0.5*(s*2-s); v != want {
						t.Fatalf("x[%d] = %v, want %v", i, v, want)
					}
				}
			}},
		{name: "Conv1D", fn: lang.Conv1D, grid: dim(4, 1, 1), block: dim(256, 1, 1), hostOK: true,
			args: []any{x32, poisonF32(n)},
			check: func(t *testing.T, out []any) {
				mask := []float64{0.0625, 0.25, 0.375, 0.25, 0.0625}
				want := make([]float64, n)
				for i := range want {
					for k, m := range mask {
						if j := i + k - 2; j >= 0 && j < n {
							want[i] += m * float64(x32[j])
						}
					}
				}
				closeRel(t, "y", out[1].([]float32), want, 1e-6)
			}},
		{name: "Conv2D", fn: lang.Conv2D, grid: dim((w+15)/16, (h+15)/16, 1), block: dim(16, 16, 1), hostOK: true,
			args: []any{img, make([]int32, w*h), int32(w), int32(h)},
			check: func(t *testing.T, out []any) {
				got := out[1].([]int32)
				mask := [3][3]int32{{1, 2, 1}, {2, 4, 2}, {1, 2, 1}}
				for y := range h {
					for x := range w {
						var want int32
						for dy := range 3 {
							for dx := range 3 {
								cx, cy := min(max(x+dx-1, 0), w-1), min(max(y+dy-1, 0), h-1)
								want += mask[dy][dx] * img[cy*w+cx]
							}
						}
						if got[y*w+x] != want {
							t.Fatalf("out[%d][%d] = %d, want %d", y, x, got[y*w+x], want)
						}
					}
				}
			}},
		{name: "BlockMax[int32]", fn: lang.BlockMax[int32], grid: dim(8, 1, 1), block: dim(128, 1, 1),
			args: []any{ints32, make([]int32, 8)},
			check: func(t *testing.T, out []any) {
				for b, v := range out[1].([]int32) {
					want := slicesMax(ints32[b*128 : min((b+1)*128, n)])
					if b == 7 {
						want = max(want, ints32[0]) // the padding of the last block
					}
					if v != want {
						t.Fatalf("out[%d] = %d, want %d", b, v, want)
					}
				}
			}},
		{name: "BlockMax[float32]", fn: lang.BlockMax[float32], grid: dim(8, 1, 1), block: dim(128, 1, 1),
			args: []any{x32, poisonF32(8)},
			check: func(t *testing.T, out []any) {
				for b, v := range out[1].([]float32) {
					want := slicesMax(x32[b*128 : min((b+1)*128, n)])
					if b == 7 {
						want = max(want, x32[0]) // the padding of the last block
					}
					if v != want {
						t.Fatalf("out[%d] = %v, want %v", b, v, want)
					}
				}
			}},
		{name: "Transpose", fn: lang.Transpose, grid: dim((m+15)/16, (m+15)/16, 1), block: dim(16, 16, 1),
			args: []any{mat, poisonF32(m * m), int32(m)},
			check: func(t *testing.T, out []any) {
				got := out[1].([]float32)
				for i := range m {
					for j := range m {
						if got[i*m+j] != mat[j*m+i] {
							t.Fatalf("b[%d][%d] = %v, want a[%d][%d] = %v", i, j, got[i*m+j], j, i, mat[j*m+i])
						}
					}
				}
			}},
	}
}

// TestLangKernels runs the lang kernels and their checked twins on the
// test executor and checks them against Go references.
func TestLangKernels(t *testing.T) {
	for _, c := range langCases(t) {
		t.Run(c.name, func(t *testing.T) {
			out, _ := both(t, c.fn, c.grid, c.block, 0, c.args...)
			c.check(t, out)
		})
	}
}

// TestLangHost runs the barrier-free lang kernels as host C++ and requires
// Go's results bit for bit: the instances of the generic kernels and the
// constant tables translate with Go's meaning.
func TestLangHost(t *testing.T) {
	for _, c := range langCases(t) {
		if !c.hostOK {
			continue
		}
		t.Run(c.name, func(t *testing.T) {
			goArgs := cloneArgs(c.args)
			launch(t, c.fn, c.grid, c.block, 0, goArgs...)
			for _, debug := range []bool{false, true} {
				host, errBuf := hostRun(t, c.fn, c.grid, c.block, debug, cloneArgs(c.args)...)
				for i := range goArgs {
					if host[i] != nil && !reflect.DeepEqual(bitsOf(host[i]), bitsOf(goArgs[i])) {
						t.Fatalf("debug=%v: argument %d differs between Go and C++", debug, i)
					}
				}
				if debug && errBuf[meta.ErrCode] != 0 {
					t.Fatalf("debug build reported error %v", meta.ErrorCode(errBuf[meta.ErrCode]))
				}
			}
		})
	}
}

// debugArgs are arguments of lang.Debug whose printed floats read the same
// in Go and in C (short binary fractions).
func debugArgs() (kernel.Dim3, kernel.Dim3, []any) {
	x := make([]float32, 300)
	for i := range x {
		x[i] = float32(i%40)/8 - 1
	}
	return dim(3, 1, 1), dim(128, 1, 1), []any{x, int64(-1) << 40}
}

// stripPrefixes removes the block and thread prefixes of the simulator's
// output.
func stripPrefixes(s string) string {
	var b strings.Builder
	for line := range strings.Lines(s) {
		if _, rest, ok := strings.Cut(line, "): "); ok && strings.HasPrefix(line, "block (") {
			line = rest
		}
		b.WriteString(line)
	}
	return b.String()
}

// TestLangPrintf runs lang.Debug on the simulator, which orders the
// output by block and thread and prefixes it, and as host C++, whose
// printf runs the threads in the same order: the translated formats must
// print what Go prints.
func TestLangPrintf(t *testing.T) {
	grid, block, args := debugArgs()
	var out bytes.Buffer
	cfg := sim.Config{Grid: grid, Block: block, Stdout: &out}
	if err := sim.Run(cfg, lang.Debug, cloneArgs(args)...); err != nil {
		t.Fatal(err)
	}
	want := "block (0,0,0) thread (7,0,0): i=7 n=-1099511627776 x=-0.125 ok=false\n" +
		"block (0,0,0) thread (7,0,0): -1.2e-01|7   |7|-7|7|H|18446742974197923840%\n" +
		"block (0,0,0) thread (7,0,0): block 0 sum 0.875 true\n" +
		"block (0,0,0) thread (7,0,0): 7!-1099511627776\n" +
		"block (0,0,0) thread (7,0,0): thread 7 of block 0: \"done\"\t100%\n" +
		"block (0,0,0) thread (107,0,0): i=107 n=-1099511627776 x=2.375 ok=true\n"
	if !strings.HasPrefix(out.String(), want) {
		t.Fatalf("the simulator printed\n%s\nwant it to start\n%s", out.String(), want)
	}
	if n := strings.Count(out.String(), "\n"); n != 3*5 {
		t.Errorf("%d lines, want 15 (5 from each of threads 7, 107 and 207)", n)
	}
	if !strings.Contains(out.String(), "block (1,0,0) thread (79,0,0): i=207 ") {
		t.Errorf("thread 207 is block 1's thread 79:\n%s", out.String())
	}
	// The same through the default mode of Run, where fmt.Printf would go
	// straight to standard output: Run takes the twin (meta.Kernel.Prints).
	_, km, _ := meta.Lookup(lang.Debug)
	if !km.Prints {
		t.Error("meta.Kernel.Prints is not set for a kernel that calls fmt.Printf")
	}
	m, _, _ := meta.Lookup(lang.Debug)
	_, _, host := hostRunOutput(t, m.Source, km, grid, block, false, cloneArgs(args)...)
	if got := stripPrefixes(out.String()); host != got {
		t.Errorf("C's printf prints\n%s\nGo prints\n%s", host, got)
	}
}

// TestLangLaunchers launches the lang kernels through their generated
// launchers on the simulator: a generic launcher with each type argument,
// a named type and a type outside the directive's instances.
func TestLangLaunchers(t *testing.T) {
	d, err := gocu.Open("sim")
	if err != nil {
		t.Fatal(err)
	}
	checkLangLaunchers(t, d)
}

// checkLangLaunchers is TestLangLaunchers on device d (the simulator or a
// GPU).
func checkLangLaunchers(t *testing.T, d *gocu.Device) {
	t.Helper()
	const n = 1000
	x := make([]float32, n)
	for i := range x {
		x[i] = float32(i) / 4
	}
	y := make([]float32, n)
	t.Run("Axpy[float32]", func(t *testing.T) {
		bx, by := mustBuffer(t, d, x), mustBuffer(t, d, y)
		if err := lang.LaunchAxpy(d, gocu.Auto(n), float32(2), bx, by); err != nil {
			t.Fatal(err)
		}
		got := mustHost(t, by)
		for i := range got {
			if got[i] != 2*x[i] {
				t.Fatalf("y[%d] = %v, want %v", i, got[i], 2*x[i])
			}
		}
	})
	if d.Kind() == gocu.CUDA {
		t.Run("allocs", func(t *testing.T) {
			bx, by := mustBuffer(t, d, x), mustBuffer(t, d, y)
			cfg := gocu.Auto(n)
			if err := lang.LaunchAxpy(d, cfg, float32(1), bx, by); err != nil {
				t.Fatal(err)
			}
			got := testing.AllocsPerRun(100, func() {
				if err := lang.LaunchAxpy(d, cfg, float32(1), bx, by); err != nil {
					t.Fatal(err)
				}
			})
			if err := d.Synchronize(); err != nil {
				t.Fatal(err)
			}
			if got != 0 {
				t.Errorf("a GPU launch through a generic launcher allocates %v times, want 0 (as LaunchGray)", got)
			}
		})
	}
	t.Run("Axpy[float64]", func(t *testing.T) {
		x64, y64 := make([]float64, n), make([]float64, n)
		for i := range x64 {
			x64[i], y64[i] = float64(x[i]), 1
		}
		bx, by := mustBuffer(t, d, x64), mustBuffer(t, d, y64)
		if err := lang.LaunchAxpy(d, gocu.Auto(n), -0.5, bx, by); err != nil {
			t.Fatal(err)
		}
		got := mustHost(t, by)
		for i := range got {
			if want := -0.5*x64[i] + 1; got[i] != want {
				t.Fatalf("y[%d] = %v, want %v", i, got[i], want)
			}
		}
	})
	t.Run("Axpy[Celsius]", func(t *testing.T) {
		c, cy := make([]lang.Celsius, n), make([]lang.Celsius, n)
		for i := range c {
			c[i] = lang.Celsius(x[i])
		}
		bx, by := mustBuffer(t, d, c), mustBuffer(t, d, cy)
		if err := lang.LaunchAxpy(d, gocu.Auto(n), lang.Celsius(3), bx, by); err != nil {
			t.Fatal(err)
		}
		got := mustHost(t, by)
		for i := range got {
			if got[i] != 3*c[i] {
				t.Fatalf("y[%d] = %v, want %v", i, got[i], 3*c[i])
			}
		}
	})
	t.Run("Scale[float64, int64]", func(t *testing.T) {
		x64 := make([]float64, n)
		for i := range x64 {
			x64[i] = float64(x[i])
		}
		bx := mustBuffer(t, d, x64)
		if err := lang.LaunchScale(d, gocu.Auto(n), bx, int64(4)); err != nil {
			t.Fatal(err)
		}
		got := mustHost(t, bx)
		for i := range got {
			s := x64[i] * 4
			if want := s + 0.5*(s*2-s); got[i] != want {
				t.Fatalf("x[%d] = %v, want %v", i, got[i], want)
			}
		}
	})
	t.Run("Scale[float32, int64]", func(t *testing.T) {
		bx := mustBuffer(t, d, x)
		err := lang.LaunchScale(d, gocu.Auto(n), bx, int64(4))
		want := "gocu: launch of Scale: no compiled instance for float32, int64; gocu gen compiled Scale[float32, int32], Scale[float64, int64]"
		if err == nil || !strings.HasPrefix(err.Error(), want) {
			t.Fatalf("a launch without an instance: %v, want %q...", err, want)
		}
	})
	t.Run("Transpose", func(t *testing.T) {
		const m = 45
		a := make([]float32, m*m)
		for i := range a {
			a[i] = float32(i)
		}
		ba, bb := mustBuffer(t, d, a), mustBuffer(t, d, make([]float32, m*m))
		cfg := gocu.Config{Grid: gocu.Dim3{X: 3, Y: 3, Z: 1}, Block: gocu.Dim3{X: 16, Y: 16, Z: 1}}
		if err := lang.LaunchTranspose(d, cfg, ba, bb, m); err != nil {
			t.Fatal(err)
		}
		got := mustHost(t, bb)
		for i := range m {
			for j := range m {
				if got[i*m+j] != a[j*m+i] {
					t.Fatalf("b[%d][%d] = %v, want %v", i, j, got[i*m+j], a[j*m+i])
				}
			}
		}
	})
}

func slicesMax[T int32 | float32](s []T) T {
	m := s[0]
	for _, v := range s {
		m = max(m, v)
	}
	return m
}

func mustBuffer[T any](t *testing.T, d *gocu.Device, s []T) *gocu.Buffer[T] {
	t.Helper()
	b, err := gocu.FromSlice(d, s)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Free() })
	return b
}

func mustHost[T any](t *testing.T, b *gocu.Buffer[T]) []T {
	t.Helper()
	s, err := b.ToSlice()
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestLangSimChecked runs Transpose in the simulator's checked mode (the
// tile's methods, race-checked) and instances of a generic kernel that
// gocu gen did not write itself, through the instance of their layout.
func TestLangSimChecked(t *testing.T) {
	const m = 32
	a := make([]float32, m*m)
	cfg := sim.Config{Grid: dim(2, 2, 1), Block: dim(16, 16, 1), Checked: true, Seed: 1}
	if err := sim.Run(cfg, lang.Transpose, a, make([]float32, m*m), int32(m)); err != nil {
		t.Fatalf("checked Transpose: %v", err)
	}
	_, km, ok := meta.Lookup(lang.Axpy[float64])
	if !ok || km.Name != "Axpy[float64]" || km.Checked == nil {
		t.Fatalf("meta.Lookup(Axpy[float64]) = %+v, %v", km, ok)
	}
	// An instance at a named float type runs the checked twin of the
	// instance of its layout (Axpy[float32]) and is named after it.
	cfg = sim.Config{Grid: dim(1, 1, 1), Block: dim(32, 1, 1), Checked: true}
	x, y := []lang.Celsius{1, 2}, []lang.Celsius{10, 20}
	if err := sim.Run(cfg, lang.Axpy[lang.Celsius], lang.Celsius(0.5), x, y); err != nil {
		t.Fatalf("checked sim.Run of Axpy[Celsius]: %v", err)
	}
	if y[0] != 10.5 || y[1] != 21 {
		t.Errorf("Axpy[Celsius]: y = %v, want [10.5 21]", y)
	}
	err := sim.Run(cfg, lang.Axpy[lang.Celsius], lang.Celsius(1), x, y[:1])
	var se *sim.Error
	if !errors.As(err, &se) || se.Kernel != "Axpy[float32]" || se.Kind != sim.KindOutOfRange {
		t.Errorf("checked sim.Run of Axpy[Celsius] past y's end: %v, want an index error naming Axpy[float32]", err)
	}
	// So does an instance made through a type parameter. sim finds its name
	// in the Go source, which a binary built with -trimpath cannot read.
	if _, file, _, _ := runtime.Caller(0); !fileExists(file) {
		t.Logf("skipping the instance through a type parameter: the source of %s is not readable (a -trimpath build)", file)
		return
	}
	x32, y32 := []float32{1, 2}, []float32{10, 20}
	if err := runAxpy(cfg, float32(2), x32, y32[:1]); !errors.As(err, &se) || se.Kernel != "Axpy[float32]" {
		t.Errorf("checked sim.Run of Axpy[T] past y's end: %v, want an error naming Axpy[float32]", err)
	}
}

// runAxpy runs Axpy through a type parameter, as generic user code does.
func runAxpy[T kernel.Float](cfg sim.Config, a T, x, y []T) error {
	return sim.Run(cfg, lang.Axpy[T], a, x, y)
}
