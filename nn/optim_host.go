package nn

import (
	"math"
	"runtime"
	"sync"

	"github.com/gocu-dev/gocu/array"
)

// The fused update on the CPU (and the simulator): one pass over each
// parameter, its gradient and its moments, split over all cores. The
// arithmetic is the CUDA kernel's, operation for operation (each product
// rounded before it is added: no fused multiply-add), in the parameter's
// precision with the bias corrections in float64.
//
// Both flush moments below the smallest normal number to zero. The first
// moment of a parameter whose gradient stays zero (a dead ReLU unit)
// decays into the subnormal range, and there Adam's m + (1-β1)(0 - m)
// rounds back to m: it would stay subnormal for ever, and x86 computes with
// subnormal numbers tens of times slower (the CPU step of the MNIST model
// went from 2 to 7 ms after a thousand steps). The flush changes values
// only below 1.2e-38 (float32), far under any update they could make.

// hostChunk is the fewest elements a goroutine takes.
const hostChunk = 1 << 15

func updateHost(items []item, h hyper) error {
	for _, it := range items {
		var err error
		switch it.val.DType() {
		case array.Float32:
			err = hostStep[float32](it, h)
		default:
			err = hostStep[float64](it, h)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

type float interface{ ~float32 | ~float64 }

// tiny returns the smallest normal number of T.
func tiny[T float]() T {
	var z T
	if any(z) == any(float32(0)) {
		return T(math.Float32frombits(0x00800000))
	}
	return T(math.Float64frombits(0x0010000000000000))
}

// hostSlices returns the host memory of arrays on the CPU (nil arrays give
// nil slices) and a function that releases it.
func hostSlices[T float](as ...*array.Array) ([][]T, func(), error) {
	out := make([][]T, len(as))
	var bufs []interface{ Free() error }
	release := func() {
		for _, b := range bufs {
			_ = b.Free()
		}
	}
	for i, a := range as {
		if a == nil {
			continue
		}
		b := array.AsBuffer[T](a)
		if err := b.Err(); err != nil {
			release()
			return nil, nil, err
		}
		bufs = append(bufs, b)
		out[i] = b.Host()
	}
	return out, release, nil
}

func hostStep[T float](it item, h hyper) error {
	s, release, err := hostSlices[T](it.val, it.g, it.st.m, it.st.v)
	if err != nil {
		return err
	}
	defer release()
	p, g, m, v := s[0], s[1], s[2], s[3]
	switch h.kind {
	case kindSGD:
		k := sgdK[T]{lr: T(h.lr), mom: T(h.momentum), damp: T(1 - h.dampening), wd: T(h.wd),
			first: it.st.fresh, nesterov: h.nesterov, small: tiny[T]()}
		parallel(len(p), func(lo, hi int) {
			var b []T
			if m != nil {
				b = m[lo:hi]
			}
			sgdRange(p[lo:hi], g[lo:hi], b, &k)
		})
	case kindAdam:
		ss, bc2 := h.biasCorrections(float64(h.step))
		lr, wd := T(h.lr), T(h.wd)
		k := adamK[T]{stepSize: T(ss), bc2s: T(bc2), b1: T(1 - h.beta1), b2: T(h.beta2), c2: T(1 - h.beta2),
			eps: T(h.eps), wd: wd, decay: T(1) - T(lr*wd), decoupled: h.decoupled, small: tiny[T]()}
		parallel(len(p), func(lo, hi int) { adamRange(p[lo:hi], g[lo:hi], m[lo:hi], v[lo:hi], &k) })
	}
	return nil
}

// sgdK are an SGD step's constants in the parameter's precision.
type sgdK[T float] struct {
	lr, mom, damp, wd, small T
	first, nesterov          bool
}

func sgdRange[T float](p, g, b []T, k *sgdK[T]) {
	g = g[:len(p)]
	lr, mom, damp, wd, flush := k.lr, k.mom, k.damp, k.wd, float64(k.small)
	for i := range p {
		gi := g[i]
		if wd != 0 {
			gi = gi + T(wd*p[i])
		}
		if mom != 0 {
			bi := gi
			if !k.first {
				bi = T(mom*b[i]) + T(damp*gi)
			}
			if math.Abs(float64(bi)) < flush {
				bi = 0
			}
			b[i] = bi
			if k.nesterov {
				gi = gi + T(mom*bi)
			} else {
				gi = bi
			}
		}
		p[i] = p[i] - T(lr*gi)
	}
}

// adamK are an Adam step's constants in the parameter's precision.
type adamK[T float] struct {
	stepSize, bc2s, b1, b2, c2, eps, wd, decay, small T
	decoupled                                         bool
}

func adamRange[T float](p, g, m, v []T, k *adamK[T]) {
	n := len(p)
	g, m, v = g[:n], m[:n], v[:n]
	stepSize, bc2s, b1, b2, c2, eps, wd, decay, small := k.stepSize, k.bc2s, k.b1, k.b2, k.c2, k.eps, k.wd, k.decay, k.small
	decoupled, flush := k.decoupled, float64(small)
	for i := range p {
		gi, pi := g[i], p[i]
		if decoupled {
			pi = T(pi * decay)
		} else if wd != 0 {
			gi = gi + T(wd*pi)
		}
		mi := m[i]
		mi = mi + T(b1*(gi-mi))
		vi := T(b2*v[i]) + T(T(c2*gi)*gi)
		if math.Abs(float64(mi)) < flush { // one well-predicted branch
			mi = 0
		}
		if vi < small {
			vi = 0
		}
		m[i], v[i] = mi, vi
		den := T(sqrtT(vi)/bc2s) + eps
		p[i] = pi - T(stepSize*T(mi/den))
	}
}

func sqrtT[T float](x T) T { return T(math.Sqrt(float64(x))) }

// parallel runs f over [0, n) in chunks on up to GOMAXPROCS goroutines.
func parallel(n int, f func(lo, hi int)) {
	w := min(runtime.GOMAXPROCS(0), n/hostChunk)
	if w <= 1 {
		f(0, n)
		return
	}
	var wg sync.WaitGroup
	step := (n + w - 1) / w
	for lo := 0; lo < n; lo += step {
		hi := min(lo+step, n)
		wg.Add(1)
		go func() {
			defer wg.Done()
			f(lo, hi)
		}()
	}
	wg.Wait()
}
