package cuda

import (
	"fmt"
	"reflect"
	"sync"
	"unsafe"
)

// DevicePtr is a device address (CUdeviceptr). As a kernel argument it is
// passed as an 8-byte pointer.
type DevicePtr uint64

// Raw passes a value by its bytes, for by-value structs and anything else
// packArgs does not know. Align is the alignment of the C type (1 if 0).
// Value builds a Raw from a Go value.
type Raw struct {
	Bytes []byte
	Align int
}

// Value returns the bytes of v, a struct or array of fixed-size fields, as
// a by-value kernel argument. The Go layout must match the C struct: use
// int32 for C int, int64 for long long, float32, float64, DevicePtr for
// pointers. It returns an *ArgError for types that have no C counterpart
// (Go int, pointers, slices, strings, ...).
func Value[T any](v T) (Raw, error) {
	t := reflect.TypeFor[T]()
	if reason := cLayout(t); reason != "" {
		return Raw{}, &ArgError{Index: -1, Type: t.String(), Reason: reason}
	}
	b := make([]byte, t.Size())
	if len(b) > 0 {
		copy(b, unsafe.Slice((*byte)(unsafe.Pointer(&v)), len(b)))
	}
	return Raw{Bytes: b, Align: t.Align()}, nil
}

// errFrameFull reports that the arguments need a bigger frame.
var errFrameFull = &ArgError{Reason: "too large"}

// reserve returns the offset of size bytes aligned to align in f.vals, or
// -1 when they do not fit.
func (f *frame) reserve(size, align int) int {
	off := (f.nval + align - 1) &^ (align - 1)
	if off+size > len(f.vals) || f.nparam >= len(f.params) {
		return -1
	}
	f.nval = off + size
	f.params[f.nparam] = uintptr(unsafe.Pointer(&f.vals[off]))
	f.nparam++
	return off
}

// packWords lays out 8-byte kernel parameters (LaunchWords); false when
// they do not fit the frame.
func (f *frame) packWords(words []uint64) bool {
	n := len(words)
	if n > len(f.params) || 8*n > len(f.vals) {
		f.nparam, f.nval = 0, 0
		return false
	}
	if n > 0 {
		base := unsafe.Pointer(&f.vals[0]) // 16-byte aligned
		for i, w := range words {
			p := unsafe.Add(base, 8*i)
			*(*uint64)(p) = w
			f.params[i] = uintptr(p)
		}
	}
	f.nparam, f.nval = n, 8*n
	return true
}

// packArgs lays out args as kernel parameters: each value in f.vals, at its
// natural alignment, and a pointer to it in f.params. Widths are exact:
// int32 is a C int, int64 a long long, float32 a float, *Memory and
// DevicePtr 8-byte device pointers. Go int and uint are refused (their width
// is not C's). host, if not nil, holds the device pointers that replace the
// In/Out/InOut arguments (only Function.Call has them). The common types take
// a type switch and no allocation.
func (f *frame) packArgs(kernel string, args []any, host []DevicePtr) error {
	f.nparam, f.nval = 0, 0
	for i, a := range args {
		var off int
		switch v := a.(type) {
		case float32:
			if off = f.reserve(4, 4); off >= 0 {
				*(*float32)(unsafe.Pointer(&f.vals[off])) = v
			}
		case int32:
			if off = f.reserve(4, 4); off >= 0 {
				*(*int32)(unsafe.Pointer(&f.vals[off])) = v
			}
		case *Memory:
			if v == nil {
				return &ArgError{Kernel: kernel, Index: i, Type: "*cuda.Memory", Reason: "nil *Memory: pass cuda.DevicePtr(0) for a null pointer"}
			}
			if err := v.check(); err != nil {
				return &ArgError{Kernel: kernel, Index: i, Type: "*cuda.Memory", Reason: "the device memory was freed", Err: err}
			}
			if off = f.reserve(8, 8); off >= 0 {
				*(*uint64)(unsafe.Pointer(&f.vals[off])) = uint64(v.ptr)
			}
		case DevicePtr:
			if off = f.reserve(8, 8); off >= 0 {
				*(*uint64)(unsafe.Pointer(&f.vals[off])) = uint64(v)
			}
		case uint32:
			if off = f.reserve(4, 4); off >= 0 {
				*(*uint32)(unsafe.Pointer(&f.vals[off])) = v
			}
		case int64:
			if off = f.reserve(8, 8); off >= 0 {
				*(*int64)(unsafe.Pointer(&f.vals[off])) = v
			}
		case uint64:
			if off = f.reserve(8, 8); off >= 0 {
				*(*uint64)(unsafe.Pointer(&f.vals[off])) = v
			}
		case float64:
			if off = f.reserve(8, 8); off >= 0 {
				*(*float64)(unsafe.Pointer(&f.vals[off])) = v
			}
		case uintptr:
			if off = f.reserve(8, 8); off >= 0 {
				*(*uint64)(unsafe.Pointer(&f.vals[off])) = uint64(v)
			}
		case int16:
			if off = f.reserve(2, 2); off >= 0 {
				*(*int16)(unsafe.Pointer(&f.vals[off])) = v
			}
		case uint16:
			if off = f.reserve(2, 2); off >= 0 {
				*(*uint16)(unsafe.Pointer(&f.vals[off])) = v
			}
		case int8:
			if off = f.reserve(1, 1); off >= 0 {
				f.vals[off] = byte(v)
			}
		case uint8:
			if off = f.reserve(1, 1); off >= 0 {
				f.vals[off] = v
			}
		case bool:
			if off = f.reserve(1, 1); off >= 0 {
				f.vals[off] = 0
				if v {
					f.vals[off] = 1
				}
			}
		case complex64: // cuFloatComplex: float2, 8-byte aligned
			if off = f.reserve(8, 8); off >= 0 {
				*(*complex64)(unsafe.Pointer(&f.vals[off])) = v
			}
		case complex128: // cuDoubleComplex: double2, 16-byte aligned
			if off = f.reserve(16, 16); off >= 0 {
				*(*complex128)(unsafe.Pointer(&f.vals[off])) = v
			}
		case Raw:
			align := v.Align
			if align <= 0 {
				align = 1
			}
			if align&(align-1) != 0 || align > 256 {
				return &ArgError{Kernel: kernel, Index: i, Type: "cuda.Raw", Reason: fmt.Sprintf("alignment %d is not a power of two up to 256", v.Align)}
			}
			if len(v.Bytes) == 0 {
				return &ArgError{Kernel: kernel, Index: i, Type: "cuda.Raw", Reason: "no bytes"}
			}
			if off = f.reserve(len(v.Bytes), align); off >= 0 {
				copy(f.vals[off:], v.Bytes)
			}
		case *HostArg:
			if host == nil {
				return &ArgError{Kernel: kernel, Index: i, Type: "*cuda.HostArg",
					Reason: "In/Out/InOut arguments copy around a synchronous launch: use Function.Call, not Launch"}
			}
			if off = f.reserve(8, 8); off >= 0 {
				*(*uint64)(unsafe.Pointer(&f.vals[off])) = uint64(host[i])
			}
		case int, uint:
			return &ArgError{Kernel: kernel, Index: i, Type: reflect.TypeOf(a).String(),
				Reason: "Go int and uint are 64 bits wide but C int is 32: pass int32(x) for a C int, or int64(x) for a long long / int64_t (uint32, uint64 for unsigned)"}
		case nil:
			return &ArgError{Kernel: kernel, Index: i, Type: "nil", Reason: "nil argument: pass cuda.DevicePtr(0) for a null pointer"}
		default:
			var err error
			if off, err = f.packOther(kernel, i, a); err != nil {
				return err
			}
		}
		if off < 0 {
			return errFrameFull
		}
	}
	return nil
}

