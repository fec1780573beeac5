package attn

import (
	"github.com/gocu-dev/gocu/kernel"
)

// bwd128Mem is the dynamic shared memory of the backward kernels for head
// dimension 128, in bytes: six tiles, and for bwdKV128 the staged
// logsumexps and D of two query tiles.
const bwd128Mem = 6*d128Tile*2 + 2*stats*4

// bwdQ128 computes dq for head dimension 128 (the second half of the
// backward pass; bwdKV128 computes dk and dv): for the block's 64 query
// rows and every key tile j it recomputes P = exp(q kⱼᵀ·scale − lse), then
// dP = dO vⱼᵀ, dS = P∘(dP − D) and dq += dS kⱼ·scale, where D =
// rowsum(dO∘o) from bwdPrep. The layout is fwd128's: q fragments in
// registers, k and v double buffered, causal tiles skipped and only the
// diagonal and a partial last tile masked. dO's fragments are read from
// shared memory at each tile, to leave registers for dq. Each operand
// but lse and dvec is laid out by its layout, as in fwd128.
//
// Launch tiles with bwd128Mem bytes of dynamic shared memory.
//
//gocu:kernel
//gocu:noalias
//gocu:launch_bounds 128 2
func bwdQ128(t *kernel.Thread, q, k, v, do []kernel.BFloat16, lse, dvec []float32, dq []kernel.BFloat16, ql, kl, vl, dol, dql layout, heads, seq int32, scale float32, causal bool) {
	sm := kernel.DynamicShared[kernel.BFloat16](t)
	tid := t.ThreadIdx.X
	warp, lane := tid/32, tid%32
	g, qd := lane/4, lane%4
	qtile := t.BlockIdx.X
	if causal { // the longest rows first
		qtile = t.GridDim.X - 1 - t.BlockIdx.X
	}
	q0 := qtile * tileQ
	bh := int(t.BlockIdx.Y)
	b32 := int32(bh)
	qh, kh, vh, doh := q[ql.head(b32, heads):], k[kl.head(b32, heads):], v[vl.head(b32, heads):], do[dol.head(b32, heads):]
	sl2 := scale * log2e

	// Shared memory: q, dO, then k and v twice.
	cr, cc := tid/d128Chunk, tid%d128Chunk
	soff := cr*d128 + (cc^(cr&7))*8
	load128(t, sm, 0, qh, ql.S, q0, seq, soff, cr, cc)
	load128(t, sm, d128Tile, doh, dol.S, q0, seq, soff, cr, cc)
	ntiles, nfull := (seq+tileK-1)/tileK, seq/tileK
	if causal {
		ntiles = (q0 + tileQ) / tileK
		nfull = q0 / tileK
	}
	load128(t, sm, 2*d128Tile, kh, kl.S, 0, seq, soff, cr, cc)
	load128(t, sm, 3*d128Tile, vh, vl.S, 0, seq, soff, cr, cc)
	kernel.CpAsyncCommit(t)

	// The lane's two rows, their logsumexps (log2 domain) and D.
	rowA := q0 + warp*16 + g
	var l2, dr [2]float32
	lim := [2]int32{seq, seq}
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
	kernel.CpAsyncWait(t, 0)
	t.SyncThreads()

	var qf [d128 / 16]kernel.FragA
	lr, lc := lane%16, lane/16
	//gocu:unroll
	for ks := int32(0); ks < d128/16; ks++ {
		r := warp*16 + lr
		ch := ks*2 + lc
		qf[ks] = kernel.LdMatrixX4(t, sm[r*d128+(ch^(r&7))*8:])
	}
	kOff, vOff := laneOffsets128(lane)

	var acc [d128 / 8]kernel.FragC
	for j := int32(0); j < nfull; j++ {
		acc = bwdQ128Tile(t, sm, kh, vh, kl.S, vl.S, soff, cr, cc, seq, qf, kOff, vOff, acc, l2, dr, j, ntiles, lim, sl2, false)
	}
	for j := nfull; j < ntiles; j++ {
		acc = bwdQ128Tile(t, sm, kh, vh, kl.S, vl.S, soff, cr, cc, seq, qf, kOff, vOff, acc, l2, dr, j, ntiles, lim, sl2, true)
	}

	dq2 := kernel.Reinterpret[kernel.BFloat16x2](dq)
	head := dql.head(b32, heads)
	//gocu:unroll
	for dt := int32(0); dt < d128/8; dt++ {
		col := int(dt*8 + 2*qd)
		if rowA < seq {
			dq2[(head+int(rowA)*int(dql.S)+col)/2] = kernel.ToBFloat16x2(acc[dt][0]*scale, acc[dt][1]*scale)
		}
		if rowA+8 < seq {
			dq2[(head+int(rowA+8)*int(dql.S)+col)/2] = kernel.ToBFloat16x2(acc[dt][2]*scale, acc[dt][3]*scale)
		}
	}
}

