package lecture

import "github.com/gocu-dev/gocu/kernel"

// The tiling of GemmBF16WG64 (gemm_wg32.go is the same kernel with
// 32-deep stages, eight of them, made from this file by tools/gemmgen.sh).
const (
	GW64BM      = 128 // rows of C per block: two warpgroups of 64
	GW64BN      = 256 // columns of C per block: one m64n256k16 per k-step
	GW64BK      = 64  // depth of a pipeline stage
	GW64Stages  = 4   // stages in shared memory: GW64Stages-2 loading, one computing, one still read by the MMAs in flight
	GW64Threads = 256 // two warpgroups

	gw64KS    = GW64BK / 16 // k-steps per stage
	gw64R     = GW64BK / 8  // 16-byte chunks per row of the a panel
	gw64SA    = GW64BM * GW64BK
	gw64Stage = gw64SA + GW64BK*GW64BN
	gw64ARows = GW64Threads / gw64R // a rows one pass of the block copies
	gw64BRows = GW64Threads / (GW64BN / 8)
	// GW64Shared is the dynamic shared memory of GemmBF16WG64 in bytes.
	GW64Shared = GW64Stages * gw64Stage * 2
)

// GemmBF16WG64 computes what GemmBF16 does on Hopper's warpgroup MMA
// (kernel.WGMMABF16, wgmma.mma_async): each of the block's two warpgroups
// computes a 64 x 256 tile of c with one m64n256k16 per k-step, the
// operands read by the tensor cores straight from shared memory through
// descriptors: no ldmatrix, and 128 accumulator registers per thread.
//
//   - a's panel is stored K-major with the 128-byte swizzle when stages
//     are 64 deep (rows of 128 bytes, chunk c of row r at c^(r%8)), or the
//     64-byte one when 32 deep; b's panel MN-major (rows of n, as b is
//     stored) with the 128-byte swizzle, in blocks of 64 columns;
//   - the copies are CpAsync, GW64Stages-2 stages ahead; each thread
//     fences the async proxy after its copies land (FenceProxyAsync), then
//     a barrier, then the MMAs of the stage are issued as one group, and
//     the warpgroup waits only for the group before (WGWait 1), so that
//     the MMAs of two stages overlap the barrier and the next copies;
//   - a stage is refilled two iterations after the MMAs that read it
//     were issued, when every warpgroup has waited for them.
//
// m must be a multiple of GW64BM, k of GW64BK and n of 8. Launch
// (ceil(n/GW64BN), m/GW64BM) blocks of GW64Threads threads with GW64Shared
// bytes of dynamic shared memory, on a GPU with sm_90a (an H100).
//
//gocu:kernel
//gocu:noalias
//gocu:launch_bounds 256 1
func GemmBF16WG64(t *kernel.Thread, a, b, c []kernel.BFloat16, m, n, k int32) {
	sm := kernel.DynamicShared[kernel.BFloat16](t)
	tid := t.ThreadIdx.X
	wg := tid / 128 // the warpgroup: rows 64wg of the block's tile
	bm, bn := t.BlockIdx.Y*GW64BM, t.BlockIdx.X*GW64BN
	kt := k / GW64BK

	// Copies: chunk ac of a rows ar + p*gw64ARows, chunk bc of b rows
	// br + p*gw64BRows. a's chunk c of row r is stored at c ^ sw(r) (rows
	// of gw64R chunks, 8 chunks per 128-byte line); b's column block
	// bc/8 of 64 columns is a 1024-byte-aligned run of 128-byte rows, its
	// chunk bc%8 of row r at (bc%8) ^ (r%8).
	ar, ac := tid/gw64R, tid%gw64R
	br, bc := tid/(GW64BN/8), tid%(GW64BN/8)
	bvalid := bn+bc*8 < n
	sa := ar*GW64BK + (ac^((ar/(8/gw64R))&(gw64R-1)))*8
	sb := gw64SA + (bc/8)*GW64BK*64 + br*64 + ((bc%8)^(br&7))*8
	ag := a[int(bm+ar)*int(k)+int(ac*8):]
	bg := b[int(br)*int(n)+int(bn+bc*8):]
	if !bvalid {
		bg = b
	}
	aStep, bStep := gw64ARows*int(k), gw64BRows*int(n)

	// Prologue: the first GW64Stages-2 stages in flight.
	for s := int32(0); s < GW64Stages-2; s++ {
		if s < kt {
			gw64Load(t, sm[s*gw64Stage:], ag[int(s*GW64BK):], bg[int(s*GW64BK)*int(n):], sa, sb, aStep, bStep, bvalid)
		}
		kernel.CpAsyncCommit(t)
	}

	// Descriptors of stage 0: the warpgroup's 64 rows of a (K-major), all
	// of b (MN-major: 64-column blocks GW64BK·128 bytes apart, 8-row
	// groups of k 1024 bytes apart). A k-step moves a's start by 32 bytes
	// and b's by 16 rows of 128 bytes; a stage by gw64Stage elements.
	aSw := kernel.WGSwizzle128
	if gw64R == 4 {
		aSw = kernel.WGSwizzle64
	}
	da0 := kernel.WGDescriptor(t, sm[wg*64*GW64BK:], aSw, 16, 8*GW64BK*2)
	db0 := kernel.WGDescriptor(t, sm[gw64SA:], kernel.WGSwizzle128, GW64BK*128, 1024)
	const stageStep = kernel.WGDesc(gw64Stage * 2 / 16)

	var acc kernel.WGAcc256
	for i := int32(0); i < kt; i++ {
		kernel.CpAsyncWait(t, GW64Stages-3)
		kernel.FenceProxyAsync(t)
		t.SyncThreads() // stage i is in; every warpgroup waited for the MMAs of stage i-2
		if nxt := i + GW64Stages - 2; nxt < kt {
			gw64Load(t, sm[(nxt%GW64Stages)*gw64Stage:], ag[int(nxt*GW64BK):], bg[int(nxt*GW64BK)*int(n):], sa, sb, aStep, bStep, bvalid)
		}
		kernel.CpAsyncCommit(t)

		st := kernel.WGDesc(i%GW64Stages) * stageStep
		kernel.WGFence(t)
		//gocu:unroll
		for ks := int32(0); ks < gw64KS; ks++ {
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
	for j := int32(0); j < GW64BN/8; j++ {
		col := bn + j*8 + 2*q
		if col < n {
			c2[(row*int(n)+int(col))/2] = kernel.ToBFloat16x2(acc[4*j], acc[4*j+1])
			c2[((row+8)*int(n)+int(col))/2] = kernel.ToBFloat16x2(acc[4*j+2], acc[4*j+3])
		}
	}
}

// gw64Load starts the copies of one stage: st is the stage's shared
// memory, ag and bg the thread's first a and b elements of the stage.
func gw64Load(t *kernel.Thread, st, ag, bg []kernel.BFloat16, sa, sb int32, aStep, bStep int, bvalid bool) {
	//gocu:unroll
	for p := 0; p < GW64BM/gw64ARows; p++ {
		kernel.CpAsync(t, st[sa+int32(p)*gw64ARows*GW64BK:], ag[p*aStep:])
	}
	//gocu:unroll
	for p := 0; p < GW64BK/gw64BRows; p++ {
		kernel.CpAsyncZfill(t, st[sb+int32(p)*gw64BRows*64:], bg[p*bStep:], bvalid)
	}
}
