package cuda

import "unsafe"

// driverBackend is the allocator's link to the driver. The allocator calls
// it with its lock held, which also guards the event pool.
type driverBackend struct {
	d      *Device
	events []uintptr // idle events, recorded again on demand
}

func (b *driverBackend) malloc(size int64) (uintptr, error) {
	d := b.d
	var p uint64
	if r := d.call(d.api.cuMemAlloc, uintptr(unsafe.Pointer(&p)), uintptr(size)); r != 0 {
		return 0, d.err("cuMemAlloc_v2", r)
	}
	return uintptr(p), nil
}

func (b *driverBackend) free(ptr uintptr) error {
	return b.d.err("cuMemFree_v2", b.d.call(b.d.api.cuMemFree, ptr))
}

func (b *driverBackend) record(stream uintptr) (uintptr, error) {
	d := b.d
	var ev uintptr
	if n := len(b.events); n > 0 {
		ev = b.events[n-1]
		b.events = b.events[:n-1]
	} else {
		const disableTiming = 0x2 // CU_EVENT_DISABLE_TIMING
		if r := d.call(d.api.cuEventCreate, uintptr(unsafe.Pointer(&ev)), disableTiming); r != 0 {
			return 0, d.err("cuEventCreate", r)
		}
	}
	if r := d.call(d.api.cuEventRecord, ev, stream); r != 0 {
		b.events = append(b.events, ev)
		return 0, d.err("cuEventRecord", r)
	}
	return ev, nil
}

func (b *driverBackend) done(ev uintptr) (bool, error) {
	switch r := b.d.call(b.d.api.cuEventQuery, ev); r {
	case 0:
		return true, nil
	case 600: // CUDA_ERROR_NOT_READY
		return false, nil
	default:
		return false, b.d.err("cuEventQuery", r)
	}
}

func (b *driverBackend) release(ev uintptr) { b.events = append(b.events, ev) }

func (b *driverBackend) sync() error {
	return b.d.err("cuCtxSynchronize", b.d.call(b.d.api.cuCtxSynchronize))
}
