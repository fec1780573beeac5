package grad

import "github.com/gocu-dev/gocu/array"

// Func records a custom differentiable operation, as PyTorch's
// autograd.Function: out is the result the caller computed from the
// inputs' values, and back maps the gradient of out (out's shape) to one
// gradient per input, in order (nil for an input that gets none). A
// gradient may have a shape the input broadcasts to: it is summed back.
//
// back must return new arrays, or g itself: the engine closes them once
// they have been added where they belong, so they must not be arrays the
// caller keeps. Inputs may be nil (constant operands). The result has no
// history when recording is off or no input requires a gradient.
//
//	func Cube(x *grad.Var) *grad.Var {
//		v := x.Value()
//		return grad.Func("Cube", v.Mul(v).Mul(v), []*grad.Var{x}, func(g *array.Array) []*array.Array {
//			return []*array.Array{g.Mul(v.Square()).Mul(3)}
//		})
//	}
func Func(name string, out *array.Array, inputs []*Var, back func(g *array.Array) []*array.Array) *Var {
	return record(name, out, inputs, back)
}
