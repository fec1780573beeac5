package lecture

import "github.com/gocu-dev/gocu/kernel"

// The matrices are row-major float32: a is m x k, b is k x n and c = a b is
// m x n.

// MatMul is the naive product: one thread per element of c on a 2-D grid,
// x for columns and y for rows, each reading a row of a and a column of b
// from global memory.
//
//gocu:kernel
func MatMul(t *kernel.Thread, a, b, c []float32, m, n, k int32) {
	col, row := t.Index2D()
	if row < m && col < n {
		var sum float32
		for i := range k {
			sum += a[row*k+i] * b[i*n+col]
		}
		c[row*n+col] = sum
	}
}

// Tile is the tile width of TiledMatMul: it runs on Tile x Tile blocks.
const Tile = 16

// TiledMatMul computes c = a b in Tile x Tile tiles staged in static shared
// memory: each phase loads one tile of a and one of b (zero past the
// edges), waits for the whole block, multiplies the tiles and waits again
// before the next phase overwrites them. Launch it with Tile x Tile blocks
// covering c.
//
//gocu:kernel
func TiledMatMul(t *kernel.Thread, a, b, c []float32, m, n, k int32) {
	as := kernel.Shared[[Tile][Tile]float32](t)
	bs := kernel.Shared[[Tile][Tile]float32](t)
	tx, ty := t.ThreadIdx.X, t.ThreadIdx.Y
	row, col := t.BlockIdx.Y*Tile+ty, t.BlockIdx.X*Tile+tx
	var sum float32
	for p := int32(0); p < k; p += Tile {
		if row < m && p+tx < k {
			as[ty][tx] = a[row*k+p+tx]
		} else {
			as[ty][tx] = 0
		}
		if col < n && p+ty < k {
			bs[ty][tx] = b[(p+ty)*n+col]
		} else {
			bs[ty][tx] = 0
		}
		t.SyncThreads()
		for i := range Tile {
			sum += as[ty][i] * bs[i][tx]
		}
		t.SyncThreads()
	}
	if row < m && col < n {
		c[row*n+col] = sum
	}
}

// TiledMatMulDynamic is TiledMatMul with the tile width taken from the
// block (square blocks of any width w) and the two w x w tiles in dynamic
// shared memory: launch it with 2*w*w*4 bytes of it.
//
//gocu:kernel
func TiledMatMulDynamic(t *kernel.Thread, a, b, c []float32, m, n, k int32) {
	sm := kernel.DynamicShared[float32](t)
	w := t.BlockDim.X
	tx, ty := t.ThreadIdx.X, t.ThreadIdx.Y
	row, col := t.BlockIdx.Y*w+ty, t.BlockIdx.X*w+tx
	as, bs := ty*w+tx, w*w+ty*w+tx // this thread's elements of the two tiles
	var sum float32
	for p := int32(0); p < k; p += w {
		if row < m && p+tx < k {
			sm[as] = a[row*k+p+tx]
		} else {
			sm[as] = 0
		}
		if col < n && p+ty < k {
			sm[bs] = b[(p+ty)*n+col]
		} else {
			sm[bs] = 0
		}
		t.SyncThreads()
		for i := range w {
			sum += sm[ty*w+i] * sm[w*w+i*w+tx]
		}
		t.SyncThreads()
	}
	if row < m && col < n {
		c[row*n+col] = sum
	}
}
