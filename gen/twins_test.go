package gen

import (
	"math"
	"math/rand/v2"
	"reflect"
	"testing"
	"time"

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

func newRand(t *testing.T) *rand.Rand {
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	return rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
}

// twinOf returns the checked twin registered for a kernel.
func twinOf(t *testing.T, fn any) any {
	t.Helper()
	_, k, ok := meta.Lookup(fn)
	if !ok {
		t.Fatalf("kernel %v is not registered (is its generated file up to date?)", reflect.ValueOf(fn))
	}
	if reflect.ValueOf(k.Func).Pointer() != reflect.ValueOf(fn).Pointer() {
		t.Fatalf("Lookup returned kernel %s for another function", k.Name)
	}
	return k.Checked
}

// both runs a kernel and its twin on copies of the arguments (slices are
// copied) and checks that every slice ends up bit-identical; it returns
// the original's arguments after the run and the twin's launch result.
func both(t *testing.T, fn any, grid, block kernel.Dim3, dyn int, args ...any) ([]any, *launchResult) {
	t.Helper()
	twin := twinOf(t, fn)
	a1 := cloneArgs(args)
	a2 := cloneArgs(args)
	launch(t, fn, grid, block, dyn, a1...)
	res := launch(t, twin, grid, block, dyn, a2...)
	if len(res.oob) > 0 {
		t.Fatalf("twin reports an out-of-range access: %+v %s", res.oob[0], res.oob[0].site.Expr)
	}
	for i := range a1 {
		if !reflect.DeepEqual(bitsOf(a1[i]), bitsOf(a2[i])) {
			t.Fatalf("argument %d differs between the kernel and its checked twin", i)
		}
	}
	if len(res.accesses) == 0 {
		t.Fatal("the twin reported no memory access")
	}
	return a1, res
}

func cloneArgs(args []any) []any {
	out := make([]any, len(args))
	for i, a := range args {
		v := reflect.ValueOf(a)
		if v.Kind() == reflect.Slice {
			c := reflect.MakeSlice(v.Type(), v.Len(), v.Len())
			reflect.Copy(c, v)
			out[i] = c.Interface()
			continue
		}
		out[i] = a
	}
	return out
}

// bitsOf returns float slices as bits, so that -0 and +0 differ and NaNs
// compare equal. NaN payloads are not compared: Go only promises "a NaN"
// (its amd64 max, for one, merges the operands' bits).
func bitsOf(a any) any {
	switch s := a.(type) {
	case []float32:
		b := make([]uint32, len(s))
		for i, v := range s {
			b[i] = math.Float32bits(v)
			if v != v {
				b[i] = 0x7fc00000
			}
		}
		return b
	case []float64:
		b := make([]uint64, len(s))
		for i, v := range s {
			b[i] = math.Float64bits(v)
			if v != v {
				b[i] = 0x7ff8000000000000
			}
		}
		return b
	}
	return a
}

func dim(x, y, z int32) kernel.Dim3 { return kernel.Dim3{X: x, Y: y, Z: z} }

func poisonF32(n int) []float32 {
	s := make([]float32, n)
	for i := range s {
		s[i] = float32(math.NaN())
	}
	return s
}

func randF32(r *rand.Rand, n int) []float32 {
	s := make([]float32, n)
	for i := range s {
		s[i] = r.Float32()*2 - 1
	}
	return s
}

func closeRel(t *testing.T, what string, got []float32, want []float64, tol float64) {
	t.Helper()
	for i := range want {
		g := float64(got[i])
		if math.IsNaN(g) || math.Abs(g-want[i]) > tol*math.Max(1, math.Abs(want[i])) {
			t.Fatalf("%s[%d] = %v, want %v", what, i, g, want[i])
		}
	}
}

func TestTwinGray(t *testing.T) {
	r := newRand(t)
	const w, h = 37, 11
	n := w * h
	rgb := make([]uint8, 3*n)
	for i := range rgb {
		rgb[i] = uint8(r.IntN(256))
	}
	want := make([]uint8, n)
	for i := range want {
		want[i] = uint8(0.2989*float32(rgb[i]) + 0.5870*float32(rgb[i+n]) + 0.1140*float32(rgb[i+2*n]))
	}
	check := func(name string, got []uint8) {
		t.Helper()
		for i := range want {
			if got[i] != want[i] {
				t.Fatalf("%s: gray[%d] = %d, want %d", name, i, got[i], want[i])
			}
		}
	}
	poison := func(m int) []uint8 {
		s := make([]uint8, m)
		for i := range s {
			s[i] = uint8(r.IntN(256))
		}
		return s
	}
	out, _ := both(t, gray.RGBToGray, dim(int32((n+63)/64), 1, 1), dim(64, 1, 1), 0, rgb, poison(n), int32(n))
	check("RGBToGray", out[1].([]uint8))
	out, _ = both(t, gray.RGBToGray2D, dim(3, 2, 1), dim(16, 8, 1), 0, rgb, poison(n), int32(w), int32(h))
	check("RGBToGray2D", out[1].([]uint8))
	// Four pixels per thread: n must be a multiple of 4.
	const n4 = 4 * 97
	rgb4 := rgb[:3*n4]
	want4 := make([]uint8, n4)
	for i := range want4 {
		want4[i] = uint8(0.2989*float32(rgb4[i]) + 0.5870*float32(rgb4[i+n4]) + 0.1140*float32(rgb4[i+2*n4]))
	}
	want = want4
	rgbPlanar := make([]uint8, 3*n4)
	copy(rgbPlanar, rgb4)
	out, _ = both(t, gray.RGBToGray4, dim(2, 1, 1), dim(32, 1, 1), 0, rgbPlanar, poison(n4), int32(n4))
	check("RGBToGray4", out[1].([]uint8))
}

func TestTwinMatmul(t *testing.T) {
	r := newRand(t)
	const n = 37
	a, b := randF32(r, n*n), randF32(r, n*n)
	want := make([]float64, n*n)
	for i := 0; i < n; i++ {
		for j := 0; j < n; j++ {
			var s float64
			for k := 0; k < n; k++ {
				s += float64(a[i*n+k]) * float64(b[k*n+j])
			}
			want[i*n+j] = s
		}
	}
	grid := dim((n+15)/16, (n+15)/16, 1)
	block := dim(16, 16, 1)
	out, _ := both(t, matmul.Naive, grid, block, 0, a, b, poisonF32(n*n), int32(n))
	closeRel(t, "Naive", out[2].([]float32), want, 1e-5)
	out, res := both(t, matmul.Tiled, grid, block, 0, a, b, poisonF32(n*n), int32(n))
	closeRel(t, "Tiled", out[2].([]float32), want, 1e-5)
	for site, accs := range res.accesses {
		if site.Expr == "as[ty][tx]" && accs[kernel.Write] == 0 {
			t.Errorf("shared write as[ty][tx] not reported as a write: %v", accs)
		}
	}
	out, _ = both(t, matmul.TiledDynamic, grid, block, 2*16*16*4, a, b, poisonF32(n*n), int32(n), int32(16))
	closeRel(t, "TiledDynamic", out[2].([]float32), want, 1e-5)
}

func TestTwinReduce(t *testing.T) {
	r := newRand(t)
	x := randF32(r, 5000)
	var want float64
	for _, v := range x {
		want += float64(v)
	}
	out, res := both(t, reduce.Sum, dim(4, 1, 1), dim(reduce.Block, 1, 1), 0, x, []float32{0})
	closeRel(t, "Sum", out[1].([]float32), []float64{want}, 1e-5)
	atomics := 0
	for _, accs := range res.accesses {
		atomics += accs[kernel.Atomic]
	}
	if atomics != 4 {
		t.Errorf("twin reported %d atomic accesses, want 4 (one per block)", atomics)
	}
	x = randF32(r, 32*20)
	maxAbs, neg := 0.0, 0
	for _, v := range x {
		maxAbs = math.Max(maxAbs, math.Abs(float64(v)))
		if v < 0 {
			neg++
		}
	}
	out, _ = both(t, reduce.MaxAbs, dim(5, 1, 1), dim(128, 1, 1), 0, x, []float32{0}, []uint32{0})
	if got := out[1].([]float32)[0]; float64(got) != maxAbs {
		t.Errorf("MaxAbs = %v, want %v", got, maxAbs)
	}
	if got := out[2].([]uint32)[0]; int(got) != neg {
		t.Errorf("negative count = %d, want %d", got, neg)
	}
}

func TestTwinHist(t *testing.T) {
	r := newRand(t)
	data := make([]uint8, 3001)
	want := make([]uint32, hist.Bins)
	for i := range data {
		data[i] = uint8(r.IntN(256))
		want[data[i]]++
	}
	out, _ := both(t, hist.Histogram, dim(3, 1, 1), dim(128, 1, 1), 0, data, make([]uint32, hist.Bins))
	if got := out[1].([]uint32); !reflect.DeepEqual(got, want) {
		t.Fatalf("histogram differs:\n got %v\nwant %v", got, want)
	}
	vals := make([]int32, 200)
	stats := make([]hist.Stats, 7)
	wantStats := make([]hist.Stats, 7)
	for i := range wantStats {
		wantStats[i].Max = math.MinInt32
		stats[i].Max = math.MinInt32
	}
	for i := range vals {
		vals[i] = r.Int32N(2000) - 1000
		b := uint32(vals[i]) % 7
		wantStats[b].Count += 3
		wantStats[b].Sum += int64(vals[i])
		wantStats[b].Max = max(wantStats[b].Max, vals[i])
	}
	out, _ = both(t, hist.Accumulate, dim(4, 1, 1), dim(64, 1, 1), 0, vals, stats, hist.Stats{Count: 3, Seen: true})
	if got := out[1].([]hist.Stats); !reflect.DeepEqual(got, wantStats) {
		t.Fatalf("stats differ:\n got %+v\nwant %+v", got, wantStats)
	}
}

func TestTwinScan(t *testing.T) {
	r := newRand(t)
	x := make([]int32, 2*scan.N-37)
	for i := range x {
		x[i] = r.Int32N(1000) - 500
	}
	want := make([]int32, len(x))
	for b := 0; b < len(x); b += scan.N {
		var s int32
		for i := b; i < min(b+scan.N, len(x)); i++ {
			want[i] = s
			s += x[i]
		}
	}
	y := make([]int32, len(x))
	for i := range y {
		y[i] = -12345
	}
	out, _ := both(t, scan.Blelloch, dim(2, 1, 1), dim(scan.N/2, 1, 1), 0, x, y)
	if got := out[1].([]int32); !reflect.DeepEqual(got, want) {
		t.Fatalf("scan differs")
	}
}

func TestTwinSGEMM(t *testing.T) {
	r := newRand(t)
	const m, n, k = 128, 256, 16
	a, b, c := randF32(r, m*k), randF32(r, k*n), randF32(r, m*n)
	alpha, beta := float32(1.5), float32(-0.5)
	want := make([]float64, m*n)
	for i := 0; i < m; i++ {
		for j := 0; j < n; j++ {
			var s float64
			for l := 0; l < k; l++ {
				s += float64(a[i*k+l]) * float64(b[l*n+j])
			}
			want[i*n+j] = float64(alpha)*s + float64(beta)*float64(c[i*n+j])
		}
	}
	out, _ := both(t, sgemm.SGEMM, dim(n/sgemm.BN, m/sgemm.BM, 1), dim(sgemm.Threads, 1, 1), 0, a, b, c, int32(m), int32(n), int32(k), alpha, beta)
	closeRel(t, "SGEMM", out[2].([]float32), want, 1e-5)
}

func TestTwinFeatures(t *testing.T) {
	r := newRand(t)
	const n = 100
	x := randF32(r, n)
	k := make([]int32, n)
	for i := range k {
		k[i] = r.Int32N(200) - 100
	}
	p := features.Pair{A: -3, B: 2.5, C: [3]int16{1, 2, 30000}, D: true}
	for _, m := range []features.Mode{features.ModeAdd, features.ModeMul, features.ModeMax, 7} {
		both(t, features.Ops, dim(2, 1, 1), dim(64, 1, 1), 0, x, k, poisonF32(8*n), m, p, features.Celsius(36.6))
	}
	both(t, features.Loops, dim(2, 1, 1), dim(64, 1, 1), 0, k, make([]int32, n))
	a := make([]int32, n)
	bb := make([]uint8, n)
	for i := range a {
		a[i] = int32(r.Uint32())
		bb[i] = uint8(r.IntN(256))
		if bb[i] == 100 { // Bits divides by b-100
			bb[i] = 101
		}
	}
	a[0], a[1] = math.MinInt32, math.MaxInt32
	both(t, features.Bits, dim(2, 1, 1), dim(64, 1, 1), 0, a, bb, make([]int64, n))
}

// TestTwinOutOfRange checks that the twins report the failing access with
// its site, index and length.
func TestTwinOutOfRange(t *testing.T) {
	const n = 40
	x, y := make([]float32, n), make([]float32, n)
	res := launch(t, twinOf(t, guard.OffByOne), dim(1, 1, 1), dim(64, 1, 1), 0, x, y, int32(n))
	if len(res.oob) != 1 {
		t.Fatalf("got %d out-of-range reports, want 1 (thread %d): %+v", len(res.oob), n, res.oob)
	}
	o := res.oob[0]
	if o.index != n || o.n != n || o.site.Expr != "x[i]" || o.site.File != "guard.go" || o.site.Line != 13 {
		t.Errorf("report = index %d, len %d, site %+v; want index %d, len %d at guard.go:13 x[i]", o.index, o.n, *o.site, n, n)
	}
	res = launch(t, twinOf(t, guard.Transpose2), dim(1, 1, 1), dim(4, 4, 1), 0, make([]float32, 16), make([]float32, 16))
	if len(res.oob) != 4 {
		t.Fatalf("got %d out-of-range reports, want 4 (row 3 of the tile): %+v", len(res.oob), res.oob)
	}
	for _, o := range res.oob {
		if o.index != 4 || o.n != 4 || o.site.Expr != "tile[ty+1][tx]" {
			t.Errorf("report = index %d, len %d, %q; want index 4, len 4, tile[ty+1][tx]", o.index, o.n, o.site.Expr)
		}
	}
}
