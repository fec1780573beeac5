package lowp_test

// The conversions against the GPU's own conversion instructions, bit for
// bit. The test skips, saying why, where there is no CUDA driver, GPU or
// NVRTC. Run it with
//
//	go test ./lowp -run GPU -v
//
// and with LOWP_EXHAUSTIVE=1 for all 2^32 float32 inputs instead of a
// sweep of 2^24 x 3 and the CPU tests' sweep.
//
// The kernels use inline PTX, so they need no CUDA header. Each lowp
// conversion is compared with the instruction behind the CUDA intrinsic it
// mirrors (cuda_fp16.hpp, cuda_bf16.hpp, cuda_fp8.hpp of CUDA 12):
//
//	lowp                     CUDA                                  PTX                                   needs
//	Float16FromFloat32       __float2half_rn                       cvt.rn.f16.f32                        -
//	Float16FromFloat64       __double2half                         cvt.rn.f16.f64                        -
//	Float16.Float32          __half2float                          cvt.f32.f16                           -
//	Float16.Float64          (double)__half2float                  cvt.f32.f16, cvt.f64.f32              -
//	BFloat16FromFloat32      __float2bfloat16_rn                   cvt.rn.bf16.f32                       sm_80
//	BFloat16FromFloat64      __double2bfloat16                     cvt.rn.bf16.f64                       sm_90
//	BFloat16.Float32         __bfloat162float                      mov.b32 d, {0, x}                     -
//	BFloat16.Float64         (double)__bfloat162float              mov.b32, cvt.f64.f32                  -
//	Float8E4M3FromFloat32    __nv_cvt_float_to_fp8(SATFINITE,E4M3) cvt.rn.satfinite.e4m3x2.f32           sm_89
//	Float8E5M2FromFloat32    __nv_cvt_float_to_fp8(SATFINITE,E5M2) cvt.rn.satfinite.e5m2x2.f32           sm_89
//	Float8E4M3 to Float16    __nv_cvt_fp8_to_halfraw(E4M3)         cvt.rn.f16x2.e4m3x2                   sm_89
//	Float8E5M2 to Float16    __nv_cvt_fp8_to_halfraw(E5M2)         cvt.rn.f16x2.e5m2x2                   sm_89
//	Float8E4M3.Float32       float(__nv_fp8_e4m3)                  cvt.rn.f16x2.e4m3x2, cvt.f32.f16      sm_89
//	Float8E5M2.Float32       float(__nv_fp8_e5m2)                  cvt.rn.f16x2.e5m2x2, cvt.f32.f16      sm_89
//	Float8E4M3.Float64       double(__nv_fp8_e4m3)                 ..., cvt.f64.f32                      sm_89
//	Float8E5M2.Float64       double(__nv_fp8_e5m2)                 ..., cvt.f64.f32                      sm_89
//
// The packed instructions convert two values at once; the kernels give
// both lanes the same input and the test checks both. The float64 to 8-bit
// conversions have no instruction (CUDA does them in software) and are
// not checked here. Also reported, not failed on: cvt.f32.bf16 (sm_90),
// which __bfloat162float does not use, against BFloat16.Float32 on NaNs.

import (
	"fmt"
	"math"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/gocu-dev/gocu/cuda"
	"github.com/gocu-dev/gocu/internal/gputest"
	"github.com/gocu-dev/gocu/lowp"
	"github.com/gocu-dev/gocu/nvrtc"
)

