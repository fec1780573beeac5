package demo

import (
	"bytes"
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/gocu-dev/gocu"
	"github.com/gocu-dev/gocu/examples/kernels"
	"github.com/gocu-dev/gocu/kernel"
	"github.com/gocu-dev/gocu/sim"
)

// testLaunchers runs every launcher on dev on random inputs of awkward
// sizes and checks the results against the CPU references.
func testLaunchers(t *testing.T, dev *gocu.Device) {
	r := newRand(t)
	// Grayscale, 1-D (also through gocu.Auto) and 2-D.
	const w, h = 45, 29
	n := w * h
	rgb := make([]uint8, 3*n)
	for i := range rgb {
		rgb[i] = uint8(r.UintN(256))
	}
	want := GrayReference(rgb, n)
	in, err := gocu.FromSlice(dev, rgb)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Free()
	out, err := gocu.Alloc[uint8](dev, n)
	if err != nil {
		t.Fatal(err)
	}
	defer out.Free()
	for _, c := range []struct {
		name   string
		launch func() error
	}{
		{"Gray", func() error { return LaunchGray(dev, gocu.Grid1D(n, 128), in, out, int32(n)) }},
		{"Gray auto", func() error { return LaunchGray(dev, gocu.Auto(n), in, out, int32(n)) }},
		{"Gray2D", func() error { return LaunchGray2D(dev, gocu.Grid2D(w, h, 16, 16), in, out, w, h) }},
	} {
		if err := out.CopyFrom(Fill(make([]uint8, n), 0xA5)); err != nil {
			t.Fatal(err)
		}
		if err := c.launch(); err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		got, err := out.ToSlice()
		if err != nil {
			t.Fatal(err)
		}
		if _, err := compareGray(got, want, dev.Kind() == gocu.CUDA); err != nil {
			t.Errorf("%s on %v: %v", c.name, dev, err)
		}
	}

	// Matmuls of sizes that are no multiples of the tile.
	const m, nn, k = 37, 29, 45
	a, b := RandomMatrix(r, m, k), RandomMatrix(r, k, nn)
	da, _ := gocu.FromSlice(dev, a)
	db, _ := gocu.FromSlice(dev, b)
	dc, err := gocu.Alloc[float32](dev, m*nn)
	if err != nil {
		t.Fatal(err)
	}
	defer da.Free()
	defer db.Free()
	defer dc.Free()
	cfg := gocu.Grid2D(nn, m, kernels.Tile, kernels.Tile)
	for name, launch := range map[string]func(*gocu.Device, gocu.Config, *gocu.Buffer[float32], *gocu.Buffer[float32], *gocu.Buffer[float32], int32, int32, int32) error{
		"MatMul": LaunchMatMul, "TiledMatMul": LaunchTiledMatMul,
	} {
		if err := dc.CopyFrom(Fill(make([]float32, m*nn), float32(math.NaN()))); err != nil {
			t.Fatal(err)
		}
		if err := launch(dev, cfg, da, db, dc, m, nn, k); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		c, err := dc.ToSlice()
		if err != nil {
			t.Fatal(err)
		}
		if chk, err := CheckMatMul(a, b, c, m, nn, k, 1<<20, r); err != nil || chk.Checked != m*nn {
			t.Errorf("%s on %v: %v (%v)", name, dev, err, chk)
		}
	}
}

func TestLaunchersSim(t *testing.T) {
	testLaunchers(t, simDevice(t))
}

// TestLaunchersChecked runs the launchers in the simulator's checked mode,
// through the twins.
func TestLaunchersChecked(t *testing.T) {
	t.Setenv("GOCU_SIM_CHECKED", "1")
	testLaunchers(t, simDevice(t))
}

