package sim_test

import (
	"context"
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

// Spin is the kernel of issue 13: thread 3 never returns.
func Spin(t *kernel.Thread, x []float32) {
	if t.ThreadIdx.X == 3 {
		for { // line: spin loop
			x[0]++
		}
	}
}

// spinLoop is the site gocu gen would record for Spin's loop.
var spinLoop = kernel.Site{File: "timeout_test.go", Line: 0, Col: 3, Expr: "for"}

// gocuChecked_Spin is Spin's checked twin as gocu gen writes it: kernel.Loop
// first in every loop body, every element access through kernel.At.
func gocuChecked_Spin(t *kernel.Thread, x []float32) {
	if t.ThreadIdx.X == 3 {
		for {
			kernel.Loop(t, &spinLoop)
			*kernel.At(t, x, 0, &spinLoop, kernel.ReadWrite)++
		}
	}
}

// An infinite loop in checked mode is stopped at its back-edge when the
// budget runs out: the launch returns a KindTimeout error naming the
// kernel, the thread and the loop's line, and nothing keeps running.
func TestTimeoutStopsCheckedLoop(t *testing.T) {
	spinLoop.Line = int32(line(t, "spin loop"))
	before := runtime.NumGoroutine()
	x := make([]float32, 1)
	k := sim.Kernel{Name: "Spin", Func: func(t *kernel.Thread) { Spin(t, x) },
		Checked: func(t *kernel.Thread) { gocuChecked_Spin(t, x) }, Args: []any{x}}
	start := time.Now()
	err := sim.Launch(sim.Config{Grid: d1(1), Block: d1(32), Checked: true, Timeout: 200 * time.Millisecond, Seed: 7}, k)
	elapsed := time.Since(start)
	e := wantErr(t, err, sim.KindTimeout)
	if !errors.Is(err, sim.ErrTimeout) || !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("%v: not ErrTimeout and context.DeadlineExceeded", err)
	}
	if e.Kernel != "Spin" || len(e.Running) == 0 {
		t.Fatalf("kernel %q, running %v", e.Kernel, e.Running)
	}
	for _, p := range e.Running {
		if p.Thread != d1(3) || p.Op != "stopped" {
			t.Errorf("running thread %+v, want thread (3,0,0) stopped", p)
		}
		wantPos(t, p.Pos, int(spinLoop.Line))
	}
	msg := err.Error()
	for _, want := range []string{"sim: kernel Spin: time budget of 200ms exhausted (Config.Timeout or GOCU_SIM_TIMEOUT sets it): ",
		"thread (3,0,0) at timeout_test.go:" + fmt.Sprint(spinLoop.Line) + ":3 (for) (stopped)", "[seed 7: "} {
		if !strings.Contains(msg, want) {
			t.Errorf("%q lacks %q", msg, want)
		}
	}
	if elapsed > 2*time.Second {
		t.Errorf("the launch took %v to stop", elapsed)
	}
	t.Logf("%v (after %v)", err, elapsed)
	// With several blocks the race between their threads 3 is found first,
	// and reported with the timeout.
	err = sim.Launch(sim.Config{Grid: d1(4), Block: d1(32), Checked: true, Timeout: 200 * time.Millisecond, Workers: 4, Seed: 7}, k)
	if e := wantErr(t, err, sim.KindTimeout); !strings.Contains(e.Msg, "before that, block ") || !strings.Contains(e.Msg, "global-memory race") ||
		strings.Count(err.Error(), "sim: ") != 1 || len(e.Running) != 1 || e.Running[0].Op != "stopped" {
		t.Errorf("got %v", err)
	}
	// Nothing keeps running, and the simulator still works.
	if err := sim.Launch(sim.Config{Grid: d1(4), Block: d1(32), Checked: true}, sim.Kernel{Name: "ok", Func: func(*kernel.Thread) {},
		Checked: func(*kernel.Thread) {}, Args: []any{x}}); err != nil {
		t.Fatal(err)
	}
	waitGoroutines(t, before)
}

// SpinUntil spins in thread 3 of block 1 until released; in the default
// mode plain Go runs it, which nothing can interrupt.
func SpinUntil(t *kernel.Thread, x []float32, release *atomic.Bool) {
	if t.BlockIdx.X == 1 && t.ThreadIdx.X == 3 {
		for !release.Load() { // line: spin until
			x[0]++ // line: spin body
		}
	}
}

