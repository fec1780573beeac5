package array

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

func checkShape(op string, shape []int) error {
	for _, d := range shape {
		if d < 0 {
			return errorf(op, ErrValue, "negative dimension in shape %s", shapeString(shape))
		}
	}
	return nil
}
