package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func TestGenCommand(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go command to load packages with")
	}
	// An up-to-date package: nothing to write, no output, no error.
	out, err := run(t, "gen", "../../gen/testdata/kernels/gray")
	if err != nil || out != "" {
		t.Fatalf("gocu gen on an up-to-date package: %v\n%s", err, out)
	}
	// Kernel code outside the subset: file:line:col diagnostics, an error
	// (exit status 1), nothing written.
	out, err = run(t, "gen", "../../gen/testdata/bad")
	if err == nil || !strings.Contains(err.Error(), "problem(s) in kernel code; nothing was written") {
		t.Fatalf("gocu gen on bad kernels: %v", err)
	}
	for _, want := range []string{"bad.go:11:3: a map is not supported in a kernel", "bad.go:13:3: defer is not supported in a kernel"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	// A directory that does not exist: one line, no "problems in kernel
	// code".
	out, err = run(t, "gen", "./no/such/package")
	if err == nil || out != "" || strings.Contains(err.Error(), "\n") ||
		!strings.HasPrefix(err.Error(), "gocu gen: ./no/such/package: no such directory") {
		t.Errorf("gocu gen of a missing directory: %v\n%s", err, out)
	}
	// A package without kernels says so.
	out, err = run(t, "gen", "../../meta")
	if err != nil || out != "gocu gen: found no kernels (functions marked //gocu:kernel) in github.com/gocu-dev/gocu/meta\n" {
		t.Errorf("gocu gen of a package without kernels: %v\n%q", err, out)
	}
	// Flags as the go command takes them.
	for _, args := range [][]string{{"gen", "-tags", "gpu", "../../gen/testdata/kernels/gray"}, {"gen", "--tags=gpu", "../../gen/testdata/kernels/gray"}} {
		if out, err := run(t, args...); err != nil || out != "" {
			t.Errorf("gocu %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	if _, err := run(t, "gen", "../../gen/testdata/kernels/gray", "-tags", "gpu"); err == nil || !strings.Contains(err.Error(), "put flags first") {
		t.Errorf("a flag after the packages: %v", err)
	}
	if out, err := run(t, "gen", "--help"); err != nil || !strings.Contains(out, "gocu gen -tags gpu ./...") {
		t.Errorf("gocu gen --help: %v\n%s", err, out)
	}
}

// TestGenOutsideModule checks that gocu gen outside a Go module says so
// in one line.
func TestGenOutsideModule(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go command to load packages with")
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "k.go"), []byte("package k\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Chdir(dir)
	t.Setenv("GOFLAGS", "")
	t.Setenv("GO111MODULE", "")
	_, err := run(t, "gen")
	want := "gocu gen: not inside a Go module: there is no go.mod in " + dir
	if err == nil || !strings.HasPrefix(err.Error(), want) || strings.Contains(err.Error(), "\n") {
		t.Errorf("gocu gen outside a module: %v, want one line starting %q", err, want)
	}
}
