package array

import (
	"math"
	"math/big"
	"strconv"
)

// broadcastShapes returns the NumPy broadcast of the shapes: aligned on the
// right, each dimension equal or 1.
func broadcastShapes(op string, shapes ...[]int) ([]int, error) {
	r, long := 0, 0
	for i, s := range shapes {
		if len(s) > r {
			r, long = len(s), i
		}
	}
	if r > 0 && broadcastsAllTo(shapes, shapes[long]) {
		// The usual case: the result is one of the shapes, which are never
		// modified in place, so it is shared (capped: an append copies).
		return shapes[long][:r:r], nil
	}
	out := make([]int, r)
	for i := range out {
		out[i] = 1
	}
	for _, s := range shapes {
		k := r - len(s)
		for i, d := range s {
			switch {
			case d == out[k+i]:
			case out[k+i] == 1:
				out[k+i] = d
			case d != 1:
				return nil, broadcastError(op, shapes)
			}
		}
	}
	return out, nil
}

// broadcastsAllTo reports whether every shape broadcasts to to unchanged.
func broadcastsAllTo(shapes [][]int, to []int) bool {
	for _, s := range shapes {
		k := len(to) - len(s)
		for i, d := range s {
			if d != to[k+i] && d != 1 {
				return false
			}
		}
	}
	return true
}

func broadcastError(op string, shapes [][]int) error {
	msg := "shapes "
	for i, s := range shapes {
		switch {
		case i == 0:
		case i == len(shapes)-1 && len(shapes) == 2:
			msg += " and "
		case i == len(shapes)-1:
			msg += " and "
		default:
			msg += ", "
		}
		msg += shapeString(s)
	}
	return errorf(op, ErrShape, "%s cannot be broadcast", msg)
}

// normAxis maps a possibly negative axis into [0, rank).
func normAxis(op string, axis, rank int) (int, error) {
	a := axis
	if a < 0 {
		a += rank
	}
	if a < 0 || a >= rank {
		return 0, errorf(op, ErrAxis, "axis %d is out of bounds for an array of dimension %d", axis, rank)
	}
	return a, nil
}

// normAxes maps axes to a sorted set; no axes means all of them.
func normAxes(op string, axes []int, rank int) ([]int, error) {
	if len(axes) == 0 {
		all := make([]int, rank)
		for i := range all {
			all[i] = i
		}
		return all, nil
	}
	seen := make([]bool, rank)
	for _, ax := range axes {
		a, err := normAxis(op, ax, rank)
		if err != nil {
			return nil, err
		}
		if seen[a] {
			return nil, errorf(op, ErrAxis, "repeated axis %d", ax)
		}
		seen[a] = true
	}
	out := make([]int, 0, len(axes))
	for i, s := range seen {
		if s {
			out = append(out, i)
		}
	}
	return out, nil
}

// checkShape reports a negative dimension, or a shape too big for any
// machine: one whose element count, or byte count at dtype dt, does not fit
// an int (NumPy's "array is too big"). Every array's shape passes it, so
// the size of an array, and of anything smaller, never overflows.
func checkShape(op string, dt DType, shape []int) error {
	for _, d := range shape {
		if d < 0 {
			return errorf(op, ErrValue, "negative dimension in shape %s", shapeString(shape))
		}
	}
	if _, ok := byteSize(dt, shape); !ok {
		return tooBig(op, dt, shape)
	}
	return nil
}

// sizeOf returns the number of elements of a shape of non-negative
// dimensions, or ok false if the product of its non-zero dimensions does
// not fit an int. As NumPy, zero dimensions do not excuse the others: the
// batch count of a (2^40, 2^40, 0) stack would overflow all the same.
func sizeOf(shape []int) (n int, ok bool) {
	n = 1
	zero := false
	for _, d := range shape {
		switch {
		case d < 0:
			return 0, false
		case d == 0:
			zero = true
		case n > math.MaxInt/d:
			return 0, false
		default:
			n *= d
		}
	}
	if zero {
		return 0, true
	}
	return n, true
}

// byteSize returns the bytes of a shape at dtype dt, or ok false if the
// count or the bytes (of its non-zero dimensions) do not fit an int.
func byteSize(dt DType, shape []int) (int, bool) {
	n, ok := sizeOf(shape)
	if !ok {
		return 0, false
	}
	// The product of the non-zero dimensions, which sizeOf found to fit an
	// int (computed here, not through nonZero: every operation checks its
	// result's size, and must not allocate for it).
	nz := 1
	for _, d := range shape {
		if d != 0 {
			nz *= d
		}
	}
	sz := max(dt.Size(), 1)
	if nz > math.MaxInt/sz {
		return 0, false
	}
	return n * sz, true
}

func nonZero(shape []int) []int {
	var out []int
	for _, d := range shape {
		if d != 0 {
			out = append(out, d)
		}
	}
	return out
}

// tooBig is the error of a shape whose size overflows an int.
func tooBig(op string, dt DType, shape []int) error {
	n := big.NewInt(1)
	for _, d := range nonZero(shape) {
		n.Mul(n, big.NewInt(int64(d)))
	}
	b := new(big.Int).Mul(n, big.NewInt(int64(max(dt.Size(), 1))))
	what := "has"
	if len(nonZero(shape)) < len(shape) {
		what = "would have, without its zero dimensions,"
	}
	return errorf(op, ErrValue, "array is too big: shape %s of %v %s %s elements, %s bytes (%s); an array holds at most %d bytes",
		shapeString(shape), dt, what, n, b, humanBytes(new(big.Float).SetInt(b)), math.MaxInt)
}

// humanBytes writes a byte count with a binary unit: "4 TiB", "1.5 GiB".
func humanBytes(b *big.Float) string {
	units := []string{"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB", "ZiB", "YiB"}
	u := 0
	for ; u < len(units)-1 && b.Cmp(big.NewFloat(1024)) >= 0; u++ {
		b = new(big.Float).Quo(b, big.NewFloat(1024))
	}
	f, _ := b.Float64()
	return strconv.FormatFloat(math.Round(f*100)/100, 'f', -1, 64) + " " + units[u]
}

// bytesString is humanBytes of an int.
func bytesString(n int) string { return humanBytes(new(big.Float).SetInt64(int64(n))) }
