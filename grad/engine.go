package grad

import (
	"errors"
	"fmt"
	"slices"

	"github.com/gocu-dev/gocu/array"
)

// Backward computes the gradient of v, a one-element Var (a loss), with
// respect to every parameter it was computed from, and adds it to each
// parameter's Grad. The recorded graph behind v is released: a second
// Backward through the same operations is an error (record the
// computation again), as PyTorch without retain_graph.
func (v *Var) Backward() error { return v.BackwardWith(nil) }

// BackwardWith is Backward starting from the gradient g of v (v's shape
// and dtype): the parameters receive the vector-Jacobian product gᵀ·∂v/∂p.
// g nil means ones, which requires v to have one element.
func (v *Var) BackwardWith(g *array.Array) error {
	_, err := run(v, g, nil, true, false)
	return err
}

// BackwardFree is Backward that frees the forward pass's memory as it
// goes, as PyTorch frees the tensors an operation saved once its gradient
// has run. Where Backward leaves every intermediate value to its scope or
// the collector, BackwardFree closes:
//
//   - the value of each intermediate Var once the gradients of the
//     operations that read it and made it have run (v's own value, leaves
//     and constants stay open);
//   - the arrays an operation's gradient made and did not return, when it
//     returns (a scope around each gradient function).
//
// Reading an intermediate Var's value afterwards is an error. A step that
// needs one reads it before. No other goroutine may create arrays on the
// device meanwhile: they would join that scope and be closed with it.
func (v *Var) BackwardFree() error {
	_, err := run(v, nil, nil, true, true)
	return err
}

// Of returns the gradients of y (one element, as for Backward) with
// respect to xs, which may be parameters or intermediate Vars, without
// touching any Grad: the functional form, as torch.autograd.grad. A Var
// that y does not depend on gets zeros. The graph behind y is released.
func Of(y *Var, xs ...*Var) ([]*array.Array, error) { return run(y, nil, xs, false, false) }

// engine is one backward pass: gradients of the Vars reached so far, and
// reference counts of the gradient arrays it made, so that each is closed
// (its memory returned at once) when no Var's gradient holds it any more.
type engine struct {
	grads map[*Var]*array.Array
	refs  map[*array.Array]int  // slots of grads holding the array
	owned map[*array.Array]bool // made by the engine: close when unused
}

