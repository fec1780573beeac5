package demo

import (
	"math"
	"testing"

	"github.com/gocu-dev/gocu"
	"github.com/gocu-dev/gocu/internal/lecture"
)

// mmLauncher is the signature of gocu gen's launchers of the matmul
// kernels.
type mmLauncher = func(*gocu.Device, gocu.Config, gocu.Slice[float32], gocu.Slice[float32], gocu.Slice[float32], int32, int32, int32) error

// testLaunchers runs the launchers the demo uses on dev, with extra added
// to every launch configuration, on random inputs of sizes that are no
// multiples of the blocks, and checks the results against the CPU
// references.
func testLaunchers(t *testing.T, dev *gocu.Device, extra func(*gocu.Config)) {
	r := newRand(t)
	cfgOf := func(c gocu.Config) gocu.Config {
		extra(&c)
		return c
	}
	// Grayscale, 1-D (also with the block size chosen at launch) and 2-D.
	const w, h = 45, 29
	n := w * h
	rgb := make([]uint8, 3*n)
	for i := range rgb {
		rgb[i] = uint8(r.UintN(256))
	}
	want := lecture.GrayReference(rgb, n)
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
		{"Gray", func() error { return lecture.LaunchGray(dev, cfgOf(gocu.Grid1D(n, 128)), in, out, int32(n)) }},
		{"Gray auto", func() error { return lecture.LaunchGray(dev, cfgOf(gocu.Auto(n)), in, out, int32(n)) }},
		{"Gray2D", func() error { return lecture.LaunchGray2D(dev, cfgOf(gocu.Grid2D(w, h, 16, 16)), in, out, w, h) }},
	} {
		if err := out.CopyFrom(lecture.Fill(make([]uint8, n), 0xA5)); err != nil {
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
	a, b := lecture.RandomMatrix(r, m, k), lecture.RandomMatrix(r, k, nn)
	da, err := gocu.FromSlice(dev, a)
	if err != nil {
		t.Fatal(err)
	}
	defer da.Free()
	db, err := gocu.FromSlice(dev, b)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Free()
	dc, err := gocu.Alloc[float32](dev, m*nn)
	if err != nil {
		t.Fatal(err)
	}
	defer dc.Free()
	cfg := cfgOf(gocu.Grid2D(nn, m, lecture.Tile, lecture.Tile))
	for _, c := range []struct {
		name   string
		launch mmLauncher
	}{{"MatMul", lecture.LaunchMatMul}, {"TiledMatMul", lecture.LaunchTiledMatMul}} {
		if err := dc.CopyFrom(lecture.Fill(make([]float32, m*nn), float32(math.NaN()))); err != nil {
			t.Fatal(err)
		}
		if err := c.launch(dev, cfg, da, db, dc, m, nn, k); err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		got, err := dc.ToSlice()
		if err != nil {
			t.Fatal(err)
		}
		if chk, err := lecture.CheckMatMul(a, b, got, m, nn, k, 1<<20, r); err != nil || chk.Checked != m*nn {
			t.Errorf("%s on %v: %v (%v)", c.name, dev, err, chk)
		}
	}
}

func TestLaunchersSim(t *testing.T) {
	testLaunchers(t, simDevice(t), func(*gocu.Config) {})
}

// TestLaunchersChecked runs the launchers in the simulator's checked mode,
// through the checked twins gocu gen wrote, which must find no race and no
// bad access in the correct kernels.
func TestLaunchersChecked(t *testing.T) {
	testLaunchers(t, simDevice(t), func(c *gocu.Config) { c.Checked = true })
}
