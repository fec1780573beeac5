package lecture

import (
	"math"

	"github.com/gocu-dev/gocu/kernel"
)

// The tiling of FlashAttn128B64.
const (
	FAB64Warps = 4 // warps per block, 16 query rows each
	// FAB64Threads is the block size of FlashAttn128B64.
	FAB64Threads = FAB64Warps * 32
	FAB64BR      = FAB64Warps * 16 // query rows per block
	FAB64BC      = 64              // keys and values per tile

	fab64D     = 128
	fab64Q     = FAB64BR * fab64D // elements of the Q tile
	fab64KV    = FAB64BC * fab64D // elements of one K or V tile
	fab64Chunk = fab64D / 8       // 16-byte chunks per row
	fab64Rows  = FAB64Threads / fab64Chunk
	// FAB64Shared is the dynamic shared memory of FlashAttn128B64 in
	// bytes: Q, and K and V twice.
	FAB64Shared = (fab64Q + 4*fab64KV) * 2
)

// FlashAttn128B64 computes what FlashAttention128 does, restructured for
// the H100 after its profile (issue slots 40% busy; the eight warps of a
// block in lock step, so that the tensor cores idled while every warp did
// its softmax):
//
//   - a block has FAB64Warps warps of 16 query rows; with 4 warps and
//     launch bounds (128, 2), two blocks share an SM (at most 255
//     registers, 80 KiB of shared memory each), so that one block's
//     softmax overlaps the other's matrix products (FlashAttn128B128, made
//     from this file by tools/flashgen.sh, keeps 8 warps and one block per
//     SM, to tell the two effects apart);
//   - the row maximum is taken on the raw scores by compare and select,
//     and the scale folds into the exponent: p = 2^(s·scale·log2e − m) is
//     one FMA and one kernel.FastExp2 per score;
//   - only the tiles on the diagonal are masked: the others run a tile
//     body without the mask, specialised by a constant argument;
//   - the ldmatrix addresses are per-lane offsets computed once: inside a
//     tile every address is one of four slices plus a constant.
//
// Launch (seq/FAB64BR, batch*heads) blocks of FAB64Threads threads with
// FAB64Shared bytes of dynamic shared memory; seq must be a multiple of
// FAB64BR and of FAB64BC.
//
//gocu:kernel
//gocu:noalias
//gocu:launch_bounds 128 2
func FlashAttn128B64(t *kernel.Thread, q, k, v, o []kernel.BFloat16, seq int32, scale float32, causal bool) {
	sm := kernel.DynamicShared[kernel.BFloat16](t)
	tid := t.ThreadIdx.X
	warp, lane := tid/32, tid%32
	g, qd := lane/4, lane%4
	qtile := t.BlockIdx.X
	if causal { // the longest rows first
		qtile = t.GridDim.X - 1 - t.BlockIdx.X
	}
	q0 := qtile * FAB64BR
	head := int(t.BlockIdx.Y) * int(seq) * fab64D
	sl2 := scale * log2e

	// Each thread copies chunk cc of rows cr, cr+fab64Rows, ...: the same
	// swizzled column in every row it copies.
	cr, cc := tid/fab64Chunk, tid%fab64Chunk
	soff := cr*fab64D + (cc^(cr&7))*8
	goff := head + int(cr)*fab64D + int(cc)*8
	//gocu:unroll
	for i := int32(0); i < FAB64BR/fab64Rows; i++ {
		kernel.CpAsync(t, sm[soff+i*fab64Rows*fab64D:], q[goff+int(q0+i*fab64Rows)*fab64D:])
	}
	ntiles, nfull := seq/FAB64BC, seq/FAB64BC
	if causal {
		ntiles = (q0 + FAB64BR) / FAB64BC // through the diagonal
		nfull = q0 / FAB64BC              // wholly below it
	}
	fab64LoadKV(t, sm, k, v, goff, soff, 0, 0)
	kernel.CpAsyncCommit(t)
	kernel.CpAsyncWait(t, 0)
	t.SyncThreads()

	// The warp's 16 rows of Q as 8 A fragments (k = d in steps of 16).
	var qf [fab64D / 16]kernel.FragA
	lr, lc := lane%16, lane/16
	//gocu:unroll
	for ks := int32(0); ks < fab64D/16; ks++ {
		r := warp*16 + lr
		ch := ks*2 + lc
		qf[ks] = kernel.LdMatrixX4(t, sm[r*fab64D+(ch^(r&7))*8:])
	}

	// Per-lane ldmatrix offsets. A row's chunk c is stored at c^(row&7);
	// every row a lane names has row&7 == lane&7, so chunk 2s+b lands at
	// 2(s^h) + (b^lane)&1 with h = (lane&7)/2, and for s = 4j'+j that is
	// offset j (one of four registers) plus 64j' (a constant).
	l7 := lane % 8
	h := l7 / 2
	rowK := (l7+8*(lane/16))*fab64D + 8*(((lane/8)^l7)&1) // K, not transposed: lanes 8-15 take chunk 2s+1
	rowV := lr*fab64D + 8*((lc^l7)&1)                     // V, transposed: lanes 16-31 take chunk 2s+1
	var kOff, vOff [4]int32
	//gocu:unroll
	for j := int32(0); j < 4; j++ {
		kOff[j] = rowK + 16*(j^h)
		vOff[j] = rowV + 16*(j^h)
	}

	var acc [fab64D / 8]kernel.FragC
	negInf := float32(math.Inf(-1))
	mx := [2]float32{negInf, negInf} // running maxima of rows g and g+8 (log2 domain, scaled)
	sum := [2]float32{0, 0}          // this lane's part of the running sums
	rowA := q0 + warp*16 + g         // the lane's two query rows: rowA and rowA+8
	for j := int32(0); j < nfull; j++ {
		acc, mx, sum = fab64Tile(t, sm, k, v, goff, soff, qf, kOff, vOff, acc, mx, sum, j, ntiles, rowA, sl2, false)
	}
	for j := nfull; j < ntiles; j++ {
		acc, mx, sum = fab64Tile(t, sm, k, v, goff, soff, qf, kOff, vOff, acc, mx, sum, j, ntiles, rowA, sl2, true)
	}

	// The row sums over the four lanes of each row, then O / sum.
	//gocu:unroll
	for hh := 0; hh < 2; hh++ {
		sum[hh] += kernel.ShflXor(t, kernel.FullMask, sum[hh], 1)
		sum[hh] += kernel.ShflXor(t, kernel.FullMask, sum[hh], 2)
		sum[hh] = 1 / sum[hh]
	}
	o2 := kernel.Reinterpret[kernel.BFloat16x2](o)
	//gocu:unroll
	for dt := int32(0); dt < fab64D/8; dt++ {
		col := int(dt*8 + 2*qd)
		o2[(head+int(rowA)*fab64D+col)/2] = kernel.ToBFloat16x2(acc[dt][0]*sum[0], acc[dt][1]*sum[0])
		o2[(head+int(rowA+8)*fab64D+col)/2] = kernel.ToBFloat16x2(acc[dt][2]*sum[1], acc[dt][3]*sum[1])
	}
}

