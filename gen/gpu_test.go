package gen

import (
	"bytes"
	"errors"
	"math"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/gocu-dev/gocu"
	"github.com/gocu-dev/gocu/gen/testdata/kernels/lang"
	"github.com/gocu-dev/gocu/internal/gputest"
	"github.com/gocu-dev/gocu/sim"

	"github.com/gocu-dev/gocu/gen/testdata/kernels/features"
	"github.com/gocu-dev/gocu/gen/testdata/kernels/gray"
	"github.com/gocu-dev/gocu/gen/testdata/kernels/guard"
	"github.com/gocu-dev/gocu/gen/testdata/kernels/hist"
	"github.com/gocu-dev/gocu/gen/testdata/kernels/matmul"
	"github.com/gocu-dev/gocu/gen/testdata/kernels/reduce"
	"github.com/gocu-dev/gocu/gen/testdata/kernels/scan"
	"github.com/gocu-dev/gocu/gen/testdata/kernels/sgemm"
	"github.com/gocu-dev/gocu/kernel"
	"github.com/gocu-dev/gocu/meta"
)

// gpuLaunch runs a kernel of a translated CUDA source on the GPU. It is
// set by gpu_launch_test.go when a GPU and NVRTC are usable; without them
// the tests below skip.
//
// It must compile src with NVRTC for the present GPU (with the options in
// opts, such as "--fmad=false" or "-DGOCU_DEBUG"), launch entry on grid x
// block with dynShared bytes of dynamic shared memory and args packed as
// package meta documents (a slice is a device copy of its elements plus its
// length, scalars and structs their Go bytes), copy every slice back and
// return them in argument order (nil for non-slices). When opts contain
// -DGOCU_DEBUG it zeroes gocu_err before the launch and returns its 16
// words afterwards.
var gpuLaunch func(src, entry string, opts []string, grid, block kernel.Dim3, dynShared int, args []any) (out []any, errBuf []uint64, err error)

func needGPU(t *testing.T) {
	t.Helper()
	if gpuLaunch == nil {
		gputest.Need(t, errors.New(gpuSkip))
	}
}

// gpuCase is a golden kernel with inputs; Go's run of the kernel (on the
// test executor) is the reference the GPU must reproduce.
type gpuCase struct {
	name        string
	fn          any
	grid, block kernel.Dim3
	dyn         int
	args        []any
	// tol is the relative tolerance of float results compiled with
	// NVRTC's default --fmad=true (contracted multiply-adds round
	// differently, as the Go specification allows); with --fmad=false the
	// results must be bit-identical unless floatAtomics is set (atomic
	// float sums depend on the order threads arrive in).
	tol          float64
	floatAtomics bool
}

