//go:build linux && amd64

package cuda

import "unsafe"

// haveCtxTrampoline: frame.ctxCall runs the context check and the driver
// call in one cgo call (ctxcall_amd64.s) instead of two purego calls: a
// purego call copies 32 argument words twice and takes a pooled block,
// about 70 ns on the development machine against about 27 ns for the
// trampoline's cgo call, and launch overhead is a headline number.
const haveCtxTrampoline = true

// runtime.cgocall runs a C-ABI function on the system stack; purego reaches
// it the same way (the runtime keeps the symbol for it).
//
//go:linkname runtime_cgocall runtime.cgocall
func runtime_cgocall(fn uintptr, arg unsafe.Pointer) int32

// ctxTrampolineABI0 is the address of the assembly trampoline.
var ctxTrampolineABI0 uintptr

// ctxTrampoline runs the trampoline on b (in frame memory, off the heap).
func ctxTrampoline(b *ctxBlock) {
	runtime_cgocall(ctxTrampolineABI0, unsafe.Pointer(b))
}
