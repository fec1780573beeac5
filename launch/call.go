package launch

import (
	"errors"
	"fmt"
	"reflect"
	"strings"
	"unsafe"

	"github.com/gocu-dev/gocu"
	"github.com/gocu-dev/gocu/cuda"
	"github.com/gocu-dev/gocu/internal/bufarg"
	"github.com/gocu-dev/gocu/kernel"
	"github.com/gocu-dev/gocu/meta"
	"github.com/gocu-dev/gocu/sim"
)

// Call carries one launch of a kernel of a Program through its steps. A
// generated launcher reads
//
//	var l launch.Call
//	if l.Start(gocuProgram, 0, d, cfg) { // a GPU
//		m0, n0 := launch.DeviceArg(&l, 0, rgb)
//		m1, n1 := launch.DeviceArg(&l, 1, gray)
//		return l.Run(m0, n0, m1, n1, n)
//	}
//	s0, s1 := launch.SimArg(&l, 0, rgb), launch.SimArg(&l, 1, gray)
//	return l.Simulate(func(t *kernel.Thread) { Gray(t, s0, s1, n) }, ..., s0, s1, n)
//
// The first error of any step is kept; Run and Simulate return it. The
// value lives on the launcher's stack, so that a GPU launch allocates
// nothing.
type Call struct {
	p   *Program
	k   int
	km  *meta.Kernel
	dev *gocu.Device
	cfg gocu.Config
	b   *build
	cc  cuda.Config
	err error

	// In, Out and InOut buffers given memory for this launch, to copy back
	// and release at its end.
	nbound int
	bound  [4]bufarg.Bound
	more   []bufarg.Bound
}

// Start begins a launch of kernel k (its index in the program's module) on
// d with cfg: it checks the configuration and, on a GPU, compiles the
// program on first use. It reports whether the launch runs on a GPU; the
// launcher then passes its arguments through DeviceArg and calls Run, and
// otherwise through SimArg and Simulate.
func (l *Call) Start(p *Program, k int, d *gocu.Device, cfg gocu.Config) (gpu bool) {
	l.p, l.k, l.dev, l.cfg = p, k, d, cfg
	l.km = &p.mod.Kernels[k]
	if d == nil || d.Kind() == 0 {
		l.err = fmt.Errorf("gocu: launch of %s: no device (a nil or zero *gocu.Device): use gocu.Default or gocu.Open", l.km.Name)
		return false
	}
	if err := p.stale(); err != nil {
		l.err = err
		return d.Kind() == gocu.CUDA
	}
	if err := checkLaunch(l.km, &l.cfg, d.Kind()); err != nil {
		l.err = err
		return d.Kind() == gocu.CUDA
	}
	if d.Kind() != gocu.CUDA {
		if l.cfg.Grid == (gocu.Dim3{}) && l.cfg.Block == (gocu.Dim3{}) {
			block := 256
			if mt := l.km.MaxThreads; mt > 0 && mt < block {
				block = mt
			}
			l.cfg.Grid, l.cfg.Block = gocu.Dim3{X: int32((cfg.N + block - 1) / block)}, gocu.Dim3{X: int32(block)}
		}
		return false
	}
	if l.km.ArchSpecific {
		if major, minor := d.CUDA().ComputeCapability(); major != 9 || minor != 0 {
			l.err = archError(l.km.Name, d.Name(), major, minor)
			return true
		}
	}
	v := envVariant()
	if cfg.Debug {
		v |= variantDebug
	}
	b, err := p.build(d, v)
	if err != nil {
		l.err = err
		return true
	}
	l.b = b
	fn := b.fns[k]
	if l.cfg.Grid == (gocu.Dim3{}) && l.cfg.Block == (gocu.Dim3{}) {
		block := int(b.auto[k].Load())
		if block == 0 {
			bs, _, err := fn.SuggestedBlockSize(cfg.Shared)
			if err != nil {
				l.err = fmt.Errorf("gocu: launch of %s: %w", l.km.Name, err)
				return true
			}
			if mt := l.km.MaxThreads; mt > 0 && bs > mt {
				bs = mt
			}
			b.auto[k].Store(int32(bs))
			block = bs
		}
		l.cc.Grid = cuda.GridFor(cfg.N, block)
		l.cc.Block = cuda.Dim3{X: uint32(block)}
	} else {
		l.cc.Grid = cuda.Dim3{X: uint32(cfg.Grid.X), Y: uint32(cfg.Grid.Y), Z: uint32(cfg.Grid.Z)}
		l.cc.Block = cuda.Dim3{X: uint32(cfg.Block.X), Y: uint32(cfg.Block.Y), Z: uint32(cfg.Block.Z)}
	}
	l.cc.SharedMem = cfg.Shared
	if cfg.Shared > defaultDynShared && int(b.dyn[k].Load()) < cfg.Shared {
		// Above 48 KiB CUDA needs an opt-in per kernel; make it once.
		if err := fn.SetMaxDynamicSharedMemory(cfg.Shared); err != nil {
			l.err = fmt.Errorf("gocu: launch of %s with %d bytes of dynamic shared memory: %w", l.km.Name, cfg.Shared, err)
			return true
		}
		b.dyn[k].Store(int32(cfg.Shared))
	}
	if l.cc.Stream, err = d.CUDAStream(cfg.Stream); err != nil {
		l.err = fmt.Errorf("gocu: launch of %s: %w", l.km.Name, err)
	}
	return true
}

