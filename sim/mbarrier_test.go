package sim_test

import (
	"errors"
	"math/rand/v2"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/gocu-dev/gocu/kernel"
	"github.com/gocu-dev/gocu/sim"
)

const bulkTile = 128

// bulkSum is a double-buffered pipeline: thread 128 copies tile after tile
// of in into two shared buffers with CpAsyncBulk, announcing the bytes on
// the buffer's full barrier; threads 0-127 wait for it, each adds one
// element of the tile (another thread's on each round), and arrive at the
// buffer's empty barrier, which the producer waits for before refilling.
func bulkSum(in, out []float32, tiles int32) func(t *kernel.Thread) {
	return func(t *kernel.Thread) {
		buf := kernel.Shared[[2][bulkTile]float32](t)
		bars := kernel.Shared[[4]kernel.MBarrier](t) // full 0, 1; empty 0, 1
		tid := t.ThreadIdx.X
		if tid == 0 {
			kernel.MBarInit(t, &bars[0], 1)
			kernel.MBarInit(t, &bars[1], 1)
			kernel.MBarInit(t, &bars[2], bulkTile)
			kernel.MBarInit(t, &bars[3], bulkTile)
		}
		t.SyncThreads()
		base := t.BlockIdx.X * tiles * bulkTile
		if tid >= bulkTile {
			if tid == bulkTile {
				for k := range tiles {
					s := k % 2
					if k >= 2 {
						kernel.MBarWait(t, &bars[2+s], uint32(k/2-1)&1)
					}
					kernel.MBarArriveExpectTx(t, &bars[s], bulkTile*4)
					lo := base + k*bulkTile
					kernel.CpAsyncBulk(t, buf[s][:], in[lo:lo+bulkTile], &bars[s])
				}
			}
			return
		}
		var acc float32
		for k := range tiles {
			s := k % 2
			kernel.MBarWait(t, &bars[s], uint32(k/2)&1)
			acc += *kernel.At(t, buf[s][:], int((tid+k)%bulkTile), s1, kernel.Read)
			kernel.MBarArrive(t, &bars[2+s])
		}
		out[t.BlockIdx.X*bulkTile+tid] = acc
	}
}

// TestMBarrierBulkPipeline checks the pipeline's sums over seeds, with
// race detection on and off.
func TestMBarrierBulkPipeline(t *testing.T) {
	const blocks, tiles = 3, 7
	rng := rand.New(rand.NewPCG(1, 2))
	in := make([]float32, blocks*tiles*bulkTile)
	for i := range in {
		in[i] = rng.Float32()*2 - 1
	}
	want := make([]float32, blocks*bulkTile)
	for b := range blocks {
		for i := range bulkTile {
			var acc float32
			for k := range tiles {
				acc += in[(b*tiles+k)*bulkTile+(i+k)%bulkTile]
			}
			want[b*bulkTile+i] = acc
		}
	}
	for _, seed := range []uint64{1, 2, 3, 4} {
		for _, checked := range []bool{true, false} {
			out := make([]float32, len(want))
			for i := range out {
				out[i] = float32(-1e30)
			}
			f := bulkSum(in, out, tiles)
			k := sim.Kernel{Name: "bulksum", Func: f}
			if checked {
				k.Checked = f
			}
			if err := sim.Launch(sim.Config{Grid: d1(blocks), Block: d1(bulkTile + 32), Seed: seed, Checked: checked}, k); err != nil {
				t.Fatal(err)
			}
			for i := range want {
				if out[i] != want[i] {
					t.Fatalf("seed %d checked %v: out[%d] = %v, want %v", seed, checked, i, out[i], want[i])
				}
			}
		}
	}
}

