package main

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/gocu-dev/gocu/datasets/gosrc"
	"github.com/gocu-dev/gocu/gpt"
)

func TestGPT(t *testing.T) {
	goroot, err := exec.Command("go", "env", "GOROOT").Output()
	if err != nil {
		t.Skipf("needs the go command for its source tree: %v", err)
	}
	src := filepath.Join(strings.TrimSpace(string(goroot)), "src", "go", "ast")
	dir := t.TempDir()
	data, ckpt, plot := filepath.Join(dir, "go.tok.gz"), filepath.Join(dir, "m.safetensors"), filepath.Join(dir, "loss.png")
	out, err := run(t, "gpt", "prepare", "--src", src, "--out", data, "--val", "0.3")
	if err != nil || !strings.Contains(out, "-> "+data) {
		t.Fatalf("gocu gpt prepare: %v\n%s", err, out)
	}
	if _, err := gosrc.ReadFile(data); err != nil {
		t.Fatal(err)
	}
	out, err = run(t, "gpt", "train", "--data", data, "--model", "tiny", "--dim", "16", "--heads", "2", "--layers", "1", "--context", "16",
		"--device", "cpu", "--steps", "20", "--batch", "4", "--eval", "10", "--eval-batches", "2", "--save", ckpt, "--plot", plot, "--sample", "20")
	if err != nil {
		t.Fatalf("gocu gpt train: %v\n%s", err, out)
	}
	for _, want := range []string{"1 layers, 2 heads, 16 wide, context 16", "step     20/20", "validation loss", "loss curve: " + plot, "sample (temperature 0.8, top-k 40)"} {
		if !strings.Contains(out, want) {
			t.Errorf("gocu gpt train: the output lacks %q:\n%s", want, out)
		}
	}
	m, _, err := gpt.Load(ckpt, nil)
	if err != nil || m.Config.Dim != 16 || m.Config.Vocab != 256 {
		t.Fatalf("the checkpoint: %v %+v", err, m)
	}
	sample := func(seed string) string {
		out, err := run(t, "gpt", "sample", "--ckpt", ckpt, "--device", "cpu", "--prompt", "func (x *T) ", "--tokens", "200", "--temperature", "1.5", "--seed", seed)
		if err != nil {
			t.Fatalf("gocu gpt sample: %v\n%s", err, out)
		}
		if !strings.HasPrefix(out, "func (x *T) ") || !utf8.ValidString(out) {
			t.Fatalf("gocu gpt sample: %q", out)
		}
		return out
	}
	if a, b, c := sample("1"), sample("1"), sample("2"); a != b || a == c {
		t.Errorf("seeds 1, 1 and 2 give %q, %q and %q", a, b, c)
	}
	// Stopping and resuming.
	stopAt := filepath.Join(dir, "stop.safetensors")
	if out, err := run(t, "gpt", "train", "--data", data, "--model", "tiny", "--dim", "16", "--heads", "2", "--layers", "1", "--context", "16",
		"--device", "cpu", "--steps", "6", "--batch", "2", "--stop", "1ns", "--save", stopAt, "--sample", "0"); err != nil || !strings.Contains(out, "continue with --resume "+stopAt) {
		t.Fatalf("--stop: %v\n%s", err, out)
	}
	if out, err := run(t, "gpt", "train", "--data", data, "--resume", stopAt, "--device", "cpu", "--sample", "0"); err != nil || !strings.Contains(out, "resuming at step 1 of 6") || !strings.Contains(out, "step      6/6") || !strings.Contains(out, "checkpoint "+stopAt) {
		t.Errorf("--resume: %v\n%s", err, out)
	}
	// Continuing from the checkpoint.
	if out, err := run(t, "gpt", "train", "--data", data, "--init", ckpt, "--device", "cpu", "--steps", "2", "--batch", "2", "--save", "", "--sample", "0"); err != nil || !strings.Contains(out, "16 wide") {
		t.Errorf("--init: %v\n%s", err, out)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"gpt", "train", "--data", filepath.Join(dir, "none.tok")}, "make it with gocu gpt prepare"},
		{[]string{"gpt", "train", "--data", ckpt}, "not a corpus"},
		{[]string{"gpt", "train", "--data", data, "--model", "gpt3"}, `no preset "gpt3"`},
		{[]string{"gpt", "train", "--data", data, "--model", "tiny", "--heads", "3"}, "not a multiple of the 3 heads"},
		{[]string{"gpt", "train", "--data", data, "--model", "tiny", "--vocab", "100"}, "vocabulary 100"},
		{[]string{"gpt", "train", "--data", data, "--model", "tiny", "--lr", "-1"}, "learning rate -1"},
		{[]string{"gpt", "train", "--data", data, "--model", "tiny", "--peak", "-1"}, "--peak -1"},
		{[]string{"gpt", "train", "--data", data, "--device", "nope"}, "nope"},
		{[]string{"gpt", "train", "--data", data, "--resume", ckpt, "--init", ckpt}, "--resume and --init"},
		{[]string{"gpt", "train", "--data", data, "--model", "tiny", "--stop", "1m", "--save", ""}, "checkpoint file to resume from"},
		{[]string{"gpt", "sample", "--ckpt", data}, "safetensors"},
		{[]string{"gpt", "sample", "--ckpt", ckpt, "--device", "cpu", "--temperature", "-1"}, "temperature -1"},
		{[]string{"gpt", "sample", "--ckpt", ckpt, "--device", "cpu", "--prompt", ""}, "empty prompt"},
		{[]string{"gpt", "prepare", "--val", "1"}, "--val 1"},
		{[]string{"gpt", "prepare", "--src", filepath.Join(dir, "none"), "--out", filepath.Join(dir, "x.tok")}, "no such file"},
		{[]string{"gpt", "frobnicate"}, "unknown command"},
	} {
		_, err := run(t, c.args...)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("gocu %s: %v, want an error saying %q", strings.Join(c.args, " "), err, c.want)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "x.tok")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a failed prepare left its file: %v", err)
	}
}
