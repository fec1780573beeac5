package nn

import (
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"

	"github.com/gocu-dev/gocu"
	"github.com/gocu-dev/gocu/array"
	"github.com/gocu-dev/gocu/grad"
)

// Fused kernels for the non-matrix work of a transformer step on a GPU:
// LayerNorm forward and backward, GELU forward and backward, and the
// classifier (softmax, cross-entropy and its gradient). CUDA C compiled at
// run time (gocu.Compile), one module per device and pair of dtypes (the
// input's, the output's): float32 or bfloat16 in memory, float32 inside.
// The composed array operations compute the same on the CPU and the
// simulator, and on a GPU when GOCU_NOFUSE is set (to compare the two).

const fusedTemplate = `
typedef unsigned short bf16;
#define NEG_INF (-__int_as_float(0x7f800000)) // NVRTC has no math.h for INFINITY
typedef %[1]s TI; // the input's dtype
typedef %[2]s TO; // the output's dtype

__device__ __forceinline__ float ld(float v) { return v; }
__device__ __forceinline__ float ld(bf16 v) { return __uint_as_float(((unsigned)v) << 16); }
__device__ __forceinline__ void st(float* p, long long i, float v) { p[i] = v; }
// Round to nearest even, as array's conversion; NaN stays NaN.
__device__ __forceinline__ void st(bf16* p, long long i, float v) {
    unsigned u = __float_as_uint(v);
    if ((u & 0x7fffffffu) > 0x7f800000u) {
        p[i] = (bf16)((u >> 16) | 0x40u);
        return;
    }
    u += 0x7fffu + ((u >> 16) & 1u);
    p[i] = (bf16)(u >> 16);
}

__device__ __forceinline__ float warpSum(float v) {
    for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o, 32);
    return v;
}

__device__ __forceinline__ float warpMax(float v) {
    for (int o = 16; o > 0; o >>= 1) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o, 32));
    return v;
}

// V8 is 8 values of T that move as 16-byte accesses: one for bfloat16,
// two for float32. Rows of c values, c a multiple of 8, at 16-byte aligned
// addresses take them (al16).
template <class T> struct alignas(16) V8 {
    T v[8];
};

__device__ __forceinline__ bool al16(const void* p) { return (((unsigned long long)p) & 15) == 0; }

template <class T> __device__ __forceinline__ V8<T> ld8(const T* p, long long i) { return *(const V8<T>*)(p + i); }
template <class T> __device__ __forceinline__ void st8(T* p, long long i, const V8<T>& v) { *(V8<T>*)(p + i) = v; }

// LayerNorm forward: a warp per row of c values; y = (x-mean)·rstd·w + b.
// With rms set it is RMSNorm's: the mean is taken as 0 (and b is zeros).
extern "C" __global__ void gocu_ln_fwd(const TI* __restrict__ x, const float* __restrict__ w, const float* __restrict__ b,
                                       TO* __restrict__ y, float* __restrict__ mean, float* __restrict__ rstd,
                                       long long n, int c, float eps, int rms) {
    int lane = threadIdx.x & 31;
    long long row = (long long)blockIdx.x * (blockDim.x >> 5) + (threadIdx.x >> 5);
    if (row >= n) return;
    const TI* xr = x + row * c;
    TO* yr = y + row * c;
    float m = 0.0f, v = 0.0f;
    if (c %% 8 == 0 && al16(x) && al16(y) && al16(w) && al16(b)) {
        if (!rms) {
            float s = 0.0f;
            for (int j = lane * 8; j < c; j += 256) {
                V8<TI> a = ld8(xr, j);
#pragma unroll
                for (int k = 0; k < 8; k++) s += ld(a.v[k]);
            }
            m = warpSum(s) / (float)c;
        }
        for (int j = lane * 8; j < c; j += 256) {
            V8<TI> a = ld8(xr, j);
#pragma unroll
            for (int k = 0; k < 8; k++) {
                float d = ld(a.v[k]) - m;
                v += d * d;
            }
        }
        float r = 1.0f / sqrtf(warpSum(v) / (float)c + eps);
        for (int j = lane * 8; j < c; j += 256) {
            V8<TI> a = ld8(xr, j);
            V8<TO> o;
#pragma unroll
            for (int k = 0; k < 8; k++) st(o.v, k, (ld(a.v[k]) - m) * r * w[j + k] + b[j + k]);
            st8(yr, j, o);
        }
        if (lane == 0) {
            mean[row] = m;
            rstd[row] = r;
        }
        return;
    }
    if (!rms) {
        float s = 0.0f;
        for (int i = lane; i < c; i += 32) s += ld(xr[i]);
        m = warpSum(s) / (float)c;
    }
    for (int i = lane; i < c; i += 32) {
        float d = ld(xr[i]) - m;
        v += d * d;
    }
    float r = 1.0f / sqrtf(warpSum(v) / (float)c + eps);
    for (int i = lane; i < c; i += 32) st(yr, i, (ld(xr[i]) - m) * r * w[i] + b[i]);
    if (lane == 0) {
        mean[row] = m;
        rstd[row] = r;
    }
}

// lnAccAt is column j's place (j < 1024) among a warp's column sums in
// gocu_ln_bwd: in the vector path the lanes touch distinct banks.
__device__ __forceinline__ int lnAccAt(int j) { return ((j >> 8) * 8 + (j & 7)) * 32 + ((j >> 3) & 31); }

// LayerNorm backward: a warp per row for dx. With rms set it is RMSNorm's,
// whose dx lacks the mean's term. With part (rows of at most 1024), each
// warp also sums dy·x̂ and dy of its rows per column in shared memory
// (2048 floats a warp), and the block writes their sums, warp by warp,
// into part (2c per block) for gocu_ln_wsum: the weight and bias
// gradients without a second read of dy and x, nor atomics. Without
// part, gocu_ln_dwdb computes them.
extern "C" __global__ void gocu_ln_bwd(const TO* __restrict__ dy, const TI* __restrict__ x, const float* __restrict__ w,
                                       const float* __restrict__ mean, const float* __restrict__ rstd,
                                       TI* __restrict__ dx, float* __restrict__ part, long long n, int c, int rms) {
    extern __shared__ float lnAcc[];
    int lane = threadIdx.x & 31, warps = blockDim.x >> 5;
    bool vec = c %% 8 == 0 && al16(dy) && al16(x) && al16(w) && al16(dx);
    float* acc = part ? lnAcc + (threadIdx.x >> 5) * 2048 : nullptr;
    if (acc) {
        for (int i = lane; i < 2048; i += 32) acc[i] = 0.0f;
        __syncwarp();
    }
    for (long long row = (long long)blockIdx.x * warps + (threadIdx.x >> 5); row < n; row += (long long)gridDim.x * warps) {
        const TI* xr = x + row * c;
        const TO* gr = dy + row * c;
        TI* dr = dx + row * c;
        float m = mean[row], r = rstd[row];
        float a = 0.0f, bx = 0.0f;
        if (vec && c <= 1024) {
            // Rows of up to 1024 (GPT-2's 768) stay in registers between
            // the two passes, which add in the same order as below.
            V8<TI> xa[4];
            V8<TO> ga[4];
#pragma unroll
            for (int q = 0; q < 4; q++) {
                int j = lane * 8 + q * 256;
                if (j < c) {
                    xa[q] = ld8(xr, j);
                    ga[q] = ld8(gr, j);
                }
            }
#pragma unroll
            for (int q = 0; q < 4; q++) {
                int j = lane * 8 + q * 256;
                if (j < c) {
#pragma unroll
                    for (int k = 0; k < 8; k++) {
                        float dn = ld(ga[q].v[k]) * w[j + k];
                        a += dn;
                        bx += dn * ((ld(xa[q].v[k]) - m) * r);
                    }
                }
            }
            a = rms ? 0.0f : warpSum(a) / (float)c;
            bx = warpSum(bx) / (float)c;
#pragma unroll
            for (int q = 0; q < 4; q++) {
                int j = lane * 8 + q * 256;
                if (j < c) {
                    V8<TI> o;
#pragma unroll
                    for (int k = 0; k < 8; k++) {
                        float g = ld(ga[q].v[k]), xh = (ld(xa[q].v[k]) - m) * r;
                        st(o.v, k, (g * w[j + k] - a - xh * bx) * r);
                        if (acc) {
                            int p = lnAccAt(j + k);
                            acc[p] += g * xh;
                            acc[p + 1024] += g;
                        }
                    }
                    st8(dr, j, o);
                }
            }
            continue;
        }
        if (vec) {
            // The second pass reads the row again, from L1 most often.
            for (int j = lane * 8; j < c; j += 256) {
                V8<TI> xa = ld8(xr, j);
                V8<TO> ga = ld8(gr, j);
#pragma unroll
                for (int k = 0; k < 8; k++) {
                    float dn = ld(ga.v[k]) * w[j + k];
                    a += dn;
                    bx += dn * ((ld(xa.v[k]) - m) * r);
                }
            }
            a = rms ? 0.0f : warpSum(a) / (float)c;
            bx = warpSum(bx) / (float)c;
            for (int j = lane * 8; j < c; j += 256) {
                V8<TI> xa = ld8(xr, j), o;
                V8<TO> ga = ld8(gr, j);
#pragma unroll
                for (int k = 0; k < 8; k++) {
                    float xh = (ld(xa.v[k]) - m) * r;
                    st(o.v, k, (ld(ga.v[k]) * w[j + k] - a - xh * bx) * r);
                }
                st8(dr, j, o);
            }
            continue;
        }
        for (int i = lane; i < c; i += 32) {
            float dn = ld(gr[i]) * w[i];
            a += dn;
            bx += dn * ((ld(xr[i]) - m) * r);
        }
        a = rms ? 0.0f : warpSum(a) / (float)c;
        bx = warpSum(bx) / (float)c;
        for (int i = lane; i < c; i += 32) {
            float g = ld(gr[i]), xh = (ld(xr[i]) - m) * r;
            st(dr, i, (g * w[i] - a - xh * bx) * r);
            if (acc) {
                int p = lnAccAt(i);
                acc[p] += g * xh;
                acc[p + 1024] += g;
            }
        }
    }
    if (part) {
        __syncthreads();
        for (int col = threadIdx.x; col < 2 * c; col += blockDim.x) {
            int p = col < c ? lnAccAt(col) : lnAccAt(col - c) + 1024;
            float s = 0.0f;
            for (int k = 0; k < warps; k++) s += lnAcc[k * 2048 + p];
            part[(long long)blockIdx.x * 2 * c + col] = s;
        }
    }
}

// LayerNorm's weight and bias gradients, the same bits on every run (the
// shared-memory atomics they replace were not): block b sums dy·x̂ and dy
// for 32 columns (tile b %% tiles) over the rows of chunk b / tiles, in 8
// row lanes added in a fixed order, into part (2c per chunk).
extern "C" __global__ void gocu_ln_dwdb(const TO* __restrict__ dy, const TI* __restrict__ x,
                                        const float* __restrict__ mean, const float* __restrict__ rstd,
                                        float* __restrict__ part, long long n, int c, int chunks) {
    __shared__ float sa[8][33], sb[8][33];
    int tiles = (c + 31) / 32;
    int tile = blockIdx.x %% tiles, chunk = blockIdx.x / tiles;
    int tx = threadIdx.x & 31, ty = threadIdx.x >> 5;
    int j = tile * 32 + tx;
    long long per = (n + chunks - 1) / chunks;
    long long r0 = (long long)chunk * per, r1 = r0 + per < n ? r0 + per : n;
    float a = 0.0f, b = 0.0f;
    if (j < c)
        for (long long r = r0 + ty; r < r1; r += 8) {
            float g = ld(dy[r * c + j]);
            a += g * ((ld(x[r * c + j]) - mean[r]) * rstd[r]);
            b += g;
        }
    sa[ty][tx] = a;
    sb[ty][tx] = b;
    __syncthreads();
    if (ty == 0 && j < c) {
        for (int k = 1; k < 8; k++) {
            a += sa[k][tx];
            b += sb[k][tx];
        }
        part[(long long)chunk * 2 * c + j] = a;
        part[(long long)chunk * 2 * c + c + j] = b;
    }
}

// colSum is the sum of column blockIdx.x*32 + lane over blocks rows of w
// partial sums, in a block of 32 columns by 8 row groups whose groups are
// added in shared memory in a fixed order: the result, in the first warp.
__device__ __forceinline__ float colSum(const float* __restrict__ part, int blocks, int w) {
    __shared__ float sum[8][33];
    int tx = threadIdx.x & 31, ty = threadIdx.x >> 5;
    int i = blockIdx.x * 32 + tx;
    float s = 0.0f;
    if (i < w)
        for (int k = ty; k < blocks; k += 8) s += part[(long long)k * w + i];
    sum[ty][tx] = s;
    __syncthreads();
    if (ty == 0)
        for (int k = 1; k < 8; k++) s += sum[k][tx];
    return s;
}

// LayerNorm's weight and bias gradients: the column sums of the 2c
// partials per chunk of gocu_ln_dwdb.
extern "C" __global__ void gocu_ln_wsum(const float* __restrict__ part, float* __restrict__ dw, float* __restrict__ db,
                                        int blocks, int c) {
    int i = blockIdx.x * 32 + (threadIdx.x & 31);
    float s = colSum(part, blocks, 2 * c);
    if (threadIdx.x >= 32 || i >= 2 * c) return;
    if (i < c) dw[i] = s;
    else db[i - c] = s;
}

#define SQRT_2_PI 0.7978845608028654f
#define GELU_K 0.044715f

__device__ __forceinline__ float gelu(float x, int tanhForm) {
    if (tanhForm) return 0.5f * x * (1.0f + tanhf(SQRT_2_PI * (x + GELU_K * x * x * x)));
    return 0.5f * x * (1.0f + erff(x * 0.7071067811865476f));
}

__device__ __forceinline__ float geluGrad(float x, int tanhForm) {
    if (tanhForm) {
        float u = SQRT_2_PI * (x + GELU_K * x * x * x);
        float t = tanhf(u);
        return 0.5f * (1.0f + t) + 0.5f * x * (1.0f - t * t) * SQRT_2_PI * (1.0f + 3.0f * GELU_K * x * x);
    }
    return 0.5f * (1.0f + erff(x * 0.7071067811865476f)) + x * 0.3989422804014327f * expf(-0.5f * x * x);
}

// GELU forward: y = gelu(x) elementwise, TI in, TO out.
extern "C" __global__ void gocu_gelu_fwd(const TI* __restrict__ x, TO* __restrict__ y, long long n, int tanhForm) {
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x)
        st(y, i, gelu(ld(x[i]), tanhForm));
}

// GELU backward: dx = dy·gelu'(x), dy of the output's dtype, dx the input's.
extern "C" __global__ void gocu_gelu_bwd(const TI* __restrict__ x, const TO* __restrict__ dy, TI* __restrict__ dx,
                                         long long n, int tanhForm) {
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x)
        st(dx, i, ld(dy[i]) * geluGrad(ld(x[i]), tanhForm));
}

// Bias and GELU forward: y = gelu(x + b), b broadcast along rows of c.
extern "C" __global__ void gocu_bias_gelu_fwd(const TI* __restrict__ x, const float* __restrict__ b, TO* __restrict__ y,
                                              long long n, int c, int tanhForm) {
    // A block per row, threads along it: no 64-bit i %% c per element,
    // which cost more than the memory traffic (258 us at 16384x3072 on an H200).
    long long rows = n / c;
    bool vec = c %% 8 == 0 && al16(x) && al16(b) && al16(y);
    for (long long r = blockIdx.x; r < rows; r += gridDim.x) {
        const TI* __restrict__ xr = x + r * c;
        TO* __restrict__ yr = y + r * c;
        if (vec) {
            for (int j = threadIdx.x * 8; j < c; j += blockDim.x * 8) {
                V8<TI> a = ld8(xr, j);
                V8<TO> o;
#pragma unroll
                for (int k = 0; k < 8; k++) st(o.v, k, gelu(ld(a.v[k]) + b[j + k], tanhForm));
                st8(yr, j, o);
            }
            continue;
        }
        for (int j = threadIdx.x; j < c; j += blockDim.x) st(yr, j, gelu(ld(xr[j]) + b[j], tanhForm));
    }
}

// Bias and GELU backward: dx = dy·gelu'(x + b) over rows r0..r1 of block
// rows each, and the block's column sums of dx (float32, before rounding)
// in part, which gocu_colsum adds up for db. A thread takes 8 columns at
// once where the rows allow 16-byte accesses, each column's sum in the
// same order either way.
extern "C" __global__ void gocu_bias_gelu_bwd(const TI* __restrict__ x, const float* __restrict__ b,
                                              const TO* __restrict__ dy, TI* __restrict__ dx, float* __restrict__ part,
                                              long long rows, int c, int per, int tanhForm) {
    long long r0 = (long long)blockIdx.x * per, r1 = r0 + per < rows ? r0 + per : rows;
    if (c %% 8 == 0 && al16(x) && al16(b) && al16(dy) && al16(dx) && al16(part)) {
        for (int j = threadIdx.x * 8; j < c; j += blockDim.x * 8) {
            float bj[8], acc[8];
#pragma unroll
            for (int k = 0; k < 8; k++) {
                bj[k] = b[j + k];
                acc[k] = 0.0f;
            }
            for (long long r = r0; r < r1; r++) {
                long long i = r * c + j;
                V8<TI> xa = ld8(x, i), o;
                V8<TO> ga = ld8(dy, i);
#pragma unroll
                for (int k = 0; k < 8; k++) {
                    float d = ld(ga.v[k]) * geluGrad(ld(xa.v[k]) + bj[k], tanhForm);
                    st(o.v, k, d);
                    acc[k] += d;
                }
                st8(dx, i, o);
            }
#pragma unroll
            for (int k = 0; k < 8; k++) part[(long long)blockIdx.x * c + j + k] = acc[k];
        }
        return;
    }
    for (int j = threadIdx.x; j < c; j += blockDim.x) {
        float bj = b[j], acc = 0.0f;
        for (long long r = r0; r < r1; r++) {
            long long i = r * c + j;
            float d = ld(dy[i]) * geluGrad(ld(x[i]) + bj, tanhForm);
            st(dx, i, d);
            acc += d;
        }
        part[(long long)blockIdx.x * c + j] = acc;
    }
}

// The column sums of blocks rows of c partial sums.
extern "C" __global__ void gocu_colsum(const float* __restrict__ part, float* __restrict__ out, int blocks, int c) {
    int i = blockIdx.x * 32 + (threadIdx.x & 31);
    float s = colSum(part, blocks, c);
    if (threadIdx.x < 32 && i < c) out[i] = s;
}

// blockMaxSum combines each thread's running maximum m and sum s of
// exp(x-m) over the block (blockDim.x a multiple of 32, at most 1024).
__device__ __forceinline__ void blockMaxSum(float& m, float& s) {
    __shared__ float sm[32], ss[32];
    int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, warps = blockDim.x >> 5;
    float wm = warpMax(m);
    s = warpSum(m == NEG_INF ? s : s * expf(m - wm)); // s is 0 where m is -inf
    m = wm;
    if (lane == 0) {
        sm[warp] = m;
        ss[warp] = s;
    }
    __syncthreads();
    float bm = NEG_INF;
    for (int k = 0; k < warps; k++) bm = fmaxf(bm, sm[k]);
    float bs = 0.0f;
    for (int k = 0; k < warps; k++) bs += sm[k] == NEG_INF ? ss[k] : ss[k] * expf(sm[k] - bm);
    m = bm;
    s = bs;
}

// Vec is 16 bytes of TI: the classifier moves its rows in these when
// every row starts aligned (x aligned, c a multiple of VN).
#define VN ((int)(16 / sizeof(TI)))
struct alignas(16) Vec {
    TI v[16 / sizeof(TI)];
};

__device__ __forceinline__ bool vecRows(const void* x, const void* y, int c) {
    return ((((unsigned long long)x) | ((unsigned long long)y)) & 15) == 0 && c %% VN == 0;
}

// foldVec adds the VN values of a to the running maximum m and sum s of
// exp(x-m), with one rescale for the lot; nan records a NaN among them.
__device__ __forceinline__ void foldVec(const Vec& a, float& m, float& s, bool& nan) {
    float v[VN];
    float mx = NEG_INF;
#pragma unroll
    for (int j = 0; j < VN; j++) {
        v[j] = ld(a.v[j]);
        nan |= v[j] != v[j];
        mx = fmaxf(mx, v[j]);
    }
    if (mx > m) {
        s = m == NEG_INF ? 0.0f : s * expf(m - mx);
        m = mx;
    }
    if (m > NEG_INF) {
#pragma unroll
        for (int j = 0; j < VN; j++) s += expf(v[j] - m);
    }
}

// rowLse is the logsumexp of the row xr of c logits, in every thread of
// the block; NaN if the row holds one. With vec and sv, each thread keeps
// the vectors it read in sv (shared memory) for rowGrad to read back.
__device__ __forceinline__ float rowLse(const TI* __restrict__ xr, int c, bool vec, Vec* sv) {
    float m = NEG_INF, s = 0.0f;
    bool nan = false;
    const int B = blockDim.x;
    int i = threadIdx.x;
    if (vec) {
        // Two 16-byte loads in flight per thread: a 50304-wide bf16 row is
        // six or seven of them for each of 1024 threads.
        const Vec* __restrict__ xv = (const Vec*)xr;
        const int nv = c / VN;
        for (; i + B < nv; i += 2 * B) {
            Vec a = xv[i], b = xv[i + B];
            if (sv) {
                sv[i] = a;
                sv[i + B] = b;
            }
            foldVec(a, m, s, nan);
            foldVec(b, m, s, nan);
        }
        if (i < nv) {
            Vec a = xv[i];
            if (sv) sv[i] = a;
            foldVec(a, m, s, nan);
        }
    } else {
        // Four independent loads in flight, and one rescale per four: the
        // element-by-element form was latency-bound (850 GB/s on an H200).
        for (; i + 3 * B < c; i += 4 * B) {
            float v0 = ld(xr[i]), v1 = ld(xr[i + B]), v2 = ld(xr[i + 2 * B]), v3 = ld(xr[i + 3 * B]);
            nan |= (v0 != v0) | (v1 != v1) | (v2 != v2) | (v3 != v3);
            float mx = fmaxf(fmaxf(v0, v1), fmaxf(v2, v3));
            if (mx > m) {
                s = m == NEG_INF ? 0.0f : s * expf(m - mx);
                m = mx;
            }
            if (m > NEG_INF) s += expf(v0 - m) + expf(v1 - m) + expf(v2 - m) + expf(v3 - m);
        }
        for (; i < c; i += B) {
            float v = ld(xr[i]);
            if (v > m) {
                s = s * expf(m - v) + 1.0f;
                m = v;
            } else if (v > NEG_INF) {
                s += expf(v - m);
            } else if (v != v) {
                nan = true;
            }
        }
    }
    if (nan) s = __int_as_float(0x7fc00000);
    blockMaxSum(m, s);
    return m + logf(s);
}

// xentGrad is (softmax(x) - onehot(y))·k + bad for one element.
__device__ __forceinline__ float xentGrad(float v, float l, int i, long long y, float k, float bad) {
    return (expf(v - l) - (i == y ? 1.0f : 0.0f)) * k + bad;
}

__device__ __forceinline__ Vec gradVec(const Vec& a, int i0, float l, long long y, float k, float bad) {
    Vec o;
#pragma unroll
    for (int j = 0; j < VN; j++) st(o.v, j, xentGrad(ld(a.v[j]), l, i0 + j, y, k, bad));
    return o;
}

// rowGrad writes the gradient of the row xr, of logsumexp l and label y,
// into dr: (softmax - onehot)·k, and NaN for a label outside [0, c). With
// vec and sv it reads the vectors rowLse kept there, each thread its own
// (so no barrier), instead of the row.
__device__ __forceinline__ void rowGrad(const TI* __restrict__ xr, TI* __restrict__ dr, int c, bool vec, float l,
                                        long long y, float k, const Vec* sv) {
    float bad = (y >= 0 && y < c) ? 0.0f : __int_as_float(0x7fc00000);
    const int B = blockDim.x;
    int i = threadIdx.x;
    if (vec) {
        const Vec* xv = sv ? sv : (const Vec*)xr;
        Vec* __restrict__ dv = (Vec*)dr;
        const int nv = c / VN;
        for (; i + B < nv; i += 2 * B) {
            Vec a = xv[i], b = xv[i + B];
            dv[i] = gradVec(a, i * VN, l, y, k, bad);
            dv[i + B] = gradVec(b, (i + B) * VN, l, y, k, bad);
        }
        if (i < nv) dv[i] = gradVec(xv[i], i * VN, l, y, k, bad);
        return;
    }
    for (; i + 3 * B < c; i += 4 * B) {
        float v0 = ld(xr[i]), v1 = ld(xr[i + B]), v2 = ld(xr[i + 2 * B]), v3 = ld(xr[i + 3 * B]);
        st(dr, i, xentGrad(v0, l, i, y, k, bad));
        st(dr, i + B, xentGrad(v1, l, i + B, y, k, bad));
        st(dr, i + 2 * B, xentGrad(v2, l, i + 2 * B, y, k, bad));
        st(dr, i + 3 * B, xentGrad(v3, l, i + 3 * B, y, k, bad));
    }
    for (; i < c; i += B) st(dr, i, xentGrad(ld(xr[i]), l, i, y, k, bad));
}

// The classifier's forward pass: a block per row of c logits; lse[row] is
// the row's logsumexp and loss[row] = lse - x[label], NaN for a label
// outside [0, c).
extern "C" __global__ void __launch_bounds__(1024) gocu_xent_fwd(const TI* __restrict__ x, const long long* __restrict__ labels,
                                         float* __restrict__ loss, float* __restrict__ lse, int c) {
    long long row = blockIdx.x;
    const TI* xr = x + row * c;
    float l = rowLse(xr, c, vecRows(x, x, c), nullptr);
    if (threadIdx.x == 0) {
        long long y = labels[row];
        lse[row] = l;
        loss[row] = (y >= 0 && y < c) ? l - ld(xr[y]) : __int_as_float(0x7fc00000);
    }
}

// The classifier's forward and backward passes at once, as llm.c's: the
// loss of each row as gocu_xent_fwd's, and dx = (softmax(x) - onehot)·inv,
// the gradient for a loss gradient of 1. The logits cross memory once:
// with cache set the row waits in dynamic shared memory (c values), else
// its second read comes from L2.
extern "C" __global__ void __launch_bounds__(1024) gocu_xent_fused(const TI* __restrict__ x, const long long* __restrict__ labels,
                                           float* __restrict__ loss, float* __restrict__ lse, float inv,
                                           TI* __restrict__ dx, int c, int cache) {
    extern __shared__ Vec xentRow[];
    long long row = blockIdx.x;
    const TI* xr = x + row * c;
    bool vec = vecRows(x, dx, c);
    Vec* sv = vec && cache ? xentRow : nullptr;
    float l = rowLse(xr, c, vec, sv);
    long long y = labels[row];
    rowGrad(xr, dx + row * c, c, vec, l, y, inv, sv);
    if (threadIdx.x == 0) {
        lse[row] = l;
        loss[row] = (y >= 0 && y < c) ? l - ld(xr[y]) : __int_as_float(0x7fc00000);
    }
}

// The classifier's backward pass over n rows, blocks striding over them:
// dx = (softmax(x) - onehot(label))·g·inv, g the loss's gradient (a
// device scalar), NaN rows for bad labels. With keep1 set and g 1, dx
// already holds that (gocu_xent_fused wrote it) and the kernel returns.
extern "C" __global__ void __launch_bounds__(1024) gocu_xent_bwd(const TI* __restrict__ x, const long long* __restrict__ labels,
                                         const float* __restrict__ lse, const float* __restrict__ g, float inv,
                                         TI* __restrict__ dx, int c, long long n, int keep1) {
    float gv = *g;
    if (keep1 && gv == 1.0f) return;
    float k = gv * inv;
    bool vec = vecRows(x, dx, c);
    for (long long row = blockIdx.x; row < n; row += gridDim.x)
        rowGrad(x + row * c, dx + row * c, c, vec, lse[row], labels[row], k, nullptr);
}
`

