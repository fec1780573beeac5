package attn

import (
	"math"

	"github.com/gocu-dev/gocu/kernel"
)

// The tiling of fwd128WG, the forward pass on Hopper's warpgroup MMA.
const (
	wgRows     = 128            // query rows per block: two warpgroups of 64
	wgKeys     = 128            // keys per tile
	wgThreads  = 256            // two warpgroups
	wgHalf     = 128 * 64       // elements of one half (64 columns) of a 128-row tile
	wgTile     = 2 * wgHalf     // elements of a 128 x 128 tile
	wgStages   = 3              // k and v tiles in shared memory
	wgKV       = wgTile         // the first k tile; v follows each k
	wgLoadRows = wgThreads / 16 // rows one pass of the block copies
	// fwdWGMem is fwd128WG's dynamic shared memory in bytes (224 KiB): q,
	// then three stages of k and v.
	fwdWGMem = (wgTile + wgStages*2*wgTile) * 2
)

// fwd128WG is fwd128 (the same arguments and results) written for
// Hopper's warpgroup MMA, as FlashAttention-3 computes it:
//
//   - a block of two warpgroups takes 128 query rows of one head, 64 per
//     warpgroup; q stays in shared memory, and S = q kᵀ is one chain of
//     eight m64n128k16 MMAs (kernel.WGMMABF16) with both operands read
//     through descriptors;
//   - k and v stream in tiles of 128 keys through three stages, copied by
//     kernel.CpAsyncZfill one tile ahead; every tile (q's too) is stored
//     as two 64-column halves of 128-byte rows with the 128-byte swizzle,
//     which is K-major for k and MN-major for v;
//   - o += P v takes P from registers (kernel.WGMMABF16RS): the softmax
//     of tile j is computed while the MMAs of P v for tile j-1 run, and o
//     is rescaled once they complete;
//   - causal blocks skip the tiles above the diagonal and run the longest
//     rows first; only the diagonal tile and a partial last tile are
//     masked, by a body specialised with a constant argument.
//
// A stage is refilled two tiles after it was read: by then every
// warpgroup has waited for the MMAs that read it, before the barrier that
// precedes the copies. scale must be positive. Launch (⌈seq/128⌉, bh)
// blocks of wgThreads threads with fwdWGMem bytes of dynamic shared
// memory, on sm_90a.
//
//gocu:kernel
//gocu:noalias
//gocu:launch_bounds 256 1
func fwd128WG(t *kernel.Thread, q, k, v, o []kernel.BFloat16, lse []float32, ql, kl, vl, ol layout, heads, seq int32, scale float32, causal bool) {
	sm := kernel.DynamicShared[kernel.BFloat16](t)
	tid := t.ThreadIdx.X
	wg := tid / 128
	lane := tid % 32
	g := lane / 4
	qtile := t.BlockIdx.X
	if causal { // the longest rows first
		qtile = t.GridDim.X - 1 - t.BlockIdx.X
	}
	q0 := qtile * wgRows
	bh := int(t.BlockIdx.Y)
	qh, kh, vh := q[ql.head(int32(bh), heads):], k[kl.head(int32(bh), heads):], v[vl.head(int32(bh), heads):]
	sl2 := scale * log2e

	// Each thread copies chunk cc of rows cr, cr+16, ...: the chunk's half
	// cc/8, and within the half's 128-byte rows chunk cc%8 stored at
	// (cc%8)^(row%8), the same in every row it copies.
	cr, cc := tid/16, tid%16
	soff := (cc/8)*wgHalf + cr*64 + ((cc%8)^(cr&7))*8
	ntiles, nfull := (seq+wgKeys-1)/wgKeys, seq/wgKeys
	if causal {
		ntiles = min(ntiles, (q0+wgRows+wgKeys-1)/wgKeys) // through the diagonal
		nfull = min(nfull, q0/wgKeys)                     // wholly below it
	}
	loadWG(t, sm, 0, qh, ql.S, q0, seq, soff, cr, cc)
	loadWG(t, sm, wgKV, kh, kl.S, 0, seq, soff, cr, cc)
	loadWG(t, sm, wgKV+wgTile, vh, vl.S, 0, seq, soff, cr, cc)
	kernel.CpAsyncCommit(t)

	// Descriptors. q's rows 64wg.. K-major; a k-step of 16 columns moves
	// 32 bytes within a half, and the fifth moves to the next half. k
	// likewise; v MN-major, its 64-column halves wgHalf·2 bytes apart
	// (lbo) and a k-step of 16 keys 16 rows of 128 bytes on.
	dq := kernel.WGDescriptor(t, sm[wg*64*64:], kernel.WGSwizzle128, 16, 1024)
	dk := kernel.WGDescriptor(t, sm[wgKV:], kernel.WGSwizzle128, 16, 1024)
	dv := kernel.WGDescriptor(t, sm[wgKV+wgTile:], kernel.WGSwizzle128, wgHalf*2, 1024)

	negInf := float32(math.Inf(-1))
	mx := [2]float32{negInf, negInf} // running maxima of rows g and g+8 (log2 domain, scaled)
	sum := [2]float32{0, 0}          // this lane's part of the running sums
	rowA := q0 + wg*64 + (tid/32)%4*16 + g
	lim := [2]int32{seq, seq} // the first key each row does not see
	if causal {
		lim = [2]int32{min(rowA+1, seq), min(rowA+9, seq)}
	}

	// Tile 0: S, then its softmax; P v waits for the next tile's S.
	kernel.CpAsyncWait(t, 0)
	kernel.FenceProxyAsync(t)
	t.SyncThreads()
	if ntiles > 1 {
		loadWG(t, sm, wgKV+2*wgTile, kh, kl.S, wgKeys, seq, soff, cr, cc)
		loadWG(t, sm, wgKV+3*wgTile, vh, vl.S, wgKeys, seq, soff, cr, cc)
	}
	kernel.CpAsyncCommit(t)
	var s, acc kernel.WGAcc128
	kernel.WGFence(t)
	//gocu:unroll
	for ks := int32(0); ks < d128/16; ks++ {
		kernel.WGMMABF16(t, &s, dq+wgStep(ks), dk+wgStep(ks), false, ks > 0)
	}
	kernel.WGCommit(t)
	kernel.WGWait(t, 0, &s)
	var corr [2]float32
	if nfull > 0 {
		s, mx, sum, corr = softmaxWG(t, s, mx, sum, 0, lim, sl2, false)
	} else {
		s, mx, sum, corr = softmaxWG(t, s, mx, sum, 0, lim, sl2, true)
	}
	p := packP(s)

	for j := int32(1); j < ntiles; j++ {
		kernel.CpAsyncWait(t, 0)
		kernel.FenceProxyAsync(t)
		t.SyncThreads() // tile j is in; every warpgroup waited for the MMAs of tile j-2
		if j+1 < ntiles {
			nb := wgKV + ((j+1)%wgStages)*2*wgTile
			loadWG(t, sm, nb, kh, kl.S, (j+1)*wgKeys, seq, soff, cr, cc)
			loadWG(t, sm, nb+wgTile, vh, vl.S, (j+1)*wgKeys, seq, soff, cr, cc)
		}
		kernel.CpAsyncCommit(t)

		// S of tile j, then o += P v of tile j-1, as two groups: the wait
		// for the first leaves the second running under the softmax.
		st := kernel.WGDesc(j%wgStages) * (2 * wgTile * 2 / 16)
		pst := kernel.WGDesc((j-1)%wgStages) * (2 * wgTile * 2 / 16)
		kernel.WGFence(t)
		//gocu:unroll
		for ks := int32(0); ks < d128/16; ks++ {
			kernel.WGMMABF16(t, &s, dq+wgStep(ks), dk+st+wgStep(ks), false, ks > 0)
		}
		kernel.WGCommit(t)
		//gocu:unroll
		for ks := int32(0); ks < wgKeys/16; ks++ {
			kernel.WGMMABF16RS(t, &acc, p[ks], dv+pst+kernel.WGDesc(ks*16*128/16), true, true)
		}
		kernel.WGCommit(t)
		kernel.WGWait(t, 1, &s)
		if j < nfull {
			s, mx, sum, corr = softmaxWG(t, s, mx, sum, j, lim, sl2, false)
		} else {
			s, mx, sum, corr = softmaxWG(t, s, mx, sum, j, lim, sl2, true)
		}
		kernel.WGWait(t, 0, &acc)
		//gocu:unroll
		for i := 0; i < 64; i += 4 {
			acc[i] *= corr[0]
			acc[i+1] *= corr[0]
			acc[i+2] *= corr[1]
			acc[i+3] *= corr[1]
		}
		p = packP(s)
	}
	kernel.WGFence(t)
	pst := kernel.WGDesc((ntiles-1)%wgStages) * (2 * wgTile * 2 / 16)
	//gocu:unroll
	for ks := int32(0); ks < wgKeys/16; ks++ {
		kernel.WGMMABF16RS(t, &acc, p[ks], dv+pst+kernel.WGDesc(ks*16*128/16), true, true)
	}
	kernel.WGCommit(t)
	kernel.WGWait(t, 0, &acc)

	// The row sums over the four lanes of each row, the logsumexp, then
	// o / sum.
	qd := lane % 4
	var inv [2]float32
	//gocu:unroll
	for hh := 0; hh < 2; hh++ {
		sum[hh] += kernel.ShflXor(t, kernel.FullMask, sum[hh], 1)
		sum[hh] += kernel.ShflXor(t, kernel.FullMask, sum[hh], 2)
		inv[hh] = 1 / sum[hh]
		if r := rowA + 8*int32(hh); qd == 0 && r < seq {
			lse[bh*int(seq)+int(r)] = (mx[hh] + kernel.Log2(sum[hh])) * ln2
		}
	}
	o2 := kernel.Reinterpret[kernel.BFloat16x2](o)
	head := ol.head(int32(bh), heads)
	//gocu:unroll
	for dt := int32(0); dt < d128/8; dt++ {
		col := int(dt*8 + 2*qd)
		if rowA < seq {
			o2[(head+int(rowA)*int(ol.S)+col)/2] = kernel.ToBFloat16x2(acc[4*dt]*inv[0], acc[4*dt+1]*inv[0])
		}
		if rowA+8 < seq {
			o2[(head+int(rowA+8)*int(ol.S)+col)/2] = kernel.ToBFloat16x2(acc[4*dt+2]*inv[1], acc[4*dt+3]*inv[1])
		}
	}
}

