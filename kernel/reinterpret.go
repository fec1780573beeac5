package kernel

import (
	"fmt"
	"unsafe"
)

// Reinterpret views the memory of s as elements of type To, without copying:
// a []uint8 of 4n bytes becomes a []uint32 of n words, or a []float32 of 4n
// floats becomes a []Float4 of n vectors. It is how a kernel asks for wide
// loads and stores. The byte length of s must be a multiple of the size of
// To, and s must start at an address aligned for To, as the GPU requires; the
// simulator reports a violation as an error at the call. In CUDA it becomes a
// pointer cast.
func Reinterpret[To, From any](s []From) []To {
	var to To
	var from From
	tsize, fsize := unsafe.Sizeof(to), unsafe.Sizeof(from)
	if tsize == 0 || fsize == 0 {
		panic(fmt.Sprintf("kernel.Reinterpret: zero-sized element type (%T to %T)", from, to))
	}
	bytes := uintptr(len(s)) * fsize
	if bytes%tsize != 0 {
		panic(fmt.Sprintf("kernel.Reinterpret: %d bytes of %T are not a whole number of %T (%d bytes each)", bytes, from, to, tsize))
	}
	if len(s) == 0 {
		return nil
	}
	p := unsafe.Pointer(unsafe.SliceData(s))
	if a := unsafe.Alignof(to); uintptr(p)%a != 0 {
		panic(fmt.Sprintf("kernel.Reinterpret: %T data is not %d-byte aligned for %T (misaligned address on the GPU)", from, a, to))
	}
	return unsafe.Slice((*To)(p), bytes/tsize)
}
