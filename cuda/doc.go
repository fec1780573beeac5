// Package cuda is the CUDA driver API in pure Go: it loads libcuda at run
// time through purego (no cgo, no CUDA toolkit to build), and offers
// devices, memory with a caching allocator, streams, events, modules,
// kernel launches and CUDA graphs, with errors as values.
//
// It is the bottom layer of gocu: it holds no policy above the driver's,
// apart from the memory allocator and the checks that turn driver failures
// into clear errors.
//
// # Loading
//
// The driver is loaded on first use, once per process: GOCU_CUDA_LIB if set
// (and only it), else libcuda.so.1 through the dynamic loader, then the
// usual directories (/usr/lib/x86_64-linux-gnu, /usr/lib64,
// /usr/local/nvidia/lib64, WSL's /usr/lib/wsl/lib, /usr/local/cuda/compat,
// ...; never the toolkit's stub library). cuInit runs once. Available
// reports whether a device can be used; Init returns why not: a *LoadError
// (errors.Is ErrNoDriver) that lists every path tried and why each failed,
// the driver's own error, or ErrNoDevice. Nothing panics on a machine
// without a GPU. Entry points are the versioned symbols cuda.h selects
// (cuMemAlloc_v2, cuStreamDestroy_v2, cuStreamBeginCapture_v2,
// cuGraphInstantiateWithFlags, ...), with the legacy default stream.
//
// # Thread model
//
// Each Device uses the device's primary context (cuDevicePrimaryCtxRetain),
// shared with every other CUDA library in the process. CUDA makes a context
// current per OS thread, and goroutines move between OS threads, so every
// call that needs the context runs like this, on the calling goroutine:
//
//	runtime.LockOSThread()
//	cuCtxGetCurrent; if it is not the device's context, cuCtxSetCurrent
//	the driver call
//	runtime.UnlockOSThread()
//
// There is no hand-off to a worker thread (a channel round trip costs
// microseconds, more than a launch), so any goroutine may call any function
// of the package at any time, concurrently. On linux/amd64 the check and
// the call are one cgo call, through a small assembly trampoline
// (elsewhere two purego calls): the whole Go side of a launch (locking, the
// check, packing two arguments, the cuLaunchKernel call, without the
// driver's own work) measures about 70 ns in BenchmarkLaunchFakeDriver on
// the 2-core build machine (240 ns with two purego calls). On the GPU,
// BenchmarkDriverCall measures a cheap driver call with the check and
// BenchmarkLaunch the full launch. Code that calls other CUDA libraries
// through their own bindings runs them inside Device.WithContext.
//
// # Memory
//
// Device.Alloc returns a *Memory that is freed explicitly (Free, FreeOn).
// The garbage collector reclaims a Memory dropped without Free, through
// runtime.AddCleanup, only as a backstop; the cleanup runs on a goroutine
// of the runtime's choosing, which the thread model makes safe. Any use of
// a Memory after Free, and a second Free, return ErrFreed and never reach
// the driver. A DevicePtr (Memory.Ptr) does not keep its Memory alive.
//
// Allocations go through the device's Allocator, a stream-ordered caching
// allocator unless GOCU_ALLOCATOR=plain:
//
//   - Requests up to 1 MiB are rounded up to a multiple of 512 bytes and cut
//     from 2 MiB segments; larger requests are rounded up to a multiple of
//     2 MiB and get a segment of their own. A free block bigger than a
//     request is split; freed neighbours merge again.
//   - Every Memory is ordered on a stream (AllocOn, or the default stream)
//     and Free is ordered on it, like cudaFreeAsync. A block freed on
//     stream S is reused at once by allocations on S, whose work is ordered
//     after the free; other streams get it only after an event recorded on
//     S after the free has completed (the event is recorded when another
//     stream first needs memory, and queried, never waited for). Blocks
//     freed on a stream that is capturing a graph stay with that stream.
//   - When the driver runs out of memory the allocator waits for the
//     device, returns every wholly free segment to the driver and retries
//     once before it returns an error matching ErrOutOfMemory.
//   - Stats reports the bytes in use, requested, reserved from the driver
//     and cached, their peaks, and the counts of allocations, frees, cache
//     hits, misses and flushes. SetLimit (or GOCU_MEMORY_LIMIT) caps the
//     reserved bytes. Trim returns the cache to the driver.
//   - A MemoryRecorder (SetMemoryRecorder) sees every allocation, free,
//     driver allocation and release with its size, stream, time, the
//     figures after it and the Go stack; package prof keeps such a memory
//     history (GOCU_MEMORY_HISTORY). Without one, it costs an allocation
//     or free one atomic load.
//
// HostMemory (Device.AllocHost) is pinned host memory, for copies at full
// bus speed and truly asynchronous copies; it must be freed explicitly.
// Copies (CopyHtoD, CopyDtoH, CopyDtoD and their Async forms on a stream)
// and fills (MemsetD8/D16/D32 and Async) check sizes, alignment and
// freed memory before the driver sees them. A device-to-host copy into
// memory that is not pinned (Pinned reports it) returns only when it is
// done, Async or not.
//
// # Launching kernels
//
// Device.LoadModule loads PTX (JIT-compiled by the driver, with the JIT's
// error log in a *ModuleError), a CUBIN or a fatbinary; Module.Function
// returns a kernel with its attributes, dynamic shared memory opt-in and
// occupancy helpers. Function.Launch takes a Config (grid and block as
// Dim3, dynamic shared memory, stream) and the kernel's arguments with exact
// C widths: int32 is a C int, int64 a long long, float32, float64, *Memory
// and DevicePtr are 8-byte device pointers, Raw and plain structs pass by
// value; Go int is refused with an explanation. The arguments are packed
// into memory outside the Go heap (pooled), so the void** array the driver
// reads never points into memory the collector moves or frees, and a launch
// allocates nothing. The configuration is checked against the device's and
// the kernel's limits first (*ConfigError). Function.Call is the PyCUDA
// style synchronous form that also takes In, Out and InOut host slices.
//
// # Graphs
//
// Stream.BeginCapture/EndCapture (or Stream.Capture) record the work queued
// on a stream into a Graph; Graph.Instantiate makes a GraphExec whose
// Launch replays all of it with one call, and whose Update takes the
// parameters of a graph of the same shape. CaptureRelaxed is the default
// mode: goroutines move between threads, which the stricter modes forbid.
//
// # Errors
//
// A failed driver call is an *Error with the function, the CUresult, its
// name and the driver's description (from a built-in table of every code of
// cuda.h when the driver cannot say). Sentinels such as ErrOutOfMemory,
// ErrIllegalAddress, ErrNoDevice and ErrInvalidValue match with errors.Is.
// Sticky errors (illegal address, misaligned address, illegal instruction,
// hardware stack error, device assert, launch failure, ...) say that the
// context is lost and the process must restart, and match ErrContextLost.
// Kernel faults are asynchronous: they surface at the next synchronising
// call. With GOCU_LAUNCH_BLOCKING=1 (or SetLaunchBlocking) every launch
// waits for its kernel, and a fault is a *LaunchError that names the
// kernel, its grid and block and the Go line that launched it (packages
// that wrap Launch call MarkHelperPackage so that the line is their
// caller's).
//
// # Environment
//
//	GOCU_CUDA_LIB         the libcuda to load instead of searching
//	GOCU_LAUNCH_BLOCKING  1: synchronise after every launch and attribute errors
//	GOCU_LOG              launch: log every launch through log/slog; alloc: the allocator's driver traffic
//	GOCU_ALLOCATOR        plain: no caching, every Alloc and Free goes to the driver
//	GOCU_MEMORY_LIMIT     cap on each device's reserved memory (bytes, or 512MiB, 4GiB, 2GB, ...)
//	GOCU_SYNC_DEBUG       warn or error: report operations that wait for the GPU (gocu.SetSyncDebugMode); here, the out-of-memory retry
package cuda
