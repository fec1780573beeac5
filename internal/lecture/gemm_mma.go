package lecture

import "github.com/gocu-dev/gocu/kernel"

// The tiling of GemmBF16.
const (
	BF16BM      = 128 // rows of C per block
	BF16BN      = 256 // columns of C per block
	BF16BK      = 32  // depth of a pipeline stage
	BF16Stages  = 4   // stages of the cp.async pipeline in shared memory
	BF16Threads = 256 // 8 warps: 2 along M x 4 along N, each 64 x 64 of C

	bf16StageA = BF16BM * BF16BK // elements of A per stage
	bf16StageB = BF16BK * BF16BN // elements of B per stage
	bf16Stage  = bf16StageA + bf16StageB
	// BF16Shared is the dynamic shared memory GemmBF16 needs, in bytes
	// (96 KiB: four stages of 24 KiB).
	BF16Shared = BF16Stages * bf16Stage * 2
)

// GemmBF16 computes c = a b for row-major bf16 matrices a (m x k), b
// (k x n) and c (m x n), accumulating in float32 on the tensor cores
// (mma.sync m16n8k16) and rounding c once to bf16, as cuBLAS's bf16 GEMM
// does. It is written the way fast Ampere-style GEMMs are:
//
//   - each block computes a 128 x 256 tile of c with 8 warps, each warp a
//     64 x 64 tile as 4 x 8 MMA tiles of 16 x 8: 128 float32 accumulators
//     per thread, so that each fragment loaded from shared memory feeds 4
//     or 8 MMAs;
//   - the 32-deep panels of a and b reach shared memory through
//     kernel.CpAsync, four stages deep: while the tensor cores work on
//     one stage, the next three are in flight, with one barrier per stage;
//   - fragments come from shared memory by kernel.LdMatrixX4 (a) and
//     kernel.LdMatrixX4Trans (b, stored k-major), and shared memory is
//     swizzled (the 16-byte chunk index XORed with the row) so that the
//     eight rows an ldmatrix reads fall in different banks;
//   - columns past n are zero-filled (kernel.CpAsyncZfill) and not stored,
//     so n need only be a multiple of 8.
//
// m must be a multiple of 128, k of 32 and n of 8. Launch BF16Config(m, n):
// (ceil(n/256), m/128) blocks of 256 threads with BF16Shared bytes of
// dynamic shared memory.
//
//gocu:kernel
//gocu:noalias
//gocu:launch_bounds 256 1
func GemmBF16(t *kernel.Thread, a, b, c []kernel.BFloat16, m, n, k int32) {
	sm := kernel.DynamicShared[kernel.BFloat16](t)
	tid := t.ThreadIdx.X
	warp, lane := tid/32, tid%32
	wm, wn := warp/4, warp%4 // the warp's 64 x 64 tile: rows 64wm, columns 64wn
	bm, bn := t.BlockIdx.Y*BF16BM, t.BlockIdx.X*BF16BN
	kt := k / BF16BK

	// Each thread copies two 16-byte chunks of the a panel (row ar, chunk
	// ac and row ar+64) and four of the b panel (row br+8i, chunk bc).
	ar, ac := tid/4, tid%4
	br, bc := tid/32, tid%32
	bvalid := bn+bc*8 < n
	aoff := int(bm+ar)*int(k) + int(ac*8)
	boff := int(br)*int(n) + int(bn+bc*8)
	if !bvalid {
		boff = 0
	}
	// Swizzled shared offsets of those chunks within a stage.
	sa0 := ar*BF16BK + (ac^((ar>>1)&3))*8
	sa1 := (ar+64)*BF16BK + (ac^(((ar+64)>>1)&3))*8
	sb := bf16StageA + br*BF16BN + (bc^(br&7))*8 // rows br+8i keep br&7

	// Prologue: the first three stages in flight.
	for s := int32(0); s < BF16Stages-1; s++ {
		if s < kt {
			st := s * bf16Stage
			ka := int(s * BF16BK)
			kernel.CpAsync(t, sm[st+sa0:], a[aoff+ka:])
			kernel.CpAsync(t, sm[st+sa1:], a[aoff+64*int(k)+ka:])
			//gocu:unroll
			for i := int32(0); i < 4; i++ {
				kernel.CpAsyncZfill(t, sm[st+sb+i*8*BF16BN:], b[boff+int(s*BF16BK+i*8)*int(n):], bvalid)
			}
		}
		kernel.CpAsyncCommit(t)
	}

	var acc [4][8]kernel.FragC
	// Per lane, the rows and chunks its ldmatrix addresses name: a rows
	// 64wm + 16mi + lane%16, chunk 2ks + lane/16; b rows 16ks + lane%16,
	// chunk 8wn + 2nj + lane/16.
	lr, lc := lane%16, lane/16
	for i := int32(0); i < kt; i++ {
		kernel.CpAsyncWait(t, BF16Stages-2)
		t.SyncThreads()
		// Refill the stage every warp finished with in the last iteration.
		if nxt := i + BF16Stages - 1; nxt < kt {
			st := (nxt % BF16Stages) * bf16Stage
			ka := int(nxt * BF16BK)
			kernel.CpAsync(t, sm[st+sa0:], a[aoff+ka:])
			kernel.CpAsync(t, sm[st+sa1:], a[aoff+64*int(k)+ka:])
			//gocu:unroll
			for j := int32(0); j < 4; j++ {
				kernel.CpAsyncZfill(t, sm[st+sb+j*8*BF16BN:], b[boff+int(nxt*BF16BK+j*8)*int(n):], bvalid)
			}
		}
		kernel.CpAsyncCommit(t)

		st := (i % BF16Stages) * bf16Stage
		//gocu:unroll
		for ks := int32(0); ks < 2; ks++ {
			var af [4]kernel.FragA
			var bf [8]kernel.FragB
			//gocu:unroll
			for mi := int32(0); mi < 4; mi++ {
				row := wm*64 + mi*16 + lr
				ch := ks*2 + lc
				af[mi] = kernel.LdMatrixX4(t, sm[st+row*BF16BK+(ch^((row>>1)&3))*8:])
			}
			//gocu:unroll
			for nj := int32(0); nj < 4; nj++ {
				row := ks*16 + lr
				ch := wn*8 + nj*2 + lc
				r := kernel.LdMatrixX4Trans(t, sm[st+bf16StageA+row*BF16BN+(ch^(row&7))*8:])
				bf[2*nj] = kernel.FragB{r[0], r[1]}
				bf[2*nj+1] = kernel.FragB{r[2], r[3]}
			}
			//gocu:unroll
			for mi := 0; mi < 4; mi++ {
				//gocu:unroll
				for ni := 0; ni < 8; ni++ {
					acc[mi][ni] = kernel.MMABF16(t, af[mi], bf[ni], acc[mi][ni])
				}
			}
		}
	}
	kernel.CpAsyncWait(t, 0)

	// Each lane holds, per MMA tile, rows g and g+8 and columns 2q, 2q+1.
	c2 := kernel.Reinterpret[kernel.BFloat16x2](c)
	g, q := lane/4, lane%4
	//gocu:unroll
	for mi := 0; mi < 4; mi++ {
		row := int(bm + wm*64 + int32(mi)*16 + g)
		//gocu:unroll
		for ni := 0; ni < 8; ni++ {
			col := bn + wn*64 + int32(ni)*8 + 2*q
			if col < n {
				v := acc[mi][ni]
				c2[(row*int(n)+int(col))/2] = kernel.ToBFloat16x2(v[0], v[1])
				c2[((row+8)*int(n)+int(col))/2] = kernel.ToBFloat16x2(v[2], v[3])
			}
		}
	}
}
