package attn

import (
	"github.com/gocu-dev/gocu"
	"github.com/gocu-dev/gocu/kernel"
)

// The tiling of the backward pass on warpgroup MMA: blocks of two
// warpgroups take 128 rows (keys for bwdKVWG, queries for bwdQWG), 64 per
// warpgroup, and stream the other side in tiles of 64 rows through
// three stages.
const (
	bwRows   = 64                           // rows of a streamed tile
	bwHalf   = bwRows * 64                  // elements of one 64-column half of it
	bwTile   = 2 * bwHalf                   // elements of a 64 x 128 tile
	bwStages = 3                            // stages of the streamed tiles
	bwTiles  = 2*wgTile + bwStages*2*bwTile // the resident 128-row tiles, then the stages of two
	// bwdWGMem is the dynamic shared memory of bwdKVWG and bwdQWG in
	// bytes (161 KiB): the tiles, and bwdKVWG's statistics of two query
	// tiles.
	bwdWGMem = bwTiles*2 + 2*stats*4
)

// bwdKVWG is bwdKV128 (the same arguments and results) on Hopper's
// warpgroup MMA, as FlashAttention-3's backward pass computes dk and dv:
//
//   - a block of two warpgroups takes 128 keys of one head, 64 per
//     warpgroup, with k and v resident in shared memory, and runs
//     through the query tiles of 64 rows that see them, q and dO in
//     three stages;
//   - with the keys as rows, Sᵀ = k qᵀ and dPᵀ = v dOᵀ are m64n64k16
//     chains with both operands in shared memory;
//   - Pᵀ and dSᵀ = Pᵀ∘(dPᵀ − D) stay in registers, where the accumulator
//     layout is already that of an A operand: dv += Pᵀ dO and dk += dSᵀ q
//     take them through kernel.WGMMABF16RS, with q and dO read MN-major
//     from the same swizzled tiles that fed Sᵀ and dPᵀ K-major.
//
// dv's MMAs run while dSᵀ is computed, and dk's while the next tile's
// Sᵀ and dPᵀ are issued: the wait for Sᵀ completes them. A stage is
// refilled two tiles after it was read, when every warpgroup has passed
// that wait before the barrier that precedes the copies. Launch (⌈seq/128⌉, bh) blocks of wgThreads threads with bwdWGMem
// bytes of dynamic shared memory, on sm_90a.
//
//gocu:kernel
//gocu:noalias
//gocu:launch_bounds 256 1
func bwdKVWG(t *kernel.Thread, q, k, v, do []kernel.BFloat16, lse, dvec []float32, dk, dv []kernel.BFloat16, ql, kl, vl, dol, dkl, dvl layout, heads, seq int32, scale float32, causal bool) {
	sm := kernel.DynamicShared[kernel.BFloat16](t)
	fl := kernel.DynamicShared[float32](t)[bwTiles/2:]
	tid := t.ThreadIdx.X
	wg := tid / 128
	lane := tid % 32
	g, qd := lane/4, lane%4
	k0 := t.BlockIdx.X * wgRows
	bh := int(t.BlockIdx.Y)
	b32 := int32(bh)
	qh, kh, vh, doh := q[ql.head(b32, heads):], k[kl.head(b32, heads):], v[vl.head(b32, heads):], do[dol.head(b32, heads):]
	sl2 := scale * log2e

	// k and v as fwd128WG stores q; the streamed tiles likewise, in
	// halves of 64 rows.
	cr, cc := tid/16, tid%16
	soff := (cc/8)*wgHalf + cr*64 + ((cc%8)^(cr&7))*8
	soff64 := (cc/8)*bwHalf + cr*64 + ((cc%8)^(cr&7))*8
	loadWG(t, sm, 0, kh, kl.S, k0, seq, soff, cr, cc)
	loadWG(t, sm, wgTile, vh, vl.S, k0, seq, soff, cr, cc)
	nq, nfull := (seq+bwRows-1)/bwRows, seq/bwRows
	i0 := int32(0)
	if causal {
		i0 = k0 / bwRows // the first query tile that sees a key of the block
	}
	qb := 2*wgTile + (i0%bwStages)*2*bwTile
	loadBW(t, sm, qb, qh, ql.S, i0*bwRows, seq, soff64)
	loadBW(t, sm, qb+bwTile, doh, dol.S, i0*bwRows, seq, soff64)
	kernel.CpAsyncCommit(t)
	if tid < stats {
		fl[(i0%2)*stats+tid] = rowStat(lse, dvec, bh, seq, i0*bwRows, tid)
	}

	// Descriptors: k's and v's rows 64wg.. K-major (A); q and dO of
	// stage 0 K-major for Sᵀ and dPᵀ, and MN-major for dv and dk, their
	// halves bwHalf·2 bytes apart.
	dka := kernel.WGDescriptor(t, sm[wg*64*64:], kernel.WGSwizzle128, 16, 1024)
	dva := kernel.WGDescriptor(t, sm[wgTile+wg*64*64:], kernel.WGSwizzle128, 16, 1024)
	dqk := kernel.WGDescriptor(t, sm[2*wgTile:], kernel.WGSwizzle128, 16, 1024)
	ddok := kernel.WGDescriptor(t, sm[2*wgTile+bwTile:], kernel.WGSwizzle128, 16, 1024)
	dqm := kernel.WGDescriptor(t, sm[2*wgTile:], kernel.WGSwizzle128, bwHalf*2, 1024)
	ddom := kernel.WGDescriptor(t, sm[2*wgTile+bwTile:], kernel.WGSwizzle128, bwHalf*2, 1024)

	var dkacc, dvacc kernel.WGAcc128
	keyA := k0 + wg*64 + (tid/32)%4*16 + g // the lane's keys: keyA and keyA+8
	for i := i0; i < nq; i++ {
		kernel.CpAsyncWait(t, 0)
		kernel.FenceProxyAsync(t)
		t.SyncThreads() // tile i is in; every warpgroup waited for the MMAs of tile i-2
		if i+1 < nq {
			nb := 2*wgTile + ((i+1)%bwStages)*2*bwTile
			loadBW(t, sm, nb, qh, ql.S, (i+1)*bwRows, seq, soff64)
			loadBW(t, sm, nb+bwTile, doh, dol.S, (i+1)*bwRows, seq, soff64)
			if tid < stats { // its stage was last read before the barrier
				fl[((i+1)%2)*stats+tid] = rowStat(lse, dvec, bh, seq, (i+1)*bwRows, tid)
			}
		}
		kernel.CpAsyncCommit(t)

		st := kernel.WGDesc(i%bwStages) * (2 * bwTile * 2 / 16)
		var s, dp kernel.WGAcc64
		kernel.WGFence(t)
		//gocu:unroll
		for ks := int32(0); ks < d128/16; ks++ {
			kernel.WGMMABF16(t, &s, dka+wgStep(ks), dqk+st+bwStep(ks), false, ks > 0)
		}
		kernel.WGCommit(t)
		//gocu:unroll
		for ks := int32(0); ks < d128/16; ks++ {
			kernel.WGMMABF16(t, &dp, dva+wgStep(ks), ddok+st+bwStep(ks), false, ks > 0)
		}
		kernel.WGCommit(t)
		kernel.WGWait(t, 1, &s)
		fs := (i % 2) * stats
		if causal && i < i0+2 || i >= nfull { // the diagonal, a partial last tile
			s = probsT(t, s, fl[fs:], i, keyA, seq, sl2, causal, true)
		} else {
			s = probsT(t, s, fl[fs:], i, keyA, seq, sl2, causal, false)
		}
		p := pack64(s)
		kernel.WGFence(t)
		//gocu:unroll
		for ks := int32(0); ks < bwRows/16; ks++ {
			kernel.WGMMABF16RS(t, &dvacc, p[ks], ddom+st+kernel.WGDesc(ks*16*128/16), true, true)
		}
		kernel.WGCommit(t)
		kernel.WGWait(t, 1, &dp)
		//gocu:unroll
		for e := int32(0); e < 32; e++ {
			dp[e] = s[e] * (dp[e] - fl[fs+64+(e/4)*8+2*qd+e%2])
		}
		ds := pack64(dp)
		kernel.WGFence(t)
		//gocu:unroll
		for ks := int32(0); ks < bwRows/16; ks++ {
			kernel.WGMMABF16RS(t, &dkacc, ds[ks], dqm+st+kernel.WGDesc(ks*16*128/16), true, true)
		}
		kernel.WGCommit(t)
	}
	kernel.WGWait(t, 0, &dvacc)
	kernel.WGWait(t, 0, &dkacc)

	dk2 := kernel.Reinterpret[kernel.BFloat16x2](dk)
	dv2 := kernel.Reinterpret[kernel.BFloat16x2](dv)
	hk, hv := dkl.head(b32, heads), dvl.head(b32, heads)
	//gocu:unroll
	for dt := int32(0); dt < d128/8; dt++ {
		col := int(dt*8 + 2*qd)
		if keyA < seq {
			dk2[(hk+int(keyA)*int(dkl.S)+col)/2] = kernel.ToBFloat16x2(dkacc[4*dt]*scale, dkacc[4*dt+1]*scale)
			dv2[(hv+int(keyA)*int(dvl.S)+col)/2] = kernel.ToBFloat16x2(dvacc[4*dt], dvacc[4*dt+1])
		}
		if keyA+8 < seq {
			dk2[(hk+int(keyA+8)*int(dkl.S)+col)/2] = kernel.ToBFloat16x2(dkacc[4*dt+2]*scale, dkacc[4*dt+3]*scale)
			dv2[(hv+int(keyA+8)*int(dvl.S)+col)/2] = kernel.ToBFloat16x2(dvacc[4*dt+2], dvacc[4*dt+3])
		}
	}
}

