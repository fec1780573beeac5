package lecture

import (
	"math"

	"github.com/gocu-dev/gocu/kernel"
)

// The tiling of the attention kernels (flash64.go is FlashAttention128 for
// head dimension 64, made from this file by tools/flashgen.sh).
const (
	FlashWarps   = 4               // warps per block, 16 query rows each
	FlashThreads = FlashWarps * 32 // the block size
	FlashBR      = FlashWarps * 16 // query rows per block
	FlashBC      = 64              // keys and values per tile
)

// log2e turns exp into exp2.
const log2e = 1.4426950408889634

// The shared memory of FlashAttention128.
const (
	fa128D     = 128              // head dimension
	fa128Q     = FlashBR * fa128D // elements of the Q tile
	fa128KV    = FlashBC * fa128D // elements of one K or V tile
	fa128Chunk = fa128D / 8       // 16-byte chunks per row
	fa128Rows  = FlashThreads / fa128Chunk
	// Flash128Shared is the dynamic shared memory of FlashAttention128 in
	// bytes: Q, and K and V twice (80 KiB).
	Flash128Shared = (fa128Q + 4*fa128KV) * 2
)

// FlashAttention128 is the forward pass of attention, o = softmax(q kᵀ *
// scale) v, for bf16 q, k, v and o of shape [batch*heads][seq][128]
// (contiguous, as torch lays out [B, H, S, D]), with causal masking (a
// query attends to keys at or before its position) when causal is true.
// It is FlashAttention-2's algorithm on the tensor cores (mma.sync, so it
// runs on every GPU since Ampere):
//
//   - a block takes FlashBR = 64 query rows of one head; each of its 4
//     warps owns 16 rows, whose Q fragments stay in registers for the
//     whole kernel. With launch bounds (128, 2) two blocks share an SM, so
//     that one block's softmax overlaps the other's matrix products;
//   - K and V stream through shared memory in tiles of 64 keys, double
//     buffered by kernel.CpAsync: the next tile loads while the tensor
//     cores work on this one;
//   - per tile, S = Q Kᵀ (kernel.MMABF16, K fragments by kernel.LdMatrixX4),
//     then the online softmax on S's fragment elements directly, in the
//     registers that hold them (row maxima by two ShflXor among the four
//     lanes of a row), then O += P V with P rounded to bf16 and repacked
//     from the accumulator layout into A fragments without moving it
//     (kernel.PackBFloat16x2) and V by kernel.LdMatrixX4Trans;
//   - the row maximum is taken on the raw scores by compare and select,
//     and the scale folds into the exponent: p = 2^(s·scale·log2e − m) is
//     one FMA and one kernel.FastExp2 per score; the running maximum and
//     sum rescale O once per tile, and O is divided by the sum and
//     rounded to bf16 once at the end;
//   - causal blocks skip the tiles above the diagonal and run the longest
//     rows first; only the tiles on the diagonal are masked: the others
//     run a tile body without the mask, specialised by a constant
//     argument;
//   - the ldmatrix addresses are per-lane offsets computed once: inside a
//     tile every address is one of four slices plus a constant.
//
// seq must be a multiple of FlashBR and of FlashBC. Launch
// FlashAttentionConfig(batch*heads, seq, 128): (seq/FlashBR, batch*heads)
// blocks of FlashThreads threads with Flash128Shared bytes of dynamic
// shared memory.
//
//gocu:kernel
//gocu:noalias
//gocu:launch_bounds 128 2
func FlashAttention128(t *kernel.Thread, q, k, v, o []kernel.BFloat16, seq int32, scale float32, causal bool) {
	sm := kernel.DynamicShared[kernel.BFloat16](t)
	tid := t.ThreadIdx.X
	warp, lane := tid/32, tid%32
	g, qd := lane/4, lane%4
	qtile := t.BlockIdx.X
	if causal { // the longest rows first
		qtile = t.GridDim.X - 1 - t.BlockIdx.X
	}
	q0 := qtile * FlashBR
	head := int(t.BlockIdx.Y) * int(seq) * fa128D
	sl2 := scale * log2e

	// Each thread copies chunk cc of rows cr, cr+fa128Rows, ...: the same
	// swizzled column in every row it copies.
	cr, cc := tid/fa128Chunk, tid%fa128Chunk
	soff := cr*fa128D + (cc^(cr&7))*8
	goff := head + int(cr)*fa128D + int(cc)*8
	//gocu:unroll
	for i := int32(0); i < FlashBR/fa128Rows; i++ {
		kernel.CpAsync(t, sm[soff+i*fa128Rows*fa128D:], q[goff+int(q0+i*fa128Rows)*fa128D:])
	}
	ntiles, nfull := seq/FlashBC, seq/FlashBC
	if causal {
		ntiles = (q0 + FlashBR) / FlashBC // through the diagonal
		nfull = q0 / FlashBC              // wholly below it
	}
	fa128LoadKV(t, sm, k, v, goff, soff, 0, 0)
	kernel.CpAsyncCommit(t)
	kernel.CpAsyncWait(t, 0)
	t.SyncThreads()

	// The warp's 16 rows of Q as 8 A fragments (k = d in steps of 16).
	var qf [fa128D / 16]kernel.FragA
	lr, lc := lane%16, lane/16
	//gocu:unroll
	for ks := int32(0); ks < fa128D/16; ks++ {
		r := warp*16 + lr
		ch := ks*2 + lc
		qf[ks] = kernel.LdMatrixX4(t, sm[r*fa128D+(ch^(r&7))*8:])
	}

	// Per-lane ldmatrix offsets. A row's chunk c is stored at c^(row&7);
	// every row a lane names has row&7 == lane&7, so chunk 2s+b lands at
	// 2(s^h) + (b^lane)&1 with h = (lane&7)/2, and for s = 4j'+j that is
	// offset j (one of four registers) plus 64j' (a constant).
	l7 := lane % 8
	h := l7 / 2
	rowK := (l7+8*(lane/16))*fa128D + 8*(((lane/8)^l7)&1) // K, not transposed: lanes 8-15 take chunk 2s+1
	rowV := lr*fa128D + 8*((lc^l7)&1)                     // V, transposed: lanes 16-31 take chunk 2s+1
	var kOff, vOff [4]int32
	//gocu:unroll
	for j := int32(0); j < 4; j++ {
		kOff[j] = rowK + 16*(j^h)
		vOff[j] = rowV + 16*(j^h)
	}

	var acc [fa128D / 8]kernel.FragC
	negInf := float32(math.Inf(-1))
	mx := [2]float32{negInf, negInf} // running maxima of rows g and g+8 (log2 domain, scaled)
	sum := [2]float32{0, 0}          // this lane's part of the running sums
	rowA := q0 + warp*16 + g         // the lane's two query rows: rowA and rowA+8
	for j := int32(0); j < nfull; j++ {
		acc, mx, sum = fa128Tile(t, sm, k, v, goff, soff, qf, kOff, vOff, acc, mx, sum, j, ntiles, rowA, sl2, false)
	}
	for j := nfull; j < ntiles; j++ {
		acc, mx, sum = fa128Tile(t, sm, k, v, goff, soff, qf, kOff, vOff, acc, mx, sum, j, ntiles, rowA, sl2, true)
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
	for dt := int32(0); dt < fa128D/8; dt++ {
		col := int(dt*8 + 2*qd)
		o2[(head+int(rowA)*fa128D+col)/2] = kernel.ToBFloat16x2(acc[dt][0]*sum[0], acc[dt][1]*sum[0])
		o2[(head+int(rowA+8)*fa128D+col)/2] = kernel.ToBFloat16x2(acc[dt][2]*sum[1], acc[dt][3]*sum[1])
	}
}

// fa128Tile runs tile j of FlashAttention128 for one warp: it waits for the
// tile's K and V, starts the copies of tile j+1, and updates the running
// output, maxima and sums. masked applies the causal mask (a constant at
// each call, so each call site compiles to its own body).
func fa128Tile(t *kernel.Thread, sm, k, v []kernel.BFloat16, goff int, soff int32, qf [fa128D / 16]kernel.FragA, kOff, vOff [4]int32,
	acc [fa128D / 8]kernel.FragC, mx, sum [2]float32, j, ntiles, rowA int32, sl2 float32, masked bool) ([fa128D / 8]kernel.FragC, [2]float32, [2]float32) {
	if j > 0 {
		kernel.CpAsyncWait(t, 0)
		t.SyncThreads() // tile j is in; everyone is done with tile j-1
	}
	if j+1 < ntiles {
		fa128LoadKV(t, sm, k, v, goff, soff, (j+1)*FlashBC, (j+1)%2)
	}
	kernel.CpAsyncCommit(t)
	ks0 := fa128Q + (j%2)*2*fa128KV // this tile's K; V follows it
	vs0 := ks0 + fa128KV

	// S = Q Kᵀ for the warp's 16 rows and the tile's keys, k-step ks =
	// 4jj + j read through the j-th of four per-lane slices: every
	// ldmatrix address is a register plus a constant.
	var s [FlashBC / 8]kernel.FragC
	//gocu:unroll
	for j4 := int32(0); j4 < 4; j4++ {
		kb := sm[ks0+kOff[j4]:]
		//gocu:unroll
		for jj := int32(0); jj < fa128D/64; jj++ {
			//gocu:unroll
			for nj := int32(0); nj < FlashBC/16; nj++ {
				kf := kernel.LdMatrixX4(t, kb[nj*16*fa128D+jj*64:])
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
	for nt := int32(0); nt < FlashBC/8; nt++ {
		//gocu:unroll
		for e := int32(0); e < 4; e++ {
			x := s[nt][e]
			if masked && j*FlashBC+nt*8+2*qd+e%2 > rowA+8*(e/2) {
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
	for nt := int32(0); nt < FlashBC/8; nt++ {
		//gocu:unroll
		for e := int32(0); e < 4; e++ {
			p := kernel.FastExp2(kernel.FMA(s[nt][e], sl2, -mx[e/2]))
			s[nt][e] = p
			sum[e/2] += p
		}
	}
	//gocu:unroll
	for dt := 0; dt < fa128D/8; dt++ {
		acc[dt][0] *= corr[0]
		acc[dt][1] *= corr[0]
		acc[dt][2] *= corr[1]
		acc[dt][3] *= corr[1]
	}

	// O += P V: P's accumulator tiles are already A fragments' rows.
	var pa [FlashBC / 16]kernel.FragA
	//gocu:unroll
	for kk := int32(0); kk < FlashBC/16; kk++ {
		pa[kk] = kernel.FragA{
			kernel.PackBFloat16x2(s[2*kk][0], s[2*kk][1]), kernel.PackBFloat16x2(s[2*kk][2], s[2*kk][3]),
			kernel.PackBFloat16x2(s[2*kk+1][0], s[2*kk+1][1]), kernel.PackBFloat16x2(s[2*kk+1][2], s[2*kk+1][3]),
		}
	}
	//gocu:unroll
	for j4 := int32(0); j4 < 4; j4++ {
		vb := sm[vs0+vOff[j4]:]
		//gocu:unroll
		for jj := int32(0); jj < fa128D/64; jj++ {
			nd := 4*jj + j4
			//gocu:unroll
			for kk := int32(0); kk < FlashBC/16; kk++ {
				vf := kernel.LdMatrixX4Trans(t, vb[kk*16*fa128D+jj*64:])
				acc[2*nd] = kernel.MMABF16(t, pa[kk], kernel.FragB{vf[0], vf[1]}, acc[2*nd])
				acc[2*nd+1] = kernel.MMABF16(t, pa[kk], kernel.FragB{vf[2], vf[3]}, acc[2*nd+1])
			}
		}
	}
	return acc, mx, sum
}

// fa128LoadKV starts the copies of the K and V tiles of keys kv0.. into
// buffer st (0 or 1): the thread's chunk of every fa128Rows-th row.
func fa128LoadKV(t *kernel.Thread, sm, k, v []kernel.BFloat16, goff int, soff, kv0, st int32) {
	ks := fa128Q + st*2*fa128KV + soff
	g := goff + int(kv0)*fa128D
	//gocu:unroll
	for i := int32(0); i < FlashBC/fa128Rows; i++ {
		kernel.CpAsync(t, sm[ks+i*fa128Rows*fa128D:], k[g+int(i*fa128Rows)*fa128D:])
		kernel.CpAsync(t, sm[ks+fa128KV+i*fa128Rows*fa128D:], v[g+int(i*fa128Rows)*fa128D:])
	}
}
