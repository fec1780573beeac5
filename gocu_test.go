package gocu_test

import (
	"errors"
	"math"
	"math/rand/v2"
	"os"
	"strings"
	"testing"
	"unsafe"

	"github.com/gocu-dev/gocu"
	"github.com/gocu-dev/gocu/cuda"
	"github.com/gocu-dev/gocu/internal/gputest"
	"github.com/gocu-dev/gocu/nvrtc"
)

func simDevice(t testing.TB) *gocu.Device {
	t.Helper()
	d, err := gocu.Open("sim")
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// gpu returns the first GPU, or skips the test with the reason.
func gpu(t testing.TB) *gocu.Device {
	t.Helper()
	gputest.Need(t, gocu.GPUUsable())
	d, err := gocu.Open("cuda")
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func TestOpen(t *testing.T) {
	for _, bad := range []string{"", "tpu", "cuda:x", "cuda:-1"} {
		if _, err := gocu.Open(bad); err == nil || !strings.Contains(err.Error(), "unknown device") {
			t.Errorf("Open(%q) = %v, want an unknown-device error", bad, err)
		}
	}
	a, b := simDevice(t), simDevice(t)
	if a != b || a.Kind() != gocu.Sim || a.String() != "sim" {
		t.Errorf("Open(sim) twice: %p %p kind %v", a, b, a.Kind())
	}
	if !cuda.Available() {
		_, err := gocu.Open("cuda:0")
		if !errors.Is(err, gocu.ErrNoGPU) || !errors.Is(err, cuda.ErrNoDriver) {
			t.Errorf("Open(cuda:0) without a driver = %v, want ErrNoGPU wrapping ErrNoDriver", err)
		}
	}
}

func TestBufferSim(t *testing.T) {
	d := simDevice(t)
	b, err := gocu.Alloc[float32](d, 10)
	if err != nil {
		t.Fatal(err)
	}
	h, err := b.ToSlice()
	if err != nil {
		t.Fatal(err)
	}
	for i, v := range h {
		if !math.IsNaN(float64(v)) {
			t.Fatalf("new simulator buffer element %d = %v, want the NaN poison", i, v)
		}
	}
	if p := uintptr(unsafe.Pointer(&b.Host()[0])); p%256 != 0 {
		t.Errorf("simulator buffer at %#x is not 256-byte aligned like cudaMalloc's", p)
	}
	src := []float32{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}
	if err := b.CopyFrom(src); err != nil {
		t.Fatal(err)
	}
	v, err := b.Slice(2, 5)
	if err != nil {
		t.Fatal(err)
	}
	got := make([]float32, 3)
	if err := v.CopyTo(got); err != nil || got[0] != 2 || got[2] != 4 {
		t.Fatalf("view [2:5] = %v, %v", got, err)
	}
	if err := v.CopyFrom([]float32{-1}); err != nil {
		t.Fatal(err)
	}
	if b.Host()[2] != -1 {
		t.Errorf("a write through a view did not reach the buffer")
	}
	if _, err := b.Slice(4, 11); err == nil {
		t.Error("Slice past the end succeeded")
	}
	if err := b.CopyFrom(make([]float32, 11)); err == nil {
		t.Error("CopyFrom of more elements than the buffer holds succeeded")
	}
	if err := b.Free(); err != nil {
		t.Fatal(err)
	}
	if err := b.Free(); !errors.Is(err, gocu.ErrFreed) {
		t.Errorf("second Free = %v, want ErrFreed", err)
	}
	if _, err := b.ToSlice(); !errors.Is(err, gocu.ErrFreed) {
		t.Errorf("ToSlice after Free = %v, want ErrFreed", err)
	}
	if _, err := gocu.Alloc[float32](d, -1); err == nil {
		t.Error("Alloc(-1) succeeded")
	}
}

func TestCompileOnSimulator(t *testing.T) {
	_, err := simDevice(t).Compile(`extern "C" __global__ void k() {}`)
	if !errors.Is(err, gocu.ErrSimulatorCUDA) {
		t.Fatalf("Compile on the simulator = %v, want ErrSimulatorCUDA", err)
	}
}

func TestUnboundBuffer(t *testing.T) {
	b := gocu.Out(make([]int32, 4))
	if _, err := b.ToSlice(); err == nil || !strings.Contains(err.Error(), "Out buffer is bound to a device only during a launch") {
		t.Fatalf("ToSlice of an Out buffer = %v", err)
	}
}

const vaddSrc = `
extern "C" __global__ void vadd(const float* a, const float* b, float* c, long long n) {
	long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n) c[i] = a[i] + b[i];
}
extern "C" __global__ void scale(float* x, float s, int n) {
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n) x[i] *= s;
}
template <typename T> __global__ void fill(T* x, T v, int n) {
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n) x[i] = v;
}
`

func randFloats(r *rand.Rand, n int) []float32 {
	s := make([]float32, n)
	for i := range s {
		s[i] = float32(r.NormFloat64())
	}
	return s
}

func TestCompileLaunchGPU(t *testing.T) {
	d := gpu(t)
	m, err := d.Compile(vaddSrc, gocu.NameExpressions("fill<int>"))
	if err != nil {
		t.Fatal(err)
	}
	if m2, err := d.Compile(vaddSrc, gocu.NameExpressions("fill<int>")); err != nil || m2 != m {
		t.Errorf("second Compile of the same source: %p %v, want the cached module %p", m2, err, m)
	}
	k, err := m.Kernel("vadd")
	if err != nil {
		t.Fatal(err)
	}
	const n = 1 << 26
	r := rand.New(rand.NewPCG(1, uint64(os.Getpid())))
	a, b := randFloats(r, n), randFloats(r, n)
	da, err := gocu.FromSlice(d, a)
	if err != nil {
		t.Fatal(err)
	}
	defer da.Free()
	db, _ := gocu.FromSlice(d, b)
	defer db.Free()
	dc, _ := gocu.Alloc[float32](d, n)
	defer dc.Free()
	poison := make([]float32, n)
	for i := range poison {
		poison[i] = float32(math.NaN())
	}
	if err := dc.CopyFrom(poison); err != nil {
		t.Fatal(err)
	}
	if err := k.Launch(gocu.Grid1D(n, 256), da, db, dc, int64(n)); err != nil {
		t.Fatal(err)
	}
	c, err := dc.ToSlice()
	if err != nil {
		t.Fatal(err)
	}
	for i := range c {
		if want := float64(a[i]) + float64(b[i]); math.Abs(float64(c[i])-want) > 1e-6*math.Abs(want)+1e-30 || c[i] != c[i] {
			t.Fatalf("c[%d] = %v, want %v", i, c[i], want)
		}
	}

	// Auto configuration, In/Out/InOut, views and templates.
	sc, err := m.Kernel("scale")
	if err != nil {
		t.Fatal(err)
	}
	x := randFloats(r, 1000)
	y := append([]float32(nil), x...)
	if err := sc.Launch(gocu.Auto(len(y)), gocu.InOut(y), float32(-2), int32(len(y))); err != nil {
		t.Fatal(err)
	}
	for i := range y {
		if y[i] != -2*x[i] {
			t.Fatalf("InOut scale: y[%d] = %v, want %v", i, y[i], -2*x[i])
		}
	}
	f, err := m.Kernel("fill<int>")
	if err != nil {
		t.Fatal(err)
	}
	out := make([]int32, 300)
	if err := f.Launch(gocu.Grid1D(len(out), 128), gocu.Out(out), int32(7), int32(len(out))); err != nil {
		t.Fatal(err)
	}
	for i, v := range out {
		if v != 7 {
			t.Fatalf("Out fill: out[%d] = %d", i, v)
		}
	}
	view, err := dc.Slice(100, 200)
	if err != nil {
		t.Fatal(err)
	}
	if err := sc.Launch(gocu.Grid1D(100, 64), view, float32(0.5), int32(100)); err != nil {
		t.Fatal(err)
	}
	got := make([]float32, 201)
	if err := dc.CopyTo(got); err != nil {
		t.Fatal(err)
	}
	if got[99] != c[99] || got[200] != c[200] || got[100] != 0.5*c[100] || got[199] != 0.5*c[199] {
		t.Errorf("scale through a view [100:200] touched the wrong elements")
	}
	if _, err := m.Kernel("nope"); err == nil || !strings.Contains(err.Error(), "nope") {
		t.Errorf("Kernel(nope) = %v", err)
	}
}

func TestLaunchErrorsGPU(t *testing.T) {
	d := gpu(t)
	m, err := d.Compile(vaddSrc)
	if err != nil {
		t.Fatal(err)
	}
	k, _ := m.Kernel("scale")
	x, _ := gocu.Alloc[float32](d, 16)
	defer x.Free()
	cases := []struct {
		cfg  gocu.Config
		args []any
		want string
	}{
		{gocu.Config{Grid: gocu.Dim3{X: 1}, Block: gocu.Dim3{X: 2048}}, []any{x, float32(1), int32(16)}, "Block.X is 2048"},
		{gocu.Config{Grid: gocu.Dim3{X: -1}, Block: gocu.Dim3{X: 32}}, []any{x, float32(1), int32(16)}, "negative"},
		{gocu.Grid1D(16, 32), []any{x, float32(1), 16}, "int32"},
		{gocu.Config{}, []any{x, float32(1), int32(16)}, "N = 0"},
	}
	for _, c := range cases {
		err := k.Launch(c.cfg, c.args...)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Launch(%v) = %v, want an error mentioning %q", c.cfg, err, c.want)
		}
	}
	x.Free()
	if err := k.Launch(gocu.Grid1D(16, 32), x, float32(1), int32(16)); !errors.Is(err, gocu.ErrFreed) {
		t.Errorf("launch with a freed buffer = %v, want ErrFreed", err)
	}
}

func TestCompileErrorGPU(t *testing.T) {
	d := gpu(t)
	src := "extern \"C\" __global__ void k(float* x) {\n\tx[0] = undefined_thing;\n}\n"
	_, err := d.Compile(src, gocu.Name("bad.cu"))
	var ce *nvrtc.CompileError
	if !errors.As(err, &ce) {
		t.Fatalf("Compile = %v, want *nvrtc.CompileError", err)
	}
	msg := err.Error()
	if !strings.Contains(msg, "bad.cu:2") || !strings.Contains(msg, "undefined_thing") {
		t.Errorf("compile error does not name line 2 and its text:\n%s", msg)
	}
	// a failed compile is not cached: the same call fails the same way
	if _, err2 := d.Compile(src, gocu.Name("bad.cu")); err2 == nil {
		t.Error("second compile of a bad kernel succeeded")
	}
}

// BenchmarkLaunchGPU measures gocu.Kernel.Launch of a tiny kernel, the
// figure to compare with CuPy's RawKernel launch.
func BenchmarkLaunchGPU(b *testing.B) {
	d := gpu(b)
	m, err := d.Compile(`extern "C" __global__ void inc(float* p) { p[0] += 1.f; }`)
	if err != nil {
		b.Fatal(err)
	}
	k, _ := m.Kernel("inc")
	p, _ := gocu.Alloc[float32](d, 1)
	defer p.Free()
	p.Zero()
	cfg := gocu.Config{Grid: gocu.Dim3{X: 1}, Block: gocu.Dim3{X: 1}}
	for range 1000 {
		k.Launch(cfg, p)
	}
	d.Synchronize()
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		if err := k.Launch(cfg, p); err != nil {
			b.Fatal(err)
		}
	}
	if err := d.Synchronize(); err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/1e3, "us/launch")
}
