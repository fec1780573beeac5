package lecture

import "github.com/gocu-dev/gocu/kernel"

// The tiling of GemmBF16MMA.
const (
	MMABM      = 128 // rows of C per block
	MMABN      = 256 // columns of C per block
	MMABK      = 32  // depth of a pipeline stage
	MMAStages  = 4   // stages of the cp.async pipeline in shared memory
	MMAThreads = 256 // 8 warps: 2 along M x 4 along N, each 64 x 64 of C

	mmaStageA = MMABM * MMABK // elements of A per stage
	mmaStageB = MMABK * MMABN // elements of B per stage
	mmaStage  = mmaStageA + mmaStageB
	// MMAShared is the dynamic shared memory GemmBF16MMA needs, in bytes
	// (96 KiB: four stages of 24 KiB).
	MMAShared = MMAStages * mmaStage * 2
)

// GemmBF16MMA computes what GemmBF16 does, c = a b in bf16 with float32
// accumulation, with the warp-level MMA (kernel.MMABF16, PTX mma.sync
// m16n8k16) that every GPU since Ampere (sm_80) has: it is the portable
// kernel, and the one to read first. It is written the way fast
// Ampere-style GEMMs are:
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
// m must be a multiple of 128, k of 32 and n of 8. Launch
// GemmBF16MMAConfig(m, n): (ceil(n/256), m/128) blocks of 256 threads
// with MMAShared bytes of dynamic shared memory. On the H100 it reaches
// about half of cuBLAS, the warpgroup MMA of GemmBF16 0.85
// (docs/tensor-cores.md).
//
//gocu:kernel
//gocu:noalias
//gocu:launch_bounds 256 1
func GemmBF16MMA(t *kernel.Thread, a, b, c []kernel.BFloat16, m, n, k int32) {
	sm := kernel.DynamicShared[kernel.BFloat16](t)
	tid := t.ThreadIdx.X
	warp, lane := tid/32, tid%32
	wm, wn := warp/4, warp%4 // the warp's 64 x 64 tile: rows 64wm, columns 64wn
	bm, bn := t.BlockIdx.Y*MMABM, t.BlockIdx.X*MMABN
	kt := k / MMABK

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
	sa0 := ar*MMABK + (ac^((ar>>1)&3))*8
	sa1 := (ar+64)*MMABK + (ac^(((ar+64)>>1)&3))*8
	sb := mmaStageA + br*MMABN + (bc^(br&7))*8 // rows br+8i keep br&7

	// Prologue: the first three stages in flight.
	for s := int32(0); s < MMAStages-1; s++ {
		if s < kt {
			st := s * mmaStage
			ka := int(s * MMABK)
			kernel.CpAsync(t, sm[st+sa0:], a[aoff+ka:])
			kernel.CpAsync(t, sm[st+sa1:], a[aoff+64*int(k)+ka:])
			//gocu:unroll
			for i := int32(0); i < 4; i++ {
				kernel.CpAsyncZfill(t, sm[st+sb+i*8*MMABN:], b[boff+int(s*MMABK+i*8)*int(n):], bvalid)
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
		kernel.CpAsyncWait(t, MMAStages-2)
		t.SyncThreads()
		// Refill the stage every warp finished with in the last iteration.
		if nxt := i + MMAStages - 1; nxt < kt {
			st := (nxt % MMAStages) * mmaStage
			ka := int(nxt * MMABK)
			kernel.CpAsync(t, sm[st+sa0:], a[aoff+ka:])
			kernel.CpAsync(t, sm[st+sa1:], a[aoff+64*int(k)+ka:])
			//gocu:unroll
			for j := int32(0); j < 4; j++ {
				kernel.CpAsyncZfill(t, sm[st+sb+j*8*MMABN:], b[boff+int(nxt*MMABK+j*8)*int(n):], bvalid)
			}
		}
		kernel.CpAsyncCommit(t)

		st := (i % MMAStages) * mmaStage
		//gocu:unroll
		for ks := int32(0); ks < 2; ks++ {
			var af [4]kernel.FragA
			var bf [8]kernel.FragB
			//gocu:unroll
			for mi := int32(0); mi < 4; mi++ {
				row := wm*64 + mi*16 + lr
				ch := ks*2 + lc
				af[mi] = kernel.LdMatrixX4(t, sm[st+row*MMABK+(ch^((row>>1)&3))*8:])
			}
			//gocu:unroll
			for nj := int32(0); nj < 4; nj++ {
				row := ks*16 + lr
				ch := wn*8 + nj*2 + lc
				r := kernel.LdMatrixX4Trans(t, sm[st+mmaStageA+row*MMABN+(ch^(row&7))*8:])
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
