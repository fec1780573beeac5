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
	closed bool
	uses   atomic.Int32 // how many operations took the pending expression
	// shared makes every use inline the pending expression: the part
	// expressions of complex operations, whose uses meet in one program
	// (where equal nodes are computed once).
	shared bool
	shape  []int
	err    error
	st     *storage       // materialised data, or nil while lazy
	lay    backend.Layout // layout of st
	ex     *expr          // pending elementwise expression, or nil
	// leaf is the leaf expression reading st, made on first use: nil
	// while pending, closed or failed (operations read it without mu).
	leaf  atomic.Pointer[expr]
	tok   *lazyToken            // while pending with leaves: its dependency token
	held  []*storage            // the storage references the array owns
	held0 [2]*storage           // held's backing for the usual one or two
	scope atomic.Pointer[Scope] // the scope that closes it, if any
	// node is the pending expression's root when lazyNode made it (ex
	// points here: one allocation for both); its operands are dropped
	// once it is evaluated or closed (dropNode). Expressions of other
	// arrays never point into it (exprOf gives them a copy), so that they
	// do not keep the array alive.
	node expr
}

// storage is a device buffer shared by the arrays that view it, reference
// counted: each array holding it (directly or as a leaf of a pending
// expression) owns one reference. The last release frees the buffer and
// returns the storage object to its Maker's pool for reuse.
//
// The backstop for arrays dropped without Close is a cleanup on the
// storage object, not on each array: a storage is reachable exactly as long
// as an array or a pending expression that uses it is, so when it becomes
// unreachable with references still counted (their arrays were dropped),
// the cleanup frees the buffer. Registering the cleanup once per storage
// object, and reusing the objects, keeps runtime.AddCleanup off the
// per-operation path.
type storage struct {
	dev  *Maker
	buf  backend.Buffer
	refs atomic.Int64
	keep any          // what owns memory the storage only views (FromBuffer's buffer)
	core *storageCore // the backstop cleanup's argument

	mu      sync.Mutex
	deps    []dep // pending arrays that read this storage
	pruneAt int
}

// A lazyToken stands for a pending array in the dependency lists of the
// storages it reads. Tokens are recycled: an array returns its token when
// it is evaluated or closed, and an entry names the token's generation, so
// an entry for an earlier holder is skipped. A token's weak pointer is made
// once (weak.Make per operation was a large part of its cost); an entry's
// token is collected, and its weak pointer reads nil, when a pending array
// is dropped with its token.
type lazyToken struct {
	arr  atomic.Pointer[Array] // the pending array, nil while free
	gen  atomic.Uint64         // incremented before each holder
	self weak.Pointer[lazyToken]
}

// dep is an entry of a dependency list.
type dep struct {
	tok weak.Pointer[lazyToken]
	gen uint64
}

// pending returns the pending array the entry still stands for, or nil.
func (d dep) pending() *Array {
	t := d.tok.Value()
	if t == nil {
		return nil
	}
	// arr first: a holder stores its array after the generation, so an
	// array read before a matching generation is the entry's.
	a := t.arr.Load()
	if a == nil || t.gen.Load() != d.gen {
		return nil
	}
	return a
}

// newToken gives pending array a a token and returns its entry.
func (m *Maker) newToken(a *Array) dep {
	t, _ := m.tokens.Get().(*lazyToken)
	if t == nil {
		t = new(lazyToken)
		t.self = weak.Make(t)
	}
	g := t.gen.Add(1)
	t.arr.Store(a)
	a.tok = t
	return dep{tok: t.self, gen: g}
}

// dropToken returns a's token, if any (a.mu is held and a is no longer
// pending).
func (a *Array) dropToken() {
	if t := a.tok; t != nil {
		a.tok = nil
		t.arr.Store(nil)
		a.dev.tokens.Put(t)
	}
}

// storageCore is what the backstop cleanup of a storage frees: the buffer
// while it is held, nil once the last reference was released. It is only
// written while the storage is reachable and only read by the cleanup,
// after it became unreachable.
type storageCore struct {
	be  backend.Backend
	buf backend.Buffer
}

func (c *storageCore) reclaim() {
	if c.buf != nil {
		c.be.Free(c.buf)
		c.buf = nil
	}
}

