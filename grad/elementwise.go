package grad

import (
	"math"

	"github.com/gocu-dev/gocu/array"
)

// Operands of binary operations are *Var, *array.Array (a constant) or Go
// numbers, as for package array's operations; the gradient of a broadcast
// operand is summed back to its shape.

type operand struct {
	v *Var
	x any // what the array operation takes
}

func opnd(x any) operand {
	switch t := x.(type) {
	case *Var:
		if t == nil {
			return operand{x: (*array.Array)(nil)}
		}
		return operand{v: t, x: t.val}
	}
	return operand{x: x}
}

// arr returns the operand as an array operand (the array, or the scalar).
func (o operand) arr() any { return o.x }

// unary records a one-input operation.
func (v *Var) unary(op string, out *array.Array, back func(g *array.Array) *array.Array) *Var {
	return record(op, out, []*Var{v}, func(g *array.Array) []*array.Array {
		return []*array.Array{back(g)}
	})
}

// binary records a two-operand operation.
func binary(op string, a, b operand, out *array.Array, back func(g *array.Array) (da, db *array.Array)) *Var {
	return record(op, out, []*Var{a.v, b.v}, func(g *array.Array) []*array.Array {
		da, db := back(g)
		return []*array.Array{da, db}
	})
}

// Add returns v + b.
func (v *Var) Add(b any) *Var {
	a, o := opnd(v), opnd(b)
	return binary("Add", a, o, v.val.Add(o.arr()), func(g *array.Array) (*array.Array, *array.Array) {
		return g, g
	})
}

// Sub returns v - b.
func (v *Var) Sub(b any) *Var {
	a, o := opnd(v), opnd(b)
	return binary("Sub", a, o, v.val.Sub(o.arr()), func(g *array.Array) (*array.Array, *array.Array) {
		var db *array.Array
		if o.v != nil {
			db = g.Neg()
		}
		return g, db
	})
}

// Mul returns v * b.
func (v *Var) Mul(b any) *Var {
	a, o := opnd(v), opnd(b)
	return binary("Mul", a, o, v.val.Mul(o.arr()), func(g *array.Array) (*array.Array, *array.Array) {
		var db *array.Array
		if o.v != nil {
			db = g.Mul(a.x)
		}
		return g.Mul(o.arr()), db
	})
}

// Div returns v / b.
func (v *Var) Div(b any) *Var {
	a, o := opnd(v), opnd(b)
	out := v.val.Div(o.arr())
	return binary("Div", a, o, out, func(g *array.Array) (*array.Array, *array.Array) {
		var db *array.Array
		if o.v != nil {
			db = g.Mul(out).Div(o.arr()).Neg()
		}
		return g.Div(o.arr()), db
	})
}

// Pow returns v^b.
func (v *Var) Pow(b any) *Var {
	a, o := opnd(v), opnd(b)
	out := v.val.Pow(o.arr())
	return binary("Pow", a, o, out, func(g *array.Array) (*array.Array, *array.Array) {
		var da, db *array.Array
		if a.v != nil && a.v.req {
			var bm1 any
			switch e := o.arr().(type) {
			case *array.Array:
				bm1 = e.Sub(1)
			default:
				bm1 = sub1(e)
			}
			da = g.Mul(o.arr()).Mul(v.val.Pow(bm1))
		}
		if o.v != nil && o.v.req {
			db = g.Mul(out).Mul(v.val.Log())
		}
		return da, db
	})
}

// sub1 returns a Go number minus one, as float64 (the weak scalar rule
// keeps the array's dtype).
func sub1(x any) any {
	switch e := x.(type) {
	case int:
		return e - 1
	case int32:
		return e - 1
	case int64:
		return e - 1
	case float32:
		return float64(e) - 1
	case float64:
		return e - 1
	case uint8:
		return int(e) - 1
	}
	return x
}

