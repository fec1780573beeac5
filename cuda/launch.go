package cuda

import (
	"fmt"
	"log/slog"
	"runtime"
	"strings"
	"sync"
	"unsafe"
)

// Dim3 is a grid or block size, like CUDA's dim3. A Y or Z of 0 means 1,
// so Dim3{X: 256} is a one-dimensional size; an X of 0 is an error. Its
// fields are uint32, as the driver takes them. gocu.Dim3, which users
// write, is kernel.Dim3 with int32 fields, as kernel code reads them.
type Dim3 struct{ X, Y, Z uint32 }

func (d Dim3) String() string { return fmt.Sprintf("(%d,%d,%d)", d.X, d.Y, d.Z) }

// Size is X*Y*Z, with Y and Z of 0 counted as 1.
func (d Dim3) Size() int {
	d = d.norm()
	return int(d.X) * int(d.Y) * int(d.Z)
}

func (d Dim3) norm() Dim3 {
	if d.Y == 0 {
		d.Y = 1
	}
	if d.Z == 0 {
		d.Z = 1
	}
	return d
}

// GridFor returns the one-dimensional grid that covers n threads with
// blocks of block threads: Dim3{X: ceil(n/block)}.
func GridFor(n, block int) Dim3 {
	if block <= 0 || n <= 0 {
		return Dim3{}
	}
	return Dim3{X: uint32((n + block - 1) / block)}
}

// Config is the launch configuration of a kernel.
type Config struct {
	Grid      Dim3    // blocks
	Block     Dim3    // threads per block
	SharedMem int     // dynamic shared memory per block, in bytes
	Stream    *Stream // nil for the device's default stream
}

// Launch queues the kernel on cfg.Stream with the given arguments and
// returns without waiting for it.
//
// Arguments are passed by value with exact C widths: int32 (C int),
// uint32, int64 (long long), uint64, int16, uint16, int8, uint8, bool,
// float32, float64, complex64, complex128, uintptr, DevicePtr and *Memory
// (device pointers), and Raw or any struct or array of those (by-value C
// structs). Go int and uint are refused: their width is not C int's.
// In/Out/InOut host slices need Call.
//
// The configuration is checked against the device's and the kernel's limits
// before the driver sees it (a *ConfigError). Errors from the driver are a
// *LaunchError naming the kernel, its configuration and the Go call site.
// The common case allocates nothing.
func (f *Function) Launch(cfg Config, args ...any) error {
	if f.mod.closed.Load() {
		return fmt.Errorf("cuda: launch of %s: module: %w", f.name, ErrClosed)
	}
	grid, block := cfg.Grid.norm(), cfg.Block.norm()
	if reason := f.checkConfig(grid, block, cfg.SharedMem); reason != "" {
		return &ConfigError{Kernel: f.name, Grid: grid, Block: block, SharedMem: cfg.SharedMem, Reason: reason}
	}
	s := cfg.Stream
	if s == nil {
		s = f.dev.stream
	} else if s.dev != f.dev || s.closed.Load() {
		_, err := f.dev.streamOrDefault(s)
		return err
	}
	if n := int(f.params1) - 1; n >= 0 && len(args) != n {
		return &ArgError{Kernel: f.name, Index: -1, Type: "arguments",
			Reason: fmt.Sprintf("the kernel takes %d parameters, the launch passed %d", n, len(args))}
	}
	fr, err := f.pack(args, nil)
	if err != nil {
		return err
	}
	return f.launchFrame(fr, grid, block, cfg.SharedMem, s, len(args))
}

