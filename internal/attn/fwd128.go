package attn

import (
	"math"

	"github.com/gocu-dev/gocu/kernel"
)

// The shared-memory tiles of head dimension 128.
const (
	d128      = 128       // head dimension
	d128Tile  = 64 * d128 // elements of one 64-row tile of q, k, v or dO
	d128Chunk = d128 / 8  // 16-byte chunks per row
	d128Rows  = threads / d128Chunk
	fwd128Mem = 5 * d128Tile * 2 // bytes: q, and k and v twice
)

// fwd128 is the forward pass of attention for head dimension 128: o =
// softmax(q kᵀ · scale) v and lse, the natural logarithm of each row's
// softmax denominator, for q, k, v and o of bh heads of seq rows of 128
// columns, laid out by ql, kl, vl and ol (heads per batch), and lse of
// shape [bh][seq]. It is internal/lecture's FlashAttention128 with the
// logsumexp written out and any seq: rows past seq load as zeros, keys
// past it are masked, and nothing past it is written.
//
//   - a block takes 64 query rows of one head; each of its 4 warps owns
//     16, whose q fragments stay in registers;
//   - k and v stream through shared memory in tiles of 64 keys, double
//     buffered by kernel.CpAsyncZfill;
//   - per tile, S = q kᵀ on the tensor cores, the online softmax in the
//     log2 domain on the accumulator registers, and o += P v with P
//     repacked from accumulator to A fragments in place;
//   - causal blocks skip the tiles above the diagonal and run the longest
//     rows first; only the diagonal tile and a partial last tile are
//     masked, by a body specialised with a constant argument.
//
// scale must be positive (the row maximum is taken on the raw scores).
// Launch tiles: (⌈seq/64⌉, bh) blocks of 128 threads with fwd128Mem
// bytes of dynamic shared memory.
//
//gocu:kernel
//gocu:noalias
//gocu:launch_bounds 128 2
func fwd128(t *kernel.Thread, q, k, v, o []kernel.BFloat16, lse []float32, ql, kl, vl, ol layout, heads, seq int32, scale float32, causal bool) {
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
	qh, kh, vh := q[ql.head(int32(bh), heads):], k[kl.head(int32(bh), heads):], v[vl.head(int32(bh), heads):]
	sl2 := scale * log2e

	// Each thread copies chunk cc of rows cr, cr+d128Rows, ...: the same
	// swizzled column in every row it copies.
	cr, cc := tid/d128Chunk, tid%d128Chunk
	soff := cr*d128 + (cc^(cr&7))*8
	load128(t, sm, 0, qh, ql.S, q0, seq, soff, cr, cc)
	ntiles, nfull := (seq+tileK-1)/tileK, seq/tileK
	if causal {
		ntiles = (q0 + tileQ) / tileK // through the diagonal
		nfull = q0 / tileK            // wholly below it
	}
	load128(t, sm, d128Tile, kh, kl.S, 0, seq, soff, cr, cc)
	load128(t, sm, 2*d128Tile, vh, vl.S, 0, seq, soff, cr, cc)
	kernel.CpAsyncCommit(t)
	kernel.CpAsyncWait(t, 0)
	t.SyncThreads()

	// The warp's 16 rows of q as A fragments (k = d in steps of 16).
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
	negInf := float32(math.Inf(-1))
	mx := [2]float32{negInf, negInf} // running maxima of rows g and g+8 (log2 domain, scaled)
	sum := [2]float32{0, 0}          // this lane's part of the running sums
	rowA := q0 + warp*16 + g         // the lane's two query rows: rowA and rowA+8
	lim := [2]int32{seq, seq}        // the first key each row does not see
	if causal {
		lim = [2]int32{min(rowA+1, seq), min(rowA+9, seq)}
	}
	for j := int32(0); j < nfull; j++ {
		acc, mx, sum = fwd128Tile(t, sm, kh, vh, kl.S, vl.S, soff, cr, cc, seq, qf, kOff, vOff, acc, mx, sum, j, ntiles, lim, sl2, false)
	}
	for j := nfull; j < ntiles; j++ {
		acc, mx, sum = fwd128Tile(t, sm, kh, vh, kl.S, vl.S, soff, cr, cc, seq, qf, kOff, vOff, acc, mx, sum, j, ntiles, lim, sl2, true)
	}

	// The row sums over the four lanes of each row, the logsumexp, then
	// o / sum.
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
			o2[(head+int(rowA)*int(ol.S)+col)/2] = kernel.ToBFloat16x2(acc[dt][0]*inv[0], acc[dt][1]*inv[0])
		}
		if rowA+8 < seq {
			o2[(head+int(rowA+8)*int(ol.S)+col)/2] = kernel.ToBFloat16x2(acc[dt][2]*inv[1], acc[dt][3]*inv[1])
		}
	}
}

