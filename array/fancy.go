package array

import "runtime"

// fancySlice is Slice with integer or boolean array indices: the basic
// indices make a view, then one gather picks the advanced axes.
func (a *Array) fancySlice(idx []Index) *Array {
	const op = "Slice"
	defer runtime.KeepAlive(a)
	if _, err := a.use(op); err != nil {
		return failed(err)
	}
	r := len(a.shape)
	// Each boolean mask stands for as many axes as it has; count the
	// input axes the indices use to place the Ellipsis.
	used, ell := 0, -1
	for k, x := range idx {
		switch x.kind {
		case idxInvalid:
			return failed(errorf(op, ErrValue, "%s", x.bad))
		case idxInt, idxSlice:
			used++
		case idxArray:
			if _, err := x.arr.use(op); err != nil {
				return failed(err)
			}
			if x.arr.dev != a.dev {
				return failed(errorf(op, ErrDevice, "arrays on different devices (%v and %v)", a.dev, x.arr.dev))
			}
			if x.arr.dt == Bool {
				if len(x.arr.shape) == 0 {
					return failed(errorf(op, ErrIndex, "a 0-d boolean index is not supported"))
				}
				used += len(x.arr.shape)
			} else {
				used++
			}
		case idxEllipsis:
			if ell >= 0 {
				return failed(errorf(op, ErrIndex, "an index can only have a single Ellipsis"))
			}
			ell = k
		}
	}
	if used > r {
		return failed(errorf(op, ErrIndex, "too many indices for array: array is %d-dimensional, but %d were indexed", r, used))
	}
	// basic replaces each array index by All (k of them for a k-d mask);
	// arrs are the integer index arrays, inAx the input axis and outAx the
	// view's axis of each.
	var basic []Index
	var arrs []*Array
	var inAx, outAx []int
	in, out := 0, 0
	var owned []*Array
	defer func() {
		for _, x := range owned {
			x.Close()
		}
	}()
	// adv lists the positions in basic of the advanced indices: the
	// arrays and, as NumPy, the integers (0-d arrays) among them.
	var adv []int
	add := func(x Index) {
		if x.kind == idxInt {
			adv = append(adv, len(basic))
		}
		basic = append(basic, x)
		switch x.kind {
		case idxInt:
			in++
		case idxSlice:
			in++
			out++
		case idxNewAxis:
			out++
		}
	}
	for _, x := range idx {
		switch x.kind {
		case idxEllipsis:
			for k := 0; k < r-used; k++ {
				add(All)
			}
		case idxArray:
			if x.arr.dt != Bool {
				arrs, inAx, outAx = append(arrs, x.arr), append(inAx, in), append(outAx, out)
				adv = append(adv, len(basic))
				add(All)
				continue
			}
			m := x.arr
			for d, n := range m.shape {
				if a.shape[in+d] != n {
					return failed(errorf(op, ErrShape, "boolean index did not match indexed array along axis %d; size of axis is %d but size of corresponding boolean axis is %d", in+d, a.shape[in+d], n))
				}
			}
			co := m.Nonzero() // waits for the device
			for _, c := range co {
				if err := c.Err(); err != nil {
					return failed(err)
				}
				owned = append(owned, c)
				arrs, inAx, outAx = append(arrs, c), append(inAx, in), append(outAx, out)
				adv = append(adv, len(basic))
				add(All)
			}
		default:
			add(x)
		}
	}
	for in < r {
		add(All)
	}
	v := a.Slice(basic...)
	defer v.Close()
	if err := v.Err(); err != nil {
		return failed(err)
	}
	shapes := make([][]int, len(arrs))
	for j, x := range arrs {
		shapes[j] = x.shape
	}
	b, err := broadcastShapes(op, shapes...)
	if err != nil {
		return failed(errorf(op, ErrIndex, "shape mismatch: indexing arrays could not be broadcast together with shapes %s", shapeList(shapes)))
	}
	k := len(arrs)
	adjacent := true
	for j := 1; j < len(adv); j++ {
		adjacent = adjacent && adv[j] == adv[j-1]+1
	}
	p := outAx[0]
	src := v
	if !adjacent {
		// The advanced axes go first, as NumPy.
		p = 0
		perm := append([]int{}, outAx...)
		isAdv := make([]bool, len(v.shape))
		for _, o := range outAx {
			isAdv[o] = true
		}
		for d := range v.shape {
			if !isAdv[d] {
				perm = append(perm, d)
			}
		}
		src = v.Transpose(perm...)
		defer src.Close()
	}
	ix := make([]*Array, k)
	strides := make([][3]int, k)
	for j, x := range arrs {
		bx := x.BroadcastTo(b...)
		c, err := ixIndices(op, bx)
		bx.Close()
		if err != nil {
			return failed(err)
		}
		defer c.Close()
		ix[j] = c
		strides[j] = [3]int{0, 1, 0}
	}
	shape := append(append(append([]int{}, src.shape[:p]...), b...), src.shape[p+k:]...)
	return ixGatherNamed(op, src, p, ix, strides, prod(b), shape, inAx)
}

func shapeList(shapes [][]int) string {
	s := ""
	for i, x := range shapes {
		if i > 0 {
			s += " "
		}
		s += shapeString(x)
	}
	return s
}