// Maximum returns the elementwise maximum; the gradient goes to the larger
// operand (to v on ties).
func (v *Var) Maximum(b any) *Var {
	a, o := opnd(v), opnd(b)
	out := v.val.Maximum(o.arr())
	return binary("Maximum", a, o, out, func(g *array.Array) (*array.Array, *array.Array) {
		pick := v.val.Ge(o.arr())
		return array.Where(pick, g, 0), array.Where(pick, 0, g)
	})
}

// Minimum returns the elementwise minimum; the gradient goes to the smaller
// operand (to v on ties).
func (v *Var) Minimum(b any) *Var {
	a, o := opnd(v), opnd(b)
	out := v.val.Minimum(o.arr())
	return binary("Minimum", a, o, out, func(g *array.Array) (*array.Array, *array.Array) {
		pick := v.val.Le(o.arr())
		return array.Where(pick, g, 0), array.Where(pick, 0, g)
	})
}

// Clip limits values to [lo, hi] (Go numbers, arrays or Vars); the
// gradient passes where the value is inside.
func (v *Var) Clip(lo, hi any) *Var { return v.Maximum(lo).Minimum(hi) }

// Where returns x where cond is true and y elsewhere (cond an array, a Var
// whose value is used, or a Go bool; x and y as binary operands).
func Where(cond, x, y any) *Var {
	c := cond
	if cv, ok := cond.(*Var); ok {
		c = cv.Value()
	}
	ox, oy := opnd(x), opnd(y)
	out := array.Where(c, ox.arr(), oy.arr())
	return record("Where", out, []*Var{ox.v, oy.v}, func(g *array.Array) []*array.Array {
		var dx, dy *array.Array
		if ox.v != nil {
			dx = array.Where(c, g, 0)
		}
		if oy.v != nil {
			dy = array.Where(c, 0, g)
		}
		return []*array.Array{dx, dy}
	})
}

// AsType converts to dtype dt. The gradient converts back; converting to
// an integer or bool type ends the history.
func (v *Var) AsType(dt array.DType) *Var {
	if !v.val.DType().IsFloat() {
		return record("AsType", v.val.AsType(dt), nil, nil)
	}
	return v.unary("AsType", v.val.AsType(dt), func(g *array.Array) *array.Array { return g })
}

// Unary operations.

// Neg returns -v.
func (v *Var) Neg() *Var {
	return v.unary("Neg", v.val.Neg(), func(g *array.Array) *array.Array { return g.Neg() })
}

// Abs returns |v|; the gradient at 0 is 0.
func (v *Var) Abs() *Var {
	return v.unary("Abs", v.val.Abs(), func(g *array.Array) *array.Array { return g.Mul(v.val.Sign()) })
}

// Square returns v².
func (v *Var) Square() *Var {
	return v.unary("Square", v.val.Square(), func(g *array.Array) *array.Array { return g.Mul(v.val).Mul(2) })
}

// Reciprocal returns 1/v.
func (v *Var) Reciprocal() *Var {
	out := v.val.Reciprocal()
	return v.unary("Reciprocal", out, func(g *array.Array) *array.Array { return g.Mul(out.Square()).Neg() })
}

// Sqrt returns the square root.
func (v *Var) Sqrt() *Var {
	out := v.val.Sqrt()
	return v.unary("Sqrt", out, func(g *array.Array) *array.Array { return g.Div(out).Mul(0.5) })
}

// Exp returns e^v.
func (v *Var) Exp() *Var {
	out := v.val.Exp()
	return v.unary("Exp", out, func(g *array.Array) *array.Array { return g.Mul(out) })
}

// Exp2 returns 2^v.
func (v *Var) Exp2() *Var {
	out := v.val.Exp2()
	return v.unary("Exp2", out, func(g *array.Array) *array.Array { return g.Mul(out).Mul(math.Ln2) })
}

// Expm1 returns e^v - 1.
func (v *Var) Expm1() *Var {
	out := v.val.Expm1()
	return v.unary("Expm1", out, func(g *array.Array) *array.Array { return g.Mul(out.Add(1)) })
}

