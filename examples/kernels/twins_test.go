package kernels_test

import (
	"github.com/gocu-dev/gocu/examples/kernels"
	"github.com/gocu-dev/gocu/kernel"
)

// Hand-written checked twins, in exactly the form gocu gen will generate
// them: every element access of a slice or array becomes
//
//	*kernel.At(t, s, int(i), &site, kernel.Read|Write|ReadWrite|Atomic)
//
// and every outer index of a multi-dimensional array kernel.Index(t, int(i),
// n, &site), so that shared tile[y][x] becomes
//
//	*kernel.At(t, tile[kernel.Index(t, int(y), 16, &site)][:], int(x), &site, acc)
//
// Atomics take the address: kernel.AtomicAdd(kernel.At(t, h, int(b), &site,
// kernel.Atomic), 1). Once the translator writes them, these tests can use
// the generated twins instead.

const Tile = kernels.Tile

var grayS = sites("gray.go", "Gray",
	[2]string{"r, g, b :=", "rgb[i]"}, [2]string{"r, g, b :=", "rgb[i+n]"}, [2]string{"r, g, b :=", "rgb[i+2*n]"},
	[2]string{"gray[i] =", "gray[i]"})

func grayChecked(t *kernel.Thread, rgb, gray []uint8, n int32) {
	i := t.Index()
	if i < n {
		r, g, b := float32(*kernel.At(t, rgb, int(i), &grayS[0], kernel.Read)),
			float32(*kernel.At(t, rgb, int(i+n), &grayS[1], kernel.Read)),
			float32(*kernel.At(t, rgb, int(i+2*n), &grayS[2], kernel.Read))
		*kernel.At(t, gray, int(i), &grayS[3], kernel.Write) = uint8(0.2989*r + 0.5870*g + 0.1140*b)
	}
}

var tiledS = sites("matmul.go", "TiledMatMul",
	[2]string{"as[ty][tx] = a[", "as[ty][tx]"}, [2]string{"as[ty][tx] = a[", "a[row*k+p+tx]"},
	[2]string{"as[ty][tx] = 0", "as[ty][tx]"},
	[2]string{"bs[ty][tx] = b[", "bs[ty][tx]"}, [2]string{"bs[ty][tx] = b[", "b[(p+ty)*n+col]"},
	[2]string{"bs[ty][tx] = 0", "bs[ty][tx]"},
	[2]string{"sum += as", "as[ty][i]"}, [2]string{"sum += as", "bs[i][tx]"},
	[2]string{"c[row*n+col] = sum", "c[row*n+col]"})

func tiledMatMulChecked(t *kernel.Thread, a, b, c []float32, m, n, k int32) {
	as := kernel.Shared[[Tile][Tile]float32](t)
	bs := kernel.Shared[[Tile][Tile]float32](t)
	tx, ty := t.ThreadIdx.X, t.ThreadIdx.Y
	row, col := t.BlockIdx.Y*Tile+ty, t.BlockIdx.X*Tile+tx
	var sum float32
	for p := int32(0); p < k; p += Tile {
		if row < m && p+tx < k {
			*kernel.At(t, as[kernel.Index(t, int(ty), Tile, &tiledS[0])][:], int(tx), &tiledS[0], kernel.Write) = *kernel.At(t, a, int(row*k+p+tx), &tiledS[1], kernel.Read)
		} else {
			*kernel.At(t, as[kernel.Index(t, int(ty), Tile, &tiledS[2])][:], int(tx), &tiledS[2], kernel.Write) = 0
		}
		if col < n && p+ty < k {
			*kernel.At(t, bs[kernel.Index(t, int(ty), Tile, &tiledS[3])][:], int(tx), &tiledS[3], kernel.Write) = *kernel.At(t, b, int((p+ty)*n+col), &tiledS[4], kernel.Read)
		} else {
			*kernel.At(t, bs[kernel.Index(t, int(ty), Tile, &tiledS[5])][:], int(tx), &tiledS[5], kernel.Write) = 0
		}
		t.SyncThreads()
		for i := range Tile {
			sum += *kernel.At(t, as[kernel.Index(t, int(ty), Tile, &tiledS[6])][:], int(i), &tiledS[6], kernel.Read) *
				*kernel.At(t, bs[kernel.Index(t, int(i), Tile, &tiledS[7])][:], int(tx), &tiledS[7], kernel.Read)
		}
		t.SyncThreads()
	}
	if row < m && col < n {
		*kernel.At(t, c, int(row*n+col), &tiledS[8], kernel.Write) = sum
	}
}

var noSyncS = sites("broken.go", "TiledMatMulNoSync",
	[2]string{"as[ty][tx] = a[", "as[ty][tx]"}, [2]string{"as[ty][tx] = a[", "a[row*k+p+tx]"},
	[2]string{"as[ty][tx] = 0", "as[ty][tx]"},
	[2]string{"bs[ty][tx] = b[", "bs[ty][tx]"}, [2]string{"bs[ty][tx] = b[", "b[(p+ty)*n+col]"},
	[2]string{"bs[ty][tx] = 0", "bs[ty][tx]"},
	[2]string{"sum += as", "as[ty][i]"}, [2]string{"sum += as", "bs[i][tx]"},
	[2]string{"c[row*n+col] = sum", "c[row*n+col]"})

