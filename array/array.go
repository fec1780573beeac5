package array

import (
	"errors"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"weak"

	"github.com/gocu-dev/gocu"
	"github.com/gocu-dev/gocu/array/internal/backend"
	"github.com/gocu-dev/gocu/array/internal/cpu"
)

// Array is an n-dimensional array on a device. Arrays are values produced
// by operations; views (Reshape, Transpose, Slice, ...) share memory with
// the array they come from. An operation on a failed array returns a failed
// array carrying the first error, which Err and every read report.
//
// Elementwise operations are lazy: they record an expression, evaluated
// (fused into one pass) when the array is read or used by a non-elementwise
// operation. An Array is safe for concurrent reads by several goroutines.
type Array struct {
	mu     sync.Mutex
	dev    *Maker
	dt     DType
	shape  []int
	err    error
	closed bool
	st     *storage       // materialised data, or nil while lazy
	lay    backend.Layout // layout of st
	ex     *expr          // pending elementwise expression, or nil
	uses   atomic.Int32   // how many operations took the pending expression
	hold   *holdings
}

// storage is a device buffer shared by the arrays that view it, reference
// counted: each array holding it (directly or as a leaf of a pending
// expression) owns one reference.
type storage struct {
	dev  *Maker
	buf  backend.Buffer
	refs atomic.Int64
	keep any // what owns memory the storage only views (FromBuffer's buffer)

	mu      sync.Mutex
	deps    []weak.Pointer[Array] // lazy arrays that read this storage
	pruneAt int
}

func (s *storage) retain() { s.refs.Add(1) }

func (s *storage) release() {
	if s.refs.Add(-1) == 0 {
		s.dev.be.Free(s.buf)
	}
}

// addDep records a lazy array that reads s, so that an in-place write to
// s can evaluate it first.
func (s *storage) addDep(a *Array) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.deps = append(s.deps, weak.Make(a))
	if len(s.deps) >= max(64, s.pruneAt) {
		live := s.deps[:0]
		for _, w := range s.deps {
			if x := w.Value(); x != nil && x.isLazy() {
				live = append(live, w)
			}
		}
		clear(s.deps[len(live):])
		s.deps = live
		s.pruneAt = 2 * len(live)
	}
}

// flushDeps evaluates every pending expression that reads s.
func (s *storage) flushDeps() {
	s.mu.Lock()
	deps := s.deps
	s.deps = nil
	s.mu.Unlock()
	for _, w := range deps {
		if x := w.Value(); x != nil {
			x.force("Assign") // a failure stays sticky in x
		}
	}
}

// holdings are the storage references an array owns; the cleanup that
// backs up Close releases them.
type holdings struct {
	mu  sync.Mutex
	sts []*storage
}

func (h *holdings) replace(sts []*storage) {
	h.mu.Lock()
	old := h.sts
	h.sts = sts
	h.mu.Unlock()
	for _, s := range old {
		s.release()
	}
}

func (h *holdings) release() { h.replace(nil) }

// alloc allocates storage for an array of the shape. A shape whose size
// overflows is ErrValue; a request the device cannot give (a GPU's memory,
// the machine's memory for the CPU) is ErrOutOfMemory and ErrDevice, and
// names the shape and the bytes.
func (d *Maker) alloc(op string, dt DType, shape []int) (*storage, error) {
	nb, ok := byteSize(dt, shape)
	if !ok {
		return nil, tooBig(op, dt, shape)
	}
	n := nb / max(dt.Size(), 1)
	buf, err := d.be.Alloc(dt, n)
	if errors.Is(err, ErrOutOfMemory) {
		return nil, outOfMemory(op, dt, shape, d.String(), err)
	}
	if err != nil {
		return nil, deviceErr(op, err)
	}
	s := &storage{dev: d, buf: buf}
	s.refs.Store(1)
	return s, nil
}

// outOfMemory is the error of an allocation of the shape that where (a
// device, or "host memory") could not give.
func outOfMemory(op string, dt DType, shape []int, where string, cause error) error {
	nb, _ := byteSize(dt, shape)
	return &Error{Op: op, Kind: ErrDevice, Cause: cause,
		Msg: fmt.Sprintf("cannot allocate shape %s of %v on %s: %d bytes (%s)", shapeString(shape), dt, where, nb, bytesString(nb))}
}

// checkHostAlloc refuses a host buffer of the shape that overflows or
// that the machine cannot give (ErrOutOfMemory), before make would die.
func checkHostAlloc(op string, dt DType, shape []int) error {
	nb, ok := byteSize(dt, shape)
	if !ok {
		return tooBig(op, dt, shape)
	}
	if err := cpu.CheckAlloc(dt, nb/max(dt.Size(), 1)); err != nil {
		return outOfMemory(op, dt, shape, "the host", err)
	}
	return nil
}

func track(a *Array, sts []*storage) *Array {
	a.hold = &holdings{sts: sts}
	runtime.AddCleanup(a, func(h *holdings) { h.release() }, a.hold)
	return a
}

// wrap makes an array owning the (already counted) reference to st.
func (d *Maker) wrap(st *storage, lay backend.Layout, dt DType) *Array {
	return track(&Array{dev: d, dt: dt, shape: lay.Shape, st: st, lay: lay}, []*storage{st})
}