// newStorage returns a storage holding buf with one reference: a pooled
// one, or a new one with its backstop cleanup.
func (m *Maker) newStorage(buf backend.Buffer, keep any) *storage {
	s, _ := m.storages.Get().(*storage)
	if s == nil {
		s = &storage{dev: m, core: &storageCore{be: m.be}}
		runtime.AddCleanup(s, (*storageCore).reclaim, s.core)
	}
	s.buf, s.keep = buf, keep
	s.core.buf = buf
	s.refs.Store(1)
	return s
}

func (s *storage) retain() { s.refs.Add(1) }

// root is the storage that owns s's memory: s, or the storage it views
// (ViewAsReal and ViewAsComplex make views of another storage's memory).
func (s *storage) root() *storage {
	for {
		p, ok := s.keep.(*storage)
		if !ok {
			return s
		}
		s = p
	}
}

// release drops a reference; the last one frees the buffer and recycles
// the storage. Every pointer to s is gone by then: arrays drop theirs when
// they release, and a pending expression that reads s holds a reference.
func (s *storage) release() {
	if n := s.refs.Add(-1); n != 0 {
		if n < 0 {
			panic("array: internal error: storage released more often than retained")
		}
		return
	}
	buf, parent := s.buf, s.keep
	s.buf, s.keep, s.core.buf = nil, nil, nil
	// No lock: whoever adds entries holds a reference, and the reference
	// count's atomic operations order their writes before this.
	clear(s.deps)
	s.deps, s.pruneAt = s.deps[:0], 0
	s.dev.be.Free(buf)
	s.dev.storages.Put(s)
	if p, ok := parent.(*storage); ok {
		p.release() // a view of another storage's memory (ViewAsReal)
	}
}

// addDep records a pending array that reads s, so that an in-place write
// to s can evaluate it first.
func (s *storage) addDep(d dep) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.deps = append(s.deps, d)
	if len(s.deps) >= max(64, s.pruneAt) {
		live := s.deps[:0]
		for _, x := range s.deps {
			if x.pending() != nil {
				live = append(live, x)
			}
		}
		clear(s.deps[len(live):])
		s.deps = live
		s.pruneAt = 2 * len(live)
	}
}

// flushDeps evaluates every pending expression that reads s.
func (s *storage) flushDeps() {
	if y := s.dev.youngReader(s); y != nil {
		y.force("Assign") // a failure stays sticky in y
	}
	s.mu.Lock()
	deps := s.deps
	s.deps = nil
	s.mu.Unlock()
	for _, d := range deps {
		if x := d.pending(); x != nil {
			x.force("Assign") // a failure stays sticky in x
		}
	}
}

// alloc allocates storage for an array of the shape. A shape whose size
// overflows is ErrValue; a request the device cannot give (a GPU's memory,
// the machine's memory for the CPU) is ErrOutOfMemory and ErrDevice, and
// names the shape and the bytes.
func (m *Maker) alloc(op string, dt DType, shape []int) (*storage, error) {
	nb, ok := byteSize(dt, shape)
	if !ok {
		return nil, tooBig(op, dt, shape)
	}
	return m.allocN(op, dt, shape, nb/max(dt.Size(), 1))
}

// allocN is alloc of the n elements of shape, which fit.
func (m *Maker) allocN(op string, dt DType, shape []int, n int) (*storage, error) {
	buf, err := m.be.Alloc(dt.be(), n)
	if err != nil {
		if errors.Is(err, ErrOutOfMemory) {
			return nil, outOfMemory(op, dt, shape, m.String(), err)
		}
		return nil, deviceErr(op, err)
	}
	return m.newStorage(buf, nil), nil
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
	if err := cpu.CheckAlloc(dt.be(), nb/max(dt.Size(), 1)); err != nil {
		return outOfMemory(op, dt, shape, "the host", err)
	}
	return nil
}

// releaseAll drops the references in sts.
func releaseAll(sts []*storage) {
	for _, s := range sts {
		s.release()
	}
}

// wrap makes an array owning the (already counted) reference to st.
func (m *Maker) wrap(st *storage, lay backend.Layout, dt DType) *Array {
	a := &Array{dev: m, dt: dt, shape: lay.Shape, st: st, lay: lay}
	a.held0[0] = st
	a.held = a.held0[:1]
	return m.enter(a)
}