// probsT returns Pᵀ = exp(Sᵀ·scale − lse) for query tile i of bwdKVWG,
// with the tile's logsumexps (log2 domain) at fl. masked zeroes the
// queries past seq and, when causal, those before the lane's keys (a
// constant at each call).
func probsT(t *kernel.Thread, s kernel.WGAcc64, fl []float32, i, keyA, seq int32, sl2 float32, causal, masked bool) kernel.WGAcc64 {
	qd := t.ThreadIdx.X % 4
	//gocu:unroll
	for e := int32(0); e < 32; e++ {
		c := (e/4)*8 + 2*qd + e%2 // the query in the tile
		p := kernel.FastExp2(kernel.FMA(s[e], sl2, -fl[c]))
		if masked {
			if r := i*bwRows + c; r >= seq || causal && r < keyA+8*((e%4)/2) {
				p = 0
			}
		}
		s[e] = p
	}
	return s
}

// bwdQWG is bwdQ128 (the same arguments and results) on Hopper's
// warpgroup MMA: a block of two warpgroups takes 128 query rows of one
// head, 64 per warpgroup, with q and dO resident in shared memory, and
// runs through the key tiles of 64 that they see, k and v in three
// stages. S = q kᵀ and dP = dO vᵀ are m64n64k16 chains from shared
// memory; dS = P∘(dP − D) stays in registers and dq += dS k takes it
// through kernel.WGMMABF16RS, with k read MN-major from the tile that fed
// S. Keeping dq apart from bwdKVWG keeps the pass deterministic: no
// float atomics. Launch as bwdKVWG.
//
//gocu:kernel
//gocu:noalias
//gocu:launch_bounds 256 1
func bwdQWG(t *kernel.Thread, q, k, v, do []kernel.BFloat16, lse, dvec []float32, dq []kernel.BFloat16, ql, kl, vl, dol, dql layout, heads, seq int32, scale float32, causal bool) {
	sm := kernel.DynamicShared[kernel.BFloat16](t)
	tid := t.ThreadIdx.X
	wg := tid / 128
	lane := tid % 32
	g, qd := lane/4, lane%4
	qtile := t.BlockIdx.X
	if causal { // the longest rows first
		qtile = t.GridDim.X - 1 - t.BlockIdx.X
	}
	q0 := qtile * wgRows
	bh := int(t.BlockIdx.Y)
	b32 := int32(bh)
	qh, kh, vh, doh := q[ql.head(b32, heads):], k[kl.head(b32, heads):], v[vl.head(b32, heads):], do[dol.head(b32, heads):]
	sl2 := scale * log2e

	cr, cc := tid/16, tid%16
	soff := (cc/8)*wgHalf + cr*64 + ((cc%8)^(cr&7))*8
	soff64 := (cc/8)*bwHalf + cr*64 + ((cc%8)^(cr&7))*8
	loadWG(t, sm, 0, qh, ql.S, q0, seq, soff, cr, cc)
	loadWG(t, sm, wgTile, doh, dol.S, q0, seq, soff, cr, cc)
	ntiles, nfull := (seq+bwRows-1)/bwRows, seq/bwRows
	if causal {
		ntiles = min(ntiles, (q0+wgRows+bwRows-1)/bwRows) // through the diagonal
		nfull = min(nfull, q0/bwRows)                     // wholly below it
	}
	loadBW(t, sm, 2*wgTile, kh, kl.S, 0, seq, soff64)
	loadBW(t, sm, 2*wgTile+bwTile, vh, vl.S, 0, seq, soff64)
	kernel.CpAsyncCommit(t)

	// The lane's rows, their logsumexps (log2 domain) and D.
	rowA := q0 + wg*64 + (tid/32)%4*16 + g
	var l2, dr [2]float32
	lim := [2]int32{seq, seq} // the first key each row does not see
	//gocu:unroll
	for hh := int32(0); hh < 2; hh++ {
		if r := rowA + 8*hh; r < seq {
			l2[hh] = lse[bh*int(seq)+int(r)] * log2e
			dr[hh] = dvec[bh*int(seq)+int(r)]
			if causal {
				lim[hh] = r + 1
			}
		}
	}

	// Descriptors: q's and dO's rows 64wg.. K-major (A); k and v of stage
	// 0 K-major for S and dP, and k MN-major for dq.
	dqa := kernel.WGDescriptor(t, sm[wg*64*64:], kernel.WGSwizzle128, 16, 1024)
	ddoa := kernel.WGDescriptor(t, sm[wgTile+wg*64*64:], kernel.WGSwizzle128, 16, 1024)
	dkk := kernel.WGDescriptor(t, sm[2*wgTile:], kernel.WGSwizzle128, 16, 1024)
	dvk := kernel.WGDescriptor(t, sm[2*wgTile+bwTile:], kernel.WGSwizzle128, 16, 1024)
	dkm := kernel.WGDescriptor(t, sm[2*wgTile:], kernel.WGSwizzle128, bwHalf*2, 1024)

	var acc kernel.WGAcc128
	for j := int32(0); j < ntiles; j++ {
		kernel.CpAsyncWait(t, 0)
		kernel.FenceProxyAsync(t)
		t.SyncThreads() // tile j is in; every warpgroup waited for the MMAs of tile j-2
		if j+1 < ntiles {
			nb := 2*wgTile + ((j+1)%bwStages)*2*bwTile
			loadBW(t, sm, nb, kh, kl.S, (j+1)*bwRows, seq, soff64)
			loadBW(t, sm, nb+bwTile, vh, vl.S, (j+1)*bwRows, seq, soff64)
		}
		kernel.CpAsyncCommit(t)

		st := kernel.WGDesc(j%bwStages) * (2 * bwTile * 2 / 16)
		var s, dp kernel.WGAcc64
		kernel.WGFence(t)
		//gocu:unroll
		for ks := int32(0); ks < d128/16; ks++ {
			kernel.WGMMABF16(t, &s, dqa+wgStep(ks), dkk+st+bwStep(ks), false, ks > 0)
		}
		kernel.WGCommit(t)
		//gocu:unroll
		for ks := int32(0); ks < d128/16; ks++ {
			kernel.WGMMABF16(t, &dp, ddoa+wgStep(ks), dvk+st+bwStep(ks), false, ks > 0)
		}
		kernel.WGCommit(t)
		kernel.WGWait(t, 1, &s)
		if j < nfull {
			s = probs(t, s, j, l2, lim, sl2, false)
		} else {
			s = probs(t, s, j, l2, lim, sl2, true)
		}
		kernel.WGWait(t, 0, &dp)
		//gocu:unroll
		for e := int32(0); e < 32; e++ {
			dp[e] = s[e] * (dp[e] - dr[(e%4)/2])
		}
		ds := pack64(dp)
		kernel.WGFence(t)
		//gocu:unroll
		for ks := int32(0); ks < bwRows/16; ks++ {
			kernel.WGMMABF16RS(t, &acc, ds[ks], dkm+st+kernel.WGDesc(ks*16*128/16), true, true)
		}
		kernel.WGCommit(t) // completed by the next tile's wait for S
	}
	kernel.WGWait(t, 0, &acc)

	dq2 := kernel.Reinterpret[kernel.BFloat16x2](dq)
	head := dql.head(b32, heads)
	//gocu:unroll
	for dt := int32(0); dt < d128/8; dt++ {
		col := int(dt*8 + 2*qd)
		if rowA < seq {
			dq2[(head+int(rowA)*int(dql.S)+col)/2] = kernel.ToBFloat16x2(acc[4*dt]*scale, acc[4*dt+1]*scale)
		}
		if rowA+8 < seq {
			dq2[(head+int(rowA+8)*int(dql.S)+col)/2] = kernel.ToBFloat16x2(acc[4*dt+2]*scale, acc[4*dt+3]*scale)
		}
	}
}

