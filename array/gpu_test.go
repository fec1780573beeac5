package array

import (
	"errors"
	"fmt"
	"github.com/gocu-dev/gocu"
	"math"
	"math/rand/v2"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/gocu-dev/gocu/array/internal/backend"
	"github.com/gocu-dev/gocu/array/internal/gpu"
	"github.com/gocu-dev/gocu/cuda"
)

// Tests of the CUDA backend that the shared op tables (backendCases) do
// not cover: asynchrony, Philox agreement with the CPU, device mixing,
// out-of-memory, caches, transfers. They skip without a GPU. Failures
// print shapes, dtypes and the first mismatching elements, so that a log
// from the GPU machine is enough to diagnose them.

// A long chain returns to the host long before the GPU has done it: right
// after queuing, the stream is still busy, and the host time is a small
// part of the GPU time.
func TestGPUChainReturnsBeforeTheGPUFinishes(t *testing.T) {
	g := testGPU(t)
	const n, steps = 2048, 48
	x := g.NewRNG(1).Uniform(Float32, -1, 1, n, n)
	w := g.Eye(Float32, n).Mul(0.5).Add(x.Mul(1e-4)).Eval()
	// step closes what it no longer needs, so that the caching allocator
	// reuses blocks: a new segment from the driver (cuMemAlloc) may wait
	// for the device.
	step := func(y *Array) *Array {
		m := y.MatMul(w) // 2·2048³ flops
		z := m.Mul(2).Tanh().Eval()
		m.Close()
		if y != x {
			y.Close()
		}
		return z
	}
	// Warm up: compile the kernels, make the cuBLAS handle, fill the cache.
	y := x
	for i := 0; i < 3; i++ {
		y = step(y)
	}
	if _, err := y.Sum().Item(); err != nil {
		t.Fatal(err)
	}
	y.Close()
	waits := g.gpu.Syncs()
	start := time.Now()
	y = x
	for i := 0; i < steps; i++ {
		y = step(y)
	}
	s := y.Sum()
	queued := time.Since(start)
	busy, err := g.gpu.Busy()
	if err != nil {
		t.Fatal(err)
	}
	if g.gpu.Syncs() != waits {
		t.Fatalf("queuing the chain made the host wait %d times", g.gpu.Syncs()-waits)
	}
	if err := g.Sync(); err != nil {
		t.Fatal(err)
	}
	total := time.Since(start)
	t.Logf("%d steps of (2048² matmul, tanh): queued in %v, done after %v (GPU still busy after queuing: %v)", steps, queued, total, busy)
	if !busy {
		t.Errorf("the stream was idle right after the chain was queued (queued in %v, total %v): something waited for the GPU", queued, total)
	}
	if queued > total/2 {
		t.Errorf("queuing took %v of %v: the host is not running ahead of the GPU", queued, total)
	}
	v, err := s.Item()
	if err != nil || math.IsNaN(v) {
		t.Fatalf("result %v, %v", v, err)
	}
}

// One seed gives bit-identical random arrays on the CPU and the GPU.
func TestGPUPhiloxMatchesCPU(t *testing.T) {
	g := testGPU(t)
	for _, dt := range []DType{Float32, Float64} {
		for _, normal := range []bool{false, true} {
			for _, n := range []int{1, 3, 1003, 1<<16 + 5} {
				draw := func(d *Maker) *Array {
					r := d.NewRNG(0x5eed)
					r.SetCounter(12345)
					_ = r.Uniform(dt, 0, 1, 7) // advance the counter as a real program would
					if normal {
						return r.Normal(dt, -1.5, 3, n)
					}
					return r.Uniform(dt, -2, 5, n)
				}
				what := fmt.Sprintf("%v normal=%v n=%d", dt, normal, n)
				c, err := ToSlice[float64](draw(CPU()))
				if err != nil {
					t.Fatal(err)
				}
				gv, err := ToSlice[float64](draw(g))
				if err != nil {
					t.Fatalf("%s: %v", what, err)
				}
				bad := 0
				for i := range c {
					if math.Float64bits(c[i]) != math.Float64bits(gv[i]) {
						if bad < 5 {
							t.Errorf("%s: element %d: GPU %v (%#x), CPU %v (%#x)", what, i, gv[i], math.Float64bits(gv[i]), c[i], math.Float64bits(c[i]))
						}
						bad++
					}
				}
				if bad > 0 {
					t.Errorf("%s: %d of %d elements differ", what, bad, n)
				}
			}
		}
	}
}

