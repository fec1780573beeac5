package array

import "github.com/gocu-dev/gocu"

// AsStridedBuffer returns the memory a view spans as a *gocu.Buffer[T],
// without a copy, with the view's strides in elements: element (i₀, i₁,
// ...) of a is element Σ iₖ·strides[k] of the buffer, which starts at a's
// first element and ends at its last. It is AsBuffer for a kernel that
// takes strides, such as one reading the heads of a transposed tensor in
// place. A pending expression is evaluated first. The strides must not
// be negative (ErrValue); an empty array gives an empty buffer. Free the
// buffer, or drop it, as AsBuffer's; it keeps a's memory alive until then.
func AsStridedBuffer[T Elem](a *Array) (b *gocu.Buffer[T], strides []int, err error) {
	const op = "AsStridedBuffer"
	s, err := a.force(op)
	if err != nil {
		return nil, nil, err
	}
	if want := DTypeOf[T](); want != a.dt {
		var z T
		return nil, nil, errorf(op, ErrDType, "a %v array is not a buffer of %T: use AsStridedBuffer[%s] or AsType", a.dt, z, goName(a.dt))
	}
	for _, st := range s.lay.Strides {
		if st < 0 {
			return nil, nil, errorf(op, ErrValue, "the view of shape %s has a negative stride (strides %s): pass x.Contiguous()", shapeString(s.lay.Shape), shapeString(s.lay.Strides))
		}
	}
	lo, hi := s.lay.Extent()
	b, err = wrapSpan[T](op, a, s, lo, hi-lo, true)
	if err != nil {
		return nil, nil, err
	}
	return b, append([]int(nil), s.lay.Strides...), nil
}
