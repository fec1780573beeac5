package sim_test

import (
	"errors"
	"runtime"
	"strings"
	"testing"
	"unsafe"

	"github.com/gocu-dev/gocu/kernel"
	"github.com/gocu-dev/gocu/sim"
)

func divide(t *kernel.Thread, x []int32, d int32) {
	i := t.Index()
	x[i] = x[i] / (d - i%5) // line: divide
}

func TestPanics(t *testing.T) {
	x := make([]int32, 64)
	for i := range x {
		x[i] = int32(i) + 1
	}
	err := sim.Run(sim.Config{Grid: d1(2), Block: d1(32)}, divide, x, int32(3))
	e := wantErr(t, err, sim.KindPanic)
	wantPos(t, e.Pos, line(t, "divide"))
	var re runtime.Error
	if !errors.As(err, &re) || !strings.Contains(re.Error(), "integer divide by zero") {
		t.Errorf("value %v", e.Value)
	}
	if (e.Block.X*32+e.Thread.X)%5 != 3 || e.Kernel != "divide" || !strings.HasSuffix(e.Pos.Func, "sim_test.divide") {
		t.Errorf("thread %v kernel %q func %q", e.Thread, e.Kernel, e.Pos.Func)
	}

	var p *[4]int32
	e = wantErr(t, launch(d1(1), d1(4), func(t *kernel.Thread) {
		if t.ThreadIdx.X == 2 {
			p[t.ThreadIdx.X] = 1 // line: nil
		}
	}), sim.KindPanic)
	wantPos(t, e.Pos, line(t, "nil"))
	if e.Thread != d1(2) || !strings.Contains(e.Error(), "nil pointer dereference") {
		t.Errorf("got %v", e)
	}

	// A panic in a device function, during barrier mode, names the device
	// function's line, and the other threads are unwound.
	check := func(v int32) {
		if v == 77 {
			panic("seventy-seven") // line: explicit
		}
	}
	e = wantErr(t, launch(d1(3), d1(100), func(t *kernel.Thread) {
		t.SyncThreads()
		check(t.BlockIdx.X*100 + t.ThreadIdx.X)
		t.SyncThreads()
	}), sim.KindPanic)
	wantPos(t, e.Pos, line(t, "explicit"))
	if e.Value != "seventy-seven" || e.Block != d1(0) || e.Thread != d1(77) {
		t.Errorf("got %v", e)
	}
}

func TestOutOfRange(t *testing.T) {
	// Local arrays, shared arrays and global slices.
	e := wantErr(t, launch(d1(1), d1(16), func(t *kernel.Thread) {
		var local [8]float32
		local[t.ThreadIdx.X] = 1 // line: local
	}), sim.KindOutOfRange)
	wantPos(t, e.Pos, line(t, "local"))
	if e.Index != 8 && (e.Index < 8 || e.Index > 15) || e.Length != 8 || int(e.Thread.X) != e.Index {
		t.Errorf("got %v", e)
	}
	e = wantErr(t, launch(d1(2), d1(32), func(t *kernel.Thread) {
		s := kernel.Shared[[32]int32](t)
		s[t.ThreadIdx.X] = 1
		t.SyncThreads()
		_ = s[t.ThreadIdx.X+1] // line: shared
	}), sim.KindOutOfRange)
	wantPos(t, e.Pos, line(t, "shared"))
	if e.Index != 32 || e.Length != 32 || e.Thread != d1(31) {
		t.Errorf("got %v", e)
	}
	// A negative index.
	x := make([]float64, 10)
	e = wantErr(t, launch(d1(1), d1(10), func(t *kernel.Thread) {
		x[t.ThreadIdx.X-1] = 0 // line: negative
	}), sim.KindOutOfRange)
	wantPos(t, e.Pos, line(t, "negative"))
	if e.Index != -1 || e.Thread != d1(0) {
		t.Errorf("got %v", e)
	}
	// Slice expressions.
	e = wantErr(t, launch(d1(1), d1(4), func(t *kernel.Thread) {
		_ = x[t.ThreadIdx.X*4 : 11] // line: slice
	}), sim.KindOutOfRange)
	wantPos(t, e.Pos, line(t, "slice"))
	if e.Op != "slice" || e.Index != 11 || e.Length != 10 || !strings.Contains(e.Msg, "slice bounds out of range") {
		t.Errorf("got %v", e)
	}
}

