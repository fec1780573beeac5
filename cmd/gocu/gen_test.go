package main

import (
	"os/exec"
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
	if _, err := run(t, "gen", "./no/such/package"); err == nil {
		t.Error("gocu gen of a missing package succeeded")
	}
}
