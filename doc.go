// Package gocu makes NVIDIA GPUs usable from Go without cgo.
//
// It ties together the driver bindings (package cuda), run-time compilation
// (package nvrtc) and the CPU simulator (package sim) behind one API: a
// Device is a GPU, the simulator or the CPU (Open("cuda:0"), Open("sim"),
// Open("cpu"); GOCU_DEVICE names the Default one), a Buffer holds memory on
// it, kernels run on it, and the arrays of package array live and compute
// on it. One Device has one context, one caching allocator and one default
// stream, shared by all of them, so that work runs in the order it was
// queued whoever queued it.
//
// # Kernels written in Go
//
// Write the kernel as a Go function marked //gocu:kernel (see package
// kernel), add
//
//	//go:generate go tool gocu-gen
//
// to its package and run go generate. gocu gen (package gen) translates the
// kernel to CUDA C++ and writes a typed launcher for it:
//
//	d, err := gocu.Default() // the first GPU, else the CPU; GOCU_DEVICE=cpu|sim|cuda|cuda:N
//	rgb, err := gocu.FromSlice(d, pixels)
//	gray, err := gocu.Alloc[uint8](d, n)
//	err = kernels.LaunchGray(d, gocu.Auto(n), rgb, gray, int32(n))
//
// On a GPU the launcher compiles the package's source with NVRTC for
// exactly that GPU on first use (cached on disk and per device) and launches
// it without allocating; on the simulator it runs the Go function itself,
// with the simulator's checks. Config carries the grid and block (or N for
// an automatic 1-D shape), dynamic shared memory, the stream, Debug (Go's
// bounds checks on the GPU, reported as the simulator reports them) and
// Checked (the simulator's race detection). Autotune finds the fastest of
// several launch configurations on the GPU and remembers it across
// processes.
//
// The launchers are made of package launch, which programs do not call.
//
// # Arrays and kernels together
//
// An array of package array goes into a kernel without a copy:
// array.AsBuffer[float32](x) is a *Buffer[float32] over x's memory (or a
// Failed buffer carrying x's error, which the launch then returns), and
// Kernel.Launch takes an *array.Array directly, through the Arg interface,
// as do the launchers gocu gen writes, through Slice.
// array.FromBuffer views a Buffer as an array. Launches that name no stream
// go on the device's default stream, where the arrays queue their
// operations, so they run in order without a host synchronisation.
//
// # CUDA C
//
// Compile CUDA C at run time and launch it, like CuPy's RawKernel:
// Compile(src) then Module.Kernel(name).Launch(cfg, args...).
//
// # Hidden synchronisations
//
// Work on a GPU is queued; an operation that makes the host wait for it
// leaves the GPU idle meanwhile. GOCU_SYNC_DEBUG=warn (or
// SetSyncDebugMode(SyncDebugWarn)) reports every such wait, like
// torch.cuda.set_sync_debug_mode: one line on standard error naming the
// operation, why it waits and the program's call site (the first caller
// outside gocu's packages), at most every 5 seconds per call site.
// GOCU_SYNC_DEBUG=error makes the operation fail with an error matching
// ErrHiddenSync before it waits. SetSyncDebugMode lists what is reported;
// explicit waits (Synchronize, array's Sync) never are. Off, the check
// costs an operation one atomic load.
package gocu
