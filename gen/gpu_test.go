package gen

import (
	"math"
	"reflect"
	"testing"

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
		t.Skip(gpuSkip)
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
	return []gpuCase{
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
	}
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
					g, isFloat := out[i].([]float32)
					if exact || c.tol == 0 || !isFloat { // only float32 results may differ by the tolerance
						if !reflect.DeepEqual(bitsOf(out[i]), bitsOf(want[i])) {
							t.Fatalf("%v: argument %d differs from Go", opts, i)
						}
						continue
					}
					w := want[i].([]float32)
					for j := range w {
						if d := math.Abs(float64(g[j] - w[j])); d > c.tol*math.Max(1, math.Abs(float64(w[j]))) || g[j] != g[j] && w[j] == w[j] {
							t.Fatalf("%v: argument %d [%d] = %v, Go %v", opts, i, j, g[j], w[j])
						}
					}
				}
			}
		})
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
