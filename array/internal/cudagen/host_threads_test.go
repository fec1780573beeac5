package cudagen

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"

	"github.com/gocu-dev/gocu/array/internal/backend"
)

// threadedPrelude runs kernels with barriers and warp shuffles on the
// host: every CUDA thread of a block is an OS thread, __syncthreads is a
// block-wide barrier, and a warp shuffle exchanges values through a slot
// per lane between two warp-wide barriers. Blocks run one after another.
const threadedPrelude = `#include <barrier>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <thread>
#include <vector>
#define __global__
#define __device__
#define __forceinline__ inline
#define __launch_bounds__(...)
#define __shared__ static
struct gocu_dim3 { unsigned int x, y, z; };
static thread_local gocu_dim3 threadIdx, blockIdx;
static gocu_dim3 blockDim, gridDim;
static std::barrier<> *gocu_bar;
static std::barrier<> *gocu_wbar[32];
static unsigned long long gocu_slot[32][32];
static void __syncthreads() { gocu_bar->arrive_and_wait(); }
template <typename T> static T __shfl_down_sync(unsigned int, T v, int d, int = 32) {
	const int lane = threadIdx.x & 31, w = threadIdx.x >> 5;
	memcpy(&gocu_slot[w][lane], &v, sizeof(T));
	gocu_wbar[w]->arrive_and_wait();
	T r = v;
	if (lane + d < 32) memcpy(&r, &gocu_slot[w][lane + d], sizeof(T));
	gocu_wbar[w]->arrive_and_wait();
	return r;
}
// A persistent pool of 256 threads runs every launch (blocks in turn).
#include <functional>
static std::function<void()> gocu_fn;
static unsigned int gocu_grid;
static bool gocu_quit;
static std::barrier<> *gocu_start, *gocu_done;
static std::vector<std::thread> gocu_pool;
static void gocu_worker(unsigned int t) {
	for (;;) {
		gocu_start->arrive_and_wait();
		if (gocu_quit) return;
		for (unsigned int b = 0; b < gocu_grid; b++) {
			threadIdx.x = t; blockIdx.x = b;
			gocu_fn();
			gocu_bar->arrive_and_wait();
		}
		gocu_done->arrive_and_wait();
	}
}
static void gocu_init() {
	blockDim.x = 256;
	gocu_bar = new std::barrier<>(256);
	for (int w = 0; w < 8; w++) gocu_wbar[w] = new std::barrier<>(32);
	gocu_start = new std::barrier<>(257);
	gocu_done = new std::barrier<>(257);
	for (unsigned int t = 0; t < 256; t++) gocu_pool.emplace_back(gocu_worker, t);
}
static void gocu_finish() {
	gocu_quit = true;
	gocu_start->arrive_and_wait();
	for (auto &t : gocu_pool) t.join();
}
template <typename F> static void gocu_launch(unsigned int grid, unsigned int block, F f) {
	if (block != 256) abort();
	gridDim.x = grid;
	gocu_grid = grid;
	gocu_fn = f;
	gocu_start->arrive_and_wait();
	gocu_done->arrive_and_wait();
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
