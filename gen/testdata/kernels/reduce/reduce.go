// Package reduce sums a float32 slice: a tree in shared memory, then warp
// shuffles, then one atomic per block.
package reduce

import "github.com/gocu-dev/gocu/kernel"

// Block is the number of threads per block Sum expects.
const Block = 256

// Sum adds x into out[0] (which must start at 0).
//
//gocu:kernel
//gocu:launch_bounds 256
func Sum(t *kernel.Thread, x, out []float32) {
	buf := kernel.Shared[[Block]float32](t)
	tid := t.ThreadIdx.X
	var acc float32
	for i := t.Index(); i < int32(len(x)); i += t.Stride() {
		acc += x[i]
	}
	buf[tid] = acc
	t.SyncThreads()
	for s := int32(Block / 2); s >= kernel.WarpSize; s >>= 1 {
		if tid < s {
			buf[tid] += buf[tid+s]
		}
		t.SyncThreads()
	}
	if tid < kernel.WarpSize {
		v := warpSum(t, buf[tid])
		if t.LaneID() == 0 {
			kernel.AtomicAdd(&out[0], v)
		}
	}
}

// warpSum adds v over the 32 lanes of a warp.
func warpSum(t *kernel.Thread, v float32) float32 {
	for off := int32(16); off > 0; off /= 2 {
		v += kernel.ShflDown(t, kernel.FullMask, v, off)
	}
	return v
}

// MaxAbs stores the largest |x[i]| into out[0] with a float atomic, and the
// count of negative elements into neg[0].
//
//gocu:kernel
func MaxAbs(t *kernel.Thread, x, out []float32, neg []uint32) {
	i := t.Index()
	if i >= int32(len(x)) {
		return
	}
	v := x[i]
	kernel.AtomicMax(&out[0], kernel.Abs(v))
	ballot := t.Ballot(kernel.FullMask, v < 0)
	if t.LaneID() == 0 {
		kernel.AtomicAdd(&neg[0], uint32(popcount(ballot)))
	}
}

func popcount(x uint32) int {
	n := 0
	for x != 0 {
		x &= x - 1
		n++
	}
	return n
}
