package attn

// The tiling shared by all attention kernels: a block of 4 warps takes 64
// query rows (16 per warp) or 64 keys, and streams the other side through
// shared memory in tiles of 64 rows.
const (
	warps   = 4
	threads = warps * 32 // the block size
	tileQ   = warps * 16 // query rows per block of the forward and dq kernels
	tileK   = 64         // keys per tile; the dk/dv kernels take this many per block
)

// log2e turns exp into exp2; ln2 turns a log2 back into a natural log.
const (
	log2e = 1.4426950408889634
	ln2   = 0.6931471805599453
)

// stats is the length of the per-query-tile statistics that bwdKV stages
// in shared memory: 64 logsumexps, then 64 values of D.
const stats = 2 * tileQ

// layout is where an operand's rows lie in its buffer: row r of head h of
// batch b starts at element b·B + h·H + r·S, its columns follow it. The
// strides are multiples of 8, so that rows start 16-byte aligned.
type layout struct{ B, H, S int32 }

// head returns the element where the rows of head bh (batch·heads + head)
// start.
func (l layout) head(bh, heads int32) int {
	return int(bh/heads)*int(l.B) + int(bh%heads)*int(l.H)
}