// Arrays of two devices do not mix; To moves them; the error names both.
func TestGPUDeviceMixing(t *testing.T) {
	g := testGPU(t)
	x := fromSliceOn(g, []float32{1, 2, 3, 4}, 2, 2)
	y := fromSliceOn(CPU(), []float32{1, 2, 3, 4}, 2, 2)
	check := func(what string, err error) {
		t.Helper()
		if !errors.Is(err, ErrDevice) || !strings.Contains(fmt.Sprint(err), "different devices (cuda:0 and cpu)") &&
			!strings.Contains(fmt.Sprint(err), "different devices (cpu and cuda:0)") {
			t.Errorf("%s: %v, want ErrDevice naming cuda:0 and cpu", what, err)
		}
	}
	check("Add", x.Add(y).Err())
	check("MatMul", x.MatMul(y).Err())
	check("Where", Where(x.Gt(1), x, y).Err())
	check("Assign", x.Assign(y))
	check("Concat", Concat(0, x, y).Err())
	// To moves data both ways, views included.
	z := y.T().to(g).Add(x)
	if z.Device() != g.Device() {
		t.Fatalf("To(GPU) gave an array on %v", z.Device())
	}
	got := readHost(t, z.to(CPU()))
	checkHost(t, "y.T().To(gpu) + x", got, []int{2, 2}, []float64{2, 5, 5, 8}, 0)
	for _, dt := range allDTypes {
		h := randHost(newRand(t), dt, []int{3, 5}, -9, 9)
		a := makeArray(t, CPU(), dt, h, reversed).to(g)
		back := readHost(t, a.to(CPU()))
		checkHost(t, fmt.Sprintf("%v round trip", dt), back, h.shape, h.v, 0)
	}
}

// An allocation larger than the device fails with ErrOutOfMemory (after
// the collector and the cache have released what they could), the error
// sticks to what is computed from the array, and the device still works.
func TestGPUOutOfMemory(t *testing.T) {
	g := testGPU(t)
	big := g.Empty(Float32, 1<<40) // 4 TiB
	err := big.Err()
	if !errors.Is(err, ErrOutOfMemory) || !errors.Is(err, ErrDevice) || !errors.Is(err, cuda.ErrOutOfMemory) {
		t.Fatalf("4 TiB allocation: %v, want ErrOutOfMemory (and ErrDevice, cuda.ErrOutOfMemory)", err)
	}
	t.Logf("error: %v", err)
	if err2 := big.Add(1).Sum().Err(); !errors.Is(err2, ErrOutOfMemory) {
		t.Errorf("an operation on the failed array: %v, want the same error", err2)
	}
	if err3 := g.Ones(Float32, 1<<36).Eval().Err(); !errors.Is(err3, ErrOutOfMemory) { // 256 GiB, evaluated
		t.Errorf("256 GiB of ones: %v, want ErrOutOfMemory", err3)
	}
	v, err := g.Ones(Float32, 1000).Sum().Item()
	if err != nil || v != 1000 {
		t.Fatalf("after the failures the device gives %v, %v", v, err)
	}
}

// Use after Close is an error on the GPU too; closing the last array that
// holds device memory frees it (views hold it too).
func TestGPUClose(t *testing.T) {
	g := testGPU(t)
	x := g.Ones(Float32, 1<<20).Eval()
	v := x.Reshape(1024, 1024)
	s, err := x.use("test")
	if err != nil {
		t.Fatal(err)
	}
	mem := s.st.buf.(*gpu.Buffer).Memory()
	x.Close()
	if mem.Freed() {
		t.Fatalf("closing x freed memory its view still uses")
	}
	if got := x.Add(1).Err(); !errors.Is(got, ErrClosed) {
		t.Errorf("Add after Close: %v", got)
	}
	if _, err := x.Float32s(); !errors.Is(err, ErrClosed) {
		t.Errorf("read after Close: %v", err)
	}
	if sum, err := v.Sum().Item(); err != nil || sum != 1<<20 {
		t.Errorf("the view after closing x: sum %v, %v", sum, err)
	}
	v.Close()
	if !mem.Freed() {
		t.Errorf("closing the last view did not free the device memory")
	}
}

