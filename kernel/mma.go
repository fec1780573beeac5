package kernel

import (
	"fmt"
	"math"
	"unsafe"
)

// Tensor cores, warp by warp. The functions in this file are PTX's
// warp-level matrix instructions with typed operands: every lane of a warp
// calls the same function with its own part of the operands (its
// fragment), and the warp computes together.
//
// The shapes are those Hopper and Ampere run fastest without the
// warpgroup instructions (wgmma): m16n8k16 for bf16 and fp16 inputs and
// m16n8k8 for tf32, both accumulating in float32 (PTX
// mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 and its kin). The
// operands come from shared memory through LdMatrix (PTX ldmatrix), which
// gives exactly the fragments MMA wants, and global memory reaches shared
// memory through CpAsync (PTX cp.async), so that a kernel can load the
// next tiles while the tensor cores work on this one.
//
// Fragments are register arrays. Which lane holds which element is fixed
// by the PTX ISA ("Matrix Fragments for mma.m16n8k16"), with
// g = LaneID()/4 and q = LaneID()%4:
//
//	FragA (16x16, row-major A):  [0] rows g,   columns 2q, 2q+1      [1] rows g+8, columns 2q, 2q+1
//	                             [2] rows g,   columns 2q+8, 2q+9    [3] rows g+8, columns 2q+8, 2q+9
//	FragB (16x8, B by columns):  [0] rows 2q, 2q+1 of column g       [1] rows 2q+8, 2q+9 of column g
//	FragC (16x8, float32):       [0] (g, 2q)  [1] (g, 2q+1)  [2] (g+8, 2q)  [3] (g+8, 2q+1)
//
// Each register of FragA and FragB holds two 16-bit elements, the one with
// the lower column (FragA) or row (FragB) in the low half (PackBFloat16x2
// and PackHalf2 build one). The simulator uses exactly this ownership, so
// a kernel that reads or builds fragment elements directly, as attention
// does with its probabilities, gets the GPU's answer.
//
// Every lane of the warp must reach the same matrix operation (no
// divergence, no exited lanes, a full warp); the simulator reports a warp
// that does not, like a partial shuffle.

// FragA is a lane's part of the A operand of a 16x8x16 MMA: a 16x16 tile
// of bf16 or fp16, two elements per register.
type FragA [4]uint32

// FragB is a lane's part of the B operand of a 16x8x16 MMA: a 16x8 tile of
// bf16 or fp16 (16 rows of k, 8 columns of n).
type FragB [2]uint32

// FragC is a lane's part of the float32 accumulator of a 16x8 MMA tile,
// both its input C and its result D.
type FragC [4]float32

// FragATF32 is a lane's part of the A operand of a 16x8x8 tf32 MMA (a
// 16x8 tile): [0] (g, q), [1] (g+8, q), [2] (g, q+4), [3] (g+8, q+4).
type FragATF32 [4]float32

// FragBTF32 is a lane's part of the B operand of a 16x8x8 tf32 MMA (8x8):
// [0] (row q, column g), [1] (row q+4, column g).
type FragBTF32 [2]float32

// MMABF16 returns a*b + c for the warp's 16x16 bf16 tile a, 16x8 bf16 tile
// b and 16x8 float32 tile c (PTX
// mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32). The simulator
// computes each element as the exact products summed in float64 and
// rounded once to float32; the tensor cores sum with an internal precision
// of their own, so results can differ from the simulator's in the last
// bits of float32, never more.
func MMABF16(t *Thread, a FragA, b FragB, c FragC) FragC {
	return mma(t, "MMABF16", &mmaLane{a: a, b: b, c: c}, mmaBF16Do)
}

// MMAF16 is MMABF16 for fp16 inputs (PTX
// mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32).
func MMAF16(t *Thread, a FragA, b FragB, c FragC) FragC {
	return mma(t, "MMAF16", &mmaLane{a: a, b: b, c: c}, mmaF16Do)
}

// MMATF32 returns a*b + c for the warp's 16x8 tf32 tile a, 8x8 tf32 tile b
// and 16x8 float32 tile c (PTX
// mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32). The tensor cores
// read only the upper 19 bits of each float32 operand (sign, exponent and
// 10 fraction bits); round operands with ToTF32 first to round to nearest
// instead of truncating.
func MMATF32(t *Thread, a FragATF32, b FragBTF32, c FragC) FragC {
	l := &mmaLane{c: c}
	for i, v := range a {
		l.a[i] = math.Float32bits(v)
	}
	for i, v := range b {
		l.b[i] = math.Float32bits(v)
	}
	return mma(t, "MMATF32", l, mmaTF32Do)
}

