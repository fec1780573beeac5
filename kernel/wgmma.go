package kernel

import (
	"fmt"
	"unsafe"
)

// Warpgroup MMA: Hopper's wgmma (PTX wgmma.mma_async, sm_90a). A warpgroup
// is four consecutive warps of a block, starting at a warp index divisible
// by four; together they compute a 64 x N tile of D = A B + D, N up to 256,
// with A (64 x 16) and B (16 x N) read by the tensor cores straight from
// shared memory through matrix descriptors (WGDescriptor), so that no
// ldmatrix and no register traffic feed them. The operation is
// asynchronous: WGMMABF16 issues it, WGCommit closes a group of them, and
// WGWait waits for groups to complete; meanwhile the warps issue other
// instructions (the next tile's copies, the softmax of attention).
//
// Only sm_90a has it (compute capability 9.0: the H100, H200, GH200). gocu
// gen marks a kernel that uses it (meta.Kernel.ArchSpecific), its package
// compiles for sm_90a on such a GPU, and the kernel's launcher refuses any
// other GPU with an error wrapping launch.ErrNeedsSM90a; the simulator
// runs it on any machine. Keep a kernel on MMABF16 (mma.sync, sm_80 and
// later) for the other GPUs.
//
// The rules, which the simulator checks:
//
//   - every thread of the warpgroup executes the same WGMMABF16 with the
//     same descriptors (and every lane of each warp: a warp operation);
//   - WGFence comes before the first WGMMABF16 after the kernel starts or
//     after a WGWait (it orders the accumulator registers the warps wrote
//     before the tensor cores read them);
//   - the accumulator is the tensor cores' from WGMMABF16 until the WGWait
//     that completes its group: the simulator fills it with NaN meanwhile
//     and writes the result at that WGWait, so code that reads it early
//     computes with NaN;
//   - shared memory a WGMMABF16 reads must not be written until its group
//     completes; shared memory written by the threads (stores, and
//     CpAsync, which writes through the generic proxy) must be followed
//     by FenceProxyAsync in each writing thread before the barrier after
//     which a WGMMABF16 reads it.
//
// Accumulators are float32 arrays of N/2 elements per thread: a WGAcc256
// holds a thread's part of a 64 x 256 tile. Warp w of the warpgroup holds
// rows 16w to 16w+15; within them, with g = LaneID()/4 and q = LaneID()%4,
// elements 4j to 4j+3 are (g, 8j+2q), (g, 8j+2q+1), (g+8, 8j+2q) and
// (g+8, 8j+2q+1): per 8 columns, the layout of a FragC.

// WGDesc is a wgmma shared-memory matrix descriptor: bits 0-13 hold the
// start address, 16-29 the leading-dimension byte offset (LBO) and 32-45
// the stride-dimension byte offset (SBO), each divided by 16; bits 62-63
// the swizzle mode. Adding n to a descriptor moves its start by 16n bytes
// (how a kernel steps through the k-slices of a tile). The start address
// is the GPU's shared-memory address on the GPU and the offset within the
// block's shared memory in the simulator, so the bits differ between the
// two; what they select does not.
type WGDesc uint64

// WGSwizzle is the layout of a wgmma operand in shared memory (the
// descriptor's swizzle mode). With a swizzle of S bytes (128, 64 or 32), the
// 16-byte chunk at shared address a is stored at a ^ ((a>>3) & (S-16)):
// the chunk index within its S-byte line XORed with the line's position in
// a 1024-byte period (rows of 128 bytes: chunk c of row r at c^(r%8)).
// Tiles must therefore start at a multiple of 1024 bytes of the block's
// dynamic shared memory, which the GPU aligns to 1024 for units that use
// wgmma.
type WGSwizzle uint8

// The layouts.
const (
	WGInterleave WGSwizzle = 0 // no swizzle: core matrices of 8 rows of 16 bytes
	WGSwizzle128 WGSwizzle = 1 // 128-byte swizzle
	WGSwizzle64  WGSwizzle = 2 // 64-byte swizzle
	WGSwizzle32  WGSwizzle = 3 // 32-byte swizzle
)

// WGAcc64, WGAcc128 and WGAcc256 are a thread's part of the float32
// accumulator of a warpgroup MMA of N = 64, 128 and 256 columns.
type (
	WGAcc64  [32]float32
	WGAcc128 [64]float32
	WGAcc256 [128]float32
)

// WGAcc is the accumulator of a warpgroup MMA; its size sets N.
type WGAcc interface{ WGAcc64 | WGAcc128 | WGAcc256 }