// LaunchWords is Launch for a kernel whose parameters are all 8 bytes wide
// (pointers, long long, unsigned long long, double): words[i] is the bits
// of parameter i. It does what Launch does without boxing the arguments
// into interfaces and switching on their types; package array launches
// its generated kernels, which take only such parameters, this way.
func (f *Function) LaunchWords(cfg Config, words []uint64) error {
	if f.mod.closed.Load() {
		return fmt.Errorf("cuda: launch of %s: module: %w", f.name, ErrClosed)
	}
	grid, block := cfg.Grid.norm(), cfg.Block.norm()
	if reason := f.checkConfig(grid, block, cfg.SharedMem); reason != "" {
		return &ConfigError{Kernel: f.name, Grid: grid, Block: block, SharedMem: cfg.SharedMem, Reason: reason}
	}
	s := cfg.Stream
	if s == nil {
		s = f.dev.stream
	} else if s.dev != f.dev || s.closed.Load() {
		_, err := f.dev.streamOrDefault(s)
		return err
	}
	fr := getFrame()
	if fr == nil {
		return fmt.Errorf("cuda: launch of %s: cannot map memory for the arguments", f.name)
	}
	if !fr.packWords(words) {
		putFrame(fr)
		return &ArgError{Kernel: f.name, Index: -1, Type: "arguments", Reason: fmt.Sprintf("%d arguments do not fit a launch frame", len(words))}
	}
	return f.launchFrame(fr, grid, block, cfg.SharedMem, s, len(words))
}

// launchFrame launches with the packed arguments in fr, which it returns
// to the pool.
func (f *Function) launchFrame(fr *frame, grid, block Dim3, shared int, s *Stream, nargs int) error {
	op := traceKernel(f, grid, block, shared, s)
	f.dev.launched(f)
	r, fn := f.launch(fr, grid, block, shared, s)
	op.end(r)
	putFrame(fr)
	if logLaunches.Load() {
		f.log(grid, block, shared, s, nargs)
	}
	if r != 0 {
		return f.launchError(fn, r, grid, block, shared)
	}
	return nil
}

// pack returns a frame holding the packed arguments.
func (f *Function) pack(args []any, host []DevicePtr) (*frame, error) {
	fr := getFrame()
	if fr == nil {
		return nil, fmt.Errorf("cuda: launch of %s: cannot map memory for the arguments", f.name)
	}
	err := fr.packArgs(f.name, args, host)
	for size := 4 * frameSize; err == errFrameFull && size <= 4<<20; size *= 4 {
		putFrame(fr)
		if fr, err = newFrame(size); err != nil {
			return nil, err
		}
		err = fr.packArgs(f.name, args, host)
	}
	if err != nil {
		putFrame(fr)
		if err == errFrameFull {
			return nil, &ArgError{Kernel: f.name, Index: -1, Type: "arguments", Reason: "more than 4 MiB of kernel arguments"}
		}
		return nil, err
	}
	return fr, nil
}

// launch makes the context current and calls cuLaunchKernel through the
// frame (no allocation), then synchronises in launch-blocking mode. It
// returns the result and the name of the driver function it comes from.
func (f *Function) launch(fr *frame, grid, block Dim3, shared int, s *Stream) (Result, string) {
	a := f.dev.api
	fr.args[0] = f.handle
	fr.args[1], fr.args[2], fr.args[3] = uintptr(grid.X), uintptr(grid.Y), uintptr(grid.Z)
	fr.args[4], fr.args[5], fr.args[6] = uintptr(block.X), uintptr(block.Y), uintptr(block.Z)
	fr.args[7] = uintptr(shared)
	fr.args[8] = s.handle
	fr.args[9] = uintptr(unsafe.Pointer(&fr.params[0]))
	fr.args[10] = 0
	runtime.LockOSThread()
	r, bound := fr.ctxCall(a, f.dev.ctx, a.cuLaunchKernel)
	fn := "cuCtxSetCurrent"
	if bound {
		fn = "cuLaunchKernel"
		if r == 0 && launchBlocking.Load() && !s.capturing.Load() {
			fn = "cuStreamSynchronize after the launch (GOCU_LAUNCH_BLOCKING)"
			fr.args[0] = s.handle
			r = fr.call(a.cuStreamSynchronize, 1)
		}
	}
	runtime.UnlockOSThread()
	return r, fn
}

