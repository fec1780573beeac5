// Package sgemm holds a register-tiled SGEMM: each block computes a BM x BN
// tile of C with BM*BN/(TM*TN) threads, each thread a TM x TN sub-tile in
// registers, staging BK-wide panels of A and B through shared memory with
// float4 loads.
package sgemm

import "github.com/gocu-dev/gocu/kernel"

// Tile sizes.
const (
	BM = 128
	BN = 128
	BK = 8
	TM = 8
	TN = 8
	// Threads per block.
	Threads = BM * BN / (TM * TN)
)

// SGEMM computes c = alpha*a*b + beta*c for row-major m x k, k x n and
// m x n matrices. m and n must be multiples of 128 and k of 8; launch
// (n/BN, m/BM) blocks of Threads threads.
//
//gocu:kernel
//gocu:launch_bounds 256
func SGEMM(t *kernel.Thread, a, b, c []float32, m, n, k int32, alpha, beta float32) {
	as := kernel.Shared[[BK][BM]float32](t) // transposed A panel
	bs := kernel.Shared[[BK][BN]float32](t)
	a4 := kernel.Reinterpret[kernel.Float4](a)
	b4 := kernel.Reinterpret[kernel.Float4](b)
	tid := t.ThreadIdx.X
	tr := tid / (BN / TN) // thread row within the block tile
	tc := tid % (BN / TN)
	rowA := t.BlockIdx.Y*BM + tid/2 // each thread loads one float4 of A
	colA := (tid % 2) * 4
	rowB := tid / (BN / 4) // and one float4 of B
	colB := (tid % (BN / 4)) * 4
	var acc [TM][TN]float32
	var ra [TM]float32
	var rb [TN]float32
	for k0 := int32(0); k0 < k; k0 += BK {
		va := a4[(rowA*k+k0+colA)/4]
		as[colA+0][tid/2] = va.X
		as[colA+1][tid/2] = va.Y
		as[colA+2][tid/2] = va.Z
		as[colA+3][tid/2] = va.W
		vb := b4[((k0+rowB)*n+t.BlockIdx.X*BN+colB)/4]
		bs[rowB][colB+0] = vb.X
		bs[rowB][colB+1] = vb.Y
		bs[rowB][colB+2] = vb.Z
		bs[rowB][colB+3] = vb.W
		t.SyncThreads()
		//gocu:unroll
		for kk := 0; kk < BK; kk++ {
			//gocu:unroll
			for i := 0; i < TM; i++ {
				ra[i] = as[kk][tr*TM+int32(i)]
			}
			//gocu:unroll
			for j := 0; j < TN; j++ {
				rb[j] = bs[kk][tc*TN+int32(j)]
			}
			//gocu:unroll
			for i := 0; i < TM; i++ {
				//gocu:unroll
				for j := 0; j < TN; j++ {
					acc[i][j] = kernel.FMA(ra[i], rb[j], acc[i][j])
				}
			}
		}
		t.SyncThreads()
	}
	c4 := kernel.Reinterpret[kernel.Float4](c)
	//gocu:unroll
	for i := 0; i < TM; i++ {
		row := t.BlockIdx.Y*BM + tr*TM + int32(i)
		//gocu:unroll
		for j := 0; j < TN; j += 4 {
			col := t.BlockIdx.X*BN + tc*TN + int32(j)
			p := (row*n + col) / 4
			old := c4[p]
			c4[p] = kernel.Float4{
				X: alpha*acc[i][j] + beta*old.X,
				Y: alpha*acc[i][j+1] + beta*old.Y,
				Z: alpha*acc[i][j+2] + beta*old.Z,
				W: alpha*acc[i][j+3] + beta*old.W,
			}
		}
	}
}