// wgStep is the descriptor offset of k-step ks of a q or k tile: 32
// bytes within a 64-column half, four per half.
func wgStep(ks int32) kernel.WGDesc {
	return kernel.WGDesc((ks/4)*(wgHalf*2/16) + (ks%4)*2)
}

// packP rounds the probabilities to bf16 A fragments: accumulator
// elements 8j to 8j+7 make the fragment of keys 16j to 16j+15.
func packP(s kernel.WGAcc128) [wgKeys / 16]kernel.FragA {
	var p [wgKeys / 16]kernel.FragA
	//gocu:unroll
	for j := 0; j < wgKeys/16; j++ {
		p[j] = kernel.FragA{
			kernel.PackBFloat16x2(s[8*j], s[8*j+1]), kernel.PackBFloat16x2(s[8*j+2], s[8*j+3]),
			kernel.PackBFloat16x2(s[8*j+4], s[8*j+5]), kernel.PackBFloat16x2(s[8*j+6], s[8*j+7]),
		}
	}
	return p
}

// softmaxWG runs the online softmax on the scores s of key tile j: it
// returns the probabilities in s's place, the new running maxima and sums,
// and the factors that rescale the output. masked masks the keys at or
// past lim (a constant at each call, so each call site compiles to its
// own body).
func softmaxWG(t *kernel.Thread, s kernel.WGAcc128, mx, sum [2]float32, j int32, lim [2]int32, sl2 float32, masked bool) (kernel.WGAcc128, [2]float32, [2]float32, [2]float32) {
	negInf := float32(math.Inf(-1))
	qd := t.ThreadIdx.X % 4
	m := [2]float32{negInf, negInf}
	//gocu:unroll
	for i := int32(0); i < 64; i++ {
		x := s[i]
		if masked && j*wgKeys+(i/4)*8+2*qd+i%2 >= lim[(i%4)/2] {
			x = negInf
			s[i] = x
		}
		if x > m[(i%4)/2] {
			m[(i%4)/2] = x
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
	for i := int32(0); i < 64; i++ {
		pr := kernel.FastExp2(kernel.FMA(s[i], sl2, -mx[(i%4)/2]))
		s[i] = pr
		sum[(i%4)/2] += pr
	}
	return s, mx, sum, corr
}

// loadWG starts the copies of rows r0..r0+127 of one head x (rows rs
// elements apart) into the tile at sm[dst:]: the thread's chunk of every
// wgLoadRows-th row. Rows at or past seq are filled with zeros.
func loadWG(t *kernel.Thread, sm []kernel.BFloat16, dst int32, x []kernel.BFloat16, rs, r0, seq, soff, cr, cc int32) {
	//gocu:unroll
	for i := int32(0); i < 128/wgLoadRows; i++ {
		r := r0 + cr + i*wgLoadRows
		ok := r < seq
		if !ok {
			r = seq - 1 // a valid address that is not read
		}
		kernel.CpAsyncZfill(t, sm[dst+soff+i*wgLoadRows*64:], x[int(r)*int(rs)+int(cc)*8:], ok)
	}
}
