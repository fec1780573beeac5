package kernel

// WarpSize is the number of lanes in a warp on every NVIDIA GPU.
const WarpSize = 32

// FullMask names all 32 lanes of a warp in the mask argument of the warp
// operations.
const FullMask uint32 = 0xffffffff

// Dim3 is a size or a position in up to three dimensions, like CUDA's dim3.
// Kernel code reads positions as int32, the width of CUDA's built-in
// variables, so that index arithmetic translates one to one.
type Dim3 struct{ X, Y, Z int32 }

// Size returns X*Y*Z as an int, treating a zero component as zero.
func (d Dim3) Size() int { return int(d.X) * int(d.Y) * int(d.Z) }

// Thread is the position of one GPU thread in its grid. It is the first
// parameter of every kernel. The fields become CUDA's threadIdx, blockIdx,
// blockDim and gridDim.
type Thread struct {
	ThreadIdx Dim3
	BlockIdx  Dim3
	BlockDim  Dim3
	GridDim   Dim3

	ex Executor
}

// Index returns the usual global 1-D index,
// BlockIdx.X*BlockDim.X + ThreadIdx.X.
//
// Indices are int32, as CUDA's built-in variables are, because 32-bit
// index arithmetic is what the GPU does fastest; len is Go's int, 64 bits.
// Compare an index with a length by converting the length,
//
//	if i := t.Index(); i < int32(len(x)) {
//
// which is exact for every slice a launch can index with int32 (fewer than
// 2^31 elements), or widen the index, int(i) < len(x), past that.
func (t *Thread) Index() int32 { return t.BlockIdx.X*t.BlockDim.X + t.ThreadIdx.X }

// Index2D returns the global 2-D index (x, y): x counts columns,
// y counts rows.
func (t *Thread) Index2D() (x, y int32) {
	return t.BlockIdx.X*t.BlockDim.X + t.ThreadIdx.X, t.BlockIdx.Y*t.BlockDim.Y + t.ThreadIdx.Y
}

// Stride returns the number of threads in the grid along X,
// BlockDim.X*GridDim.X, the step of a grid-stride loop:
//
//	for i := t.Index(); i < n; i += t.Stride() { ... }
func (t *Thread) Stride() int32 { return t.BlockDim.X * t.GridDim.X }

// Stride2D returns the number of threads in the grid along X and along Y.
func (t *Thread) Stride2D() (x, y int32) {
	return t.BlockDim.X * t.GridDim.X, t.BlockDim.Y * t.GridDim.Y
}

// Rank returns the thread's linear index within its block:
// ThreadIdx.X + ThreadIdx.Y*BlockDim.X + ThreadIdx.Z*BlockDim.X*BlockDim.Y.
func (t *Thread) Rank() int32 {
	return t.ThreadIdx.X + t.ThreadIdx.Y*t.BlockDim.X + t.ThreadIdx.Z*t.BlockDim.X*t.BlockDim.Y
}

// LaneID returns the thread's lane within its warp, Rank() % 32.
func (t *Thread) LaneID() int32 { return t.Rank() % WarpSize }

// WarpID returns the index of the thread's warp within its block,
// Rank() / 32.
func (t *Thread) WarpID() int32 { return t.Rank() / WarpSize }

// SyncThreads waits until every thread of the block has reached this call,
// and makes shared and global memory writes made before it visible to the
// block (CUDA __syncthreads). Every thread of the block must reach the same
// SyncThreads; the simulator reports a divergent barrier otherwise.
func (t *Thread) SyncThreads() { t.exec("SyncThreads").Barrier(t, SyncPlain, false) }

// SyncThreadsCount is SyncThreads that also returns how many threads of the
// block passed pred true (CUDA __syncthreads_count).
func (t *Thread) SyncThreadsCount(pred bool) int32 {
	return t.exec("SyncThreadsCount").Barrier(t, SyncCount, pred)
}

// SyncThreadsAnd is SyncThreads that also returns whether pred was true in
// every thread of the block (CUDA __syncthreads_and).
func (t *Thread) SyncThreadsAnd(pred bool) bool {
	return t.exec("SyncThreadsAnd").Barrier(t, SyncAnd, pred) != 0
}

// SyncThreadsOr is SyncThreads that also returns whether pred was true in
// any thread of the block (CUDA __syncthreads_or).
func (t *Thread) SyncThreadsOr(pred bool) bool {
	return t.exec("SyncThreadsOr").Barrier(t, SyncOr, pred) != 0
}

// SyncWarp waits until the lanes named in mask have reached this call
// (CUDA __syncwarp).
func (t *Thread) SyncWarp(mask uint32) { t.exec("SyncWarp").Warp(t, WarpSync, mask, 0, 0) }

// ThreadFence orders this thread's writes to global memory before its later
// writes, as seen by every other thread of the grid (CUDA __threadfence).
// The simulator executes memory operations in program order, so it only
// marks the point; the translator emits the fence.
func (t *Thread) ThreadFence() {}

func (t *Thread) exec(op string) Executor {
	if t.ex == nil {
		panic(noExecutor(op))
	}
	return t.ex
}