// ToTF32 rounds x to tf32 precision (10 fraction bits), ties away from
// zero, as PTX cvt.rna.tf32.f32 does; the result is a float32 whose low 13
// bits are zero. NaN and infinities pass through.
func ToTF32(x float32) float32 {
	b := math.Float32bits(x)
	if b&0x7f800000 == 0x7f800000 {
		return x
	}
	return math.Float32frombits((b + 0x1000) &^ 0x1fff)
}

// mmaLane is one lane's operands and result of an MMA.
type mmaLane struct {
	a [4]uint32
	b [2]uint32
	c FragC
	d FragC
}

func mma(t *Thread, op string, l *mmaLane, do func(*[WarpSize]any)) FragC {
	t.matrix(op).Collective(t, op, l, do)
	return l.d
}

var (
	mmaBF16Do = func(args *[WarpSize]any) { mma16816(args, bf16Value) }
	mmaF16Do  = func(args *[WarpSize]any) { mma16816(args, f16Value) }
	mmaTF32Do = func(args *[WarpSize]any) { mma1688(args) }
)

func bf16Value(b uint16) float64 { return float64(BFloat16(b).Float32()) }
func f16Value(b uint16) float64  { return float64(Half(b).Float32()) }

// mma16816 performs m16n8k16 for the warp whose lanes' operands are args.
func mma16816(args *[WarpSize]any, val func(uint16) float64) {
	var a [16][16]float64
	var b [16][8]float64
	var c [16][8]float32
	for lane := range WarpSize {
		l := args[lane].(*mmaLane)
		g, q := lane/4, lane%4
		for r := range 4 {
			row, col := g+8*(r&1), 2*q+8*(r>>1)
			a[row][col] = val(uint16(l.a[r]))
			a[row][col+1] = val(uint16(l.a[r] >> 16))
		}
		for r := range 2 {
			k := 2*q + 8*r
			b[k][g] = val(uint16(l.b[r]))
			b[k+1][g] = val(uint16(l.b[r] >> 16))
		}
		for r := range 4 {
			c[g+8*(r>>1)][2*q+r&1] = l.c[r]
		}
	}
	var d [16][8]float32
	for i := range 16 {
		for j := range 8 {
			d[i][j] = dot(a[i][:], b[:], j, c[i][j])
		}
	}
	for lane := range WarpSize {
		l := args[lane].(*mmaLane)
		g, q := lane/4, lane%4
		for r := range 4 {
			l.d[r] = d[g+8*(r>>1)][2*q+r&1]
		}
	}
}

// mma1688 performs the tf32 m16n8k8 for the warp.
func mma1688(args *[WarpSize]any) {
	var a [16][8]float64
	var b [8][8]float64
	var c [16][8]float32
	tf := func(u uint32) float64 { return float64(math.Float32frombits(u &^ 0x1fff)) }
	for lane := range WarpSize {
		l := args[lane].(*mmaLane)
		g, q := lane/4, lane%4
		for r := range 4 {
			a[g+8*(r&1)][q+4*(r>>1)] = tf(l.a[r])
		}
		for r := range 2 {
			b[q+4*r][g] = tf(l.b[r])
		}
		for r := range 4 {
			c[g+8*(r>>1)][2*q+r&1] = l.c[r]
		}
	}
	for lane := range WarpSize {
		l := args[lane].(*mmaLane)
		g, q := lane/4, lane%4
		for r := range 4 {
			i, j := g+8*(r>>1), 2*q+r&1
			s := float64(c[i][j])
			for k := range 8 {
				s += a[i][k] * b[k][j]
			}
			l.d[r] = float32(s)
		}
	}
}

// dot returns sum_k a[k]*b[k][j] + c, the products exact, summed in
// float64 and rounded once to float32.
func dot(a []float64, b [][8]float64, j int, c float32) float32 {
	s := float64(c)
	for k := range a {
		s += a[k] * b[k][j]
	}
	return float32(s)
}

// LdMatrixX4 loads four 8x8 matrices of 16-bit elements from shared memory
// (PTX ldmatrix.sync.aligned.m8n8.x4.shared.b16). Lane l passes row, the
// 8 elements (16 bytes, 16-byte aligned) of row l%8 of matrix l/8; lane l
// receives in register m the elements 2(l%4) and 2(l%4)+1 of row l/4 of
// matrix m. For the A operand of MMABF16, lane l passes row l%16, columns
// 8(l/16) onward, of the 16x16 tile: the four registers are then its FragA.
func LdMatrixX4[T Bits16](t *Thread, row []T) [4]uint32 {
	return ldmatrix(t, "LdMatrixX4", row, 4, false)
}

