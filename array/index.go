package array

import (
	"fmt"
	"math"
)

// Index selects along one axis in Slice: an integer (Idx), a range with a
// step (S, All), a new axis of length 1 (NewAxis) or as many full axes as
// needed (Ellipsis), like NumPy's basic indexing.
type Index struct {
	kind              indexKind
	i                 int
	start, stop, step int
	bad               string
	arr               *Array
}

type indexKind uint8

const (
	idxInvalid indexKind = iota
	idxInt
	idxSlice
	idxNewAxis
	idxEllipsis
	idxArray
)

// None stands for an omitted start or stop in S, as Python's None:
// S(None, None, -1) is [::-1].
const None = math.MinInt

// S is Python's slice: S(stop), S(start, stop) or S(start, stop, step).
// Negative positions count from the end; None omits a bound (or the
// step, which is then 1).
func S(args ...int) Index {
	switch len(args) {
	case 1:
		return Index{kind: idxSlice, start: None, stop: args[0], step: 1}
	case 2:
		return Index{kind: idxSlice, start: args[0], stop: args[1], step: 1}
	case 3:
		return Index{kind: idxSlice, start: args[0], stop: args[1], step: args[2]}
	}
	return Index{bad: fmt.Sprintf("S takes 1 to 3 arguments, got %d", len(args))}
}

// Idx selects one position (negative counts from the end) and removes the axis.
func Idx(i int) Index { return Index{kind: idxInt, i: i} }

// All keeps a whole axis (Python's ":").
var All = Index{kind: idxSlice, start: None, stop: None, step: 1}

// NewAxis inserts an axis of length 1.
var NewAxis = Index{kind: idxNewAxis}

// Fancy selects along an axis by an integer array of positions, or along
// as many axes as it has by a boolean mask (NumPy's advanced indexing):
// a.Slice(Fancy(rows), Fancy(cols)) is a[rows, cols]. Several index
// arrays broadcast together; their result axes replace the indexed axes
// where those are adjacent, else they come first, as NumPy. A Slice with
// a Fancy index copies instead of viewing, and a boolean mask waits for
// the device to count its true elements.
func Fancy(x *Array) Index {
	if x == nil {
		return Index{bad: "Fancy of a nil array"}
	}
	return Index{kind: idxArray, arr: x}
}

// IsFancy reports whether x is an array index (Fancy).
func (x Index) IsFancy() bool { return x.kind == idxArray }

// Ellipsis stands for as many All as the other indices leave (Python's ...).
var Ellipsis = Index{kind: idxEllipsis}

// bounds resolves a slice against an axis of length n as Python's
// slice.indices: first position, step and count.
func (x Index) bounds(n int) (start, step, count int) {
	step = x.step
	if step == None {
		step = 1 // Python's omitted step
	}
	start, stop := x.start, x.stop
	if step > 0 {
		switch {
		case start == None:
			start = 0
		case start < 0:
			start = max(start+n, 0)
		default:
			start = min(start, n)
		}
		switch {
		case stop == None:
			stop = n
		case stop < 0:
			stop = max(stop+n, 0)
		default:
			stop = min(stop, n)
		}
		if stop > start {
			count = (stop-start-1)/step + 1 // no overflow for a huge step
		}
		return
	}
	switch {
	case start == None:
		start = n - 1
	case start < 0:
		start = max(start+n, -1)
	default:
		start = min(start, n-1)
	}
	switch {
	case stop == None:
		stop = -1
	case stop < 0:
		stop = max(stop+n, -1)
	default:
		stop = min(stop, n-1)
	}
	if start > stop {
		count = (start-stop-1)/-step + 1
	}
	return
}