// view makes an array sharing st (taking a new reference).
func (d *Maker) view(st *storage, lay backend.Layout, dt DType) *Array {
	st.retain()
	return d.wrap(st, lay, dt)
}

// failed returns an array that carries err.
func failed(err error) *Array { return &Array{err: err} }

// snap is a consistent snapshot of an array's state.
type snap struct {
	st  *storage
	lay backend.Layout
	ex  *expr
}

func (a *Array) use(op string) (snap, error) {
	if a == nil {
		return snap{}, errorf(op, ErrValue, "nil array")
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.err != nil {
		return snap{}, a.err
	}
	if a.closed {
		return snap{}, errorf(op, ErrClosed, "use of closed array")
	}
	return snap{a.st, a.lay, a.ex}, nil
}

func (a *Array) isLazy() bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.ex != nil
}

// force evaluates a pending expression (once) and returns the materialised state.
func (a *Array) force(op string) (snap, error) {
	if a == nil {
		return snap{}, errorf(op, ErrValue, "nil array")
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.err != nil {
		return snap{}, a.err
	}
	if a.closed {
		return snap{}, errorf(op, ErrClosed, "use of closed array")
	}
	if a.ex == nil {
		return snap{a.st, a.lay, nil}, nil
	}
	st, err := a.dev.alloc(op, a.dt, a.shape)
	if err == nil {
		lay := backend.Contiguous(a.shape)
		err = a.dev.evalInto(a.ex, a.shape, backend.Operand{Buf: st.buf, Layout: lay})
		if err == nil {
			a.st, a.lay, a.ex = st, lay, nil
			a.hold.replace([]*storage{st})
			return snap{a.st, a.lay, nil}, nil
		}
		st.release()
		err = deviceErr(op, err)
	}
	a.err = err
	a.ex = nil
	a.hold.release()
	return snap{}, err
}

// Close releases the array's memory (shared storage is freed when its last
// view is closed). Using the array afterwards fails with ErrClosed. Close
// is idempotent; a cleanup closes arrays that become unreachable, but
// closing explicitly returns device memory at a known time.
func (a *Array) Close() error {
	if a == nil || a.hold == nil {
		return nil
	}
	a.mu.Lock()
	if a.closed {
		a.mu.Unlock()
		return nil
	}
	a.closed = true
	a.st, a.ex = nil, nil
	a.mu.Unlock()
	a.hold.release()
	return nil
}

// Err returns the array's error: the first failure of the operations that
// produced it, or of evaluating it, or a GPU fault the device has already
// reported. It evaluates a pending expression but does not wait for the
// device (Sync or a read does that).
func (a *Array) Err() error {
	_, err := a.force("Err")
	if err != nil {
		return err
	}
	// A GPU fault already reported (the context is lost) sticks to the
	// array; queued work is not waited for.
	if perr := a.dev.be.Poll(); perr != nil {
		a.mu.Lock()
		if a.err == nil {
			a.err = deviceErr("Err", perr)
		}
		err = a.err
		a.mu.Unlock()
	}
	return err
}

// DType returns the element type (Invalid for a failed array).
func (a *Array) DType() DType {
	if a == nil {
		return backend.Invalid
	}
	return a.dt
}

// Shape returns a copy of the shape.
func (a *Array) Shape() []int {
	if a == nil {
		return nil
	}
	return append([]int(nil), a.shape...)
}

// Ndim returns the number of dimensions.
func (a *Array) Ndim() int {
	if a == nil {
		return 0
	}
	return len(a.shape)
}

// Size returns the number of elements.
func (a *Array) Size() int {
	if a == nil || a.err != nil {
		return 0
	}
	return backend.Size(a.shape)
}

// Dim returns the length of axis i (negative counts from the end). An
// axis the array does not have is an ErrAxis error, as for every other
// operation that takes an axis; a failed array returns its error.
func (a *Array) Dim(i int) (int, error) {
	if a == nil {
		return 0, errorf("Dim", ErrValue, "nil array")
	}
	a.mu.Lock()
	err := a.err
	a.mu.Unlock()
	if err != nil {
		return 0, err
	}
	ax, err := normAxis("Dim", i, len(a.shape))
	if err != nil {
		return 0, err
	}
	return a.shape[ax], nil
}

// Device returns the array's device (nil for a failed array).
func (a *Array) Device() *gocu.Device {
	if a == nil || a.dev == nil {
		return nil
	}
	return a.dev.dev
}

// Strides returns the strides in elements, evaluating a pending expression
// (a fresh result is C-contiguous).
func (a *Array) Strides() []int {
	s, err := a.force("Strides")
	if err != nil {
		return nil
	}
	return append([]int(nil), s.lay.Strides...)
}

// IsContiguous reports whether the array is C-contiguous in memory
// (a pending expression will be, once evaluated).
func (a *Array) IsContiguous() bool {
	s, err := a.use("IsContiguous")
	if err != nil {
		return false
	}
	return s.ex != nil || s.lay.IsContiguous()
}

// IsLazy reports whether the array is a pending (not yet evaluated)
// elementwise expression.
func (a *Array) IsLazy() bool { return a != nil && a.isLazy() }

// Eval evaluates a pending expression now and returns the array. On a GPU
// it queues the fused kernel without waiting for it.
func (a *Array) Eval() *Array {
	if _, err := a.force("Eval"); err != nil {
		return failed(err)
	}
	return a
}