// ErrNeedsSM90a is wrapped by the error of a launch, on a GPU other than a
// Hopper of compute capability 9.0, of a kernel that uses warpgroup MMAs
// (meta.Kernel.ArchSpecific): compiled for that GPU they would trap, and
// a trap loses the CUDA context. The simulator runs such kernels anywhere.
var ErrNeedsSM90a = errors.New("the kernel needs sm_90a")

func archError(kernel, gpu string, major, minor int) error {
	return fmt.Errorf("gocu: launch of %s: the kernel uses Hopper's warpgroup MMA (kernel.WGMMABF16 and its kin, PTX wgmma), which only sm_90a has, "+
		"a GPU of compute capability 9.0 such as the H100 or H200; the %s is %d.%d: run it on the simulator, or launch a kernel built on kernel.MMABF16 (mma.sync) there: %w",
		kernel, gpu, major, minor, ErrNeedsSM90a)
}

// defaultDynShared is the dynamic shared memory every kernel may use
// without opting in.
const defaultDynShared = 48 << 10

// checkLaunch checks a configuration for kernel km on a device of kind.
func checkLaunch(km *meta.Kernel, cfg *gocu.Config, kind gocu.Kind) error {
	bad := func(format string, a ...any) error {
		return fmt.Errorf("gocu: launch of %s: %s: %w", km.Name, fmt.Sprintf(format, a...), cuda.ErrInvalidConfig)
	}
	if cfg.Checked && kind == gocu.CUDA {
		return fmt.Errorf("gocu: launch of %s: Config.Checked asks for the simulator's race detection, which a GPU cannot do: run on the simulator (GOCU_DEVICE=sim), or use Config.Debug for Go's bounds checks on the GPU", km.Name)
	}
	auto := cfg.Grid == (gocu.Dim3{}) && cfg.Block == (gocu.Dim3{})
	if auto {
		if cfg.N <= 0 {
			return bad("no grid and block, and N = %d threads (use gocu.Auto(n) with n > 0, or set Grid and Block)", cfg.N)
		}
		if cfg.N > (1<<31-1)*256 {
			return bad("N = %d threads is more than a 1-D grid holds", cfg.N)
		}
	} else {
		for _, d := range []struct {
			what string
			v    gocu.Dim3
		}{{"grid", cfg.Grid}, {"block", cfg.Block}} {
			if d.v.X < 0 || d.v.Y < 0 || d.v.Z < 0 {
				return bad("%s (%d,%d,%d) has a negative size", d.what, d.v.X, d.v.Y, d.v.Z)
			}
			if d.v.X == 0 {
				return bad("%s (%d,%d,%d) is empty: X must be at least 1 (a Y or Z of 0 counts as 1)", d.what, d.v.X, d.v.Y, d.v.Z)
			}
		}
		if mt := km.MaxThreads; mt > 0 {
			b := cfg.Block
			b.Y, b.Z = max(b.Y, 1), max(b.Z, 1)
			if n := int(b.X) * int(b.Y) * int(b.Z); n > mt {
				return bad("a block of %d threads is more than the %d of the kernel's //gocu:launch_bounds", n, mt)
			}
		}
	}
	if cfg.Shared < 0 {
		return bad("negative dynamic shared memory (%d bytes)", cfg.Shared)
	}
	if km.DynamicShared && cfg.Shared == 0 {
		return bad("the kernel uses kernel.DynamicShared, but Config.Shared is 0: set it to the bytes of dynamic shared memory each block needs")
	}
	return nil
}

// fail records the first error, naming the kernel argument.
func (l *Call) fail(i int, err error) {
	if l.err == nil {
		l.err = &argError{kernel: l.km.Name, index: i, name: l.km.Params[i].Name, err: err}
	}
}

// argError is a launch refused because of one argument.
type argError struct {
	kernel, name string
	index        int
	err          error
}

func (e *argError) Error() string {
	return fmt.Sprintf("gocu: launch of %s: argument %d (%s): %s", e.kernel, e.index+1, e.name, strings.TrimPrefix(e.err.Error(), "gocu: "))
}

func (e *argError) Unwrap() error { return e.err }

// addBound records a buffer given memory for this launch.
func (l *Call) addBound(h bufarg.Bound) {
	if l.nbound < len(l.bound) {
		l.bound[l.nbound] = h
	} else {
		l.more = append(l.more, h)
	}
	l.nbound++
}

