package nn

import "github.com/gocu-dev/gocu/array"

// updateExpr updates one parameter with array expressions: each Assign is
// one pass (three for Adam, two or three for SGD with momentum). It is the
// reference the fused updates are tested against, and the path for
// parameters whose value or gradient is a strided view.
func updateExpr(it item, h hyper) error {
	p, g := it.val, it.g
	switch h.kind {
	case kindSGD:
		if h.wd != 0 {
			g = g.Add(p.Mul(h.wd))
		}
		if h.momentum != 0 {
			b := it.st.m
			var nb *array.Array
			if it.st.fresh {
				nb = g
			} else {
				nb = b.Mul(h.momentum).Add(g.Mul(1 - h.dampening))
			}
			if err := b.Assign(nb); err != nil {
				return err
			}
			if h.nesterov {
				g = g.Add(b.Mul(h.momentum))
			} else {
				g = b
			}
		}
		return p.Assign(p.Sub(g.Mul(h.lr)))
	default:
		m, v := it.st.m, it.st.v
		if h.decoupled {
			if err := p.Assign(p.Mul(1 - h.lr*h.wd)); err != nil {
				return err
			}
		} else if h.wd != 0 {
			g = g.Add(p.Mul(h.wd))
		}
		if err := m.Assign(m.Add(g.Sub(m).Mul(1 - h.beta1))); err != nil {
			return err
		}
		if err := v.Assign(v.Mul(h.beta2).Add(g.Mul(1 - h.beta2).Mul(g))); err != nil {
			return err
		}
		ss, bc2 := h.biasCorrections(float64(h.step))
		den := v.Sqrt().Div(bc2).Add(h.eps)
		return p.Assign(p.Sub(m.Div(den).Mul(ss)))
	}
}
