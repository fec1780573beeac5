// Package matmul holds the lecture's matrix multiplications: naive, tiled
// with static shared memory, and tiled with dynamic shared memory.
package matmul

import "github.com/gocu-dev/gocu/kernel"

// Tile is the side of a shared-memory tile.
const Tile = 16

// Naive computes c = a*b for n x n row-major matrices, one element per
// thread on a 2-D grid.
//
//gocu:kernel
func Naive(t *kernel.Thread, a, b, c []float32, n int32) {
	col, row := t.Index2D()
	if row < n && col < n {
		var sum float32
		for k := int32(0); k < n; k++ {
			sum += a[row*n+k] * b[k*n+col]
		}
		c[row*n+col] = sum
	}
}

// Tiled computes c = a*b with Tile x Tile tiles in static shared memory and
// two barriers per phase.
//
//gocu:kernel
//gocu:launch_bounds 256
func Tiled(t *kernel.Thread, a, b, c []float32, n int32) {
	as, bs := kernel.Shared[[Tile][Tile]float32](t), kernel.Shared[[Tile][Tile]float32](t)
	tx, ty := t.ThreadIdx.X, t.ThreadIdx.Y
	row := t.BlockIdx.Y*Tile + ty
	col := t.BlockIdx.X*Tile + tx
	var sum float32
	for ph := int32(0); ph < (n+Tile-1)/Tile; ph++ {
		as[ty][tx] = load(a, row, ph*Tile+tx, n)
		bs[ty][tx] = load(b, ph*Tile+ty, col, n)
		t.SyncThreads()
		for k := range Tile {
			sum += as[ty][k] * bs[k][tx]
		}
		t.SyncThreads()
	}
	if row < n && col < n {
		c[row*n+col] = sum
	}
}

// load returns m[r][c] of an n x n matrix, or 0 outside it.
func load(m []float32, r, c, n int32) float32 {
	if r < n && c < n {
		return m[r*n+c]
	}
	return 0
}

// TiledDynamic is Tiled with both tiles in dynamic shared memory, whose
// size (2*tile*tile*4 bytes) is chosen at launch.
//
//gocu:kernel
func TiledDynamic(t *kernel.Thread, a, b, c []float32, n, tile int32) {
	smem := kernel.DynamicShared[float32](t)
	as := smem[:tile*tile]
	bs := smem[tile*tile:]
	tx, ty := t.ThreadIdx.X, t.ThreadIdx.Y
	row := t.BlockIdx.Y*tile + ty
	col := t.BlockIdx.X*tile + tx
	var sum float32
	for ph := int32(0); ph < (n+tile-1)/tile; ph++ {
		as[ty*tile+tx] = load(a, row, ph*tile+tx, n)
		bs[ty*tile+tx] = load(b, ph*tile+ty, col, n)
		t.SyncThreads()
		for k := int32(0); k < tile; k++ {
			sum += as[ty*tile+k] * bs[k*tile+tx]
		}
		t.SyncThreads()
	}
	if row < n && col < n {
		c[row*n+col] = sum
	}
}
