package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestUpToDate fails when internal/demo/zz_gocu_interim.go is not what
// gocu gen's translator makes of examples/kernels today.
func TestUpToDate(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the translator over examples/kernels (go list): not in -short")
	}
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("the translator runs the go command, which is not installed here")
	}
	root, err := moduleRoot()
	if err != nil {
		t.Fatal(err)
	}
	want, err := generate(root)
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(filepath.Join(root, "internal", "demo", outFile))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("internal/demo/%s is stale: run go generate ./internal/demo", outFile)
	}
	for _, k := range Twins {
		if !bytes.Contains(want, []byte("func gocuChecked_"+k+"(")) {
			t.Errorf("no twin of %s", k)
		}
	}
	if !strings.Contains(string(want), `extern "C" __global__ void TiledMatMul(`) {
		t.Error("the CUDA source lacks the TiledMatMul kernel")
	}
}
