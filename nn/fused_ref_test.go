package nn_test

import "math"

// Float64 references of the fused kernels, for the GPU tests and the
// host runs of their CUDA C.

// lnRef is LayerNorm over rows of c (eps 1e-5) and its gradients for the
// upstream gradient gy.
func lnRef(x, w, b, gy []float64, n, c int) (y, dx, dw, db []float64) {
	return normRef(x, w, b, gy, n, c, false, 1e-5)
}

// normRef is lnRef, or with rms RMSNorm's (the mean taken as 0), with
// the given eps.
func normRef(x, w, b, gy []float64, n, c int, rms bool, eps float64) (y, dx, dw, db []float64) {
	y, dx = make([]float64, n*c), make([]float64, n*c)
	dw, db = make([]float64, c), make([]float64, c)
	for r := range n {
		xr, gr := x[r*c:(r+1)*c], gy[r*c:(r+1)*c]
		var mean, v float64
		for _, e := range xr {
			mean += e
		}
		mean /= float64(c)
		if rms {
			mean = 0
		}
		for _, e := range xr {
			v += (e - mean) * (e - mean)
		}
		rstd := 1 / math.Sqrt(v/float64(c)+eps)
		var a, bx float64
		for i, e := range xr {
			xh := (e - mean) * rstd
			y[r*c+i] = xh*w[i] + b[i]
			a += gr[i] * w[i]
			bx += gr[i] * w[i] * xh
			dw[i] += gr[i] * xh
			db[i] += gr[i]
		}
		a /= float64(c)
		if rms {
			a = 0
		}
		bx /= float64(c)
		for i, e := range xr {
			xh := (e - mean) * rstd
			dx[r*c+i] = (gr[i]*w[i] - a - xh*bx) * rstd
		}
	}
	return y, dx, dw, db
}

// geluRef is GELU, the tanh form or the exact one, and its gradient.
func geluRef(x, gy []float64, tanh bool) (y, dx []float64) {
	y, dx = make([]float64, len(x)), make([]float64, len(x))
	for i, v := range x {
		if tanh {
			k := math.Sqrt(2 / math.Pi)
			th := math.Tanh(k * (v + 0.044715*v*v*v))
			y[i] = 0.5 * v * (1 + th)
			dx[i] = gy[i] * (0.5*(1+th) + 0.5*v*(1-th*th)*k*(1+3*0.044715*v*v))
		} else {
			y[i] = 0.5 * v * (1 + math.Erf(v/math.Sqrt2))
			dx[i] = gy[i] * (0.5*(1+math.Erf(v/math.Sqrt2)) + v*math.Exp(-v*v/2)/math.Sqrt(2*math.Pi))
		}
	}
	return y, dx
}

// xentRef is the mean cross-entropy of logits x (n, c) against labels,
// and its gradient times g.
func xentRef(x []float64, lab []int64, n, c int, g float64) (loss float64, dx []float64) {
	dx = make([]float64, n*c)
	for r := range n {
		xr := x[r*c : (r+1)*c]
		mx := math.Inf(-1)
		for _, v := range xr {
			mx = max(mx, v)
		}
		var s float64
		for _, v := range xr {
			s += math.Exp(v - mx)
		}
		lse := mx + math.Log(s)
		loss += (lse - xr[lab[r]]) / float64(n)
		for i, v := range xr {
			p := math.Exp(v - lse)
			if int64(i) == lab[r] {
				p--
			}
			dx[r*c+i] = g * p / float64(n)
		}
	}
	return loss, dx
}
