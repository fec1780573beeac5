package main

//go:generate go tool gocu-gen

import (
	"github.com/gocu-dev/gocu/internal/lecture"
	"github.com/gocu-dev/gocu/kernel"
)

// Tile is the side of the tiles, and of the blocks.
const Tile = lecture.Tile

// TiledMatMulNoSync is lecture.TiledMatMul without the barrier at the end
// of each phase: a fast thread overwrites a tile with the next phase's
// values while slower threads of its block still read the current ones.
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
		// The second t.SyncThreads() of lecture.TiledMatMul is missing here.
	}
	if row < m && col < n {
		c[row*n+col] = sum
	}
}
