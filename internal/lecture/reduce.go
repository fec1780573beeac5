package lecture

import "github.com/gocu-dev/gocu/kernel"

// Sum adds x[0:n] into one partial sum per block, partial[BlockIdx.X]: each
// thread adds its elements of a grid-stride loop, each warp adds its 32
// values with shuffles, the warps' sums meet in shared memory and the first
// warp adds them. A second launch of one block over the partial sums gives
// the total. Blocks must be a multiple of 32 threads.
//
//gocu:kernel
func Sum(t *kernel.Thread, x, partial []float32, n int32) {
	warpSums := kernel.Shared[[32]float32](t)
	var v float32
	for i := t.Index(); i < n; i += t.Stride() {
		v += x[i]
	}
	v = warpSum(t, v)
	lane, warp := t.LaneID(), t.WarpID()
	if lane == 0 {
		warpSums[warp] = v
	}
	t.SyncThreads()
	if warp == 0 {
		v = 0
		if lane < t.BlockDim.X/kernel.WarpSize {
			v = warpSums[lane]
		}
		v = warpSum(t, v)
		if lane == 0 {
			partial[t.BlockIdx.X] = v
		}
	}
}

// warpSum returns the sum of v over the 32 lanes of the warp in lane 0
// (the other lanes get partial sums): a tree of shuffles down.
func warpSum(t *kernel.Thread, v float32) float32 {
	for offset := int32(16); offset > 0; offset /= 2 {
		v += kernel.ShflDown(t, kernel.FullMask, v, offset)
	}
	return v
}
