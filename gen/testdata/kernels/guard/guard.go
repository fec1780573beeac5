// Package guard holds kernels with deliberate bugs that the checked twins
// and the debug build must catch.
package guard

import "github.com/gocu-dev/gocu/kernel"

// OffByOne scales x into y with a guard that lets thread n through.
//
//gocu:kernel
func OffByOne(t *kernel.Thread, x, y []float32, n int32) {
	i := t.Index()
	if i <= n {
		y[i] = 2 * x[i]
	}
}

// Transpose2 writes a tile transposed through shared memory with an
// off-by-one in the row index of the tile.
//
//gocu:kernel
func Transpose2(t *kernel.Thread, x, y []float32) {
	tile := kernel.Shared[[4][4]float32](t)
	tx, ty := t.ThreadIdx.X, t.ThreadIdx.Y
	tile[ty+1][tx] = x[ty*4+tx]
	t.SyncThreads()
	y[tx*4+ty] = tile[ty][tx]
}

// Spin never returns in thread 3: the simulator must stop it at its time
// budget, and the checked twin at the loop's back-edge.
//
//gocu:kernel
func Spin(t *kernel.Thread, x []float32) {
	if t.ThreadIdx.X == 3 {
		for {
			x[0]++
		}
	}
}
