package kernel_test

import (
	"errors"
	"math"
	"strings"
	"sync"
	"testing"
	"unsafe"

	"github.com/gocu-dev/gocu/kernel"
)

func TestThreadIndex(t *testing.T) {
	th := kernel.Thread{ThreadIdx: kernel.Dim3{X: 3, Y: 2, Z: 1}, BlockIdx: kernel.Dim3{X: 5, Y: 7}, BlockDim: kernel.Dim3{X: 16, Y: 4, Z: 2}, GridDim: kernel.Dim3{X: 9, Y: 8, Z: 1}}
	if got := th.Index(); got != 5*16+3 {
		t.Errorf("Index %d", got)
	}
	if x, y := th.Index2D(); x != 83 || y != 7*4+2 {
		t.Errorf("Index2D %d %d", x, y)
	}
	if sx, sy := th.Stride2D(); th.Stride() != 144 || sx != 144 || sy != 32 {
		t.Errorf("Stride %d %d %d", th.Stride(), sx, sy)
	}
	if r := th.Rank(); r != 3+2*16+1*64 || th.LaneID() != r%32 || th.WarpID() != r/32 {
		t.Errorf("Rank %d lane %d warp %d", r, th.LaneID(), th.WarpID())
	}
	if (kernel.Dim3{X: 4, Y: 5, Z: 6}).Size() != 120 || (kernel.Dim3{X: 4}).Size() != 0 {
		t.Error("Size")
	}
}

// scale is a barrier-free kernel: it runs as plain Go, without an executor.
func scale(t *kernel.Thread, x []float32, a float32) {
	if i := t.Index(); i < int32(len(x)) {
		x[i] *= a
	}
}

func TestPlainGo(t *testing.T) {
	x := []float32{1, 2, 3, 4, 5}
	for i := range int32(8) {
		scale(&kernel.Thread{ThreadIdx: kernel.Dim3{X: i % 4}, BlockIdx: kernel.Dim3{X: i / 4}, BlockDim: kernel.Dim3{X: 4, Y: 1, Z: 1}}, x, 2)
	}
	for i, v := range x {
		if v != float32(2*(i+1)) {
			t.Fatalf("x[%d] = %v", i, v)
		}
	}
	// What needs an executor panics with a *Fault that says so.
	defer func() {
		var f *kernel.Fault
		if err, ok := recover().(error); !ok || !errors.As(err, &f) || f.Op != "SyncThreads" || !strings.Contains(f.Error(), "needs an executor") {
			t.Errorf("recovered %v", err)
		}
	}()
	(&kernel.Thread{}).SyncThreads()
}

func TestMath(t *testing.T) {
	nan := float32(math.NaN())
	for _, x := range []float32{0.5, 1, 2.25, 10, 1e-3} {
		for name, c := range map[string][2]float64{
			"Sqrt": {float64(kernel.Sqrt(x)), math.Sqrt(float64(x))}, "Rsqrt": {float64(kernel.Rsqrt(x)), 1 / math.Sqrt(float64(x))},
			"Exp": {float64(kernel.Exp(x)), math.Exp(float64(x))}, "Log": {float64(kernel.Log(x)), math.Log(float64(x))},
			"Sin": {float64(kernel.Sin(x)), math.Sin(float64(x))}, "Cos": {float64(kernel.Cos(x)), math.Cos(float64(x))},
			"Pow": {float64(kernel.Pow(x, 1.5)), math.Pow(float64(x), 1.5)}, "Tanh": {float64(kernel.Tanh(x)), math.Tanh(float64(x))},
			"Floor": {float64(kernel.Floor(x)), math.Floor(float64(x))}, "Ceil": {float64(kernel.Ceil(x)), math.Ceil(float64(x))},
		} {
			if d := math.Abs(c[0] - c[1]); d > 1e-7*math.Max(1, math.Abs(c[1])) {
				t.Errorf("%s(%v) = %v, want %v", name, x, c[0], c[1])
			}
		}
	}
	// FMA rounds once: (1+2^-23)(1-2^-23) - 1 = -2^-46 exactly.
	e := float32(math.Ldexp(1, -23))
	if got := kernel.FMA(1+e, 1-e, -1); got != -float32(math.Ldexp(1, -46)) {
		t.Errorf("FMA = %g", got)
	}
	if kernel.Min(nan, 2) != 2 || kernel.Max(3, nan) != 3 || kernel.Min(1, 2) != 1 || kernel.Max(1, 2) != 2 {
		t.Error("Min/Max with NaN")
	}
	if math.Signbit(float64(kernel.Max(float32(math.Copysign(0, -1)), 0))) || !math.Signbit(float64(kernel.Min(0, float32(math.Copysign(0, -1))))) {
		t.Error("Min/Max of signed zeros")
	}
	if kernel.Abs(float32(math.Copysign(0, -1))) != 0 || math.Signbit(float64(kernel.Abs(float32(math.Copysign(0, -1))))) || kernel.Abs(-3) != 3 {
		t.Error("Abs")
	}
	if !kernel.IsNaN(nan) || kernel.IsNaN(1) || !kernel.IsInf(float32(math.Inf(-1))) || kernel.IsInf(math.MaxFloat32) {
		t.Error("IsNaN/IsInf")
	}
	if kernel.Round(2.5) != 3 || kernel.Round(-2.5) != -3 || kernel.Trunc(-2.7) != -2 {
		t.Error("Round/Trunc")
	}
	// FastExp2 flushes results below 2^-126 to zero, as ex2.approx.ftz does.
	if kernel.FastExp2(3) != 8 || kernel.FastExp2(-126) != float32(math.Ldexp(1, -126)) || kernel.FastExp2(-126.5) != 0 ||
		kernel.FastExp2(float32(math.Inf(-1))) != 0 || !kernel.IsNaN(kernel.FastExp2(nan)) || kernel.FastExp2(float32(math.Ldexp(1, -140))) != 1 {
		t.Error("FastExp2")
	}
}

