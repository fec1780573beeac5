// Package meta describes the kernels that gocu gen translated: the CUDA C++
// source of a Go package, each kernel's parameters and resource use, and the
// source-site table that turns a GPU debug-mode error into a Go file:line.
//
// Generated files (zz_gocu_<pkg>.go) build a Module and Register it; launchers
// and the simulator look kernels up by their Go function with Lookup. The
// package imports only kernel, so that generated code stays light.
package meta

import (
	"fmt"
	"reflect"
	"sync"

	"github.com/gocu-dev/gocu/kernel"
)

// Module is everything gocu gen wrote for one Go package: its kernels'
// CUDA source and their launch metadata. It is not a loaded module (that
// is gocu.Module, or cuda.Module below it).
type Module struct {
	Package string // import path of the Go package
	Source  string // CUDA C++ source of all the package's kernels, for NVRTC
	SHA256  string // hex SHA-256 of Source
	Kernels []Kernel
	// ArchSpecific is set when the source uses instructions of the GPU's
	// arch-specific target (wgmma, sm_90a): launchers then compile it with
	// gocu.ArchSpecific.
	ArchSpecific bool
	// Sites is the site table: the site id recorded by a debug-mode check
	// on the GPU (word 1 of the error buffer, see ErrorBuffer) indexes it.
	// The checked twins of the kernels use the same Site values.
	Sites []*kernel.Site
	// GoSources are the Go functions of the package that the CUDA source
	// was translated from, each with the hash of its source text: the
	// launchers compare them with the files on disk at their first launch,
	// so that a kernel changed without go generate is an error.
	GoSources []GoSource
}

// GoSource is one Go function that gocu gen translated.
type GoSource struct {
	File string // base name of its file, in the package's directory
	// Func is its name; a method's is Type.Method, with the receiver's
	// base type name.
	Func string
	// SHA256 is the hex SHA-256 of its declaration's text, from the func
	// keyword to the closing brace.
	SHA256 string
}

// Kernel describes one //gocu:kernel function.
type Kernel struct {
	// Name is the Go name of the kernel; the CUDA entry point has the same
	// name (extern "C", so cuModuleGetFunction finds it unmangled) unless
	// that name is reserved in CUDA C++, in which case Entry differs.
	Name  string
	Entry string
	// Params are the Go parameters after the *kernel.Thread, in order.
	Params []Param

	// Barriers is set when the kernel (or a function it calls) uses
	// SyncThreads or one of its variants.
	Barriers bool
	// Warp is set when it uses shuffles, votes or SyncWarp.
	Warp bool
	// Atomics is set when it uses atomic operations.
	Atomics bool
	// SharedBytes is the size of its static shared memory (the sum of its
	// kernel.Shared declarations, each aligned as CUDA aligns it).
	SharedBytes int
	// DynamicShared is set when it calls kernel.DynamicShared: the launch
	// must then pass a dynamic shared-memory size.
	DynamicShared bool
	// MaxThreads and MinBlocks come from a //gocu:launch_bounds directive
	// (0 when absent): the kernel must not be launched with more than
	// MaxThreads threads per block.
	MaxThreads, MinBlocks int
	// NoAlias is set by //gocu:noalias: slice pointers are __restrict__, so
	// the slices passed to one launch must not overlap.
	NoAlias bool
	// ArchSpecific is set when the kernel (or a function it calls) uses
	// warpgroup MMAs (kernel.WGMMABF16 and its kin), which only sm_90a
	// has: launchers refuse it on other GPUs, where it would trap.
	ArchSpecific bool
	// Prints is set when the kernel (or a function it calls) prints with
	// fmt.Printf, fmt.Println or fmt.Print, which its twin does through
	// kernel.Printf: the simulator then runs the twin in every mode, so
	// that the output is ordered by block and thread.
	Prints bool

	// Func is the Go kernel function itself, Checked its instrumented twin
	// for the simulator's checked mode (same signature, every element
	// access goes through kernel.At).
	Func    any
	Checked any
}

// Kind is how a kernel parameter travels to the GPU.
type Kind uint8

// The parameter kinds.
const (
	// Scalar: one kernel argument of CType (Size bytes), the Go value's
	// bytes as they are (bool is one byte, int and uint are 8 bytes).
	Scalar Kind = iota
	// Slice: two kernel arguments, the device address of element 0
	// (CType is the element pointer type, 8 bytes) followed by the length
	// in elements as a long long (8 bytes).
	Slice
	// Struct: one kernel argument, the Go struct's bytes as they are; the
	// generated C struct has the same size, alignment and field offsets
	// (checked by static_assert in the CUDA source).
	Struct
	// Array: one kernel argument, the Go array's bytes as they are
	// (gocu_array<T, N> in C, a struct wrapping T v[N]).
	Array
)