// LdMatrixX2 loads two 8x8 matrices (PTX ldmatrix...x2); lanes 0-15 pass
// rows, the addresses of lanes 16-31 are ignored. For a B operand stored
// as n rows of k (K in attention's Q K^T), lane l passes row l%8 of n,
// columns 8(l/8%2) onward of k: the registers are its FragB.
func LdMatrixX2[T Bits16](t *Thread, row []T) [2]uint32 {
	r := ldmatrix(t, "LdMatrixX2", row, 2, false)
	return [2]uint32{r[0], r[1]}
}

// LdMatrixX1 loads one 8x8 matrix (PTX ldmatrix...x1); lanes 0-7 pass rows.
func LdMatrixX1[T Bits16](t *Thread, row []T) uint32 {
	return ldmatrix(t, "LdMatrixX1", row, 1, false)[0]
}

// LdMatrixX4Trans loads four 8x8 matrices transposed (PTX
// ldmatrix...x4.trans.shared.b16): lane l receives in register m the
// elements in column l/4 of rows 2(l%4) and 2(l%4)+1 of matrix m. For a B
// operand stored as k rows of n (row-major B in a GEMM, V in attention),
// lane l passes row l%16 of k, columns 8(l/16) onward of n: registers 0
// and 1 are the FragB of columns 0-7, registers 2 and 3 that of columns
// 8-15.
func LdMatrixX4Trans[T Bits16](t *Thread, row []T) [4]uint32 {
	return ldmatrix(t, "LdMatrixX4Trans", row, 4, true)
}

// LdMatrixX2Trans loads two 8x8 matrices transposed; lanes 0-15 pass rows.
// Lane l passing row l%16 of a k x n tile gives the FragB of its first 8
// columns.
func LdMatrixX2Trans[T Bits16](t *Thread, row []T) [2]uint32 {
	r := ldmatrix(t, "LdMatrixX2Trans", row, 2, true)
	return [2]uint32{r[0], r[1]}
}

// LdMatrixX1Trans loads one 8x8 matrix transposed; lanes 0-7 pass rows.
func LdMatrixX1Trans[T Bits16](t *Thread, row []T) uint32 {
	return ldmatrix(t, "LdMatrixX1Trans", row, 1, true)[0]
}

// ldLane is one lane's row address and result of an ldmatrix.
type ldLane struct {
	p unsafe.Pointer
	r [4]uint32
}

