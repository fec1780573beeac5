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
	"github.com/gocu-dev/gocu/meta"
)

// TestHostMatchesGo runs barrier-free kernels both as Go and as their
// generated C++ (on the host) and requires bit-identical results: the
// translation keeps Go's meaning.
func TestHostMatchesGo(t *testing.T) {
	r := newRand(t)
	const n = 100
	x := randF32(r, n)
	x[3], x[4] = float32(math.Inf(1)), float32(math.NaN())
	k := make([]int32, n)
	for i := range k {
		k[i] = r.Int32N(200) - 100
	}
	p := features.Pair{A: -3, B: 2.5, C: [3]int16{1, 2, 30000}, D: true}
	cases := []struct {
		name        string
		fn          any
		grid, block [3]int32
		args        []any
	}{
		{"Ops/add", features.Ops, [3]int32{2, 1, 1}, [3]int32{64, 1, 1}, []any{x, k, poisonF32(8 * n), features.ModeAdd, p, features.Celsius(36.6)}},
		{"Ops/max", features.Ops, [3]int32{2, 1, 1}, [3]int32{64, 1, 1}, []any{x, k, poisonF32(8 * n), features.ModeMax, p, features.Celsius(-40)}},
		{"Ops/none", features.Ops, [3]int32{2, 1, 1}, [3]int32{64, 1, 1}, []any{x, k, poisonF32(8 * n), features.Mode(9), p, features.Celsius(1)}},
		{"Loops", features.Loops, [3]int32{2, 1, 1}, [3]int32{64, 1, 1}, []any{k, make([]int32, n)}},
		{"Naive", matmul.Naive, [3]int32{3, 3, 1}, [3]int32{16, 16, 1}, []any{randF32(r, 37*37), randF32(r, 37*37), poisonF32(37 * 37), int32(37)}},
	}
	a := make([]int32, n)
	bb := make([]uint8, n)
	for i := range a {
		a[i] = int32(r.Uint32())
		bb[i] = uint8(r.IntN(256))
		if bb[i] == 100 { // Bits divides by b-100
			bb[i] = 101
		}
	}
	a[0], a[1], a[2] = math.MinInt32, math.MaxInt32, -1
	cases = append(cases, struct {
		name        string
		fn          any
		grid, block [3]int32
		args        []any
	}{"Bits", features.Bits, [3]int32{2, 1, 1}, [3]int32{64, 1, 1}, []any{a, bb, make([]int64, n)}})
	rgb := make([]uint8, 3*4*50)
	for i := range rgb {
		rgb[i] = uint8(r.IntN(256))
	}
	cases = append(cases, struct {
		name        string
		fn          any
		grid, block [3]int32
		args        []any
	}{"RGBToGray4", gray.RGBToGray4, [3]int32{1, 1, 1}, [3]int32{32, 1, 1}, []any{rgb, make([]uint8, 200), int32(200)}})
	vals := make([]int32, 100)
	for i := range vals {
		vals[i] = r.Int32N(2000) - 1000
	}
	cases = append(cases, struct {
		name        string
		fn          any
		grid, block [3]int32
		args        []any
	}{"Accumulate", hist.Accumulate, [3]int32{2, 1, 1}, [3]int32{64, 1, 1}, []any{vals, make([]hist.Stats, 7), hist.Stats{Count: 3, Seen: true}}})

	cs := make([]features.Celsius, n)
	for i := range cs {
		cs[i] = features.Celsius(r.Float32()*100 - 50)
	}
	cases = append(cases, struct {
		name        string
		fn          any
		grid, block [3]int32
		args        []any
	}{"Misc", features.Misc, [3]int32{2, 1, 1}, [3]int32{64, 1, 1}, []any{k, cs, poisonF32(4 * n)}})
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			grid, block := dim(c.grid[0], c.grid[1], c.grid[2]), dim(c.block[0], c.block[1], c.block[2])
			goArgs := cloneArgs(c.args)
			launch(t, c.fn, grid, block, 0, goArgs...)
			for _, debug := range []bool{false, true} {
				host, errBuf := hostRun(t, c.fn, grid, block, debug, cloneArgs(c.args)...)
				for i := range goArgs {
					if host[i] == nil {
						continue
					}
					if !reflect.DeepEqual(bitsOf(host[i]), bitsOf(goArgs[i])) {
						hb, gb := reflect.ValueOf(bitsOf(host[i])), reflect.ValueOf(bitsOf(goArgs[i]))
						for j := 0; j < hb.Len(); j++ {
							if !reflect.DeepEqual(hb.Index(j).Interface(), gb.Index(j).Interface()) {
								t.Fatalf("debug=%v: argument %d differs between Go and C++ at [%d]: Go %v (bits %x), C++ %v (bits %x)",
									debug, i, j, reflect.ValueOf(goArgs[i]).Index(j), gb.Index(j), reflect.ValueOf(host[i]).Index(j), hb.Index(j))
							}
						}
					}
				}
				if debug && errBuf[meta.ErrCode] != 0 {
					t.Fatalf("debug build reported error %v at site %d", meta.ErrorCode(errBuf[meta.ErrCode]), errBuf[meta.ErrSite])
				}
			}
		})
	}
}

// TestHostDebugOutOfRange checks the debug build's error buffer: the
// first failing thread, its block, the index, the length and the site.
func TestHostDebugOutOfRange(t *testing.T) {
	const n = 40
	x, y := make([]float32, n), make([]float32, n)
	for i := range x {
		x[i] = float32(i)
	}
	m, _, _ := meta.Lookup(guard.OffByOne)
	out, e := hostRun(t, guard.OffByOne, dim(2, 1, 1), dim(32, 1, 1), true, x, y, int32(n))
	if got := meta.ErrorCode(e[meta.ErrCode]); got != meta.ErrIndex {
		t.Fatalf("error code = %v, want %v", got, meta.ErrIndex)
	}
	site := m.Sites[e[meta.ErrSite]]
	if int64(e[meta.ErrValue]) != n || int64(e[meta.ErrLength]) != n || site.Expr != "x[i]" || site.Line != 13 {
		t.Errorf("error = index %d, length %d at %s:%d %q; want index %d, length %d at guard.go:13 \"x[i]\"",
			int64(e[meta.ErrValue]), int64(e[meta.ErrLength]), site.File, site.Line, site.Expr, n, n)
	}
	if e[meta.ErrBlockX] != 1 || e[meta.ErrThreadX] != 8 {
		t.Errorf("error at block %d thread %d, want block 1 thread 8", e[meta.ErrBlockX], e[meta.ErrThreadX])
	}
	if e[meta.ErrCount] != 2 {
		t.Errorf("%d failed checks counted, want 2 (x[40] and y[40])", e[meta.ErrCount])
	}
	got := out[1].([]float32)
	for i := 0; i < n; i++ {
		if got[i] != 2*float32(i) {
			t.Fatalf("y[%d] = %v, want %v: the in-range threads must still run", i, got[i], 2*float32(i))
		}
	}
	// The release build has no checks (and here reads past x, writes past y
	// into the allocation's slack).
	_, _ = hostRun(t, guard.OffByOne, dim(2, 1, 1), dim(32, 1, 1), false, x, y, int32(n))
}