// In the default mode a spinning thread cannot be stopped: the launch
// returns after its budget anyway, names the thread and, from the
// goroutine's stack, the loop's line; the memory of its arguments is
// refused to later launches until the thread returns.
func TestTimeoutAbandonsUnstoppableLoop(t *testing.T) {
	x, other := make([]float32, 8), make([]float32, 4)
	var release atomic.Bool
	defer release.Store(true)
	k := sim.Kernel{Name: "SpinUntil", Func: func(t *kernel.Thread) { SpinUntil(t, x[:1], &release) }, Args: []any{x[:1]}}
	start := time.Now()
	err := sim.Launch(sim.Config{Grid: d1(3), Block: d1(32), Workers: 2, Timeout: 300 * time.Millisecond}, k)
	elapsed := time.Since(start)
	e := wantErr(t, err, sim.KindTimeout)
	if len(e.Running) != 1 {
		t.Fatalf("running %+v, want one thread", e.Running)
	}
	p := e.Running[0]
	if p.Block != d1(1) || p.Thread != d1(3) || p.Op != "running" {
		t.Errorf("running %+v, want block (1,0,0) thread (3,0,0) running", p)
	}
	if l := p.Pos.Line; l != line(t, "spin until") && l != line(t, "spin body") {
		t.Errorf("position %v, want the loop's lines", p.Pos)
	}
	if !strings.HasSuffix(p.Pos.Func, "sim_test.SpinUntil") {
		t.Errorf("position in %q, want SpinUntil", p.Pos.Func)
	}
	if msg := err.Error(); !strings.Contains(msg, "block (1,0,0) thread (3,0,0) at timeout_test.go:") || !strings.Contains(msg, "cannot be stopped") {
		t.Errorf("message %q", msg)
	}
	if elapsed > 3*time.Second {
		t.Errorf("the launch took %v to return", elapsed)
	}
	t.Logf("%v (after %v)", err, elapsed)

	// The abandoned launch's memory is refused; other memory is not.
	use := func(s []float32) error {
		return sim.Launch(sim.Config{Grid: d1(1), Block: d1(4)}, sim.Kernel{Name: "Use", Func: func(t *kernel.Thread) { s[t.ThreadIdx.X] = 1 }, Args: []any{s}})
	}
	if err := use(x[4:]); err != nil {
		t.Errorf("memory beside the abandoned launch's: %v", err)
	}
	err = use(x[:4])
	if e := wantErr(t, err, sim.KindUsage); !strings.Contains(e.Msg, "shares memory with argument 1 of a launch of kernel SpinUntil that ran out of time") {
		t.Errorf("got %v", err)
	}
	if err := use(other); err != nil {
		t.Errorf("unrelated memory: %v", err)
	}
	// Once the thread returns, the memory is usable again.
	release.Store(true)
	deadline := time.Now().Add(5 * time.Second)
	for use(x[:4]) != nil {
		if time.Now().After(deadline) {
			t.Fatal("the abandoned launch's memory is still refused after its thread returned")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// A kernel that loops through barriers forever is stopped at a barrier in
// the default mode too.
func TestTimeoutStopsAtBarrier(t *testing.T) {
	before := runtime.NumGoroutine()
	var n atomic.Int64
	err := sim.Launch(sim.Config{Grid: d1(2), Block: d1(64), Timeout: 100 * time.Millisecond}, sim.Kernel{Name: "Forever", Func: func(t *kernel.Thread) {
		for {
			t.SyncThreads() // line: barrier
			n.Add(1)
		}
	}})
	e := wantErr(t, err, sim.KindTimeout)
	if len(e.Running) == 0 {
		t.Fatalf("no thread named: %v", err)
	}
	for _, p := range e.Running {
		if p.Op != "stopped" {
			t.Errorf("%+v not stopped", p)
		}
		wantPos(t, p.Pos, line(t, "barrier"))
	}
	waitGoroutines(t, before)
}

// LaunchContext stops a launch when its context is done, with no budget.
func TestLaunchContext(t *testing.T) {
	x := make([]float32, 1)
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(100*time.Millisecond, cancel)
	err := sim.LaunchContext(ctx, sim.Config{Grid: d1(1), Block: d1(32), Checked: true, Timeout: -1}, sim.Kernel{Name: "Spin",
		Func: func(t *kernel.Thread) { Spin(t, x) }, Checked: func(t *kernel.Thread) { gocuChecked_Spin(t, x) }})
	e := wantErr(t, err, sim.KindTimeout)
	if !errors.Is(err, context.Canceled) || !strings.Contains(e.Msg, "launch stopped: context canceled") {
		t.Errorf("got %v", err)
	}
	// A context that is done already stops the launch at once.
	ctx, cancel = context.WithTimeout(context.Background(), time.Millisecond)
	defer cancel()
	err = sim.LaunchContext(ctx, sim.Config{Grid: d1(1), Block: d1(32), Checked: true}, sim.Kernel{Name: "Spin",
		Func: func(t *kernel.Thread) { Spin(t, x) }, Checked: func(t *kernel.Thread) { gocuChecked_Spin(t, x) }})
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("got %v", err)
	}
}

// GOCU_SIM_TIMEOUT sets the budget of launches that set no Timeout.
func TestTimeoutEnvironment(t *testing.T) {
	x := make([]float32, 1)
	k := sim.Kernel{Name: "Spin", Func: func(t *kernel.Thread) { Spin(t, x) }, Checked: func(t *kernel.Thread) { gocuChecked_Spin(t, x) }}
	t.Setenv("GOCU_SIM_TIMEOUT", "150ms")
	err := sim.Launch(sim.Config{Grid: d1(1), Block: d1(32), Checked: true}, k)
	if e := wantErr(t, err, sim.KindTimeout); !strings.Contains(e.Msg, "time budget of 150ms exhausted") {
		t.Errorf("got %v", err)
	}
	t.Setenv("GOCU_SIM_TIMEOUT", "soon")
	err = sim.Launch(sim.Config{Grid: d1(1), Block: d1(32)}, sim.Kernel{Name: "k", Func: func(*kernel.Thread) {}})
	if e := wantErr(t, err, sim.KindUsage); !strings.Contains(e.Msg, `GOCU_SIM_TIMEOUT="soon" is not a duration`) {
		t.Errorf("got %v", err)
	}
	for _, v := range []string{"off", "0", "1h"} {
		t.Setenv("GOCU_SIM_TIMEOUT", v)
		if err := sim.Launch(sim.Config{Grid: d1(2), Block: d1(32)}, sim.Kernel{Name: "k", Func: func(*kernel.Thread) {}}); err != nil {
			t.Errorf("GOCU_SIM_TIMEOUT=%s: %v", v, err)
		}
	}
}

// waitGoroutines waits until no more goroutines run than before.
func waitGoroutines(t *testing.T, before int) {
	t.Helper()
	for range 200 {
		if runtime.NumGoroutine() <= before {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Errorf("%d goroutines before, %d after", before, runtime.NumGoroutine())
}

// A budget that runs out between blocks (every block is short, the grid is
// huge) is an error naming how many blocks ran, never a success.
func TestTimeoutBetweenBlocks(t *testing.T) {
	var n atomic.Int64
	err := sim.Launch(sim.Config{Grid: d1(1<<31 - 1), Block: d1(1), Timeout: 50 * time.Millisecond},
		sim.Kernel{Name: "Tiny", Func: func(*kernel.Thread) { n.Add(1) }})
	e := wantErr(t, err, sim.KindTimeout)
	if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(e.Msg, "time budget of 50ms exhausted") ||
		!strings.Contains(e.Msg, fmt.Sprintf("of %d blocks ran", 1<<31-1)) {
		t.Errorf("got %v", err)
	}
	if n.Load() == 0 || n.Load() >= 1<<31-1 {
		t.Errorf("%d blocks ran", n.Load())
	}
}

// A context that is done before the launch runs no block and says so; a
// context deadline shorter than the budget is reported as the context's.
func TestLaunchContextDone(t *testing.T) {
	var n atomic.Int64
	k := sim.Kernel{Name: "Count", Func: func(*kernel.Thread) { n.Add(1) }}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	err := sim.LaunchContext(ctx, sim.Config{Grid: d1(20000), Block: d1(32)}, k)
	e := wantErr(t, err, sim.KindTimeout)
	if !errors.Is(err, context.Canceled) || !strings.Contains(e.Msg, "0 of 20000 blocks ran") || n.Load() != 0 {
		t.Errorf("got %v with %d threads run", err, n.Load())
	}
	ctx, cancel = context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	err = sim.LaunchContext(ctx, sim.Config{Grid: d1(1<<31 - 1), Block: d1(1), Timeout: time.Hour}, k)
	e = wantErr(t, err, sim.KindTimeout)
	if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(e.Msg, "launch stopped: context deadline exceeded after") ||
		strings.Contains(e.Msg, "time budget") {
		t.Errorf("got %v", err)
	}
}