// fusedSource returns the CUDA C of the fused kernels for inputs of dtype
// in and outputs of dtype out (float32 or bfloat16).
func fusedSource(in, out array.DType) string {
	return strings.TrimSpace(fmt.Sprintf(fusedTemplate, cType(in), cType(out))) + "\n"
}

func cType(dt array.DType) string {
	if dt == array.BFloat16 {
		return "bf16"
	}
	return "float"
}

// xentShared reports whether gocu_xent_fused may take bytes of dynamic
// shared memory, raising its limit (48 KiB without it) once as needed.
func (ks *fusedKernels) xentShared(bytes int) bool {
	ks.mu.Lock()
	defer ks.mu.Unlock()
	if bytes <= ks.xentDyn {
		return true
	}
	if err := ks.xentFused.CUDA().SetMaxDynamicSharedMemory(bytes); err != nil {
		return false
	}
	ks.xentDyn = bytes
	return true
}

type fusedKernels struct {
	mu      sync.Mutex
	xentDyn int // gocu_xent_fused's dynamic shared memory limit, once raised

	lnFwd, lnBwd, lnDwdb, lnWsum, geluFwd, geluBwd        *gocu.Kernel
	xentFwd, xentFused, xentBwd, biasGeluFwd, biasGeluBwd *gocu.Kernel
	colsum                                                *gocu.Kernel
}

