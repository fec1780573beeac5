package frame

import (
	"fmt"
	"strings"
	"sync"

	"github.com/gocu-dev/gocu"
	"github.com/gocu-dev/gocu/array"
)

// The GPU's hash table and group reductions, CUDA C compiled at run time
// (gocu.Compile), one module per device and pair of value and
// accumulator types. The table is open addressing with linear probing:
// a power-of-two array of int64 keys, empty slots holding a key the data
// lacks, filled by atomicCAS. The group reductions keep each block's
// accumulators in shared memory (for few groups, where global atomics on
// the same addresses would queue), then add them to the result with one
// global atomic per group and block.

const hashTemplate = `
typedef long long i64;
typedef unsigned long long u64;
typedef %[1]s T; // the values' type
typedef %[2]s A; // the sums' type: long long or double
typedef %[3]s K; // the keys' type: int or long long

#ifndef GOCU_HOST
#define GOCU_SHARED(type, name) extern __shared__ __align__(8) unsigned char gocu_smem[]; type* name = (type*)gocu_smem
#endif

// splitmix64's finaliser: consecutive keys land far apart.
__device__ __forceinline__ u64 gocu_mix(u64 k) {
    k ^= k >> 33;
    k *= 0xff51afd7ed558ccdULL;
    k ^= k >> 33;
    k *= 0xc4ceb9fe1a85ec53ULL;
    k ^= k >> 33;
    return k;
}

#define GRID_STRIDE(i, n) for (i64 i = (i64)blockIdx.x * blockDim.x + threadIdx.x; i < (n); i += (i64)gridDim.x * blockDim.x)

// Puts each of the n keys in the table of mask+1 slots (all empty at
// first) and writes the slot that holds it to slot.
extern "C" __global__ void gocu_hash_insert(const K* __restrict__ key, i64 n, i64* slots, i64 mask, i64 empty,
                                            i64* __restrict__ slot) {
    GRID_STRIDE(i, n) {
        u64 k = (u64)(i64)key[i];
        u64 h = gocu_mix(k) & (u64)mask;
        for (;;) {
            u64 cur = ((volatile u64*)slots)[h];
            if (cur == k) break;
            if (cur == (u64)empty) {
                cur = atomicCAS((u64*)slots + h, (u64)empty, k);
                if (cur == (u64)empty || cur == k) break;
            }
            h = (h + 1) & (u64)mask;
        }
        slot[i] = (i64)h;
    }
}

// Looks each of the n keys up in the table: slot is the slot holding it,
// or -1 where the table lacks it.
extern "C" __global__ void gocu_hash_find(const K* __restrict__ key, i64 n, const i64* __restrict__ slots, i64 mask,
                                          i64 empty, i64* __restrict__ slot) {
    GRID_STRIDE(i, n) {
        i64 k = (i64)key[i];
        i64 s = -1;
        if (k != empty) {
            u64 h = gocu_mix((u64)k) & (u64)mask;
            for (;;) {
                i64 cur = slots[h];
                if (cur == k) {
                    s = (i64)h;
                    break;
                }
                if (cur == empty) break;
                h = (h + 1) & (u64)mask;
            }
        }
        slot[i] = s;
    }
}

__device__ __forceinline__ void gocu_add(i64* p, i64 v) { atomicAdd((u64*)p, (u64)v); }
__device__ __forceinline__ void gocu_add(double* p, double v) { atomicAdd(p, v); }

__device__ __forceinline__ void gocu_max(int* p, int v) { atomicMax(p, v); }
__device__ __forceinline__ void gocu_min(int* p, int v) { atomicMin(p, v); }
__device__ __forceinline__ void gocu_max(i64* p, i64 v) { atomicMax(p, v); }
__device__ __forceinline__ void gocu_min(i64* p, i64 v) { atomicMin(p, v); }
// Floats by compare and swap; NaN never arrives (the caller masks it).
__device__ __forceinline__ void gocu_max(float* p, float v) {
    unsigned* q = (unsigned*)p;
    unsigned old = *(volatile unsigned*)q;
    while (__uint_as_float(old) < v) {
        unsigned got = atomicCAS(q, old, __float_as_uint(v));
        if (got == old) break;
        old = got;
    }
}
__device__ __forceinline__ void gocu_min(float* p, float v) {
    unsigned* q = (unsigned*)p;
    unsigned old = *(volatile unsigned*)q;
    while (__uint_as_float(old) > v) {
        unsigned got = atomicCAS(q, old, __float_as_uint(v));
        if (got == old) break;
        old = got;
    }
}
__device__ __forceinline__ void gocu_max(double* p, double v) {
    u64* q = (u64*)p;
    u64 old = *(volatile u64*)q;
    while (__longlong_as_double((i64)old) < v) {
        u64 got = atomicCAS(q, old, (u64)__double_as_longlong(v));
        if (got == old) break;
        old = got;
    }
}
__device__ __forceinline__ void gocu_min(double* p, double v) {
    u64* q = (u64*)p;
    u64 old = *(volatile u64*)q;
    while (__longlong_as_double((i64)old) > v) {
        u64 got = atomicCAS(q, old, (u64)__double_as_longlong(v));
        if (got == old) break;
        old = got;
    }
}

// Adds x (where ok, when hasOK) into out[key-lo] for n rows of g groups
// (key-lo is the group of a row).
extern "C" __global__ void gocu_group_sum(const K* __restrict__ key, i64 lo, const T* __restrict__ x,
                                          const unsigned char* __restrict__ ok, int hasOK, i64 n, A* out, int g) {
    GOCU_SHARED(A, acc);
    for (int j = threadIdx.x; j < g; j += blockDim.x) acc[j] = 0;
    __syncthreads();
    GRID_STRIDE(i, n) {
        if (hasOK && !ok[i]) continue;
        gocu_add(&acc[key[i] - lo], (A)x[i]);
    }
    __syncthreads();
    for (int j = threadIdx.x; j < g; j += blockDim.x)
        if (acc[j] != 0) gocu_add(&out[j], acc[j]);
}

// Counts the rows (where ok, when hasOK) of each of g groups into out.
extern "C" __global__ void gocu_group_count(const K* __restrict__ key, i64 lo, const unsigned char* __restrict__ ok, int hasOK,
                                            i64 n, i64* out, int g) {
    GOCU_SHARED(i64, acc);
    for (int j = threadIdx.x; j < g; j += blockDim.x) acc[j] = 0;
    __syncthreads();
    GRID_STRIDE(i, n) {
        if (hasOK && !ok[i]) continue;
        gocu_add(&acc[key[i] - lo], (i64)1);
    }
    __syncthreads();
    for (int j = threadIdx.x; j < g; j += blockDim.x)
        if (acc[j] != 0) gocu_add(&out[j], acc[j]);
}

// The first row of each of g groups into out, which holds n (no row) or
// less on entry.
extern "C" __global__ void gocu_group_first(const K* __restrict__ key, i64 lo, i64 n, i64* out, int g) {
    GOCU_SHARED(i64, acc);
    for (int j = threadIdx.x; j < g; j += blockDim.x) acc[j] = n;
    __syncthreads();
    GRID_STRIDE(i, n) { gocu_min(&acc[key[i] - lo], i); }
    __syncthreads();
    for (int j = threadIdx.x; j < g; j += blockDim.x)
        if (acc[j] != n) gocu_min(&out[j], acc[j]);
}

// The largest (most > 0) or smallest x (where ok, when hasOK) of each of
// g groups into out, which holds the identity (or a bound) on entry.
extern "C" __global__ void gocu_group_extreme(const K* __restrict__ key, i64 lo, const T* __restrict__ x,
                                              const unsigned char* __restrict__ ok, int hasOK, i64 n, T* out, int g,
                                              int most) {
    GOCU_SHARED(T, acc);
    for (int j = threadIdx.x; j < g; j += blockDim.x) acc[j] = out[j];
    __syncthreads();
    GRID_STRIDE(i, n) {
        if (hasOK && !ok[i]) continue;
        if (most) gocu_max(&acc[key[i] - lo], x[i]);
        else gocu_min(&acc[key[i] - lo], x[i]);
    }
    __syncthreads();
    for (int j = threadIdx.x; j < g; j += blockDim.x) {
        if (most) gocu_max(&out[j], acc[j]);
        else gocu_min(&out[j], acc[j]);
    }
}
`

