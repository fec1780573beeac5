package sim_test

import (
	"errors"
	"fmt"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gocu-dev/gocu/kernel"
	"github.com/gocu-dev/gocu/sim"
)

func TestLimits(t *testing.T) {
	nop := func(*kernel.Thread) {}
	for _, c := range []struct {
		cfg  sim.Config
		kind sim.Kind
		msg  string
	}{
		{sim.Config{Grid: d1(1), Block: d1(1025)}, sim.KindLimit, "block X = 1025 is outside [1, 1024]"},
		{sim.Config{Grid: d1(1), Block: d2(64, 32)}, sim.KindLimit, "2048 threads exceeds 1024 threads per block"},
		{sim.Config{Grid: d1(1), Block: d3(1, 1, 65)}, sim.KindLimit, "block Z = 65"},
		{sim.Config{Grid: d1(0), Block: d1(32)}, sim.KindLimit, "grid X = 0"},
		{sim.Config{Grid: d1(-1), Block: d1(32)}, sim.KindLimit, "grid X = -1"},
		{sim.Config{Grid: d2(1, 65536), Block: d1(32)}, sim.KindLimit, "grid Y = 65536"},
		{sim.Config{Grid: d1(1), Block: d1(0)}, sim.KindLimit, "block X = 0"},
		{sim.Config{Grid: d1(1), Block: d1(32), DynamicSharedBytes: 227<<10 + 1}, sim.KindLimit, "dynamic shared memory exceed the 232448-byte limit"},
		{sim.Config{Grid: d1(1), Block: d1(32), DynamicSharedBytes: -1}, sim.KindUsage, "negative dynamic shared memory"},
		{sim.Config{Grid: d1(1), Block: d1(64), Limits: sim.Limits{Name: "tiny", MaxThreadsPerBlock: 32, MaxBlock: d3(32, 32, 32), MaxGrid: d3(8, 8, 8), MaxStaticShared: 1024, MaxShared: 2048}},
			sim.KindLimit, "block X = 64 is outside [1, 32] on tiny"},
	} {
		err := sim.Launch(c.cfg, sim.Kernel{Name: "nop", Func: nop})
		e := wantErr(t, err, c.kind)
		if !strings.Contains(err.Error(), c.msg) || e.Kernel != "nop" {
			t.Errorf("%+v: error %q lacks %q", c.cfg, err, c.msg)
		}
	}
	if err := sim.Launch(sim.Config{Grid: d1(1), Block: d1(1024), DynamicSharedBytes: 227 << 10}, sim.Kernel{Func: nop}); err != nil {
		t.Errorf("the largest legal launch failed: %v", err)
	}
	if err := sim.Launch(sim.Config{Grid: d3(1, 65535, 1), Block: d1(1)}, sim.Kernel{Func: nop}); err != nil {
		t.Errorf("grid Y = 65535 failed: %v", err)
	}
	wantErr(t, sim.Launch(sim.Config{Grid: d1(1), Block: d1(1)}, sim.Kernel{}), sim.KindUsage)
}

func TestStaticSharedLimit(t *testing.T) {
	big := func(t *kernel.Thread) {
		a := kernel.Shared[[8192]float32](t) // 32 KiB
		b := kernel.Shared[[5000]float32](t) // line: second
		a[t.ThreadIdx.X], b[t.ThreadIdx.X] = 1, 2
	}
	e := wantErr(t, launch(d1(2), d1(32), big), sim.KindLimit)
	wantPos(t, e.Pos, line(t, "second"))
	if !strings.Contains(e.Msg, "52768 bytes") || !strings.Contains(e.Msg, "49152-byte limit") {
		t.Errorf("message %q", e.Msg)
	}
	// Static plus dynamic beyond the opt-in limit.
	err := sim.Launch(sim.Config{Grid: d1(1), Block: d1(32), DynamicSharedBytes: 200 << 10},
		sim.Kernel{Func: func(t *kernel.Thread) { kernel.Shared[[8192]float32](t)[0] = 1 }})
	if e := wantErr(t, err, sim.KindLimit); !strings.Contains(e.Msg, "plus dynamic (204800 bytes)") {
		t.Errorf("message %q", e.Msg)
	}
}

func gray(t *kernel.Thread, rgb, out []uint8, n int32) {
	if i := t.Index(); i < n {
		out[i] = uint8(0.2989*float32(rgb[i]) + 0.5870*float32(rgb[i+n]) + 0.1140*float32(rgb[i+2*n]))
	}
}

