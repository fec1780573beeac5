package gocu

import (
	"errors"
	"fmt"
	"strconv"
	"sync"

	"github.com/gocu-dev/gocu/cuda"
	"github.com/gocu-dev/gocu/nvrtc"
)

// thisPackage is gocu's import path, registered with cuda so that launch
// errors name the user's call site rather than gocu's. It is written out:
// the name of a function literal (gocu.glob..func1) does not end at the
// package's last dot, which once made every error name module.go.
const thisPackage = "github.com/gocu-dev/gocu"

// Option configures Compile.
type Option func(*nvrtc.Options)

// Header makes #include "name" find src.
func Header(name, src string) Option {
	return func(o *nvrtc.Options) {
		if o.Headers == nil {
			o.Headers = map[string]string{}
		}
		o.Headers[name] = src
	}
}

// Define predefines a macro, as -Dname=value ("" defines it as 1).
func Define(name, value string) Option {
	return func(o *nvrtc.Options) {
		if o.Defines == nil {
			o.Defines = map[string]string{}
		}
		o.Defines[name] = value
	}
}

// Flags passes options to NVRTC as they are, e.g. "-maxrregcount=64".
func Flags(flags ...string) Option {
	return func(o *nvrtc.Options) { o.Extra = append(o.Extra, flags...) }
}

// Name sets the program's file name, used in compile errors.
func Name(file string) Option { return func(o *nvrtc.Options) { o.Name = file } }

// FastMath compiles with --use_fast_math.
func FastMath() Option { return func(o *nvrtc.Options) { o.FastMath = true } }

// LineInfo keeps source lines for profilers.
func LineInfo() Option { return func(o *nvrtc.Options) { o.LineInfo = true } }

// Std sets the C++ dialect, e.g. "c++17".
func Std(dialect string) Option { return func(o *nvrtc.Options) { o.Std = dialect } }

// NameExpressions names template instantiations ("axpy<float>") that
// Module.Kernel will accept by those names.
func NameExpressions(exprs ...string) Option {
	return func(o *nvrtc.Options) { o.NameExpressions = append(o.NameExpressions, exprs...) }
}

// PTX compiles to PTX, which the driver compiles at load time, instead of
// a CUBIN for the exact GPU.
func PTX() Option { return func(o *nvrtc.Options) { o.Arch = "ptx" } }

// ArchSpecific compiles for the GPU's arch-specific target where it has
// one that gocu uses: sm_90a on Hopper (compute capability 9.0), which
// adds the warpgroup MMA (wgmma) and setmaxnreg; a CUBIN for it runs only
// on that exact architecture. On other GPUs it changes nothing. Sources
// that gocu gen writes with warpgroup MMAs ask for it themselves.
func ArchSpecific() Option { return func(o *nvrtc.Options) { o.Arch = "a" } }

// Module is CUDA C compiled for one GPU and loaded into its context, like
// CuPy's RawModule.
type Module struct {
	dev     *Device
	mod     *cuda.Module
	res     *nvrtc.Result
	mu      sync.Mutex
	kernels map[string]*Kernel
}

var (
	cacheOnce sync.Once
	cache     *nvrtc.Cache
	cacheErr  error
)

// compileCache returns the process's NVRTC cache, keyed on the driver
// version too.
func compileCache() (*nvrtc.Cache, error) {
	cacheOnce.Do(func() {
		v, err := cuda.DriverVersion()
		if err != nil {
			cacheErr = err
			return
		}
		cache, cacheErr = nvrtc.NewCache(nvrtc.CacheConfig{Driver: strconv.Itoa(v)})
	})
	return cache, cacheErr
}

// Compile compiles CUDA C source with NVRTC for the default device and
// loads it; see Device.Compile.
func Compile(src string, opts ...Option) (*Module, error) {
	d, err := Default()
	if err != nil {
		return nil, err
	}
	return d.Compile(src, opts...)
}

// ErrStale is wrapped by the error of a launch through a generated
// launcher whose kernel's Go source (or a function it calls) changed since
// gocu gen wrote the launcher: the file on disk is not what the launcher,
// its checked twin or its CUDA C were generated from. Launchers compare at
// the first launch, when the source files are beside the generated one.
var ErrStale = errors.New("gocu: the kernels changed since gocu gen: run go generate")

// ErrSimulatorCUDA is returned for CUDA C on the simulator, which runs only
// kernels written in Go.
var ErrSimulatorCUDA = errors.New("gocu: the CPU and the simulator run kernels written in Go, not CUDA C: compile CUDA C on a GPU (GOCU_DEVICE=cuda), or write the kernel in Go")

// Compile compiles CUDA C source with NVRTC for exactly this GPU (a CUBIN
// for its sm_XX) and loads it. Compiled code is cached on disk (see package
// nvrtc), and the loaded module is cached per device: compiling the same
// source with the same options again returns the same Module. A compile
// error is an *nvrtc.CompileError that shows each diagnostic with its
// source line.
func (d *Device) Compile(src string, opts ...Option) (*Module, error) {
	if d.kind != CUDA {
		return nil, ErrSimulatorCUDA
	}
	var o nvrtc.Options
	for _, opt := range opts {
		opt(&o)
	}
	major, minor := d.gpu.ComputeCapability()
	target, err := nvrtc.TargetFor(major, minor)
	if err != nil {
		return nil, err
	}
	switch {
	case o.Arch == "ptx":
		target = nvrtc.Compute(major, minor)
	case o.Arch == "a" && major == 9 && minor == 0 && target == nvrtc.SM(major, minor):
		target += "a"
	}
	o.Arch = target
	c, err := compileCache()
	if err != nil {
		return nil, err
	}
	k, _, err := c.Key(src, o)
	if err != nil {
		return nil, err
	}
	d.mu.Lock()
	m := d.modules[k]
	d.mu.Unlock()
	if m != nil {
		return m, nil
	}
	res, err := c.Compile(src, o)
	if err != nil {
		return nil, err
	}
	cm, err := d.gpu.LoadModule(res.Code)
	if err != nil {
		return nil, err
	}
	m = &Module{dev: d, mod: cm, res: res, kernels: map[string]*Kernel{}}
	d.mu.Lock()
	if prev := d.modules[k]; prev != nil { // another goroutine won
		d.mu.Unlock()
		cm.Unload()
		return prev, nil
	}
	d.modules[k] = m
	d.mu.Unlock()
	return m, nil
}