func tiledMatMulNoSyncChecked(t *kernel.Thread, a, b, c []float32, m, n, k int32) {
	as := kernel.Shared[[Tile][Tile]float32](t)
	bs := kernel.Shared[[Tile][Tile]float32](t)
	tx, ty := t.ThreadIdx.X, t.ThreadIdx.Y
	row, col := t.BlockIdx.Y*Tile+ty, t.BlockIdx.X*Tile+tx
	var sum float32
	for p := int32(0); p < k; p += Tile {
		if row < m && p+tx < k {
			*kernel.At(t, as[kernel.Index(t, int(ty), Tile, &noSyncS[0])][:], int(tx), &noSyncS[0], kernel.Write) = *kernel.At(t, a, int(row*k+p+tx), &noSyncS[1], kernel.Read)
		} else {
			*kernel.At(t, as[kernel.Index(t, int(ty), Tile, &noSyncS[2])][:], int(tx), &noSyncS[2], kernel.Write) = 0
		}
		if col < n && p+ty < k {
			*kernel.At(t, bs[kernel.Index(t, int(ty), Tile, &noSyncS[3])][:], int(tx), &noSyncS[3], kernel.Write) = *kernel.At(t, b, int((p+ty)*n+col), &noSyncS[4], kernel.Read)
		} else {
			*kernel.At(t, bs[kernel.Index(t, int(ty), Tile, &noSyncS[5])][:], int(tx), &noSyncS[5], kernel.Write) = 0
		}
		t.SyncThreads()
		for i := range Tile {
			sum += *kernel.At(t, as[kernel.Index(t, int(ty), Tile, &noSyncS[6])][:], int(i), &noSyncS[6], kernel.Read) *
				*kernel.At(t, bs[kernel.Index(t, int(i), Tile, &noSyncS[7])][:], int(tx), &noSyncS[7], kernel.Read)
		}
	}
	if row < m && col < n {
		*kernel.At(t, c, int(row*n+col), &noSyncS[8], kernel.Write) = sum
	}
}

var offS = sites("broken.go", "AddOffByOne",
	[2]string{"c[i] = a[i] + b[i]", "c[i]"}, [2]string{"c[i] = a[i] + b[i]", "a[i]"}, [2]string{"c[i] = a[i] + b[i]", "b[i]"})

func addOffByOneChecked(t *kernel.Thread, a, b, c []float32, n int32) {
	i := t.Index()
	if i <= n {
		v := *kernel.At(t, a, int(i), &offS[1], kernel.Read) + *kernel.At(t, b, int(i), &offS[2], kernel.Read)
		*kernel.At(t, c, int(i), &offS[0], kernel.Write) = v
	}
}

var histS = sites("histogram.go", "Histogram",
	[2]string{"h[b] = 0", "h[b]"}, [2]string{"AtomicAdd(&h[", "h[data[i]]"}, [2]string{"AtomicAdd(&h[", "data[i]"},
	[2]string{"if h[b] != 0", "h[b]"}, [2]string{"AtomicAdd(&hist[b], h[b])", "hist[b]"}, [2]string{"AtomicAdd(&hist[b], h[b])", "h[b]"})

func histogramChecked(t *kernel.Thread, data []uint8, hist []uint32, n int32) {
	h := kernel.Shared[[kernels.Bins]uint32](t)
	for b := t.ThreadIdx.X; b < kernels.Bins; b += t.BlockDim.X {
		*kernel.At(t, h[:], int(b), &histS[0], kernel.Write) = 0
	}
	t.SyncThreads()
	for i := t.Index(); i < n; i += t.Stride() {
		kernel.AtomicAdd(kernel.At(t, h[:], int(*kernel.At(t, data, int(i), &histS[2], kernel.Read)), &histS[1], kernel.Atomic), 1)
	}
	t.SyncThreads()
	for b := t.ThreadIdx.X; b < kernels.Bins; b += t.BlockDim.X {
		if *kernel.At(t, h[:], int(b), &histS[3], kernel.Read) != 0 {
			kernel.AtomicAdd(kernel.At(t, hist, int(b), &histS[4], kernel.Atomic), *kernel.At(t, h[:], int(b), &histS[5], kernel.Read))
		}
	}
}

var sumS = sites("reduce.go", "Sum",
	[2]string{"v += x[i]", "x[i]"}, [2]string{"warpSums[warp] = v", "warpSums[warp]"},
	[2]string{"v = warpSums[lane]", "warpSums[lane]"}, [2]string{"partial[t.BlockIdx.X] = v", "partial[t.BlockIdx.X]"})

func sumChecked(t *kernel.Thread, x, partial []float32, n int32) {
	warpSums := kernel.Shared[[32]float32](t)
	var v float32
	for i := t.Index(); i < n; i += t.Stride() {
		v += *kernel.At(t, x, int(i), &sumS[0], kernel.Read)
	}
	v = warpSumChecked(t, v)
	lane, warp := t.LaneID(), t.WarpID()
	if lane == 0 {
		*kernel.At(t, warpSums[:], int(warp), &sumS[1], kernel.Write) = v
	}
	t.SyncThreads()
	if warp == 0 {
		v = 0
		if lane < t.BlockDim.X/kernel.WarpSize {
			v = *kernel.At(t, warpSums[:], int(lane), &sumS[2], kernel.Read)
		}
		v = warpSumChecked(t, v)
		if lane == 0 {
			*kernel.At(t, partial, int(t.BlockIdx.X), &sumS[3], kernel.Write) = v
		}
	}
}

// warpSumChecked is the twin of the device function warpSum, which makes
// no memory access: it is the same code.
func warpSumChecked(t *kernel.Thread, v float32) float32 {
	for offset := int32(16); offset > 0; offset /= 2 {
		v += kernel.ShflDown(t, kernel.FullMask, v, offset)
	}
	return v
}
