// Test kernels for package cuda. kernels.ptx is generated from this file
// (see gen.sh) with clang's NVPTX back end, for sm_52 and up: the driver
// JIT-compiles it for the GPU present. The prelude stands in for the CUDA
// headers, which the build machine does not have.
#define __global__ __attribute__((global))
#define __shared__ __attribute__((shared))
#define __device__ __attribute__((device))
#define tid_x __nvvm_read_ptx_sreg_tid_x()
#define ntid_x __nvvm_read_ptx_sreg_ntid_x()
#define ctaid_x __nvvm_read_ptx_sreg_ctaid_x()
#define syncthreads __syncthreads

// c = a + b
extern "C" __global__ void vadd(const float* a, const float* b, float* c, int n) {
  int i = ctaid_x * ntid_x + tid_x;
  if (i < n) c[i] = a[i] + b[i];
}

// x += delta
extern "C" __global__ void inc(int* x, int n, int delta) {
  int i = ctaid_x * ntid_x + tid_x;
  if (i < n) x[i] += delta;
}

// The launch-overhead kernel of the peers' benchmark: p[0] += 1.
extern "C" __global__ void inc1(float* p) { p[0] += 1.f; }

// y = a*x + y (for In/InOut): a float, a pointer and an int in one call.
extern "C" __global__ void saxpy(float a, const float* x, float* y, int n) {
  int i = ctaid_x * ntid_x + tid_x;
  if (i < n) y[i] = a * x[i] + y[i];
}

// Writes offset bytes past x: a planted out-of-bounds store.
extern "C" __global__ void oob(int* x, long long offset) {
  *(int*)((char*)x + offset) = 42;
}

// Reverses each block of 256 floats through 1 KiB of static shared memory.
extern "C" __global__ void rev256(float* x) {
  __shared__ float buf[256];
  int i = ctaid_x * 256 + tid_x;
  buf[tid_x] = x[i];
  syncthreads();
  x[i] = buf[255 - tid_x];
}

// Reverses each block through dynamic shared memory of blockDim floats.
extern "C" __global__ void revdyn(float* x) {
  extern __shared__ float dbuf[];
  int i = ctaid_x * ntid_x + tid_x;
  dbuf[tid_x] = x[i];
  syncthreads();
  x[i] = dbuf[ntid_x - 1 - tid_x];
}

// A struct passed by value: out[i] = p.scale * in[i] + p.shift, for i < p.n.
struct Affine {
  float scale;
  double shift;
  int n;
};
extern "C" __global__ void affine(Affine p, const float* in, double* out) {
  int i = ctaid_x * ntid_x + tid_x;
  if (i < p.n) out[i] = p.scale * in[i] + p.shift;
}
