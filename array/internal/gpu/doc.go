// Package gpu is the CUDA backend of package array: it implements
// backend.Backend on one GPU with the driver bindings (package cuda),
// NVRTC (package nvrtc) and cuBLAS (package cublas).
//
// Every operation is queued on the backend's stream, one non-blocking
// stream per device, and returns at once; only Read and Sync wait.
// Elementwise programs, reductions, the softmax family, Philox fills and
// integer matrix products run kernels that package cudagen generates and
// plans; they are compiled by NVRTC for the exact GPU (a CUBIN for its
// sm_XX, through the disk cache, with --fmad=false so that float
// arithmetic rounds like the CPU backend's), loaded once, and kept in a
// bounded LRU cache of modules; an evicted module is unloaded only when
// the work queued before its eviction has finished.
//
// Planning (choosing a specialisation, sizing the grid, binding
// parameters) runs once per distinct request: a plan cache keyed by the
// request's structure, dtypes, layouts and pointer alignments (never by
// scalar values or pointers, which are bound at each launch) makes a
// repeated operation on same-shaped arrays a map lookup and one kernel
// launch with no allocation in this package.
//
// Float matrix products go to cuBLAS (row-major products as Cᵀ = Bᵀ·Aᵀ,
// transposed views as transpose flags, batches through strided batched
// GEMM), on one handle per device bound to the stream with a workspace from
// the caching allocator.
//
// Memory comes from the device's stream-ordered caching allocator. An
// allocation that finds the device full runs the garbage collector, lets
// the cleanups of unreachable arrays free their memory, returns the cache
// to the driver and retries once before it reports ErrOutOfMemory.
//
// A fault that loses the CUDA context (illegal address, ...) is sticky:
// once seen, every later call returns it, and Poll reports it without
// waiting.
package gpu
