package attn

import (
	"math"
	"runtime"
	"sync"
)

// Result holds what Reference computes for one head, each row-major: O
// and the gradients (seq x dim) and LSE (seq).
type Result struct {
	O, LSE, DQ, DK, DV []float64
}

// Reference computes attention for one head in float64, naively and
// exactly: O = softmax(q kᵀ·scale) v (causal: each query sees the keys
// at or before it) with LSE, the natural logarithm of each row's softmax
// denominator, and, when do is not nil, the gradients DQ, DK and DV of
// Σ o∘do. q, k, v and do are seq x dim, row-major. It takes O(seq²·dim)
// time on all cores and O(seq·dim) memory per core.
func Reference(q, k, v, do []float64, seq, dim int, scale float64, causal bool) Result {
	g := Result{O: make([]float64, seq*dim), LSE: make([]float64, seq)}
	grad := do != nil
	if grad {
		g.DQ = make([]float64, seq*dim)
	}
	// Each worker takes rows i ≡ w (mod n) and sums its own dk and dv.
	n := min(runtime.GOMAXPROCS(0), seq)
	parts := make([][2][]float64, n)
	var wg sync.WaitGroup
	for w := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var dk, dv []float64
			if grad {
				dk, dv = make([]float64, seq*dim), make([]float64, seq*dim)
			}
			s := make([]float64, seq)
			for i := w; i < seq; i += n {
				refRow(q, k, v, do, seq, dim, scale, causal, i, s, g, dk, dv)
			}
			parts[w] = [2][]float64{dk, dv}
		}()
	}
	wg.Wait()
	if grad {
		g.DK, g.DV = parts[0][0], parts[0][1]
		for _, p := range parts[1:] {
			for i := range g.DK {
				g.DK[i] += p[0][i]
				g.DV[i] += p[1][i]
			}
		}
	}
	return g
}

// refRow computes row i of Reference, adding its contributions to dk and
// dv; s is scratch of seq elements.
func refRow(q, k, v, do []float64, seq, dim int, scale float64, causal bool, i int, s []float64, g Result, dk, dv []float64) {
	n := seq
	if causal {
		n = i + 1
	}
	qi := q[i*dim : i*dim+dim]
	mx := math.Inf(-1)
	for j := range n {
		s[j] = dot(qi, k[j*dim:j*dim+dim]) * scale
		mx = max(mx, s[j])
	}
	sum := 0.0
	for j := range n {
		s[j] = math.Exp(s[j] - mx)
		sum += s[j]
	}
	oi := g.O[i*dim : i*dim+dim]
	for j := range n {
		s[j] /= sum // P
		axpy(s[j], v[j*dim:j*dim+dim], oi)
	}
	g.LSE[i] = mx + math.Log(sum)
	if do == nil {
		return
	}
	// dP = do vᵀ, D = do·o, dS = P∘(dP − D); dq = dS k·scale,
	// dk += dSᵀ q·scale, dv += Pᵀ do.
	doi := do[i*dim : i*dim+dim]
	d := dot(doi, oi)
	dqi := g.DQ[i*dim : i*dim+dim]
	for j := range n {
		p := s[j]
		ds := p * (dot(doi, v[j*dim:j*dim+dim]) - d) * scale
		axpy(ds, k[j*dim:j*dim+dim], dqi)
		axpy(ds, qi, dk[j*dim:j*dim+dim])
		axpy(p, doi, dv[j*dim:j*dim+dim])
	}
}

func dot(x, y []float64) float64 {
	s := 0.0
	for i, v := range x {
		s += v * y[i]
	}
	return s
}

func axpy(a float64, x, y []float64) {
	for i, v := range x {
		y[i] += a * v
	}
}
