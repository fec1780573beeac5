package backend

import "errors"

// Backend runs array operations on one device. Every method may queue its
// work and return before it is done (the CUDA backend queues on a stream);
// errors that only appear when the work runs surface from Read or Sync.
// Buffers passed in stay allocated until the caller frees them, and the
// caller frees a buffer only after the operations that use it have been
// issued (a stream-ordered allocator makes that safe on the GPU).
//
// Requests are fully typed and shaped by package array: a backend must not
// promote, broadcast or check user-level semantics. It may return an error
// for resource failures (out of memory, compile failure, device fault).
type Backend interface {
	// Name identifies the device, e.g. "cpu" or "cuda:0".
	Name() string

	// Alloc returns an uninitialised buffer of n elements (n may be 0).
	Alloc(dt DType, n int) (Buffer, error)
	// Free releases a buffer. It is safe to call from any goroutine.
	Free(b Buffer)
	// Write copies the host slice src ([]T matching dst's dtype; []bool for
	// Bool) into dst starting at element off.
	Write(dst Buffer, off int, src any) error
	// Read copies len(dst) elements of src starting at element off into the
	// host slice dst; it waits for the work queued before it.
	Read(dst any, src Buffer, off int) error

	// Eval computes the fused elementwise program into out, whose layout
	// has the program's shape and dtype the program's result dtype. out
	// never overlaps an input. The program (its slices and layouts) is
	// the caller's again when Eval returns: package array reuses it.
	Eval(p *Program, out Operand) error
	// Reduce computes a reduction (see Reduction).
	Reduce(r *Reduction) error
	// AxisOp computes a softmax-family operation along one axis.
	AxisOp(a *AxisOp) error
	// MatMul computes C = A·B for every batch index.
	MatMul(m *MatMul) error
	// Random fills a buffer range from the Philox4x32-10 stream.
	Random(r *Random) error
	// SortScan sorts, scans, searches and counts (sortscan.go).
	SortScan

	// Sync waits for all queued work and returns the first asynchronous
	// error it produced.
	Sync() error
	// Poll returns an asynchronous error the device has already reported
	// (a GPU fault that lost the context), without waiting for queued
	// work; nil if there is none yet.
	Poll() error
}

// Preparer is implemented by backends that can evaluate a program again
// without planning it: package array keeps the handle EvalPrepare returns
// with the program's structure and, for a later program equal to it in
// everything but its buffers and scalar values, calls EvalPrepared.
type Preparer interface {
	// EvalPrepare is Eval, and returns a handle for evaluating programs
	// of the same structure (shape, nodes, scalar dtypes, input layouts,
	// output layout) again, or nil.
	EvalPrepare(p *Program, out Operand) (Prepared, error)
	// EvalPrepared evaluates, with h, the program of h's structure over
	// the inputs ins (in the program's order) and scalars into out (out's
	// layout is h's). ok is false, and nothing was done, when h cannot
	// serve these buffers (their dtypes, alignment or aliasing differ
	// from the program h was made for, or its plan went stale): the caller
	// then evaluates the program with Eval.
	EvalPrepared(h Prepared, ins []Buffer, scalars []Scalar, out Buffer) (ok bool, err error)
}

// Prepared is a Preparer's handle for a program structure.
type Prepared any

// ErrOutOfMemory is wrapped by the error of an allocation that failed for
// lack of device memory (after the backend freed what it could and
// retried).
var ErrOutOfMemory = errors.New("out of device memory")

// ErrUnsupported is wrapped by the error of an operation the device cannot
// run (an FP8 product on a GPU without FP8 tensor cores).
var ErrUnsupported = errors.New("not supported by the device")

// ReduceOp is a reduction.
type ReduceOp uint8

// Reductions. Sum and Prod of float32 accumulate in float64 and round once;
// integer sums wrap. Mean divides the sum by the count in float64. Max and
// Min propagate NaN. ArgMax and ArgMin produce int64 and return the first
// index of the extreme value (the first NaN if there is one). Any and All
// take and produce bool.
const (
	Sum ReduceOp = iota
	Prod
	Max
	Min
	Mean
	ArgMax
	ArgMin
	Any
	All
)

var reduceNames = [...]string{"sum", "prod", "max", "min", "mean", "argmax", "argmin", "any", "all"}

func (r ReduceOp) String() string {
	if int(r) < len(reduceNames) {
		return reduceNames[r]
	}
	return "reduce?"
}

