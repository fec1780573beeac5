package main

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gocu-dev/gocu/datasets/mnist"
)

func TestTrain(t *testing.T) {
	if _, err := mnist.Dir(); errors.Is(err, mnist.ErrNotFound) {
		t.Skip(err)
	}
	dir := t.TempDir()
	plot, save := filepath.Join(dir, "loss.png"), filepath.Join(dir, "mlp.safetensors")
	out, err := run(t, "train", "--device", "cpu", "--max-steps", "60", "--hidden", "64", "--plot", plot, "--save", save)
	if err != nil {
		t.Fatalf("gocu train: %v\n%s", err, out)
	}
	for _, want := range []string{"training 784-64-64-10 on cpu", "epoch 1/5", "images/s", "test accuracy", "loss curve: " + plot} {
		if !strings.Contains(out, want) {
			t.Fatalf("output lacks %q:\n%s", want, out)
		}
	}
	for _, f := range []string{plot, save} {
		if st, err := os.Stat(f); err != nil || st.Size() == 0 {
			t.Fatalf("%s: %v", f, err)
		}
	}
	if _, err := run(t, "train", "--device", "cpu", "--data", dir); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("gocu train --data without the files: %v", err)
	}
	if _, err := run(t, "train", "--device", "nope"); err == nil {
		t.Fatal("gocu train --device nope succeeded")
	}
}