// Repeated operations on same-shaped arrays reuse one plan and one
// module, whatever the scalar values; the backend's launch path allocates
// nothing.
func TestGPUPlanCache(t *testing.T) {
	g := testGPU(t)
	x := g.NewRNG(2).Uniform(Float32, -1, 1, 1000).Eval()
	y := x.Mul(1.5).Add(2).Eval()
	if err := y.Err(); err != nil {
		t.Fatal(err)
	}
	plans0 := g.gpu.PlanCount()
	_, loads0 := g.gpu.Loaded()
	for i := 0; i < 50; i++ {
		z := x.Mul(float64(i)).Add(float64(-i)).Eval()
		z.Close()
	}
	if n := g.gpu.PlanCount(); n != plans0 {
		t.Errorf("plans grew from %d to %d for one repeated expression", plans0, n)
	}
	if _, loads := g.gpu.Loaded(); loads != loads0 {
		t.Errorf("%d modules loaded for one repeated expression", loads-loads0)
	}
	// The backend's Eval of a planned program allocates nothing.
	out, err := g.be.Alloc(Float32.be(), 1000)
	if err != nil {
		t.Fatal(err)
	}
	defer g.be.Free(out)
	xs, _ := x.use("test")
	p := &backend.Program{Shape: []int{1000}, Inputs: []backend.Operand{{Buf: xs.st.buf, Layout: xs.lay}},
		Scalars: []backend.Scalar{{DType: Float32.be(), F: 3}},
		Nodes:   []backend.Node{{Op: backend.OpInput, DType: Float32.be()}, {Op: backend.OpScalar, DType: Float32.be()}, {Op: backend.OpMul, DType: Float32.be(), Args: [3]int32{0, 1}}}}
	o := backend.Operand{Buf: out, Layout: backend.Contiguous([]int{1000})}
	if err := g.be.Eval(p, o); err != nil {
		t.Fatal(err)
	}
	allocs := testing.AllocsPerRun(200, func() { _ = g.be.Eval(p, o) })
	t.Logf("backend Eval of a planned program: %.1f allocations per call", allocs)
	if allocs > 0 {
		t.Errorf("backend Eval allocates %.1f times per call on the hot path", allocs)
	}
	if err := g.Sync(); err != nil {
		t.Fatal(err)
	}
}

// The number of loaded modules stays bounded: more distinct expressions
// than the limit evict the least recently used, whose plans are rebuilt
// when they come back, with correct results throughout.
func TestGPUModuleCacheIsBounded(t *testing.T) {
	g := testGPU(t)
	const limit = 8
	old := g.gpu.SetModuleLimit(limit)
	defer g.gpu.SetModuleLimit(old)
	x := fromSliceOn(g, []float64{1, 2, 3})
	chain := func(k int) *Array { // k additions of 1, then times k: a distinct structure per k
		y := x
		for i := 0; i < k; i++ {
			y = y.Add(1)
		}
		return y.Mul(float64(k))
	}
	for round := 0; round < 2; round++ {
		for k := 1; k <= 3*limit; k++ {
			got := readHost(t, chain(k))
			want := []float64{float64((1 + k) * k), float64((2 + k) * k), float64((3 + k) * k)}
			checkHost(t, fmt.Sprintf("round %d, %d additions", round, k), got, []int{3}, want, 0)
			if now, _ := g.gpu.Loaded(); now > limit {
				t.Fatalf("%d modules loaded, limit %d", now, limit)
			}
		}
	}
}

