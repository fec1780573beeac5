// Package cusolver is a thin binding of NVIDIA's dense cuSOLVER (cusolverDn)
// through purego: no cgo, and libcusolver is loaded only when a Handle is
// created.
//
// It binds what gocu's linear algebra needs, in float32 and float64: LU
// (Getrf, Getrs), Cholesky (Potrf, Potrs and their batched forms), QR
// (Geqrf, Orgqr), the SVD (Gesvd, the Jacobi Gesvdj and GesvdjBatched),
// the symmetric eigensolver (Syevd, and the Jacobi SyevjBatched for many
// small matrices), each with its workspace query. The batched LU of many
// small matrices lives in cuBLAS (cublas.Handle.GetrfBatched). Complex
// types (heevd, the C and Z routines) are not bound yet.
//
// Device memory is passed as CUdeviceptr values (uint64) and streams as
// raw CUstream handles (uintptr): the package depends on no other part of
// gocu. Workspaces are the caller's: ask the *BufferSize method for the
// number of elements, allocate them (gocu's caching allocator, ordered on
// the handle's stream) and pass them in, so cuSOLVER never allocates.
//
// # Layout
//
// cuSOLVER, like LAPACK, is column-major: element (i, j) of a matrix with
// leading dimension ld is at i + j*ld. A row-major matrix read
// column-major is its transpose; package array/linalg explains how it
// uses that to avoid most copies.
//
// # Results and info
//
// Every routine reports a numerical failure (a zero pivot, a matrix that
// is not positive definite, an SVD that did not converge) in an int32
// info value it writes to device memory, asynchronously: the call returns
// before it is known. The caller reads info when it needs to know, which
// waits for the stream; nothing in this package waits.
//
// # Threads and streams
//
// cuSOLVER works in the CUDA context current on the calling OS thread. So
// every call, Create and Destroy included, must run on a locked OS thread
// where the context of the handle's device is current (cuda.Device's
// WithContext runs functions that way). Work is queued on the handle's
// stream (SetStream). Calls on one Handle are serialised.
//
// # Errors
//
// Arguments are checked before cuSOLVER sees them: a negative dimension,
// a leading dimension below the rows or a null device pointer is an error
// matching ErrInvalidArgument that names the argument. cuSOLVER failures
// are *Error values with the function and its Status, and a Status is an
// error, so errors.Is(err, cusolver.StatusNotSupported) works. A destroyed
// Handle returns ErrDestroyed.
//
// # The library
//
// GOCU_CUSOLVER_LIB names the file to load. Otherwise the dynamic loader is
// asked for libcusolver.so.12 (CUDA 13), .so.11 (CUDA 12) and .so, then the
// toolkit directories and the pip wheels (site-packages/nvidia/cu13/lib,
// nvidia/cusolver/lib); libcusolver's own dependencies (cuBLAS, cuSPARSE,
// nvJitLink) are opened first from the same directory. When nothing loads,
// the error (errors.Is(err, ErrNotFound)) lists every place tried.
package cusolver
