package cuda

import (
	"fmt"
	"reflect"
	"sync"
	"sync/atomic"
	"unsafe"
)

// HostMemory is page-locked (pinned) host memory: the GPU reads and writes
// it by DMA, so copies to and from it run at full bus speed and the Async
// copies overlap with other work. It is allocated portable, usable with
// every device and context.
//
// HostMemory lives outside the Go heap and must be freed with Free; the
// garbage collector does not reclaim it (a slice from Bytes or HostSlice
// does not keep it alive, so it could not do so safely). After Free those
// slices must not be used.
type HostMemory struct {
	dev   *Device
	ptr   uintptr
	size  int
	freed atomic.Bool
}

// AllocHost allocates n bytes of pinned host memory (cuMemHostAlloc,
// CU_MEMHOSTALLOC_PORTABLE).
func (d *Device) AllocHost(n int) (*HostMemory, error) {
	if n <= 0 {
		return nil, fmt.Errorf("cuda: AllocHost: size %d is not positive: %w", n, ErrInvalidValue)
	}
	h := &HostMemory{dev: d, size: n}
	const portable = 0x01 // CU_MEMHOSTALLOC_PORTABLE
	r := d.call(d.api.cuMemHostAlloc, uintptr(unsafe.Pointer(&h.ptr)), uintptr(n), portable)
	if r != 0 {
		return nil, d.err("cuMemHostAlloc", r)
	}
	pinned.add(h.ptr, n)
	return h, nil
}

// Size returns the size in bytes.
func (h *HostMemory) Size() int { return h.size }

// Bytes returns the memory as a byte slice, or nil after Free.
func (h *HostMemory) Bytes() []byte {
	if h.freed.Load() {
		return nil
	}
	return unsafe.Slice((*byte)(unsafe.Add(unsafe.Pointer(nil), h.ptr)), h.size)
}

// HostSlice returns the memory as a slice of T (as many whole elements as
// fit), or nil after Free or for element types that hold Go pointers.
func HostSlice[T any](h *HostMemory) []T {
	t := reflect.TypeFor[T]()
	if h.freed.Load() || t.Size() == 0 || !pointerFree(t) {
		return nil
	}
	return unsafe.Slice((*T)(unsafe.Add(unsafe.Pointer(nil), h.ptr)), h.size/int(t.Size()))
}

// Free releases the memory (cuMemFreeHost); a second Free returns ErrFreed.
func (h *HostMemory) Free() error {
	if !h.freed.CompareAndSwap(false, true) {
		return fmt.Errorf("cuda: HostMemory.Free: %w (double free)", ErrFreed)
	}
	pinned.remove(h.ptr)
	return h.dev.err("cuMemFreeHost", h.dev.call(h.dev.api.cuMemFreeHost, h.ptr))
}

// Pinned reports whether s lies in pinned memory that AllocHost returned
// (and Free has not released). A device-to-host copy into other memory is
// synchronous even in its Async form: the driver returns when it is done.
func Pinned[T any](s []T) bool {
	if len(s) == 0 {
		return false
	}
	p := uintptr(unsafe.Pointer(unsafe.SliceData(s)))
	return pinned.holds(p, len(s)*int(unsafe.Sizeof(s[0])))
}

// pinnedRanges are the live AllocHost allocations, for Pinned. They change
// only at AllocHost and Free, and are read only to report synchronisations.
type pinnedRanges struct {
	mu sync.Mutex
	m  map[uintptr]int // start -> size
}

var pinned pinnedRanges

func (r *pinnedRanges) add(p uintptr, n int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.m == nil {
		r.m = map[uintptr]int{}
	}
	r.m[p] = n
}

func (r *pinnedRanges) remove(p uintptr) {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.m, p)
}

func (r *pinnedRanges) holds(p uintptr, n int) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	for start, size := range r.m {
		if p >= start && p+uintptr(n) <= start+uintptr(size) {
			return true
		}
	}
	return false
}
