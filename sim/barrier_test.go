package sim_test

import (
	"strings"
	"sync/atomic"
	"testing"

	"github.com/gocu-dev/gocu/kernel"
	"github.com/gocu-dev/gocu/sim"
)

// TestBarrierMeets checks that no thread passes a barrier before every
// thread of its block has reached it, over many barriers and seeds.
func TestBarrierMeets(t *testing.T) {
	const blocks, threads, rounds = 6, 200, 10
	for _, seed := range []uint64{1, 2, 3} {
		var bad atomic.Int32
		err := sim.Launch(sim.Config{Grid: d1(blocks), Block: d2(20, 10), Seed: seed}, sim.Kernel{Func: func(t *kernel.Thread) {
			arrived := kernel.Shared[[rounds]int32](t)
			if t.Rank() < rounds {
				arrived[t.Rank()] = 0
			}
			t.SyncThreads()
			for r := range rounds {
				kernel.AtomicAdd(&arrived[r], 1)
				t.SyncThreads()
				if arrived[r] != threads {
					bad.Add(1)
				}
			}
		}})
		if err != nil {
			t.Fatal(err)
		}
		if bad.Load() != 0 {
			t.Fatalf("seed %d: %d threads passed a barrier early", seed, bad.Load())
		}
	}
}

func TestSyncThreadsVariants(t *testing.T) {
	const n = 100
	var bad atomic.Int32
	err := launch(d1(3), d1(n), func(t *kernel.Thread) {
		tid := t.ThreadIdx.X
		if c := t.SyncThreadsCount(tid%3 == 0); c != 34 {
			bad.Add(1)
		}
		if !t.SyncThreadsAnd(tid < n) || t.SyncThreadsAnd(tid != 42) {
			bad.Add(1)
		}
		if !t.SyncThreadsOr(tid == 99) || t.SyncThreadsOr(tid > n) {
			bad.Add(1)
		}
	})
	if err != nil || bad.Load() != 0 {
		t.Fatalf("err %v, %d wrong results", err, bad.Load())
	}
}

func TestDivergentBarrierSites(t *testing.T) {
	e := wantErr(t, launch(d1(2), d1(64), func(t *kernel.Thread) {
		if t.ThreadIdx.X < 40 {
			t.SyncThreads() // line: then
		} else {
			t.SyncThreads() // line: else
		}
	}), sim.KindDivergentBarrier)
	wantPos(t, e.Pos, line(t, "then"))
	if e.Thread != d1(0) || e.Other == nil || e.Other.Thread != d1(40) || e.Other.Op != "SyncThreads" {
		t.Fatalf("got %v", e)
	}
	wantPos(t, e.Other.Pos, line(t, "else"))
}

// TestDivergentFastPath: the first thread returns without a barrier, the
// others reach one.
func TestDivergentFastPath(t *testing.T) {
	for _, seed := range []uint64{1, 2, 3, 4} {
		err := sim.Launch(sim.Config{Grid: d1(1), Block: d1(64), Seed: seed}, sim.Kernel{Name: "early", Func: func(t *kernel.Thread) {
			if t.ThreadIdx.X%2 == 1 {
				return
			}
			t.SyncThreadsCount(true) // line: sync
		}})
		e := wantErr(t, err, sim.KindDivergentBarrier)
		wantPos(t, e.Pos, line(t, "sync"))
		if e.Thread != d1(0) || e.Op != "SyncThreadsCount" || e.Other == nil || e.Other.Thread != d1(1) || e.Other.Op != "returned" || e.Other.Pos.IsValid() {
			t.Fatalf("got %v", e)
		}
		if !strings.Contains(err.Error(), "returned from the kernel without reaching any barrier") {
			t.Errorf("message %q", err)
		}
	}
}

// TestBarrierInLoop: a barrier in a loop whose trip count differs between
// threads.
func TestBarrierInLoop(t *testing.T) {
	e := wantErr(t, launch(d1(1), d1(32), func(t *kernel.Thread) {
		t.SyncThreads() // line: loop-first
		for i := int32(0); i < t.ThreadIdx.X%4; i++ {
			t.SyncThreads() // line: loop
		}
	}), sim.KindDivergentBarrier)
	wantPos(t, e.Pos, line(t, "loop"))
	if e.Thread != d1(1) || e.Other.Thread != d1(0) || e.Other.Op != "returned" {
		t.Fatalf("got %v", e)
	}
	wantPos(t, e.Other.Pos, line(t, "loop-first"))
}