func TestRunArguments(t *testing.T) {
	cfg := sim.Config{Grid: d1(1), Block: d1(32)}
	rgb, out := make([]uint8, 96), make([]uint8, 32)
	for _, c := range []struct {
		fn   any
		args []any
		msg  string
	}{
		{nil, nil, "must be a non-nil function"},
		{42, nil, "must be a non-nil function, not int"},
		{func(a []uint8) {}, []any{rgb}, "first parameter of a kernel must be a *kernel.Thread"},
		{func(t *kernel.Thread) int { return 0 }, nil, "a kernel returns nothing"},
		{func(t *kernel.Thread, x ...int32) {}, []any{int32(1)}, "cannot be variadic"},
		{gray, []any{rgb, out}, "gray takes 3 arguments after the *kernel.Thread, got 2"},
		{gray, []any{rgb, out, 32}, "argument 3 of gray is int, but the parameter is int32: convert it, as in int32(x)"},
		{gray, []any{rgb, []float32{}, int32(32)}, "argument 2 of gray is []float32, but the parameter is []uint8"},
		{gray, []any{rgb, out, nil}, "argument 3 of gray is nil, but the parameter is int32"},
	} {
		err := sim.Run(cfg, c.fn, c.args...)
		wantErr(t, err, sim.KindUsage)
		if !strings.Contains(err.Error(), c.msg) {
			t.Errorf("error %q lacks %q", err, c.msg)
		}
	}
	// A nil slice is a valid argument.
	if err := sim.Run(cfg, gray, nil, nil, int32(0)); err != nil {
		t.Error(err)
	}
	// Checked mode needs a twin.
	err := sim.Run(sim.Config{Grid: d1(1), Block: d1(32), Checked: true}, gray, rgb, out, int32(32))
	if e := wantErr(t, err, sim.KindUsage); !strings.Contains(e.Msg, "instrumented twin of kernel gray") {
		t.Errorf("message %q", e.Msg)
	}
	t.Setenv("GOCU_SIM_CHECKED", "1")
	wantErr(t, sim.Run(cfg, gray, rgb, out, int32(32)), sim.KindUsage)
}

func TestRegisterChecked(t *testing.T) {
	// The twin of racy writes every thread's value to one shared element
	// through kernel.At; the plain kernel does the same without telling.
	site := &kernel.Site{File: "racy.go", Line: 7, Col: 2, Expr: "s[0]"}
	racy := func(t *kernel.Thread, out []int32) {
		s := kernel.Shared[[1]int32](t)
		s[0] = t.ThreadIdx.X
		t.SyncThreads()
		out[t.ThreadIdx.X] = s[0]
	}
	twin := func(t *kernel.Thread, out []int32) {
		s := kernel.Shared[[1]int32](t)
		*kernel.At(t, s[:], 0, site, kernel.Write) = t.ThreadIdx.X
		t.SyncThreads()
		out[t.ThreadIdx.X] = s[0]
	}
	out := make([]int32, 64)
	cfg := sim.Config{Grid: d1(1), Block: d1(64)}
	if err := sim.Run(cfg, racy, out); err != nil {
		t.Fatal(err)
	}
	if err := sim.RegisterChecked(racy, twin); err != nil {
		t.Fatal(err)
	}
	cfg.Checked = true
	e := wantErr(t, sim.Run(cfg, racy, out), sim.KindSharedRace)
	if e.Pos.Line != 7 || e.Pos.File != "racy.go" || e.Other == nil || e.Other.Pos.Line != 7 || e.Op != "write" || e.Other.Op != "write" {
		t.Errorf("race %v", e)
	}
	if err := sim.RegisterChecked(racy, func(t *kernel.Thread) {}); err == nil {
		t.Error("a twin of another type was accepted")
	}
	if err := sim.RegisterChecked(nil, twin); err == nil {
		t.Error("a nil kernel was accepted")
	}
}

