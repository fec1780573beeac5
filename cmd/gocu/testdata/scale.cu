#include "tile.h"
__device__ __noinline__ float sq(float x) { return x * x; }
extern "C" __global__ void scale(float* x, float a, int n) {
    __shared__ float s[TILE];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) { s[threadIdx.x % TILE] = x[i]; __syncthreads(); x[i] = a * sq(s[threadIdx.x % TILE]); }
}
template <typename T> __global__ void fill(T* x, T v) { x[threadIdx.x] = v; }
template __global__ void fill<float>(float*, float);