// Reduction reduces In over Axes (sorted, distinct, at least one) into Out,
// whose shape is In.Shape without the reduced axes and whose dtype is the
// input's, except int64 for ArgMax and ArgMin. For ArgMax/ArgMin over
// several axes the index is the row-major flat index over those axes.
// A reduction over zero elements only reaches a backend for ops with an
// identity (Sum 0, Prod 1, Any false, All true, Mean NaN).
type Reduction struct {
	Op   ReduceOp
	In   *Program
	Axes []int
	Out  Operand
}

// AxisKind is a softmax-family operation.
type AxisKind uint8

// Softmax and LogSoftmax keep the shape; LogSumExp removes the axis. All
// subtract the maximum along the axis first. Quantize scales each row
// symmetrically into a storage type (see AxisOp).
const (
	Softmax AxisKind = iota
	LogSoftmax
	LogSumExp
	Quantize
)

var axisNames = [...]string{"softmax", "logsoftmax", "logsumexp", "quantize"}

func (k AxisKind) String() string {
	if int(k) < len(axisNames) {
		return axisNames[k]
	}
	return "axisop?"
}

// AxisOp applies Kind along Axis of In (a float program) into Out (same
// float dtype).
//
// Quantize takes a float32 program and writes Out, of dtype Int8,
// Float8E4M3 or Float8E5M2 and the input's shape, and Scale, float32 and
// contiguous over the rows (the other dimensions in row-major order, the
// axis removed): for each row, computed in float32, m = max|x| (NaN if an
// element is NaN), scale = m / QMax (1 where that is 0, the NaN 0x7fffffff
// where m is NaN), and every element
// x/scale, rounded to nearest even and saturated for int8 (NaN to 0), or
// converted with the 8-bit float's rounding and saturation. QMax is 127,
// 448 or 57344 (the output type's largest value).
type AxisOp struct {
	Kind  AxisKind
	In    *Program
	Axis  int
	Out   Operand
	Scale Operand
	QMax  float64
}

// Precision selects how float32 matrix products are computed.
type Precision uint8

// FP32 computes in full float32; TF32 lets a GPU use TensorFloat-32 tensor
// cores (10-bit mantissa inputs, float32 accumulation). The CPU ignores it.
const (
	FP32 Precision = iota
	TF32
)

// Matrix is one operand of a (batched) matrix product: element (b, i, j)
// lies at Offset + sum(b[d]*BatchStrides[d]) + i*RowStride + j*ColStride.
// Package array guarantees a BLAS-compatible operand: ColStride == 1 with
// RowStride >= cols, or RowStride == 1 with ColStride >= rows (a transposed
// view), with 1 standing for any stride of a size-1 dimension.
type Matrix struct {
	Buf          Buffer
	Offset       int
	BatchStrides []int
	RowStride    int
	ColStride    int
}

// Trans reports whether the operand is stored column-major (a transposed
// view). Package array normalises the strides of size-1 dimensions so that
// this is the same as ColStride != 1.
func (m Matrix) Trans() bool { return m.ColStride != 1 }

// LD is the leading dimension BLAS needs for the operand.
func (m Matrix) LD() int {
	if m.Trans() {
		return m.ColStride
	}
	return m.RowStride
}

// MatMul is C = A·B for every index of Batch: A is M×K, B is K×N and C is
// M×N. C is contiguous (ColStride 1, RowStride N, batches packed in
// row-major order of Batch) and does not overlap A or B.
//
// A and B have one dtype. C has the same dtype, except for the storage
// types: float16 and bfloat16 products accumulate in float32 and write
// their own dtype or float32; int8 products accumulate and write int32;
// 8-bit float products (E4M3 or E5M2 operands, not both E5M2) accumulate
// in float32, are scaled by ScaleA·ScaleB and write float32, bfloat16 or
// float16.
type MatMul struct {
	A, B, C   Matrix
	Batch     []int
	M, N, K   int
	Precision Precision
	// ScaleA and ScaleB are one float32 each (8-bit float products only;
	// a nil Buf stands for 1).
	ScaleA, ScaleB Operand
}

// Dist is a random distribution.
type Dist uint8

// Uniform draws from [P0, P1); Normal from N(P0, P1²).
const (
	Uniform Dist = iota
	Normal
)

// Random fills Out (a contiguous range of a float32 or float64 buffer) with
// values Counter, Counter+1, ... of the stream of Seed; see package philox
// for the exact mapping from counters to values, which every backend
// reproduces bit for bit.
type Random struct {
	Out     Operand
	Dist    Dist
	Seed    uint64
	Counter uint64
	P0, P1  float64
}
