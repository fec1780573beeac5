package sim_test

import (
	"strings"
	"testing"

	"github.com/gocu-dev/gocu/kernel"
	"github.com/gocu-dev/gocu/sim"
)

// Sites of the hand-instrumented kernels below, as gocu gen would record
// them.
var (
	s1 = &kernel.Site{File: "r.go", Line: 1, Expr: "s[i]"}
	s2 = &kernel.Site{File: "r.go", Line: 2, Expr: "s[j]"}
	s3 = &kernel.Site{File: "r.go", Line: 3, Expr: "g[i]"}
	s4 = &kernel.Site{File: "r.go", Line: 4, Expr: "g[j]"}
)

// checked runs f in checked mode; args are the kernel's global memory.
func checked(grid, block kernel.Dim3, f func(t *kernel.Thread), args ...any) error {
	// One worker: the kernels race across blocks on purpose, which the Go
	// race detector would see when blocks run in parallel.
	return sim.Launch(sim.Config{Grid: grid, Block: block, Checked: true, Workers: 1}, sim.Kernel{Name: "racy", Func: f, Checked: f, Args: args})
}

func TestSharedRaces(t *testing.T) {
	// Every thread writes one element.
	e := wantErr(t, checked(d1(1), d1(64), func(t *kernel.Thread) {
		s := kernel.Shared[[4]float32](t)
		*kernel.At(t, s[:], 2, s1, kernel.Write) = float32(t.ThreadIdx.X)
	}), sim.KindSharedRace)
	if e.Op != "write" || e.Other.Op != "write" || e.Memory != "shared [4]float32 #0" || e.Index != 2 || e.Thread == e.Other.Thread || e.Pos.Line != 1 {
		t.Errorf("got %v", e)
	}

	// A neighbour's element, rewritten without a barrier: a write and a
	// read of one element, in either order.
	for _, seed := range []uint64{1, 2, 3, 4} {
		f := func(t *kernel.Thread) {
			s := kernel.Shared[[64]int32](t)
			i, j := int(t.ThreadIdx.X), int(t.ThreadIdx.X+1)%64
			*kernel.At(t, s[:], i, s1, kernel.Write) = 1
			t.SyncThreads()
			*kernel.At(t, s[:], i, s1, kernel.Write) = 2
			_ = *kernel.At(t, s[:], j, s2, kernel.Read)
		}
		err := sim.Launch(sim.Config{Grid: d1(2), Block: d1(64), Checked: true, Seed: seed}, sim.Kernel{Func: f, Checked: f})
		e := wantErr(t, err, sim.KindSharedRace)
		if ops := e.Op + "/" + e.Other.Op; ops != "read/write" && ops != "write/read" || e.Other.Block != e.Block {
			t.Fatalf("got %v", e)
		}
		w, r := e.Thread, e.Other.Thread
		if e.Op == "read" {
			w, r = r, w
		}
		if (r.X+1)%64 != w.X || e.Index != int(w.X) {
			t.Fatalf("reader %v, writer %v, element %d", r, w, e.Index)
		}
	}

	// With a barrier between, the same accesses are fine.
	if err := checked(d1(2), d1(64), func(t *kernel.Thread) {
		s := kernel.Shared[[64]int32](t)
		i, j := int(t.ThreadIdx.X), int(t.ThreadIdx.X+1)%64
		*kernel.At(t, s[:], i, s1, kernel.Write) = 1
		t.SyncThreads()
		_ = *kernel.At(t, s[:], j, s2, kernel.Read)
		t.SyncThreads()
		*kernel.At(t, s[:], i, s1, kernel.Write) = 2
	}); err != nil {
		t.Fatal(err)
	}
}

func TestAtomicsDoNotRace(t *testing.T) {
	if err := checked(d1(2), d1(128), func(t *kernel.Thread) {
		s := kernel.Shared[[2]uint32](t)
		if t.ThreadIdx.X < 2 {
			*kernel.At(t, s[:], int(t.ThreadIdx.X), s1, kernel.Write) = 0
		}
		t.SyncThreads()
		kernel.AtomicAdd(kernel.At(t, s[:], int(t.ThreadIdx.X%2), s2, kernel.Atomic), 1)
		t.SyncThreads()
		if *kernel.At(t, s[:], 0, s1, kernel.Read) != 64 {
			panic("lost updates")
		}
	}); err != nil {
		t.Fatal(err)
	}
	// A plain read in the same interval as another thread's atomic races.
	e := wantErr(t, checked(d1(1), d1(64), func(t *kernel.Thread) {
		s := kernel.Shared[[1]int32](t)
		if t.ThreadIdx.X == 0 {
			*kernel.At(t, s[:], 0, s1, kernel.Write) = 0
		}
		t.SyncThreads()
		kernel.AtomicMax(kernel.At(t, s[:], 0, s2, kernel.Atomic), t.ThreadIdx.X)
		_ = *kernel.At(t, s[:], 0, s1, kernel.Read)
	}), sim.KindSharedRace)
	if ops := e.Op + "/" + e.Other.Op; ops != "read/atomic" && ops != "atomic/read" {
		t.Errorf("got %v", e)
	}
}