func TestErrorsIs(t *testing.T) {
	for k, sentinel := range map[sim.Kind]error{
		sim.KindUsage: sim.ErrUsage, sim.KindLimit: sim.ErrLimit, sim.KindOutOfRange: sim.ErrOutOfRange,
		sim.KindDivergentBarrier: sim.ErrDivergentBarrier, sim.KindWarp: sim.ErrWarp,
		sim.KindSharedRace: sim.ErrSharedRace, sim.KindGlobalRace: sim.ErrGlobalRace,
		sim.KindUninitialized: sim.ErrUninitialized, sim.KindMisaligned: sim.ErrMisaligned,
		sim.KindSharedDecl: sim.ErrSharedDecl, sim.KindPanic: sim.ErrPanic,
	} {
		err := fmt.Errorf("wrapped: %w", &sim.Error{Kind: k})
		if !errors.Is(err, sentinel) {
			t.Errorf("%v is not %v", k, sentinel)
		}
		if race := k == sim.KindSharedRace || k == sim.KindGlobalRace; errors.Is(err, sim.ErrRace) != race {
			t.Errorf("%v: errors.Is(ErrRace) = %v", k, !race)
		}
		if errors.Is(err, sim.ErrPanic) != (k == sim.KindPanic) {
			t.Errorf("%v matches ErrPanic", k)
		}
		if k.String() == "" || strings.HasPrefix(k.String(), "Kind(") {
			t.Errorf("kind %d has no name", k)
		}
	}
}

