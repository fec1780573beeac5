package cuda

import (
	"fmt"
	"reflect"
	"unsafe"
)

type direction uint8

const (
	dirIn direction = 1 << iota
	dirOut
)

// HostArg is a host slice passed to Function.Call: it is copied to a
// temporary device buffer before the launch (In, InOut) and back after it
// (Out, InOut), and the kernel receives the buffer's device pointer.
type HostArg struct {
	ptr   unsafe.Pointer
	bytes int
	dir   direction
	typ   string
	err   error
}

// In passes s to Function.Call as input: copied to the device before the
// launch.
func In[T any](s []T) *HostArg { return hostArg(s, dirIn) }

// Out passes s to Function.Call as output: the kernel's buffer (not
// initialised) is copied back into s after the launch.
func Out[T any](s []T) *HostArg { return hostArg(s, dirOut) }

// InOut passes s to Function.Call as input and output.
func InOut[T any](s []T) *HostArg { return hostArg(s, dirIn|dirOut) }

func hostArg[T any](s []T, dir direction) *HostArg {
	t := reflect.TypeFor[T]()
	h := &HostArg{ptr: unsafe.Pointer(unsafe.SliceData(s)), bytes: len(s) * int(t.Size()), dir: dir, typ: "[]" + t.String()}
	if !pointerFree(t) {
		h.err = fmt.Errorf("elements of type %v hold Go pointers, which cannot be copied to the device", t)
	}
	return h
}
