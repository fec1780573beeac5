package lecture

import (
	"math"

	"github.com/gocu-dev/gocu/kernel"
)

// The tiling of FlashAttention128 (flash64.go is the same kernel for head
// dimension 64, made from this file by tools/flashgen.sh).
const (
	fa128D     = 128 // head dimension
	FlashBR    = 128 // query rows per block: 8 warps of 16 rows
	FlashBC    = 64  // keys and values per tile
	FlashWarps = 8
	// FlashThreads is the block size of the attention kernels.
	FlashThreads = FlashWarps * 32

	fa128Q     = FlashBR * fa128D // elements of the Q tile
	fa128KV    = FlashBC * fa128D // elements of one K or V tile
	fa128Chunk = fa128D / 8       // 16-byte chunks per row
	// Flash128Shared is the dynamic shared memory of FlashAttention128 in
	// bytes: Q, and K and V twice (96 KiB).
	Flash128Shared = (fa128Q + 4*fa128KV) * 2
)

// log2e turns exp into exp2.
const log2e = 1.4426950408889634

// FlashAttention128 is the forward pass of attention, o = softmax(q kᵀ *
// scale) v, for bf16 q, k, v and o of shape [batch*heads][seq][128]
// (contiguous, as torch lays out [B, H, S, D]), with causal masking (a
// query attends to keys at or before its position) when causal is true.
// It is FlashAttention-2's algorithm on the tensor cores:
//
//   - a block takes 128 query rows of one head; each of its 8 warps owns
//     16 rows, whose Q fragments stay in registers for the whole kernel;
//   - K and V stream through shared memory in tiles of 64 keys, double
//     buffered by kernel.CpAsync: the next tile loads while the tensor
//     cores work on this one;
//   - per tile, S = Q Kᵀ (kernel.MMABF16, K fragments by kernel.LdMatrixX4),
//     then the online softmax on S's fragment elements directly, in the
//     registers that hold them (row maxima by two ShflXor among the four
//     lanes of a row), then O += P V with P rounded to bf16 and repacked
//     from the accumulator layout into A fragments without moving it
//     (kernel.PackBFloat16x2) and V by kernel.LdMatrixX4Trans;
//   - the running max and sum rescale O once per tile; O is divided by the
//     sum and rounded to bf16 once at the end; scores are kept in the log2
//     domain so each exponential is one exp2;
//   - causal blocks skip the tiles above the diagonal, mask the diagonal
//     ones, and run the longest rows first.
//
// seq must be a multiple of 128. Launch FlashConfig: (seq/128,
// batch*heads) blocks of FlashThreads threads with Flash128Shared bytes
// of dynamic shared memory.
//
//gocu:kernel
//gocu:noalias
//gocu:launch_bounds 256 1
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
	negInf := float32(math.Inf(-1))

	// Q, then the first K and V tiles, as one group.
	//gocu:unroll
	for i := int32(0); i < fa128Q/8/FlashThreads; i++ {
		c := tid + i*FlashThreads
		r, ch := c/fa128Chunk, c%fa128Chunk
		kernel.CpAsync(t, sm[r*fa128D+(ch^(r&7))*8:], q[head+int(q0+r)*fa128D+int(ch)*8:])
	}
	ntiles := seq / FlashBC
	if causal {
		ntiles = (q0 + FlashBR) / FlashBC
	}
	faLoadKV128(t, sm, k, v, head, 0, 0)
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

	var acc [fa128D / 8]kernel.FragC
	mx := [2]float32{negInf, negInf} // running maxima of rows g and g+8 (log2 domain)
	sum := [2]float32{0, 0}          // this lane's part of the running sums
	rowA := q0 + warp*16 + g         // the lane's two query rows: rowA and rowA+8
	for j := int32(0); j < ntiles; j++ {
		if j > 0 {
			kernel.CpAsyncWait(t, 0)
			t.SyncThreads() // tile j is in; everyone is done with tile j-1
		}
		if j+1 < ntiles {
			faLoadKV128(t, sm, k, v, head, (j+1)*FlashBC, (j+1)%2)
		}
		kernel.CpAsyncCommit(t)
		ks0 := fa128Q + (j%2)*2*fa128KV // this tile's K; V follows it
		vs0 := ks0 + fa128KV

		// S = Q Kᵀ for the warp's 16 rows and the tile's 64 keys.
		var s [FlashBC / 8]kernel.FragC
		//gocu:unroll
		for ks := int32(0); ks < fa128D/16; ks++ {
			//gocu:unroll
			for nj := int32(0); nj < FlashBC/16; nj++ {
				r := nj*16 + lane%8 + 8*(lane/16)
				ch := ks*2 + (lane/8)%2
				kf := kernel.LdMatrixX4(t, sm[ks0+r*fa128D+(ch^(r&7))*8:])
				s[2*nj] = kernel.MMABF16(t, qf[ks], kernel.FragB{kf[0], kf[1]}, s[2*nj])
				s[2*nj+1] = kernel.MMABF16(t, qf[ks], kernel.FragB{kf[2], kf[3]}, s[2*nj+1])
			}
		}

		// Online softmax, in the log2 domain.
		diag := causal && (j+1)*FlashBC > q0+warp*16
		var tmax [2]float32
		tmax[0], tmax[1] = mx[0], mx[1]
		//gocu:unroll
		for nt := int32(0); nt < FlashBC/8; nt++ {
			//gocu:unroll
			for e := int32(0); e < 4; e++ {
				x := s[nt][e] * sl2
				if diag && j*FlashBC+nt*8+2*qd+e%2 > rowA+8*(e/2) {
					x = negInf
				}
				s[nt][e] = x
				tmax[e/2] = kernel.Max(tmax[e/2], x)
			}
		}
		//gocu:unroll
		for h := 0; h < 2; h++ {
			tmax[h] = kernel.Max(tmax[h], kernel.ShflXor(t, kernel.FullMask, tmax[h], 1))
			tmax[h] = kernel.Max(tmax[h], kernel.ShflXor(t, kernel.FullMask, tmax[h], 2))
		}
		var corr [2]float32
		//gocu:unroll
		for h := 0; h < 2; h++ {
			corr[h] = kernel.Exp2(mx[h] - tmax[h])
			mx[h] = tmax[h]
			sum[h] *= corr[h]
		}
		//gocu:unroll
		for nt := int32(0); nt < FlashBC/8; nt++ {
			//gocu:unroll
			for e := int32(0); e < 4; e++ {
				p := kernel.Exp2(s[nt][e] - mx[e/2])
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
		//gocu:unroll
		for kk := int32(0); kk < FlashBC/16; kk++ {
			pa := kernel.FragA{
				kernel.PackBFloat16x2(s[2*kk][0], s[2*kk][1]), kernel.PackBFloat16x2(s[2*kk][2], s[2*kk][3]),
				kernel.PackBFloat16x2(s[2*kk+1][0], s[2*kk+1][1]), kernel.PackBFloat16x2(s[2*kk+1][2], s[2*kk+1][3]),
			}
			//gocu:unroll
			for nd := int32(0); nd < fa128D/16; nd++ {
				r := kk*16 + lr
				ch := nd*2 + lc
				vf := kernel.LdMatrixX4Trans(t, sm[vs0+r*fa128D+(ch^(r&7))*8:])
				acc[2*nd] = kernel.MMABF16(t, pa, kernel.FragB{vf[0], vf[1]}, acc[2*nd])
				acc[2*nd+1] = kernel.MMABF16(t, pa, kernel.FragB{vf[2], vf[3]}, acc[2*nd+1])
			}
		}
	}

	// The row sums over the four lanes of each row, then O / sum.
	//gocu:unroll
	for h := 0; h < 2; h++ {
		sum[h] += kernel.ShflXor(t, kernel.FullMask, sum[h], 1)
		sum[h] += kernel.ShflXor(t, kernel.FullMask, sum[h], 2)
		sum[h] = 1 / sum[h]
	}
	o2 := kernel.Reinterpret[kernel.BFloat16x2](o)
	//gocu:unroll
	for dt := int32(0); dt < fa128D/8; dt++ {
		col := int(dt*8 + 2*qd)
		o2[(head+int(rowA)*fa128D+col)/2] = kernel.ToBFloat16x2(acc[dt][0]*sum[0], acc[dt][1]*sum[0])
		o2[(head+int(rowA+8)*fa128D+col)/2] = kernel.ToBFloat16x2(acc[dt][2]*sum[1], acc[dt][3]*sum[1])
	}
}

// faLoadKV128 starts the copies of the K and V tiles of keys kv0.. into
// buffer st (0 or 1): 64 rows of 16 chunks each, rows swizzled.
func faLoadKV128(t *kernel.Thread, sm, k, v []kernel.BFloat16, head int, kv0, st int32) {
	tid := t.ThreadIdx.X
	ks := fa128Q + st*2*fa128KV
	//gocu:unroll
	for i := int32(0); i < fa128KV/8/FlashThreads; i++ {
		c := tid + i*FlashThreads
		r, ch := c/fa128Chunk, c%fa128Chunk
		off := r*fa128D + (ch^(r&7))*8
		g := head + int(kv0+r)*fa128D + int(ch)*8
		kernel.CpAsync(t, sm[ks+off:], k[g:])
		kernel.CpAsync(t, sm[ks+fa128KV+off:], v[g:])
	}
}
