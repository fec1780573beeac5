package gen

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gocu-dev/gocu/internal/gputest"
	"github.com/gocu-dev/gocu/nvrtc"
)

// TestGolden translates every package in testdata/kernels and compares the
// generated Go and CUDA files with the ones checked in beside the source
// (go test -update rewrites them). The checked-in files are what the other
// tests compile and run.
func TestGolden(t *testing.T) {
	needGo(t)
	dirs := kernelDirs(t)
	var patterns []string
	for _, d := range dirs {
		patterns = append(patterns, "./"+d)
	}
	res, err := Generate(Config{CUDAFile: true}, patterns...)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Packages) != len(dirs) {
		t.Fatalf("translated %d packages, want %d", len(res.Packages), len(dirs))
	}
	for _, p := range res.Packages {
		if *update {
			if _, err := res.Write(); err != nil {
				t.Fatal(err)
			}
		}
		if got, want := p.Go, []byte(readFile(t, p.GoFile)); !bytes.Equal(got, want) {
			t.Errorf("%s differs from the translation (run go test -update and review the diff)", p.GoFile)
		}
		if got, want := p.CUDA, readFile(t, p.CUFile); got != want {
			t.Errorf("%s differs from the translation (run go test -update and review the diff)", p.CUFile)
		}
	}
}

// TestGenerateTwice checks that output is deterministic and that writing
// an up-to-date translation changes no file.
func TestGenerateTwice(t *testing.T) {
	needGo(t)
	a, err := Generate(Config{CUDAFile: true}, "./testdata/kernels/sgemm", "./testdata/kernels/features")
	if err != nil {
		t.Fatal(err)
	}
	b, err := Generate(Config{CUDAFile: true}, "./testdata/kernels/features", "./testdata/kernels/sgemm")
	if err != nil {
		t.Fatal(err)
	}
	byPath := map[string]*Package{}
	for _, p := range b.Packages {
		byPath[p.Path] = p
	}
	for _, p := range a.Packages {
		q := byPath[p.Path]
		if q == nil || !bytes.Equal(p.Go, q.Go) || p.CUDA != q.CUDA {
			t.Fatalf("two runs translate %s differently", p.Path)
		}
	}
	if *update {
		return
	}
	changed, err := a.Write()
	if err != nil {
		t.Fatal(err)
	}
	if len(changed) != 0 {
		t.Errorf("writing an unchanged translation rewrote %v", changed)
	}
}

// TestCompileGolden compiles every checked-in CUDA file with clang-16.
func TestCompileGolden(t *testing.T) {
	files, _ := filepath.Glob("testdata/kernels/*/zz_gocu_*.cu")
	if len(files) == 0 {
		t.Fatal("no generated CUDA files in testdata/kernels")
	}
	for _, f := range files {
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		t.Run(filepath.Base(filepath.Dir(f)), func(t *testing.T) {
			t.Parallel()
			compileCUDA(t, filepath.Base(filepath.Dir(f)), string(src))
		})
	}
}

// TestNVRTCGolden compiles every checked-in CUDA file with NVRTC, release
// and debug, where the library is found (it needs no GPU; GOCU_NVRTC_LIB
// points at one): what clang-16 accepts NVRTC must accept too, printf
// without a declaration and __constant__ tables included.
func TestNVRTCGolden(t *testing.T) {
	gputest.Need(t, nvrtc.Load()) // GOCU_NVRTC_LIB names the library
	files, _ := filepath.Glob("testdata/kernels/*/zz_gocu_*.cu")
	for _, f := range files {
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		arch := "sm_90"
		if strings.Contains(string(src), "__CUDA_ARCH_FEAT_SM90_ALL") {
			arch = "sm_90a"
		}
		for _, debug := range []bool{false, true} {
			opts := nvrtc.Options{Name: filepath.Base(f), Arch: arch, Std: "c++17"}
			if debug {
				opts.Defines = map[string]string{"GOCU_DEBUG": ""}
			}
			if _, err := nvrtc.Compile(string(src), opts); err != nil {
				t.Errorf("%s (debug=%v): %v", f, debug, err)
			}
		}
	}
}
