// Package cufft is a thin binding of NVIDIA's cuFFT through purego: no
// cgo, and libcufft is loaded only when a Plan is made.
//
// It binds plans of rank 1, 2 and 3, batched, with any strided layout
// (cufftMakePlanMany), for the six transform types: C2C, R2C and C2R in
// single precision and Z2Z, D2Z and Z2D in double; execution on a stream;
// and caller-owned work areas: a Plan is made with cuFFT's automatic
// allocation off, reports the work area it needs (WorkSize), and the
// caller hands one in (SetWorkArea) from its own allocator, so cuFFT never
// allocates. Cache keeps plans by shape, layout, type, batch and stream.
//
// Device memory is passed as CUdeviceptr values (uint64), streams as raw
// CUstream handles (uintptr): the package depends on no other part of
// gocu. Complex data are interleaved pairs of float32 (cufftComplex) or
// float64 (cufftDoubleComplex).
//
// # Layout
//
// Shapes are row-major, as C's and Go's arrays: n[0] is the slowest
// dimension, as in cuFFT's own convention. An R2C transform of n real
// values gives n/2+1 complex ones along the last dimension; C2R is its
// inverse (the input is overwritten by cuFFT). cuFFT does not normalise:
// a forward then inverse transform multiplies by the number of elements.
//
// # Threads and streams
//
// cuFFT works in the CUDA context current on the calling OS thread: make
// plans, execute and destroy them on a locked OS thread where the context
// of the plan's device is current (cuda.Device's WithContext). A Plan may
// be used from several goroutines; calls are serialised.
//
// # Errors
//
// Arguments are checked before cuFFT sees them (ranks, sizes, strides,
// null pointers, a missing work area, a direction for a real transform);
// a mistake is an error matching ErrInvalidArgument that names it. cuFFT
// failures are *Error values with the function and the Result, and a
// Result is an error, so errors.Is(err, cufft.ResultInvalidSize) works.
//
// # The library
//
// GOCU_CUFFT_LIB names the file to load. Otherwise the dynamic loader is
// asked for libcufft.so.12 (CUDA 13), .so.11 (CUDA 12) and .so, then the
// toolkit directories and the pip wheels (site-packages/nvidia/cu13/lib,
// nvidia/cufft/lib). When nothing loads, the error (errors.Is(err,
// ErrNotFound)) lists every place tried.
package cufft
