package gpu

import (
	"fmt"

	"github.com/gocu-dev/gocu/array/internal/backend"
)

// Reinterpret returns a buffer of dtype dt over x's memory, without a
// copy: a complex buffer as its component floats (twice as many) or an
// even number of floats as complex values. Free leaves it alone; x must
// outlive it.
func (b *Backend) Reinterpret(x backend.Buffer, dt backend.DType) (*Buffer, error) {
	g, err := b.buf(x)
	if err != nil {
		return nil, err
	}
	r := &Buffer{mem: g.Memory(), ptr: g.ptr, dt: dt, be: b, external: true}
	switch {
	case g.dt.IsComplex() && dt == g.dt.Component():
		r.n = 2 * g.n
	case dt.IsComplex() && g.dt == dt.Component() && g.n%2 == 0:
		r.n = g.n / 2
	default:
		return nil, fmt.Errorf("gpu: cannot view %d %v values as %v", g.n, g.dt, dt)
	}
	return r, nil
}
