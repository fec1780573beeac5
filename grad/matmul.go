package grad

import (
	"github.com/gocu-dev/gocu/array"
)

// MatMul returns the matrix product with numpy.matmul's rules (2-D
// matrices, stacks of matrices with broadcast batch axes, 1-D vectors);
// b is a *Var or a constant *array.Array. The gradients are products with
// transposed views (no copies: the engine takes transpose flags), summed
// over broadcast batch axes.
func (v *Var) MatMul(b any) *Var {
	o := opnd(b)
	bv, _ := o.x.(*array.Array)
	if bv == nil {
		return record("MatMul", v.arr().MatMul(nil), nil, nil)
	}
	a := v.arr()
	out := a.MatMul(bv)
	return record("MatMul", out, []*Var{v, o.v}, func(g *array.Array) []*array.Array {
		// Bring vectors to matrices: a (k,) is (1, k), b (k,) is (k, 1),
		// and g gets back the axes the product removed.
		a2, b2 := a, bv
		if a.Ndim() == 1 {
			a2 = a.ExpandDims(0)
		}
		if bv.Ndim() == 1 {
			b2 = bv.ExpandDims(-1)
		}
		g2 := g
		if a.Ndim() == 1 || bv.Ndim() == 1 {
			full := g.Shape()
			if bv.Ndim() == 1 {
				full = append(full, 1)
			}
			if a.Ndim() == 1 {
				full = append(full[:len(full)-1], 1, full[len(full)-1])
				if bv.Ndim() == 1 && len(full) == 2 {
					full = []int{1, 1}
				}
			}
			g2 = g.Reshape(full...)
		}
		var da, db *array.Array
		if v.req {
			da = g2.MatMul(b2.SwapAxes(-1, -2)) // (..., m, k)
			if a.Ndim() == 1 {
				da = da.Squeeze(-2)
			}
		}
		if o.v != nil && o.v.req {
			db = a2.SwapAxes(-1, -2).MatMul(g2) // (..., k, n)
			if bv.Ndim() == 1 {
				db = db.Squeeze(-1)
			}
		}
		return []*array.Array{da, db}
	})
}