func gpuCases(t *testing.T) []gpuCase {
	r := newRand(t)
	const w, h = 1000, 37
	rgb := make([]uint8, 3*w*h)
	for i := range rgb {
		rgb[i] = uint8(r.IntN(256))
	}
	const n = 129
	a, b := randF32(r, n*n), randF32(r, n*n)
	data := make([]uint8, 100003)
	for i := range data {
		data[i] = uint8(r.IntN(256))
	}
	vals := make([]int32, 1000)
	for i := range vals {
		vals[i] = r.Int32N(2000) - 1000
	}
	stats := make([]hist.Stats, 7)
	for i := range stats {
		stats[i].Max = math.MinInt32
	}
	xs := make([]int32, 4*scan.N)
	for i := range xs {
		xs[i] = r.Int32N(1000) - 500
	}
	const m, sn, k = 256, 384, 64
	k32 := make([]int32, 1000)
	for i := range k32 {
		k32[i] = r.Int32N(200) - 100
	}
	bb := make([]uint8, 1000)
	ai := make([]int32, 1000)
	for i := range ai {
		ai[i] = int32(r.Uint32())
		bb[i] = uint8(r.IntN(256))
		if bb[i] == 100 { // Bits divides by b-100
			bb[i] = 101
		}
	}
	x := randF32(r, 1000)
	x64 := make([]float64, 1000)
	for i := range x64 {
		x64[i] = float64(x[i]) / 3
	}
	ints := make([]int32, 1000)
	ints64 := make([]int64, 1000)
	for i := range ints {
		ints[i] = r.Int32N(2000) - 1000
		ints64[i] = int64(ints[i]) << 33
	}
	const cw, ch = 61, 37
	img := make([]int32, cw*ch)
	for i := range img {
		img[i] = r.Int32N(256)
	}
	const tm = 77
	cases := []gpuCase{
		// testdata/kernels/lang: generic instances, constant tables,
		// methods on shared tiles.
		{name: "Axpy[float32]", fn: lang.Axpy[float32], grid: dim(4, 1, 1), block: dim(256, 1, 1), args: []any{float32(1.5), x, randF32(r, 1000)}, tol: 1e-6},
		{name: "Axpy[float64]", fn: lang.Axpy[float64], grid: dim(4, 1, 1), block: dim(256, 1, 1), args: []any{-0.25, x64, x64}, tol: 1e-15},
		{name: "Clamp[int32]", fn: lang.Clamp[int32], grid: dim(2, 1, 1), block: dim(128, 1, 1), args: []any{ints, int32(-300), int32(300)}},
		{name: "Clamp[int64]", fn: lang.Clamp[int64], grid: dim(2, 1, 1), block: dim(128, 1, 1), args: []any{ints64, int64(-300) << 33, int64(300) << 33}},
		{name: "Clamp[float32]", fn: lang.Clamp[float32], grid: dim(2, 1, 1), block: dim(128, 1, 1), args: []any{x, float32(-0.5), float32(0.25)}},
		{name: "Scale[float32, int32]", fn: lang.Scale[float32, int32], grid: dim(4, 1, 1), block: dim(256, 1, 1), args: []any{x, int32(3)}, tol: 1e-6},
		{name: "Scale[float64, int64]", fn: lang.Scale[float64, int64], grid: dim(4, 1, 1), block: dim(256, 1, 1), args: []any{x64, int64(-7)}, tol: 1e-15},
		{name: "Conv1D", fn: lang.Conv1D, grid: dim(4, 1, 1), block: dim(256, 1, 1), args: []any{x, poisonF32(1000)}, tol: 1e-6},
		{name: "Conv2D", fn: lang.Conv2D, grid: dim((cw+15)/16, (ch+15)/16, 1), block: dim(16, 16, 1), args: []any{img, make([]int32, cw*ch), int32(cw), int32(ch)}},
		{name: "BlockMax[int64]", fn: lang.BlockMax[int64], grid: dim(8, 1, 1), block: dim(128, 1, 1), args: []any{ints64, make([]int64, 8)}},
		{name: "BlockMax[float32]", fn: lang.BlockMax[float32], grid: dim(8, 1, 1), block: dim(128, 1, 1), args: []any{x, poisonF32(8)}},
		{name: "Transpose", fn: lang.Transpose, grid: dim((tm+15)/16, (tm+15)/16, 1), block: dim(16, 16, 1), args: []any{randF32(r, tm*tm), poisonF32(tm * tm), int32(tm)}},
	}
	return append(cases, []gpuCase{
		{name: "RGBToGray", fn: gray.RGBToGray, grid: dim((w*h+255)/256, 1, 1), block: dim(256, 1, 1), args: []any{rgb, make([]uint8, w*h), int32(w * h)}},
		{name: "RGBToGray2D", fn: gray.RGBToGray2D, grid: dim((w+15)/16, (h+15)/16, 1), block: dim(16, 16, 1), args: []any{rgb, make([]uint8, w*h), int32(w), int32(h)}},
		{name: "RGBToGray4", fn: gray.RGBToGray4, grid: dim(20, 1, 1), block: dim(256, 1, 1), args: []any{rgb, make([]uint8, w*h), int32(w * h)}},
		{name: "Naive", fn: matmul.Naive, grid: dim(9, 9, 1), block: dim(16, 16, 1), args: []any{a, b, poisonF32(n * n), int32(n)}, tol: 1e-5},
		{name: "Tiled", fn: matmul.Tiled, grid: dim(9, 9, 1), block: dim(16, 16, 1), args: []any{a, b, poisonF32(n * n), int32(n)}, tol: 1e-5},
		{name: "TiledDynamic", fn: matmul.TiledDynamic, grid: dim(9, 9, 1), block: dim(16, 16, 1), dyn: 2 * 16 * 16 * 4, args: []any{a, b, poisonF32(n * n), int32(n), int32(16)}, tol: 1e-5},
		{name: "Sum", fn: reduce.Sum, grid: dim(8, 1, 1), block: dim(reduce.Block, 1, 1), args: []any{randF32(r, 100000), []float32{0}}, tol: 1e-5, floatAtomics: true},
		{name: "MaxAbs", fn: reduce.MaxAbs, grid: dim(8, 1, 1), block: dim(128, 1, 1), args: []any{randF32(r, 1024), []float32{0}, []uint32{0}}},
		{name: "Histogram", fn: hist.Histogram, grid: dim(16, 1, 1), block: dim(256, 1, 1), args: []any{data, make([]uint32, hist.Bins)}},
		{name: "Accumulate", fn: hist.Accumulate, grid: dim(4, 1, 1), block: dim(256, 1, 1), args: []any{vals, stats, hist.Stats{Count: 3, Seen: true}}},
		{name: "Blelloch", fn: scan.Blelloch, grid: dim(4, 1, 1), block: dim(scan.N/2, 1, 1), args: []any{xs, make([]int32, len(xs))}},
		{name: "SGEMM", fn: sgemm.SGEMM, grid: dim(sn/sgemm.BN, m/sgemm.BM, 1), block: dim(sgemm.Threads, 1, 1), args: []any{randF32(r, m*k), randF32(r, k*sn), randF32(r, m*sn), int32(m), int32(sn), int32(k), float32(1.5), float32(-0.5)}, tol: 1e-5},
		{name: "Ops", fn: features.Ops, grid: dim(4, 1, 1), block: dim(256, 1, 1), args: []any{x, k32, poisonF32(8 * 1000), features.ModeMax, features.Pair{A: -3, B: 2.5, C: [3]int16{1, 2, 30000}, D: true}, features.Celsius(36.6)}, tol: 1e-6},
		{name: "Loops", fn: features.Loops, grid: dim(4, 1, 1), block: dim(256, 1, 1), args: []any{k32, make([]int32, 1000)}},
		{name: "Bits", fn: features.Bits, grid: dim(4, 1, 1), block: dim(256, 1, 1), args: []any{ai, bb, make([]int64, 1000)}},
	}...)
}

