package cublas

import (
	"math"
	"sync"
	"unsafe"

	"github.com/gocu-dev/gocu/internal/dynlib"
)

// Handle is a cuBLAS context (cublasHandle_t) bound to the device whose CUDA
// context was current when it was created.
//
// Every method, Create and Destroy included, must run on an OS thread where
// that CUDA context is current: cuBLAS reads the calling thread's context and
// launches its kernels from inside the call. Operations are queued on the
// handle's stream (SetStream) and return before the GPU is done; the scalars
// alpha and beta are read on the host before the call returns.
//
// A Handle may be used from several goroutines; calls are serialised.
type Handle struct {
	mu sync.Mutex
	h  uintptr
	l  *lib
	// scal holds alpha, beta and results for the call in progress: the
	// pointers handed to cuBLAS point here, so scalars never allocate.
	scal *[3]uint64
	// zscal holds the complex double alpha and beta (two words each).
	zscal [4]uint64
}

// Create makes a handle (cublasCreate_v2) for the current CUDA context,
// loading libcublas on first use.
func Create() (*Handle, error) {
	l, err := load()
	if err != nil {
		return nil, err
	}
	var h uintptr
	if err := check("cublasCreate_v2", Status(dynlib.Call(l.create, uintptr(unsafe.Pointer(&h))))); err != nil {
		return nil, err
	}
	return &Handle{h: h, l: l, scal: new([3]uint64)}, nil
}

// Destroy releases the handle (cublasDestroy_v2, which waits for the GPU).
// Calls on a destroyed handle return ErrDestroyed; a second Destroy is a
// no-op.
func (h *Handle) Destroy() error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.h == 0 {
		return nil
	}
	err := check("cublasDestroy_v2", Status(dynlib.Call(h.l.destroy, h.h)))
	h.h = 0
	return err
}

// lock takes the handle for one call.
func (h *Handle) lock() error {
	h.mu.Lock()
	if h.h == 0 {
		h.mu.Unlock()
		return ErrDestroyed
	}
	return nil
}

// Raw returns the cublasHandle_t, for calling functions this package does
// not bind.
func (h *Handle) Raw() uintptr {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.h
}

// SetStream makes later operations queue on stream, the raw CUstream
// handle (0 is the legacy default stream).
func (h *Handle) SetStream(stream uintptr) error {
	if err := h.lock(); err != nil {
		return err
	}
	defer h.mu.Unlock()
	return check("cublasSetStream_v2", Status(dynlib.Call(h.l.setStream, h.h, stream)))
}

// SetMathMode chooses the precision shortcuts cuBLAS may take; use
// TF32TensorOpMath for TF32 tensor cores in Sgemm, DefaultMath for full FP32.
func (h *Handle) SetMathMode(m Math) error {
	if err := h.lock(); err != nil {
		return err
	}
	defer h.mu.Unlock()
	return check("cublasSetMathMode", Status(dynlib.Call(h.l.setMathMode, h.h, uintptr(m))))
}

// MathMode returns the current math mode.
func (h *Handle) MathMode() (Math, error) {
	if err := h.lock(); err != nil {
		return 0, err
	}
	defer h.mu.Unlock()
	var m int32
	err := check("cublasGetMathMode", Status(dynlib.Call(h.l.getMathMode, h.h, uintptr(unsafe.Pointer(&m)))))
	return Math(m), err
}

// SetWorkspace gives cuBLAS a device buffer for its scratch space instead of
// the one it allocates itself; useful with stream capture (CUDA graphs),
// where cuBLAS must not allocate. size 0 with ptr 0 returns to the default.
func (h *Handle) SetWorkspace(ptr uint64, size int) error {
	if size < 0 || (size > 0 && ptr == 0) {
		return invalid("cublasSetWorkspace_v2", "workspace of %d bytes at %#x", size, ptr)
	}
	if err := h.lock(); err != nil {
		return err
	}
	defer h.mu.Unlock()
	return check("cublasSetWorkspace_v2", Status(dynlib.Call(h.l.setWorkspace, h.h, uintptr(ptr), uintptr(size))))
}

// Version returns the version of the library behind the handle as one
// number, e.g. 130100 for 13.1.0 (cublasGetVersion_v2).
func (h *Handle) Version() (int, error) {
	if err := h.lock(); err != nil {
		return 0, err
	}
	defer h.mu.Unlock()
	var v int32
	err := check("cublasGetVersion_v2", Status(dynlib.Call(h.l.getVersion, h.h, uintptr(unsafe.Pointer(&v)))))
	return int(v), err
}

// scalars stores alpha and beta in the handle's scratch, as the C type the
// routine reads, and returns their addresses.
func (h *Handle) scalars(kind scalar, alpha, beta float64) (pa, pb uintptr) {
	if kind == scalarComplexDouble {
		// Real alpha and beta as complex values of two words each.
		h.zscal = [4]uint64{math.Float64bits(alpha), 0, math.Float64bits(beta), 0}
		return h.zscalarPtrs()
	}
	for i, v := range [2]float64{alpha, beta} {
		switch kind {
		case scalarComplexFloat:
			h.scal[i] = uint64(math.Float32bits(float32(v))) // the imaginary half is 0
		case scalarFloat:
			h.scal[i] = uint64(math.Float32bits(float32(v)))
		case scalarDouble:
			h.scal[i] = math.Float64bits(v)
		case scalarHalf:
			h.scal[i] = uint64(halfBits(float32(v)))
		case scalarInt32:
			h.scal[i] = uint64(uint32(int32(v)))
		}
	}
	// Little-endian: the low bytes of each word are the narrower types.
	return h.scalarPtrs()
}

// scalarPtrs returns the addresses of alpha and beta in scal.
func (h *Handle) scalarPtrs() (pa, pb uintptr) {
	return uintptr(unsafe.Pointer(&h.scal[0])), uintptr(unsafe.Pointer(&h.scal[1]))
}

// zscalarPtrs returns the addresses of the complex128 alpha and beta.
func (h *Handle) zscalarPtrs() (pa, pb uintptr) {
	return uintptr(unsafe.Pointer(&h.zscal[0])), uintptr(unsafe.Pointer(&h.zscal[2]))
}

// i32 passes a C int (checked to fit beforehand); the callee reads the low
// 32 bits of the register or stack slot, sign included.
func i32(v int) uintptr { return uintptr(int64(int32(v))) }