// TestCheckedOutOfRange uses the checked hooks directly, as generated twins
// do: the error names the memory and the source position.
func TestCheckedOutOfRange(t *testing.T) {
	site := &kernel.Site{File: "k.go", Line: 12, Col: 5, Expr: "tile[y][x]"}
	outer := &kernel.Site{File: "k.go", Line: 12, Col: 5, Expr: "tile[y]"}
	g := make([]int32, 40)
	run := func(f func(t *kernel.Thread)) *sim.Error {
		err := sim.Launch(sim.Config{Grid: d1(1), Block: d1(40), DynamicSharedBytes: 64, Checked: true},
			sim.Kernel{Func: f, Checked: f, Args: []any{g}})
		return wantErr(t, err, sim.KindOutOfRange)
	}
	e := run(func(t *kernel.Thread) {
		tile := kernel.Shared[[4][8]int32](t)
		y, x := t.ThreadIdx.X/8, t.ThreadIdx.X%8
		*kernel.At(t, tile[kernel.Index(t, int(y), 4, outer)][:], int(x), site, kernel.Write) = 1
	})
	if e.Index != 4 || e.Length != 4 || e.Pos.Expr != "tile[y]" || e.Thread.X < 32 || e.Op != "index" {
		t.Errorf("got %v", e)
	}
	e = run(func(t *kernel.Thread) {
		tile := kernel.Shared[[2]int32](t)
		tile2 := kernel.Shared[[4][8]int32](t)
		*kernel.At(t, tile2[3][:], int(t.ThreadIdx.X), site, kernel.Write) = tile[0]
	})
	if e.Index != int(e.Thread.X) || e.Index < 8 || e.Length != 8 || e.Memory != "shared [4][8]int32 #1" || e.Pos.Line != 12 || e.Pos.Col != 5 {
		t.Errorf("got %v", e)
	}
	e = run(func(t *kernel.Thread) {
		*kernel.At(t, kernel.DynamicShared[int32](t), int(t.ThreadIdx.X), site, kernel.Write) = 1
	})
	if e.Index != int(e.Thread.X) || e.Index < 16 || e.Length != 16 || e.Memory != "dynamic shared memory" {
		t.Errorf("got %v", e)
	}
	e = run(func(t *kernel.Thread) {
		*kernel.At(t, g[10:], int(t.ThreadIdx.X), site, kernel.Write) = 1
	})
	if e.Index != int(e.Thread.X) || e.Index < 30 || e.Length != 30 || e.Memory != "global memory (argument 1)" {
		t.Errorf("got %v", e)
	}
	e = run(func(t *kernel.Thread) {
		var local [3]int32
		*kernel.At(t, local[:], int(t.ThreadIdx.X), site, kernel.Write) = 1
	})
	if e.Index != int(e.Thread.X) || e.Index < 3 || e.Memory != "local memory" {
		t.Errorf("got %v", e)
	}
	if msg := e.Error(); !strings.Contains(msg, " out of range [0:3] of local memory at k.go:12:5 (tile[y][x])") {
		t.Errorf("message %q", msg)
	}
}

func TestMisaligned(t *testing.T) {
	b := make([]uint8, 64)
	e := wantErr(t, launch(d1(1), d1(2), func(t *kernel.Thread) {
		w := kernel.Reinterpret[uint32](b[t.ThreadIdx.X*4+1:][:16]) // line: misaligned
		w[0] = 1
	}), sim.KindMisaligned)
	wantPos(t, e.Pos, line(t, "misaligned"))
	if !strings.Contains(e.Msg, "not 4-byte aligned for uint32") {
		t.Errorf("message %q", e.Msg)
	}
	// float4 needs 16 bytes on the GPU although Go aligns it to 4.
	f := make([]float32, 68)
	for uintptr(unsafe.Pointer(&f[0]))%16 != 0 { // as cudaMalloc would
		f = f[1:]
	}
	f = f[:64]
	e = wantErr(t, launch(d1(1), d1(1), func(t *kernel.Thread) {
		_ = kernel.Reinterpret[kernel.Float4](f[1:61])
	}), sim.KindMisaligned)
	if !strings.Contains(e.Msg, "not 16-byte aligned for kernel.Float4") {
		t.Errorf("message %q", e.Msg)
	}
	e = wantErr(t, launch(d1(1), d1(1), func(t *kernel.Thread) {
		_ = kernel.Reinterpret[uint32](b[:7])
	}), sim.KindMisaligned)
	if !strings.Contains(e.Msg, "7 bytes of uint8 are not a whole number of uint32") {
		t.Errorf("message %q", e.Msg)
	}
	// Aligned views work.
	if err := launch(d1(1), d1(4), func(t *kernel.Thread) {
		v := kernel.Reinterpret[kernel.Float4](f)
		v[t.ThreadIdx.X].W = 7
	}); err != nil || f[3] != 7 || f[15] != 7 {
		t.Fatalf("err %v, f[3]=%v", err, f[3])
	}
}