// WGDescriptor returns the descriptor of an operand tile that starts at
// tile[0] in shared memory (16-byte aligned), in the given layout; lbo and
// sbo are in bytes, multiples of 16 below 2^18. For the operand's canonical
// layouts (PTX ISA, "Shared Memory Matrix Layout"; T is 8 elements of 16
// bits, 16 bytes), an element (mn, k) of a K-major operand (A, or B when
// transB is false: rows of k) is at byte
//
//	(mn/8)·sbo + (mn%8)·S + (k/8)·16 + (k%8)·2        swizzled, S-byte rows
//	(mn/8)·sbo + (mn%8)·16 + (k/8)·lbo + (k%8)·2      WGInterleave
//
// and of an MN-major operand (B with transB: rows of n), with E = S/2
// elements per row,
//
//	(mn/E)·lbo + (mn%E)·2 + (k%8)·S + (k/8)·sbo       swizzled
//	(mn/8)·sbo + (mn%8)·2 + (k%8)·16 + (k/8)·lbo      WGInterleave
//
// from the start, before the swizzle. A 128 x 64 bf16 tile of 128-byte
// rows, K-major, is WGDescriptor(t, tile, WGSwizzle128, 16, 1024): rows of
// 128 bytes, groups of 8 rows 1024 bytes apart (lbo is unused by a
// swizzled K-major layout); the k-slice 16s of it is that descriptor plus
// 2s (32 bytes).
func WGDescriptor[T Bits16](t *Thread, tile []T, swizzle WGSwizzle, lbo, sbo int32) WGDesc {
	const op = "WGDescriptor"
	ex := t.warpgroup(op)
	if len(tile) == 0 {
		panic(&Fault{Op: op, Msg: "the tile is empty"})
	}
	if swizzle > WGSwizzle32 {
		panic(&Fault{Op: op, Msg: fmt.Sprintf("swizzle mode %d: want WGInterleave, WGSwizzle128, WGSwizzle64 or WGSwizzle32", swizzle)})
	}
	for _, v := range [2]int32{lbo, sbo} {
		if v < 0 || v%16 != 0 || v >= 1<<18 {
			panic(&Fault{Op: op, Msg: fmt.Sprintf("byte offset %d: want a multiple of 16 from 0 to 2^18-16", v)})
		}
	}
	addr := ex.SharedAddr(t, op, unsafe.Pointer(unsafe.SliceData(tile)))
	if addr%16 != 0 {
		panic(&Fault{Op: op, Misaligned: true, Msg: fmt.Sprintf("the tile's shared address %#x is not 16-byte aligned", addr)})
	}
	return WGDesc(uint64(addr>>4&0x3fff) | uint64(lbo>>4)<<16 | uint64(sbo>>4)<<32 | uint64(swizzle)<<62)
}

// WGMMABF16 issues D = A B + D (or D = A B when accumulate is false) for
// the warpgroup's 64 x N tile acc, N = 2·len(acc), with A the 64 x 16 bf16
// operand at descriptor a (K-major) and B the 16 x N bf16 operand at b,
// MN-major (rows of n, as a row-major k x n matrix is stored) when transB
// is true and K-major otherwise (PTX
// wgmma.mma_async.sync.aligned.m64nNk16.f32.bf16.bf16 with both operands
// in shared memory). transB must be a constant. The products are exact
// and summed in float64, rounded once to float32, as MMABF16 does; the
// tensor cores can differ in the last bits.
func WGMMABF16[A WGAcc](t *Thread, acc *A, a, b WGDesc, transB, accumulate bool) {
	wgmma(t, "WGMMABF16", unsafe.Pointer(acc), len(*acc), a, b, nil, transB, accumulate, bf16Value)
}

// WGMMAF16 is WGMMABF16 for fp16 operands (PTX ...f32.f16.f16).
func WGMMAF16[A WGAcc](t *Thread, acc *A, a, b WGDesc, transB, accumulate bool) {
	wgmma(t, "WGMMAF16", unsafe.Pointer(acc), len(*acc), a, b, nil, transB, accumulate, f16Value)
}

// WGMMABF16RS is WGMMABF16 with A in registers rather than shared memory
// (PTX wgmma.mma_async with a register operand A): each warp of the
// warpgroup passes its 16 rows of A as the threads' FragA, laid out as for
// MMABF16 (warp w holds rows 16w to 16w+15 of the 64). This is how
// FlashAttention-3 feeds the softmax P, which an accumulator already holds
// in that layout: accumulator elements 8j to 8j+7 packed in pairs make
// the A fragment of k-slice j. The simulator reads a at issue; on the
// GPU a's registers must not be written until the WGWait that completes
// the group.
func WGMMABF16RS[A WGAcc](t *Thread, acc *A, a FragA, b WGDesc, transB, accumulate bool) {
	wgmma(t, "WGMMABF16RS", unsafe.Pointer(acc), len(*acc), 0, b, &a, transB, accumulate, bf16Value)
}

