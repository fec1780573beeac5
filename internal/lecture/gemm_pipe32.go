package lecture

import "github.com/gocu-dev/gocu/kernel"

// The tiling of GemmBF16Pipe32 (gemm_pipe64.go is the same kernel with
// 64-deep stages, three of them, made from this file by tools/gemmgen.sh).
const (
	GP32BM      = 128 // rows of C per block
	GP32BN      = 256 // columns of C per block
	GP32BK      = 32  // depth of a pipeline stage
	GP32Stages  = 4   // stages of the cp.async pipeline
	GP32Threads = 256 // 8 warps: 2 along M x 4 along N, each 64 x 64 of C

	gp32KS    = GP32BK / 16 // warp k-steps per stage
	gp32R     = GP32BK / 8  // 16-byte chunks per row of the a panel
	gp32SA    = GP32BM * GP32BK
	gp32Stage = gp32SA + GP32BK*GP32BN
	gp32ARows = GP32Threads / gp32R // a rows one pass of the block copies
	gp32BRows = GP32Threads / (GP32BN / 8)
	// GP32Shared is the dynamic shared memory of GemmBF16Pipe32 in bytes.
	GP32Shared = GP32Stages * gp32Stage * 2
)

// GemmBF16Pipe32 computes what GemmBF16 does with the same tiles (128 x
// 256 per block, 64 x 64 per warp, mma.sync m16n8k16) and a software
// pipeline in the registers as well as in shared memory, after the H100
// profile of GemmBF16 (tensor pipe 50% busy, issue slots 27%):
//
//   - the fragments of the next k-step are loaded (ldmatrix) while the
//     MMAs of this one issue, in two register sets, and across stages:
//     the wait and barrier for the next stage come before the last k-step
//     of this one, so that its first fragments load while the last 32
//     MMAs of this stage run, and the tensor cores never wait for
//     ldmatrix after a barrier;
//   - every ldmatrix address is a slice made once per stage plus a
//     constant, so the loop does almost no address arithmetic.
//
// Constraints and launch as GemmBF16, with GP32 constants: m a multiple of
// GP32BM, k of GP32BK, n of 8; (ceil(n/GP32BN), m/GP32BM) blocks of
// GP32Threads threads and GP32Shared bytes of dynamic shared memory.
//
//gocu:kernel
//gocu:noalias
//gocu:launch_bounds 256 1
func GemmBF16Pipe32(t *kernel.Thread, a, b, c []kernel.BFloat16, m, n, k int32) {
	sm := kernel.DynamicShared[kernel.BFloat16](t)
	tid := t.ThreadIdx.X
	warp, lane := tid/32, tid%32
	wm, wn := warp/4, warp%4 // the warp's 64 x 64 tile: rows 64wm, columns 64wn
	bm, bn := t.BlockIdx.Y*GP32BM, t.BlockIdx.X*GP32BN
	kt := k / GP32BK

	// Copies: chunk ac of a rows ar + p*gp32ARows, chunk bc of b rows
	// br + p*gp32BRows. A row's chunk c is stored at c ^ sw(row): rows of
	// gp32R chunks, 8 chunks per 128-byte line, the XOR taken from the
	// row's position among the 8 / gp32R rows of its line.
	ar, ac := tid/gp32R, tid%gp32R
	br, bc := tid/(GP32BN/8), tid%(GP32BN/8)
	bvalid := bn+bc*8 < n
	sa := ar*GP32BK + (ac^((ar/(8/gp32R))&(gp32R-1)))*8
	sb := gp32SA + br*GP32BN + (bc^(br&7))*8
	ag := a[int(bm+ar)*int(k)+int(ac*8):]
	bg := b[int(br)*int(n)+int(bn+bc*8):]
	if !bvalid {
		bg = b
	}
	aStep, bStep := gp32ARows*int(k), gp32BRows*int(n)

	// Prologue: the first GP32Stages-1 stages in flight.
	for s := int32(0); s < GP32Stages-1; s++ {
		if s < kt {
			gp32Load(t, sm[s*gp32Stage:], ag[int(s*GP32BK):], bg[int(s*GP32BK)*int(n):], sa, sb, aStep, bStep, bvalid)
		}
		kernel.CpAsyncCommit(t)
	}

	// Per-lane ldmatrix offsets within a stage. a: rows 64wm + 16mi +
	// lane%16, chunk 2ks + lane/16. b (k-major, transposed loads): rows
	// 16ks + lane%16, chunk 8wn + 2nj + lane/16, stored at chunk ^ (row&7)
	// = 8wn + 2(nj^h) + ((lane/16)^lane)&1 with h = (lane&7)/2.
	lr, lc := lane%16, lane/16
	var aOff [gp32KS]int32
	//gocu:unroll
	for ks := int32(0); ks < gp32KS; ks++ {
		aOff[ks] = (wm*64+lr)*GP32BK + ((2*ks+lc)^((lr/(8/gp32R))&(gp32R-1)))*8
	}
	var bOff [4]int32
	//gocu:unroll
	for nj := int32(0); nj < 4; nj++ {
		bOff[nj] = gp32SA + lr*GP32BN + (wn*8+2*(nj^((lr&7)/2))+((lc^lr)&1))*8
	}

	var acc [4][8]kernel.FragC
	var af [2][4]kernel.FragA
	var bf [2][8]kernel.FragB
	kernel.CpAsyncWait(t, GP32Stages-2)
	t.SyncThreads()
	af[0], bf[0] = gp32Frags(t, sm, aOff[0], bOff, 0)
	for i := int32(0); i < kt; i++ {
		st := (i % GP32Stages) * gp32Stage
		//gocu:unroll
		for ks := int32(0); ks < gp32KS; ks++ {
			if ks == gp32KS-1 {
				// The next stage is in for every thread, and every warp is
				// done with the stage the copies below refill.
				kernel.CpAsyncWait(t, GP32Stages-2)
				t.SyncThreads()
			}
			if ks < gp32KS-1 {
				af[(ks+1)%2], bf[(ks+1)%2] = gp32Frags(t, sm[st:], aOff[ks+1], bOff, ks+1)
			} else if i+1 < kt {
				af[(ks+1)%2], bf[(ks+1)%2] = gp32Frags(t, sm[((i+1)%GP32Stages)*gp32Stage:], aOff[0], bOff, 0)
			}
			if ks == 0 {
				// Refill the stage read in iteration i-1: its last reads
				// came before the barrier of that iteration.
				if nxt := i + GP32Stages - 1; nxt < kt {
					gp32Load(t, sm[(nxt%GP32Stages)*gp32Stage:], ag[int(nxt*GP32BK):], bg[int(nxt*GP32BK)*int(n):], sa, sb, aStep, bStep, bvalid)
				}
				kernel.CpAsyncCommit(t)
			}
			//gocu:unroll
			for mi := 0; mi < 4; mi++ {
				//gocu:unroll
				for ni := 0; ni < 8; ni++ {
					acc[mi][ni] = kernel.MMABF16(t, af[ks%2][mi], bf[ks%2][ni], acc[mi][ni])
				}
			}
		}
	}
	kernel.CpAsyncWait(t, 0)

	// Each lane holds, per MMA tile, rows g and g+8 and columns 2q, 2q+1.
	c2 := kernel.Reinterpret[kernel.BFloat16x2](c)
	g, q := lane/4, lane%4
	//gocu:unroll
	for mi := 0; mi < 4; mi++ {
		row := int(bm + wm*64 + int32(mi)*16 + g)
		//gocu:unroll
		for ni := 0; ni < 8; ni++ {
			col := bn + wn*64 + int32(ni)*8 + 2*q
			if col < n {
				v := acc[mi][ni]
				c2[(row*int(n)+int(col))/2] = kernel.ToBFloat16x2(v[0], v[1])
				c2[((row+8)*int(n)+int(col))/2] = kernel.ToBFloat16x2(v[2], v[3])
			}
		}
	}
}