// TF32 products are within their documented tolerance (about 1e-3 of
// sum |a||b|), FP32 ones within 1e-5; the device setting overrides the
// package-wide one.
func TestGPUMatMulPrecision(t *testing.T) {
	g := testGPU(t)
	r := newRand(t)
	const m, k, n = 130, 257, 66
	ha, hb := randHost(r, Float32, []int{m, k}, -1, 1), randHost(r, Float32, []int{k, n}, -1, 1)
	_, want, scale := refMatMul(ha, hb)
	for _, c := range []struct {
		p   Precision
		tol float64
	}{{FP32, 1e-5}, {TF32, 1e-3}} {
		d := newDevice(g.be, g.gpu)
		d.SetMatMulPrecision(c.p)
		a, b := makeArray(t, d, Float32, ha, contiguous), makeArray(t, d, Float32, hb, transposed)
		got := readHost(t, a.MatMul(b))
		worst := 0.0
		for i := range want {
			worst = math.Max(worst, math.Abs(got.v[i]-want[i])/math.Max(scale[i], 1e-30))
		}
		t.Logf("precision %v: worst error %.3g relative to sum |a||b|", c.p, worst)
		if worst > c.tol {
			t.Errorf("precision %v: error %.3g relative to sum |a||b|, tolerance %g", c.p, worst, c.tol)
		}
		if c.p == TF32 && worst < 1e-6 {
			t.Errorf("TF32 products are as exact as FP32 (%.3g): tensor cores not used", worst)
		}
	}
	SetMatMulPrecision(TF32)
	defer SetMatMulPrecision(FP32)
	if newDevice(g.be, g.gpu).MatMulPrecision() != TF32 || g.MatMulPrecision() != TF32 {
		t.Errorf("the package-wide precision does not reach devices without their own")
	}
}

// Batched products with broadcast, reversed and transposed operands go
// through strided batched GEMM, loops where cuBLAS cannot take the strides.
func TestGPUBatchedMatMul(t *testing.T) {
	g := testGPU(t)
	r := newRand(t)
	for _, dt := range []DType{Float32, Float64, Int32} {
		ha := randHost(r, dt, []int{3, 1, 4, 5}, -3, 3)
		hb := randHost(r, dt, []int{2, 5, 6}, -3, 3)
		for _, ka := range layoutKinds {
			for _, kb := range layoutKinds {
				what := fmt.Sprintf("%v (3,1,4,5) %v @ (2,5,6) %v", dt, ka, kb)
				a, b := makeArray(t, g, dt, ha, ka), makeArray(t, g, dt, hb, kb)
				shape, want, _ := refMatMul(ha, hb)
				checkHost(t, what, readHost(t, a.MatMul(b)), shape, want, matmulTol.of(dt)*20)
			}
		}
	}
	// A batch axis with a negative stride (cuBLAS's strided batches take
	// none): the batches are looped.
	hc := randHost(r, Float32, []int{3, 4, 5}, -3, 3)
	hd := randHost(r, Float32, []int{5, 2}, -3, 3)
	c := makeArray(t, g, Float32, hc, contiguous).Slice(S(None, None, -1))
	rev := host{shape: hc.shape, v: append(append(append([]float64{}, hc.v[40:60]...), hc.v[20:40]...), hc.v[0:20]...)}
	shape, want, _ := refMatMul(rev, hd)
	checkHost(t, "(3,4,5)[::-1] @ (5,2)", readHost(t, c.MatMul(makeArray(t, g, Float32, hd, contiguous))), shape, want, 1e-5)
	// K = 0 gives zeros; M or N = 0 nothing.
	z := g.Ones(Float32, 3, 0).MatMul(g.Ones(Float32, 0, 4))
	checkHost(t, "(3,0)@(0,4)", readHost(t, z), []int{3, 4}, make([]float64, 12), 0)
}