// TestTwins checks that every kernel the demo runs checked has a twin of
// its own type, and that the twin is the instrumented one: only checked
// mode names the access expression in an out-of-range report.
func TestTwins(t *testing.T) {
	if _, ok := Twin(kernels.Gray); !ok {
		t.Error("no twin of Gray")
	}
	if _, ok := Twin(kernels.Gray2D); !ok {
		t.Error("no twin of Gray2D")
	}
	for _, fn := range []mmKernel{kernels.MatMul, kernels.TiledMatMul, kernels.TiledMatMulNoSync} {
		if _, ok := Twin(fn); !ok {
			t.Errorf("no twin of %v", funcPC(fn))
		}
	}
	if _, ok := Twin(kernels.Histogram); ok {
		t.Error("a twin of Histogram, which the interim file does not carry")
	}
	twin, ok := Twin(kernels.AddOffByOne)
	if !ok {
		t.Fatal("no twin of AddOffByOne")
	}
	const n = 300
	x, y, z := make([]float32, n), make([]float32, n), make([]float32, n)
	cfg := sim.Config{Grid: kernel.Dim3{X: 2}, Block: kernel.Dim3{X: 256}, Checked: true}
	err := sim.Launch(cfg, sim.Kernel{Name: "AddOffByOne", Args: []any{x, y, z, int32(n)},
		Func:    func(t *kernel.Thread) { kernels.AddOffByOne(t, x, y, z, n) },
		Checked: func(t *kernel.Thread) { twin(t, x, y, z, n) }})
	var e *sim.Error
	if !errors.As(err, &e) || e.Kind != sim.KindOutOfRange || e.Pos.Expr != "a[i]" || e.Index != n || e.Memory != "global memory (argument 1)" {
		t.Fatalf("checked AddOffByOne: %v (expr %q, memory %q)", err, e.Pos.Expr, e.Memory)
	}
}

func TestLaunchErrors(t *testing.T) {
	dev := simDevice(t)
	a, _ := gocu.FromSlice(dev, []uint8{1, 2, 3})
	b, _ := gocu.Alloc[uint8](dev, 1)
	for _, c := range []struct {
		err  error
		want string
	}{
		{LaunchGray(nil, gocu.Grid1D(1, 1), a, b, 1), "nil device"},
		{LaunchGray(dev, gocu.Grid1D(1, 1), nil, b, 1), "buffer argument 1 is nil"},
		{LaunchGray(dev, gocu.Grid1D(1, 1), a, gocu.Out(make([]uint8, 1)), 1), "In, Out or InOut wrapper"},
		{LaunchGray(dev, gocu.Config{}, a, b, 1), "no grid and block"},
		{LaunchGray(dev, gocu.Config{Grid: gocu.Dim3{X: 1}, Block: gocu.Dim3{X: 2048}}, a, b, 1), "2048"},
	} {
		if c.err == nil || !strings.Contains(c.err.Error(), c.want) {
			t.Errorf("got %v, want %q", c.err, c.want)
		}
	}
	// A kernel that indexes past a buffer that is too short is the
	// simulator's out-of-range error.
	err := LaunchGray(dev, gocu.Grid1D(2, 32), a, b, 2)
	if !errors.Is(err, sim.ErrOutOfRange) {
		t.Errorf("short buffers: %v", err)
	}
	if err := b.Free(); err != nil {
		t.Fatal(err)
	}
	if err := LaunchGray(dev, gocu.Grid1D(1, 1), a, b, 1); !errors.Is(err, gocu.ErrFreed) {
		t.Errorf("freed buffer: %v", err)
	}
	if !bytes.Equal(a.Host(), []uint8{1, 2, 3}) {
		t.Error("a launch changed its input")
	}
}

// TestRegistered checks that sim.Run finds the twins in checked mode.
func TestRegistered(t *testing.T) {
	const m, n, k = 32, 32, 32
	r := newRand(t)
	a, b, c := RandomMatrix(r, m, k), RandomMatrix(r, k, n), make([]float32, m*n)
	cfg := sim.Config{Grid: kernel.Dim3{X: 2, Y: 2}, Block: kernel.Dim3{X: 16, Y: 16}, Checked: true}
	if err := sim.Run(cfg, kernels.TiledMatMulNoSync, a, b, c, int32(m), int32(n), int32(k)); !errors.Is(err, sim.ErrRace) {
		t.Errorf("sim.Run of TiledMatMulNoSync, checked: %v", err)
	}
	if err := sim.Run(cfg, kernels.TiledMatMul, a, b, c, int32(m), int32(n), int32(k)); err != nil {
		t.Errorf("sim.Run of TiledMatMul, checked: %v", err)
	}
}
