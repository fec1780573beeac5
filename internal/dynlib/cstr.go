package dynlib

import "unsafe"

// CString returns a NUL-terminated copy of s on the Go heap.
//
// It is not inlined so that the buffer always escapes to the heap: callers
// store its address in integer form (argument arrays passed to C), which
// escape analysis cannot see, and only heap memory is guaranteed not to move.
// Callers keep the returned pointer alive (runtime.KeepAlive) until C is done.
//
//go:noinline
func CString(s string) *byte {
	b := make([]byte, len(s)+1)
	copy(b, s)
	return &b[0]
}

// GoString copies the NUL-terminated C string at p into a Go string.
func GoString(p *byte) string {
	if p == nil {
		return ""
	}
	n := 0
	for *(*byte)(unsafe.Add(unsafe.Pointer(p), n)) != 0 {
		n++
	}
	return string(unsafe.Slice(p, n))
}

// PtrAt reinterprets an address returned by C (a const char*, say) as a
// pointer without the uintptr-to-pointer conversion go vet rightly distrusts:
// the address points outside the Go heap, so the GC ignores it.
func PtrAt(addr uintptr) *byte {
	return *(**byte)(unsafe.Pointer(&addr))
}
