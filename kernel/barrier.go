package kernel

// Named barriers and register reallocation: what FlashAttention-3's
// warp-specialised kernels synchronise and size their warpgroups with.
//
// A block has 16 hardware barriers; SyncThreads uses barrier 0, so named
// barriers take ids 1 to 15. A named barrier completes once the given
// number of threads (a multiple of 32, the same in every arrival) have
// arrived at it, by BarSync (which waits for completion) or BarArrive
// (which does not); then it starts over. Every lane of a warp executes the
// same barrier call (PTX .aligned), so a barrier counts whole warps. Writes
// a thread made before its arrival are visible to the threads that waited
// at BarSync once the barrier completes.
//
// The simulator runs named barriers exactly and reports misuse as errors:
// an id outside 1 to 15, a count that is not a multiple of 32 or exceeds
// the block, arrivals with different counts, a barrier completed by part
// of a warp, and threads waiting at a barrier that no remaining thread can
// complete (a deadlock). It also reports a warp that arrives twice in one
// phase, which the GPU allows but which is almost always a missing wait.

// BarSync arrives at named barrier id and waits until threads threads have
// arrived at it, this one included (PTX bar.sync id, threads).
func BarSync(t *Thread, id, threads int32) { t.barriers("BarSync").NamedBarrier(t, id, threads, true) }

// BarArrive arrives at named barrier id, which completes once threads
// threads have arrived, and goes on without waiting (PTX bar.arrive id,
// threads). A producer calls it after writing data that the consumers
// waiting at BarSync on the same barrier then read.
func BarArrive(t *Thread, id, threads int32) {
	t.barriers("BarArrive").NamedBarrier(t, id, threads, false)
}

// SetMaxNReg asks for the warpgroup's registers per thread to be raised
// (inc) or lowered to n (PTX setmaxnreg.inc or .dec.sync.aligned.u32), so
// that a producer warpgroup can give registers to the consumers. n must be
// a constant multiple of 8 from 24 to 256, and every thread of the
// warpgroup must make the same call; the simulator checks both and
// otherwise does nothing. A kernel that calls it must fix its block size
// with //gocu:launch_bounds, and runs only on sm_90a.
func SetMaxNReg(t *Thread, n int32, inc bool) { t.barriers("SetMaxNReg").SetMaxNReg(t, n, inc) }

// BarrierExecutor is the part of an executor that runs named barriers and
// register reallocation. Package sim implements it.
type BarrierExecutor interface {
	// NamedBarrier records t's arrival at barrier id, which completes at
	// threads arrivals; with wait it returns once the barrier completes.
	NamedBarrier(t *Thread, id, threads int32, wait bool)
	// SetMaxNReg validates a register reallocation.
	SetMaxNReg(t *Thread, n int32, inc bool)
}

func (t *Thread) barriers(op string) BarrierExecutor {
	if b, ok := t.exec(op).(BarrierExecutor); ok {
		return b
	}
	panic(&Fault{Op: op, Msg: "the executor does not run named barriers"})
}