// view makes an array sharing st (taking a new reference).
func (m *Maker) view(st *storage, lay backend.Layout, dt DType) *Array {
	st.retain()
	return m.wrap(st, lay, dt)
}

// contiguousLayout is backend.Contiguous(shape) sharing shape (shapes are never
// modified in place) and, for rank 1, a shared stride slice.
func contiguousLayout(shape []int) backend.Layout {
	if len(shape) == 1 {
		return backend.Layout{Shape: shape, Strides: unitStride}
	}
	return backend.Layout{Shape: shape, Strides: backend.ContiguousStrides(shape)}
}

// failed returns an array that carries err.
func failed(err error) *Array { return &Array{err: err} }

// nilArray is the error of an operation on a nil *Array, or on a zero
// Array (declared, not made by a Maker), which has no device.
func nilArray(op string, a *Array) error {
	if a == nil {
		return errorf(op, ErrValue, "nil array")
	}
	return errorf(op, ErrValue, "zero Array: make arrays with a Maker (array.CPU(), array.On(dev)) or a function such as FromSlice, not by declaring one")
}

// snap is a consistent snapshot of an array's state.
type snap struct {
	st  *storage
	lay backend.Layout
	ex  *expr
}

func (a *Array) use(op string) (snap, error) {
	if a == nil || a.dev == nil && a.err == nil {
		return snap{}, nilArray(op, a)
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
	if a == nil || a.dev == nil && a.err == nil {
		return snap{}, nilArray(op, a)
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
	st, err := a.dev.allocN(op, a.dt, a.shape, backend.Size(a.shape)) // lazy checked the size
	if err == nil {
		lay := contiguousLayout(a.shape)
		err = a.dev.evalInto(a.ex, a.shape, backend.Operand{Buf: st.buf, Layout: lay})
		if err == nil {
			a.st, a.lay, a.ex = st, lay, nil
			a.dropNode()
			a.notPending()
			a.replaceHeld(st)
			return snap{a.st, a.lay, nil}, nil
		}
		st.release()
		err = deviceErr(op, err)
	}
	a.err = err
	a.ex = nil
	a.dropNode()
	a.notPending()
	a.replaceHeld(nil)
	return snap{}, err
}

// dropNode drops what the array's node points to: the root of an
// expression no longer pending points to nothing else (node only sets
// argv and shape, the array's own), and must not keep its operands'
// storages reachable. a.mu is held.
func (a *Array) dropNode() {
	if a.node.nargs != 0 {
		a.node.argv, a.node.nargs = [3]*expr{}, 0
	}
}

// replaceHeld makes st (or nothing) the array's only reference, releasing
// the ones it held. a.mu is held.
func (a *Array) replaceHeld(st *storage) {
	releaseAll(a.held)
	a.clearHeld0()
	if st == nil {
		a.held = a.held0[:0]
		return
	}
	a.held0[0] = st
	a.held = a.held0[:1]
}

// clearHeld0 empties held0 element by element. clear would be a call
// that runs a bulk write barrier while the collector marks (4% of a tiny
// operation's profile).
func (a *Array) clearHeld0() {
	for i := range a.held0 {
		if a.held0[i] != nil {
			a.held0[i] = nil
		}
	}
}

// Close releases the array's memory (shared storage is freed when its last
// view is closed). Using the array afterwards fails with ErrClosed. Close
// is idempotent; a cleanup closes arrays that become unreachable, but
// closing explicitly returns device memory at a known time.
func (a *Array) Close() error {
	if a == nil || a.dev == nil {
		return nil
	}
	a.mu.Lock()
	if a.closed {
		a.mu.Unlock()
		return nil
	}
	a.closed = true
	a.st, a.ex = nil, nil
	a.dropNode()
	if a.leaf.Load() != nil { // a result never used as an operand has none
		a.leaf.Store(nil)
	}
	a.notPending()
	held := a.held
	var tmp [len(a.held0)]*storage
	if len(held) <= len(tmp) {
		held = tmp[:copy(tmp[:], held)]
	}
	a.clearHeld0() // a closed array keeps no storage reachable
	a.held = nil
	a.mu.Unlock()
	releaseAll(held)
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
			a.leaf.Store(nil)
		}
		err = a.err
		a.mu.Unlock()
	}
	return err
}

// DType returns the element type (Invalid for a failed array).
func (a *Array) DType() DType {
	if a == nil {
		return Invalid
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