// laneOffsets128 returns the lane's ldmatrix offsets into a swizzled tile
// of 128 columns. A row's chunk c is stored at c^(row&7); every row a lane
// names has row&7 == lane&7, so chunk 2s+b lands at 2(s^h) + (b^lane)&1
// with h = (lane&7)/2, and for s = 4j'+j that is offset j (one of four
// registers) plus 64j' (a constant). kOff serves a B operand stored as n
// rows of k (LdMatrixX4, lanes 8-15 take chunk 2s+1); vOff a B operand
// stored as k rows of n (LdMatrixX4Trans) and an A operand of 16 rows
// (LdMatrixX4, lanes 16-31 take chunk 2s+1).
func laneOffsets128(lane int32) (kOff, vOff [4]int32) {
	l7 := lane % 8
	h := l7 / 2
	rowK := (l7+8*(lane/16))*d128 + 8*(((lane/8)^l7)&1)
	rowV := (lane%16)*d128 + 8*(((lane/16)^l7)&1)
	//gocu:unroll
	for j := int32(0); j < 4; j++ {
		kOff[j] = rowK + 16*(j^h)
		vOff[j] = rowV + 16*(j^h)
	}
	return kOff, vOff
}

// fwd128Tile runs key tile j for one warp: it waits for the tile's k and
// v, starts the copies of tile j+1, and updates the running output,
// maxima and sums. masked masks the keys at or past lim (a constant at
// each call, so each call site compiles to its own body).
func fwd128Tile(t *kernel.Thread, sm, k, v []kernel.BFloat16, ks, vs int32, soff, cr, cc, seq int32, qf [d128 / 16]kernel.FragA, kOff, vOff [4]int32,
	acc [d128 / 8]kernel.FragC, mx, sum [2]float32, j, ntiles int32, lim [2]int32, sl2 float32, masked bool) ([d128 / 8]kernel.FragC, [2]float32, [2]float32) {
	if j > 0 {
		kernel.CpAsyncWait(t, 0)
		t.SyncThreads() // tile j is in; everyone is done with tile j-1
	}
	if j+1 < ntiles {
		nb := d128Tile + ((j+1)%2)*2*d128Tile
		load128(t, sm, nb, k, ks, (j+1)*tileK, seq, soff, cr, cc)
		load128(t, sm, nb+d128Tile, v, vs, (j+1)*tileK, seq, soff, cr, cc)
	}
	kernel.CpAsyncCommit(t)
	ks0 := d128Tile + (j%2)*2*d128Tile // this tile's k; v follows it
	vs0 := ks0 + d128Tile

	// S = q kᵀ for the warp's 16 rows and the tile's keys.
	var s [tileK / 8]kernel.FragC
	s = mmaABt128(t, sm, ks0, kOff, qf, s)

	// Online softmax: the maximum of the raw scores, then everything in
	// the scaled log2 domain.
	negInf := float32(math.Inf(-1))
	qd := t.ThreadIdx.X % 4
	m := [2]float32{negInf, negInf}
	//gocu:unroll
	for nt := int32(0); nt < tileK/8; nt++ {
		//gocu:unroll
		for e := int32(0); e < 4; e++ {
			x := s[nt][e]
			if masked && j*tileK+nt*8+2*qd+e%2 >= lim[e/2] {
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
	for nt := int32(0); nt < tileK/8; nt++ {
		//gocu:unroll
		for e := int32(0); e < 4; e++ {
			p := kernel.FastExp2(kernel.FMA(s[nt][e], sl2, -mx[e/2]))
			s[nt][e] = p
			sum[e/2] += p
		}
	}
	//gocu:unroll
	for dt := 0; dt < d128/8; dt++ {
		acc[dt][0] *= corr[0]
		acc[dt][1] *= corr[0]
		acc[dt][2] *= corr[1]
		acc[dt][3] *= corr[1]
	}

	// o += P v.
	return mmaCB128(t, sm, vs0, vOff, s, acc), mx, sum
}

// mmaABt128 returns c + a bᵀ for the warp's 16 rows a (A fragments over
// the 128 columns) and the 64 rows of the tile b at sm[b0:] (n rows of k):
// a 16 x 64 product.
func mmaABt128(t *kernel.Thread, sm []kernel.BFloat16, b0 int32, kOff [4]int32, a [d128 / 16]kernel.FragA, c [tileK / 8]kernel.FragC) [tileK / 8]kernel.FragC {
	// k-step ks = 4jj + j4 reads through the j4-th of four per-lane
	// slices: every ldmatrix address is a register plus a constant.
	//gocu:unroll
	for j4 := int32(0); j4 < 4; j4++ {
		kb := sm[b0+kOff[j4]:]
		//gocu:unroll
		for jj := int32(0); jj < d128/64; jj++ {
			//gocu:unroll
			for nj := int32(0); nj < tileK/16; nj++ {
				kf := kernel.LdMatrixX4(t, kb[nj*16*d128+jj*64:])
				c[2*nj] = kernel.MMABF16(t, a[4*jj+j4], kernel.FragB{kf[0], kf[1]}, c[2*nj])
				c[2*nj+1] = kernel.MMABF16(t, a[4*jj+j4], kernel.FragB{kf[2], kf[3]}, c[2*nj+1])
			}
		}
	}
	return c
}

// mmaCB128 returns acc + p b for p, a 16 x 64 accumulator tile rounded to
// bf16, and the 64 x 128 tile b at sm[b0:] (k rows of n). p's accumulator
// tiles are already A fragments' rows: the fragments of columns 16kk..+7
// and 16kk+8..+15 are the two halves of an A fragment.
func mmaCB128(t *kernel.Thread, sm []kernel.BFloat16, b0 int32, vOff [4]int32, p [tileK / 8]kernel.FragC, acc [d128 / 8]kernel.FragC) [d128 / 8]kernel.FragC {
	var pa [tileK / 16]kernel.FragA
	//gocu:unroll
	for kk := int32(0); kk < tileK/16; kk++ {
		pa[kk] = kernel.FragA{
			kernel.PackBFloat16x2(p[2*kk][0], p[2*kk][1]), kernel.PackBFloat16x2(p[2*kk][2], p[2*kk][3]),
			kernel.PackBFloat16x2(p[2*kk+1][0], p[2*kk+1][1]), kernel.PackBFloat16x2(p[2*kk+1][2], p[2*kk+1][3]),
		}
	}
	//gocu:unroll
	for j4 := int32(0); j4 < 4; j4++ {
		vb := sm[b0+vOff[j4]:]
		//gocu:unroll
		for jj := int32(0); jj < d128/64; jj++ {
			nd := 4*jj + j4
			//gocu:unroll
			for kk := int32(0); kk < tileK/16; kk++ {
				vf := kernel.LdMatrixX4Trans(t, vb[kk*16*d128+jj*64:])
				acc[2*nd] = kernel.MMABF16(t, pa[kk], kernel.FragB{vf[0], vf[1]}, acc[2*nd])
				acc[2*nd+1] = kernel.MMABF16(t, pa[kk], kernel.FragB{vf[2], vf[3]}, acc[2*nd+1])
			}
		}
	}
	return acc
}

// load128 starts the copies of rows r0..r0+63 of one head x (rows rs
// elements apart) into the tile at sm[dst:]: the thread's chunk of every
// d128Rows-th row. Rows at or past seq are filled with zeros.
func load128(t *kernel.Thread, sm []kernel.BFloat16, dst int32, x []kernel.BFloat16, rs, r0, seq, soff, cr, cc int32) {
	//gocu:unroll
	for i := int32(0); i < 64/d128Rows; i++ {
		r := r0 + cr + i*d128Rows
		ok := r < seq
		if !ok {
			r = seq - 1 // a valid address that is not read
		}
		kernel.CpAsyncZfill(t, sm[dst+soff+i*d128Rows*d128:], x[int(r)*int(rs)+int(cc)*8:], ok)
	}
}