// probs returns P = exp(S·scale − lse) for key tile j of bwdQWG, with the
// rows' logsumexps l2 (log2 domain). masked zeroes the keys at or past
// lim (a constant at each call).
func probs(t *kernel.Thread, s kernel.WGAcc64, j int32, l2 [2]float32, lim [2]int32, sl2 float32, masked bool) kernel.WGAcc64 {
	qd := t.ThreadIdx.X % 4
	//gocu:unroll
	for e := int32(0); e < 32; e++ {
		p := kernel.FastExp2(kernel.FMA(s[e], sl2, -l2[(e%4)/2]))
		if masked && j*bwRows+(e/4)*8+2*qd+e%2 >= lim[(e%4)/2] {
			p = 0
		}
		s[e] = p
	}
	return s
}

// bwStep is the descriptor offset of k-step ks of a 64-row tile: 32
// bytes within a 64-column half, four per half.
func bwStep(ks int32) kernel.WGDesc {
	return kernel.WGDesc((ks/4)*(bwHalf*2/16) + (ks%4)*2)
}

// pack64 is packP for a 64-column accumulator.
func pack64(s kernel.WGAcc64) [bwRows / 16]kernel.FragA {
	var p [bwRows / 16]kernel.FragA
	//gocu:unroll
	for j := 0; j < bwRows/16; j++ {
		p[j] = kernel.FragA{
			kernel.PackBFloat16x2(s[8*j], s[8*j+1]), kernel.PackBFloat16x2(s[8*j+2], s[8*j+3]),
			kernel.PackBFloat16x2(s[8*j+4], s[8*j+5]), kernel.PackBFloat16x2(s[8*j+6], s[8*j+7]),
		}
	}
	return p
}

