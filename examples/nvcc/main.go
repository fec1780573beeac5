// Command nvcc runs a kernel that nvcc compiled ahead of time: it builds
// saxpy.cu beside it with nvcc for the GPU that is here, loads the CUBIN
// with gocu.Load and launches it through gocu, with gocu's argument
// checks and errors. Without a GPU or without nvcc it says so and exits.
package main

import (
	"fmt"
	"log"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"

	"github.com/gocu-dev/gocu"
)

func main() {
	dev, err := gocu.Open("cuda")
	if err != nil {
		fmt.Println("no GPU, nothing to load:", err)
		return
	}
	nvcc, err := exec.LookPath("nvcc")
	if err != nil {
		if _, serr := os.Stat("/usr/local/cuda/bin/nvcc"); serr != nil {
			fmt.Println("no nvcc on PATH or in /usr/local/cuda/bin: install the CUDA toolkit")
			return
		}
		nvcc = "/usr/local/cuda/bin/nvcc"
	}
	major, minor := dev.CUDA().ComputeCapability()
	_, self, _, _ := runtime.Caller(0)
	src := filepath.Join(filepath.Dir(self), "saxpy.cu")
	tmp, err := os.MkdirTemp("", "gocu-nvcc")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(tmp)
	cubin := filepath.Join(tmp, "saxpy.cubin")
	arch := fmt.Sprintf("-arch=sm_%d%d", major, minor)
	if out, err := exec.Command(nvcc, "-cubin", arch, "-o", cubin, src).CombinedOutput(); err != nil {
		log.Fatalf("nvcc: %v\n%s", err, out)
	}
	m, err := gocu.LoadFile(dev, cubin)
	if err != nil {
		log.Fatal(err)
	}
	k, err := m.Kernel("saxpy")
	if err != nil {
		log.Fatal(err)
	}
	const n = 1 << 20
	r := rand.New(rand.NewPCG(1, 2))
	xs, ys := make([]float32, n), make([]float32, n)
	for i := range xs {
		xs[i], ys[i] = r.Float32()*2-1, r.Float32()*2-1
	}
	x, _ := gocu.FromSlice(dev, xs)
	y, _ := gocu.FromSlice(dev, ys)
	if err := k.Launch(gocu.Auto(n), float32(3), x, y, int32(n)); err != nil {
		log.Fatal(err)
	}
	got, err := y.ToSlice()
	if err != nil {
		log.Fatal(err)
	}
	bad := 0
	for i := range got {
		want := float64(3)*float64(xs[i]) + float64(ys[i])
		if d := float64(got[i]) - want; d > 1e-6 || d < -1e-6 {
			bad++
		}
	}
	fmt.Printf("saxpy from nvcc (%s) on %v: %d of %d elements wrong\n", arch, dev, bad, n)
	if bad > 0 {
		os.Exit(1)
	}
}
