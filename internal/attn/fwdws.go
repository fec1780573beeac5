package attn

import (
	"math"

	"github.com/gocu-dev/gocu/kernel"
)

// The warpgroups of fwd128WS and its named barriers.
const (
	wsThreads  = 384 // a producer warpgroup, then two consumers
	wsPair     = 256 // the threads of a barrier between two warpgroups
	wsFull     = 1   // + 3·consumer + stage: the stage's k and v are in
	wsEmpty    = 7   // + stage: both consumers are done with the stage
	wsSched    = 10  // + consumer: that consumer's turn to issue its MMAs
	wsLoadRows = 128 / 16
	wsProdRegs = 40  // registers per thread the producer keeps
	wsConsRegs = 232 // and each consumer takes: 128·40 + 256·232 ≤ 65536
)

// fwd128WS is fwd128WG (the same tiling, arguments and results) with the
// warp specialisation and scheduling of FlashAttention-3:
//
//   - warpgroup 0 produces: it copies q and the k and v tiles into the
//     three stages with kernel.CpAsyncZfill, and hands each stage to the
//     consumers through named barriers (kernel.BarArrive on a barrier per
//     consumer and stage, after the copies completed and were fenced); it
//     refills a stage once both consumers arrived at its empty barrier;
//   - warpgroups 1 and 2 consume, 64 query rows each, and never wait for
//     each other on data: each takes its turn to issue its MMAs on a
//     scheduling barrier and passes the turn to the other once issued
//     (ping-pong), so that one warpgroup's softmax runs while the other's
//     MMAs keep the tensor cores busy;
//   - kernel.SetMaxNReg gives the producer's registers to the consumers.
//
// Launch (⌈seq/128⌉, bh) blocks of wsThreads threads with fwdWGMem bytes
// of dynamic shared memory, on sm_90a.
//
//gocu:kernel
//gocu:noalias
//gocu:launch_bounds 384 1
func fwd128WS(t *kernel.Thread, q, k, v, o []kernel.BFloat16, lse []float32, ql, kl, vl, ol layout, heads, seq int32, scale float32, causal bool) {
	sm := kernel.DynamicShared[kernel.BFloat16](t)
	tid := t.ThreadIdx.X
	qtile := t.BlockIdx.X
	if causal { // the longest rows first
		qtile = t.GridDim.X - 1 - t.BlockIdx.X
	}
	q0 := qtile * wgRows
	bh := int(t.BlockIdx.Y)
	ntiles, nfull := (seq+wgKeys-1)/wgKeys, seq/wgKeys
	if causal {
		ntiles = min(ntiles, (q0+wgRows+wgKeys-1)/wgKeys) // through the diagonal
		nfull = min(nfull, q0/wgKeys)                     // wholly below it
	}
	if tid < 128 {
		kernel.SetMaxNReg(t, wsProdRegs, false)
		produceWS(t, sm, q[ql.head(int32(bh), heads):], k[kl.head(int32(bh), heads):], v[vl.head(int32(bh), heads):], ql.S, kl.S, vl.S, q0, seq, ntiles)
		return
	}
	kernel.SetMaxNReg(t, wsConsRegs, true)
	cw := tid/128 - 1 // the consumer: 0 or 1
	lane := tid % 32
	g := lane / 4
	sl2 := scale * log2e
	me, other := wsSched+cw, wsSched+1-cw
	full := wsFull + 3*cw

	// Descriptors, as in fwd128WG: q's rows 64cw.., k K-major, v MN-major.
	dq := kernel.WGDescriptor(t, sm[cw*64*64:], kernel.WGSwizzle128, 16, 1024)
	dk := kernel.WGDescriptor(t, sm[wgKV:], kernel.WGSwizzle128, 16, 1024)
	dv := kernel.WGDescriptor(t, sm[wgKV+wgTile:], kernel.WGSwizzle128, wgHalf*2, 1024)

	negInf := float32(math.Inf(-1))
	mx := [2]float32{negInf, negInf}
	sum := [2]float32{0, 0}
	rowA := q0 + cw*64 + (tid/32)%4*16 + g
	lim := [2]int32{seq, seq}
	if causal {
		lim = [2]int32{min(rowA+1, seq), min(rowA+9, seq)}
	}

	// Consumer 0 issues first: consumer 1 gives it the first turn. Every
	// turn below is taken with BarSync(me) and passed with
	// BarArrive(other), except consumer 1's last.
	if cw == 1 {
		kernel.BarArrive(t, other, wsPair)
	}
	kernel.BarSync(t, full, wsPair)
	kernel.BarSync(t, me, wsPair)
	var s, acc kernel.WGAcc128
	kernel.WGFence(t)
	//gocu:unroll
	for ks := int32(0); ks < d128/16; ks++ {
		kernel.WGMMABF16(t, &s, dq+wgStep(ks), dk+wgStep(ks), false, ks > 0)
	}
	kernel.WGCommit(t)
	kernel.BarArrive(t, other, wsPair)
	kernel.WGWait(t, 0, &s)
	var corr [2]float32
	if nfull > 0 {
		s, mx, sum, corr = softmaxWG(t, s, mx, sum, 0, lim, sl2, false)
	} else {
		s, mx, sum, corr = softmaxWG(t, s, mx, sum, 0, lim, sl2, true)
	}
	p := packP(s)

	for j := int32(1); j < ntiles; j++ {
		kernel.BarSync(t, full+j%wgStages, wsPair) // tile j is in
		kernel.BarSync(t, me, wsPair)
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
		kernel.BarArrive(t, other, wsPair)
		kernel.WGWait(t, 1, &s)
		if j < nfull {
			s, mx, sum, corr = softmaxWG(t, s, mx, sum, j, lim, sl2, false)
		} else {
			s, mx, sum, corr = softmaxWG(t, s, mx, sum, j, lim, sl2, true)
		}
		kernel.WGWait(t, 0, &acc)
		if j-1+wgStages < ntiles { // the producer refills tile j-1's stage
			kernel.BarArrive(t, wsEmpty+(j-1)%wgStages, wsThreads)
		}
		//gocu:unroll
		for i := 0; i < 64; i += 4 {
			acc[i] *= corr[0]
			acc[i+1] *= corr[0]
			acc[i+2] *= corr[1]
			acc[i+3] *= corr[1]
		}
		p = packP(s)
	}
	kernel.BarSync(t, me, wsPair)
	kernel.WGFence(t)
	pst := kernel.WGDesc((ntiles-1)%wgStages) * (2 * wgTile * 2 / 16)
	//gocu:unroll
	for ks := int32(0); ks < wgKeys/16; ks++ {
		kernel.WGMMABF16RS(t, &acc, p[ks], dv+pst+kernel.WGDesc(ks*16*128/16), true, true)
	}
	kernel.WGCommit(t)
	if cw == 0 {
		kernel.BarArrive(t, other, wsPair)
	}
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

// produceWS is fwd128WS's producer warpgroup: it copies q and the first k
// and v tiles, then each next tile once its stage is free, and hands each
// tile over to both consumers when its copies have completed.
func produceWS(t *kernel.Thread, sm, qh, kh, vh []kernel.BFloat16, qs, ks, vs, q0, seq, ntiles int32) {
	// Thread tid copies chunk cc of rows cr, cr+8, ..., as loadWG does
	// with twice the threads.
	tid := t.ThreadIdx.X
	cr, cc := tid/16, tid%16
	soff := (cc/8)*wgHalf + cr*64 + ((cc%8)^(cr&7))*8
	loadWS(t, sm, 0, qh, qs, q0, seq, soff, cr, cc)
	loadWS(t, sm, wgKV, kh, ks, 0, seq, soff, cr, cc)
	loadWS(t, sm, wgKV+wgTile, vh, vs, 0, seq, soff, cr, cc)
	kernel.CpAsyncCommit(t)
	for j := int32(0); j < ntiles; j++ {
		kernel.CpAsyncWait(t, 0)
		kernel.FenceProxyAsync(t)
		kernel.BarArrive(t, wsFull+j%wgStages, wsPair)
		kernel.BarArrive(t, wsFull+3+j%wgStages, wsPair)
		if n := j + 1; n < ntiles {
			sg := n % wgStages
			if n >= wgStages { // both consumers are done with tile n-3
				kernel.BarSync(t, wsEmpty+sg, wsThreads)
			}
			nb := wgKV + sg*2*wgTile
			loadWS(t, sm, nb, kh, ks, n*wgKeys, seq, soff, cr, cc)
			loadWS(t, sm, nb+wgTile, vh, vs, n*wgKeys, seq, soff, cr, cc)
			kernel.CpAsyncCommit(t)
		}
	}
}

// loadWS is loadWG for the producer's 128 threads: the thread's chunk of
// every wsLoadRows-th row of rows r0..r0+127.
func loadWS(t *kernel.Thread, sm []kernel.BFloat16, dst int32, x []kernel.BFloat16, rs, r0, seq, soff, cr, cc int32) {
	//gocu:unroll
	for i := int32(0); i < 128/wsLoadRows; i++ {
		r := r0 + cr + i*wsLoadRows
		ok := r < seq
		if !ok {
			r = seq - 1 // a valid address that is not read
		}
		kernel.CpAsyncZfill(t, sm[dst+soff+i*wsLoadRows*64:], x[int(r)*int(rs)+int(cc)*8:], ok)
	}
}