// loadBW starts the copies of rows r0..r0+63 of one head x into the
// 64-row tile at sm[dst:], as loadWG does for 128 rows.
func loadBW(t *kernel.Thread, sm []kernel.BFloat16, dst int32, x []kernel.BFloat16, rs, r0, seq, soff int32) {
	cr, cc := t.ThreadIdx.X/16, t.ThreadIdx.X%16
	//gocu:unroll
	for i := int32(0); i < bwRows/wgLoadRows; i++ {
		r := r0 + cr + i*wgLoadRows
		ok := r < seq
		if !ok {
			r = seq - 1 // a valid address that is not read
		}
		kernel.CpAsyncZfill(t, sm[dst+soff+i*wgLoadRows*64:], x[int(r)*int(rs)+int(cc)*8:], ok)
	}
}

// backwardWG launches bwdKVWG and bwdQWG for s (checked already, head
// dimension 128) on operands laid out by ls, after bwdPrep has filled
// dvec.
func backwardWG(d *gocu.Device, q, k, v bf16s, lse f32s, do bf16s, dvec f32s, dq, dk, dv bf16s, ls [8]layout, s shape, scale float32, causal, checked bool) error {
	ql, kl, vl, dol, dql, dkl, dvl := ls[0], ls[1], ls[2], ls[4], ls[5], ls[6], ls[7]
	seq, heads := int32(s.Seq), int32(s.Heads)
	c := wgTiles(s, checked)
	c.Shared = bwdWGMem
	if err := launchBwdKVWG(d, c, q, k, v, do, lse, dvec, dk, dv, ql, kl, vl, dol, dkl, dvl, heads, seq, scale, causal); err != nil {
		return err
	}
	return launchBwdQWG(d, c, q, k, v, do, lse, dvec, dq, ql, kl, vl, dol, dql, heads, seq, scale, causal)
}