func ldmatrix[T Bits16](t *Thread, op string, row []T, num int, trans bool) [4]uint32 {
	ex := t.matrix(op)
	l := &ldLane{}
	if lane := t.LaneID(); int(lane) < 8*num {
		if len(row) < 8 {
			panic(&Fault{Op: op, Msg: fmt.Sprintf("lane %d's row has %d elements: ldmatrix reads 8 (16 bytes) at each row address", lane, len(row))})
		}
		l.p = unsafe.Pointer(unsafe.SliceData(row))
		if uintptr(l.p)%16 != 0 {
			panic(&Fault{Op: op, Misaligned: true, Msg: fmt.Sprintf("lane %d's row address %#x is not 16-byte aligned (a misaligned address on the GPU)", lane, uintptr(l.p))})
		}
		ex.SharedRead(t, op, l.p, 16)
	}
	ex.Collective(t, op, l, ldDo[num/2+3*b2i(trans)]) // num 1, 2, 4: 0, 1, 2
	return l.r
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

var ldDo = [6]func(*[WarpSize]any){
	func(a *[WarpSize]any) { ldWarp(a, 1, false) }, func(a *[WarpSize]any) { ldWarp(a, 2, false) }, func(a *[WarpSize]any) { ldWarp(a, 4, false) },
	func(a *[WarpSize]any) { ldWarp(a, 1, true) }, func(a *[WarpSize]any) { ldWarp(a, 2, true) }, func(a *[WarpSize]any) { ldWarp(a, 4, true) },
}

// ldWarp performs an ldmatrix for the warp whose lanes' row addresses are
// args.
func ldWarp(args *[WarpSize]any, num int, trans bool) {
	var rows [WarpSize]unsafe.Pointer
	for lane := range 8 * num {
		rows[lane] = args[lane].(*ldLane).p
	}
	for lane := range WarpSize {
		l := args[lane].(*ldLane)
		for m := range num {
			if !trans {
				l.r[m] = *(*uint32)(unsafe.Add(rows[8*m+lane/4], 4*(lane%4)))
				continue
			}
			lo := *(*uint16)(unsafe.Add(rows[8*m+2*(lane%4)], 2*(lane/4)))
			hi := *(*uint16)(unsafe.Add(rows[8*m+2*(lane%4)+1], 2*(lane/4)))
			l.r[m] = uint32(lo) | uint32(hi)<<16
		}
	}
}

// CpAsync starts copying 16 bytes from global memory at src to shared
// memory at dst (PTX cp.async.cg.shared.global, which bypasses L1): the
// first 16/size elements of each, both 16-byte aligned. The copy completes
// at a CpAsyncWait that waits for its group (CpAsyncCommit closes a
// group); until then dst must not be read or written, and the simulator
// reports a read of it (in checked mode for ordinary reads, always for
// LdMatrix). Other threads see the data after the wait and a SyncThreads.
func CpAsync[T any](t *Thread, dst, src []T) { cpAsync(t, "CpAsync", dst, src, true) }

// CpAsyncZfill is CpAsync that writes 16 zero bytes to dst instead when
// valid is false, reading nothing (PTX cp.async with a source size of 0):
// the way a tile load handles rows or columns past the end of a matrix.
// src need not hold 16 bytes when valid is false.
func CpAsyncZfill[T any](t *Thread, dst, src []T, valid bool) {
	cpAsync(t, "CpAsyncZfill", dst, src, valid)
}

func cpAsync[T any](t *Thread, op string, dst, src []T, valid bool) {
	ex := t.matrix(op)
	var z T
	size := int(unsafe.Sizeof(z))
	if size == 0 || 16%size != 0 {
		panic(&Fault{Op: op, Msg: fmt.Sprintf("element type %T does not divide 16 bytes", z)})
	}
	n := 16 / size
	if len(dst) < n {
		panic(&Fault{Op: op, Msg: fmt.Sprintf("dst has %d elements: cp.async writes %d (16 bytes)", len(dst), n)})
	}
	d := unsafe.Pointer(unsafe.SliceData(dst))
	var s unsafe.Pointer
	if valid {
		if len(src) < n {
			panic(&Fault{Op: op, Msg: fmt.Sprintf("src has %d elements: cp.async reads %d (16 bytes)", len(src), n)})
		}
		s = unsafe.Pointer(unsafe.SliceData(src))
		if uintptr(s)%16 != 0 {
			panic(&Fault{Op: op, Misaligned: true, Msg: fmt.Sprintf("src address %#x is not 16-byte aligned (a misaligned address on the GPU)", uintptr(s))})
		}
	}
	if uintptr(d)%16 != 0 {
		panic(&Fault{Op: op, Misaligned: true, Msg: fmt.Sprintf("dst address %#x is not 16-byte aligned (a misaligned address on the GPU)", uintptr(d))})
	}
	ex.CopyAsync(t, op, d, s, 16, uintptr(size))
}

// CpAsyncCommit closes the group of the CpAsync calls this thread made
// since the last commit (PTX cp.async.commit_group). An empty group is
// fine, and keeps a pipeline's counting uniform at its end.
func CpAsyncCommit(t *Thread) { t.matrix("CpAsyncCommit").CommitAsync(t) }

// CpAsyncWait waits until at most n of this thread's committed groups are
// still in flight, the most recent ones (PTX cp.async.wait_group n); n
// must be a constant. CpAsyncWait(t, 0) waits for every committed group.
// It orders nothing between threads: follow it with SyncThreads before
// other threads read what this one copied.
func CpAsyncWait(t *Thread, n int) { t.matrix("CpAsyncWait").WaitAsync(t, n) }

// MatrixExecutor is the part of an executor that runs the warp-wide matrix
// operations and the asynchronous copies. Package sim implements it; an
// executor without it makes those operations panic with a *Fault.
type MatrixExecutor interface {
	// Collective waits until every lane of t's warp has reached a
	// collective operation, checks that they all call op, then calls do
	// once with each lane's arg in lane order, and returns. The warp must
	// be full.
	Collective(t *Thread, op string, arg any, do func(args *[WarpSize]any))
	// SharedRead checks that the n bytes at p are the block's shared
	// memory with no asynchronous copy pending into them, and records the
	// read for race detection.
	SharedRead(t *Thread, op string, p unsafe.Pointer, n uintptr)
	// CopyAsync queues a copy of n bytes from src to dst in t's current
	// group, or of n zero bytes when src is nil; elem is the size of the
	// elements the kernel reads them as.
	CopyAsync(t *Thread, op string, dst, src unsafe.Pointer, n, elem uintptr)
	// CommitAsync closes t's current group.
	CommitAsync(t *Thread)
	// WaitAsync completes t's committed groups but the n most recent.
	WaitAsync(t *Thread, n int)
}

func (t *Thread) matrix(op string) MatrixExecutor {
	if m, ok := t.exec(op).(MatrixExecutor); ok {
		return m
	}
	panic(&Fault{Op: op, Msg: "the executor does not run warp matrix operations or asynchronous copies"})
}
