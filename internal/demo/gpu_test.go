package demo

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gocu-dev/gocu"
	"github.com/gocu-dev/gocu/cuda"
	"github.com/gocu-dev/gocu/internal/sample"
)

// gpuDevice returns the first GPU, or skips the test saying why there is
// none.
func gpuDevice(t *testing.T) *gocu.Device {
	t.Helper()
	if err := cuda.Init(); err != nil {
		t.Skipf("no GPU: %s", whyNoGPU(err))
	}
	dev, err := gocu.Open("cuda")
	if err != nil {
		t.Fatal(err)
	}
	return dev
}

// TestGPULaunchers runs gocu gen's CUDA translation of the lecture kernels
// on the GPU against the CPU references.
func TestGPULaunchers(t *testing.T) {
	dev := gpuDevice(t)
	if _, err := Module(dev); err != nil {
		t.Fatal(err)
	}
	testLaunchers(t, dev)
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
	if rep.Rows[0].Code != "gocu gen + NVRTC" {
		t.Errorf("first row %+v, want the compilation", rep.Rows[0])
	}
	for _, r := range rep.Rows[1:5] {
		if r.Where != dev.String() || r.Time <= 0 {
			t.Errorf("row %+v did not run on %v", r, dev)
		}
	}
	if !strings.Contains(buf.String(), "device: "+dev.String()) {
		t.Error("the header does not name the GPU")
	}
}
