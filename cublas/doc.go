// Package cublas is a thin binding of NVIDIA's cuBLAS through purego: no
// cgo, and libcublas is loaded only when a Handle is created.
//
// It binds what gocu's arrays need: Sgemm, Dgemm, Cgemm, Zgemm and the
// mixed-precision GemmEx (with TF32 tensor cores through Compute32FFastTF32
// or SetMathMode(TF32TensorOpMath), float16 and bfloat16 with R16F/R16BF
// operands, complex C32F/C64F ones with real alpha and beta), their
// strided batched forms, Sgemv/Dgemv, axpy, scal and dot,
// the batched LU of many small matrices (GetrfBatched, GetrsBatched,
// GetriBatched);
// and, from libcublasLt, cublasLtMatmul (LtHandle, LtPlan) for int8 by
// int8 into int32 and FP8 products with per-tensor scales, whose layout
// and alignment rules Plan checks before cuBLASLt sees them (see
// LtMatmul). Device memory is passed as CUdeviceptr values
// (uint64), streams as raw CUstream handles (uintptr): the package depends
// on no other part of gocu.
//
// # Layout
//
// cuBLAS is column-major: element (i, j) of a matrix with leading dimension
// ld is at i + j*ld, and ld is at least the number of rows as stored. For
// row-major A (m×k), B (k×n) and C (m×n), compute C = A·B as Cᵀ = Bᵀ·Aᵀ:
//
//	h.Sgemm(cublas.NoTrans, cublas.NoTrans, n, m, k, 1, B, n, A, k, 0, C, n)
//
// # Threads and streams
//
// cuBLAS works in the CUDA context current on the calling OS thread, and
// launches its kernels during the call. So every call, Create and Destroy
// included, must run on a locked OS thread where the context of the
// handle's device is current (package cuda runs functions that way).
// Operations are queued on the handle's stream (SetStream) and return
// before the GPU finishes; Sdot and Ddot return a value, so they wait.
//
// Scalars (alpha, beta) are passed by host pointer and read before the call
// returns. They live in storage owned by the Handle, so the only allocation
// of a call is purego's argument array (about 120 bytes); calls on one
// Handle are serialised.
//
// # Errors
//
// Arguments are checked before cuBLAS sees them: a negative dimension, a
// leading dimension below the rows, a zero increment, overlapping batch
// outputs or a null device pointer is an error matching ErrInvalidArgument,
// naming the argument. cuBLAS failures are *Error values with the function
// and its Status; a Status is an error, so errors.Is(err,
// cublas.StatusNotSupported) works. A destroyed Handle returns ErrDestroyed.
//
// # The library
//
// GOCU_CUBLAS_LIB names the file to load. Otherwise the dynamic loader is
// asked for libcublas.so.13, .so.12 and .so, then the toolkit directories and
// the pip wheels (site-packages/nvidia/cu13/lib, nvidia/cublas/lib) of the
// active virtualenv or conda environment, /opt/*/.venv and ~/.local; when
// nothing loads, the error (errors.Is(err, ErrNotFound)) lists every place
// tried.
package cublas
