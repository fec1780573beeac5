package sim_test

import (
	"strings"
	"sync/atomic"
	"testing"

	"github.com/gocu-dev/gocu/kernel"
	"github.com/gocu-dev/gocu/sim"
)

// pingPong is a producer warpgroup (threads 0-127) that fills a shared
// buffer round after round for a consumer warpgroup (128-255), handing it
// over with BarArrive on barrier 1 and taking it back with BarSync on
// barrier 2. bad counts the values a consumer read wrong.
func pingPong(rounds int32, bad *atomic.Int32) func(t *kernel.Thread) {
	return func(t *kernel.Thread) {
		buf := kernel.Shared[[128]int32](t)
		tid := t.ThreadIdx.X
		for r := range rounds {
			if tid < 128 {
				if r > 0 {
					kernel.BarSync(t, 2, 256)
				}
				*kernel.At(t, buf[:], int(tid), s1, kernel.Write) = r*1000 + tid
				kernel.BarArrive(t, 1, 256)
			} else {
				kernel.BarSync(t, 1, 256)
				i := (tid + 7) % 128 // another thread's element
				if *kernel.At(t, buf[:], int(i), s2, kernel.Read) != r*1000+i {
					bad.Add(1)
				}
				kernel.BarArrive(t, 2, 256)
			}
		}
	}
}

// TestNamedBarrierPingPong checks that data handed over by BarArrive and
// BarSync arrives whole, over seeds, with race detection on.
func TestNamedBarrierPingPong(t *testing.T) {
	for _, seed := range []uint64{1, 2, 3, 4, 5} {
		var bad atomic.Int32
		f := pingPong(6, &bad)
		err := sim.Launch(sim.Config{Grid: d1(3), Block: d1(256), Seed: seed, Checked: true}, sim.Kernel{Name: "pingpong", Func: f, Checked: f})
		if err != nil {
			t.Fatal(err)
		}
		if bad.Load() != 0 {
			t.Fatalf("seed %d: %d stale reads", seed, bad.Load())
		}
		if err := sim.Launch(sim.Config{Grid: d1(2), Block: d1(256), Seed: seed}, sim.Kernel{Func: f}); err != nil || bad.Load() != 0 {
			t.Fatalf("unchecked: %v, %d stale reads", err, bad.Load())
		}
	}
}

// TestNamedBarrierWaits checks that no thread passes BarSync before the
// count has arrived, and that arrivals do not wait: the arriving warps run
// ahead to a second barrier.
func TestNamedBarrierWaits(t *testing.T) {
	for _, seed := range []uint64{1, 2, 3} {
		var bad atomic.Int32
		err := sim.Launch(sim.Config{Grid: d1(2), Block: d1(192), Seed: seed}, sim.Kernel{Func: func(t *kernel.Thread) {
			n := kernel.Shared[[2]int32](t)
			tid := t.ThreadIdx.X
			if tid < 2 {
				n[tid] = 0
			}
			t.SyncThreads()
			switch {
			case tid < 64: // wait for 64 + 96
				kernel.AtomicAdd(&n[0], 1)
				kernel.BarSync(t, 5, 160)
				if kernel.AtomicAdd(&n[0], 0) != 160 {
					bad.Add(1)
				}
			case tid < 160: // arrive, then meet the last warp
				kernel.AtomicAdd(&n[0], 1)
				kernel.BarArrive(t, 5, 160)
				kernel.AtomicAdd(&n[1], 1)
				kernel.BarSync(t, 9, 128)
			default:
				kernel.AtomicAdd(&n[1], 1)
				kernel.BarSync(t, 9, 128)
				if kernel.AtomicAdd(&n[1], 0) != 128 {
					bad.Add(1)
				}
			}
		}})
		if err != nil || bad.Load() != 0 {
			t.Fatalf("seed %d: %v, %d early", seed, err, bad.Load())
		}
	}
}

// TestNamedBarrierRace checks that the race detector still sees a
// hand-over read before its barrier.
func TestNamedBarrierRace(t *testing.T) {
	err := checked(d1(1), d1(256), func(t *kernel.Thread) {
		buf := kernel.Shared[[128]int32](t)
		tid := t.ThreadIdx.X
		if tid < 128 {
			*kernel.At(t, buf[:], int(tid), s3, kernel.Write) = 0
		}
		t.SyncThreads()
		if tid < 128 {
			*kernel.At(t, buf[:], int(tid), s1, kernel.Write) = tid
			kernel.BarArrive(t, 1, 256)
		} else {
			_ = *kernel.At(t, buf[:], int(tid-128), s2, kernel.Read)
			kernel.BarSync(t, 1, 256)
		}
	})
	var e *sim.Error
	if e = wantErr(t, err, sim.KindSharedRace); e.Memory != "shared [128]int32 #0" {
		t.Fatalf("got %v", e)
	}
}