// TestGPUKernels runs every golden kernel on the GPU, in release and debug
// builds, and compares with Go running the same kernel.
func TestGPUKernels(t *testing.T) {
	needGPU(t)
	for _, c := range gpuCases(t) {
		t.Run(c.name, func(t *testing.T) {
			want := cloneArgs(c.args)
			launch(t, c.fn, c.grid, c.block, c.dyn, want...)
			m, k, _ := meta.Lookup(c.fn)
			for _, opts := range [][]string{nil, {"--fmad=false"}, {"--fmad=false", "-DGOCU_DEBUG"}} {
				out, errBuf, err := gpuLaunch(m.Source, k.Entry, opts, c.grid, c.block, c.dyn, cloneArgs(c.args))
				if err != nil {
					t.Fatalf("%v: %v", opts, err)
				}
				if len(errBuf) > 0 && errBuf[meta.ErrCode] != 0 {
					t.Fatalf("%v: debug build reports %v at %+v", opts, meta.ErrorCode(errBuf[meta.ErrCode]), m.Sites[errBuf[meta.ErrSite]])
				}
				exact := len(opts) > 0 && !c.floatAtomics
				for i := range want {
					if out[i] == nil {
						continue
					}
					if gb, ok := out[i].([]uint8); ok && len(opts) == 0 {
						// With FMA contraction a float expression rounds once
						// where Go rounds twice, which can move a float-to-byte
						// conversion (the grayscale kernels) by one level.
						wb := want[i].([]uint8)
						for j := range wb {
							if d := int(gb[j]) - int(wb[j]); d < -1 || d > 1 {
								t.Fatalf("%v: argument %d [%d] = %d, Go %d", opts, i, j, gb[j], wb[j])
							}
						}
						continue
					}
					g, isFloat := floats(out[i])
					if exact || c.tol == 0 || !isFloat { // only float results may differ by the tolerance
						if !reflect.DeepEqual(bitsOf(out[i]), bitsOf(want[i])) {
							t.Fatalf("%v: argument %d differs from Go", opts, i)
						}
						continue
					}
					w, _ := floats(want[i])
					for j := range w {
						if d := math.Abs(g[j] - w[j]); d > c.tol*math.Max(1, math.Abs(w[j])) || g[j] != g[j] && w[j] == w[j] {
							t.Fatalf("%v: argument %d [%d] = %v, Go %v", opts, i, j, g[j], w[j])
						}
					}
				}
			}
		})
	}
}

// floats returns a float32 or float64 slice as float64s.
func floats(a any) ([]float64, bool) {
	switch s := a.(type) {
	case []float64:
		return s, true
	case []float32:
		f := make([]float64, len(s))
		for i, v := range s {
			f[i] = float64(v)
		}
		return f, true
	}
	return nil, false
}

// TestGPULangLaunchers runs the generated launchers of
// testdata/kernels/lang on the GPU: generic launchers choose the instance
// by their type arguments (a named float32 too) and pass a type
// parameter's value by its bytes; a launch without an instance fails; the
// transpose calls methods of a shared tile and struct.
func TestGPULangLaunchers(t *testing.T) {
	needGPU(t)
	d, err := gocu.Open("cuda")
	if err != nil {
		t.Fatal(err)
	}
	checkLangLaunchers(t, d)
}

