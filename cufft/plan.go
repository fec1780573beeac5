package cufft

import (
	"fmt"
	"math"
	"runtime"
	"sync"
	"unsafe"

	"github.com/gocu-dev/gocu/internal/dynlib"
)

// Type is a cufftType: the transform's input and output element types.
type Type int32

// The transform types.
const (
	C2C Type = 0x29 // complex64 to complex64
	R2C Type = 0x2a // float32 to complex64 (forward only)
	C2R Type = 0x2c // complex64 to float32 (inverse only)
	Z2Z Type = 0x69 // complex128 to complex128
	D2Z Type = 0x6a // float64 to complex128 (forward only)
	Z2D Type = 0x6c // complex128 to float64 (inverse only)
)

// types lists the types with their exec function's suffix.
var types = [6]struct {
	t    Type
	exec string
	name string
}{
	{C2C, "C2C", "C2C"}, {R2C, "R2C", "R2C"}, {C2R, "C2R", "C2R"},
	{Z2Z, "Z2Z", "Z2Z"}, {D2Z, "D2Z", "D2Z"}, {Z2D, "Z2D", "Z2D"},
}

func (t Type) index() int {
	for i, x := range types {
		if x.t == t {
			return i
		}
	}
	return -1
}

func (t Type) String() string {
	if i := t.index(); i >= 0 {
		return types[i].name
	}
	return fmt.Sprintf("Type(%#x)", int32(t))
}

// Direction is the sign of the exponent of a complex transform.
type Direction int32

// The directions (CUFFT_FORWARD, CUFFT_INVERSE).
const (
	Forward Direction = -1
	Inverse Direction = 1
)

// Layout describes a batched transform as cufftMakePlanMany does: N is
// the transform's shape (rank 1 to 3, row-major), Batch the number of
// transforms. Element (x, y, z) of transform b of the input lies at
// b·IDist + ((x·InEmbed[1] + y)·InEmbed[2] + z)·IStride, likewise for the
// output. Nil embeddings mean a dense layout: N for the complex side, N
// with the last dimension n/2+1 for the complex side of a real transform;
// the strides and distances are then ignored and cuFFT's dense defaults
// used.
type Layout struct {
	N              []int
	Batch          int
	InEmbed        []int
	IStride, IDist int
	OutEmbed       []int
	OStride, ODist int
}

// Plan is a cuFFT plan (cufftHandle) made with automatic work area
// allocation off.
type Plan struct {
	mu     sync.Mutex
	h      int32
	made   bool
	l      *lib
	typ    Type
	layout Layout
	work   int  // bytes the plan needs
	hasWA  bool // SetWorkArea was called
}

func fits(v int) bool { return v >= 0 && v <= math.MaxInt32 }

func (l *Layout) check(fn string) error {
	if len(l.N) < 1 || len(l.N) > 3 {
		return invalid(fn, "rank %d: cuFFT plans have rank 1, 2 or 3", len(l.N))
	}
	for i, n := range l.N {
		if n < 1 || !fits(n) {
			return invalid(fn, "n[%d] = %d, must be positive", i, n)
		}
	}
	if l.Batch < 1 || !fits(l.Batch) {
		return invalid(fn, "batch = %d, must be at least 1", l.Batch)
	}
	if (l.InEmbed == nil) != (l.OutEmbed == nil) {
		return invalid(fn, "give both embeddings or neither")
	}
	if l.InEmbed != nil {
		if len(l.InEmbed) != len(l.N) || len(l.OutEmbed) != len(l.N) {
			return invalid(fn, "embeddings of %d and %d dimensions for rank %d", len(l.InEmbed), len(l.OutEmbed), len(l.N))
		}
		for _, v := range []int{l.IStride, l.IDist, l.OStride, l.ODist} {
			if v < 1 || !fits(v) {
				return invalid(fn, "strides and distances must be positive (%d, %d, %d, %d)", l.IStride, l.IDist, l.OStride, l.ODist)
			}
		}
		for i := range l.N {
			if l.InEmbed[i] < 1 || l.OutEmbed[i] < 1 || !fits(l.InEmbed[i]) || !fits(l.OutEmbed[i]) {
				return invalid(fn, "embedding dimension %d is not positive", i)
			}
		}
	}
	return nil
}

// cints copies ints into C ints; nil stays nil.
func cints(v []int) []int32 {
	if v == nil {
		return nil
	}
	out := make([]int32, len(v))
	for i, x := range v {
		out[i] = int32(x)
	}
	return out
}

func first(v []int32) uintptr {
	if len(v) == 0 {
		return 0
	}
	return uintptr(unsafe.Pointer(&v[0]))
}

// NewPlan makes a plan (cufftCreate, cufftSetAutoAllocation(0),
// cufftMakePlanMany) for the current CUDA context, loading libcufft on
// first use. Give it a work area of WorkSize bytes before Exec.
func NewPlan(l Layout, t Type) (*Plan, error) {
	if err := validate(l, t); err != nil {
		return nil, err
	}
	lb, err := load()
	if err != nil {
		return nil, err
	}
	return newPlan(lb, l, t)
}

