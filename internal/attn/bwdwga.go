package attn

import (
	"os"

	"github.com/gocu-dev/gocu"
	"github.com/gocu-dev/gocu/kernel"
)

// WGMMAAtomicEnv is the environment variable that, set to 1 beside
// WGMMAEnv, selects bwdAllWG for the backward pass: one kernel computes
// dk, dv and dq as FlashAttention-3 does, adding dq's partial sums into a
// float32 workspace with atomics. It skips bwdQWG's recomputation of S
// and dP, but the order of the additions varies from run to run, so dq
// is not deterministic; without it the backward pass is.
const WGMMAAtomicEnv = "GOCU_ATTN_WGMMA_ATOMIC"

// bwdAllMem is bwdAllWG's dynamic shared memory in bytes (177 KiB):
// bwdKVWG's, then dS of a query tile.
const bwdAllMem = bwdWGMem + bwTile*2

// bwdAllWG is bwdKVWG that also computes dq: per query tile each
// warpgroup stores its dSᵀ transposed into shared memory, as dS of the
// tile's 64 queries and the block's 128 keys, K-major; after a barrier
// warpgroup w computes columns 64w to 64w+63 of dS k (m64n64k16, k
// MN-major from its resident tile) and adds them, unscaled, into dqacc
// (float32, contiguous (bh, seq, 128), zero at the start) with atomics.
// bwdDQ then scales and rounds dqacc into dq. Launch as bwdKVWG, with
// bwdAllMem bytes of dynamic shared memory.
//
//gocu:kernel
//gocu:noalias
//gocu:launch_bounds 256 1
func bwdAllWG(t *kernel.Thread, q, k, v, do []kernel.BFloat16, lse, dvec []float32, dk, dv []kernel.BFloat16, dqacc []float32, ql, kl, vl, dol, dkl, dvl layout, heads, seq int32, scale float32, causal bool) {
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
	dsb := int32(bwdWGMem / 2) // dS, after the statistics

	cr, cc := tid/16, tid%16
	soff := (cc/8)*wgHalf + cr*64 + ((cc%8)^(cr&7))*8
	soff64 := (cc/8)*bwHalf + cr*64 + ((cc%8)^(cr&7))*8
	loadWG(t, sm, 0, kh, kl.S, k0, seq, soff, cr, cc)
	loadWG(t, sm, wgTile, vh, vl.S, k0, seq, soff, cr, cc)
	nq, nfull := (seq+bwRows-1)/bwRows, seq/bwRows
	i0 := int32(0)
	if causal {
		i0 = k0 / bwRows
	}
	qb := 2*wgTile + (i0%bwStages)*2*bwTile
	loadBW(t, sm, qb, qh, ql.S, i0*bwRows, seq, soff64)
	loadBW(t, sm, qb+bwTile, doh, dol.S, i0*bwRows, seq, soff64)
	kernel.CpAsyncCommit(t)
	if tid < stats {
		fl[(i0%2)*stats+tid] = rowStat(lse, dvec, bh, seq, i0*bwRows, tid)
	}

	// bwdKVWG's descriptors; then dS K-major (A) and k's half wg
	// MN-major (B) for dq.
	dka := kernel.WGDescriptor(t, sm[wg*64*64:], kernel.WGSwizzle128, 16, 1024)
	dva := kernel.WGDescriptor(t, sm[wgTile+wg*64*64:], kernel.WGSwizzle128, 16, 1024)
	dqk := kernel.WGDescriptor(t, sm[2*wgTile:], kernel.WGSwizzle128, 16, 1024)
	ddok := kernel.WGDescriptor(t, sm[2*wgTile+bwTile:], kernel.WGSwizzle128, 16, 1024)
	dqm := kernel.WGDescriptor(t, sm[2*wgTile:], kernel.WGSwizzle128, bwHalf*2, 1024)
	ddom := kernel.WGDescriptor(t, sm[2*wgTile+bwTile:], kernel.WGSwizzle128, bwHalf*2, 1024)
	dds := kernel.WGDescriptor(t, sm[dsb:], kernel.WGSwizzle128, 16, 1024)
	dkm := kernel.WGDescriptor(t, sm[wg*wgHalf:], kernel.WGSwizzle128, wgHalf*2, 1024)

	var dkacc, dvacc kernel.WGAcc128
	wr := (tid/32)%4*16 + g // the lane's first row within the warpgroup's 64
	keyA := k0 + wg*64 + wr
	for i := i0; i < nq; i++ {
		kernel.CpAsyncWait(t, 0)
		kernel.FenceProxyAsync(t)
		t.SyncThreads() // tile i is in; every warpgroup waited for the MMAs of tile i-2
		if i+1 < nq {
			nb := 2*wgTile + ((i+1)%bwStages)*2*bwTile
			loadBW(t, sm, nb, qh, ql.S, (i+1)*bwRows, seq, soff64)
			loadBW(t, sm, nb+bwTile, doh, dol.S, (i+1)*bwRows, seq, soff64)
			if tid < stats {
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
		if causal && i < i0+2 || i >= nfull {
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

		// dS: the lane's keys wg·64+wr (+8) are columns of half wg; its
		// queries are rows, each 16-byte chunk at chunk^(row%8).
		//gocu:unroll
		for e := int32(0); e < 32; e++ {
			c := (e/4)*8 + 2*qd + e%2
			key := wr + 8*((e%4)/2)
			sm[dsb+wg*bwHalf+c*64+((key/8)^(c&7))*8+key%8] = kernel.ToBFloat16(dp[e])
		}
		kernel.FenceProxyAsync(t)
		t.SyncThreads() // dS of both warpgroups is in

		// dq's part, then dk += dSᵀ q, which runs on under the atomics
		// and completes at the next tile's wait for Sᵀ.
		var dqp kernel.WGAcc64
		kernel.WGFence(t)
		//gocu:unroll
		for ks := int32(0); ks < wgRows/16; ks++ {
			kernel.WGMMABF16(t, &dqp, dds+bwStep(ks), dkm+kernel.WGDesc(ks*16*128/16), true, ks > 0)
		}
		kernel.WGCommit(t)
		//gocu:unroll
		for ks := int32(0); ks < bwRows/16; ks++ {
			kernel.WGMMABF16RS(t, &dkacc, ds[ks], dqm+st+kernel.WGDesc(ks*16*128/16), true, true)
		}
		kernel.WGCommit(t)
		kernel.WGWait(t, 1, &dqp)
		//gocu:unroll
		for e := int32(0); e < 32; e++ {
			if r := i*bwRows + wr + 8*((e%4)/2); r < seq {
				kernel.AtomicAdd(&dqacc[(bh*int(seq)+int(r))*d128+int(wg*64+(e/4)*8+2*qd+e%2)], dqp[e])
			}
		}
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

// bwdDQ writes dq = dqacc·scale in bf16, laid out by dql, for rows rows
// of 128 columns (seq a head): a thread per pair of columns. Launch a
// block of 256 threads per 4 rows.
//
//gocu:kernel
//gocu:noalias
func bwdDQ(t *kernel.Thread, dqacc []float32, dq []kernel.BFloat16, dql layout, heads, seq, rows int32, scale float32) {
	row, c := t.BlockIdx.X*4+t.ThreadIdx.X/(d128/2), 2*(t.ThreadIdx.X%(d128/2))
	if row >= rows {
		return
	}
	dq2 := kernel.Reinterpret[kernel.BFloat16x2](dq)
	a := int(row)*d128 + int(c)
	dq2[(dql.head(row/seq, heads)+int(row%seq)*int(dql.S)+int(c))/2] = kernel.ToBFloat16x2(dqacc[a]*scale, dqacc[a+1]*scale)
}

// useAtomic reports whether WGMMAAtomicEnv selects bwdAllWG.
func useAtomic() bool { return os.Getenv(WGMMAAtomicEnv) == "1" }

// backwardAllWG launches bwdAllWG and bwdDQ for s (checked already, head
// dimension 128) on operands laid out by ls, after bwdPrep has filled
// dvec, with a float32 workspace for dq.
func backwardAllWG(d *gocu.Device, q, k, v bf16s, lse f32s, do bf16s, dvec f32s, dq, dk, dv bf16s, ls [8]layout, s shape, scale float32, causal, checked bool) error {
	ql, kl, vl, dol, dql, dkl, dvl := ls[0], ls[1], ls[2], ls[4], ls[5], ls[6], ls[7]
	seq, heads := int32(s.Seq), int32(s.Heads)
	rows := s.bh() * s.Seq
	acc, err := gocu.Alloc[float32](d, rows*d128)
	if err != nil {
		return err
	}
	defer acc.Free() // ordered after the kernels
	if err := acc.Zero(); err != nil {
		return err
	}
	c := wgTiles(s, checked)
	c.Shared = bwdAllMem
	if err := launchBwdAllWG(d, c, q, k, v, do, lse, dvec, dk, dv, acc, ql, kl, vl, dol, dkl, dvl, heads, seq, scale, causal); err != nil {
		return err
	}
	cv := gocu.Config{Grid: gocu.Dim3{X: int32((rows + 3) / 4)}, Block: gocu.Dim3{X: 4 * d128 / 2}, Checked: checked}
	return launchBwdDQ(d, cv, acc, dq, dql, heads, seq, int32(rows), scale)
}
