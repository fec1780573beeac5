package cublas

import "fmt"

// Op says how an operand enters an operation (cublasOperation_t).
type Op int32

const (
	NoTrans   Op = 0 // CUBLAS_OP_N: the matrix as stored
	Trans     Op = 1 // CUBLAS_OP_T: its transpose
	ConjTrans Op = 2 // CUBLAS_OP_C: its conjugate transpose (= Trans for real types)
)

func (o Op) String() string {
	switch o {
	case NoTrans:
		return "N"
	case Trans:
		return "T"
	case ConjTrans:
		return "C"
	}
	return fmt.Sprintf("Op(%d)", int32(o))
}

func (o Op) valid() bool { return o == NoTrans || o == Trans || o == ConjTrans }

// Math is a cublasMath_t: which shortcuts cuBLAS may take.
type Math int32

const (
	// DefaultMath: full FP32 precision for FP32 routines.
	DefaultMath Math = 0
	// TensorOpMath is deprecated by NVIDIA; it allows FP16 tensor cores.
	TensorOpMath Math = 1
	// PedanticMath: the prescribed precision, no shortcuts (for testing).
	PedanticMath Math = 2
	// TF32TensorOpMath lets FP32 routines run on TF32 tensor cores (inputs
	// rounded to 10-bit mantissas): torch's "high" matmul precision.
	TF32TensorOpMath Math = 3
	// FP32EmulatedBF16x9Math emulates FP32 with BF16 tensor cores (CUDA 12.9+).
	FP32EmulatedBF16x9Math Math = 4
	// FP64EmulatedFixedPointMath emulates FP64 with fixed point (CUDA 13+).
	FP64EmulatedFixedPointMath Math = 8
	// DisallowReducedPrecisionReduction is a flag to OR with the others:
	// reductions use the compute type, not a narrower output type.
	DisallowReducedPrecisionReduction Math = 16
)

// DataType is a cudaDataType (library_types.h): the element type of a
// matrix in the Ex routines.
type DataType int32

const (
	R16F    DataType = 2  // half
	C16F    DataType = 6  // complex half
	R16BF   DataType = 14 // bfloat16
	C16BF   DataType = 15
	R32F    DataType = 0 // float
	C32F    DataType = 4
	R64F    DataType = 1 // double
	C64F    DataType = 5
	R4I     DataType = 16
	C4I     DataType = 17
	R4U     DataType = 18
	C4U     DataType = 19
	R8I     DataType = 3 // int8
	C8I     DataType = 7
	R8U     DataType = 8 // uint8
	C8U     DataType = 9
	R16I    DataType = 20
	C16I    DataType = 21
	R16U    DataType = 22
	C16U    DataType = 23
	R32I    DataType = 10 // int32
	C32I    DataType = 11
	R32U    DataType = 12
	C32U    DataType = 13
	R64I    DataType = 24
	C64I    DataType = 25
	R64U    DataType = 26
	C64U    DataType = 27
	R8FE4M3 DataType = 28 // fp8 e4m3
	R8FE5M2 DataType = 29 // fp8 e5m2
)

// ComputeType is a cublasComputeType_t: the precision of the arithmetic.
// It also decides the type of the alpha and beta scalars (see GemmArgs).
type ComputeType int32

const (
	Compute16F               ComputeType = 64 // half
	Compute16FPedantic       ComputeType = 65
	Compute32F               ComputeType = 68 // float
	Compute32FPedantic       ComputeType = 69
	Compute32FFast16F        ComputeType = 74 // float, inputs may be rounded to half
	Compute32FFast16BF       ComputeType = 75 // float, inputs may be rounded to bfloat16
	Compute32FFastTF32       ComputeType = 77 // float, inputs may be rounded to TF32
	Compute32FEmulated16BFx9 ComputeType = 78 // float emulated with BF16 tensor cores (CUDA 12.9+)
	Compute64F               ComputeType = 70 // double
	Compute64FPedantic       ComputeType = 71
	Compute64FEmulatedFixed  ComputeType = 79 // double emulated with fixed point (CUDA 13+)
	Compute32I               ComputeType = 72 // int32
	Compute32IPedantic       ComputeType = 73
)

// scalar is the C type of alpha and beta for a compute type.
type scalar int

const (
	scalarNone scalar = iota
	scalarHalf
	scalarFloat
	scalarDouble
	scalarInt32
	scalarComplexFloat  // cuComplex: two floats in one word
	scalarComplexDouble // cuDoubleComplex: two words each
)

func (c ComputeType) scalar() scalar {
	switch c {
	case Compute16F, Compute16FPedantic:
		return scalarHalf
	case Compute32F, Compute32FPedantic, Compute32FFast16F, Compute32FFast16BF, Compute32FFastTF32, Compute32FEmulated16BFx9:
		return scalarFloat
	case Compute64F, Compute64FPedantic, Compute64FEmulatedFixed:
		return scalarDouble
	case Compute32I, Compute32IPedantic:
		return scalarInt32
	}
	return scalarNone
}

// GemmAlgo is a cublasGemmAlgo_t. Since CUDA 11 cuBLAS picks the algorithm
// itself; GemmDefault is the value to pass.
type GemmAlgo int32

const (
	GemmDefault         GemmAlgo = -1
	GemmDefaultTensorOp GemmAlgo = 99 // deprecated, same as GemmDefault
)