var fusedCache sync.Map // fusedKey -> *fusedKernels

type fusedKey struct {
	dev     *gocu.Device
	in, out array.DType
}

// fusedOK reports whether the fused kernels take arrays of dtypes in and
// out on dev: float32 or bfloat16 on a GPU, unless GOCU_NOFUSE is set.
func fusedOK(dev *gocu.Device, dts ...array.DType) bool {
	if !dev.IsGPU() || os.Getenv("GOCU_NOFUSE") != "" {
		return false
	}
	for _, dt := range dts {
		if dt != array.Float32 && dt != array.BFloat16 {
			return false
		}
	}
	return true
}

func fused(dev *gocu.Device, in, out array.DType) (*fusedKernels, error) {
	k := fusedKey{dev, in, out}
	if ks, ok := fusedCache.Load(k); ok {
		return ks.(*fusedKernels), nil
	}
	mod, err := dev.Compile(fusedSource(in, out), gocu.Name("gocu_fused.cu"))
	if err != nil {
		return nil, fmt.Errorf("nn: compiling the fused kernels: %w", err)
	}
	ks := &fusedKernels{}
	for name, dst := range map[string]**gocu.Kernel{
		"gocu_ln_fwd": &ks.lnFwd, "gocu_ln_bwd": &ks.lnBwd, "gocu_ln_dwdb": &ks.lnDwdb, "gocu_ln_wsum": &ks.lnWsum,
		"gocu_gelu_fwd": &ks.geluFwd, "gocu_gelu_bwd": &ks.geluBwd,
		"gocu_xent_fwd": &ks.xentFwd, "gocu_xent_fused": &ks.xentFused, "gocu_xent_bwd": &ks.xentBwd,
		"gocu_bias_gelu_fwd": &ks.biasGeluFwd, "gocu_bias_gelu_bwd": &ks.biasGeluBwd, "gocu_colsum": &ks.colsum,
	} {
		if *dst, err = mod.Kernel(name); err != nil {
			return nil, err
		}
	}
	got, _ := fusedCache.LoadOrStore(k, ks)
	return got.(*fusedKernels), nil
}