// bwdQ128Tile runs key tile j of bwdQ128 for one warp and returns dq/scale
// so far. masked masks the keys at or past lim (a constant at each call).
func bwdQ128Tile(t *kernel.Thread, sm, k, v []kernel.BFloat16, ks, vs int32, soff, cr, cc, seq int32, qf [d128 / 16]kernel.FragA, kOff, vOff [4]int32,
	acc [d128 / 8]kernel.FragC, l2, dr [2]float32, j, ntiles int32, lim [2]int32, sl2 float32, masked bool) [d128 / 8]kernel.FragC {
	if j > 0 {
		kernel.CpAsyncWait(t, 0)
		t.SyncThreads() // tile j is in; everyone is done with tile j-1
	}
	if j+1 < ntiles {
		nb := 2*d128Tile + ((j+1)%2)*2*d128Tile
		load128(t, sm, nb, k, ks, (j+1)*tileK, seq, soff, cr, cc)
		load128(t, sm, nb+d128Tile, v, vs, (j+1)*tileK, seq, soff, cr, cc)
	}
	kernel.CpAsyncCommit(t)
	ks0 := 2*d128Tile + (j%2)*2*d128Tile
	vs0 := ks0 + d128Tile
	warp := t.ThreadIdx.X / 32

	// S = q kᵀ and dP = dO vᵀ.
	var s, dp [tileK / 8]kernel.FragC
	s = mmaABt128(t, sm, ks0, kOff, qf, s)
	dp = mmaSABt128(t, sm, d128Tile+warp*16*d128, vOff, vs0, kOff, dp)

	// P and dS = P∘(dP − D), in place of S.
	qd := t.ThreadIdx.X % 4
	//gocu:unroll
	for nt := int32(0); nt < tileK/8; nt++ {
		//gocu:unroll
		for e := int32(0); e < 4; e++ {
			p := kernel.FastExp2(kernel.FMA(s[nt][e], sl2, -l2[e/2]))
			if masked && j*tileK+nt*8+2*qd+e%2 >= lim[e/2] {
				p = 0
			}
			s[nt][e] = p * (dp[nt][e] - dr[e/2])
		}
	}

	// dq += dS k.
	return mmaCB128(t, sm, ks0, vOff, s, acc)
}

// mmaSABt128 returns c + a bᵀ for the 16 rows of the tile a at sm[a0:]
// and the 64 rows of the tile b at sm[b0:], both of 128 columns: mmaABt128
// with a's fragments read from shared memory.
func mmaSABt128(t *kernel.Thread, sm []kernel.BFloat16, a0 int32, vOff [4]int32, b0 int32, kOff [4]int32, c [tileK / 8]kernel.FragC) [tileK / 8]kernel.FragC {
	//gocu:unroll
	for j4 := int32(0); j4 < 4; j4++ {
		ab := sm[a0+vOff[j4]:]
		bb := sm[b0+kOff[j4]:]
		//gocu:unroll
		for jj := int32(0); jj < d128/64; jj++ {
			af := kernel.LdMatrixX4(t, ab[jj*64:])
			//gocu:unroll
			for nj := int32(0); nj < tileK/16; nj++ {
				bf := kernel.LdMatrixX4(t, bb[nj*16*d128+jj*64:])
				c[2*nj] = kernel.MMABF16(t, af, kernel.FragB{bf[0], bf[1]}, c[2*nj])
				c[2*nj+1] = kernel.MMABF16(t, af, kernel.FragB{bf[2], bf[3]}, c[2*nj+1])
			}
		}
	}
	return c
}

