package lecture

import "github.com/gocu-dev/gocu/kernel"

// The tiling of SGEMM.
const (
	GemmBM      = 128 // rows of C per block
	GemmBN      = 128 // columns of C per block
	GemmBK      = 8   // depth of the A and B panels staged in shared memory
	GemmThreads = 256 // threads per block: 16 x 16, each computing 8 x 8 elements of C
)

// SGEMM computes c = alpha a b + beta c for row-major float32 matrices, a
// m x k, b k x n and c m x n, the way fast GEMMs do:
//
//   - each block computes a GemmBM x GemmBN tile of c, each of its 256
//     threads an 8 x 8 sub-tile held in registers (64 accumulators), as
//     four 4 x 4 quads: rows 4tr..4tr+3 and 64+4tr..64+4tr+3, columns
//     4tc..4tc+3 and 64+4tc..64+4tc+3, so that the threads of a warp read
//     consecutive float4s of shared memory without bank conflicts;
//   - the panels of a (GemmBM x GemmBK) and b (GemmBK x GemmBN) go through
//     shared memory in two stages: while the block multiplies one, the
//     next is loaded from global memory into registers, then stored into
//     the other stage, so there is one barrier per panel;
//   - every global access is a float4 (kernel.Float4 through
//     kernel.Reinterpret), and the a panel is stored transposed, so that
//     a thread reads the 8 values of a it needs as two float4s too;
//   - the multiply-adds are kernel.FMA, so that the simulator computes
//     the very bits the GPU does.
//
// m and n must be multiples of 128 and k a multiple of 8; launch
// (n/GemmBN, m/GemmBM) blocks of GemmThreads threads (GemmConfig). With
// beta == 0, c is not read (it may hold anything, NaN included), as in
// BLAS.
//
//gocu:kernel
//gocu:noalias
//gocu:launch_bounds 256 2
func SGEMM(t *kernel.Thread, a, b, c []float32, m, n, k int32, alpha, beta float32) {
	// as[s][kk][i] holds rows 4i..4i+3 of column kk of the a panel of stage
	// s. The extra float4 per row makes the transposed stores of a warp
	// fall into 32 different banks.
	as := kernel.Shared[[2][GemmBK][GemmBM/4 + 1]kernel.Float4](t)
	bs := kernel.Shared[[2][GemmBK][GemmBN / 4]kernel.Float4](t)
	a4 := kernel.Reinterpret[kernel.Float4](a)
	b4 := kernel.Reinterpret[kernel.Float4](b)
	c4 := kernel.Reinterpret[kernel.Float4](c)

	tid := t.ThreadIdx.X
	tr, tc := tid/16, tid%16
	k4, n4 := int(k/4), int(n/4) // row lengths in float4s
	// Each thread loads one float4 of the a panel (row lr, columns
	// lk..lk+3) and one of the b panel (row br, float4 column bc).
	lr, lk := tid/2, (tid%2)*4
	br, bc := tid/32, tid%32
	ai := int(t.BlockIdx.Y*GemmBM+lr)*k4 + int(lk/4)
	bi := int(br)*n4 + int(t.BlockIdx.X*(GemmBN/4)+bc)

	va, vb := a4[ai], b4[bi]
	st := int32(0)
	a0 := kernel.Reinterpret[float32](as[st][lk][:])
	a1 := kernel.Reinterpret[float32](as[st][lk+1][:])
	a2 := kernel.Reinterpret[float32](as[st][lk+2][:])
	a3 := kernel.Reinterpret[float32](as[st][lk+3][:])
	a0[lr], a1[lr], a2[lr], a3[lr] = va.X, va.Y, va.Z, va.W
	// Field by field: a copy of the whole struct can make C++ compilers
	// keep vb in memory instead of registers.
	bs[st][br][bc] = kernel.Float4{X: vb.X, Y: vb.Y, Z: vb.Z, W: vb.W}
	t.SyncThreads()

	var acc [8][8]float32
	for k0 := int32(0); k0 < k; k0 += GemmBK {
		next := k0+GemmBK < k
		if next { // the next panels, into registers while this one is used
			va = a4[ai+int((k0+GemmBK)/4)]
			vb = b4[bi+int(k0+GemmBK)*n4]
		}
		//gocu:unroll
		for kk := 0; kk < GemmBK; kk++ {
			x0, x1 := as[st][kk][tr], as[st][kk][tr+16]
			y0, y1 := bs[st][kk][tc], bs[st][kk][tc+16]
			ra := [8]float32{x0.X, x0.Y, x0.Z, x0.W, x1.X, x1.Y, x1.Z, x1.W}
			rb := [8]float32{y0.X, y0.Y, y0.Z, y0.W, y1.X, y1.Y, y1.Z, y1.W}
			//gocu:unroll
			for i := 0; i < 8; i++ {
				//gocu:unroll
				for j := 0; j < 8; j++ {
					acc[i][j] = kernel.FMA(ra[i], rb[j], acc[i][j])
				}
			}
		}
		if next { // into the other stage, which nobody reads any more
			st ^= 1
			a0 = kernel.Reinterpret[float32](as[st][lk][:])
			a1 = kernel.Reinterpret[float32](as[st][lk+1][:])
			a2 = kernel.Reinterpret[float32](as[st][lk+2][:])
			a3 = kernel.Reinterpret[float32](as[st][lk+3][:])
			a0[lr], a1[lr], a2[lr], a3[lr] = va.X, va.Y, va.Z, va.W
			bs[st][br][bc] = kernel.Float4{X: vb.X, Y: vb.Y, Z: vb.Z, W: vb.W}
		}
		t.SyncThreads()
	}

	//gocu:unroll
	for i := 0; i < 8; i++ {
		row := int(t.BlockIdx.Y*GemmBM + tr*4 + int32(i%4) + int32(i/4)*64)
		//gocu:unroll
		for h := 0; h < 2; h++ {
			p := row*n4 + int(t.BlockIdx.X*(GemmBN/4)+tc+int32(h)*16)
			v := kernel.Float4{X: alpha * acc[i][4*h], Y: alpha * acc[i][4*h+1], Z: alpha * acc[i][4*h+2], W: alpha * acc[i][4*h+3]}
			if beta != 0 {
				old := c4[p]
				v = kernel.Float4{
					X: kernel.FMA(beta, old.X, v.X),
					Y: kernel.FMA(beta, old.Y, v.Y),
					Z: kernel.FMA(beta, old.Z, v.Z),
					W: kernel.FMA(beta, old.W, v.W),
				}
			}
			c4[p] = v
		}
	}
}