// Every kernel has the same signature: the input is in[i], or, where in is
// null, the bit pattern start + i*stride, so that most inputs are made on
// the GPU. Outputs are bit patterns: no value passes through a C float
// that the compiler could touch.
const gpuSource = `
typedef unsigned short u16;
typedef unsigned int u32;
typedef unsigned long long u64;

#define KERNEL(name, IN, OUT) extern "C" __global__ void name(const IN* in, OUT* out, u32 n, u32 start, u32 stride)
#define INPUT(IN) \
	u32 i = blockIdx.x * blockDim.x + threadIdx.x; \
	if (i >= n) return; \
	IN x = in ? in[i] : (IN)(start + i * stride)

__device__ float f32(u32 x) { float f; asm("mov.b32 %0, %1;" : "=f"(f) : "r"(x)); return f; }
__device__ u32 bits32(float f) { u32 x; asm("mov.b32 %0, %1;" : "=r"(x) : "f"(f)); return x; }
__device__ u64 bits64(double d) { u64 x; asm("mov.b64 %0, %1;" : "=l"(x) : "d"(d)); return x; }
__device__ double widen(float f) { double d; asm("cvt.f64.f32 %0, %1;" : "=d"(d) : "f"(f)); return d; }
__device__ float half2float(u16 h) { float f; asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(h)); return f; }
__device__ float bf162float(u16 h) { float f; asm("mov.b32 %0, {0, %1};" : "=f"(f) : "h"(h)); return f; }

KERNEL(f32_to_f16, u32, u16) {
	INPUT(u32);
	u16 y;
	asm("cvt.rn.f16.f32 %0, %1;" : "=h"(y) : "f"(f32(x)));
	out[i] = y;
}

KERNEL(f64_to_f16, u64, u16) {
	INPUT(u64);
	double d;
	u16 y;
	asm("mov.b64 %0, %1;" : "=d"(d) : "l"(x));
	asm("cvt.rn.f16.f64 %0, %1;" : "=h"(y) : "d"(d));
	out[i] = y;
}

KERNEL(f16_to_f32, u32, u32) { INPUT(u32); out[i] = bits32(half2float((u16)x)); }
KERNEL(f16_to_f64, u32, u64) { INPUT(u32); out[i] = bits64(widen(half2float((u16)x))); }
KERNEL(bf16_to_f32, u32, u32) { INPUT(u32); out[i] = bits32(bf162float((u16)x)); }
KERNEL(bf16_to_f64, u32, u64) { INPUT(u32); out[i] = bits64(widen(bf162float((u16)x))); }

#if __CUDA_ARCH__ >= 800
KERNEL(f32_to_bf16, u32, u16) {
	INPUT(u32);
	u16 y;
	asm("cvt.rn.bf16.f32 %0, %1;" : "=h"(y) : "f"(f32(x)));
	out[i] = y;
}
#endif

#if __CUDA_ARCH__ >= 890
// Both lanes get x: the result holds two 8-bit values.
KERNEL(f32_to_e4m3, u32, u16) {
	INPUT(u32);
	u16 y;
	asm("cvt.rn.satfinite.e4m3x2.f32 %0, %1, %2;" : "=h"(y) : "f"(f32(x)), "f"(f32(x)));
	out[i] = y;
}
KERNEL(f32_to_e5m2, u32, u16) {
	INPUT(u32);
	u16 y;
	asm("cvt.rn.satfinite.e5m2x2.f32 %0, %1, %2;" : "=h"(y) : "f"(f32(x)), "f"(f32(x)));
	out[i] = y;
}

__device__ u32 e4m3_f16x2(u32 x) { u32 y; asm("cvt.rn.f16x2.e4m3x2 %0, %1;" : "=r"(y) : "h"((u16)(x & 0xff | x << 8))); return y; }
__device__ u32 e5m2_f16x2(u32 x) { u32 y; asm("cvt.rn.f16x2.e5m2x2 %0, %1;" : "=r"(y) : "h"((u16)(x & 0xff | x << 8))); return y; }

KERNEL(e4m3_to_f16x2, u32, u32) { INPUT(u32); out[i] = e4m3_f16x2(x); }
KERNEL(e5m2_to_f16x2, u32, u32) { INPUT(u32); out[i] = e5m2_f16x2(x); }
KERNEL(e4m3_to_f32, u32, u32) { INPUT(u32); out[i] = bits32(half2float((u16)e4m3_f16x2(x))); }
KERNEL(e5m2_to_f32, u32, u32) { INPUT(u32); out[i] = bits32(half2float((u16)e5m2_f16x2(x))); }
KERNEL(e4m3_to_f64, u32, u64) { INPUT(u32); out[i] = bits64(widen(half2float((u16)e4m3_f16x2(x)))); }
KERNEL(e5m2_to_f64, u32, u64) { INPUT(u32); out[i] = bits64(widen(half2float((u16)e5m2_f16x2(x)))); }
#endif

#if __CUDA_ARCH__ >= 900 && !defined(LOWP_NO_SM90)
KERNEL(f64_to_bf16, u64, u16) {
	INPUT(u64);
	double d;
	u16 y;
	asm("mov.b64 %0, %1;" : "=d"(d) : "l"(x));
	asm("cvt.rn.bf16.f64 %0, %1;" : "=h"(y) : "d"(d));
	out[i] = y;
}
KERNEL(bf16_to_f32_cvt, u32, u32) {
	INPUT(u32);
	float f;
	asm("cvt.f32.bf16 %0, %1;" : "=f"(f) : "h"((u16)x));
	out[i] = bits32(f);
}
#endif
`