// bwdKV128 computes dk and dv for head dimension 128: a block takes 64
// keys of one head, each warp 16 of them, and runs through the query
// tiles that see them (from the diagonal on when causal). Per query tile,
// with the block's keys as rows: Sᵀ = k qᵀ, Pᵀ = exp(Sᵀ·scale − lse),
// dPᵀ = v dOᵀ, dSᵀ = Pᵀ∘(dPᵀ − D), then dv += Pᵀ dO and dk += dSᵀ q·scale,
// with dk and dv in registers for the whole kernel and Pᵀ and dSᵀ repacked
// into A fragments in place. q and dO are double buffered, with the
// query tile's logsumexps and D staged in shared memory beside them.
// The operands are laid out as bwdQ128's.
//
// Launch tiles with bwd128Mem bytes of dynamic shared memory.
//
//gocu:kernel
//gocu:noalias
//gocu:launch_bounds 128 2
func bwdKV128(t *kernel.Thread, q, k, v, do []kernel.BFloat16, lse, dvec []float32, dk, dv []kernel.BFloat16, ql, kl, vl, dol, dkl, dvl layout, heads, seq int32, scale float32, causal bool) {
	sm := kernel.DynamicShared[kernel.BFloat16](t)
	fl := kernel.DynamicShared[float32](t)[3*d128Tile:] // after the six tiles
	tid := t.ThreadIdx.X
	warp, lane := tid/32, tid%32
	g, qd := lane/4, lane%4
	k0 := t.BlockIdx.X * tileK
	bh := int(t.BlockIdx.Y)
	b32 := int32(bh)
	qh, kh, vh, doh := q[ql.head(b32, heads):], k[kl.head(b32, heads):], v[vl.head(b32, heads):], do[dol.head(b32, heads):]
	sl2 := scale * log2e

	// Shared memory: k, v, then q and dO twice; the staged logsumexps
	// and D (two query tiles of 64 each) after them.
	cr, cc := tid/d128Chunk, tid%d128Chunk
	soff := cr*d128 + (cc^(cr&7))*8
	load128(t, sm, 0, kh, kl.S, k0, seq, soff, cr, cc)
	load128(t, sm, d128Tile, vh, vl.S, k0, seq, soff, cr, cc)
	nq, nfull := (seq+tileQ-1)/tileQ, seq/tileQ
	i0 := int32(0)
	if causal {
		i0 = k0 / tileQ // the diagonal tile
	}
	qb := 2*d128Tile + (i0%2)*2*d128Tile
	load128(t, sm, qb, qh, ql.S, i0*tileQ, seq, soff, cr, cc)
	load128(t, sm, qb+d128Tile, doh, dol.S, i0*tileQ, seq, soff, cr, cc)
	kernel.CpAsyncCommit(t)
	fl[(i0%2)*stats+tid] = rowStat(lse, dvec, bh, seq, i0*tileQ, tid)

	kOff, vOff := laneOffsets128(lane)
	var dka, dva [d128 / 8]kernel.FragC
	keyA := k0 + warp*16 + g // the lane's two keys: keyA and keyA+8
	for i := i0; i < nq; i++ {
		if causal && i == i0 || i >= nfull { // the diagonal, a partial last tile
			dka, dva = bwdKV128Tile(t, sm, fl, qh, doh, lse, dvec, bh, ql.S, dol.S, soff, cr, cc, seq, kOff, vOff, dka, dva, i, nq, keyA, sl2, causal, true)
		} else {
			dka, dva = bwdKV128Tile(t, sm, fl, qh, doh, lse, dvec, bh, ql.S, dol.S, soff, cr, cc, seq, kOff, vOff, dka, dva, i, nq, keyA, sl2, causal, false)
		}
	}

	dk2 := kernel.Reinterpret[kernel.BFloat16x2](dk)
	dv2 := kernel.Reinterpret[kernel.BFloat16x2](dv)
	hk, hv := dkl.head(b32, heads), dvl.head(b32, heads)
	//gocu:unroll
	for dt := int32(0); dt < d128/8; dt++ {
		col := int(dt*8 + 2*qd)
		if keyA < seq {
			dk2[(hk+int(keyA)*int(dkl.S)+col)/2] = kernel.ToBFloat16x2(dka[dt][0]*scale, dka[dt][1]*scale)
			dv2[(hv+int(keyA)*int(dvl.S)+col)/2] = kernel.ToBFloat16x2(dva[dt][0], dva[dt][1])
		}
		if keyA+8 < seq {
			dk2[(hk+int(keyA+8)*int(dkl.S)+col)/2] = kernel.ToBFloat16x2(dka[dt][2]*scale, dka[dt][3]*scale)
			dv2[(hv+int(keyA+8)*int(dvl.S)+col)/2] = kernel.ToBFloat16x2(dva[dt][2], dva[dt][3])
		}
	}
}