// detach copies the outputs of In/Out/InOut buffers back and releases
// their memory; err is the launch's error so far. After a failed launch
// nothing is copied back.
func (l *Call) detach(err error) error {
	for i := 0; i < l.nbound; i++ {
		var a bufarg.Bound
		if i < len(l.bound) {
			a = l.bound[i]
			l.bound[i] = nil
		} else {
			a = l.more[i-len(l.bound)]
		}
		if err != nil {
			a.Release()
			continue
		}
		err = a.Detach()
	}
	l.nbound, l.more = 0, nil
	return err
}

// arg checks a buffer argument for the launch and gives In, Out and InOut
// buffers their memory on the launch's device.
func arg[T any](l *Call, i int, b *gocu.Buffer[T]) bool {
	if l.err != nil {
		return false
	}
	bound, err := bufarg.Use(b, l.dev)
	if bound != nil {
		l.addBound(bound)
	}
	if err != nil {
		l.fail(i, err)
		return false
	}
	return true
}

// DeviceArg returns the device memory and the length of buffer argument i
// of a GPU launch: a slice parameter travels as its element pointer and
// its length.
func DeviceArg[T any](l *Call, i int, b *gocu.Buffer[T]) (*cuda.Memory, int64) {
	if !arg(l, i, b) {
		return nil, 0
	}
	return b.Memory(), int64(b.Len())
}

// SimArg returns the memory of buffer argument i of a simulator launch: the
// slice the kernel indexes.
func SimArg[T any](l *Call, i int, b *gocu.Buffer[T]) []T {
	if !arg(l, i, b) {
		return nil
	}
	return b.Host()
}

// ValueArg passes the struct or array *v by its bytes, aligned as the C
// type requires (align): Go's layout is the C struct's (gocu gen checks it
// with static_assert), and Go int fields are 8 bytes as in the generated C.
func ValueArg[T any](v *T, align int) cuda.Raw {
	return cuda.Raw{Bytes: unsafe.Slice((*byte)(unsafe.Pointer(v)), unsafe.Sizeof(*v)), Align: align}
}

// Run launches the kernel on the GPU with its arguments packed as package
// meta documents. It returns without waiting, except for a debug launch
// or one with In, Out or InOut buffers.
func (l *Call) Run(args ...any) error {
	if l.err != nil {
		return l.detach(l.err)
	}
	fn := l.b.fns[l.k]
	var err error
	if l.b.v&variantDebug != 0 {
		err = l.runDebug(fn, args)
	} else {
		err = fn.Launch(l.cc, args...)
		if err == nil && l.nbound > 0 {
			err = l.sync()
		}
	}
	if l.nbound > 0 {
		err = l.detach(err)
	}
	return err
}

// sync waits for the launch's stream.
func (l *Call) sync() error {
	if s := l.cc.Stream; s != nil {
		return s.Synchronize()
	}
	return l.dev.CUDA().DefaultStream().Synchronize()
}

// Simulate runs the kernel on the simulator: fn calls the kernel with its
// arguments, checked calls its instrumented twin (for Config.Checked and
// GOCU_SIM_CHECKED), and args are the arguments as the kernel receives
// them, which checked mode uses to name global memory.
func (l *Call) Simulate(fn, checked func(*kernel.Thread), args ...any) error {
	if l.err != nil {
		return l.detach(l.err)
	}
	cfg := sim.Config{Grid: l.cfg.Grid, Block: l.cfg.Block, DynamicSharedBytes: l.cfg.Shared, Checked: l.cfg.Checked, Device: l.dev.ID()}
	err := sim.Launch(cfg, sim.Kernel{Name: l.km.Name, Func: fn, Checked: checked, Args: args})
	if l.nbound > 0 {
		err = l.detach(err)
	}
	return err
}

// Buffer returns the buffer of slice argument i: s itself when it is a
// *gocu.Buffer[T], else what its KernelArg gives on the launch's device,
// which must be a *gocu.Buffer[T]. A failure fails the launch and returns
// nil, which DeviceArg and SimArg then pass over.
func Buffer[T any](l *Call, i int, s gocu.Slice[T]) *gocu.Buffer[T] {
	if b, ok := s.(*gocu.Buffer[T]); ok || l.err != nil {
		return b
	}
	if s == nil {
		l.fail(i, errors.New("nil (pass a *gocu.Buffer or an array)"))
		return nil
	}
	v, err := s.KernelArg(l.dev)
	if err != nil {
		l.fail(i, err)
		return nil
	}
	b, ok := v.(*gocu.Buffer[T])
	if !ok {
		l.fail(i, fmt.Errorf("%T gives %s, the kernel's parameter is []%v", s, elemOf(v), reflect.TypeFor[T]()))
		return nil
	}
	return b
}

// elemOf describes the elements of a kernel argument that is not the
// buffer a launcher wants.
func elemOf(v any) string {
	if t := reflect.TypeOf(v); t != nil && t.Kind() == reflect.Pointer {
		if m, ok := t.MethodByName("Host"); ok && m.Type.NumOut() == 1 && m.Type.Out(0).Kind() == reflect.Slice {
			return m.Type.Out(0).Elem().String() + " elements"
		}
	}
	return fmt.Sprintf("a %T", v)
}