func TestNamedBarrierErrors(t *testing.T) {
	cases := []struct {
		name string
		kind sim.Kind
		msg  string
		f    func(t *kernel.Thread)
	}{
		{"id0", sim.KindUsage, "named barriers are 1 to 15", func(t *kernel.Thread) { kernel.BarSync(t, 0, 64) }},
		{"id16", sim.KindUsage, "named barriers are 1 to 15", func(t *kernel.Thread) { kernel.BarArrive(t, 16, 64) }},
		{"count", sim.KindUsage, "positive multiple of 32", func(t *kernel.Thread) { kernel.BarSync(t, 1, 48) }},
		{"big", sim.KindUsage, "could never complete", func(t *kernel.Thread) { kernel.BarSync(t, 1, 128) }},
		{"mismatch", sim.KindUsage, "every arrival must pass the same count", func(t *kernel.Thread) {
			if t.WarpID() == 0 {
				kernel.BarArrive(t, 3, 64)
			} else {
				kernel.BarSync(t, 3, 32)
			}
		}},
		{"deadlock", sim.KindDivergentBarrier, "BarSync on barrier 2 waits forever: 32 of its 64 threads", func(t *kernel.Thread) {
			if t.WarpID() == 0 {
				kernel.BarSync(t, 2, 64) // line: deadlock
			}
		}},
		{"versus SyncThreads", sim.KindDivergentBarrier, "waits forever", func(t *kernel.Thread) {
			if t.WarpID() == 0 {
				kernel.BarSync(t, 2, 64)
			} else {
				t.SyncThreads()
			}
		}},
		{"twice", sim.KindUsage, "a warp arrived twice in one phase", func(t *kernel.Thread) {
			if t.WarpID() == 0 {
				kernel.BarArrive(t, 4, 64)
				kernel.BarArrive(t, 4, 64)
			}
		}},
		{"partial warp", sim.KindUsage, "every lane of a warp arrives together", func(t *kernel.Thread) {
			if t.LaneID() < 16 {
				kernel.BarArrive(t, 4, 32)
			}
		}},
	}
	for _, c := range cases {
		for _, seed := range []uint64{1, 2} {
			err := sim.Launch(sim.Config{Grid: d1(1), Block: d1(64), Seed: seed}, sim.Kernel{Name: "bar", Func: c.f})
			e := wantErr(t, err, c.kind)
			if !strings.Contains(e.Error(), c.msg) {
				t.Errorf("%s: got %v, want %q", c.name, e, c.msg)
			}
			if c.name == "deadlock" {
				wantPos(t, e.Pos, line(t, "deadlock"))
				if e.Other == nil || e.Other.Op != "returned" || e.Other.Thread.X < 32 {
					t.Errorf("deadlock: other party %+v", e.Other)
				}
			}
		}
	}
}