func run(root *Var, seed *array.Array, targets []*Var, acc, free bool) ([]*array.Array, error) {
	const op = "Backward"
	if root == nil {
		return nil, fmt.Errorf("grad: Backward of a nil *Var: %w", ErrNilVar)
	}
	for i, t := range targets {
		if t == nil {
			return nil, fmt.Errorf("grad: Of: target %d: %w", i, ErrNilVar)
		}
	}
	if err := root.val.Err(); err != nil {
		return nil, err
	}
	if !root.req {
		return nil, errors.New("grad: Backward of a Var that does not require a gradient (no parameter reached it, or it was computed under NoGrad)")
	}
	e := &engine{grads: map[*Var]*array.Array{}, refs: map[*array.Array]int{}, owned: map[*array.Array]bool{}}
	if seed == nil {
		if root.val.Size() != 1 {
			return nil, fmt.Errorf("grad: %s of a Var of shape %v: only a one-element Var has an implicit gradient; use BackwardWith", op, root.val.Shape())
		}
		seed = array.On(root.val.Device()).Ones(root.val.DType(), root.val.Shape()...)
		e.owned[seed] = true
	} else {
		if !slices.Equal(seed.Shape(), root.val.Shape()) {
			return nil, fmt.Errorf("grad: BackwardWith: gradient of shape %v for a Var of shape %v", seed.Shape(), root.val.Shape())
		}
		if err := seed.Err(); err != nil {
			return nil, err
		}
		if seed.DType() != root.val.DType() {
			seed = seed.AsType(root.val.DType())
			e.owned[seed] = true
		}
	}
	order, err := topo(root)
	if err != nil {
		return nil, err
	}
	want := map[*Var]int{}
	for i, x := range targets {
		if x == nil {
			return nil, fmt.Errorf("grad: Of: input %d is nil", i)
		}
		want[x] = i
	}
	res := make([]*array.Array, len(targets))
	var vals map[*array.Array]int // with free: Vars yet to pass that hold each value
	if free {
		vals = values(root, order)
	}
	e.put(root, seed)
	for i := len(order) - 1; i >= 0; i-- {
		v := order[i]
		g := e.grads[v]
		if g == nil {
			continue
		}
		if j, ok := want[v]; ok {
			res[j] = g
			delete(e.owned, g) // the caller's now
		}
		if v.n == nil {
			if acc && v.req {
				v.accumulate(e.take(g))
				v.ready()
			}
			e.drop(v)
			continue
		}
		n := v.n
		var sc *array.Scope
		if free {
			sc = array.On(v.val.Device()).NewScope()
		}
		outs, err := n.back(g)
		if sc != nil {
			sc.Keep(outs...)
			sc.Close()
		}
		if err != nil {
			e.free()
			return nil, fmt.Errorf("grad: gradient of %s: %w", n.op, err)
		}
		for k, in := range n.in {
			if in == nil || !in.req || k >= len(outs) || outs[k] == nil {
				continue
			}
			o := outs[k]
			if _, known := e.refs[o]; !known {
				e.owned[o] = true
			}
			o, err = e.fit(n.op, o, in)
			if err != nil {
				e.free()
				return nil, err
			}
			e.put(in, o)
		}
		e.drop(v)
		n.back, n.in = nil, nil
		n.freed.Store(true)
		if free {
			if vals[v.val]--; vals[v.val] == 0 {
				v.val.Close()
			}
		}
	}
	for i, x := range targets {
		if res[i] == nil {
			res[i] = array.On(x.val.Device()).Zeros(x.val.DType(), x.val.Shape()...)
		}
	}
	e.free()
	return res, nil
}

// values counts the Vars of order that hold each value, for BackwardFree
// to close a value when the last of them has passed. The values of leaves
// and of the root are never closed: they count once more.
func values(root *Var, order []*Var) map[*array.Array]int {
	vals := make(map[*array.Array]int, len(order))
	for _, v := range order {
		vals[v.val]++
	}
	for _, v := range order {
		if v.n == nil || v == root {
			vals[v.val] = 1 << 30
		}
	}
	return vals
}

// topo lists the Vars that lead to root and need a gradient, each after
// the Vars it was computed from (depth-first post-order, iteratively).
func topo(root *Var) ([]*Var, error) {
	type frame struct {
		v *Var
		i int
	}
	seen := map[*Var]bool{root: true}
	var order []*Var
	stack := []frame{{root, 0}}
	for len(stack) > 0 {
		f := &stack[len(stack)-1]
		v := f.v
		if v.n != nil && v.n.freed.Load() {
			return nil, fmt.Errorf("grad: Backward through %s, whose graph an earlier Backward released: record the computation again", v.n.op)
		}
		if v.n == nil || f.i >= len(v.n.in) {
			order = append(order, v)
			stack = stack[:len(stack)-1]
			continue
		}
		x := v.n.in[f.i]
		f.i++
		if x != nil && x.req && !seen[x] {
			seen[x] = true
			stack = append(stack, frame{x, 0})
		}
	}
	return order, nil
}

// fit brings a gradient to its Var's shape (summing over broadcast axes)
// and dtype.
func (e *engine) fit(op string, o *array.Array, in *Var) (*array.Array, error) {
	if !o.DType().Valid() { // a failed gradient: its error, not a shape mismatch
		return nil, fmt.Errorf("grad: gradient of %s: %w", op, o.Err())
	}
	want := in.val.Shape()
	if got := o.Shape(); !slices.Equal(got, want) {
		s, err := sumTo(o, want)
		if err != nil {
			return nil, fmt.Errorf("grad: %s: gradient of shape %v for an input of shape %v", op, got, want)
		}
		e.consumed(o)
		o = s
		e.owned[o] = true
	}
	if dt := in.val.DType(); o.DType() != dt {
		c := o.AsType(dt)
		e.consumed(o)
		o = c
		e.owned[o] = true
	}
	return o, nil
}