func (k Kind) String() string {
	switch k {
	case Scalar:
		return "scalar"
	case Slice:
		return "slice"
	case Struct:
		return "struct"
	case Array:
		return "array"
	}
	return fmt.Sprintf("Kind(%d)", uint8(k))
}

// Param is one kernel parameter.
type Param struct {
	Name   string // Go name
	GoType string // Go type as written in the kernel's package, such as "[]float32"
	Kind   Kind
	// CType is the C++ type of the (first) kernel argument: "float",
	// "long long", "pkg_Point", or for a slice the element pointer type
	// such as "float*".
	CType string
	// Size and Align are the size and alignment in bytes of the (first)
	// kernel argument. For a slice the second argument is always 8/8.
	Size, Align int
	// ElemSize is the size of one element of a slice, in bytes.
	ElemSize int
}

// Args returns the number of CUDA kernel arguments the parameter occupies.
func (p Param) Args() int {
	if p.Kind == Slice {
		return 2
	}
	return 1
}

// The debug-mode error buffer.
//
// A source compiled with -DGOCU_DEBUG defines, at module scope,
//
//	extern "C" __device__ unsigned long long gocu_err[ErrorWords];
//
// and, beside it, the kernel
//
//	extern "C" __global__ void gocu_err_take(unsigned long long* out)
//
// which copies the buffer to out (when out is not null) and clears it: the
// launcher runs it on ErrorWords threads before a launch (to clear it) and
// after it (to read it), on the launch's stream. The first thread whose
// check fails claims the buffer (atomicCAS of word 0 from 0 to the error code), fills
// the other words and continues with a harmless substitute element, so the
// kernel neither faults nor hangs; later failures only increment word
// ErrCount. Because the buffer is per module, debug-mode launches of one
// module must not run concurrently (the launcher serialises them).
const (
	ErrorWords = 16 // length of gocu_err in 64-bit words

	ErrCode    = 0  // an ErrorCode; 0 means no error
	ErrSite    = 1  // index into Module.Sites
	ErrValue   = 2  // the index, the low slice bound, the shift count, or the byte length
	ErrValue2  = 3  // the high slice bound, the address of the indexed slice's element 0, or the misaligned address
	ErrLength  = 4  // the length the value was checked against, or the element size
	ErrBlockX  = 5  // blockIdx.x, .y, .z in words 5, 6, 7
	ErrThreadX = 8  // threadIdx.x, .y, .z in words 8, 9, 10
	ErrCount   = 11 // number of failed checks, including the first
)

// ErrorCode says which check failed.
type ErrorCode uint64

// The error codes of word ErrCode.
const (
	ErrIndex       ErrorCode = 1 // index out of range: value, length, value2 = the slice's address (0 for arrays)
	ErrSliceBounds ErrorCode = 2 // slice bounds out of range: low, high, length
	ErrDivide      ErrorCode = 3 // integer divide by zero
	ErrShift       ErrorCode = 4 // negative shift amount: value
	ErrReinterpret ErrorCode = 5 // Reinterpret: byte length not a multiple: value=bytes, length=element size
	ErrAlign       ErrorCode = 6 // Reinterpret: misaligned: value2=address, length=alignment
)

func (c ErrorCode) String() string {
	switch c {
	case 0:
		return "no error"
	case ErrIndex:
		return "index out of range"
	case ErrSliceBounds:
		return "slice bounds out of range"
	case ErrDivide:
		return "integer divide by zero"
	case ErrShift:
		return "negative shift amount"
	case ErrReinterpret:
		return "Reinterpret of a length that is not a whole number of elements"
	case ErrAlign:
		return "Reinterpret of misaligned data"
	}
	return fmt.Sprintf("ErrorCode(%d)", uint64(c))
}

var (
	mu      sync.RWMutex
	modules []*Module
	byFunc  = map[uintptr]kernelRef{}
)

type kernelRef struct {
	m *Module
	k int
}

// Register records a module so that Lookup finds its kernels. Generated
// files call it from init.
func Register(m *Module) {
	mu.Lock()
	defer mu.Unlock()
	modules = append(modules, m)
	for i := range m.Kernels {
		if f := m.Kernels[i].Func; f != nil {
			byFunc[reflect.ValueOf(f).Pointer()] = kernelRef{m, i}
		}
	}
}

// Lookup returns the module and kernel whose Go function is fn, or false
// when fn is not a kernel registered by a generated file.
func Lookup(fn any) (*Module, *Kernel, bool) {
	v := reflect.ValueOf(fn)
	if v.Kind() != reflect.Func || v.IsNil() {
		return nil, nil, false
	}
	mu.RLock()
	defer mu.RUnlock()
	r, ok := byFunc[v.Pointer()]
	if !ok {
		return nil, nil, false
	}
	return r.m, &r.m.Kernels[r.k], true
}

// Modules returns every registered module, in registration order.
func Modules() []*Module {
	mu.RLock()
	defer mu.RUnlock()
	return append([]*Module(nil), modules...)
}