// packOther handles by-value structs and arrays through reflection, and
// explains what to pass instead for everything else.
func (f *frame) packOther(kernel string, i int, a any) (int, error) {
	t := reflect.TypeOf(a)
	if reason := cLayout(t); reason != "" {
		return 0, &ArgError{Kernel: kernel, Index: i, Type: t.String(), Reason: reason}
	}
	size := int(t.Size())
	if size == 0 {
		return 0, &ArgError{Kernel: kernel, Index: i, Type: t.String(), Reason: "zero-size value"}
	}
	off := f.reserve(size, t.Align())
	if off >= 0 {
		// An interface holding a non-pointer value points to a copy of it.
		data := (*[2]unsafe.Pointer)(unsafe.Pointer(&a))[1]
		copy(f.vals[off:off+size], unsafe.Slice((*byte)(data), size))
	}
	return off, nil
}

var layoutCache sync.Map // reflect.Type -> string (empty when the type is fine)

// cLayout returns why t cannot be passed by value to a kernel, or "" when
// its Go layout is a C layout: fixed-width numbers, bools, and structs and
// arrays of them.
func cLayout(t reflect.Type) string {
	if r, ok := layoutCache.Load(t); ok {
		return r.(string)
	}
	r := cLayoutOf(t, t.String())
	layoutCache.Store(t, r)
	return r
}

func cLayoutOf(t reflect.Type, path string) string {
	switch t.Kind() {
	case reflect.Bool, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr,
		reflect.Float32, reflect.Float64, reflect.Complex64, reflect.Complex128:
		return ""
	case reflect.Int, reflect.Uint:
		return fmt.Sprintf("%s is Go %s, 64 bits wide, but C int is 32: use int32 or int64 explicitly", path, t.Kind())
	case reflect.Array:
		return cLayoutOf(t.Elem(), path+"[i]")
	case reflect.Struct:
		for i := range t.NumField() {
			fld := t.Field(i)
			if r := cLayoutOf(fld.Type, path+"."+fld.Name); r != "" {
				return r
			}
		}
		return ""
	case reflect.Slice:
		return fmt.Sprintf("%s is a Go slice, which the GPU cannot read: copy it to device memory (Device.Alloc and CopyHtoD) and pass the *Memory, or wrap it in cuda.In/Out/InOut and use Function.Call", path)
	case reflect.String:
		return fmt.Sprintf("%s is a Go string, which the GPU cannot read: copy its bytes to device memory", path)
	case reflect.Pointer, reflect.UnsafePointer:
		return fmt.Sprintf("%s is a host pointer, which the GPU cannot dereference: pass a *cuda.Memory or cuda.DevicePtr", path)
	default:
		return fmt.Sprintf("%s (a Go %s) has no C counterpart", path, t.Kind())
	}
}
