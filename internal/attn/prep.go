package attn

import "github.com/gocu-dev/gocu/kernel"

// bwdPrep computes D = rowsum(dO∘o) in float32 for rows rows of dim
// columns (even), seq rows a head, o and dO laid out by ol and dol (heads
// per batch): the first step of the backward pass. A warp takes a row.
// Launch a block of 128 threads per 4 rows.
//
//gocu:kernel
//gocu:noalias
func bwdPrep(t *kernel.Thread, o, do []kernel.BFloat16, dvec []float32, ol, dol layout, heads, seq, rows, dim int32) {
	row := t.BlockIdx.X*warps + t.ThreadIdx.X/32
	lane := t.ThreadIdx.X % 32
	if row >= rows {
		return // the whole warp
	}
	o2 := kernel.Reinterpret[kernel.BFloat16x2](o)
	do2 := kernel.Reinterpret[kernel.BFloat16x2](do)
	bh, r := row/seq, row%seq
	ob := (ol.head(bh, heads) + int(r)*int(ol.S)) / 2
	db := (dol.head(bh, heads) + int(r)*int(dol.S)) / 2
	var s float32
	for c := lane; c < dim/2; c += 32 {
		a, b := o2[ob+int(c)], do2[db+int(c)]
		s += a.X.Float32()*b.X.Float32() + a.Y.Float32()*b.Y.Float32()
	}
	//gocu:unroll
	for m := int32(16); m > 0; m /= 2 {
		s += kernel.ShflXor(t, kernel.FullMask, s, m)
	}
	if lane == 0 {
		dvec[row] = s
	}
}

// rowStat returns what thread tid of bwdKV stages for the query rows
// r0..r0+63 of head bh: the logsumexp of row r0+tid in the log2 domain for
// tid < 64, D of row r0+tid-64 otherwise; 0 past seq.
func rowStat(lse, dvec []float32, bh int, seq, r0, tid int32) float32 {
	r := r0 + tid%64
	if r >= seq {
		return 0
	}
	if tid < 64 {
		return lse[bh*int(seq)+int(r)] * log2e
	}
	return dvec[bh*int(seq)+int(r)]
}
