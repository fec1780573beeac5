package lecture

import "github.com/gocu-dev/gocu/kernel"

// Bins is the number of bins of Histogram: one per byte value.
const Bins = 256

// Histogram adds the counts of the byte values of data[0:n] to hist
// (Bins counters). Each block counts into a private histogram in shared
// memory with shared-memory atomics, which are cheap and contend only
// within the block, then adds its non-zero counts to hist with global
// atomics. Any grid and block size work: the loops stride over both.
//
//gocu:kernel
func Histogram(t *kernel.Thread, data []uint8, hist []uint32, n int32) {
	h := kernel.Shared[[Bins]uint32](t)
	for b := t.ThreadIdx.X; b < Bins; b += t.BlockDim.X {
		h[b] = 0
	}
	t.SyncThreads()
	for i := t.Index(); i < n; i += t.Stride() {
		kernel.AtomicAdd(&h[data[i]], 1)
	}
	t.SyncThreads()
	for b := t.ThreadIdx.X; b < Bins; b += t.BlockDim.X {
		if h[b] != 0 {
			kernel.AtomicAdd(&hist[b], h[b])
		}
	}
}
