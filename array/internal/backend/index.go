package backend

import "fmt"

// Indexer is implemented by backends that gather and scatter by index
// arrays and compact masks. It is separate from Backend so that backends
// which do not index still satisfy Backend.
type Indexer interface {
	// Gather computes a Gather request.
	Gather(g *Gather) error
	// Scatter computes a Scatter request.
	Scatter(s *Scatter) error
	// Nonzero computes a Nonzero request.
	Nonzero(n *Nonzero) error
}

// Index is one index array of a Gather or Scatter: for the position
// (o, m, i) of the request's [O, M, I] index space it holds
// Buf[Offset + o*Strides[0] + m*Strides[1] + i*Strides[2]], an Int32 or
// Int64 index into an axis of length Len. Negative indices count from the
// end (index+Len); one outside [-Len, Len) is an IndexError naming Axis
// (the user's axis, for the message).
type Index struct {
	Buf     Buffer
	Offset  int
	Strides [3]int
	Len     int
	Axis    int
}

// Gather reads Src, a contiguous [O, Len_0, ..., Len_k-1, I] block starting
// at SrcOffset, into Out, contiguous [O, M, I] at OutOffset:
//
//	Out[o, m, i] = Src[o, idx_0(o,m,i), ..., idx_k-1(o,m,i), i]
//
// Src and Out have one dtype (any, the storage types included); k is 1 to
// MaxIndices. Out does not overlap Src or an index buffer.
type Gather struct {
	Src       Buffer
	SrcOffset int
	Out       Buffer
	OutOffset int
	O, M, I   int
	Idx       []Index
}

// MaxIndices is the most index arrays of one Gather or Scatter.
const MaxIndices = 4

// ScatterOp is how Scatter combines a value with its destination.
type ScatterOp uint8

// Set stores the value (with duplicate indices, one of the values wins:
// the last in order on the CPU, an unspecified one on a GPU); Add adds
// (duplicates accumulate; integers wrap); Max keeps the larger (NaN wins).
const (
	ScatterSet ScatterOp = iota
	ScatterAdd
	ScatterMax
)

var scatterNames = [...]string{"set", "add", "max"}

func (o ScatterOp) String() string {
	if int(o) < len(scatterNames) {
		return scatterNames[o]
	}
	return "scatter?"
}

// Scatter writes Val, whose element (o, m, i) lies at
// Val.Offset + o*ValStrides[0] + m*ValStrides[1] + i*ValStrides[2], into
// Dst, a contiguous [O, Len_0, ..., Len_k-1, I] block at DstOffset:
//
//	Dst[o, idx_0(o,m,i), ..., idx_k-1(o,m,i), i] op= Val[o, m, i]
//
// Val and Dst have one dtype: any for Set; Int32, Int64, Float32 and
// Float64 for Add and Max. Dst does not overlap Val or an index buffer.
type Scatter struct {
	Op         ScatterOp
	Dst        Buffer
	DstOffset  int
	Val        Buffer
	ValOffset  int
	ValStrides [3]int
	O, M, I    int
	Idx        []Index
}

// Nonzero writes the row-major positions of the true elements of Mask (a
// contiguous Bool range of N elements at MaskOffset), in increasing order,
// to Out (Int64, contiguous at OutOffset), at most Cap of them, and their
// total count to Count (one Int64 at CountOffset). It writes nothing past
// the first Cap positions (with Cap 0 it only counts; Out may then be
// any buffer).
type Nonzero struct {
	Mask        Buffer
	MaskOffset  int
	N           int
	Out         Buffer
	OutOffset   int
	Cap         int
	Count       Buffer
	CountOffset int
}

// IndexError is an index outside its axis, found by Gather or Scatter:
// Index is the value, Axis the Index's Axis and Len that axis's length. On a GPU it is found by the device and reported
// at the next synchronisation.
type IndexError struct {
	Index int64
	Axis  int
	Len   int
}

func (e *IndexError) Error() string {
	return fmt.Sprintf("index %d is out of bounds for axis %d with size %d", e.Index, e.Axis, e.Len)
}
