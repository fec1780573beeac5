package cpu

import (
	"fmt"

	"github.com/gocu-dev/gocu/array/internal/backend"
)

// A complex buffer keeps its n values as 2n floats of its component type
// in f32 or f64, interleaved (re, im) as Go, NumPy and CUDA lay them out.

// Reinterpret returns a buffer of dtype dt over b's memory, without a
// copy: a complex buffer as its component floats (twice as many) or an
// even number of floats as complex values of that component. The result
// is never pooled; b must outlive it.
func Reinterpret(buf backend.Buffer, dt backend.DType) (*Buffer, error) {
	b := asBuffer(buf)
	r := &Buffer{dt: dt, external: true}
	switch {
	case b.dt.IsComplex() && dt == b.dt.Component():
		r.n = 2 * b.n
	case dt.IsComplex() && b.dt == dt.Component() && b.n%2 == 0:
		r.n = b.n / 2
	default:
		return nil, fmt.Errorf("cpu: cannot view %d %v values as %v", b.n, b.dt, dt)
	}
	r.f32, r.f64 = b.f32, b.f64
	return r, nil
}
