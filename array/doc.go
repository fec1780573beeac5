// Package array provides n-dimensional arrays with NumPy semantics that
// compute on a GPU when there is one and on all CPU cores otherwise.
//
//	x := array.NewRNG(1).Normal(array.Float32, 0, 1, 64, 784)
//	w := array.NewRNG(2).Normal(array.Float32, 0, 0.05, 784, 10)
//	b := array.Zeros(array.Float32, 10)
//	p := x.MatMul(w).Add(b).ReLU().Softmax(1)
//	if err := p.Err(); err != nil { ... }
//	fmt.Println(p)
//
// # Devices
//
// Arrays live on a *gocu.Device, the device that kernels and buffers use
// too: array.On(dev) returns its Maker, whose methods (Zeros, Ones, Full,
// Arange, NewRNG, ReadNPY, ...) create arrays there. Package functions
// (Zeros, FromSlice, NewRNG, ...) use Default(), the Maker of
// gocu.Default(): GOCU_DEVICE (cpu, sim, cuda or cuda:N) if set, else the
// first GPU when a driver, a GPU and NVRTC are present, else the CPU; a
// device that cannot be opened gives arrays that fail with the reason.
// SetDefault overrides the choice. On the sim device arrays compute
// natively on the CPU backend (only user kernels run in the simulator) and
// Empty is filled with 0xFF bytes, as the simulator's buffers are. Arrays
// of different devices do not mix (an error names both); x.To(dev) copies
// between devices.
//
// # Names
//
// Names follow NumPy: ExpandDims, not Unsqueeze; Transpose with axes, not
// Permute. Where NumPy has two names with two meanings, so does array:
// Ravel returns a view when it can, Flatten always copies.
//
// Each constructor exists twice, on purpose. The package function uses the
// default device, as np.zeros does; the Maker method takes the device from
// its Maker, as torch.zeros(device=...) does. Go has no generic methods,
// so the generic constructors take the device as their first argument
// instead: FromSliceOn and FromImageOn.
//
// # Arrays and kernels
//
// An array goes into a kernel without a copy. AsBuffer[T](x) views a
// contiguous array as a *gocu.Buffer[T] for the launchers that gocu gen
// writes; gocu.Kernel.Launch takes an *Array directly (Array implements
// gocu.Arg); FromBuffer views a buffer as an array. A strided view is
// refused with ErrValue (a kernel indexes a slice densely: pass
// x.Contiguous()). On a GPU every array operation is queued on the
// device's default stream, which launches that name no stream use too, so
// array operations and kernels run in the order they are called without
// the host waiting. An array whose error is set gives that error to the
// launch that uses it (AsBuffer returns a gocu.Failed buffer), and a fault
// in a user kernel surfaces at the next Err, read or Sync of any array of
// the device, naming the kernels launched last.
//
// The CPU backend is pure Go: above 32768 elements an operation is split
// over GOMAXPROCS goroutines; float32 and float64 matrix products use a
// packed, blocked GEMM with an AVX2/FMA micro-kernel (gonum's BLAS on
// machines without AVX2, where it is portable but about 8x slower; gonum's
// pure-Go Sgemm reached 25 GFLOP/s for 1024² on the 2-core development
// machine against 207 for NumPy/OpenBLAS, the packed kernel about 190).
//
// The GPU backend (no cgo: the driver, NVRTC and cuBLAS are loaded at run
// time) queues every operation on one stream per device and returns at
// once; only reads (ToSlice, Item, String, WriteNPY, Image, To) and Sync
// wait for the GPU. Fused elementwise programs, reductions (one launch for
// a full reduction), softmax, Philox fills and integer products are CUDA C
// generated per program structure, compiled by NVRTC for the exact GPU
// (through gocu's disk cache, with --fmad=false so that floats round as on
// the CPU), loaded once and kept in a bounded LRU cache of modules (256 per
// device). Plans (kernel choice, grid, argument layout) are cached per
// request shape, so a repeated operation on same-shaped arrays costs a
// lookup and one kernel launch. Float32 and float64 products go to cuBLAS
// (a row-major product as Cᵀ = Bᵀ·Aᵀ, transposed views as transpose flags,
// batches through strided batched GEMM, broadcast batch axes with stride
// 0), on one handle per device with a 32 MiB workspace from the caching
// allocator. Device memory comes from the stream-ordered caching allocator
// of package cuda.
//
// # Element types and promotion
//
// The dtypes are Bool, the integers Uint8, Int8, Int16, Uint16, Int32,
// Uint32, Int64 and Uint64, Float16, BFloat16, Float32, Float64,
// Float8E4M3 and Float8E5M2 (the last two are the OCP 8-bit floats,
// "float8_e4m3fn" and "float8_e5m2"; Go holds the low-precision floats as
// package lowp's types), and Complex64 and Complex128 (see Complex
// numbers). Two arrays combine to Promote(a, b): NumPy's promote_types
// where NumPy has both types (checked against NumPy in the tests),
// PyTorch's promote_types for bfloat16 and the 8-bit floats:
//
//	       bool u8   i8   i16  u16  i32  u32  i64  u64  f16  bf16 f32  f64  e4m3 e5m2
//	bool   bool u8   i8   i16  u16  i32  u32  i64  u64  f16  bf16 f32  f64  -    -
//	u8     u8   u8   i16  i16  u16  i32  u32  i64  u64  f16  bf16 f32  f64  -    -
//	i8     i8   i16  i8   i16  i32  i32  i64  i64  f64  f16  bf16 f32  f64  -    -
//	i16    i16  i16  i16  i16  i32  i32  i64  i64  f64  f32  bf16 f32  f64  -    -
//	u16    u16  u16  i32  i32  u16  i32  u32  i64  u64  f32  bf16 f32  f64  -    -
//	i32    i32  i32  i32  i32  i32  i32  i64  i64  f64  f64  bf16 f64  f64  -    -
//	u32    u32  u32  i64  i64  u32  i64  u32  i64  u64  f64  bf16 f64  f64  -    -
//	i64    i64  i64  i64  i64  i64  i64  i64  i64  f64  f64  bf16 f64  f64  -    -
//	u64    u64  u64  f64  f64  u64  f64  u64  f64  u64  f64  bf16 f64  f64  -    -
//	f16    f16  f16  f16  f32  f32  f64  f64  f64  f64  f16  f32  f32  f64  -    -
//	bf16   bf16 bf16 bf16 bf16 bf16 bf16 bf16 bf16 bf16 f32  bf16 f32  f64  -    -
//	f32    f32  f32  f32  f32  f32  f64  f64  f64  f64  f32  f32  f32  f64  -    -
//	f64    f64  f64  f64  f64  f64  f64  f64  f64  f64  f64  f64  f64  f64  -    -
//	e4m3   -    -    -    -    -    -    -    -    -    -    -    -    -    e4m3 -
//	e5m2   -    -    -    -    -    -    -    -    -    -    -    -    -    -    e5m2
//
// A signed and an unsigned integer give a signed integer wide enough for
// both (int8 with uint8 is int16), and uint64 with a signed integer gives
// float64, as in NumPy.
//
// "-" is no rule (Promote returns Invalid): as in PyTorch, an 8-bit float
// combines only with itself, and an operation on such a pair, MatMul
// included, fails with ErrDType; convert one operand with AsType.
//
// Go scalars used as operands (x.Mul(2.5), x.Add(1), Where(c, x, 0)) follow
// NumPy 2's NEP 50 "weak scalar" rule, whatever their Go type: a bool takes
// the array's dtype; an integer takes the array's dtype, except that with a
// bool array it gives int64; a float takes the array's dtype if that is a
// float and gives float64 otherwise. So x.Mul(2.5) stays float32 for a
// float32 x, and an int32 array times 0.5 is float64. An integer scalar
// that does not fit the array's dtype is an error (uint8 + 300, as NumPy 2's
// OverflowError), except in comparisons, which are then computed exactly.
// A strongly typed scalar is a 0-d array (Full(Float32, v)).
//
// Operation-specific result types:
//   - Div is true division: integer and bool operands divide in float64.
//   - Functions defined on floats (Sqrt, Exp, Log, Sin, Tanh, Sigmoid,
//     Arcsin, Erf, Arctan2, Hypot, Copysign, Reciprocal, Softmax, ...) keep
//     float dtypes and compute integers of 32 and 64 bits in float64 and
//     bool and narrower integers in float32. (NumPy uses float16 for 8 bits,
//     which gocu keeps for arrays that are float16 already; NumPy's integer
//     Reciprocal is integer division, gocu's is float.)
//   - Floor, Ceil, Round and Trunc are the identity on integers and bool
//     (NumPy 2.1 and later).
//   - Comparisons, IsNaN/IsInf/IsFinite and the Logical* operations give bool.
//   - The Bitwise* operations and shifts take integers and keep their
//     dtype; on bool the Bitwise* ones are the Logical* ones (NumPy's & and
//     ~), shifts of bool and all of them on floats are errors.
//   - Sum, Prod, Cumsum and Cumprod give int64 for bool and signed
//     integers and uint64 for unsigned ones (NumPy's accumulators) and keep
//     float types; Mean gives float64 for integers; Max and Min keep the
//     dtype; ArgMax and ArgMin give int64; Any and All bool.
//   - Bool arithmetic: Add and Maximum are or, Mul and Minimum are and; Sub,
//     Neg, Sign, ReLU, FloorDiv, Mod and Pow are errors (as NumPy's Sub/Neg).
//
// Integer arithmetic wraps. FloorDiv and Mod follow Python (the remainder
// has the divisor's sign); integer division or modulo by zero gives 0, as
// NumPy (which also warns). An integer raised to a negative integer power
// gives 1/a^-b truncated toward zero (NumPy raises an error, which an
// elementwise kernel cannot). LeftShift and RightShift by the bit width or
// more, or by a negative count, give 0, or -1 for a negative RightShift
// (as NumPy). Maximum, Minimum, Max and Min propagate NaN.
// Converting a float to an integer (AsType, ToSlice) truncates toward zero,
// saturates at the type's range and maps NaN to 0 on every backend (what
// CUDA's conversion instructions do; NumPy leaves it undefined): 300.0 to
// int8 is 127, not 44. Integers convert to narrower integers by wrapping
// (300 to int8 is 44, as NumPy's astype).
//
// # Low precision
//
// Int8 and the low-precision floats are storage types: they are held in
// memory in their own format and computed in a wider one, as PyTorch does.
// So are Int16 and Uint16 (computed in int32) and Uint32 and Uint64 (in
// int64), whose results wrap back exactly as their own arithmetic would;
// uint64's comparisons, extremes, sorts, division, remainder and right
// shifts are rewritten so that they read the bits as unsigned.
// Elementwise arithmetic and functions on float16, bfloat16 and the 8-bit
// floats compute in float32 and round each operation's result back to the
// format (to nearest even), so a fused chain rounds after every operation,
// exactly as the same chain evaluated step by step; int8 arithmetic
// computes in int32 and wraps back to int8. Reductions compute in float32
// (sums accumulating in float64 inside, as for float32) and round the
// result to the format; Sum and Prod of int8 give int64, Mean float64.
// Softmax of a low-precision float computes in float32 and rounds.
//
// Conversions between float32 or float64 and the low-precision floats are
// package lowp's, on every backend (the GPU's kernels use its cvt
// instructions where the architecture has them, and lowp's integer code
// elsewhere; both give the same bits, which the GPU tests check over every
// float16 and bfloat16 value and a dense sweep of float32): round to
// nearest even, once (a float64 is not rounded to float32 first); float16
// and bfloat16 overflow to infinity; the 8-bit floats saturate at ±448 and
// ±57344 (infinities included, .satfinite); every NaN becomes the format's
// canonical NaN; widening is exact. Conversions between other dtypes go
// through float32 (exact for bool, uint8, int8 and the other formats) or
// float64 (int32 exactly, int64 rounded). Go scalars round to the array's
// format first (NEP 50: the scalar takes the array's dtype).
//
// .npy files hold float16 as NumPy's '<f2' and int8 as '|i1'. NumPy has no
// bfloat16: it is written as the 2-byte void '<V2' holding the bits, which
// is what np.save writes for an ml_dtypes.bfloat16 array (load it with
// np.load(f).view(ml_dtypes.bfloat16)), and '<V2' or '|V2' files read as
// bfloat16. The 8-bit floats cannot be told apart in a .npy header (both
// would be 'V1'): writing one is an ErrDType error that says to write
// x.AsType(Float16), which holds every 8-bit float exactly.
//
// Quantize converts an array to int8 or an 8-bit float with float32
// scales, symmetrically (scale = max|x| / 127, 448 or 57344 per tensor, per
// row, per column or any group of axes; q = x / scale rounded to nearest
// even and saturated); Dequantize multiplies back (one fused pass). On a
// GPU, quantising along one axis is one kernel. nn.QuantizedLinear is a
// linear layer with int8 weights (per output channel) whose input is
// quantised per row on the fly, multiplied in int8 and dequantised with
// the bias in one fused epilogue.
//
// # Complex numbers
//
// Complex64 and Complex128 hold (real, imaginary) pairs of float32 and
// float64, interleaved as in Go, NumPy and CUDA. FromComplex and
// ToComplex (Complex64s, Complex128s) move them to and from Go slices;
// Full, Zeros and Ones take Go complex values; RNG.Normal draws standard
// complex normals (each part with variance 1/2, as torch.randn). They
// promote as NumPy: complex64 with bool, uint8, int8, float16, bfloat16 or
// float32 gives complex64, with int32, int64 or float64 complex128. A Go
// complex scalar is weak: float32(x)·2i stays complex64.
//
// Arithmetic (Add, Sub, Mul, Div by Smith's algorithm, as NumPy), Neg,
// Square, Reciprocal, Exp, Log, Sqrt (principal branch), Conj, Eq and Ne,
// IsNaN/IsInf/IsFinite, Where, Sum, Mean, Prod, Any, All, Concat, MatMul,
// printing and .npy ('<c8', '<c16') take complex arrays; Abs and Angle
// give the component float type, Real and Imag copies of the parts
// (NumPy's are views: ViewAsReal and ViewAsComplex give views). Ordering
// comparisons, Maximum/Minimum, Max/Min, ArgMax/ArgMin, FloorDiv, Mod,
// Floor and the like, trigonometric functions and Softmax are ErrDType
// errors. AsType from complex to a real dtype is an ErrDType error too
// (NumPy drops the imaginary part with a ComplexWarning): take Real, Imag
// or Abs; complex to bool tests for nonzero values.
//
// The backends only hold complex buffers. Package array computes each
// complex operation on the float parts, strided views of the same memory,
// with the real kernels of both backends. Complex results are lazy and fuse
// like real ones: a.Mul(b).Abs().Eval() is one pass that reads a and b
// once, and evaluating a complex result writes both parts in one pass.
// Abs is hypot of the parts, as NumPy's: no overflow from squaring. MatMul is
// cuBLAS's complex GEMM on a GPU and four real GEMMs of the parts on the
// CPU. Package fft transforms complex arrays.
//
// # Shapes, broadcasting and views
//
// Binary operations broadcast as NumPy: shapes are aligned on the right and
// each dimension must be equal or 1. An array has a shape, strides and an
// offset (in elements) into a storage it may share with other arrays.
// Reshape (a view when the strides allow it, else a copy, by NumPy's rule),
// Transpose/T/SwapAxes/MoveAxis, Slice (NumPy basic indexing: Idx,
// S with negative steps, All, NewAxis, Ellipsis), BroadcastTo, Squeeze,
// ExpandDims, At and Ravel return views; Copy, Flatten and AsType return new
// arrays; Contiguous returns a view when the array already is contiguous.
// Assign writes into an array's memory (dst[...] = src), seen by all views.
// Split, ArraySplit, Chunk, Flip and Diagonal return views; Tile, Repeat,
// Pad, Roll, Tril, Triu, Diag, Meshgrid and Logspace are built from views,
// gathers and fused expressions.
//
// # Indexing by arrays
//
// Take, TakeAlongAxis and IndexSelect gather along an axis by integer
// arrays (int32 or int64 read directly, other integers converted); Slice
// takes Fancy(x) indices (NumPy's advanced indexing, integer arrays and
// boolean masks, mixed with basic ones); Put, IndexPut, Scatter,
// ScatterAdd, IndexAdd and ScatterMax write by index, the adds and max
// accumulating over duplicate indices (atomics on a GPU). Negative indices
// count from the end. An index out of range is an ErrIndex error naming
// the index, the axis and its size, never a fault: on the CPU the
// operation fails; on a GPU the kernel skips the element and raises a
// device-side flag, read at the next synchronisation (a read, Err after
// Sync, Sync), like PyTorch's device-side asserts, and reported once.
//
// Mask (a[mask]), SetMask (a[mask] = v), Nonzero, FlatNonzero and
// ArgWhere depend on the data for their result's size: they wait for the
// device to count the selected elements (SetMask with a scalar or a
// broadcast value does not). NonzeroStatic, ArgWhereStatic and MaskStatic
// take the size instead, as JAX's size argument, and never wait.
//
// # Results into existing arrays
//
// Into evaluates an expression straight into an existing array, and
// ReduceInto writes a reduction into one (NumPy's out=), so a loop need
// not allocate device memory: x.Mul(0.9).Add(g).Into(x) updates x in
// place. BinaryInto and UnaryInto write one operation into an array
// without making even the pending array, as np.add(x, y, out=dst):
// BinaryInto(x, OpMul, x, lr) allocates nothing, host or device, once
// the operation's kernel is planned.
//
// # Laziness and fusion
//
// Elementwise operations (arithmetic, functions, comparisons, Where, AsType,
// and Zeros/Ones/Full/Arange/Linspace/Eye) are lazy: they record an
// expression and return at once. The expression is evaluated, as one fused
// program, when the array is read (ToSlice, Item, String, WriteNPY, Image),
// used by a non-elementwise operation (MatMul and views evaluate it;
// reductions and softmax take it as their input, so Sum(x*x) is one pass),
// or when Eval or Err is called. On a GPU the program becomes one generated
// kernel; on the CPU it runs block by block (1024 elements through every
// operation while they are in L1), so intermediates are never materialised.
// Calling Eval after every operation evaluates unfused, as an eager library
// would (the GPU benchmarks compare both).
//
// Lazy evaluation was chosen over an explicit Fuse because it fuses the
// code people write anyway (x.MatMul(w).Add(b).ReLU() fuses the bias and the
// activation) without a second API, and because in Go, without operator
// overloading, chains of method calls are already the natural expression
// syntax. Its costs are bounded: an expression grows to at most 48 nodes
// (larger ones evaluate their operands first); a pending expression used by
// a second operation is evaluated once at that point and read from memory
// afterwards, so shared subexpressions are not recomputed per consumer;
// errors appear when the expression is built (shapes, dtypes) or at the
// first read (device failures), which is where a GPU's asynchronous errors
// surface anyway; and a pending expression keeps its inputs alive until it
// is evaluated. Assign evaluates pending expressions that read the memory
// it overwrites first, so laziness never changes results. Generated kernels
// are keyed by the expression's structure and dtypes, never by scalar
// values or shapes, so their number stays bounded.
//
// # Reductions
//
// Reductions take any set of axes (none: all) and keepDims (Reduce). Float32
// sums, means and products accumulate in float64 on every backend and round
// once (more accurate than NumPy's pairwise float32 summation); float64 sums
// add 1024-element blocks with six interleaved accumulators and then the
// block totals. Reducing an empty axis gives Sum 0, Prod 1, Mean NaN, Any
// false, All true, and is an error for Max, Min, ArgMax, ArgMin. ArgMax and
// ArgMin return the first index of the extreme value (of the first NaN if
// any). Softmax, LogSoftmax and LogSumExp subtract the maximum along the
// axis first (a row whose maximum is infinite uses shift 0: LogSumExp of all
// -Inf is -Inf, as SciPy).
//
// # Sorting, scans and statistics
//
// Sort, Argsort, SortWithIndices and SortDescending sort along any axis,
// stably, in NumPy's order (NaN last), with -0 before +0 where NumPy keeps
// equal zeros in their order; TopK takes the k largest or smallest of each
// row (NaN counts as largest, as in PyTorch); SortBy reorders one array
// by another's sort; Partition and ArgPartition return a full sort, which
// is a valid partition. Cumsum, Cumprod, Cummax and Cummin scan along an
// axis (integer sums wrap in int64); Diff differences. SearchSorted,
// Bincount, BincountN and Histogram search and count; Unique, UniqueAll
// and UniqueN group equal values. Var, Std, Quantile, Median, Percentile,
// the Nan reductions, CountNonzero, IsClose, AllClose, LogSumExpAxes and
// SoftmaxAxes compute statistics. On the GPU, sorts are stable LSD radix
// sorts (rows sorted together, the row as the most significant digits),
// scans single-pass with decoupled look-back, histograms counted in shared
// memory per block.
//
// Operations whose result size depends on the data read a value from the
// device and so synchronise: Unique and UniqueAll (the number of values),
// Bincount (the largest value), Histogram without a range (the extremes)
// and AllClose.
// UniqueN and BincountN take a static size and do not.
//
// # Matrix products
//
// MatMul follows numpy.matmul: 2-D, stacks of matrices in the last two axes
// with broadcast batch axes, 1-D operands as vectors. A transposed view is
// passed to the engine with a transpose flag and its leading dimension,
// never copied; only views that no BLAS layout describes (negative or zero
// strides, steps in both axes) are copied first. On a GPU, float32 products
// use FP32 or TF32 tensor cores per SetMatMulPrecision (package-wide, like
// torch.set_float32_matmul_precision) or Device.SetMatMulPrecision; TF32
// rounds the inputs to 10-bit mantissas (relative error about 1e-3). Integer
// and bool products are plain loops on the CPU and a tiled generated kernel
// on a GPU (integers wrap, bool is or-of-ands).
//
// float16 and bfloat16 products accumulate in float32 and round the result
// to the operands' dtype (cublasGemmEx on the tensor cores; any layout,
// batched, without copies). int8 by int8 gives int32 (as torch._int_mm;
// NumPy would keep int8), exactly. 8-bit floats multiply through
// ScaledMatMul(a, b, scaleA, scaleB, out), as torch._scaled_mm: per-tensor
// float32 scales, float32 accumulation (on a Hopper GPU the FP8 tensor
// cores add in somewhat fewer bits than float32: an H100 differed from the
// exact float32 sum by 2.6e-5 of sum |a||b|), float32, bfloat16 or float16
// output; on a GPU older than compute capability 8.9 it fails with
// ErrUnsupported. On a GPU the int8 and 8-bit float products run on the
// tensor cores through cuBLASLt, whose kernels take one layout: a
// row-major a and a column-major b (a transposed view such as w.T() of a
// contiguous N×K w) with K and N multiples of 4 (int8) or 16 (8-bit
// floats). Operands in that layout are used as they are; others are copied
// into it first, K and N padded with zeros (which add nothing), and the
// padding cut from the result; an int8 product cuBLASLt has no algorithm
// for runs a generated kernel instead. The CPU computes every low-precision
// product exactly as defined (float32 or int32 accumulation) with its
// float32 GEMM on all cores (int8 sums in chunks that float32 holds
// exactly).
//
// # Random numbers
//
// RNG is counter-based: Philox4x32-10 (tested against the Random123
// known-answer vectors) keyed by the seed, with a counter that advances by
// the Philox blocks each draw uses. Uniform and Normal (Box-Muller) values
// are defined with one rounding per IEEE operation and gocu's own log and
// sin/cos polynomials, so one seed gives bit-identical arrays on the CPU and
// on a GPU (the generated CUDA source is checked bit for bit against the Go
// generator). See package internal/philox for the exact mapping.
//
// # Errors
//
// Operations never panic on user errors. A failed operation returns a
// failed array; an operation on a failed array returns a failed array with
// the same error; Err and every read report it. Errors are *Error values
// naming the operation ("array: Add: shapes (3,4) and (5,) cannot be
// broadcast") and wrap one of ErrShape, ErrAxis, ErrIndex, ErrDType,
// ErrValue, ErrClosed, ErrDevice, ErrUnsupported (use errors.Is), plus the
// device's own error where there is one. A shape whose element count or byte count
// overflows an int (Zeros(Float32, 1<<40, 1<<40); the product of the
// non-zero dimensions counts, as in NumPy) is ErrValue ("array is too
// big"), naming the shape and the bytes, wherever the shape arises:
// constructors, broadcasting, Reshape, BroadcastTo, Concat, MatMul, casts
// to wider dtypes, ReadNPY and FromImage. An allocation the GPU cannot
// satisfy, after the garbage collector, the cleanups of unreachable arrays
// and the allocator's cache have released what they could, fails with
// ErrOutOfMemory (and ErrDevice, and cuda.ErrOutOfMemory); so does a host
// allocation larger than the machine can give (its physical memory, or its
// cgroup's memory.max when lower, on Linux; elsewhere only overflow is
// checked), before Go's allocator would end the program. Lazy arrays
// allocate when evaluated, so a 4 TiB Zeros fails at Err or at its first
// read. ReadNPY checks the data a header promises against what the input
// holds before allocating, and reads streams in bounded chunks. Dim of an
// axis the array does not have is ErrAxis. A GPU fault
// (an illegal address, ...) loses the CUDA context: it surfaces at the
// next read, Sync or Err (which checks without waiting) and every later
// operation on the device fails with it.
//
// Every read of a GPU array to the host (Item, ToSlice, Float32s and the
// like, String, To another device, WriteNPY) waits for the device. With
// GOCU_SYNC_DEBUG=warn (gocu.SetSyncDebugMode) each is reported with its
// call site; with =error it fails with ErrHiddenSync before waiting, and
// the array stays as it was. Reads on the CPU wait for no device and are
// never reported.
//
// # Memory
//
// An array owns a reference to its storage; views share it. Close releases
// the reference, and the storage is freed with its last reference. Using a
// closed array fails with ErrClosed. Memory comes back at a known time in
// three ways, and a fourth is the backstop:
//
//   - Close frees an array now. On a GPU its memory goes back to the
//     caching allocator at once, ordered on the stream: Close never waits.
//   - A Scope closes every array created on its device while it was open,
//     except those kept (Keep, Persist). A training step in a scope needs
//     no Close at all; parameters, gradients and optimiser state persist.
//   - A lazy chain allocates nothing for its intermediates: they fuse into
//     one kernel. Operations built from several (Quantize, the row
//     kernels' fallbacks) close their own temporaries once queued.
//   - The backstop: a cleanup (runtime.AddCleanup) frees the memory of an
//     array dropped without Close once the collector finds it unreachable.
//     The GPU backend starts a collection when live device memory doubles,
//     as GOGC does for the heap, so a program that frees its arrays never
//     pays for one.
//
// The CPU backend keeps up to 512 MiB of freed large buffers for reuse,
// which avoids the page faults of fresh allocations; Device.TrimCache
// releases the CPU's pool or returns a GPU allocator's cache to the driver.
// GOCU_MEMORY_HISTORY=file (package prof) records every GPU allocation
// and free with its Go stack, for finding where the memory went.
//
// # Input and output
//
// String and fmt's %v print like NumPy's str() (same column alignment,
// precision 8, scientific notation choice and summarisation of arrays over
// 1000 elements; checked against NumPy's output); %.3v sets the precision,
// %#v prints like repr(). ToSlice, Item and the typed getters copy to Go
// slices. ReadNPY/LoadNPY read .npy files (format 1.0 to 3.0, every dtype
// above, C or Fortran order, either byte order); WriteNPY/SaveNPY write
// format 1.0, C order, little-endian. FromImage and Image convert to and
// from image.Image as uint8 arrays in HWC (height, width, channel: Go's and
// PIL's interleaved order) or CHW (planar, PyTorch's order) layout with 1,
// 3 or 4 channels.
//
// # Accuracy
//
// Every operation is tested on every backend against a float64 reference on
// random inputs, with these relative tolerances (relative to max(|x|, 1)):
//
//	operation class                                    float32  float64
//	integer and bool results, comparisons, Max/Min,     exact    exact
//	  ArgMax/ArgMin, Where, AsType, Abs, Neg, ReLU,
//	  Floor/Ceil/Round/Trunc, views and copies
//	+ - * / Square Reciprocal Sqrt FloorDiv             1e-6     1e-14
//	Mod                                                 1e-5     1e-13
//	Exp Log Sin Cos Tan Tanh Sigmoid Pow and the rest   2e-6     1e-13
//	Sum Mean Prod Softmax LogSumExp                     2e-6     1e-12
//	MatMul (relative to sum |a||b|)                     1e-5     1e-12
//	MatMul with TF32 precision on a GPU (same)          1e-3     -
//
// On the CPU, float32 functions are computed in float64 and rounded once
// (error under one ulp); a GPU uses CUDA's float functions (at most a few
// ulp, inside the same tolerances). + - * / and conversions are bit-exact
// between the backends (no fused multiply-add on either), and so are
// random arrays and integer results.
//
// The low-precision floats round every result to their format: + - * /
// are bit-exact with lowp applied to the float32 result, on every backend;
// functions are within two ulp of the format (2^-10 relative for float16,
// 2^-7 for bfloat16, 2^-3 and 2^-2 for the 8-bit floats). float16 and
// bfloat16 products are within one ulp of the format relative to sum
// |a||b| (float32 accumulation, then the output's rounding); int8
// products, quantisation (values and scales) and the quantised layer's
// epilogue are bit-exact between the backends.
//
// # Concurrency
//
// Arrays may be read by several goroutines at once (a pending expression is
// evaluated once); Assign and Close must not race with other uses of the
// same memory, as with any Go value.
//
// # CUDA graphs
//
// Maker.Capture records the operations of a function (a whole training
// step) as a CUDA graph, and Graph.Replay runs them again with one launch,
// as torch.cuda.graph: a warm-up run first, then the device's stream
// records a second run. Shapes and buffers are static; reads, Sync and
// host copies inside fail with ErrCapture before they reach the driver
// (the device stays usable); memory allocated or used during the capture
// stays the graph's until Close. On the CPU and the simulator the function
// simply runs. See Capture for the rules.
package array
