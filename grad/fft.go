package grad

import (
	"github.com/gocu-dev/gocu/array"
	"github.com/gocu-dev/gocu/array/fft"
)

// The FFTs take and give complex signals as their real and imaginary
// parts, real Vars, since gradients flow through float arrays only. The
// transforms are linear, so each gradient is the adjoint transform: the
// inverse transform with the dual norm (backward and forward swap, ortho
// stays), cropped or padded back to the input's length. n = 0 keeps the
// input's length (IRFFT: 2(m-1)), as numpy.fft.

// dual is the norm of the adjoint transform.
func dual(m fft.Norm) fft.Norm {
	switch m {
	case fft.Forward:
		return fft.Backward
	case fft.Ortho:
		return fft.Ortho
	}
	return fft.Forward
}

// resize crops or pads x with zeros along axis ax to n.
func resize(x *array.Array, ax, n int) *array.Array {
	shape := x.Shape()
	if ax < 0 {
		ax += len(shape)
	}
	m := shape[ax]
	switch {
	case m == n:
		return x
	case m > n:
		idx := make([]array.Index, ax+1)
		for i := range idx {
			idx[i] = array.All
		}
		idx[ax] = array.S(0, n)
		return x.Slice(idx...)
	}
	ps := append([]int(nil), shape...)
	ps[ax] = n - m
	return array.Concat(ax, x, array.On(x.Device()).Zeros(x.DType(), ps...))
}

// complexOf packs parts (im may be nil: zero) into a complex array.
func complexOf(re, im *array.Array) *array.Array {
	if im == nil {
		im = array.On(re.Device()).Zeros(re.DType())
	}
	return array.Complex(re, im)
}

// partsOf splits a complex array into float arrays of dtype dt.
func partsOf(z *array.Array, dt array.DType) (re, im *array.Array) {
	return z.Real().AsType(dt), z.Imag().AsType(dt)
}

func valOf(v *Var) *array.Array {
	if v == nil {
		return nil
	}
	return v.val
}

// lenAt is the length of x along axis ax.
func lenAt(x *array.Array, ax int) int {
	s := x.Shape()
	if ax < 0 {
		ax += len(s)
	}
	if ax < 0 || ax >= len(s) {
		return 0
	}
	return s[ax]
}

// c2c records a complex transform of re + i·im; adj is its adjoint.
func c2c(op string, re, im *Var, y *array.Array, m int, ax int, adj func(g *array.Array) *array.Array) (yr, yi *Var) {
	dt := re.val.DType()
	vr, vi := partsOf(y, dt)
	in := []*Var{re, im}
	back := func(g *array.Array) []*array.Array {
		a := resize(adj(g), ax, m)
		gr, gi := partsOf(a, dt)
		return []*array.Array{gr, gi}
	}
	yr = record(op, vr, in, func(g *array.Array) []*array.Array { return back(complexOf(g, nil)) })
	yi = record(op, vi, in, func(g *array.Array) []*array.Array {
		return back(complexOf(array.On(g.Device()).Zeros(g.DType()), g))
	})
	return yr, yi
}

// FFT is fft.FFT of re + i·im along axis (im may be nil: a real signal),
// with length n (0: the input's) and the norm ("" is backward), as its
// real and imaginary parts.
func FFT(re, im *Var, n, axis int, norm fft.Norm) (yr, yi *Var) {
	x := complexOf(re.val, valOf(im))
	y := fft.FFT(x, fft.N(n), fft.Axis(axis), norm)
	return c2c("FFT", re, im, y, lenAt(re.val, axis), axis, func(g *array.Array) *array.Array {
		return fft.IFFT(g, fft.N(lenAt(y, axis)), fft.Axis(axis), dual(norm))
	})
}

// IFFT is fft.IFFT of re + i·im (see FFT).
func IFFT(re, im *Var, n, axis int, norm fft.Norm) (yr, yi *Var) {
	x := complexOf(re.val, valOf(im))
	y := fft.IFFT(x, fft.N(n), fft.Axis(axis), norm)
	return c2c("IFFT", re, im, y, lenAt(re.val, axis), axis, func(g *array.Array) *array.Array {
		return fft.FFT(g, fft.N(lenAt(y, axis)), fft.Axis(axis), dual(norm))
	})
}

// RFFT is fft.RFFT of the real signal x along axis, as the real and
// imaginary parts of its n/2+1 terms.
func RFFT(x *Var, n, axis int, norm fft.Norm) (yr, yi *Var) {
	y := fft.RFFT(x.val, fft.N(n), fft.Axis(axis), norm)
	dt := x.val.DType()
	m := lenAt(x.val, axis)
	if n == 0 {
		n = m
	}
	vr, vi := partsOf(y, dt)
	back := func(g *array.Array) []*array.Array {
		// The adjoint of keeping the first n/2+1 terms pads with zeros.
		full := resize(g, axis, n)
		a := fft.IFFT(full, fft.Axis(axis), dual(norm)).Real()
		return []*array.Array{resize(a, axis, m).AsType(dt)}
	}
	in := []*Var{x}
	yr = record("RFFT", vr, in, func(g *array.Array) []*array.Array { return back(complexOf(g, nil)) })
	yi = record("RFFT", vi, in, func(g *array.Array) []*array.Array {
		return back(complexOf(array.On(g.Device()).Zeros(g.DType()), g))
	})
	return yr, yi
}

// IRFFT is fft.IRFFT of the half spectrum re + i·im along axis: n real
// values (0: 2(m-1) for m terms). As NumPy, the imaginary parts of the
// zero and (n even) Nyquist terms are ignored: their gradients are 0.
func IRFFT(re, im *Var, n, axis int, norm fft.Norm) *Var {
	x := complexOf(re.val, valOf(im))
	y := fft.IRFFT(x, fft.N(n), fft.Axis(axis), norm)
	dt := re.val.DType()
	m := lenAt(re.val, axis)
	nOut := lenAt(y, axis)
	h := nOut/2 + 1
	return record("IRFFT", y, []*Var{re, im}, func(g *array.Array) []*array.Array {
		// y = s·C2R(x): the adjoint is s·RFFT(g) with the middle terms,
		// which appear twice in the Hermitian spectrum, doubled.
		a := fft.RFFT(g, fft.Axis(axis), dual(norm))
		w := make([]float64, h)
		for k := range w {
			w[k] = 2
		}
		w[0] = 1
		if nOut%2 == 0 {
			w[h-1] = 1
		}
		r := len(a.Shape())
		ax := axis
		if ax < 0 {
			ax += r
		}
		ws := make([]int, r)
		for i := range ws {
			ws[i] = 1
		}
		ws[ax] = h
		wa := array.FromSliceOn(g.Device(), w, ws...).AsType(dt)
		gr, gi := partsOf(a, dt)
		gr, gi = gr.Mul(wa), gi.Mul(wa)
		// Ignored imaginary parts get no gradient.
		mask := make([]float64, h)
		for k := range mask {
			mask[k] = 1
		}
		mask[0] = 0
		if nOut%2 == 0 {
			mask[h-1] = 0
		}
		gi = gi.Mul(array.FromSliceOn(g.Device(), mask, ws...).AsType(dt))
		return []*array.Array{resize(gr, axis, m), resize(gi, axis, m)}
	})
}
