package bugs_test

import (
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/gocu-dev/gocu"
	"github.com/gocu-dev/gocu/cmd/gocu/internal/demo/bugs"
	"github.com/gocu-dev/gocu/internal/gputest"
	"github.com/gocu-dev/gocu/internal/lecture"
	"github.com/gocu-dev/gocu/kernel"
	"github.com/gocu-dev/gocu/nvrtc"
	"github.com/gocu-dev/gocu/sim"
)

// The tests in this file launch the planted bugs through their generated
// launchers, on the simulator and, where one is usable, on the GPU.

var gpuDev = sync.OnceValues(func() (*gocu.Device, error) {
	d, err := gocu.Open("cuda")
	if err != nil {
		return nil, err
	}
	if !nvrtc.Available() {
		return nil, errors.New("no NVRTC library")
	}
	return d, nil
})

// needGPU returns the GPU or skips with the reason.
func needGPU(t testing.TB) *gocu.Device {
	t.Helper()
	d, err := gpuDev()
	gputest.Need(t, err)
	return d
}

func simDev(t testing.TB) *gocu.Device {
	t.Helper()
	d, err := gocu.Open("sim")
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func upload[T any](t testing.TB, d *gocu.Device, s []T) *gocu.Buffer[T] {
	t.Helper()
	b, err := gocu.FromSlice(d, s)
	must(t, err)
	t.Cleanup(func() { b.Free() })
	return b
}

// poisoned returns a buffer of n copies of v: an element the kernel fails
// to write keeps it.
func poisoned[T any](t testing.TB, d *gocu.Device, n int, v T) *gocu.Buffer[T] {
	t.Helper()
	s := make([]T, n)
	for i := range s {
		s[i] = v
	}
	return upload(t, d, s)
}

func download[T any](t testing.TB, b *gocu.Buffer[T]) []T {
	t.Helper()
	s, err := b.ToSlice()
	must(t, err)
	return s
}

// TestDebugOffByOne: the off-by-one guard, on the GPU in debug mode, is
// the error the simulator reports, message for message.
func TestDebugOffByOne(t *testing.T) {
	const n = 1000 // not a multiple of the block: thread n exists
	r := newRand(t)
	ah, bh := randFloats(r, n), randFloats(r, n)
	line := wantLines(t, "broken.go", "out of range")[0]
	cfg := gocu.Grid1D(n, 256)
	launch := func(d *gocu.Device, cfg gocu.Config) ([]float32, error) {
		c := poisoned(t, d, n, float32(math.NaN()))
		err := bugs.LaunchAddOffByOne(d, cfg, upload(t, d, ah), upload(t, d, bh), c, n)
		return download(t, c), err
	}
	s := simDev(t)
	// The simulator's default mode: the Go runtime's bounds check.
	_, err := launch(s, cfg)
	e := asSimError(t, err)
	if e.Kind != sim.KindOutOfRange || e.Index != n || e.Length != n || e.Pos.Line != line || e.Thread.X != n%256 {
		t.Fatalf("simulator: %v", err)
	}
	// Checked mode names the access and its memory.
	checked := cfg
	checked.Checked = true
	_, err = launch(s, checked)
	simMsg := err.Error()
	want := fmt.Sprintf("sim: kernel AddOffByOne: block (3,0,0) thread (232,0,0): index 1000 out of range [0:1000] of global memory (argument 1) at broken.go:%d:", line)
	if !strings.HasPrefix(simMsg, want) || !strings.Contains(simMsg, "(a[i]) [seed ") {
		t.Fatalf("simulator, checked: %q, want %q...(a[i])", simMsg, want)
	}

	g := needGPU(t)
	dbg := cfg
	dbg.Debug = true
	c, err := launch(g, dbg)
	e = asSimError(t, err)
	if !errors.Is(err, sim.ErrOutOfRange) || e.Kernel != "AddOffByOne" || e.Index != n || e.Length != n || e.Seed != 0 {
		t.Fatalf("GPU debug: %v", err)
	}
	if got, w := err.Error(), simMsg[:strings.Index(simMsg, " [seed ")]; got != w {
		t.Errorf("GPU debug error\n  %s\nsimulator\n  %s", got, w)
	}
	for i := range n { // every thread in range finished its work
		if c[i] != ah[i]+bh[i] {
			t.Fatalf("c[%d] = %v, want %v", i, c[i], ah[i]+bh[i])
		}
	}
	// Without debug mode the GPU reads and writes one element past the
	// ends (inside the allocator's rounding) and reports nothing.
	if _, err := launch(g, cfg); err != nil {
		t.Errorf("release build: %v", err)
	}
}

// TestLaunchRaceChecked: the missing barrier, found by checked mode through
// the launcher and through sim.Run, both with the generated twin.
func TestLaunchRaceChecked(t *testing.T) {
	d := simDev(t)
	r := newRand(t)
	const m, n, k = 48, 40, 64
	ah, bh := randFloats(r, m*k), randFloats(r, k*n)
	cfg := gocu.Grid2D(n, m, Tile, Tile)
	cfg.Checked = true
	c := poisoned(t, d, m*n, float32(math.NaN()))
	err := bugs.LaunchTiledMatMulNoSync(d, cfg, upload(t, d, ah), upload(t, d, bh), c, m, n, k)
	if !errors.Is(err, sim.ErrSharedRace) {
		t.Errorf("launcher, checked: %v, want a shared-memory race", err)
	}
	scfg := sim.Config{Grid: kernel.Dim3{X: cdiv(n, Tile), Y: cdiv(m, Tile)}, Block: kernel.Dim3{X: Tile, Y: Tile}, Checked: true}
	if err := sim.Run(scfg, bugs.TiledMatMulNoSync, ah, bh, make([]float32, m*n), int32(m), int32(n), int32(k)); !errors.Is(err, sim.ErrSharedRace) {
		t.Errorf("sim.Run, checked: %v, want a shared-memory race (the twin found through package meta)", err)
	}
	// The correct kernel is race-free in checked mode.
	c = poisoned(t, d, m*n, float32(math.NaN()))
	must(t, lecture.LaunchTiledMatMul(d, cfg, upload(t, d, ah), upload(t, d, bh), c, m, n, k))
}

// TestLaunchDivergentBarrierChecked: the divergent barrier, found through
// the launcher and through sim.Run in checked mode, where the checked twin
// runs, is reported at the kernel's lines in broken.go (the barrier the
// first thread waits at, and the one the other thread passed last), as in
// the default mode, not at lines of the generated file.
func TestLaunchDivergentBarrierChecked(t *testing.T) {
	d := simDev(t)
	const n = 1000
	x := randFloats(newRand(t), n)
	barrier := wantLines(t, "broken.go", "divergent barrier")[0]
	last := wantLines(t, "broken.go", "last barrier")[0]
	check := func(how string, err error) {
		t.Helper()
		e := asSimError(t, err)
		if e.Kind != sim.KindDivergentBarrier || e.Kernel != "BlockSumDivergent" {
			t.Fatalf("%s: want a divergent barrier in BlockSumDivergent, got %v", how, err)
		}
		if filepath.Base(e.Pos.File) != "broken.go" || e.Pos.Line != barrier || e.Thread != (kernel.Dim3{}) {
			t.Errorf("%s: thread %v waits at %s:%d, want thread (0,0,0) at broken.go:%d", how, e.Thread, e.Pos.File, e.Pos.Line, barrier)
		}
		o := e.Other
		if o == nil || o.Op != "returned" || filepath.Base(o.Pos.File) != "broken.go" || o.Pos.Line != last {
			t.Errorf("%s: other side %+v, want a returned thread that last synchronised at broken.go:%d", how, o, last)
		}
		want := fmt.Sprintf("waits at SyncThreads at broken.go:%d, but thread (128,0,0) returned from the kernel (it last synchronised at broken.go:%d)", barrier, last)
		if msg := err.Error(); !strings.Contains(msg, want) || strings.Contains(msg, "zz_gocu") {
			t.Errorf("%s: message %q, want it to contain %q", how, msg, want)
		}
	}
	cfg := gocu.Grid1D(n, 256)
	cfg.Checked = true
	check("launcher, checked", bugs.LaunchBlockSumDivergent(d, cfg, upload(t, d, x), poisoned(t, d, 4, float32(math.NaN())), n))
	for _, seed := range []uint64{3, 99} {
		scfg := sim.Config{Grid: kernel.Dim3{X: 4}, Block: kernel.Dim3{X: 256}, Seed: seed, Checked: true}
		check("sim.Run, checked", sim.Run(scfg, bugs.BlockSumDivergent, x, make([]float32, 4), int32(n)))
	}
}