// gpuConv is one kernel and the Go function it is checked against: want
// maps an input bit pattern to the expected output bit pattern.
type gpuConv struct {
	kernel  string
	minCC   int // compute capability x10 the instruction needs
	in, out int // bytes per input and output element
	want    func(x uint64) uint64
	isNaN   func(y uint64) bool // whether an output is NaN
	lenient bool                // NaN-only differences are logged, not failures
}

// The checks, by kind of input.
var (
	gpuNarrow32 = []gpuConv{
		{"f32_to_f16", 0, 4, 2, func(x uint64) uint64 { return uint64(lowp.Float16FromFloat32(f32(x)).Bits()) }, nanF16, false},
		{"f32_to_bf16", 80, 4, 2, func(x uint64) uint64 { return uint64(lowp.BFloat16FromFloat32(f32(x)).Bits()) }, nanBF16, false},
		{"f32_to_e4m3", 89, 4, 2, func(x uint64) uint64 { return twice8(lowp.Float8E4M3FromFloat32(f32(x)).Bits()) }, nanE4M3x2, false},
		{"f32_to_e5m2", 89, 4, 2, func(x uint64) uint64 { return twice8(lowp.Float8E5M2FromFloat32(f32(x)).Bits()) }, nanE5M2x2, false},
	}
	gpuNarrow64 = []gpuConv{
		{"f64_to_f16", 0, 8, 2, func(x uint64) uint64 { return uint64(lowp.Float16FromFloat64(math.Float64frombits(x)).Bits()) }, nanF16, false},
		{"f64_to_bf16", 90, 8, 2, func(x uint64) uint64 { return uint64(lowp.BFloat16FromFloat64(math.Float64frombits(x)).Bits()) }, nanBF16, false},
	}
	gpuWiden16 = []gpuConv{
		{"f16_to_f32", 0, 4, 4, func(x uint64) uint64 { return bits32(lowp.Float16FromBits(uint16(x)).Float32()) }, nanF32, false},
		{"f16_to_f64", 0, 4, 8, func(x uint64) uint64 { return math.Float64bits(lowp.Float16FromBits(uint16(x)).Float64()) }, nanF64, false},
		{"bf16_to_f32", 0, 4, 4, func(x uint64) uint64 { return bits32(lowp.BFloat16FromBits(uint16(x)).Float32()) }, nanF32, false},
		{"bf16_to_f64", 0, 4, 8, func(x uint64) uint64 { return math.Float64bits(lowp.BFloat16FromBits(uint16(x)).Float64()) }, nanF64, false},
		{"bf16_to_f32_cvt", 90, 4, 4, func(x uint64) uint64 { return bits32(lowp.BFloat16FromBits(uint16(x)).Float32()) }, nanF32, true},
	}
	gpuWiden8 = []gpuConv{
		{"e4m3_to_f16x2", 89, 4, 4, func(x uint64) uint64 { return twice16(lowp.Float8E4M3FromBits(uint8(x)).Float32()) }, nanF16x2, false},
		{"e5m2_to_f16x2", 89, 4, 4, func(x uint64) uint64 { return twice16(lowp.Float8E5M2FromBits(uint8(x)).Float32()) }, nanF16x2, false},
		{"e4m3_to_f32", 89, 4, 4, func(x uint64) uint64 { return bits32(lowp.Float8E4M3FromBits(uint8(x)).Float32()) }, nanF32, false},
		{"e5m2_to_f32", 89, 4, 4, func(x uint64) uint64 { return bits32(lowp.Float8E5M2FromBits(uint8(x)).Float32()) }, nanF32, false},
		{"e4m3_to_f64", 89, 4, 8, func(x uint64) uint64 { return math.Float64bits(lowp.Float8E4M3FromBits(uint8(x)).Float64()) }, nanF64, false},
		{"e5m2_to_f64", 89, 4, 8, func(x uint64) uint64 { return math.Float64bits(lowp.Float8E5M2FromBits(uint8(x)).Float64()) }, nanF64, false},
	}
)

