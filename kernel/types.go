package kernel

// Number is the set of element types kernels compute with.
type Number interface {
	~int8 | ~int16 | ~int32 | ~int64 | ~int |
		~uint8 | ~uint16 | ~uint32 | ~uint64 | ~uint |
		~float32 | ~float64
}

// Float is the set of floating-point element types: the constraint of a
// generic kernel such as
//
//	//gocu:kernel
//	func Axpy[T kernel.Float](t *kernel.Thread, a T, x, y []T)
//
// which gocu gen compiles once for float32 and once for float64.
type Float interface {
	~float32 | ~float64
}

// Integer is the set of integer element types.
type Integer interface {
	~int8 | ~int16 | ~int32 | ~int64 | ~int |
		~uint8 | ~uint16 | ~uint32 | ~uint64 | ~uint
}

// Word is the set of types warp shuffles and atomics work on: 32- and 64-bit
// integers and floats.
type Word interface {
	~int32 | ~uint32 | ~int64 | ~uint64 | ~float32 | ~float64
}

// Float2 is two float32s loaded or stored together (CUDA float2, 8-byte aligned).
type Float2 struct{ X, Y float32 }

// Float4 is four float32s loaded or stored together in one 16-byte access
// (CUDA float4). Use it with Reinterpret to vectorise memory access.
type Float4 struct{ X, Y, Z, W float32 }

// Int4 is four int32s moved in one 16-byte access (CUDA int4).
type Int4 struct{ X, Y, Z, W int32 }

// Uint4 is four uint32s moved in one 16-byte access (CUDA uint4).
type Uint4 struct{ X, Y, Z, W uint32 }

// Uchar4 is four bytes moved in one 4-byte access (CUDA uchar4).
type Uchar4 struct{ X, Y, Z, W uint8 }