func grid1(x int) gocu.Dim3 { return gocu.Dim3{X: int32(x), Y: 1, Z: 1} }

// elementwise is the launch of a grid-stride kernel over n elements.
func elementwise(n int) gocu.Config {
	const block = 256
	return gocu.Config{Grid: grid1(min(max((n+block-1)/block, 1), 65535*8)), Block: grid1(block)}
}

// Fused reports whether the fused kernels of LayerNorm, GELU and
// CrossEntropy run on dev: on a GPU, unless the environment sets
// GOCU_NOFUSE (to compare them with the composed operations).
func Fused(dev *gocu.Device) bool { return fusedOK(dev) }

// fusedXent is CrossEntropy's mean over the rows of x (N, C), float32 or
// bfloat16, against labels (N); it returns nil where the kernels do not
// apply. The loss is float32. When x needs a gradient, one pass over the
// logits computes the loss and the gradient for a loss gradient of 1 (the
// loss is the graph's root); the backward pass returns it, and recomputes
// it from the logits only for another gradient. Otherwise the forward
// pass reads the logits once and the backward pass once more.
func fusedXent(x *grad.Var, labels *array.Array, n, c int) *grad.Var {
	xv := x.Value()
	dev, dt := xv.Device(), xv.DType()
	if !fusedOK(dev, dt) || labels.Device() != dev || n == 0 || c == 0 || !slices.Equal(xv.Shape(), []int{n, c}) {
		return nil
	}
	ks, err := fused(dev, dt, array.Float32)
	if err != nil {
		return grad.Const(array.Failed(err))
	}
	m := array.On(dev)
	xc, lab := xv.Contiguous(), cast(labels.Reshape(n), array.Int64).Contiguous()
	rows, lse := m.Empty(array.Float32, n), m.Empty(array.Float32, n)
	block := 256
	if c > 4096 {
		block = 1024
	}
	cfg := gocu.Config{Grid: grid1(n), Block: grid1(block)}
	inv := float32(1 / float64(n))
	var done *array.Array // the gradient for g = 1, written forward
	if x.RequiresGrad() && grad.Recording() {
		done = m.Empty(dt, n, c)
		// The row waits in shared memory where two blocks of it fit an SM
		// (a bfloat16 row of 50304 is 98 KiB), else in L2.
		fcfg, cache := cfg, int32(0)
		if row := c * dt.Size(); c%(16/dt.Size()) == 0 && row+2048 <= dev.CUDA().Props().SharedMemPerBlockOptin/2 && ks.xentShared(row) {
			fcfg.Shared, cache = row, 1
		}
		if err := ks.xentFused.Launch(fcfg, xc, lab, rows, lse, inv, done, int32(c), cache); err != nil {
			done.Close()
			return grad.Const(array.Failed(err))
		}
	} else if err := ks.xentFwd.Launch(cfg, xc, lab, rows, lse, int32(c)); err != nil {
		return grad.Const(array.Failed(err))
	}
	return grad.Func("CrossEntropy", rows.Mean(), []*grad.Var{x}, func(g *array.Array) []*array.Array {
		// The rows split over at most xentBlocks blocks: with done, most
		// often g is 1 and every block returns at once.
		const xentBlocks = 1024
		bcfg := gocu.Config{Grid: grid1(min(n, xentBlocks)), Block: grid1(block)}
		dx, keep1 := done, int32(1)
		done = nil
		if dx == nil {
			dx, keep1 = m.Empty(dt, n, c), 0
		}
		gc := cast(g, array.Float32)
		gk := gc.Contiguous()
		err := ks.xentBwd.Launch(bcfg, xc, lab, lse, gk, inv, dx, int32(c), int64(n), keep1)
		// The backward pass runs once: what it read is freed in stream
		// order, after its kernel (the loss reads rows, not these).
		closeAll(gk, xc, lab, lse)
		drop(gc, g)
		if err != nil {
			dx.Close()
			return []*array.Array{array.Failed(err)}
		}
		return []*array.Array{dx}
	})
}