func nanF16(y uint64) bool  { return lowp.Float16FromBits(uint16(y)).IsNaN() }
func nanBF16(y uint64) bool { return lowp.BFloat16FromBits(uint16(y)).IsNaN() }
func nanE4M3x2(y uint64) bool {
	return lowp.Float8E4M3FromBits(uint8(y)).IsNaN() || lowp.Float8E4M3FromBits(uint8(y>>8)).IsNaN()
}
func nanE5M2x2(y uint64) bool {
	return lowp.Float8E5M2FromBits(uint8(y)).IsNaN() || lowp.Float8E5M2FromBits(uint8(y>>8)).IsNaN()
}
func nanF16x2(y uint64) bool { return nanF16(y) || nanF16(y>>16) }
func nanF32(y uint64) bool   { return math.IsNaN(float64(math.Float32frombits(uint32(y)))) }
func nanF64(y uint64) bool   { return math.IsNaN(math.Float64frombits(y)) }

func f32(x uint64) float32     { return math.Float32frombits(uint32(x)) }
func bits32(f float32) uint64  { return uint64(math.Float32bits(f)) }
func twice8(b uint8) uint64    { return uint64(b) | uint64(b)<<8 }
func twice16(f float32) uint64 { h := uint64(lowp.Float16FromFloat32(f).Bits()); return h | h<<16 } // exact: every 8-bit value is a Float16

// gpu is the device and the compiled kernels.
type gpu struct {
	dev *cuda.Device
	mod *cuda.Module
	cc  int
}

// newGPU compiles gpuSource for device 0, or skips the test.
func newGPU(t *testing.T) *gpu {
	t.Helper()
	gputest.Need(t, cuda.Init())
	gputest.Need(t, nvrtc.Load())
	d, err := cuda.DeviceAt(0)
	if err != nil {
		t.Fatal(err)
	}
	major, minor := d.ComputeCapability()
	target, err := nvrtc.TargetFor(major, minor)
	if err != nil {
		t.Fatal(err)
	}
	opts := nvrtc.Options{Arch: target, Name: "lowp_gpu_test.cu"}
	res, err := nvrtc.Compile(gpuSource, opts)
	if err != nil && major >= 9 {
		// The sm_90 instructions are the least certain to assemble: report
		// that, and check the others without them.
		t.Errorf("compiling with the sm_90 kernels (cvt.rn.bf16.f64, cvt.f32.bf16): %v", err)
		opts.Defines = map[string]string{"LOWP_NO_SM90": ""}
		res, err = nvrtc.Compile(gpuSource, opts)
	}
	if err != nil {
		t.Fatal(err)
	}
	m, err := d.LoadModule(res.Code)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Unload() })
	t.Logf("%s, compute capability %d.%d, target %s", d.Name(), major, minor, target)
	return &gpu{dev: d, mod: m, cc: major*10 + minor}
}