func validate(l Layout, t Type) error {
	const fn = "cufftMakePlanMany"
	if t.index() < 0 {
		return invalid(fn, "type %v is not a cuFFT transform type", t)
	}
	return l.check(fn)
}

func newPlan(lb *lib, l Layout, t Type) (*Plan, error) {
	p := &Plan{l: lb, typ: t, layout: l}
	h := new(int32)
	if err := check("cufftCreate", Result(dynlib.Call(lb.create, uintptr(unsafe.Pointer(h))))); err != nil {
		return nil, err
	}
	p.h, p.made = *h, true
	fail := func(err error) (*Plan, error) {
		dynlib.Call(lb.destroy, uintptr(p.h))
		return nil, err
	}
	if err := check("cufftSetAutoAllocation", Result(dynlib.Call(lb.setAuto, uintptr(p.h), 0))); err != nil {
		return fail(err)
	}
	n, ie, oe := cints(l.N), cints(l.InEmbed), cints(l.OutEmbed)
	ws := new(uint64)
	r := Result(dynlib.Call(lb.makeMany, uintptr(p.h), uintptr(len(n)), first(n),
		first(ie), uintptr(l.IStride), uintptr(l.IDist), first(oe), uintptr(l.OStride), uintptr(l.ODist),
		uintptr(t), uintptr(l.Batch), uintptr(unsafe.Pointer(ws))))
	runtime.KeepAlive(n)
	runtime.KeepAlive(ie)
	runtime.KeepAlive(oe)
	if err := check("cufftMakePlanMany", r); err != nil {
		return fail(err)
	}
	p.work = int(*ws)
	return p, nil
}

// Type returns the plan's transform type.
func (p *Plan) Type() Type { return p.typ }

// Layout returns the layout the plan was made for.
func (p *Plan) Layout() Layout { return p.layout }

// WorkSize returns the bytes of work area the plan needs (0 for none).
func (p *Plan) WorkSize() int { return p.work }

func (p *Plan) lock() error {
	p.mu.Lock()
	if !p.made {
		p.mu.Unlock()
		return ErrDestroyed
	}
	return nil
}

// SetWorkArea gives the plan its work area, WorkSize bytes of device
// memory that must stay allocated while transforms use it
// (cufftSetWorkArea). Plans whose transforms never run at the same time
// may share one.
func (p *Plan) SetWorkArea(ptr uint64) error {
	const fn = "cufftSetWorkArea"
	if ptr == 0 && p.work > 0 {
		return invalid(fn, "a null work area for a plan that needs %d bytes", p.work)
	}
	if err := p.lock(); err != nil {
		return err
	}
	defer p.mu.Unlock()
	if err := check(fn, Result(dynlib.Call(p.l.setWork, uintptr(p.h), uintptr(ptr)))); err != nil {
		return err
	}
	p.hasWA = true
	return nil
}

// SetStream makes later transforms queue on stream, the raw CUstream
// handle (cufftSetStream).
func (p *Plan) SetStream(stream uintptr) error {
	if err := p.lock(); err != nil {
		return err
	}
	defer p.mu.Unlock()
	return check("cufftSetStream", Result(dynlib.Call(p.l.setStream, uintptr(p.h), stream)))
}

// Exec runs the transform from in to out (equal for an in-place one) with
// the exec function of the plan's type. dir is Forward or Inverse for
// C2C and Z2Z; R2C and D2Z are forward and C2R and Z2D inverse, and dir
// must say so.
func (p *Plan) Exec(in, out uint64, dir Direction) error {
	i := p.typ.index()
	fn := "cufftExec" + types[max(i, 0)].exec
	if dir != Forward && dir != Inverse {
		return invalid(fn, "direction %d is not Forward or Inverse", dir)
	}
	switch p.typ {
	case R2C, D2Z:
		if dir != Forward {
			return invalid(fn, "a %v transform is forward only", p.typ)
		}
	case C2R, Z2D:
		if dir != Inverse {
			return invalid(fn, "a %v transform is inverse only", p.typ)
		}
	}
	if in == 0 || out == 0 {
		return invalid(fn, "a null device pointer")
	}
	if err := p.lock(); err != nil {
		return err
	}
	defer p.mu.Unlock()
	if p.work > 0 && !p.hasWA {
		return invalid(fn, "the plan needs a work area of %d bytes: call SetWorkArea first", p.work)
	}
	args := []uintptr{uintptr(p.h), uintptr(in), uintptr(out)}
	if p.typ == C2C || p.typ == Z2Z {
		args = append(args, uintptr(int64(dir)))
	}
	return check(fn, Result(dynlib.Call(p.l.exec[i], args...)))
}

// Destroy releases the plan (cufftDestroy), not its work area; a second
// Destroy is a no-op.
func (p *Plan) Destroy() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.made {
		return nil
	}
	p.made = false
	return check("cufftDestroy", Result(dynlib.Call(p.l.destroy, uintptr(p.h))))
}
