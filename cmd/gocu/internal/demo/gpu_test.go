package demo

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gocu-dev/gocu"
	"github.com/gocu-dev/gocu/array"
	"github.com/gocu-dev/gocu/cuda"
	"github.com/gocu-dev/gocu/internal/gputest"
	"github.com/gocu-dev/gocu/internal/sample"
	"github.com/gocu-dev/gocu/kernel"
	"github.com/gocu-dev/gocu/sim"
)

// gpuDevice returns the first GPU, or skips the test saying why there is
// none.
func gpuDevice(t *testing.T) *gocu.Device {
	t.Helper()
	gputest.Need(t, cuda.Init())
	dev, err := gocu.Open("cuda")
	if err != nil {
		t.Fatal(err)
	}
	return dev
}

// TestGPULaunchers runs gocu gen's CUDA translation of the lecture kernels
// on the GPU against the CPU references, in the release build and in
// debug mode, where the correct kernels must pass every bounds check.
func TestGPULaunchers(t *testing.T) {
	dev := gpuDevice(t)
	if err := Compile(dev); err != nil {
		t.Fatal(err)
	}
	t.Run("release", func(t *testing.T) { testLaunchers(t, dev, func(*gocu.Config) {}) })
	t.Run("debug", func(t *testing.T) { testLaunchers(t, dev, func(c *gocu.Config) { c.Debug = true }) })
}

// TestGPUDebug: the GPU's debug mode reports the off-by-one of
// bugs.AddOffByOne as the simulator does, and the release build does
// not see it.
func TestGPUDebug(t *testing.T) {
	dev := gpuDevice(t)
	d, err := DebugOffByOne(dev, newRand(t))
	if err != nil {
		t.Fatal(err)
	}
	e := d.Bug.Err
	if e.Kind != sim.KindOutOfRange || e.Kernel != "AddOffByOne" || e.Index != offN || e.Length != offN || e.Seed != 0 ||
		e.Block != (kernel.Dim3{X: 3}) || e.Thread != (kernel.Dim3{X: offN % offBlock}) || e.Pos.Expr != "a[i]" || !strings.HasSuffix(e.Pos.File, "broken.go") {
		t.Errorf("GPU debug report: %v (%+v)", e, e)
	}
	if e.Error() != d.Sim || !strings.Contains(d.Sim, "index 1000 out of range [0:1000] of global memory (argument 1) at broken.go:16:") || strings.Contains(d.Sim, "seed") {
		t.Errorf("GPU debug report\n  %v\nthe simulator's\n  %s", e, d.Sim)
	}
	if os.Getenv("GOCU_DEBUG") == "" && d.Release != nil {
		t.Errorf("release build: %v, want no error (the GPU hides the bug)", d.Release)
	}
}

// TestGPUGray compares the GPU's grayscale of the sample with the
// simulator's, which is bit-exact Go.
func TestGPUGray(t *testing.T) {
	dev := gpuDevice(t)
	img := sample.Image()
	want, err := Gray(simDevice(t), img, false)
	if err != nil {
		t.Fatal(err)
	}
	for _, twoD := range []bool{false, true} {
		res, err := Gray(dev, img, twoD)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := compareGray(res.Image.Pix, want.Image.Pix, true); err != nil {
			t.Errorf("twoD=%v: %v", twoD, err)
		}
		if res.Stages[1].Name != "compile (NVRTC, cached)" {
			t.Errorf("stages %v", res.Stages)
		}
	}
}

// TestGPURun is the demo on the GPU at 1024^3 (the default 4096^3 is what
// gocu demo runs; here the test stays short).
func TestGPURun(t *testing.T) {
	dev := gpuDevice(t)
	var buf bytes.Buffer
	rep, err := Run(Options{Device: "cuda", Size: 1024, Out: filepath.Join(t.TempDir(), "g.png")}, &buf)
	t.Log("\n" + buf.String())
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Rows) != 6 || rep.Rows[0].Code != "gocu gen + NVRTC" {
		t.Fatalf("rows %+v, want the compilation and five steps", rep.Rows)
	}
	for _, r := range rep.Rows[1:5] {
		if r.Where != dev.String() || r.Time <= 0 {
			t.Errorf("row %+v did not run on %v", r, dev)
		}
	}
	// The library matmul runs on the same GPU: array.Default() unless
	// GOCU_DEVICE chooses another device.
	ad, err := ArrayDevice(dev)
	if err != nil {
		t.Fatal(err)
	}
	if lib := rep.Rows[5]; lib.Code != "array.MatMul" || !ad.IsGPU() || lib.Where != ad.String() || rep.ArrayDevice != ad.String() {
		t.Errorf("library row %+v on %v (arrays: %s), want a GPU", lib, ad, rep.ArrayDevice)
	}
	if os.Getenv("GOCU_DEVICE") == "" && ad != array.Default() {
		t.Errorf("the array device of %v is %v, not array.Default() (%v)", dev, ad, array.Default())
	}
	if len(rep.Bugs) != 3 || rep.Debug == nil || rep.Debug.Bug.Err == nil {
		t.Fatalf("bugs %v, debug %+v: want the simulator's three and the GPU's debug report", rep.Bugs, rep.Debug)
	}
	for _, s := range []string{"device: " + dev.String(), "debug mode", rep.Debug.Sim} {
		if !strings.Contains(buf.String(), s) {
			t.Errorf("the output lacks %q", s)
		}
	}
}
