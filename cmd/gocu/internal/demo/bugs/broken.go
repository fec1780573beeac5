package bugs

import "github.com/gocu-dev/gocu/kernel"

// The kernels in this file are wrong on purpose: each keeps a classic GPU
// bug, so that the simulator's report of it can be seen and tested. The
// "want:" comments mark the lines the reports name.

// AddOffByOne is c = a + b with the guard off by one: thread n indexes one
// past the end of a, b and c (all n long).
//
//gocu:kernel
func AddOffByOne(t *kernel.Thread, a, b, c []float32, n int32) {
	i := t.Index()
	if i <= n { // should be i < n
		c[i] = a[i] + b[i] // want: out of range
	}
}

// TiledMatMulNoSync is TiledMatMul without the barrier at the end of each
// phase: a fast thread overwrites a tile with the next phase's values while
// slower threads of its block still read the current ones.
//
//gocu:kernel
func TiledMatMulNoSync(t *kernel.Thread, a, b, c []float32, m, n, k int32) {
	as := kernel.Shared[[Tile][Tile]float32](t)
	bs := kernel.Shared[[Tile][Tile]float32](t)
	tx, ty := t.ThreadIdx.X, t.ThreadIdx.Y
	row, col := t.BlockIdx.Y*Tile+ty, t.BlockIdx.X*Tile+tx
	var sum float32
	for p := int32(0); p < k; p += Tile {
		if row < m && p+tx < k {
			as[ty][tx] = a[row*k+p+tx] // want: race write
		} else {
			as[ty][tx] = 0 // want: race write
		}
		if col < n && p+ty < k {
			bs[ty][tx] = b[(p+ty)*n+col] // want: race write
		} else {
			bs[ty][tx] = 0 // want: race write
		}
		t.SyncThreads()
		for i := range Tile {
			sum += as[ty][i] * bs[i][tx] // want: race read
		}
		// The second t.SyncThreads() of TiledMatMul is missing here.
	}
	if row < m && col < n {
		c[row*n+col] = sum
	}
}

// BlockSumDivergent is a shared-memory tree sum of each block's elements of
// x into partial[BlockIdx.X], with the barrier inside the branch that only
// the lower half of the active threads takes: the other threads go round
// the loop and return while the first ones wait for them. Blocks must have
// 256 threads.
//
//gocu:kernel
func BlockSumDivergent(t *kernel.Thread, x, partial []float32, n int32) {
	s := kernel.Shared[[256]float32](t)
	tid, i := t.ThreadIdx.X, t.Index()
	var v float32
	if i < n {
		v = x[i]
	}
	s[tid] = v
	t.SyncThreads() // want: last barrier
	for stride := t.BlockDim.X / 2; stride > 0; stride /= 2 {
		if tid < stride {
			s[tid] += s[tid+stride]
			t.SyncThreads() // want: divergent barrier
		}
	}
	if tid == 0 {
		partial[t.BlockIdx.X] = s[0]
	}
}