func (f *Function) launchError(fn string, r Result, grid, block Dim3, shared int) error {
	return &LaunchError{Kernel: f.name, Grid: grid, Block: block, SharedMem: shared, Caller: callSite(), Err: f.dev.err(fn, r)}
}

func (f *Function) log(grid, block Dim3, shared int, s *Stream, nargs int) {
	slog.Info("cuda: launch", "kernel", f.name, "grid", grid.String(), "block", block.String(),
		"shared", shared, "stream", s.handle, "args", nargs, "device", f.dev.ordinal, "at", callSite())
}

// checkConfig returns why a launch configuration breaks a limit, or "".
func (f *Function) checkConfig(grid, block Dim3, shared int) string {
	return checkLaunch(&f.dev.props, kernelLimits{
		name:         f.name,
		maxThreads:   int(f.maxThreads),
		staticShared: int(f.staticShared),
		maxDynShared: int(f.maxDynShared.Load()),
		numRegs:      int(f.numRegs),
	}, grid, block, shared)
}

// kernelLimits are the per-kernel limits a launch must respect.
type kernelLimits struct {
	name         string
	maxThreads   int // CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK
	staticShared int
	maxDynShared int // CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES
	numRegs      int
}

// checkLaunch checks a normalised configuration against the device (p)
// and the kernel (k).
func checkLaunch(p *Props, k kernelLimits, grid, block Dim3, shared int) string {
	if grid.X == 0 {
		return "the grid is empty (Grid.X is 0)"
	}
	if block.X == 0 {
		return "the block is empty (Block.X is 0)"
	}
	g := [3]uint32{grid.X, grid.Y, grid.Z}
	b := [3]uint32{block.X, block.Y, block.Z}
	for i := range 3 {
		if int64(b[i]) > int64(p.MaxBlockDim[i]) {
			return fmt.Sprintf("Block.%c is %d; the device allows at most %d", "XYZ"[i], b[i], p.MaxBlockDim[i])
		}
		if int64(g[i]) > int64(p.MaxGridDim[i]) {
			return fmt.Sprintf("Grid.%c is %d; the device allows at most %d", "XYZ"[i], g[i], p.MaxGridDim[i])
		}
	}
	threads := int64(block.X) * int64(block.Y) * int64(block.Z)
	if threads > int64(p.MaxThreadsPerBlock) {
		return fmt.Sprintf("a block of %dx%dx%d is %d threads; the device allows at most %d per block",
			block.X, block.Y, block.Z, threads, p.MaxThreadsPerBlock)
	}
	if k.maxThreads > 0 && threads > int64(k.maxThreads) {
		return fmt.Sprintf("a block of %d threads is more than the %d this kernel can run per block (it uses %d registers per thread)",
			threads, k.maxThreads, k.numRegs)
	}
	if shared < 0 {
		return fmt.Sprintf("negative dynamic shared memory (%d bytes)", shared)
	}
	if int64(shared)+int64(k.staticShared) > int64(p.SharedMemPerBlockOptin) {
		return fmt.Sprintf("a block needs %d bytes of shared memory (%d static + %d dynamic); the device allows at most %d per block",
			shared+k.staticShared, k.staticShared, shared, p.SharedMemPerBlockOptin)
	}
	if shared > k.maxDynShared {
		return fmt.Sprintf("%d bytes of dynamic shared memory exceed the kernel's current limit of %d; raise it with Function.SetMaxDynamicSharedMemory (up to %d)",
			shared, k.maxDynShared, p.SharedMemPerBlockOptin-k.staticShared)
	}
	return ""
}

