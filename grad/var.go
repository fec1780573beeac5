package grad

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/gocu-dev/gocu/array"
)

// Var is an array value in a computation that records, as it runs, how
// each value was made, so that Backward can compute gradients. A Var made
// by Param requires a gradient; a Var computed from one does too and
// remembers the operation and its inputs; a Var made by Const, or computed
// with recording off (NoGrad), has no history.
//
// A Var is safe for concurrent reads; Backward into the same parameters
// from several goroutines at once is serialised per parameter.
type Var struct {
	val  *array.Array
	req  bool
	n    *node // the operation that made the Var; nil for leaves
	leaf bool  // made by Param/Const/Detach, not by an operation

	mu    sync.Mutex
	grad  *array.Array // accumulated gradient of a leaf
	hooks []gradHook   // OnGradReady's, in order
	hookN int          // hooks registered so far, for their ids
}

type gradHook struct {
	id int
	fn func(*Var)
}

// node is one recorded operation: its inputs (nil for constant operands)
// and the function that maps the gradient of its output to the gradients
// of its inputs.
type node struct {
	op    string
	in    []*Var
	back  func(g *array.Array) ([]*array.Array, error)
	freed atomic.Bool
}

// ErrNilVar is the error of an operation on a nil *Var.
var ErrNilVar = errors.New("grad: nil *Var (make Vars with Param, Const or an operation)")

// arr returns the Var's array, or for a nil Var an array failed with
// ErrNilVar, so that operations on it fail instead of panicking.
func (v *Var) arr() *array.Array {
	if v == nil {
		return array.Failed(ErrNilVar)
	}
	return v.val
}

// Param returns a leaf that requires a gradient: a parameter to train.
// Backward accumulates into its Grad.
// A parameter outlives any array scope it was made in (a.Persist()).
func Param(a *array.Array) *Var { return &Var{val: a.Persist(), req: true, leaf: true} }

// Const returns a leaf without a gradient: an input or a constant.
func Const(a *array.Array) *Var { return &Var{val: a, leaf: true} }

// Value returns the array the Var holds. Reading it (Item, ToSlice, ...)
// does not affect the recorded computation.
func (v *Var) Value() *array.Array {
	if v == nil {
		return nil
	}
	return v.val
}

// Err returns the value's error: the first failure of the operations that
// produced it.
func (v *Var) Err() error {
	if v == nil {
		return ErrNilVar
	}
	return v.val.Err()
}

// RequiresGrad reports whether gradients flow to the Var: it is a
// parameter, or it was computed from one while recording.
func (v *Var) RequiresGrad() bool { return v != nil && v.req }

// IsLeaf reports whether the Var was made by Param, Const or Detach rather
// than by an operation.
func (v *Var) IsLeaf() bool { return v != nil && v.leaf }

// Grad returns the gradient accumulated by Backward (for a leaf that
// requires one), or nil before the first Backward or after ZeroGrad.
func (v *Var) Grad() *array.Array {
	if v == nil {
		return nil
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.grad
}

// SetGrad replaces the accumulated gradient (nil clears it).
func (v *Var) SetGrad(g *array.Array) {
	if v == nil {
		return
	}
	v.mu.Lock()
	v.grad = g
	v.mu.Unlock()
}

// ZeroGrad clears the accumulated gradient, as PyTorch's
// zero_grad(set_to_none=True): the next Backward sets it afresh instead of
// adding to zeros. The old gradient array is left to its holders.
func (v *Var) ZeroGrad() { v.SetGrad(nil) }

// SetValue replaces the array of a leaf (to load weights or change their
// dtype); the shape may change. Operations recorded before keep the old
// array. To write new values into the same memory, which a captured CUDA
// graph keeps using, Assign into Value() instead.
func (v *Var) SetValue(a *array.Array) error {
	if v == nil {
		return ErrNilVar
	}
	if !v.leaf {
		return fmt.Errorf("grad: SetValue of a Var computed by an operation (%s); only leaves can be replaced", v.n.op)
	}
	v.val = a
	return nil
}

// Detach returns a leaf holding the same array without history: gradients
// do not flow through it.
func (v *Var) Detach() *Var { return &Var{val: v.arr(), leaf: true} }

// Close releases the value's memory (and the gradient's, for a leaf);
// see array.Array.Close.
func (v *Var) Close() error {
	if v == nil {
		return nil
	}
	v.mu.Lock()
	g := v.grad
	v.grad = nil
	v.mu.Unlock()
	if g != nil {
		g.Close()
	}
	return v.val.Close()
}

// Shape returns the value's shape.
func (v *Var) Shape() []int { return v.arr().Shape() }

// Ndim returns the number of dimensions.
func (v *Var) Ndim() int { return v.arr().Ndim() }

// Dim returns the length of axis i (negative counts from the end), or an
// error for an axis the value does not have (as array's Dim).
func (v *Var) Dim(i int) (int, error) { return v.arr().Dim(i) }

// Size returns the number of elements.
func (v *Var) Size() int { return v.arr().Size() }

// DType returns the element type.
func (v *Var) DType() array.DType { return v.arr().DType() }

// Item returns the value of a one-element Var as a float64 (it waits for
// the device).
func (v *Var) Item() (float64, error) { return v.arr().Item() }

// String formats the value.
func (v *Var) String() string {
	if v == nil {
		return "<nil>"
	}
	s := v.val.String()
	switch {
	case v.n != nil:
		s += " (grad_fn=" + v.n.op + ")"
	case v.req:
		s += " (requires_grad)"
	}
	return s
}

// Recording. NoGrad turns it off for every goroutine of the process while
// its function runs (Go has no goroutine-local state; evaluate in the same
// goroutine that trains, or in one that does not train meanwhile).

var noGrad atomic.Int32

// NoGrad runs fn without recording: Vars computed inside have no history
// and do not require gradients, which saves the memory of saved values
// (evaluation, inference, optimiser updates). Calls nest.
func NoGrad(fn func()) {
	noGrad.Add(1)
	defer noGrad.Add(-1)
	fn()
}

// Recording reports whether operations record their history now (false
// inside NoGrad).
func Recording() bool { return noGrad.Load() == 0 }

// record makes the Var of an operation's result: with history when
// recording is on and some input requires a gradient, else a plain value.
func record(op string, out *array.Array, in []*Var, back func(g *array.Array) []*array.Array) *Var {
	return recordErr(op, out, in, func(g *array.Array) ([]*array.Array, error) { return back(g), nil })
}

// recordErr is record for a gradient that can fail.
func recordErr(op string, out *array.Array, in []*Var, back func(g *array.Array) ([]*array.Array, error)) *Var {
	v := &Var{val: out}
	if noGrad.Load() != 0 {
		return v
	}
	for _, x := range in {
		if x != nil && x.req {
			v.req = true
			break
		}
	}
	if v.req && differentiable(out.DType()) {
		v.n = &node{op: op, in: in, back: back}
	} else {
		v.req = false
	}
	return v
}

// differentiable reports whether values of dt carry gradients: the
// floats, including float16 and bfloat16 (whose gradients are float16 and
// bfloat16, as PyTorch's), but not the 8-bit floats, which have no
// arithmetic of their own.
func differentiable(dt array.DType) bool {
	return dt.IsFloat() || dt == array.Float16 || dt == array.BFloat16
}
