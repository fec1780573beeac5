package cuda

import (
	"bytes"
	"fmt"
	"sync"
	"sync/atomic"
	"unsafe"
)

// Module is code loaded into a device's context: PTX (JIT-compiled by the
// driver for the device) or a CUBIN or fatbinary.
type Module struct {
	dev    *Device
	handle uintptr
	closed atomic.Bool
	mu     sync.Mutex
	funcs  map[string]*Function
}

// CUjit_option values (cuda.h).
const (
	jitInfoLogBuffer      = 3
	jitInfoLogBufferSize  = 4
	jitErrorLogBuffer     = 5
	jitErrorLogBufferSize = 6
)

const jitLogSize = 16 << 10

// LoadModule loads a module image: PTX text, a CUBIN (ELF) or a fatbinary.
// A PTX that fails to compile returns a *ModuleError carrying the JIT
// compiler's log (matching ErrInvalidPTX, ErrUnsupportedPTXVersion, ...).
func (d *Device) LoadModule(image []byte) (*Module, error) {
	if len(image) == 0 {
		return nil, fmt.Errorf("cuda: LoadModule: empty image: %w", ErrInvalidImage)
	}
	isELF := bytes.HasPrefix(image, []byte("\x7fELF"))
	isFatbin := bytes.HasPrefix(image, []byte{0x50, 0xed, 0x55, 0xba}) // fatbinary magic 0xBA55ED50
	if !isELF && !isFatbin && image[len(image)-1] != 0 {
		// PTX is read as a C string.
		image = append(image[:len(image):len(image)], 0)
	}
	// The JIT logs live off the Go heap: the driver writes them through
	// addresses stored in the option array.
	logs, err := mapMemory(2 * jitLogSize)
	if err != nil {
		return nil, fmt.Errorf("cuda: LoadModule: %w", err)
	}
	defer unmapMemory(logs)
	opts := [4]int32{jitErrorLogBuffer, jitErrorLogBufferSize, jitInfoLogBuffer, jitInfoLogBufferSize}
	vals := [4]uintptr{
		uintptr(unsafe.Pointer(&logs[0])), jitLogSize,
		uintptr(unsafe.Pointer(&logs[jitLogSize])), jitLogSize,
	}
	m := &Module{dev: d, funcs: map[string]*Function{}}
	r := d.call(d.api.cuModuleLoadDataEx, uintptr(unsafe.Pointer(&m.handle)), uintptr(unsafe.Pointer(&image[0])),
		uintptr(len(opts)), uintptr(unsafe.Pointer(&opts[0])), uintptr(unsafe.Pointer(&vals[0])))
	if r != 0 {
		log := cString(logs[:jitLogSize])
		if info := cString(logs[jitLogSize:]); log == "" {
			log = info
		}
		return nil, &ModuleError{Err: d.err("cuModuleLoadDataEx", r), Log: log}
	}
	return m, nil
}

// LoadPTX loads PTX source.
func (d *Device) LoadPTX(ptx string) (*Module, error) { return d.LoadModule([]byte(ptx)) }

// cString returns the text of b up to its first NUL.
func cString(b []byte) string {
	if i := bytes.IndexByte(b, 0); i >= 0 {
		b = b[:i]
	}
	return string(bytes.TrimSpace(b))
}

// Device returns the device the module is loaded on.
func (m *Module) Device() *Device { return m.dev }

// Handle returns the CUmodule.
func (m *Module) Handle() uintptr { return m.handle }

// Unload unloads the module; its functions cannot be launched afterwards
// (ErrClosed).
func (m *Module) Unload() error {
	if !m.closed.CompareAndSwap(false, true) {
		return fmt.Errorf("cuda: module unloaded twice: %w", ErrClosed)
	}
	return m.dev.err("cuModuleUnload", m.dev.call(m.dev.api.cuModuleUnload, m.handle))
}