// TestMBarrierPhases checks that a phase completes only with all its
// arrivals, that the parity flips with each phase, and that a wait for a
// completed phase returns at once.
func TestMBarrierPhases(t *testing.T) {
	for _, seed := range []uint64{1, 2, 3} {
		var bad atomic.Int32
		err := sim.Launch(sim.Config{Grid: d1(2), Block: d1(96), Seed: seed}, sim.Kernel{Func: func(t *kernel.Thread) {
			bar := &kernel.Shared[[1]kernel.MBarrier](t)[0]
			n := kernel.Shared[[1]int32](t)
			tid := t.ThreadIdx.X
			if tid == 0 {
				kernel.MBarInit(t, bar, 64)
				n[0] = 0
			}
			t.SyncThreads()
			for round := range int32(3) {
				if tid < 64 { // the arrivals
					kernel.AtomicAdd(&n[0], 1)
					kernel.MBarArrive(t, bar)
				}
				kernel.MBarWait(t, bar, uint32(round)&1)
				if got := kernel.AtomicAdd(&n[0], 0); got < 64*(round+1) {
					bad.Add(1)
				}
				kernel.MBarWait(t, bar, uint32(round)&1) // completed: returns at once
				t.SyncThreads()
			}
		}})
		if err != nil {
			t.Fatal(err)
		}
		if bad.Load() != 0 {
			t.Fatalf("seed %d: %d threads passed a phase early", seed, bad.Load())
		}
	}
}

// TestMBarrierRace: a thread that reads the copied tile without waiting
// for the barrier is reported.
func TestMBarrierRace(t *testing.T) {
	src := make([]float32, 32)
	for _, seed := range []uint64{1, 2, 3} {
		f := func(t *kernel.Thread) {
			buf := kernel.Shared[[32]float32](t)
			bar := &kernel.Shared[[1]kernel.MBarrier](t)[0]
			tid := t.ThreadIdx.X
			if tid == 0 {
				kernel.MBarInit(t, bar, 1)
			}
			t.SyncThreads()
			if tid == 0 {
				kernel.MBarArriveExpectTx(t, bar, 128)
				kernel.CpAsyncBulk(t, buf[:], src, bar)
			}
			if tid == 1 {
				_ = *kernel.At(t, buf[:], 5, s2, kernel.Read) // no wait
			}
		}
		err := sim.Launch(sim.Config{Grid: d1(1), Block: d1(32), Seed: seed, Checked: true}, sim.Kernel{Name: "race", Func: f, Checked: f})
		var e *sim.Error
		if !errors.As(err, &e) || e.Kind != sim.KindSharedRace && e.Kind != sim.KindAsyncCopy && e.Kind != sim.KindUninitialized {
			t.Fatalf("seed %d: got %v", seed, err)
		}
	}
}

