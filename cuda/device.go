package cuda

import (
	"fmt"
	"os"
	"runtime"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/gocu-dev/gocu/internal/dynlib"
)

// Device is one GPU with its primary context. Every call that needs the
// context makes it current on the calling OS thread first (see the package
// documentation), so a Device may be used from any goroutine.
type Device struct {
	api     *api
	ordinal int
	handle  int32   // CUdevice
	ctx     uintptr // primary context, retained for the life of the process
	props   Props
	alloc   *Allocator
	stream  *Stream // the default (legacy NULL) stream

	// recent are the kernels launched last (a ring), named in sticky
	// errors.
	recent [recentKernels]atomic.Pointer[Function]
	lost   atomic.Pointer[Error] // the first sticky error: the context is gone
	next   atomic.Uint32
}

// Lost returns the first sticky error the device reported (its context is
// lost: every later call fails with it), or nil. Calls that would not reach
// the driver, such as an allocation the cache could serve, return it too.
func (d *Device) Lost() error {
	if e := d.lost.Load(); e != nil {
		return e
	}
	return nil
}

// recentKernels is how many of the last launches a sticky error names.
const recentKernels = 8

// launched records f among the recent launches. A repeat of the kernel
// recorded last is not recorded again (recentNames would show it once),
// which spares a launch loop two atomic writes per launch and keeps
// older kernels in the ring.
func (d *Device) launched(f *Function) {
	if d.recent[d.next.Load()%recentKernels].Load() == f {
		return
	}
	d.recent[d.next.Add(1)%recentKernels].Store(f)
}

// recentNames lists the recent launches, the most recent first, with
// repeats of one kernel in a row shown once.
func (d *Device) recentNames() []string {
	var names []string
	n := d.next.Load()
	for i := range uint32(recentKernels) {
		f := d.recent[(n-i)%recentKernels].Load()
		if f == nil {
			break
		}
		if len(names) == 0 || names[len(names)-1] != f.name {
			names = append(names, f.name)
		}
	}
	return names
}

var (
	devMu   sync.Mutex
	devices = map[int]*Device{}
)

// DeviceAt returns device ordinal (0 is the first GPU the driver lists,
// after CUDA_VISIBLE_DEVICES). The same *Device is returned on every call.
func DeviceAt(ordinal int) (*Device, error) {
	if err := Init(); err != nil {
		return nil, err
	}
	if ordinal < 0 || ordinal >= numDevices {
		return nil, fmt.Errorf("cuda: device %d does not exist (the driver sees %d): %w", ordinal, numDevices, ErrInvalidDevice)
	}
	devMu.Lock()
	defer devMu.Unlock()
	if d := devices[ordinal]; d != nil {
		return d, nil
	}
	d, err := openDevice(drv, ordinal)
	if err != nil {
		return nil, err
	}
	devices[ordinal] = d
	return d, nil
}

// Devices returns every device the driver sees.
func Devices() ([]*Device, error) {
	if err := Init(); err != nil {
		return nil, err
	}
	ds := make([]*Device, numDevices)
	for i := range ds {
		d, err := DeviceAt(i)
		if err != nil {
			return nil, err
		}
		ds[i] = d
	}
	return ds, nil
}

func openDevice(a *api, ordinal int) (*Device, error) {
	d := &Device{api: a, ordinal: ordinal}
	if r := Result(dynlib.Call(a.cuDeviceGet, uintptr(unsafe.Pointer(&d.handle)), uintptr(ordinal))); r != 0 {
		return nil, a.error("cuDeviceGet", r)
	}
	if r := Result(dynlib.Call(a.cuDevicePrimaryCtxRetain, uintptr(unsafe.Pointer(&d.ctx)), uintptr(d.handle))); r != 0 {
		return nil, a.error("cuDevicePrimaryCtxRetain", r)
	}
	if err := d.readProps(); err != nil {
		return nil, err
	}
	d.stream = &Stream{dev: d}
	caching := os.Getenv(envAlloc) != "plain"
	var limit int64
	if v := os.Getenv(envLimit); v != "" {
		l, err := parseBytes(v)
		if err != nil {
			return nil, fmt.Errorf("cuda: %s: %w", envLimit, err)
		}
		limit = l
	}
	d.alloc = newAllocator(&driverBackend{d: d}, caching, limit)
	d.alloc.ordinal = ordinal
	return d, nil
}