// Function returns the kernel called name (its extern "C" or mangled
// name). Functions are looked up once and cached.
func (m *Module) Function(name string) (*Function, error) {
	if m.closed.Load() {
		return nil, fmt.Errorf("cuda: module: %w", ErrClosed)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if f := m.funcs[name]; f != nil {
		return f, nil
	}
	d := m.dev
	cname := append([]byte(name), 0)
	f := &Function{mod: m, dev: d, name: name}
	r := d.call(d.api.cuModuleGetFunction, uintptr(unsafe.Pointer(&f.handle)), m.handle, uintptr(unsafe.Pointer(&cname[0])))
	if r != 0 {
		err := d.err("cuModuleGetFunction", r)
		if r == 500 {
			err = fmt.Errorf("cuda: module has no kernel %q (C++ kernels need extern \"C\" or their mangled name): %w", name, err)
		}
		return nil, err
	}
	for _, a := range []struct {
		attr FuncAttribute
		dst  *int32
	}{
		{FuncMaxThreadsPerBlock, &f.maxThreads},
		{FuncSharedSizeBytes, &f.staticShared},
		{FuncNumRegs, &f.numRegs},
	} {
		v, err := f.Attribute(a.attr)
		if err != nil {
			return nil, err
		}
		*a.dst = int32(v)
	}
	f.params1 = f.countParams() + 1
	dyn, err := f.Attribute(FuncMaxDynamicSharedSizeBytes)
	if err != nil {
		return nil, err
	}
	f.maxDynShared.Store(int32(dyn))
	m.funcs[name] = f
	return f, nil
}

// Global returns the address and size of a __device__ or __constant__
// variable of the module.
func (m *Module) Global(name string) (DevicePtr, int, error) {
	if m.closed.Load() {
		return 0, 0, fmt.Errorf("cuda: module: %w", ErrClosed)
	}
	d := m.dev
	cname := append([]byte(name), 0)
	var p, n uint64
	r := d.call(d.api.cuModuleGetGlobal, uintptr(unsafe.Pointer(&p)), uintptr(unsafe.Pointer(&n)), m.handle, uintptr(unsafe.Pointer(&cname[0])))
	if r != 0 {
		return 0, 0, d.err("cuModuleGetGlobal_v2", r)
	}
	return DevicePtr(p), int(n), nil
}

// FuncAttribute is a CUfunction_attribute.
type FuncAttribute int32

// Function attributes (values from cuda.h).
const (
	FuncMaxThreadsPerBlock        FuncAttribute = 0 // most threads per block a launch may use
	FuncSharedSizeBytes           FuncAttribute = 1 // static shared memory per block
	FuncConstSizeBytes            FuncAttribute = 2 // constant memory
	FuncLocalSizeBytes            FuncAttribute = 3 // local memory per thread
	FuncNumRegs                   FuncAttribute = 4 // registers per thread
	FuncPTXVersion                FuncAttribute = 5 // major*10+minor
	FuncBinaryVersion             FuncAttribute = 6 // major*10+minor
	FuncCacheModeCA               FuncAttribute = 7
	FuncMaxDynamicSharedSizeBytes FuncAttribute = 8 // current dynamic shared memory limit; settable
	FuncPreferredSharedCarveout   FuncAttribute = 9 // percent of L1/shared to use as shared; settable
)

// Function is a kernel of a loaded module.
type Function struct {
	mod          *Module
	dev          *Device
	handle       uintptr
	name         string
	maxThreads   int32
	staticShared int32
	numRegs      int32
	maxDynShared atomic.Int32
	params1      int32 // the kernel's parameter count plus one; 0 where the driver cannot say
}

// FuncAttributes are the attributes of a kernel as compiled for the device.
type FuncAttributes struct {
	MaxThreadsPerBlock  int // threads per block a launch may use (registers limit it)
	SharedSizeBytes     int // static shared memory per block
	ConstSizeBytes      int
	LocalSizeBytes      int // local memory (spills, stack) per thread
	NumRegs             int // registers per thread
	PTXVersion          int // major*10+minor
	BinaryVersion       int // major*10+minor: the SM architecture the code runs as
	MaxDynamicSharedMem int // current limit for dynamic shared memory per block
}

// Name returns the kernel's name.
func (f *Function) Name() string { return f.name }

// Module returns the module the kernel belongs to.
func (f *Function) Module() *Module { return f.mod }

// Device returns the device the kernel is loaded on.
func (f *Function) Device() *Device { return f.dev }

// Handle returns the CUfunction.
func (f *Function) Handle() uintptr { return f.handle }

// Attribute reads one attribute (cuFuncGetAttribute).
func (f *Function) Attribute(a FuncAttribute) (int, error) {
	var v int32
	r := f.dev.call(f.dev.api.cuFuncGetAttribute, uintptr(unsafe.Pointer(&v)), uintptr(a), f.handle)
	if r != 0 {
		return 0, f.dev.err(fmt.Sprintf("cuFuncGetAttribute(%d)", a), r)
	}
	return int(v), nil
}

// Attributes reads the kernel's attributes.
func (f *Function) Attributes() (FuncAttributes, error) {
	var fa FuncAttributes
	for _, a := range []struct {
		attr FuncAttribute
		dst  *int
	}{
		{FuncMaxThreadsPerBlock, &fa.MaxThreadsPerBlock},
		{FuncSharedSizeBytes, &fa.SharedSizeBytes},
		{FuncConstSizeBytes, &fa.ConstSizeBytes},
		{FuncLocalSizeBytes, &fa.LocalSizeBytes},
		{FuncNumRegs, &fa.NumRegs},
		{FuncPTXVersion, &fa.PTXVersion},
		{FuncBinaryVersion, &fa.BinaryVersion},
		{FuncMaxDynamicSharedSizeBytes, &fa.MaxDynamicSharedMem},
	} {
		v, err := f.Attribute(a.attr)
		if err != nil {
			return fa, err
		}
		*a.dst = v
	}
	return fa, nil
}

// SetAttribute sets a settable attribute (cuFuncSetAttribute).
func (f *Function) SetAttribute(a FuncAttribute, v int) error {
	r := f.dev.call(f.dev.api.cuFuncSetAttribute, f.handle, uintptr(a), uintptr(int32(v)))
	if r != 0 {
		return f.dev.err(fmt.Sprintf("cuFuncSetAttribute(%d)", a), r)
	}
	if a == FuncMaxDynamicSharedSizeBytes {
		f.maxDynShared.Store(int32(v))
	}
	return nil
}

// SetMaxDynamicSharedMemory allows launches of the kernel with up to bytes
// of dynamic shared memory per block. Above 48 KiB this is the opt-in CUDA
// requires; the limit is the device's opt-in maximum less the kernel's
// static shared memory.
func (f *Function) SetMaxDynamicSharedMemory(bytes int) error {
	limit := f.dev.props.SharedMemPerBlockOptin - int(f.staticShared)
	if bytes < 0 || bytes > limit {
		return fmt.Errorf("cuda: %s: %d bytes of dynamic shared memory requested; the device allows %d per block, %d of which the kernel uses statically, leaving %d: %w",
			f.name, bytes, f.dev.props.SharedMemPerBlockOptin, f.staticShared, limit, ErrInvalidValue)
	}
	return f.SetAttribute(FuncMaxDynamicSharedSizeBytes, bytes)
}

// SuggestedBlockSize returns the block size that maximises occupancy for
// the kernel with dynamicShared bytes of dynamic shared memory per block,
// and the smallest grid that fills the device at that size
// (cuOccupancyMaxPotentialBlockSize).
func (f *Function) SuggestedBlockSize(dynamicShared int) (block, minGrid int, err error) {
	var g, b int32
	r := f.dev.call(f.dev.api.cuOccupancyMaxBlockSize, uintptr(unsafe.Pointer(&g)), uintptr(unsafe.Pointer(&b)),
		f.handle, 0, uintptr(dynamicShared), 0)
	if r != 0 {
		return 0, 0, f.dev.err("cuOccupancyMaxPotentialBlockSize", r)
	}
	return int(b), int(g), nil
}

// MaxActiveBlocksPerSM returns how many blocks of block threads and
// dynamicShared bytes of dynamic shared memory can be resident on one SM
// (cuOccupancyMaxActiveBlocksPerMultiprocessor).
func (f *Function) MaxActiveBlocksPerSM(block, dynamicShared int) (int, error) {
	var n int32
	r := f.dev.call(f.dev.api.cuOccupancyMaxActive, uintptr(unsafe.Pointer(&n)), f.handle, uintptr(int32(block)), uintptr(dynamicShared))
	if r != 0 {
		return 0, f.dev.err("cuOccupancyMaxActiveBlocksPerMultiprocessor", r)
	}
	return int(n), nil
}

// countParams asks the driver how many parameters the kernel takes
// (cuFuncGetParamInfo, CUDA 12.4 and later), or returns -1. A module
// loaded from an image carries no source, so this is how a launch with an
// argument missing is refused before it reads garbage.
func (f *Function) countParams() int32 {
	d := f.dev
	if d.api.cuFuncGetParamInfo == 0 {
		return -1
	}
	for i := range 4096 {
		var off, size uint64
		r := d.call(d.api.cuFuncGetParamInfo, f.handle, uintptr(i), uintptr(unsafe.Pointer(&off)), uintptr(unsafe.Pointer(&size)))
		if r != 0 {
			if i == 0 && r != 1 { // 1: CUDA_ERROR_INVALID_VALUE, past the last parameter
				return -1
			}
			return int32(i)
		}
	}
	return -1
}

// Params is the number of parameters the kernel takes, or -1 where the
// driver cannot say (before CUDA 12.4).
func (f *Function) Params() int { return int(f.params1) - 1 }