func TestMBarrierErrors(t *testing.T) {
	src := make([]float32, 64)
	cases := []struct {
		name string
		kind sim.Kind
		msg  string
		f    func(t *kernel.Thread)
	}{
		{"count 0", sim.KindUsage, "MBarInit with a count of 0", func(t *kernel.Thread) {
			kernel.MBarInit(t, &kernel.Shared[[1]kernel.MBarrier](t)[0], 0)
		}},
		{"uninitialised", sim.KindUsage, "which MBarInit has not initialised", func(t *kernel.Thread) {
			kernel.MBarArrive(t, &kernel.Shared[[1]kernel.MBarrier](t)[0])
		}},
		{"not shared", sim.KindUsage, "not in the block's shared memory", func(t *kernel.Thread) {
			var b kernel.MBarrier
			kernel.MBarInit(t, &b, 1)
		}},
		{"wrong parity", sim.KindDivergentBarrier, "MBarWait(parity 1) on the barrier at byte 0 of shared [1]kernel.MBarrier #0 waits forever: its phase 1 lacks 1 of its 1 arrivals", func(t *kernel.Thread) {
			bar := &kernel.Shared[[1]kernel.MBarrier](t)[0]
			if t.ThreadIdx.X == 0 {
				kernel.MBarInit(t, bar, 1)
				kernel.MBarArrive(t, bar)
			}
			t.SyncThreads()
			kernel.MBarWait(t, bar, 1) // phase 0 completed; phase 1 never does
		}},
		{"missing bytes", sim.KindDivergentBarrier, "expects 64 more transaction bytes, which no copy delivers", func(t *kernel.Thread) {
			buf := kernel.Shared[[64]float32](t)
			bar := &kernel.Shared[[1]kernel.MBarrier](t)[0]
			if t.ThreadIdx.X == 0 {
				kernel.MBarInit(t, bar, 1)
				kernel.MBarArriveExpectTx(t, bar, 128)
				kernel.CpAsyncBulk(t, buf[:16], src, bar)
			}
			t.SyncThreads()
			kernel.MBarWait(t, bar, 0)
		}},
		{"tx underflow", sim.KindUsage, "delivered 128 bytes more than MBarArriveExpectTx announced", func(t *kernel.Thread) {
			buf := kernel.Shared[[64]float32](t)
			bar := &kernel.Shared[[1]kernel.MBarrier](t)[0]
			if t.ThreadIdx.X == 0 {
				kernel.MBarInit(t, bar, 1)
				kernel.MBarArriveExpectTx(t, bar, 128)
				kernel.CpAsyncBulk(t, buf[:], src, bar)
			}
		}},
		{"too many arrivals", sim.KindUsage, "more threads arrive than MBarInit's count", func(t *kernel.Thread) {
			bar := &kernel.Shared[[1]kernel.MBarrier](t)[0]
			if t.ThreadIdx.X == 0 {
				kernel.MBarInit(t, bar, 1)
				kernel.MBarArriveExpectTx(t, bar, 16)
				kernel.MBarArrive(t, bar)
			}
		}},
		{"bulk size", sim.KindUsage, "positive multiple of 16 bytes", func(t *kernel.Thread) {
			buf := kernel.Shared[[64]float32](t)
			bar := &kernel.Shared[[1]kernel.MBarrier](t)[0]
			kernel.CpAsyncBulk(t, buf[:3], src, bar)
		}},
	}
	for _, c := range cases {
		for _, seed := range []uint64{1, 2} {
			err := sim.Launch(sim.Config{Grid: d1(1), Block: d1(64), Seed: seed}, sim.Kernel{Name: "mbar", Func: c.f})
			var e *sim.Error
			if !errors.As(err, &e) {
				t.Fatalf("%s: got %v", c.name, err)
			}
			if e.Kind != c.kind && !(c.name == "bulk size" && e.Kind == sim.KindPanic) || !strings.Contains(e.Error(), c.msg) {
				t.Errorf("%s: got %v (%v), want %v %q", c.name, e, e.Kind, c.kind, c.msg)
			}
		}
	}
}

// TestMBarrierOrders checks in checked mode that a completed phase orders
// the arriving threads' writes before the reads of the threads that
// waited for it, also when they wait after it completed, and that a read
// without the wait is a race.
func TestMBarrierOrders(t *testing.T) {
	for _, wait := range []bool{true, false} {
		for _, seed := range []uint64{1, 2, 3, 4} {
			f := func(t *kernel.Thread) {
				buf := kernel.Shared[[64]int32](t)
				bar := &kernel.Shared[[1]kernel.MBarrier](t)[0]
				tid := t.ThreadIdx.X
				if tid == 0 {
					kernel.MBarInit(t, bar, 64)
				}
				if tid < 64 {
					*kernel.At(t, buf[:], int(tid), s3, kernel.Write) = 0
				}
				t.SyncThreads()
				if tid < 64 {
					*kernel.At(t, buf[:], int(tid), s1, kernel.Write) = tid
					kernel.MBarArrive(t, bar)
					return
				}
				if wait {
					kernel.MBarWait(t, bar, 0)
				}
				_ = *kernel.At(t, buf[:], int(127-tid), s2, kernel.Read)
			}
			err := sim.Launch(sim.Config{Grid: d1(2), Block: d1(128), Seed: seed, Checked: true}, sim.Kernel{Name: "orders", Func: f, Checked: f})
			if wait && err != nil {
				t.Fatalf("seed %d: %v", seed, err)
			}
			if !wait {
				wantErr(t, err, sim.KindSharedRace)
			}
		}
	}
}