// fab64Tile runs tile j of FlashAttn128B64 for one warp: it waits for the
// tile's K and V, starts the copies of tile j+1, and updates the running
// output, maxima and sums. masked applies the causal mask (a constant at
// each call, so each call site compiles to its own body).
func fab64Tile(t *kernel.Thread, sm, k, v []kernel.BFloat16, goff int, soff int32, qf [fab64D / 16]kernel.FragA, kOff, vOff [4]int32,
	acc [fab64D / 8]kernel.FragC, mx, sum [2]float32, j, ntiles, rowA int32, sl2 float32, masked bool) ([fab64D / 8]kernel.FragC, [2]float32, [2]float32) {
	if j > 0 {
		kernel.CpAsyncWait(t, 0)
		t.SyncThreads() // tile j is in; everyone is done with tile j-1
	}
	if j+1 < ntiles {
		fab64LoadKV(t, sm, k, v, goff, soff, (j+1)*FAB64BC, (j+1)%2)
	}
	kernel.CpAsyncCommit(t)
	ks0 := fab64Q + (j%2)*2*fab64KV // this tile's K; V follows it
	vs0 := ks0 + fab64KV

	// S = Q Kᵀ for the warp's 16 rows and the tile's keys, k-step ks =
	// 4jj + j read through the j-th of four per-lane slices: every
	// ldmatrix address is a register plus a constant.
	var s [FAB64BC / 8]kernel.FragC
	//gocu:unroll
	for j4 := int32(0); j4 < 4; j4++ {
		kb := sm[ks0+kOff[j4]:]
		//gocu:unroll
		for jj := int32(0); jj < fab64D/64; jj++ {
			//gocu:unroll
			for nj := int32(0); nj < FAB64BC/16; nj++ {
				kf := kernel.LdMatrixX4(t, kb[nj*16*fab64D+jj*64:])
				s[2*nj] = kernel.MMABF16(t, qf[4*jj+j4], kernel.FragB{kf[0], kf[1]}, s[2*nj])
				s[2*nj+1] = kernel.MMABF16(t, qf[4*jj+j4], kernel.FragB{kf[2], kf[3]}, s[2*nj+1])
			}
		}
	}

	// Online softmax: the maximum of the raw scores (scale > 0 keeps the
	// order), then everything in the scaled log2 domain.
	negInf := float32(math.Inf(-1))
	qd := t.ThreadIdx.X % 4
	m := [2]float32{negInf, negInf}
	//gocu:unroll
	for nt := int32(0); nt < FAB64BC/8; nt++ {
		//gocu:unroll
		for e := int32(0); e < 4; e++ {
			x := s[nt][e]
			if masked && j*FAB64BC+nt*8+2*qd+e%2 > rowA+8*(e/2) {
				x = negInf
				s[nt][e] = x
			}
			if x > m[e/2] {
				m[e/2] = x
			}
		}
	}
	var corr [2]float32
	//gocu:unroll
	for hh := 0; hh < 2; hh++ {
		if o := kernel.ShflXor(t, kernel.FullMask, m[hh], 1); o > m[hh] {
			m[hh] = o
		}
		if o := kernel.ShflXor(t, kernel.FullMask, m[hh], 2); o > m[hh] {
			m[hh] = o
		}
		mn := m[hh] * sl2
		if mx[hh] > mn {
			mn = mx[hh]
		}
		corr[hh] = kernel.FastExp2(mx[hh] - mn)
		mx[hh] = mn
		sum[hh] *= corr[hh]
	}
	//gocu:unroll
	for nt := int32(0); nt < FAB64BC/8; nt++ {
		//gocu:unroll
		for e := int32(0); e < 4; e++ {
			p := kernel.FastExp2(kernel.FMA(s[nt][e], sl2, -mx[e/2]))
			s[nt][e] = p
			sum[e/2] += p
		}
	}
	//gocu:unroll
	for dt := 0; dt < fab64D/8; dt++ {
		acc[dt][0] *= corr[0]
		acc[dt][1] *= corr[0]
		acc[dt][2] *= corr[1]
		acc[dt][3] *= corr[1]
	}

	// O += P V: P's accumulator tiles are already A fragments' rows.
	var pa [FAB64BC / 16]kernel.FragA
	//gocu:unroll
	for kk := int32(0); kk < FAB64BC/16; kk++ {
		pa[kk] = kernel.FragA{
			kernel.PackBFloat16x2(s[2*kk][0], s[2*kk][1]), kernel.PackBFloat16x2(s[2*kk][2], s[2*kk][3]),
			kernel.PackBFloat16x2(s[2*kk+1][0], s[2*kk+1][1]), kernel.PackBFloat16x2(s[2*kk+1][2], s[2*kk+1][3]),
		}
	}
	//gocu:unroll
	for j4 := int32(0); j4 < 4; j4++ {
		vb := sm[vs0+vOff[j4]:]
		//gocu:unroll
		for jj := int32(0); jj < fab64D/64; jj++ {
			nd := 4*jj + j4
			//gocu:unroll
			for kk := int32(0); kk < FAB64BC/16; kk++ {
				vf := kernel.LdMatrixX4Trans(t, vb[kk*16*fab64D+jj*64:])
				acc[2*nd] = kernel.MMABF16(t, pa[kk], kernel.FragB{vf[0], vf[1]}, acc[2*nd])
				acc[2*nd+1] = kernel.MMABF16(t, pa[kk], kernel.FragB{vf[2], vf[3]}, acc[2*nd+1])
			}
		}
	}
	return acc, mx, sum
}

// fab64LoadKV starts the copies of the K and V tiles of keys kv0.. into
// buffer st (0 or 1): the thread's chunk of every fab64Rows-th row.
func fab64LoadKV(t *kernel.Thread, sm, k, v []kernel.BFloat16, goff int, soff, kv0, st int32) {
	ks := fab64Q + st*2*fab64KV + soff
	g := goff + int(kv0)*fab64D
	//gocu:unroll
	for i := int32(0); i < FAB64BC/fab64Rows; i++ {
		kernel.CpAsync(t, sm[ks+i*fab64Rows*fab64D:], k[g+int(i*fab64Rows)*fab64D:])
		kernel.CpAsync(t, sm[ks+fab64KV+i*fab64Rows*fab64D:], v[g+int(i*fab64Rows)*fab64D:])
	}
}