// TestGPUPrintf runs lang.Debug, which prints with fmt.Printf,
// fmt.Println, fmt.Print and kernel.Printf, on the GPU and requires the
// lines the simulator prints (without its block and thread prefixes), in
// any order: CUDA's printf orders nothing.
func TestGPUPrintf(t *testing.T) {
	needGPU(t)
	grid, block, args := debugArgs()
	var simOut bytes.Buffer
	if err := sim.Run(sim.Config{Grid: grid, Block: block, Stdout: &simOut}, lang.Debug, cloneArgs(args)...); err != nil {
		t.Fatal(err)
	}
	m, k, _ := meta.Lookup(lang.Debug)
	for _, opts := range [][]string{nil, {"-DGOCU_DEBUG"}} {
		out, before, err := captureStdoutUnflushed(func() error {
			_, _, err := gpuLaunch(m.Source, k.Entry, opts, grid, block, 0, cloneArgs(args))
			return err
		})
		if err != nil {
			t.Fatalf("%v: %v", opts, err)
		}
		// Diagnosis: does the output reach standard output when it is a
		// file, before the C library's buffer is flushed? If not, a Go
		// program (which exits without flushing it) loses printf output
		// whenever its standard output is not a terminal.
		t.Logf("%v: %d of %d bytes of printf output reached the file before fflush", opts, len(before), len(out))
		got := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
		want := strings.Split(strings.TrimSuffix(stripPrefixes(simOut.String()), "\n"), "\n")
		slices.Sort(got)
		slices.Sort(want)
		if !slices.Equal(got, want) {
			t.Errorf("%v: the GPU printed (sorted)\n%s\nthe simulator (sorted, without prefixes)\n%s", opts, strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
	}
}

// TestGPUDebugOutOfRange checks the debug build on the GPU: the error
// buffer names the failing thread, block, index, length and Go source site,
// for a global slice and for a shared array.
func TestGPUDebugOutOfRange(t *testing.T) {
	needGPU(t)
	const n = 40
	x := make([]float32, n)
	for i := range x {
		x[i] = float32(i)
	}
	m, k, _ := meta.Lookup(guard.OffByOne)
	out, e, err := gpuLaunch(m.Source, k.Entry, []string{"-DGOCU_DEBUG"}, dim(2, 1, 1), dim(32, 1, 1), 0, []any{x, make([]float32, n), int32(n)})
	if err != nil {
		t.Fatal(err)
	}
	if meta.ErrorCode(e[meta.ErrCode]) != meta.ErrIndex || int64(e[meta.ErrValue]) != n || int64(e[meta.ErrLength]) != n ||
		e[meta.ErrBlockX] != 1 || e[meta.ErrThreadX] != 8 {
		t.Errorf("error buffer %v, want index %d length %d at block 1 thread 8", e, n, n)
	}
	if s := m.Sites[e[meta.ErrSite]]; s.Expr != "x[i]" && s.Expr != "y[i]" {
		t.Errorf("site %+v, want x[i] or y[i] of guard.go:13", *s)
	}
	for i, v := range out[1].([]float32) {
		if v != 2*float32(i) {
			t.Fatalf("y[%d] = %v: in-range threads must finish", i, v)
		}
	}
	m, k, _ = meta.Lookup(guard.Transpose2)
	_, e, err = gpuLaunch(m.Source, k.Entry, []string{"-DGOCU_DEBUG"}, dim(1, 1, 1), dim(4, 4, 1), 0, []any{make([]float32, 16), make([]float32, 16)})
	if err != nil {
		t.Fatal(err)
	}
	if s := m.Sites[e[meta.ErrSite]]; meta.ErrorCode(e[meta.ErrCode]) != meta.ErrIndex || s.Expr != "tile[ty+1][tx]" || e[meta.ErrValue] != 4 || e[meta.ErrLength] != 4 || e[meta.ErrThreadX+1] != 3 {
		t.Errorf("error buffer %v at %+v, want index 4 length 4 at tile[ty+1][tx], thread y 3", e, *s)
	}
}

// TestGPUCasesInGo runs the GPU test cases on the Go executor, kernel and
// checked twin, so that the cases themselves are known to be valid
// launches (in range, whole warps at warp operations) before a GPU sees
// them.
func TestGPUCasesInGo(t *testing.T) {
	if testing.Short() {
		t.Skip("large launches")
	}
	for _, c := range gpuCases(t) {
		t.Run(c.name, func(t *testing.T) {
			both(t, c.fn, c.grid, c.block, c.dyn, c.args...)
		})
	}
}
