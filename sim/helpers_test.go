package sim_test

import (
	"bufio"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/gocu-dev/gocu/kernel"
	"github.com/gocu-dev/gocu/sim"
)

func d1(x int32) kernel.Dim3       { return kernel.Dim3{X: x} }
func d2(x, y int32) kernel.Dim3    { return kernel.Dim3{X: x, Y: y} }
func d3(x, y, z int32) kernel.Dim3 { return kernel.Dim3{X: x, Y: y, Z: z} }

// launch runs f on a grid and returns its error.
func launch(grid, block kernel.Dim3, f func(t *kernel.Thread)) error {
	return sim.Launch(sim.Config{Grid: grid, Block: block}, sim.Kernel{Name: "k", Func: f})
}

// wantErr requires err to be a *sim.Error of the given kind.
func wantErr(t *testing.T, err error, kind sim.Kind) *sim.Error {
	t.Helper()
	var e *sim.Error
	if !errors.As(err, &e) {
		t.Fatalf("want a %v error, got %T: %v", kind, err, err)
	}
	if e.Kind != kind {
		t.Fatalf("want a %v error, got %v: %v", kind, e.Kind, err)
	}
	return e
}

// line returns the line of the calling test file that ends with the
// comment "// line: name".
func line(t *testing.T, name string) int {
	t.Helper()
	_, file, _, _ := runtime.Caller(1)
	fd, err := os.Open(sourceFile(file))
	if err != nil {
		t.Fatal(err)
	}
	defer fd.Close()
	s := bufio.NewScanner(fd)
	for n := 1; s.Scan(); n++ {
		if strings.HasSuffix(strings.TrimSpace(s.Text()), "// line: "+name) {
			return n
		}
	}
	t.Fatalf("%s: no line marked %q", filepath.Base(file), name)
	return 0
}

// wantPos requires p to be line l of the calling test file.
func wantPos(t *testing.T, p sim.Pos, l int) {
	t.Helper()
	_, file, _, _ := runtime.Caller(1)
	if filepath.Base(p.File) != filepath.Base(file) || p.Line != l {
		t.Errorf("position %v, want %s:%d", p, filepath.Base(file), l)
	}
}

// sourceFile finds a test's source file from the path runtime.Caller gives:
// absolute normally, module-relative in a binary built with -trimpath (as
// the GPU bundle is), where the package directory is the working directory.
func sourceFile(path string) string {
	if _, err := os.Stat(path); err == nil {
		return path
	}
	return filepath.Base(path)
}