// On gives one Maker per gocu device, and Default the one of
// gocu.Default (which follows GOCU_DEVICE; see the root package's tests).
func TestOnAndDefault(t *testing.T) {
	cpuDev, simDev := gocu.MustOpen("cpu"), gocu.MustOpen("sim")
	if On(cpuDev) != CPU() || On(cpuDev).Device() != cpuDev || CPU().String() != "cpu" {
		t.Errorf("On(cpu) = %v, CPU() = %v", On(cpuDev), CPU())
	}
	if s := On(simDev); s == CPU() || s.String() != "sim" || s.IsGPU() || s.Device() != simDev {
		t.Errorf("On(sim) = %v", s)
	}
	if err := On(nil).Ones(Float32, 2).Err(); !errors.Is(err, ErrDevice) {
		t.Errorf("On(nil): %v, want ErrDevice", err)
	}
	SetDefault(nil)
	defer SetDefault(cpuDev)
	want, err := gocu.Default()
	if err != nil {
		if Default().Err() == nil || !errors.Is(Default().Ones(Float32, 1).Err(), ErrDevice) {
			t.Errorf("gocu.Default fails (%v) but array.Default does not", err)
		}
		return
	}
	if Default().Device() != want {
		t.Errorf("Default is on %v, gocu.Default is %v", Default().Device(), want)
	}
	if gpuErr() == nil && !Default().IsGPU() && os.Getenv("GOCU_DEVICE") == "" {
		t.Errorf("with a GPU present the default is %v", Default())
	}
	x := Ones(Float32, 3)
	if x.Device() != want {
		t.Errorf("Ones is on %v, want %v", x.Device(), want)
	}
}

// TestGPUFullReductions runs the one-launch full reduction over sizes that
// give every block of the grid several tiles, vectors after the last full
// tile and elements after the last vector, from an aligned start (vector
// loads) and from a misaligned one (scalar loads), against float64
// references: Sum and Mean within the documented tolerance, Max, Min,
// ArgMax and ArgMin exactly, with ties that the first position must win.
func TestGPUFullReductions(t *testing.T) { fullReductions(t, testGPU(t)) }

func fullReductions(t *testing.T, g *Maker) {
	r := rand.New(rand.NewPCG(7, 8))
	for _, n := range []int{1<<24 + 4*37 + 3, 4096*1056*2 + 4*100 + 2} {
		h := make([]float32, n+1)
		for i := range h {
			h[i] = float32(r.Float64()*2 - 1)
		}
		// Ties for the maximum and minimum: a later copy must lose.
		hi, lo := []int{n / 3, n - 2, 5}, []int{n - 1, n / 2, 4096*3 + 17}
		for _, i := range hi {
			h[i+1] = 7 // position i of the view starting at 1
		}
		for _, i := range lo {
			h[i+1] = -7
		}
		base := fromSliceOn(g, h)
		for _, start := range []int{0, 1} {
			x := base.Slice(S(start, start+n))
			v := h[start : start+n]
			sum, abs := 0.0, 0.0
			for _, e := range v {
				sum += float64(e)
				abs += math.Abs(float64(e))
			}
			what := fmt.Sprintf("n=%d start=%d", n, start)
			got, err := ItemOf[float32](x.Sum())
			if err != nil {
				t.Fatalf("%s: Sum: %v", what, err)
			}
			if d := math.Abs(float64(got) - sum); d > 2e-6*math.Max(1, math.Abs(sum)) {
				t.Errorf("%s: Sum = %v, float64 reference %v (error %g, sum of |x| %g)", what, got, sum, d, abs)
			}
			mean, err := ItemOf[float32](x.Mean())
			if err != nil {
				t.Fatalf("%s: Mean: %v", what, err)
			}
			if d := math.Abs(float64(mean) - sum/float64(n)); d > 2e-6*math.Max(1, math.Abs(sum/float64(n))) {
				t.Errorf("%s: Mean = %v, reference %v", what, mean, sum/float64(n))
			}
			wantMax, wantArgMax, wantMin, wantArgMin := float32(math.Inf(-1)), -1, float32(math.Inf(1)), -1
			for i, e := range v {
				if e > wantMax {
					wantMax, wantArgMax = e, i
				}
				if e < wantMin {
					wantMin, wantArgMin = e, i
				}
			}
			for _, c := range []struct {
				name string
				a    *Array
				want float64
			}{
				{"Max", x.Max(), float64(wantMax)},
				{"Min", x.Min(), float64(wantMin)},
				{"ArgMax", x.ArgMax(), float64(wantArgMax)},
				{"ArgMin", x.ArgMin(), float64(wantArgMin)},
			} {
				got, err := ItemOf[float64](c.a)
				if err != nil {
					t.Fatalf("%s: %s: %v", what, c.name, err)
				}
				if got != c.want {
					t.Errorf("%s: %s = %v, want %v", what, c.name, got, c.want)
				}
			}
		}
		base.Close()
	}
}
