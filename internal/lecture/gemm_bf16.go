package lecture

import "github.com/gocu-dev/gocu/kernel"

// The tiling of GemmBF16.
const (
	BF16BM      = 128 // rows of C per block: two warpgroups of 64
	BF16BN      = 256 // columns of C per block: one m64n256k16 per k-step
	BF16BK      = 64  // depth of a pipeline stage: 128 bytes of a's rows
	BF16Stages  = 4   // stages in shared memory: BF16Stages-2 loading, one computing, one still read by the MMAs in flight
	BF16Threads = 256 // two warpgroups

	bf16KS    = BF16BK / 16 // k-steps per stage
	bf16R     = BF16BK / 8  // 16-byte chunks per row of the a panel
	bf16SA    = BF16BM * BF16BK
	bf16Stage = bf16SA + BF16BK*BF16BN
	bf16ARows = BF16Threads / bf16R // a rows one pass of the block copies
	bf16BRows = BF16Threads / (BF16BN / 8)
	// BF16Shared is the dynamic shared memory of GemmBF16 in bytes (192
	// KiB: four stages of 48 KiB).
	BF16Shared = BF16Stages * bf16Stage * 2
)

// GemmBF16 computes c = a b for row-major bf16 matrices a (m x k), b
// (k x n) and c (m x n), accumulating in float32 and rounding c once to
// bf16, as cuBLAS's bf16 GEMM does. It runs on Hopper's warpgroup MMA
// (kernel.WGMMABF16, PTX wgmma.mma_async): each of the block's two
// warpgroups (128 threads) computes a 64 x 256 tile of c with one
// m64n256k16 per k-step, the operands read by the tensor cores straight
// from shared memory through descriptors: no ldmatrix, no operand
// registers, and 128 accumulator registers per thread.
//
//   - a's panel is stored K-major (rows of k, as a is stored) with the
//     128-byte swizzle: a row is 64 elements, 128 bytes, and its 16-byte
//     chunk c is stored at c^(r%8); b's panel MN-major (rows of n, as b
//     is stored, so the MMA transposes it) with the 128-byte swizzle, in
//     blocks of 64 columns;
//   - the copies are kernel.CpAsync, BF16Stages-2 stages ahead; each
//     thread fences the async proxy after its copies land
//     (FenceProxyAsync: the tensor cores read shared memory through the
//     async proxy), then a barrier, then the four MMAs of the stage are
//     issued as one group, and the warpgroup waits only for the group
//     before (WGWait 1), so that the MMAs of two stages overlap the
//     barrier and the next copies;
//   - a stage is refilled two iterations after the MMAs that read it
//     were issued, when every warpgroup has waited for them.
//
// m must be a multiple of BF16BM, k of BF16BK and n of 8; columns past n
// are zero-filled and not stored. Launch GemmBF16Config(m, n):
// (ceil(n/BF16BN), m/BF16BM) blocks of BF16Threads threads with
// BF16Shared bytes of dynamic shared memory. On a GPU it needs sm_90a (an
// H100 or H200: compute capability 9.0), and its launcher refuses other
// GPUs; GemmBF16MMA is the portable kernel, and MatMulBF16 picks one.
//
//gocu:kernel
//gocu:noalias
//gocu:launch_bounds 256 1
func GemmBF16(t *kernel.Thread, a, b, c []kernel.BFloat16, m, n, k int32) {
	sm := kernel.DynamicShared[kernel.BFloat16](t)
	tid := t.ThreadIdx.X
	wg := tid / 128 // the warpgroup: rows 64wg of the block's tile
	bm, bn := t.BlockIdx.Y*BF16BM, t.BlockIdx.X*BF16BN
	kt := k / BF16BK

	// Copies: chunk ac of a rows ar + p*bf16ARows, chunk bc of b rows
	// br + p*bf16BRows. a's chunk c of row r is stored at c ^ (r%8); b's
	// column block bc/8 of 64 columns is a 1024-byte-aligned run of
	// 128-byte rows, its chunk bc%8 of row r at (bc%8) ^ (r%8).
	ar, ac := tid/bf16R, tid%bf16R
	br, bc := tid/(BF16BN/8), tid%(BF16BN/8)
	bvalid := bn+bc*8 < n
	sa := ar*BF16BK + (ac^(ar&7))*8
	sb := bf16SA + (bc/8)*BF16BK*64 + br*64 + ((bc%8)^(br&7))*8
	ag := a[int(bm+ar)*int(k)+int(ac*8):]
	bg := b[int(br)*int(n)+int(bn+bc*8):]
	if !bvalid {
		bg = b
	}
	aStep, bStep := bf16ARows*int(k), bf16BRows*int(n)

	// Prologue: the first BF16Stages-2 stages in flight.
	for s := int32(0); s < BF16Stages-2; s++ {
		if s < kt {
			bf16Load(t, sm[s*bf16Stage:], ag[int(s*BF16BK):], bg[int(s*BF16BK)*int(n):], sa, sb, aStep, bStep, bvalid)
		}
		kernel.CpAsyncCommit(t)
	}

	// Descriptors of stage 0: the warpgroup's 64 rows of a (K-major), all
	// of b (MN-major: 64-column blocks BF16BK·128 bytes apart, 8-row
	// groups of k 1024 bytes apart). A k-step moves a's start by 32 bytes
	// and b's by 16 rows of 128 bytes; a stage by bf16Stage elements.
	da0 := kernel.WGDescriptor(t, sm[wg*64*BF16BK:], kernel.WGSwizzle128, 16, 8*BF16BK*2)
	db0 := kernel.WGDescriptor(t, sm[bf16SA:], kernel.WGSwizzle128, BF16BK*128, 1024)
	const stageStep = kernel.WGDesc(bf16Stage * 2 / 16)

	var acc kernel.WGAcc256
	for i := int32(0); i < kt; i++ {
		kernel.CpAsyncWait(t, BF16Stages-3)
		kernel.FenceProxyAsync(t)
		t.SyncThreads() // stage i is in; every warpgroup waited for the MMAs of stage i-2
		if nxt := i + BF16Stages - 2; nxt < kt {
			bf16Load(t, sm[(nxt%BF16Stages)*bf16Stage:], ag[int(nxt*BF16BK):], bg[int(nxt*BF16BK)*int(n):], sa, sb, aStep, bStep, bvalid)
		}
		kernel.CpAsyncCommit(t)

		st := kernel.WGDesc(i%BF16Stages) * stageStep
		kernel.WGFence(t)
		//gocu:unroll
		for ks := int32(0); ks < bf16KS; ks++ {
			kernel.WGMMABF16(t, &acc, da0+st+kernel.WGDesc(ks*2), db0+st+kernel.WGDesc(ks*128), true, i > 0 || ks > 0)
		}
		kernel.WGCommit(t)
		kernel.WGWait(t, 1, &acc)
	}
	kernel.WGWait(t, 0, &acc)
	kernel.CpAsyncWait(t, 0)

	// Warp w of the warpgroup holds rows 16w+g and 16w+g+8 of its 64, and
	// per 8 columns j the columns 8j+2q, 8j+2q+1.
	lane := tid % 32
	w := (tid / 32) % 4
	g, q := lane/4, lane%4
	c2 := kernel.Reinterpret[kernel.BFloat16x2](c)
	row := int(bm + wg*64 + w*16 + g)
	//gocu:unroll
	for j := int32(0); j < BF16BN/8; j++ {
		col := bn + j*8 + 2*q
		if col < n {
			c2[(row*int(n)+int(col))/2] = kernel.ToBFloat16x2(acc[4*j], acc[4*j+1])
			c2[((row+8)*int(n)+int(col))/2] = kernel.ToBFloat16x2(acc[4*j+2], acc[4*j+3])
		}
	}
}

// bf16Load starts the copies of one stage: st is the stage's shared
// memory, ag and bg the thread's first a and b elements of the stage.
func bf16Load(t *kernel.Thread, st, ag, bg []kernel.BFloat16, sa, sb int32, aStep, bStep int, bvalid bool) {
	//gocu:unroll
	for p := 0; p < BF16BM/bf16ARows; p++ {
		kernel.CpAsync(t, st[sa+int32(p)*bf16ARows*BF16BK:], ag[p*aStep:])
	}
	//gocu:unroll
	for p := 0; p < BF16BK/bf16BRows; p++ {
		kernel.CpAsyncZfill(t, st[sb+int32(p)*bf16BRows*64:], bg[p*bStep:], bvalid)
	}
}