// Log returns the natural logarithm.
func (v *Var) Log() *Var {
	return v.unary("Log", v.val.Log(), func(g *array.Array) *array.Array { return g.Div(v.val) })
}

// Log2 returns the base-2 logarithm.
func (v *Var) Log2() *Var {
	return v.unary("Log2", v.val.Log2(), func(g *array.Array) *array.Array { return g.Div(v.val.Mul(math.Ln2)) })
}

// Log10 returns the base-10 logarithm.
func (v *Var) Log10() *Var {
	return v.unary("Log10", v.val.Log10(), func(g *array.Array) *array.Array { return g.Div(v.val.Mul(math.Ln10)) })
}

// Log1p returns log(1+v).
func (v *Var) Log1p() *Var {
	return v.unary("Log1p", v.val.Log1p(), func(g *array.Array) *array.Array { return g.Div(v.val.Add(1)) })
}

// Sin returns the sine.
func (v *Var) Sin() *Var {
	return v.unary("Sin", v.val.Sin(), func(g *array.Array) *array.Array { return g.Mul(v.val.Cos()) })
}

// Cos returns the cosine.
func (v *Var) Cos() *Var {
	return v.unary("Cos", v.val.Cos(), func(g *array.Array) *array.Array { return g.Mul(v.val.Sin()).Neg() })
}

// Tan returns the tangent.
func (v *Var) Tan() *Var {
	out := v.val.Tan()
	return v.unary("Tan", out, func(g *array.Array) *array.Array { return g.Mul(out.Square().Add(1)) })
}

// Tanh returns the hyperbolic tangent.
func (v *Var) Tanh() *Var {
	out := v.val.Tanh()
	return v.unary("Tanh", out, func(g *array.Array) *array.Array { return g.Mul(out.Square().Neg().Add(1)) })
}

// Sigmoid returns 1/(1+e^-v).
func (v *Var) Sigmoid() *Var {
	out := v.val.Sigmoid()
	return v.unary("Sigmoid", out, func(g *array.Array) *array.Array { return g.Mul(out).Mul(out.Neg().Add(1)) })
}

// ReLU returns max(v, 0); the gradient at 0 is 0.
func (v *Var) ReLU() *Var {
	out := v.val.ReLU()
	return v.unary("ReLU", out, func(g *array.Array) *array.Array { return array.Where(out.Gt(0), g, 0) })
}

// Sign, Floor, Ceil, Round and Trunc are piecewise constant: their
// gradient is zero, and their results carry no history.

// Sign returns -1, 0 or 1.
func (v *Var) Sign() *Var { return record("Sign", v.val.Sign(), nil, nil) }

// Floor rounds toward -Inf.
func (v *Var) Floor() *Var { return record("Floor", v.val.Floor(), nil, nil) }

// Ceil rounds toward +Inf.
func (v *Var) Ceil() *Var { return record("Ceil", v.val.Ceil(), nil, nil) }

// Round rounds to the nearest integer, halves to even.
func (v *Var) Round() *Var { return record("Round", v.val.Round(), nil, nil) }

// Trunc rounds toward zero.
func (v *Var) Trunc() *Var { return record("Trunc", v.val.Trunc(), nil, nil) }

// Arcsin returns the inverse sine.
func (v *Var) Arcsin() *Var {
	return v.unary("Arcsin", v.val.Arcsin(), func(g *array.Array) *array.Array {
		return g.Div(v.val.Square().Neg().Add(1).Sqrt())
	})
}

// Arccos returns the inverse cosine.
func (v *Var) Arccos() *Var {
	return v.unary("Arccos", v.val.Arccos(), func(g *array.Array) *array.Array {
		return g.Div(v.val.Square().Neg().Add(1).Sqrt()).Neg()
	})
}

// Arctan returns the inverse tangent.
func (v *Var) Arctan() *Var {
	return v.unary("Arctan", v.val.Arctan(), func(g *array.Array) *array.Array { return g.Div(v.val.Square().Add(1)) })
}