// Log returns the compiler's warnings, if any.
func (m *Module) Log() string { return m.res.Log }

// Cached reports whether the code came from the disk cache.
func (m *Module) Cached() bool { return m.res.Cached }

// CUDA returns the driver module.
func (m *Module) CUDA() *cuda.Module { return m.mod }

// Kernel returns the __global__ function name (an extern "C" name, or a
// name expression given to Compile) as a launchable kernel.
func (m *Module) Kernel(name string) (*Kernel, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if k := m.kernels[name]; k != nil {
		return k, nil
	}
	sym := name
	if lowered, ok := m.res.Lowered[name]; ok {
		sym = lowered
	}
	f, err := m.mod.Function(sym)
	if err != nil {
		return nil, fmt.Errorf("gocu: kernel %q: %w (is it extern \"C\" __global__, or listed in NameExpressions?)", name, err)
	}
	k := &Kernel{dev: m.dev, fn: f, name: name}
	m.kernels[name] = k
	return k, nil
}

// Arg is implemented by values that become a kernel argument only when a
// launch on a device takes them, such as the arrays of package array:
// KernelArg returns what the kernel is given on d (for an array, a *Buffer
// over its memory), or why the value cannot be given (an array whose error
// is set, a strided view, another device).
type Arg interface {
	KernelArg(d *Device) (any, error)
}

// Kernel is a compiled CUDA kernel, like CuPy's RawKernel.
type Kernel struct {
	dev  *Device
	fn   *cuda.Function
	name string

	autoOnce  sync.Once
	autoBlock int
	autoErr   error
}

// Name returns the kernel's name.
func (k *Kernel) Name() string { return k.name }

// CUDA returns the driver function, for its attributes and occupancy.
func (k *Kernel) CUDA() *cuda.Function { return k.fn }

// Launch queues the kernel with the given configuration and arguments and
// returns without waiting for it. Arguments are passed with exact C widths:
// int32 for int, int64 for long long, float32, float64, *Buffer[T] (or
// cuda.DevicePtr) for pointers, and structs of those by value; Go int is
// refused. An Arg, such as an *array.Array, is passed as what its KernelArg
// returns (an array as a pointer to its first element). In, Out and InOut
// buffers make the launch synchronous: it waits for the kernel and copies
// the outputs back.
func (k *Kernel) Launch(cfg Config, args ...any) error {
	var cc cuda.Config
	var err error
	if cfg.Grid == (Dim3{}) && cfg.Block == (Dim3{}) {
		if cc, err = k.auto(cfg); err != nil {
			return err
		}
	} else {
		if cc.Grid, err = cudaDim("grid", cfg.Grid); err != nil {
			return err
		}
		if cc.Block, err = cudaDim("block", cfg.Block); err != nil {
			return err
		}
	}
	cc.SharedMem = cfg.Shared
	if cc.Stream, err = k.dev.CUDAStream(cfg.Stream); err != nil {
		return err
	}
	bound, err := attachAll(k.dev, args)
	if err != nil {
		return err
	}
	// Buffers travel as their *cuda.Memory. The converted arguments live in
	// an array on the stack for the common case, so a launch allocates
	// nothing beyond the caller's boxing of scalar arguments.
	var stack [16]any
	conv := stack[:0]
	for i, a := range args {
		if x, ok := a.(Arg); ok {
			v, err := x.KernelArg(k.dev)
			if err != nil {
				if bound {
					detachAll(args)
				}
				return &opError{op: fmt.Sprintf("launch of %s: argument %d", k.name, i+1), err: err}
			}
			a = v
		}
		if b, ok := a.(memoryArg); ok {
			m, err := b.memory()
			if err != nil {
				if bound {
					detachAll(args)
				}
				return &opError{op: "launch of " + k.name, err: err}
			}
			a = m
		}
		conv = append(conv, a)
	}
	err = k.fn.Launch(cc, conv...)
	if !bound {
		return err
	}
	if err == nil {
		err = cc.Stream.Synchronize()
	}
	if derr := detachAll(args); err == nil {
		err = derr
	}
	return err
}

// auto picks the 1-D configuration for cfg.N threads.
func (k *Kernel) auto(cfg Config) (cuda.Config, error) {
	if cfg.N <= 0 {
		return cuda.Config{}, fmt.Errorf("gocu: launch of %s: no grid and block, and N = %d threads: %w", k.name, cfg.N, cuda.ErrInvalidConfig)
	}
	k.autoOnce.Do(func() {
		k.autoBlock, _, k.autoErr = k.fn.SuggestedBlockSize(cfg.Shared)
	})
	if k.autoErr != nil {
		return cuda.Config{}, k.autoErr
	}
	return cuda.Config{Grid: cuda.GridFor(cfg.N, k.autoBlock), Block: cuda.Dim3{X: uint32(k.autoBlock)}}, nil
}