// call calls fn with d's context current on the calling OS thread.
// Pointers converted to uintptr in the call expression stay alive and on
// the heap for the call.
//
//go:uintptrescapes
func (d *Device) call(fn uintptr, args ...uintptr) Result {
	f := getFrame()
	if f == nil {
		return 2 // no host memory for the call frame
	}
	if len(args) > ctxCallArgs {
		putFrame(f)
		panic("cuda: driver call with more than 12 arguments")
	}
	clear(f.args[copy(f.args, args):ctxCallArgs])
	runtime.LockOSThread()
	r, _ := f.ctxCall(d.api, d.ctx, fn)
	runtime.UnlockOSThread()
	putFrame(f)
	return r
}

// err is d.api.error.
// A sticky error names the kernel launched last.
func (d *Device) err(fn string, r Result) error {
	err := d.api.error(fn, r)
	if r.Sticky() {
		err.(*Error).Recent = d.recentNames()
		d.lost.CompareAndSwap(nil, err.(*Error))
	}
	return err
}

// Ordinal returns the device's index.
func (d *Device) Ordinal() int { return d.ordinal }

// Name returns the device's name, such as "NVIDIA H100 80GB HBM3".
func (d *Device) Name() string { return d.props.Name }

// Props returns the device's properties, read when the device was opened.
func (d *Device) Props() Props { return d.props }

// ComputeCapability returns the major and minor compute capability, such as
// 9 and 0 for an H100.
func (d *Device) ComputeCapability() (major, minor int) { return d.props.Major, d.props.Minor }

// Arch returns the GPU architecture to compile for, such as "sm_90".
func (d *Device) Arch() string { return d.props.Arch() }

func (d *Device) String() string {
	return fmt.Sprintf("cuda:%d (%s, %s)", d.ordinal, d.props.Name, d.props.Arch())
}

// Allocator returns the device's memory allocator.
func (d *Device) Allocator() *Allocator { return d.alloc }

// DefaultStream returns the device's default stream: CUDA's legacy NULL
// stream, which orders itself with every blocking stream of the device.
func (d *Device) DefaultStream() *Stream { return d.stream }

// MemInfo returns the free and total memory of the device in bytes, as the
// driver sees it (memory cached by the Allocator counts as used; Trim
// returns it).
func (d *Device) MemInfo() (free, total int64, err error) {
	var f, t uint64
	r := d.call(d.api.cuMemGetInfo, uintptr(unsafe.Pointer(&f)), uintptr(unsafe.Pointer(&t)))
	return int64(f), int64(t), d.err("cuMemGetInfo_v2", r)
}

// Synchronize waits until all work queued on the device has finished and
// returns the first error from it.
func (d *Device) Synchronize() error {
	return d.err("cuCtxSynchronize", d.call(d.api.cuCtxSynchronize))
}

// Attribute returns one device attribute (cuDeviceGetAttribute).
func (d *Device) Attribute(attr DeviceAttribute) (int, error) {
	var v int32
	r := Result(dynlib.Call(d.api.cuDeviceGetAttribute, uintptr(unsafe.Pointer(&v)), uintptr(attr), uintptr(d.handle)))
	if r != 0 {
		return 0, d.err(fmt.Sprintf("cuDeviceGetAttribute(%d)", attr), r)
	}
	return int(v), nil
}

// Context returns the device's primary CUcontext, for other CUDA libraries.
func (d *Device) Context() uintptr { return d.ctx }

// WithContext runs fn on a locked OS thread with the device's context
// current, for calling other CUDA libraries (cuBLAS, ...) through their own
// bindings: their calls inside fn see the right context.
func (d *Device) WithContext(fn func() error) error {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	f := getFrame()
	if f == nil {
		return fmt.Errorf("cuda: WithContext: cannot map memory for the call")
	}
	r := f.bind(d.api, d.ctx)
	putFrame(f)
	if r != 0 {
		return d.err("cuCtxSetCurrent", r)
	}
	return fn()
}
