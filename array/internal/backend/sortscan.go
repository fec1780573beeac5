package backend

// SortScan is the part of Backend that sorts, scans, searches and counts.
// Every operand of these requests is contiguous: only its Buf and its
// Layout.Offset matter. Package array moves the axis to where the request
// wants it and casts to a supported dtype first.
type SortScan interface {
	// Sort sorts rows (see Sort).
	Sort(s *Sort) error
	// Scan computes cumulative sums, products, maxima or minima.
	Scan(s *Scan) error
	// Search finds insertion points in a sorted vector.
	Search(s *Search) error
	// Histogram counts values into bins.
	Histogram(h *Histogram) error
	// Unique groups equal values of a sorted vector.
	Unique(u *Unique) error
	// TopK selects the largest or smallest keys of rows.
	TopK(t *TopK) error
}

// TopK writes, for each of Rows rows of Len keys (a sortable dtype), the
// K largest keys (Largest) or the K smallest, in that order, to OutKeys
// and their positions in the row (int64) to OutIdx, both Rows×K: the first
// K of the stable Sort of the row, descending for Largest (so NaN counts
// as the largest key and equal keys keep their order). K is at most
// TopKMax; package array sorts rows for a larger K.
type TopK struct {
	Keys      Operand
	Rows, Len int
	K         int
	Largest   bool
	OutKeys   Operand
	OutIdx    Operand
}

// Sort sorts each of Rows rows of Len keys, stably, in the total order
// where -0 comes before +0 and NaN after everything (NumPy's order, with
// its equal zeros ordered by sign). Descending reverses the order (NaN
// first) and stays stable: equal keys keep their order.
//
// Keys has a sortable dtype (Bool, Uint8, Int32, Int64, Float32, Float64).
// OutKeys, if its Buf is set, receives the sorted keys (NaN as the quiet
// NaN of the dtype). OutVals, if set, receives the payload moved with the
// keys: Vals's elements (any dtype) or, with no Vals, each key's position
// in its row as int64.
type Sort struct {
	Keys       Operand
	Rows, Len  int
	Descending bool
	Vals       Operand
	OutKeys    Operand
	OutVals    Operand
}

// ScanKind is a cumulative operation.
type ScanKind uint8

// The scans. Integer sums and products wrap; float32 accumulates in
// float32 as NumPy does. Max and Min propagate NaN.
const (
	CumSum ScanKind = iota
	CumProd
	CumMax
	CumMin
)

var scanNames = [...]string{"cumsum", "cumprod", "cummax", "cummin"}

func (k ScanKind) String() string {
	if int(k) < len(scanNames) {
		return scanNames[k]
	}
	return "scan?"
}

// Scan computes the inclusive scan of In along the middle axis of its
// Outer×Len×Inner shape into Out (same dtype and shape, no overlap); with
// Reverse it runs from the end of the axis to its start. The dtype is
// Int32, Int64, Uint8, Float32 or Float64.
type Scan struct {
	Kind              ScanKind
	In, Out           Operand
	Outer, Len, Inner int
	Reverse           bool
}

// Search writes into Out (int64, N elements) for each of the N Values the
// first (Right: the last) index of Sorted (Len elements, ascending in
// NumPy's order, NaN last) at which it could be inserted keeping the order.
// Sorted and Values have one dtype (not Bool).
type Search struct {
	Sorted Operand
	Len    int
	Values Operand
	N      int
	Right  bool
	Out    Operand
}

// Histogram counts the N elements of In into Bins bins of Out: int64
// counts, or with Weights (float64, N elements) float64 sums of weights.
// For an integer In the bin is the value itself and values outside
// [0, Bins) are dropped. For a float In (Float32 or Float64) the bins split
// [Lo, Hi] evenly as NumPy's histogram does (the last bin includes Hi);
// values outside it and NaN are dropped.
type Histogram struct {
	In      Operand
	N       int
	Weights Operand
	Out     Operand
	Bins    int
	Lo, Hi  float64
}

// Unique groups the N elements of Sorted (sorted ascending by Sort) into
// runs of equal values (NaN equals NaN, -0 equals +0). Perm holds, as
// int64, the original position of each sorted element (Sort's positions).
// It writes the number of groups to Count (int64, one element) and, for
// the first Cap groups, their first value to Values (Sorted's dtype),
// their smallest original position to Index and their size to Counts
// (int64); the slots past the number of groups get Fill, 0 and 0, unless
// NoFill leaves them as they are. Inverse
// (int64, N elements) receives the group of each original element. Each
// output is optional (a nil Buf); Index and Inverse need Perm.
type Unique struct {
	Sorted  Operand
	Perm    Operand
	N       int
	Cap     int
	Fill    Scalar
	NoFill  bool
	Count   Operand
	Values  Operand
	Index   Operand
	Counts  Operand
	Inverse Operand
}

// TopKMax is the largest K of a TopK request.
const TopKMax = 1024

// Sortable reports whether Sort takes keys of dtype d.
func Sortable(d DType) bool {
	switch d {
	case Bool, Uint8, Int32, Int64, Float32, Float64:
		return true
	}
	return false
}
