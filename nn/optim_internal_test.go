package nn

import (
	"testing"
	"unsafe"
)

// The Go tensor list must have the C struct's layout: five arrays of
// 8-byte fields and one of ints.
func TestTensorListLayout(t *testing.T) {
	var l tensorList
	if s := unsafe.Sizeof(l); s != 5*8*maxTensors+4*maxTensors {
		t.Fatalf("sizeof(tensorList) = %d", s)
	}
	if o := unsafe.Offsetof(l.N); o != 4*8*maxTensors {
		t.Fatalf("offset of N = %d", o)
	}
	if o := unsafe.Offsetof(l.First); o != 5*8*maxTensors {
		t.Fatalf("offset of First = %d", o)
	}
}