// gp32Load starts the copies of one stage: st is the stage's shared
// memory, ag and bg the thread's first a and b elements of the stage.
func gp32Load(t *kernel.Thread, st, ag, bg []kernel.BFloat16, sa, sb int32, aStep, bStep int, bvalid bool) {
	//gocu:unroll
	for p := 0; p < GP32BM/gp32ARows; p++ {
		kernel.CpAsync(t, st[sa+int32(p)*gp32ARows*GP32BK:], ag[p*aStep:])
	}
	//gocu:unroll
	for p := 0; p < GP32BK/gp32BRows; p++ {
		kernel.CpAsyncZfill(t, st[sb+int32(p)*gp32BRows*GP32BN:], bg[p*bStep:], bvalid)
	}
}

// gp32Frags loads the warp's fragments of k-step ks of a stage (st is the
// stage's shared memory): 4 A fragments (rows 16mi) and 8 B fragments
// (columns 8ni).
func gp32Frags(t *kernel.Thread, st []kernel.BFloat16, aOff int32, bOff [4]int32, ks int32) ([4]kernel.FragA, [8]kernel.FragB) {
	var af [4]kernel.FragA
	var bf [8]kernel.FragB
	as := st[aOff:]
	//gocu:unroll
	for mi := int32(0); mi < 4; mi++ {
		af[mi] = kernel.LdMatrixX4(t, as[mi*16*GP32BK:])
	}
	//gocu:unroll
	for nj := int32(0); nj < 4; nj++ {
		bs := st[bOff[nj]:]
		r := kernel.LdMatrixX4Trans(t, bs[ks*16*GP32BN:])
		bf[2*nj] = kernel.FragB{r[0], r[1]}
		bf[2*nj+1] = kernel.FragB{r[2], r[3]}
	}
	return af, bf
}