// WGMMAF16RS is WGMMABF16RS for fp16 operands.
func WGMMAF16RS[A WGAcc](t *Thread, acc *A, a FragA, b WGDesc, transB, accumulate bool) {
	wgmma(t, "WGMMAF16RS", unsafe.Pointer(acc), len(*acc), 0, b, &a, transB, accumulate, f16Value)
}

// WGFence orders the warpgroup's earlier register accesses before the
// warpgroup MMAs that follow (PTX wgmma.fence.sync.aligned). It is needed
// before the first WGMMABF16 and after every WGWait.
func WGFence(t *Thread) { t.warpgroup("WGFence").FenceMMA(t) }

// WGCommit closes the group of the warpgroup MMAs this thread issued since
// the last commit (PTX wgmma.commit_group.sync.aligned).
func WGCommit(t *Thread) { t.warpgroup("WGCommit").CommitMMA(t) }

// WGWait waits until at most n of this thread's committed groups of
// warpgroup MMAs are still in flight (PTX wgmma.wait_group.sync.aligned n;
// n must be a constant from 0 to 7); acc, which the completed groups
// wrote, may then be read. On the GPU acc is also fenced so that the
// compiler does not move its reads above the wait.
func WGWait[A WGAcc](t *Thread, n int, acc *A) { t.warpgroup("WGWait").WaitMMA(t, n) }

// FenceProxyAsync orders this thread's earlier writes to shared memory
// (stores and completed CpAsync copies, which use the generic proxy)
// before later reads by the async proxy: the warpgroup MMAs (PTX
// fence.proxy.async.shared::cta). Each writing thread fences, then a
// barrier, then a WGMMABF16 may read the data. On GPUs before sm_90,
// which have no async proxy, it compiles to nothing.
func FenceProxyAsync(t *Thread) { t.warpgroup("FenceProxyAsync").FenceProxyAsync(t) }

// WarpgroupExecutor is the part of an executor that runs warpgroup MMAs.
// Package sim implements it.
type WarpgroupExecutor interface {
	MatrixExecutor
	// SharedAddr returns the shared address of p: its offset within the
	// block's shared memory. It reports p outside shared memory.
	SharedAddr(t *Thread, op string, p unsafe.Pointer) uint32
	// ReadAsync returns the 16 bytes at shared address addr, which an
	// asynchronous operation of t's warp reads until its group completes:
	// it checks that they are the block's shared memory, that no copy is
	// pending into them and that their writers fenced the generic proxy,
	// and records the read.
	ReadAsync(t *Thread, op string, addr uint32) unsafe.Pointer
	// IssueMMA queues t's part d of a warpgroup MMA on the accumulator at
	// acc (len(d) float32s): acc is poisoned now and receives d when
	// WaitMMA completes the group. The check that WGFence came first is
	// here.
	IssueMMA(t *Thread, op string, acc unsafe.Pointer, d []float32)
	// PendingMMA returns the value a queued MMA will give the accumulator
	// at acc (the latest), or nil when none is queued.
	PendingMMA(t *Thread, acc unsafe.Pointer) []float32
	FenceMMA(t *Thread)
	CommitMMA(t *Thread)
	WaitMMA(t *Thread, n int)
	FenceProxyAsync(t *Thread)
}

func (t *Thread) warpgroup(op string) WarpgroupExecutor {
	if m, ok := t.exec(op).(WarpgroupExecutor); ok {
		return m
	}
	panic(&Fault{Op: op, Msg: "the executor does not run warpgroup matrix operations"})
}

// wgLane is one lane's operands of a warpgroup MMA.
type wgLane struct {
	a, b       WGDesc
	transB     bool
	accumulate bool
	rs         bool // A in registers: fa
	fa         FragA
	val        func(uint16) float64
	n          int       // columns
	am         []float64 // lane 0: the warp's 16 rows of A, 16 x 16
	bm         []float64 // lane 0: B, 16 x n
	c, d       []float32
	err        string
}

