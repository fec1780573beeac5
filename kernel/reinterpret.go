package kernel

import (
	"fmt"
	"unsafe"
)

// Reinterpret views the memory of s as elements of type To, without copying:
// a []uint8 of 4n bytes becomes a []uint32 of n words, or a []float32 of 4n
// floats becomes a []Float4 of n vectors. It is how a kernel asks for wide
// loads and stores. The byte length of s must be a multiple of the size of
// To, and s must start at an address aligned for To as the GPU requires it
// (the vector types Float2, Float4, Int4, Uint4 and Uchar4 are aligned to
// their size, as CUDA's float2, float4, int4, uint4 and uchar4 are). A
// violation panics with a *Fault, which the simulator reports as an error at
// the call. In CUDA it becomes a pointer cast.
func Reinterpret[To, From any](s []From) []To {
	var to To
	var from From
	tsize, fsize := unsafe.Sizeof(to), unsafe.Sizeof(from)
	if tsize == 0 || fsize == 0 {
		panic(&Fault{Op: "Reinterpret", Msg: fmt.Sprintf("zero-sized element type (%T to %T)", from, to)})
	}
	bytes := uintptr(len(s)) * fsize
	if bytes%tsize != 0 {
		panic(&Fault{Op: "Reinterpret", Msg: fmt.Sprintf("%d bytes of %T are not a whole number of %T (%d bytes each)", bytes, from, to, tsize)})
	}
	if len(s) == 0 {
		return nil
	}
	p := unsafe.Pointer(unsafe.SliceData(s))
	if a := gpuAlign[To](); uintptr(p)%a != 0 {
		panic(&Fault{Op: "Reinterpret", Msg: fmt.Sprintf("%T data at %#x is not %d-byte aligned for %T (a misaligned address on the GPU)", from, uintptr(p), a, to)})
	}
	return unsafe.Slice((*To)(p), bytes/tsize)
}

// gpuAlign returns the alignment CUDA requires for T: the size for the
// vector types, whose Go alignment is that of their fields, and Go's
// alignment otherwise.
func gpuAlign[T any]() uintptr {
	var v T
	switch any(v).(type) {
	case Float2, Float4, Int4, Uint4, Uchar4, Half2, BFloat16x2, Half8, BFloat16x8:
		return unsafe.Sizeof(v)
	}
	return unsafe.Alignof(v)
}
