package attn

import (
	"math"
	"testing"
)

// TestReference checks Reference against its definition: O[0] of a causal
// head is v[0], LSE is the log of the summed exponentials, and the
// gradients are those of Σ o∘do by central differences.
func TestReference(t *testing.T) {
	r := newRand(t)
	const seq, dim, scale = 5, 3, 0.7
	rnd := func() []float64 {
		x := make([]float64, seq*dim)
		for i := range x {
			x[i] = r.NormFloat64()
		}
		return x
	}
	q, k, v, do := rnd(), rnd(), rnd(), rnd()
	loss := func(causal bool) float64 {
		return dot(Reference(q, k, v, nil, seq, dim, scale, causal).O, do)
	}
	for _, causal := range []bool{false, true} {
		g := Reference(q, k, v, do, seq, dim, scale, causal)
		if causal {
			for c := range dim {
				if g.O[c] != v[c] {
					t.Errorf("causal O[0][%d] = %v, want v[0][%d] = %v", c, g.O[c], c, v[c])
				}
			}
		}
		i := seq - 1
		sum := 0.0
		for j := range seq {
			sum += math.Exp(dot(q[i*dim:i*dim+dim], k[j*dim:j*dim+dim]) * scale)
		}
		if want := math.Log(sum); math.Abs(g.LSE[i]-want) > 1e-12 {
			t.Errorf("causal=%v: LSE[%d] = %v, want %v", causal, i, g.LSE[i], want)
		}
		for _, c := range []struct {
			name string
			x    []float64
			grad []float64
		}{{"dq", q, g.DQ}, {"dk", k, g.DK}, {"dv", v, g.DV}} {
			for e := range c.x {
				const h = 1e-6
				x0 := c.x[e]
				c.x[e] = x0 + h
				up := loss(causal)
				c.x[e] = x0 - h
				down := loss(causal)
				c.x[e] = x0
				if fd := (up - down) / (2 * h); math.Abs(fd-c.grad[e]) > 1e-7*(1+math.Abs(fd)) {
					t.Errorf("causal=%v: %s[%d] = %v, central difference %v", causal, c.name, e, c.grad[e], fd)
				}
			}
		}
	}
}