func wgmma(t *Thread, op string, acc unsafe.Pointer, regs int, a, b WGDesc, fa *FragA, transB, accumulate bool, val func(uint16) float64) {
	ex := t.warpgroup(op)
	l := &wgLane{a: a, b: b, transB: transB, accumulate: accumulate, n: 2 * regs, rs: fa != nil, val: val}
	if fa != nil {
		l.fa = *fa
	}
	if t.LaneID() == 0 {
		w := int(t.WarpID() % 4)
		l.am = make([]float64, 16*16) // from the lanes' fragments in wgmmaDo when fa is set
		for r := range 16 * b2i(fa == nil) {
			for kc := range 2 {
				p := ex.ReadAsync(t, op, wgChunk(a, false, 16*w+r, 8*kc))
				for e := range 8 {
					l.am[r*16+8*kc+e] = val(*(*uint16)(unsafe.Add(p, 2*e)))
				}
			}
		}
		l.bm = make([]float64, 16*l.n)
		if transB {
			for k := range 16 {
				for n0 := 0; n0 < l.n; n0 += 8 {
					p := ex.ReadAsync(t, op, wgChunk(b, true, n0, k))
					for e := range 8 {
						l.bm[k*l.n+n0+e] = val(*(*uint16)(unsafe.Add(p, 2*e)))
					}
				}
			}
		} else {
			for n := range l.n {
				for kc := range 2 {
					p := ex.ReadAsync(t, op, wgChunk(b, false, n, 8*kc))
					for e := range 8 {
						l.bm[(8*kc+e)*l.n+n] = val(*(*uint16)(unsafe.Add(p, 2*e)))
					}
				}
			}
		}
	}
	if accumulate {
		if c := ex.PendingMMA(t, acc); c != nil {
			l.c = c
		} else {
			l.c = append([]float32(nil), unsafe.Slice((*float32)(acc), regs)...)
		}
	}
	ex.Collective(t, op, l, wgmmaDo)
	if l.err != "" {
		panic(&Fault{Op: op, Msg: l.err})
	}
	ex.IssueMMA(t, op, acc, l.d)
}

// wgChunk returns the shared address of the 16-byte chunk that holds
// elements (mn, k..k+7) of a K-major operand (mnMajor false, k a multiple
// of 8) or (mn..mn+7, k) of an MN-major one (mn a multiple of 8), after
// the swizzle.
func wgChunk(d WGDesc, mnMajor bool, mn, k int) uint32 {
	start := uint32(d&0x3fff) << 4
	lbo := uint32(d>>16&0x3fff) << 4
	sbo := uint32(d>>32&0x3fff) << 4
	sw := WGSwizzle(d >> 62)
	var s uint32 // bytes per swizzled row: 128, 64, 32
	switch sw {
	case WGSwizzle128:
		s = 128
	case WGSwizzle64:
		s = 64
	case WGSwizzle32:
		s = 32
	}
	m, kk := uint32(mn), uint32(k)
	var off uint32
	switch {
	case !mnMajor && sw == WGInterleave:
		off = m/8*sbo + m%8*16 + kk/8*lbo
	case !mnMajor:
		off = m/8*sbo + m%8*s + kk/8*16
	case sw == WGInterleave:
		off = m/8*sbo + kk%8*16 + kk/8*lbo
	default:
		e := s / 2
		off = m/e*lbo + m%e*2 + kk%8*s + kk/8*sbo
	}
	addr := start + off
	if sw != WGInterleave {
		addr ^= addr >> 3 & (s - 16)
	}
	return addr
}

// wgmmaDo computes one warp's 16 rows of a warpgroup MMA.
func wgmmaDo(args *[WarpSize]any) {
	l0 := args[0].(*wgLane)
	for lane := 1; lane < WarpSize; lane++ {
		l := args[lane].(*wgLane)
		if l.a != l0.a || l.b != l0.b || l.transB != l0.transB || l.accumulate != l0.accumulate || l.n != l0.n {
			msg := fmt.Sprintf("lanes of a warp disagree: lane 0 passes descriptors %#x, %#x (transB %v, accumulate %v, N %d), lane %d %#x, %#x (transB %v, accumulate %v, N %d)",
				uint64(l0.a), uint64(l0.b), l0.transB, l0.accumulate, l0.n, lane, uint64(l.a), uint64(l.b), l.transB, l.accumulate, l.n)
			for i := range WarpSize {
				args[i].(*wgLane).err = msg
			}
			return
		}
	}
	if l0.rs {
		// The fragments of MMABF16's A: register r of lane (g, q) holds
		// row g+8(r&1), columns 2q+8(r>>1) and the next.
		for lane := range WarpSize {
			l := args[lane].(*wgLane)
			g, q := lane/4, lane%4
			for r := range 4 {
				row, col := g+8*(r&1), 2*q+8*(r>>1)
				l0.am[row*16+col] = l0.val(uint16(l.fa[r]))
				l0.am[row*16+col+1] = l0.val(uint16(l.fa[r] >> 16))
			}
		}
	}
	n := l0.n
	for lane := range WarpSize {
		l := args[lane].(*wgLane)
		g, q := lane/4, lane%4
		l.d = make([]float32, n/2)
		for j := range n / 8 {
			for r := range 4 {
				row, col := g+8*(r>>1), 8*j+2*q+r&1
				s := 0.0
				if l.accumulate {
					s = float64(l.c[4*j+r])
				}
				for k := range 16 {
					s += l0.am[row*16+k] * l0.bm[k*n+col]
				}
				l.d[4*j+r] = float32(s)
			}
		}
	}
}