func TestAtomics(t *testing.T) {
	const goroutines, each = 8, 1000
	var i32 int32
	var u32 uint32
	var i64 int64
	var u64 uint64
	var f32 float32
	var f64 float64
	var mx, mn int32 = math.MinInt32, math.MaxInt32
	var wg sync.WaitGroup
	for g := range goroutines {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for k := range each {
				kernel.AtomicAdd(&i32, 1)
				kernel.AtomicAdd(&u32, 2)
				kernel.AtomicSub(&i64, 3)
				kernel.AtomicAdd(&u64, 1<<33)
				kernel.AtomicAdd(&f32, 0.5)
				kernel.AtomicAdd(&f64, 0.25)
				v := int32(g*each + k)
				kernel.AtomicMax(&mx, v)
				kernel.AtomicMin(&mn, v)
			}
		}()
	}
	wg.Wait()
	n := goroutines * each
	if i32 != int32(n) || u32 != uint32(2*n) || i64 != int64(-3*n) || u64 != uint64(n)<<33 || f32 != float32(n)/2 || f64 != float64(n)/4 {
		t.Errorf("sums %d %d %d %d %v %v", i32, u32, i64, u64, f32, f64)
	}
	if mx != int32(n-1) || mn != 0 {
		t.Errorf("max %d min %d", mx, mn)
	}
	x := float32(1)
	if old := kernel.AtomicExch(&x, 5); old != 1 || x != 5 {
		t.Error("Exch")
	}
	if old := kernel.AtomicCAS(&x, 4, 9); old != 5 || x != 5 {
		t.Error("CAS must not store when the value differs")
	}
	if old := kernel.AtomicCAS(&x, 5, 9); old != 5 || x != 9 {
		t.Error("CAS must store when the value matches")
	}
	nan := float32(math.NaN())
	y := nan
	if old := kernel.AtomicCAS(&y, nan, 1); !kernel.IsNaN(old) || y != 1 {
		t.Error("float CAS compares bits: a NaN matches itself")
	}
	m := float32(math.NaN())
	if kernel.AtomicMax(&m, 2); m != 2 {
		t.Error("AtomicMax ignores a NaN operand")
	}
	if kernel.AtomicMin(&m, nan); m != 2 {
		t.Error("AtomicMin ignores a NaN operand")
	}
}

func TestReinterpret(t *testing.T) {
	w := []uint32{0x04030201, 0x08070605}
	b := kernel.Reinterpret[uint8](w)
	if len(b) != 8 || b[0] != 1 || b[7] != 8 {
		t.Fatalf("bytes %v", b)
	}
	if back := kernel.Reinterpret[uint32](b); len(back) != 2 || &back[0] != &w[0] {
		t.Fatal("round trip must alias")
	}
	if kernel.Reinterpret[uint32]([]uint8(nil)) != nil {
		t.Error("empty input gives nil")
	}
	// Go aligns small allocations to 8 bytes only; cudaMalloc aligns to 256.
	f := make([]float32, 16)
	for uintptr(unsafe.Pointer(&f[0]))%16 != 0 {
		f = f[1:]
	}
	f = f[:12]
	if v := kernel.Reinterpret[kernel.Float4](f); len(v) != 3 {
		t.Errorf("%d float4s", len(v))
	}
	for _, bad := range []func(){
		func() { kernel.Reinterpret[uint32](b[1:5]) },
		func() { kernel.Reinterpret[uint32](b[:6]) },
		func() { kernel.Reinterpret[kernel.Float4](f[2:10]) },
		func() { kernel.Reinterpret[struct{}](b) },
	} {
		func() {
			defer func() {
				if f, ok := recover().(*kernel.Fault); !ok || f.Op != "Reinterpret" {
					t.Errorf("want a Reinterpret fault, got %v", f)
				}
			}()
			bad()
		}()
	}
}

func TestPrefixLines(t *testing.T) {
	b, th := kernel.Dim3{X: 1, Y: 2, Z: 3}, kernel.Dim3{X: 4}
	for _, c := range []struct{ in, want string }{
		{"", ""},
		{"x = 1\n", "block (1,2,3) thread (4,0,0): x = 1\n"},
		{"a\nb", "block (1,2,3) thread (4,0,0): a\nblock (1,2,3) thread (4,0,0): b\n"},
	} {
		if got := kernel.PrefixLines(b, th, c.in); got != c.want {
			t.Errorf("PrefixLines(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}