// Sinh returns the hyperbolic sine.
func (v *Var) Sinh() *Var {
	return v.unary("Sinh", v.val.Sinh(), func(g *array.Array) *array.Array { return g.Mul(v.val.Cosh()) })
}

// Cosh returns the hyperbolic cosine.
func (v *Var) Cosh() *Var {
	return v.unary("Cosh", v.val.Cosh(), func(g *array.Array) *array.Array { return g.Mul(v.val.Sinh()) })
}

// Arcsinh returns the inverse hyperbolic sine.
func (v *Var) Arcsinh() *Var {
	return v.unary("Arcsinh", v.val.Arcsinh(), func(g *array.Array) *array.Array {
		return g.Div(v.val.Square().Add(1).Sqrt())
	})
}

// Arccosh returns the inverse hyperbolic cosine.
func (v *Var) Arccosh() *Var {
	return v.unary("Arccosh", v.val.Arccosh(), func(g *array.Array) *array.Array {
		return g.Div(v.val.Square().Sub(1).Sqrt())
	})
}

// Arctanh returns the inverse hyperbolic tangent.
func (v *Var) Arctanh() *Var {
	return v.unary("Arctanh", v.val.Arctanh(), func(g *array.Array) *array.Array {
		return g.Div(v.val.Square().Neg().Add(1))
	})
}

// Erf returns the error function; its derivative is 2/sqrt(Pi) e^-v².
func (v *Var) Erf() *Var {
	return v.unary("Erf", v.val.Erf(), func(g *array.Array) *array.Array {
		return g.Mul(v.val.Square().Neg().Exp()).Mul(2 / math.SqrtPi)
	})
}

// Erfc returns 1 - Erf(v).
func (v *Var) Erfc() *Var {
	return v.unary("Erfc", v.val.Erfc(), func(g *array.Array) *array.Array {
		return g.Mul(v.val.Square().Neg().Exp()).Mul(-2 / math.SqrtPi)
	})
}

// Deg2Rad converts degrees to radians.
func (v *Var) Deg2Rad() *Var {
	return v.unary("Deg2Rad", v.val.Deg2Rad(), func(g *array.Array) *array.Array { return g.Mul(math.Pi / 180) })
}

// Rad2Deg converts radians to degrees.
func (v *Var) Rad2Deg() *Var {
	return v.unary("Rad2Deg", v.val.Rad2Deg(), func(g *array.Array) *array.Array { return g.Mul(180 / math.Pi) })
}

// Arctan2 returns atan2(v, b), the angle of the point (b, v).
func (v *Var) Arctan2(b any) *Var {
	a, o := opnd(v), opnd(b)
	return binary("Arctan2", a, o, v.val.Arctan2(o.arr()), func(g *array.Array) (*array.Array, *array.Array) {
		// d/dy atan2(y, x) = x/(x²+y²); d/dx = -y/(x²+y²).
		r := g.Div(v.val.Hypot(o.arr()).Square())
		var db *array.Array
		if o.v != nil {
			db = r.Mul(v.val).Neg()
		}
		return r.Mul(o.arr()), db
	})
}

// Hypot returns sqrt(v² + b²).
func (v *Var) Hypot(b any) *Var {
	a, o := opnd(v), opnd(b)
	out := v.val.Hypot(o.arr())
	return binary("Hypot", a, o, out, func(g *array.Array) (*array.Array, *array.Array) {
		r := g.Div(out)
		var db *array.Array
		if o.v != nil {
			db = r.Mul(o.arr())
		}
		return r.Mul(v.val), db
	})
}

// Copysign returns |v| with the sign of b. The gradient passes to v, with
// the sign flipped where the result has the other sign; b gets none, as in
// PyTorch.
func (v *Var) Copysign(b any) *Var {
	a, o := opnd(v), opnd(b)
	out := v.val.Copysign(o.arr())
	return binary("Copysign", a, o, out, func(g *array.Array) (*array.Array, *array.Array) {
		return array.Where(out.Eq(v.val), g, g.Neg()), nil
	})
}
