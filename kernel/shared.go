package kernel

import (
	"reflect"
	"unsafe"
)

// Shared returns the block's static shared-memory array of type A, which
// must be an array type such as [256]float32 or [16][16]float32, or a
// struct of plain values:
//
//	tile := kernel.Shared[[16][16]float32](t)
//	tile[ty][tx] = a[row*n+col]
//
// The result is a pointer, so methods with pointer receivers work on it:
// with type Tile [32][33]float32 and func (m *Tile) Transpose(t *Thread),
// kernel.Shared[Tile](t).Transpose(t) transposes the block's tile in place.
//
// Every thread of a block gets the same array; each call site is its own
// allocation, in the order the calls run (two declarations on one line are
// two arrays). It becomes a __shared__ array declaration in CUDA. Like CUDA
// shared memory, its initial contents are undefined: the simulator fills it
// with a poison pattern so that reading before writing shows up.
func Shared[A any](t *Thread) *A {
	return (*A)(t.exec("Shared").Shared(t, SharedDecl{Type: reflect.TypeFor[A]()}))
}

// DynamicShared returns the block's dynamic shared memory, sized in bytes at
// launch, as a slice of T (CUDA extern __shared__). Its length is the launch's
// dynamic shared bytes divided by the size of T.
func DynamicShared[T Number](t *Thread) []T {
	b := t.exec("DynamicShared").DynamicShared(t)
	var zero T
	n := uintptr(len(b)) / unsafe.Sizeof(zero)
	if n == 0 {
		return nil
	}
	return unsafe.Slice((*T)(unsafe.Pointer(unsafe.SliceData(b))), n)
}