// hashSource returns the CUDA C of the table and group kernels for values
// of dtype val (int32, int64, float32 or float64) and keys of dtype key
// (int32 or int64).
func hashSource(val, key array.DType) string {
	return strings.TrimSpace(fmt.Sprintf(hashTemplate, hashCType(val), hashCType(accType(val)), hashCType(key))) + "\n"
}

func hashCType(dt array.DType) string {
	switch dt {
	case array.Int32:
		return "int"
	case array.Int64:
		return "long long"
	case array.Float32:
		return "float"
	}
	return "double"
}

// accType is the dtype of sums of val.
func accType(val array.DType) array.DType {
	if val.IsFloating() {
		return array.Float64
	}
	return array.Int64
}

// kernelDType reports whether the group kernels take values of dt.
func kernelDType(dt array.DType) bool {
	return dt == array.Int32 || dt == array.Int64 || dt == array.Float32 || dt == array.Float64
}

type hashKernels struct {
	insert, find, sum, count, first, extreme *gocu.Kernel
}

type hashKey struct {
	dev      *gocu.Device
	val, key array.DType
}

var hashCache sync.Map // hashKey -> *hashKernels

func hashModule(dev *gocu.Device, val, key array.DType) (*hashKernels, error) {
	k := hashKey{dev, val, key}
	if ks, ok := hashCache.Load(k); ok {
		return ks.(*hashKernels), nil
	}
	mod, err := dev.Compile(hashSource(val, key), gocu.Name("gocu_frame_hash.cu"))
	if err != nil {
		return nil, fmt.Errorf("compiling the hash kernels: %w", err)
	}
	ks := &hashKernels{}
	for name, dst := range map[string]**gocu.Kernel{
		"gocu_hash_insert": &ks.insert, "gocu_hash_find": &ks.find, "gocu_group_sum": &ks.sum,
		"gocu_group_count": &ks.count, "gocu_group_first": &ks.first, "gocu_group_extreme": &ks.extreme,
	} {
		if *dst, err = mod.Kernel(name); err != nil {
			return nil, err
		}
	}
	got, _ := hashCache.LoadOrStore(k, ks)
	return got.(*hashKernels), nil
}

func dim1(x int) gocu.Dim3 { return gocu.Dim3{X: int32(x), Y: 1, Z: 1} }

// gridStride is the launch of a grid-stride kernel over n rows.
func gridStride(n int) gocu.Config {
	const block = 256
	return gocu.Config{Grid: dim1(min(max((n+block-1)/block, 1), 65535*8)), Block: dim1(block)}
}

// groupLaunch is the launch of a group kernel over n rows of g groups,
// with g accumulators of size bytes in each block's shared memory: fewer
// blocks for more groups, so that their final global atomics stay few.
func groupLaunch(n, g, size int) gocu.Config {
	const block = 256
	blocks := min(max(n/(block*16), 1), 1024, max(n/(4*g), 1))
	return gocu.Config{Grid: dim1(blocks), Block: dim1(block), Shared: g * size}
}