// Call runs the kernel synchronously, PyCUDA style: In and InOut host
// slices are copied to temporary device memory, the kernel runs, Out and
// InOut slices are copied back, and Call returns when all is done.
// Other arguments are as for Launch. It is meant for convenience and
// tests, not speed: it allocates and synchronises the stream.
func (f *Function) Call(cfg Config, args ...any) error {
	if f.mod.closed.Load() {
		return fmt.Errorf("cuda: call of %s: module: %w", f.name, ErrClosed)
	}
	grid, block := cfg.Grid.norm(), cfg.Block.norm()
	if reason := f.checkConfig(grid, block, cfg.SharedMem); reason != "" {
		return &ConfigError{Kernel: f.name, Grid: grid, Block: block, SharedMem: cfg.SharedMem, Reason: reason}
	}
	d := f.dev
	s, err := d.streamOrDefault(cfg.Stream)
	if err != nil {
		return err
	}
	host := make([]DevicePtr, len(args))
	var temps []*Memory
	defer func() {
		for _, m := range temps {
			_ = m.FreeOn(s)
		}
	}()
	for i, a := range args {
		h, ok := a.(*HostArg)
		if !ok {
			continue
		}
		if h.err != nil {
			return &ArgError{Kernel: f.name, Index: i, Type: h.typ, Reason: h.err.Error()}
		}
		m, err := d.AllocOn(s, h.bytes)
		if err != nil {
			return err
		}
		temps = append(temps, m)
		host[i] = m.ptr
		if h.dir&dirIn != 0 && h.bytes > 0 {
			if err := d.copyHtoDAsync(m.ptr, h.ptr, h.bytes, s); err != nil {
				return err
			}
		}
	}
	fr, err := f.pack(args, host)
	if err != nil {
		return err
	}
	op := traceKernel(f, grid, block, cfg.SharedMem, s)
	f.dev.launched(f)
	r, fn := f.launch(fr, grid, block, cfg.SharedMem, s)
	op.end(r)
	putFrame(fr)
	if logLaunches.Load() {
		f.log(grid, block, cfg.SharedMem, s, len(args))
	}
	if r != 0 {
		return f.launchError(fn, r, grid, block, cfg.SharedMem)
	}
	for i, a := range args {
		if h, ok := a.(*HostArg); ok && h.dir&dirOut != 0 && h.bytes > 0 {
			if err := d.copyDtoHAsync(h.ptr, host[i], h.bytes, s); err != nil {
				return err
			}
		}
	}
	if err := s.Synchronize(); err != nil {
		return &LaunchError{Kernel: f.name, Grid: grid, Block: block, SharedMem: cfg.SharedMem, Caller: callSite(), Err: err}
	}
	return nil
}

// Call sites: the first frame outside package cuda and the packages
// registered with MarkHelperPackage.
var (
	helperMu   sync.RWMutex
	helperPkgs = []string{thisPackage()}
)

func thisPackage() string {
	pc, _, _, _ := runtime.Caller(0)
	name := runtime.FuncForPC(pc).Name() // ".../cuda.thisPackage"
	return name[:strings.LastIndex(name, ".")]
}

// MarkHelperPackage makes launch errors and logs skip the frames of the
// package with import path pkgPath when they name the Go call site, the way
// testing.T.Helper does for a function. Packages that wrap Launch (such as
// gocu's launchers) register themselves so that errors point at their
// caller.
func MarkHelperPackage(pkgPath string) {
	helperMu.Lock()
	defer helperMu.Unlock()
	for _, p := range helperPkgs {
		if p == pkgPath {
			return
		}
	}
	helperPkgs = append(helperPkgs, pkgPath)
}

func isHelper(fn string) bool {
	helperMu.RLock()
	defer helperMu.RUnlock()
	for _, p := range helperPkgs {
		if strings.HasPrefix(fn, p+".") {
			return true
		}
	}
	return false
}

// callSite returns file:line of the first caller outside the helper
// packages.
func callSite() string {
	var pcs [32]uintptr
	n := runtime.Callers(2, pcs[:])
	frames := runtime.CallersFrames(pcs[:n])
	for {
		fr, more := frames.Next()
		if fr.Function != "" && !isHelper(fr.Function) && !strings.HasPrefix(fr.Function, "runtime.") {
			return fmt.Sprintf("%s:%d", fr.File, fr.Line)
		}
		if !more {
			return ""
		}
	}
}
