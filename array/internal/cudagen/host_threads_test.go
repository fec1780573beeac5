package cudagen

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"

	"github.com/gocu-dev/gocu/array/internal/backend"
)

// threadedPrelude runs kernels with barriers and warp shuffles on the
// host. Every CUDA thread of a block is a user-level context (ucontext) on
// one OS thread; __syncthreads and the warp barriers inside shuffles are
// counting barriers whose waiters yield to a round-robin scheduler, so each
// thread sees exactly CUDA's ordering guarantees (block-wide for
// __syncthreads, warp-wide for shuffles) at a fraction of the cost of OS
// threads. Blocks run one after another.
const threadedPrelude = `#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <ucontext.h>
#define __global__
#define __device__
#define __forceinline__ inline
#define __launch_bounds__(...)
#define __shared__ static
struct gocu_dim3 { unsigned int x, y, z; };
static gocu_dim3 threadIdx, blockIdx, blockDim, gridDim;
struct gocu_barrier { int n, count; unsigned long long gen; };
static ucontext_t gocu_sched, gocu_ctx[256];
static char *gocu_stack[256];
static bool gocu_done[256];
static int gocu_cur;
static std::function<void()> gocu_fn;
static gocu_barrier gocu_bbar, gocu_wbar[8];
static unsigned long long gocu_slot[8][32];
static void gocu_yield() { swapcontext(&gocu_ctx[gocu_cur], &gocu_sched); threadIdx.x = gocu_cur; }
static void gocu_arrive(gocu_barrier &b) {
	unsigned long long g = b.gen;
	if (++b.count == b.n) { b.count = 0; b.gen++; return; }
	while (b.gen == g) gocu_yield();
}
static void __syncthreads() { gocu_arrive(gocu_bbar); }
// Blocks run one after another, so a fence has nothing to order and an
// atomic is a plain read-modify-write.
static void __threadfence() {}
static int atomicAdd(int *p, int v) { int o = *p; *p = o + v; return o; }
template <typename T> static T __shfl_down_sync(unsigned int, T v, int d, int = 32) {
	const int lane = threadIdx.x & 31, w = threadIdx.x >> 5;
	memcpy(&gocu_slot[w][lane], &v, sizeof(T));
	gocu_arrive(gocu_wbar[w]);
	T r = v;
	if (lane + d < 32) memcpy(&r, &gocu_slot[w][lane + d], sizeof(T));
	gocu_arrive(gocu_wbar[w]);
	return r;
}
static void gocu_entry() { gocu_fn(); gocu_done[gocu_cur] = true; swapcontext(&gocu_ctx[gocu_cur], &gocu_sched); }
static void gocu_init() {
	blockDim.x = 256;
	for (int t = 0; t < 256; t++) gocu_stack[t] = (char *)malloc(1 << 16);
}
static void gocu_finish() {}
template <typename F> static void gocu_launch(unsigned int grid, unsigned int block, F f) {
	if (block != 256) abort();
	gridDim.x = grid;
	gocu_fn = f;
	for (unsigned int b = 0; b < grid; b++) {
		blockIdx.x = b;
		gocu_bbar = {256, 0, 0};
		for (int w = 0; w < 8; w++) gocu_wbar[w] = {32, 0, 0};
		for (int t = 0; t < 256; t++) {
			getcontext(&gocu_ctx[t]);
			gocu_ctx[t].uc_stack.ss_sp = gocu_stack[t];
			gocu_ctx[t].uc_stack.ss_size = 1 << 16;
			gocu_ctx[t].uc_link = &gocu_sched;
			makecontext(&gocu_ctx[t], gocu_entry, 0);
			gocu_done[t] = false;
		}
		for (int live = 256; live > 0;) {
			live = 0;
			for (int t = 0; t < 256; t++) {
				if (gocu_done[t]) continue;
				gocu_cur = t;
				threadIdx.x = t;
				swapcontext(&gocu_sched, &gocu_ctx[t]);
				if (!gocu_done[t]) live++;
			}
		}
	}
}
static inline float __int_as_float(int i) { float f; memcpy(&f, &i, 4); return f; }
static inline double __longlong_as_double(long long i) { double f; memcpy(&f, &i, 8); return f; }
static inline long long __double_as_longlong(double f) { long long i; memcpy(&i, &f, 8); return i; }
static inline unsigned int __umulhi(unsigned int a, unsigned int b) { return (unsigned int)(((unsigned long long)a * b) >> 32); }
static inline float __fmul_rn(float a, float b) { return a * b; }
static inline double __dmul_rn(double a, double b) { return a * b; }
static inline double __dadd_rn(double a, double b) { return a + b; }
static inline double __dsub_rn(double a, double b) { return a - b; }
static inline double __ddiv_rn(double a, double b) { return a / b; }
static inline double __dsqrt_rn(double a) { return sqrt(a); }
static inline float __double2float_rn(double a) { return (float)a; }
static inline int __float_as_int(float f) { int i; memcpy(&i, &f, 4); return i; }
static inline float __double2float_rz(double a) { float f = (float)a; if (fabs((double)f) > fabs(a)) f = nextafterf(f, 0.0f); return f; }
`

func decode(dt backend.DType, raw []byte) string {
	if len(raw) > 64 {
		return decode(dt, raw[:64]) + "..."
	}
	switch dt {
	case backend.Float32:
		v := make([]float32, len(raw)/4)
		binary.Read(bytes.NewReader(raw), binary.LittleEndian, v)
		return fmt.Sprint(v)
	case backend.Float64:
		v := make([]float64, len(raw)/8)
		binary.Read(bytes.NewReader(raw), binary.LittleEndian, v)
		return fmt.Sprint(v)
	case backend.Int64:
		v := make([]int64, len(raw)/8)
		binary.Read(bytes.NewReader(raw), binary.LittleEndian, v)
		return fmt.Sprint(v)
	case backend.Int32:
		v := make([]int32, len(raw)/4)
		binary.Read(bytes.NewReader(raw), binary.LittleEndian, v)
		return fmt.Sprint(v)
	}
	return fmt.Sprint(raw)
}

// closeRaw compares outputs: integers and bools exactly, floats to 1e-6
// (float32: sums round once from float64 on both sides, but in a different
// order) or 1e-12, NaN equal to NaN.
func closeRaw(dt backend.DType, got, want []byte) bool {
	if !dt.IsFloat() {
		return bytes.Equal(got, want)
	}
	sz := dt.Size()
	for i := 0; i+sz <= len(want); i += sz {
		var g, w float64
		if dt == backend.Float32 {
			g = float64(math.Float32frombits(binary.LittleEndian.Uint32(got[i:])))
			w = float64(math.Float32frombits(binary.LittleEndian.Uint32(want[i:])))
		} else {
			g = math.Float64frombits(binary.LittleEndian.Uint64(got[i:]))
			w = math.Float64frombits(binary.LittleEndian.Uint64(want[i:]))
		}
		tol := 1e-6
		if dt == backend.Float64 {
			tol = 1e-12
		}
		if g == w || (math.IsNaN(g) && math.IsNaN(w)) {
			continue
		}
		if !(math.Abs(g-w) <= tol*math.Max(1, math.Abs(w))) {
			return false
		}
	}
	return true
}