func TestDeviceFunctionBarrier(t *testing.T) {
	sync := func(t *kernel.Thread) { t.SyncThreads() }
	// Two call sites of one device function are two barriers.
	e := wantErr(t, launch(d1(1), d1(32), func(t *kernel.Thread) {
		if t.ThreadIdx.X == 0 {
			sync(t) // line: a
		} else {
			sync(t) // line: b
		}
	}), sim.KindDivergentBarrier)
	wantPos(t, e.Pos, line(t, "a"))
	wantPos(t, e.Other.Pos, line(t, "b"))
	// One call site in a loop is one barrier.
	out := make([]int32, 64)
	if err := launch(d1(2), d1(32), func(t *kernel.Thread) {
		s := kernel.Shared[[32]int32](t)
		for i := range int32(3) {
			s[t.ThreadIdx.X] = t.ThreadIdx.X * i
			sync(t)
			out[t.Index()] = s[31-t.ThreadIdx.X]
			sync(t)
		}
	}); err != nil {
		t.Fatal(err)
	}
	for i, v := range out {
		if v != int32(31-i%32)*2 {
			t.Fatalf("out[%d] = %d", i, v)
		}
	}
}

func TestSharedMemory(t *testing.T) {
	// Two declarations on one line are two arrays; threads of a block share
	// them, blocks do not.
	out := make([]float32, 4*64)
	err := launch(d1(4), d1(64), func(t *kernel.Thread) {
		a, b := kernel.Shared[[64]float32](t), kernel.Shared[[64]float32](t)
		tid := t.ThreadIdx.X
		a[tid] = float32(tid)
		b[tid] = float32(t.BlockIdx.X)
		t.SyncThreads()
		out[t.Index()] = a[63-tid]*10 + b[tid]
	})
	if err != nil {
		t.Fatal(err)
	}
	for i, v := range out {
		if want := float32(63-i%64)*10 + float32(i/64); v != want {
			t.Fatalf("out[%d] = %v, want %v", i, v, want)
		}
	}
	// Fresh shared memory is poisoned: NaN for floats.
	var nan atomic.Int32
	err = launch(d1(2), d1(8), func(t *kernel.Thread) {
		s := kernel.Shared[[8]float32](t)
		if v := s[t.ThreadIdx.X]; v != v {
			nan.Add(1)
		}
	})
	if err != nil || nan.Load() != 16 {
		t.Fatalf("err %v, %d of 16 reads saw poison", err, nan.Load())
	}
}

func TestDynamicShared(t *testing.T) {
	var bad atomic.Int32
	cfg := sim.Config{Grid: d1(3), Block: d1(32), DynamicSharedBytes: 32*8 + 4}
	err := sim.Launch(cfg, sim.Kernel{Func: func(t *kernel.Thread) {
		d := kernel.DynamicShared[float64](t)
		w := kernel.DynamicShared[uint32](t)
		if len(d) != 32 || len(w) != 65 {
			bad.Add(1)
		}
		tid := t.ThreadIdx.X
		if w[tid] != ^uint32(0) { // poison
			bad.Add(1)
		}
		t.SyncThreads()
		d[tid] = float64(tid)
		t.SyncThreads()
		if d[31-tid] != float64(31-tid) {
			bad.Add(1)
		}
	}})
	if err != nil || bad.Load() != 0 {
		t.Fatalf("err %v, %d failures", err, bad.Load())
	}
	if err := launch(d1(1), d1(1), func(t *kernel.Thread) {
		if kernel.DynamicShared[float32](t) != nil {
			bad.Add(1)
		}
	}); err != nil || bad.Load() != 0 {
		t.Fatal("no dynamic shared memory must give nil")
	}
}

func TestSharedDeclarations(t *testing.T) {
	e := wantErr(t, launch(d1(1), d1(64), func(t *kernel.Thread) {
		if t.ThreadIdx.X < 10 {
			kernel.Shared[[4]int32](t)[0] = 1 // line: decl-a
		} else {
			kernel.Shared[[8]float32](t)[0] = 1 // line: decl-b
		}
	}), sim.KindSharedDecl)
	// Whichever thread ran first declared the array; the report names both.
	first, other := line(t, "decl-a"), line(t, "decl-b")
	if e.Pos.Line != first {
		first, other = other, first
	}
	wantPos(t, e.Pos, first)
	wantPos(t, e.Other.Pos, other)
	if !strings.Contains(e.Msg, "here, but thread (") || !strings.Contains(e.Msg, "[8]float32") || !strings.Contains(e.Msg, "[4]int32") {
		t.Errorf("message %q", e.Msg)
	}
	e = wantErr(t, launch(d1(1), d1(4), func(t *kernel.Thread) {
		_ = kernel.Shared[float32](t) // line: scalar
	}), sim.KindUsage)
	wantPos(t, e.Pos, line(t, "scalar"))
	e = wantErr(t, launch(d1(1), d1(4), func(t *kernel.Thread) {
		_ = kernel.Shared[[4]*int](t)
	}), sim.KindUsage)
	if !strings.Contains(e.Msg, "plain values only, not *int") {
		t.Errorf("message %q", e.Msg)
	}
}