// run converts n inputs with conv's kernel, from the host slice in (bits
// in the low conv.in bytes of each element) or, when in is nil, from the
// patterns start + i*stride, and compares every output with conv.want.
func (g *gpu) run(t *testing.T, conv gpuConv, in []uint64, n int, start, stride uint32, m *gpuMismatches) {
	t.Helper()
	f, err := g.mod.Function(conv.kernel)
	if err != nil {
		t.Errorf("%s: %v", conv.kernel, err)
		return
	}
	if in != nil {
		n = len(in)
	}
	inPtr := cuda.DevicePtr(0)
	if in != nil {
		var dIn *cuda.Memory
		if conv.in == 8 {
			dIn, err = cuda.AllocSlice[uint64](g.dev, n)
		} else {
			dIn, err = cuda.AllocSlice[uint32](g.dev, n)
		}
		must(t, err)
		defer dIn.Free()
		if conv.in == 8 {
			err = cuda.CopyHtoD(dIn, in)
		} else {
			narrow := make([]uint32, n)
			for i, x := range in {
				narrow[i] = uint32(x)
			}
			err = cuda.CopyHtoD(dIn, narrow)
		}
		must(t, err)
		inPtr = dIn.Ptr()
	}
	dOut, err := g.dev.Alloc(n * conv.out)
	must(t, err)
	defer dOut.Free()
	must(t, f.Launch(cuda.Config{Grid: cuda.GridFor(n, 256), Block: cuda.Dim3{X: 256}}, inPtr, dOut, uint32(n), start, stride))
	got := make([]uint64, n)
	switch conv.out {
	case 2:
		h := make([]uint16, n)
		must(t, cuda.CopyDtoH(h, dOut))
		for i, v := range h {
			got[i] = uint64(v)
		}
	case 4:
		h := make([]uint32, n)
		must(t, cuda.CopyDtoH(h, dOut))
		for i, v := range h {
			got[i] = uint64(v)
		}
	default:
		must(t, cuda.CopyDtoH(got, dOut))
	}
	compare(conv, in, start, stride, got, m)
}

// compare checks the outputs got of conv for the inputs in, or start +
// i*stride (in 32-bit arithmetic, as the kernels compute them), on every
// core.
func compare(conv gpuConv, in []uint64, start, stride uint32, got []uint64, m *gpuMismatches) {
	n := len(got)
	procs := runtime.GOMAXPROCS(0)
	var wg sync.WaitGroup
	var mu sync.Mutex
	for p := range procs {
		wg.Go(func() {
			local := &gpuMismatches{}
			for i := p * n / procs; i < (p+1)*n/procs; i++ {
				x := uint64(start + uint32(i)*stride)
				if in != nil {
					x = in[i]
				}
				if want := conv.want(x); got[i] != want {
					local.add(conv, x, got[i], want)
				}
			}
			mu.Lock()
			m.merge(local)
			mu.Unlock()
		})
	}
	wg.Wait()
	m.inputs += n
}

// gpuMismatches counts the differences of one conversion, the NaN-only ones
// apart, and keeps the first few.
type gpuMismatches struct {
	inputs, n, nanOnly int
	first              []string
}

func (m *gpuMismatches) add(conv gpuConv, x, got, want uint64) {
	m.n++
	if conv.isNaN(got) && conv.isNaN(want) {
		m.nanOnly++
	}
	if len(m.first) < 10 {
		m.first = append(m.first, fmt.Sprintf("input %#0*x: GPU %#0*x, Go %#0*x", 2+2*conv.in, x, 2+2*conv.out, got, 2+2*conv.out, want))
	}
}

func (m *gpuMismatches) merge(o *gpuMismatches) {
	m.n += o.n
	m.nanOnly += o.nanOnly
	for _, s := range o.first {
		if len(m.first) < 10 {
			m.first = append(m.first, s)
		}
	}
}