func TestSetMaxNReg(t *testing.T) {
	// The producer lowers, the consumers raise.
	err := launch(d1(2), d1(384), func(t *kernel.Thread) {
		if t.ThreadIdx.X < 128 {
			kernel.SetMaxNReg(t, 24, false)
		} else {
			kernel.SetMaxNReg(t, 240, true)
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name  string
		block int32
		msg   string
		f     func(t *kernel.Thread)
	}{
		{"small", 128, "multiple of 8 from 24 to 256", func(t *kernel.Thread) { kernel.SetMaxNReg(t, 16, false) }},
		{"odd", 128, "multiple of 8 from 24 to 256", func(t *kernel.Thread) { kernel.SetMaxNReg(t, 100, true) }},
		{"partial", 192, "has only 64 of its 128 threads", func(t *kernel.Thread) { kernel.SetMaxNReg(t, 64, true) }},
		{"differ", 128, "the whole warpgroup makes the same calls", func(t *kernel.Thread) {
			kernel.SetMaxNReg(t, 64+8*(t.WarpID()%2), true)
		}},
		{"missing", 256, "made 0 SetMaxNReg calls", func(t *kernel.Thread) {
			if t.ThreadIdx.X != 5 {
				kernel.SetMaxNReg(t, 200, true)
			}
		}},
		{"direction", 128, "an increase cannot lower the count", func(t *kernel.Thread) {
			kernel.SetMaxNReg(t, 200, true)
			kernel.SetMaxNReg(t, 160, true)
		}},
	}
	for _, c := range cases {
		e := wantErr(t, launch(d1(1), d1(c.block), c.f), sim.KindUsage)
		if !strings.Contains(e.Error(), c.msg) {
			t.Errorf("%s: got %v, want %q", c.name, e, c.msg)
		}
	}
}

// TestNamedBarrierOrders checks the race detector's vector clocks: a
// chain of named barriers orders a write before a read three warps away,
// so no race; a warp outside a barrier stays unordered with its
// participants, so a race.
func TestNamedBarrierOrders(t *testing.T) {
	s5 := &kernel.Site{File: "r.go", Line: 5, Expr: "s[k]"}
	for _, seed := range []uint64{1, 2, 3, 4} {
		// Warp 0 writes, hands over to warp 1 (barrier 1), which hands
		// over to warp 2 (barrier 2) through a SyncWarp, which reads.
		f := func(t *kernel.Thread) {
			s := kernel.Shared[[32]int32](t)
			lane := int(t.LaneID())
			switch t.WarpID() {
			case 0:
				*kernel.At(t, s[:], lane, s1, kernel.Write) = 1
				kernel.BarArrive(t, 1, 64)
			case 1:
				kernel.BarSync(t, 1, 64)
				t.SyncWarp(kernel.FullMask)
				kernel.BarArrive(t, 2, 64)
			case 2:
				kernel.BarSync(t, 2, 64)
				_ = *kernel.At(t, s[:], (lane+1)%32, s2, kernel.Read)
			}
		}
		if err := sim.Launch(sim.Config{Grid: d1(2), Block: d1(96), Checked: true, Seed: seed}, sim.Kernel{Func: f, Checked: f}); err != nil {
			t.Fatalf("seed %d: a chain of barriers: %v", seed, err)
		}

		// Warps 0 and 1 meet at barrier 1; warp 2 writes what warp 1
		// reads after it, without taking part.
		g := func(t *kernel.Thread) {
			s := kernel.Shared[[32]int32](t)
			lane := int(t.LaneID())
			switch t.WarpID() {
			case 0:
				*kernel.At(t, s[:], lane, s1, kernel.Write) = 1
				kernel.BarSync(t, 1, 64)
			case 1:
				kernel.BarSync(t, 1, 64)
				_ = *kernel.At(t, s[:], lane, s2, kernel.Read)
			case 2:
				*kernel.At(t, s[:], (lane+5)%32, s5, kernel.Write) = 2
			}
		}
		err := sim.Launch(sim.Config{Grid: d1(1), Block: d1(96), Checked: true, Seed: seed}, sim.Kernel{Func: g, Checked: g})
		e := wantErr(t, err, sim.KindSharedRace)
		if e.Pos.Line != 5 && (e.Other == nil || e.Other.Pos.Line != 5) {
			t.Errorf("seed %d: the race does not involve warp 2's write: %v", seed, e)
		}

		// After a SyncThreads the vector clocks go on: a write before it
		// and a read after it never race; a read before the next named
		// barrier does.
		h := func(t *kernel.Thread) {
			s := kernel.Shared[[64]int32](t)
			tid := int(t.ThreadIdx.X)
			kernel.BarSync(t, 3, 64)
			*kernel.At(t, s[:], tid, s1, kernel.Write) = 1
			t.SyncThreads()
			_ = *kernel.At(t, s[:], 63-tid, s2, kernel.Read)
			t.SyncThreads()
			if tid < 32 {
				*kernel.At(t, s[:], tid, s3, kernel.Write) = 2
				kernel.BarArrive(t, 4, 64)
			} else {
				_ = *kernel.At(t, s[:], tid-32, s4, kernel.Read)
				kernel.BarSync(t, 4, 64)
			}
		}
		err = sim.Launch(sim.Config{Grid: d1(1), Block: d1(64), Checked: true, Seed: seed}, sim.Kernel{Func: h, Checked: h})
		if e := wantErr(t, err, sim.KindSharedRace); e.Pos.Line < 3 || e.Other == nil || e.Other.Pos.Line < 3 {
			t.Errorf("seed %d: got %v, want the race between lines 3 and 4", seed, e)
		}
	}
}