// put adds gradient o to v's.
func (e *engine) put(v *Var, o *array.Array) {
	old := e.grads[v]
	if old == nil {
		e.grads[v] = o
		e.refs[o]++
		return
	}
	s := old.Add(o)
	e.owned[s] = true
	e.grads[v] = s
	e.refs[s]++
	e.unref(old)
	e.consumed(o)
}

// drop releases v's gradient slot.
func (e *engine) drop(v *Var) {
	if g := e.grads[v]; g != nil {
		delete(e.grads, v)
		e.unref(g)
	}
}

func (e *engine) unref(a *array.Array) {
	e.refs[a]--
	if e.refs[a] <= 0 {
		delete(e.refs, a)
		e.consumed(a)
	}
}

// consumed closes a if the engine made it and no slot holds it.
func (e *engine) consumed(a *array.Array) {
	if e.refs[a] > 0 || !e.owned[a] {
		return
	}
	delete(e.owned, a)
	a.Close()
}

// take returns g for a leaf to keep: g itself when only this slot holds
// it and the engine made it, else a view (sharing memory, never closed by
// the engine).
func (e *engine) take(g *array.Array) *array.Array {
	if e.owned[g] && e.refs[g] == 1 {
		delete(e.owned, g)
		return g
	}
	return g.Reshape(g.Shape()...)
}

// free closes what is left (after an error, or gradients that reached no
// Var that keeps them).
func (e *engine) free() {
	for v := range e.grads {
		e.drop(v)
	}
}

// accumulate adds g to the leaf's gradient.
func (v *Var) accumulate(g *array.Array) {
	v.mu.Lock()
	defer v.mu.Unlock()
	// A gradient outlives the step that made it: scopes leave it open.
	if v.grad == nil {
		v.grad = g.Persist()
		return
	}
	v.grad = v.grad.Add(g).Persist()
}

// OnGradReady registers fn to run each time Backward has finished
// accumulating this leaf's gradient, as PyTorch's
// register_post_accumulate_grad_hook: the leaf's Grad is then final for
// that pass (every operation that used the leaf has passed its gradient
// on), while the rest of the pass has yet to run. Data-parallel training
// uses it to start reducing gradients while the backward pass goes on.
// fn runs on the goroutine that called Backward, in the order the hooks
// were registered; it must not call Backward. A Var that is not a leaf
// requiring a gradient, or that a pass does not reach, never calls fn;
// Of does not either. remove unregisters fn.
func (v *Var) OnGradReady(fn func(*Var)) (remove func()) {
	if v == nil || fn == nil {
		return func() {}
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	v.hookN++
	id := v.hookN
	v.hooks = append(v.hooks, gradHook{id, fn})
	return func() {
		v.mu.Lock()
		defer v.mu.Unlock()
		v.hooks = slices.DeleteFunc(v.hooks, func(h gradHook) bool { return h.id == id })
	}
}

// ready calls the OnGradReady hooks.
func (v *Var) ready() {
	v.mu.Lock()
	if len(v.hooks) == 0 {
		v.mu.Unlock()
		return
	}
	hs := slices.Clone(v.hooks)
	v.mu.Unlock()
	for _, h := range hs {
		h.fn(v)
	}
}

// sumTo sums g over the axes along which shape was broadcast to g's shape.
func sumTo(g *array.Array, shape []int) (*array.Array, error) {
	gs := g.Shape()
	lead := len(gs) - len(shape)
	if lead < 0 {
		return nil, errors.New("rank")
	}
	var axes []int
	for i := 0; i < lead; i++ {
		axes = append(axes, i)
	}
	for i, d := range shape {
		switch gd := gs[lead+i]; {
		case d == gd:
		case d == 1:
			axes = append(axes, lead+i)
		default:
			return nil, errors.New("shape")
		}
	}
	if len(axes) == 0 {
		return g.Reshape(shape...), nil
	}
	return g.Reduce(array.OpSum, true, axes...).Reshape(shape...), nil
}