func (m *gpuMismatches) report(t *testing.T, conv gpuConv) {
	t.Helper()
	if m.inputs == 0 {
		return // the kernel was missing, and said so
	}
	if m.n == 0 {
		t.Logf("%s: %d inputs, all equal", conv.kernel, m.inputs)
		return
	}
	msg := fmt.Sprintf("%s: %d of %d inputs differ (%d of them NaN on both sides, with different bits); first:\n\t%s",
		conv.kernel, m.n, m.inputs, m.nanOnly, strings.Join(m.first, "\n\t"))
	if conv.lenient && m.n == m.nanOnly {
		t.Log("(reported, not a failure) " + msg)
		return
	}
	t.Error(msg)
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// TestGPUConversions checks every conversion the GPU has an instruction
// for: widening every 16-bit and 8-bit pattern, narrowing the float32
// sweep (or all float32s) and the float64 sweep.
func TestGPUConversions(t *testing.T) {
	g := newGPU(t)
	available := func(t *testing.T, conv gpuConv) bool {
		if g.cc < conv.minCC {
			t.Logf("%s: skipped, it needs compute capability %d.%d", conv.kernel, conv.minCC/10, conv.minCC%10)
			return false
		}
		return true
	}
	t.Run("widen", func(t *testing.T) {
		for _, list := range []struct {
			convs []gpuConv
			n     int
		}{{gpuWiden16, 1 << 16}, {gpuWiden8, 1 << 8}} {
			for _, conv := range list.convs {
				if available(t, conv) {
					m := &gpuMismatches{}
					g.run(t, conv, nil, list.n, 0, 1, m)
					m.report(t, conv)
				}
			}
		}
	})
	t.Run("narrow32", func(t *testing.T) {
		var sweep []uint64
		for _, b := range sweep32() {
			sweep = append(sweep, uint64(b))
		}
		for _, conv := range gpuNarrow32 {
			if !available(t, conv) {
				continue
			}
			m := &gpuMismatches{}
			g.run(t, conv, sweep, 0, 0, 0, m)
			if exhaustive() {
				const chunk = 1 << 26 // inputs per launch
				for start := uint64(0); start < 1<<32; start += chunk {
					g.run(t, conv, nil, chunk, uint32(start), 1, m)
				}
			} else {
				// Every float32 whose low byte is 0x00, 0x01 or 0xff: each
				// tie point of every format (they all have zeros in the low
				// byte) and the inputs one ulp either side of it.
				for _, low := range []uint32{0x00, 0x01, 0xff} {
					for start := uint64(0); start < 1<<24; start += 1 << 22 {
						g.run(t, conv, nil, 1<<22, uint32(start)<<8|low, 1<<8, m)
					}
				}
			}
			m.report(t, conv)
		}
	})
	t.Run("narrow64", func(t *testing.T) {
		var sweep []uint64
		for _, f := range sweep64() {
			sweep = append(sweep, math.Float64bits(f))
		}
		for _, conv := range gpuNarrow64 {
			if available(t, conv) {
				m := &gpuMismatches{}
				g.run(t, conv, sweep, 0, 0, 0, m)
				m.report(t, conv)
			}
		}
	})
}

// The comparison of the GPU test, without a GPU: outputs made as the
// kernels would make them compare equal, and a changed one is found, with
// its input.
func TestGPUCompare(t *testing.T) {
	conv := gpuNarrow32[2] // f32_to_e4m3
	const n, start, stride = 5000, 0x3f800001, 1 << 8
	got := make([]uint64, n)
	for i := range got {
		got[i] = conv.want(uint64(uint32(start) + uint32(i)*stride))
	}
	m := &gpuMismatches{}
	compare(conv, nil, start, stride, got, m)
	if m.n != 0 || m.inputs != n {
		t.Fatalf("%d mismatches of %d inputs, want 0 of %d", m.n, m.inputs, n)
	}
	got[7] ^= 1
	compare(conv, nil, start, stride, got, m)
	if m.n != 1 || m.nanOnly != 0 || !strings.HasPrefix(m.first[0], fmt.Sprintf("input %#010x:", start+7*stride)) {
		t.Errorf("a changed output: %d mismatches (%d NaN), %q", m.n, m.nanOnly, m.first)
	}

	widen := gpuWiden16[0] // f16_to_f32
	in := []uint64{0x3c00, 0x7e01}
	m = &gpuMismatches{}
	compare(widen, in, 0, 0, []uint64{0x3f800000, 0x7fc02000}, m)
	if m.n != 1 || m.nanOnly != 1 {
		t.Errorf("a NaN with other bits: %d mismatches (%d NaN), %q", m.n, m.nanOnly, m.first)
	}
}