func TestSyncWarpOrders(t *testing.T) {
	// Within a warp SyncWarp orders the accesses.
	if err := checked(d1(1), d1(64), func(t *kernel.Thread) {
		s := kernel.Shared[[64]int32](t)
		i := int(t.ThreadIdx.X)
		*kernel.At(t, s[:], i, s1, kernel.Write) = 1
		t.SyncWarp(kernel.FullMask)
		_ = *kernel.At(t, s[:], i^1, s2, kernel.Read)
	}); err != nil {
		t.Fatal(err)
	}
	// Across warps it does not.
	e := wantErr(t, checked(d1(1), d1(64), func(t *kernel.Thread) {
		s := kernel.Shared[[64]int32](t)
		i := int(t.ThreadIdx.X)
		*kernel.At(t, s[:], i, s1, kernel.Write) = 1
		t.SyncWarp(kernel.FullMask)
		_ = *kernel.At(t, s[:], i^32, s2, kernel.Read)
	}), sim.KindSharedRace)
	if e.Thread.X^32 != e.Other.Thread.X {
		t.Errorf("got %v", e)
	}
}

func TestUninitializedShared(t *testing.T) {
	e := wantErr(t, checked(d1(1), d1(32), func(t *kernel.Thread) {
		s := kernel.Shared[[32]float32](t)
		if t.ThreadIdx.X != 7 {
			*kernel.At(t, s[:], int(t.ThreadIdx.X), s1, kernel.Write) = 1
		}
		t.SyncThreads()
		_ = *kernel.At(t, s[:], 7, s2, kernel.Read)
	}), sim.KindUninitialized)
	if e.Index != 7 || e.Pos.Line != 2 || !strings.Contains(e.Msg, "read of shared [32]float32 #0 element [7] before any thread of the block wrote it: if a thread writes it, a SyncThreads may be missing between that write and this read") {
		t.Errorf("got %v", e)
	}
}

func TestGlobalRaces(t *testing.T) {
	g := make([]float32, 256)
	// Blocks are never ordered within a launch.
	e := wantErr(t, checked(d1(4), d1(64), func(t *kernel.Thread) {
		if t.ThreadIdx.X == 5 {
			*kernel.At(t, g, 3, s3, kernel.Write) = 1
		}
	}, g), sim.KindGlobalRace)
	if e.Block == e.Other.Block || e.Thread != d1(5) || e.Other.Thread != d1(5) || e.Index != 3 || e.Memory != "global memory (argument 1)" {
		t.Errorf("got %v", e)
	}
	if !strings.Contains(e.Error(), "global-memory race on global memory (argument 1) element 3") {
		t.Errorf("message %q", e.Error())
	}
	// Within a block a barrier orders them.
	x := make([]int32, 8)
	if err := checked(d1(4), d1(64), func(t *kernel.Thread) {
		i := int(t.Index())
		*kernel.At(t, g, i, s3, kernel.Write) = 1
		t.SyncThreads()
		j := int(t.BlockIdx.X*64) + (i+1)%64
		_ = *kernel.At(t, g, j, s4, kernel.Read)
		_ = *kernel.At(t, x, 3, s4, kernel.Read) // read by every thread: fine
		kernel.AtomicAdd(kernel.At(t, x, 5, s4, kernel.Atomic), 1)
	}, struct{ a, b []int32 }{x, nil}, [2][]float32{nil, g}); err != nil {
		t.Fatal(err)
	}
	// Without one they race.
	e = wantErr(t, checked(d1(4), d1(64), func(t *kernel.Thread) {
		i := int(t.Index())
		*kernel.At(t, g, i, s3, kernel.Write) = 1
		_ = *kernel.At(t, g, int(t.BlockIdx.X*64)+(i+1)%64, s4, kernel.Read)
	}, g), sim.KindGlobalRace)
	if e.Block != e.Other.Block {
		t.Errorf("got %v", e)
	}
	// Accesses of different widths at one address are compared.
	w := make([]uint32, 1024)
	b := kernel.Reinterpret[uint8](w)
	e = wantErr(t, checked(d1(2), d1(1), func(t *kernel.Thread) {
		if t.BlockIdx.X == 0 {
			*kernel.At(t, w, 100, s3, kernel.Write) = 1
		} else {
			*kernel.At(t, b, 400, s4, kernel.Write) = 1
		}
	}, w), sim.KindGlobalRace)
	if e.Block == e.Other.Block {
		t.Errorf("got %v", e)
	}
	// Memory that is not an argument (local arrays) is not tracked.
	if err := checked(d1(2), d1(32), func(t *kernel.Thread) {
		var local [4]int32
		*kernel.At(t, local[:], 1, s1, kernel.Write) = t.ThreadIdx.X
	}, g); err != nil {
		t.Fatal(err)
	}
	// Neighbouring bytes written by different threads are different
	// elements.
	out := make([]uint8, 300)
	if err := checked(d1(3), d1(100), func(t *kernel.Thread) {
		*kernel.At(t, out, int(t.Index()), s3, kernel.Write) = 1
	}, out); err != nil {
		t.Fatal(err)
	}
}

// TestNegativeIndexDefaultMode checks that the default mode keeps a
// negative index's value, which the runtime reports without a length.
func TestNegativeIndexDefaultMode(t *testing.T) {
	g := make([]float32, 4)
	e := wantErr(t, launch(d1(1), d1(1), func(t *kernel.Thread) {
		i := int(t.ThreadIdx.X) - 5
		g[i] = 1
	}), sim.KindOutOfRange)
	if e.Index != -5 || !strings.Contains(e.Error(), "index -5 out of range at ") {
		t.Errorf("got %v", e)
	}
}
