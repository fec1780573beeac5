package gocu_test

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gocu-dev/gocu"
)

// TestLoadWithoutGPU checks Load's errors where no GPU runs the image.
func TestLoadWithoutGPU(t *testing.T) {
	cubin, err := os.ReadFile("cmd/gocu/testdata/scale_sm90.cubin")
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"cpu", "sim"} {
		d, err := gocu.Open(name)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := gocu.Load(d, cubin); !errors.Is(err, gocu.ErrSimulatorCUDA) {
			t.Errorf("Load on %s: %v, want ErrSimulatorCUDA", name, err)
		}
	}
	if _, err := gocu.Load(nil, cubin); err == nil || !strings.Contains(err.Error(), "no device") {
		t.Errorf("Load on a nil device: %v", err)
	}
	d, _ := gocu.Open("cpu")
	if _, err := gocu.LoadFile(d, filepath.Join(t.TempDir(), "missing.cubin")); err == nil || !errors.Is(err, os.ErrNotExist) {
		t.Errorf("LoadFile of a missing file: %v", err)
	}
}

// nvcc returns the path of nvcc, or skips the test.
func nvcc(t *testing.T) string {
	t.Helper()
	if p, err := exec.LookPath("nvcc"); err == nil {
		return p
	}
	if _, err := os.Stat("/usr/local/cuda/bin/nvcc"); err == nil {
		return "/usr/local/cuda/bin/nvcc"
	}
	t.Skip("no nvcc on PATH or in /usr/local/cuda/bin")
	return ""
}

// TestLoadNVCCGPU builds testdata/nvcc/saxpy.cu with nvcc as a CUBIN for
// this GPU, as PTX and as a fatbinary, loads each with Load and checks
// the kernel's results against float64; a CUBIN for another architecture
// fails with ErrWrongArch naming both.
func TestLoadNVCCGPU(t *testing.T) {
	d := gpu(t)
	cc := nvcc(t)
	major, minor := d.CUDA().ComputeCapability()
	sm := fmt.Sprintf("%d%d", major, minor)
	dir := t.TempDir()
	build := func(out string, args ...string) []byte {
		t.Helper()
		path := filepath.Join(dir, out)
		cmd := exec.Command(cc, append(args, "-o", path, "testdata/nvcc/saxpy.cu")...)
		if b, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("nvcc %v: %v\n%s", args, err, b)
		}
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	images := map[string][]byte{
		"cubin":  build("s.cubin", "-cubin", "-arch=sm_"+sm),
		"ptx":    build("s.ptx", "-ptx", "-arch=compute_"+sm),
		"fatbin": build("s.fatbin", "-fatbin", "-gencode", "arch=compute_"+sm+",code=sm_"+sm),
	}
	const n = 100_000
	r := rand.New(rand.NewPCG(3, uint64(n)))
	xs, ys := make([]float32, n), make([]float32, n)
	for name, image := range images {
		for i := range xs {
			xs[i], ys[i] = r.Float32()*4-2, r.Float32()*4-2
		}
		m, err := gocu.Load(d, image)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		k, err := m.Kernel("saxpy")
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		x, _ := gocu.FromSlice(d, xs)
		y, _ := gocu.FromSlice(d, ys)
		if err := k.Launch(gocu.Auto(n), float32(1.5), x, y, int32(n)); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		got, err := y.ToSlice()
		if err != nil {
			t.Fatal(err)
		}
		for i := range got {
			want := 1.5*float64(xs[i]) + float64(ys[i])
			if d := float64(got[i]) - want; d > 1e-5 || d < -1e-5 {
				t.Fatalf("%s: y[%d] = %v, want %v", name, i, got[i], want)
			}
		}
		// Argument checks are gocu's: a missing argument is refused.
		if err := k.Launch(gocu.Auto(n), float32(1.5), x, y); err == nil {
			t.Errorf("%s: a launch with an argument missing succeeded", name)
		}
		x.Free()
		y.Free()
	}
	other := "80"
	if sm == "80" {
		other = "90"
	}
	wrong := build("w.cubin", "-cubin", "-arch=sm_"+other)
	_, err := gocu.Load(d, wrong)
	if !errors.Is(err, gocu.ErrWrongArch) || !strings.Contains(err.Error(), "built for sm_"+other) || !strings.Contains(err.Error(), "sm_"+sm) {
		t.Errorf("a CUBIN for sm_%s on sm_%s: %v", other, sm, err)
	}
}

// TestLoadCheckedInCubinGPU loads the CUBIN that NVRTC built for sm_90
// (cmd/gocu/testdata/scale_sm90.cubin): on an sm_90 GPU its kernel runs,
// on any other it fails with ErrWrongArch.
func TestLoadCheckedInCubinGPU(t *testing.T) {
	d := gpu(t)
	cubin, err := os.ReadFile("cmd/gocu/testdata/scale_sm90.cubin")
	if err != nil {
		t.Fatal(err)
	}
	m, err := gocu.Load(d, cubin)
	if major, minor := d.CUDA().ComputeCapability(); major != 9 || minor != 0 {
		if !errors.Is(err, gocu.ErrWrongArch) || !strings.Contains(err.Error(), "built for sm_90") {
			t.Errorf("the sm_90 CUBIN on sm_%d%d: %v", major, minor, err)
		}
		return
	}
	if err != nil {
		t.Fatal(err)
	}
	k, err := m.Kernel("scale")
	if err != nil {
		t.Fatal(err)
	}
	const n = 64 * 100 // whole blocks: the kernel synchronises inside its guard
	xs := make([]float32, n)
	r := rand.New(rand.NewPCG(5, 6))
	for i := range xs {
		xs[i] = r.Float32()*2 - 1
	}
	x, _ := gocu.FromSlice(d, xs)
	defer x.Free()
	if err := k.Launch(gocu.Grid1D(n, 64), x, float32(2), int32(n)); err != nil {
		t.Fatal(err)
	}
	got, err := x.ToSlice()
	if err != nil {
		t.Fatal(err)
	}
	for i := range got {
		want := 2 * float64(xs[i]) * float64(xs[i])
		if d := float64(got[i]) - want; d > 1e-6 || d < -1e-6 {
			t.Fatalf("x[%d] = %v, want %v", i, got[i], want)
		}
	}
}