// TestCoverage runs 3-D grids of 3-D blocks on the fast path and checks that
// every thread runs exactly once with consistent coordinates.
func TestCoverage(t *testing.T) {
	grid, block := d3(3, 2, 2), d3(5, 4, 3)
	n := grid.Size() * block.Size()
	count := make([]int32, n)
	bad := atomic.Int32{}
	err := launch(grid, block, func(t *kernel.Thread) {
		if t.BlockDim != block || t.GridDim != grid {
			bad.Add(1)
		}
		blk := t.BlockIdx.X + t.BlockIdx.Y*grid.X + t.BlockIdx.Z*grid.X*grid.Y
		id := blk*int32(block.Size()) + t.Rank()
		kernel.AtomicAdd(&count[id], 1)
		x, y := t.Index2D()
		if x != t.BlockIdx.X*5+t.ThreadIdx.X || y != t.BlockIdx.Y*4+t.ThreadIdx.Y || t.LaneID() != t.Rank()%32 || t.WarpID() != t.Rank()/32 {
			bad.Add(1)
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	for i, c := range count {
		if c != 1 {
			t.Fatalf("thread %d ran %d times", i, c)
		}
	}
	if bad.Load() != 0 {
		t.Fatalf("%d threads saw wrong coordinates", bad.Load())
	}
	// Y and Z of 0 mean 1.
	var ran atomic.Int32
	if err := launch(kernel.Dim3{X: 2}, kernel.Dim3{X: 3}, func(t *kernel.Thread) {
		if t.BlockDim == d3(3, 1, 1) && t.GridDim == d3(2, 1, 1) {
			ran.Add(1)
		}
	}); err != nil || ran.Load() != 6 {
		t.Fatalf("err %v, %d threads saw 1-D shapes", err, ran.Load())
	}
}

// order records the order in which blocks and threads run.
func order(t *testing.T, seed uint64) []int32 {
	var log []int32
	var next atomic.Int32
	out := make([]int32, 8*64)
	err := sim.Launch(sim.Config{Grid: d1(8), Block: d1(64), Seed: seed, Workers: 1}, sim.Kernel{Func: func(t *kernel.Thread) {
		out[next.Add(1)-1] = t.Index()
	}})
	if err != nil {
		t.Fatal(err)
	}
	log = append(log, out...)
	// And within barrier intervals.
	next.Store(0)
	err = sim.Launch(sim.Config{Grid: d1(1), Block: d1(64), Seed: seed}, sim.Kernel{Func: func(t *kernel.Thread) {
		t.SyncThreads()
		out[next.Add(1)-1] = t.Index()
		t.SyncThreads()
		out[next.Add(1)-1] = t.Index()
	}})
	if err != nil {
		t.Fatal(err)
	}
	return append(log, out[:128]...)
}

func TestSeedReplays(t *testing.T) {
	a, b, c := order(t, 11), order(t, 11), order(t, 12)
	if fmt.Sprint(a) != fmt.Sprint(b) {
		t.Fatal("the same seed gave different schedules")
	}
	if fmt.Sprint(a) == fmt.Sprint(c) {
		t.Fatal("different seeds gave the same schedule")
	}
	// Blocks run in a shuffled order, not 0, 1, 2...
	sorted := true
	for i := 64; i < 8*64; i += 64 {
		if a[i]/64 < a[i-64]/64 {
			sorted = false
		}
	}
	if sorted {
		t.Error("blocks ran in index order")
	}
	t.Setenv("GOCU_SIM_SEED", "11")
	if d := order(t, 0); fmt.Sprint(d) != fmt.Sprint(a) {
		t.Error("GOCU_SIM_SEED=11 did not replay seed 11")
	}
	t.Setenv("GOCU_SIM_SEED", "x")
	wantErr(t, launch(d1(1), d1(1), func(*kernel.Thread) {}), sim.KindUsage)
}

func TestSeedInErrors(t *testing.T) {
	err := sim.Launch(sim.Config{Grid: d1(1), Block: d1(2), Seed: 77}, sim.Kernel{Func: func(t *kernel.Thread) { panic("x") }})
	e := wantErr(t, err, sim.KindPanic)
	if e.Seed != 77 || !strings.Contains(err.Error(), "GOCU_SIM_SEED=77") {
		t.Errorf("seed %d in %q", e.Seed, err)
	}
	e = wantErr(t, launch(d1(1), d1(2), func(t *kernel.Thread) { panic("x") }), sim.KindPanic)
	if e.Seed == 0 {
		t.Error("a random seed was not reported")
	}
}

// TestNoLeak checks that launches, failed ones included, leave no
// goroutines behind.
func TestNoLeak(t *testing.T) {
	before := runtime.NumGoroutine()
	for i := range 20 {
		err := launch(d1(4), d1(128), func(t *kernel.Thread) {
			s := kernel.Shared[[128]int32](t)
			s[t.ThreadIdx.X] = 1
			t.SyncThreads()
			if i%2 == 1 && t.ThreadIdx.X == 5 && t.BlockIdx.X == 2 {
				panic("fail")
			}
			t.SyncThreads()
		})
		if (err != nil) != (i%2 == 1) {
			t.Fatal(err)
		}
	}
	for range 100 {
		if runtime.NumGoroutine() <= before {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("%d goroutines before, %d after", before, runtime.NumGoroutine())
}

// With a budget (the default) every worker has a goroutine of its own, so
// a Goexit in the kernel always comes back as an error saying what to do;
// with the budget off it ends the caller's goroutine, as documented.
func TestGoexitLimits(t *testing.T) {
	k := sim.Kernel{Func: func(t *kernel.Thread) {
		if t.ThreadIdx.X == 1 {
			runtime.Goexit()
		}
	}}
	for _, c := range []struct {
		timeout  time.Duration
		returned bool
	}{{time.Minute, true}, {-1, false}} {
		var err error
		returned, ended := false, make(chan struct{})
		go func() {
			defer close(ended)
			err = sim.Launch(sim.Config{Grid: d1(1), Block: d1(32), Workers: 1, Timeout: c.timeout}, k)
			returned = true
		}()
		<-ended
		if returned != c.returned {
			t.Fatalf("timeout %v: Launch returned %v, want %v", c.timeout, returned, c.returned)
		}
		if returned {
			if e := wantErr(t, err, sim.KindPanic); !strings.Contains(e.Msg, "runtime.Goexit") || !strings.Contains(e.Msg, "t.Errorf, not t.Fatal") {
				t.Errorf("got %v", e)
			}
		}
	}
}

func TestGoexit(t *testing.T) {
	// A kernel that calls runtime.Goexit, as testing's FailNow does, ends
	// the goroutine running it. On the caller's goroutine that is the
	// caller's own end, as in a direct call; on another worker the launch
	// reports it. Either way nothing hangs or crashes.
	for range 4 {
		var err error
		returned, ended := false, make(chan struct{})
		go func() {
			defer close(ended)
			err = sim.Launch(sim.Config{Grid: d1(8), Block: d1(32), Workers: 2}, sim.Kernel{Func: func(t *kernel.Thread) {
				if t.ThreadIdx.X == 1 {
					runtime.Goexit()
				}
			}})
			returned = true
		}()
		select {
		case <-ended:
		case <-time.After(10 * time.Second):
			t.Fatal("the launch hung")
		}
		if returned {
			if e := wantErr(t, err, sim.KindPanic); !strings.Contains(e.Msg, "runtime.Goexit") {
				t.Errorf("got %v", e)
			}
		}
	}
}
