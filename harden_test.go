package gocu_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/gocu-dev/gocu"
	"github.com/gocu-dev/gocu/cuda"
	"github.com/gocu-dev/gocu/internal/lecture"
)

// Alloc of more memory than the machine has fails on the CPU and the
// simulator with an error matching cuda.ErrOutOfMemory, as on a GPU,
// instead of Go's fatal out-of-memory error.
func TestAllocTooLarge(t *testing.T) {
	for _, name := range []string{"cpu", "sim"} {
		d := gocu.MustOpen(name)
		for _, n := range []int{1 << 40, 1 << 58} {
			b, err := gocu.Alloc[float64](d, n)
			if !errors.Is(err, cuda.ErrOutOfMemory) || !strings.Contains(err.Error(), "more than the machine can give") {
				t.Errorf("Alloc[float64](%s, %d): %v", name, n, err)
			}
			if b != nil {
				b.Free()
			}
		}
		b, err := gocu.Alloc[float64](d, 1<<10)
		if err != nil {
			t.Fatalf("a small Alloc on %s: %v", name, err)
		}
		b.Free()
	}
}

// Grid1D with a block of no threads gives a configuration that a launch
// refuses, not a silent block of 256.
func TestGrid1DBadBlock(t *testing.T) {
	d := gocu.MustOpen("sim")
	rgb, _ := gocu.Alloc[uint8](d, 3*64)
	gray, _ := gocu.Alloc[uint8](d, 64)
	for _, block := range []int{0, -5} {
		cfg := gocu.Grid1D(64, block)
		if cfg.Block.X > 0 {
			t.Errorf("Grid1D(64, %d) = %v", block, cfg)
		}
		err := lecture.LaunchGray(d, cfg, rgb, gray, 64)
		if !errors.Is(err, cuda.ErrInvalidConfig) || !strings.Contains(err.Error(), "block") {
			t.Errorf("launch with Grid1D(64, %d): %v", block, err)
		}
	}
	if err := lecture.LaunchGray(d, gocu.Grid1D(64, 32), rgb, gray, 64); err != nil {
		t.Errorf("launch with Grid1D(64, 32): %v", err)
	}
}

// A generated launcher on the simulator whose budget runs out returns the
// budget's error, never nil with part of the output unwritten.
func TestLauncherTimeout(t *testing.T) {
	t.Setenv("GOCU_SIM_TIMEOUT", "1ms")
	d := gocu.MustOpen("sim")
	const n = 1 << 25 // 16 cores ran 2^22 pixels within 1 ms
	rgb, err := gocu.Alloc[uint8](d, 3*n)
	if err != nil {
		t.Fatal(err)
	}
	defer rgb.Free()
	gray, err := gocu.Alloc[uint8](d, n)
	if err != nil {
		t.Fatal(err)
	}
	defer gray.Free()
	err = lecture.LaunchGray(d, gocu.Grid1D(n, 256), rgb, gray, n)
	if err == nil || !strings.Contains(err.Error(), "time budget of 1ms exhausted") {
		t.Errorf("LaunchGray of %d pixels in 1ms: %v", n, err)
	}
}
