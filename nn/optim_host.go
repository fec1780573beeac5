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
	var f func(lo, hi int)
	switch h.kind {
	case kindSGD:
		lr, mom, damp, wd := T(h.lr), T(h.momentum), T(1-h.dampening), T(h.wd)
		first := it.st.fresh
		f = func(lo, hi int) {
			for i := lo; i < hi; i++ {
				gi := g[i]
				if wd != 0 {
					gi = gi + T(wd*p[i])
				}
				if mom != 0 {
					b := gi
					if !first {
						b = T(mom*m[i]) + T(damp*gi)
					}
					m[i] = b
					if h.nesterov {
						gi = gi + T(mom*b)
					} else {
						gi = b
					}
				}
				p[i] = p[i] - T(lr*gi)
			}
		}
	case kindAdam:
		ss, bc2 := h.biasCorrections(float64(h.step))
		stepSize, bc2s := T(ss), T(bc2)
		b1, b2, eps, wd, lr := T(1-h.beta1), T(h.beta2), T(h.eps), T(h.wd), T(h.lr)
		c2 := T(1 - h.beta2)
		decay := T(1) - T(lr*wd)
		f = func(lo, hi int) {
			for i := lo; i < hi; i++ {
				gi, pi := g[i], p[i]
				if h.decoupled {
					pi = T(pi * decay)
				} else if wd != 0 {
					gi = gi + T(wd*pi)
				}
				mi := m[i] + T(b1*(gi-m[i]))
				vi := T(b2*v[i]) + T(T(c2*gi)*gi)
				m[i], v[i] = mi, vi
				den := T(sqrtT(vi)/bc2s) + eps
				p[i] = pi - T(stepSize*T(mi/den))
			}
		}
	}
	parallel(len(p), f)
	return nil
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
