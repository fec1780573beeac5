// Package kernel is what GPU kernel code written in Go imports.
//
// A kernel is an ordinary Go function marked with a //gocu:kernel comment
// whose first parameter is a *Thread:
//
//	//gocu:kernel
//	func Gray(t *kernel.Thread, rgb, gray []uint8, n int32) {
//		if i := t.Index(); i < n {
//			gray[i] = uint8(0.2989*float32(rgb[i]) + 0.5870*float32(rgb[i+n]) + 0.1140*float32(rgb[i+2*n]))
//		}
//	}
//
// The same function runs in three places:
//
//   - as plain Go, so that it can be unit-tested, stepped through in a
//     debugger and run under the race detector;
//   - on the CPU simulator (package sim), which runs a whole grid with CUDA
//     semantics and reports out-of-range indices, divergent barriers and
//     data races as errors naming the block, the thread and the source line;
//   - on the GPU, after gocu gen has translated it to CUDA C.
//
// Everything in this package therefore has two meanings: a Go meaning used
// by the simulator, and a CUDA meaning used by the translator. Each function
// documents the CUDA construct it becomes. Shared memory, barriers and warp
// operations need an executor (the simulator) and panic with a *Fault
// without one; atomics (real atomic operations) and the arithmetic
// functions work anywhere.
//
// Kernels may be generic (func Axpy[T kernel.Float](t *kernel.Thread, a T,
// x, y []T), with the constraints Float, Integer and Number), read
// package-level arrays of constants (constant memory on the GPU), call
// methods with pointer receivers on what Shared returns, and print with
// Printf or fmt.Printf; package gen documents each.
//
// Low-precision types (Half, BFloat16, FP8E4M3, FP8E5M2: package lowp's,
// with the GPU's rounding) compute in float32 through ToBFloat16 and
// Float32 and their kin. Tensor cores are reached warp by warp: MMABF16,
// MMAF16 and MMATF32 multiply fragments (FragA, FragB, FragC), LdMatrixX4
// and its kin load them from shared memory, and CpAsync copies global
// memory into shared memory asynchronously (CpAsyncCommit, CpAsyncWait);
// mma.go documents which lane holds which element. On Hopper (sm_90a) a
// warpgroup of four warps multiplies operands read straight from shared
// memory through descriptors: WGMMABF16 and WGMMAF16 with WGDescriptor
// (and WGMMABF16RS, WGMMAF16RS with A in registers),
// WGFence, WGCommit, WGWait and FenceProxyAsync (wgmma.go). Named
// barriers (BarSync, BarArrive) synchronise parts of a block, such as a
// producer warpgroup and its consumers, and SetMaxNReg moves registers
// between warpgroups (barrier.go). Memory barriers in shared memory
// (MBarrier: MBarInit, MBarArrive, MBarArriveExpectTx, MBarWait) count
// arrivals and the bytes of bulk copies (CpAsyncBulk), which hand tiles
// from the copy engine to the threads that wait for them (mbarrier.go).
//
// Package kernel imports nothing else of gocu but lowp, a leaf package, so
// kernel code carries no dependency on the driver or the simulator.
package kernel
