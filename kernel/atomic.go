package kernel

import (
	"sync/atomic"
	"unsafe"
)

// The atomic functions update *p atomically with respect to every other
// thread of the grid and return the old value. They become CUDA's atomicAdd,
// atomicSub, atomicMax, atomicMin, atomicExch and atomicCAS; p is the address
// of a slice or shared-array element, such as &hist[bin]. Atomic accesses
// never count as a data race.

// AtomicAdd adds v to *p and returns the old value (CUDA atomicAdd).
func AtomicAdd[T Word](p *T, v T) T {
	return rmw(p, func(old T) T { return old + v })
}

// AtomicSub subtracts v from *p and returns the old value (CUDA atomicSub;
// floats become atomicAdd of -v).
func AtomicSub[T Word](p *T, v T) T {
	return rmw(p, func(old T) T { return old - v })
}

// AtomicMax stores max(*p, v) and returns the old value (CUDA atomicMax).
// For floats a NaN operand is ignored, as in fmaxf.
func AtomicMax[T Word](p *T, v T) T {
	return rmw(p, func(old T) T {
		if v > old || old != old {
			return v
		}
		return old
	})
}

// AtomicMin stores min(*p, v) and returns the old value (CUDA atomicMin).
// For floats a NaN operand is ignored, as in fminf.
func AtomicMin[T Word](p *T, v T) T {
	return rmw(p, func(old T) T {
		if v < old || old != old {
			return v
		}
		return old
	})
}

// AtomicExch stores v and returns the old value (CUDA atomicExch).
func AtomicExch[T Word](p *T, v T) T {
	return rmw(p, func(T) T { return v })
}

// AtomicCAS stores v if *p equals cmp, and returns the old value either way
// (CUDA atomicCAS). Floats are compared by their bits, as the hardware does.
func AtomicCAS[T Word](p *T, cmp, v T) T {
	switch unsafe.Sizeof(*p) {
	case 4:
		a := (*uint32)(unsafe.Pointer(p))
		c, n := *(*uint32)(unsafe.Pointer(&cmp)), *(*uint32)(unsafe.Pointer(&v))
		for {
			old := atomic.LoadUint32(a)
			if old != c {
				return *(*T)(unsafe.Pointer(&old))
			}
			if atomic.CompareAndSwapUint32(a, c, n) {
				return cmp
			}
		}
	default:
		a := (*uint64)(unsafe.Pointer(p))
		c, n := *(*uint64)(unsafe.Pointer(&cmp)), *(*uint64)(unsafe.Pointer(&v))
		for {
			old := atomic.LoadUint64(a)
			if old != c {
				return *(*T)(unsafe.Pointer(&old))
			}
			if atomic.CompareAndSwapUint64(a, c, n) {
				return cmp
			}
		}
	}
}

// rmw applies f atomically with a compare-and-swap loop on the bits of *p.
func rmw[T Word](p *T, f func(T) T) T {
	switch unsafe.Sizeof(*p) {
	case 4:
		a := (*uint32)(unsafe.Pointer(p))
		for {
			ob := atomic.LoadUint32(a)
			old := *(*T)(unsafe.Pointer(&ob))
			nv := f(old)
			nb := *(*uint32)(unsafe.Pointer(&nv))
			if atomic.CompareAndSwapUint32(a, ob, nb) {
				return old
			}
		}
	default:
		a := (*uint64)(unsafe.Pointer(p))
		for {
			ob := atomic.LoadUint64(a)
			old := *(*T)(unsafe.Pointer(&ob))
			nv := f(old)
			nb := *(*uint64)(unsafe.Pointer(&nv))
			if atomic.CompareAndSwapUint64(a, ob, nb) {
				return old
			}
		}
	}
}