// bwdKV128Tile runs query tile i of bwdKV128 for one warp and returns
// dk/scale and dv so far. masked masks the queries before the lane's keys
// (when causal) and those at or past seq (a constant at each call).
func bwdKV128Tile(t *kernel.Thread, sm []kernel.BFloat16, fl []float32, q, do []kernel.BFloat16, lse, dvec []float32, bh int, qs, dos, soff, cr, cc, seq int32,
	kOff, vOff [4]int32, dka, dva [d128 / 8]kernel.FragC, i, nq, keyA int32, sl2 float32, causal, masked bool) ([d128 / 8]kernel.FragC, [d128 / 8]kernel.FragC) {
	kernel.CpAsyncWait(t, 0)
	t.SyncThreads() // tile i is in; everyone is done with tile i-1
	tid := t.ThreadIdx.X
	var next float32
	if i+1 < nq {
		nb := 2*d128Tile + ((i+1)%2)*2*d128Tile
		load128(t, sm, nb, q, qs, (i+1)*tileQ, seq, soff, cr, cc)
		load128(t, sm, nb+d128Tile, do, dos, (i+1)*tileQ, seq, soff, cr, cc)
		next = rowStat(lse, dvec, bh, seq, (i+1)*tileQ, tid)
	}
	kernel.CpAsyncCommit(t)
	qs0 := 2*d128Tile + (i%2)*2*d128Tile
	ds0 := qs0 + d128Tile
	st := (i % 2) * stats // this tile's logsumexps (log2 domain); D follows them
	warp := tid / 32

	// Sᵀ = k qᵀ and dPᵀ = v dOᵀ for the warp's 16 keys.
	var s, dp [tileQ / 8]kernel.FragC
	s = mmaSABt128(t, sm, warp*16*d128, vOff, qs0, kOff, s)
	dp = mmaSABt128(t, sm, d128Tile+warp*16*d128, vOff, ds0, kOff, dp)

	// Pᵀ in s and dSᵀ = Pᵀ∘(dPᵀ − D) in dp.
	qd := tid % 4
	//gocu:unroll
	for nt := int32(0); nt < tileQ/8; nt++ {
		//gocu:unroll
		for e := int32(0); e < 4; e++ {
			c := nt*8 + 2*qd + e%2 // the query in the tile
			p := kernel.FastExp2(kernel.FMA(s[nt][e], sl2, -fl[st+c]))
			if masked {
				if r := i*tileQ + c; r >= seq || causal && r < keyA+8*(e/2) {
					p = 0
				}
			}
			s[nt][e] = p
			dp[nt][e] = p * (dp[nt][e] - fl[st+64+c])
		}
	}

	// dv += Pᵀ dO and dk += dSᵀ q.
	dva = mmaCB128(t, sm, ds0, vOff, s, dva)
	dka = mmaCB128(t, sm, qs0, vOff, dp, dka)
	if i+1 < nq {
		fl[((i+1)%2)*stats+tid] = next // read after the next tile's barrier
	}
	return dka, dva
}
