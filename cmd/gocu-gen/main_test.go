package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestCheck checks -check on an up-to-date package and on one whose
// generated file is out of date, and the usage errors.
func TestCheck(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go command")
	}
	var out, errb bytes.Buffer
	if rc := run([]string{"-check", "../../gen/testdata/kernels/gray"}, &out, &errb); rc != 0 || out.Len()+errb.Len() > 0 {
		t.Fatalf("-check of an up-to-date package: %d\n%s%s", rc, &out, &errb)
	}
	// A copy inside the module whose kernel file gained a kernel.
	dir, err := os.MkdirTemp("../../gen/testdata", "stale")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	for _, name := range []string{"gray.go", "zz_gocu_gray.go"} {
		src, err := os.ReadFile(filepath.Join("../../gen/testdata/kernels/gray", name))
		if err != nil {
			t.Fatal(err)
		}
		if name == "gray.go" {
			src = append(src, "\n//gocu:kernel\nfunc Zero(t *kernel.Thread, x []float32) { x[t.Index()] = 0 }\n"...)
		}
		if err := os.WriteFile(filepath.Join(dir, name), src, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	out.Reset()
	errb.Reset()
	rc := run([]string{"--check", dir}, &out, &errb)
	if want := "zz_gocu_gray.go out of date: the kernels changed since gocu gen: run go generate"; rc != 1 || !strings.Contains(errb.String(), want) {
		t.Errorf("-check of a stale package: %d\n%s%s\nwant %q", rc, &out, &errb, want)
	}
	if _, err := os.Stat(filepath.Join(dir, "zz_gocu_gray.go")); err != nil {
		t.Fatal(err)
	}
	if rc := run([]string{dir, "-cu"}, &out, &errb); rc != 2 || !strings.Contains(errb.String(), "put flags first") {
		t.Errorf("a flag after the packages: %d\n%s", rc, &errb)
	}
	out.Reset()
	if rc := run([]string{"-help"}, &out, &errb); rc != 0 || !strings.Contains(out.String(), "//go:generate go tool gocu-gen") {
		t.Errorf("-help: %d\n%s", rc, &out)
	}
}
