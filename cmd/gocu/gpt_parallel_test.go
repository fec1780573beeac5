package main

import (
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/gocu-dev/gocu/internal/multigpu"
)

// gptCorpus packs the Go files of package nn, which every checkout has
// (the GPU machines have no go command for GOROOT's).
func gptCorpus(t *testing.T) string {
	t.Helper()
	data := filepath.Join(t.TempDir(), "nn.tok")
	if out, err := run(t, "gpt", "prepare", "--src", filepath.Join("..", "..", "nn"), "--out", data, "--val", "0.3"); err != nil {
		t.Fatalf("gocu gpt prepare: %v\n%s", err, out)
	}
	return data
}

// lossOf returns the validation loss of gocu gpt train's last line.
func lossOf(t *testing.T, out string) float64 {
	t.Helper()
	line := lineWith(out, fmt.Sprintf("%d steps, ", 12))
	_, after, ok := strings.Cut(line, "validation loss ")
	v, err := strconv.ParseFloat(strings.TrimSpace(after), 64)
	if !ok || err != nil {
		t.Fatalf("no validation loss in:\n%s", out)
	}
	return v
}

// gocu gpt train on two ranks of the CPU, from one process (--devices)
// and from two (--ranks), trains as one device does with the same batch.
func TestGPTDataParallel(t *testing.T) {
	if testing.Short() {
		t.Skip("starts processes")
	}
	data := gptCorpus(t)
	common := []string{"gpt", "train", "--data", data, "--model", "tiny", "--dim", "16", "--heads", "2", "--layers", "1", "--context", "16",
		"--steps", "12", "--batch", "4", "--warmup", "2", "--lr", "1e-2", "--eval", "0", "--eval-batches", "2", "--sample", "0", "--save", ""}
	one, err := run(t, append(common, "--device", "cpu")...)
	if err != nil {
		t.Fatalf("one device: %v\n%s", err, one)
	}
	two, err := run(t, append(common, "--devices", "cpu,cpu")...)
	if err != nil {
		t.Fatalf("--devices cpu,cpu: %v\n%s", err, two)
	}
	if !strings.Contains(two, "on 2 ranks, data-parallel (host; this process: ranks 0-1 on cpu, cpu)") {
		t.Errorf("--devices output:\n%s", two)
	}
	zero, err := run(t, append(common, "--devices", "cpu,cpu", "--zero")...)
	if err != nil || !strings.Contains(zero, "ZeRO-1") {
		t.Fatalf("--zero: %v\n%s", err, zero)
	}
	t.Setenv("GOCU_TEST_MAIN", "1") // the ranks are this binary, running gocu's main
	save := filepath.Join(t.TempDir(), "gpt.safetensors")
	procs, err := run(t, append(common[:len(common)-2], "--save", save, "--ranks", "2", "--device", "cpu")...)
	if err != nil {
		t.Fatalf("--ranks 2: %v\n%s", err, procs)
	}
	if !strings.Contains(procs, "this process: rank 0 on cpu") || strings.Contains(procs, "rank 1 on") || !strings.Contains(procs, "checkpoint "+save) {
		t.Errorf("--ranks output (rank 0's only, with the checkpoint):\n%s", procs)
	}
	l1, l2, lz, lp := lossOf(t, one), lossOf(t, two), lossOf(t, zero), lossOf(t, procs)
	t.Logf("validation loss: one device %.4f, --devices %.4f, --zero %.4f, --ranks %.4f", l1, l2, lz, lp)
	if l1 > 5.3 {
		t.Errorf("the loss did not fall from ln 256 = 5.55: %v", l1)
	}
	for _, l := range []float64{l2, lz, lp} {
		if l < l1-1e-3 || l > l1+1e-3 { // printed to 4 decimals
			t.Errorf("validation losses %v, %v, %v differ from one device's %v", l2, lz, lp, l1)
		}
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--ranks", "2", "--devices", "cpu,cpu"}, "--ranks and --devices: give one"},
		{[]string{"--devices", "cpu,nope"}, "nope"},
		{[]string{"--devices", "cpu", "--device", "cpu"}, "--device and --devices: give one"},
		{[]string{"--devices", "cpu,sim"}, "devices of one kind"},
		{[]string{"--device", "cpu", "--zero"}, "give Devices or Comm"},
		{[]string{"--devices", "cpu,cpu,cpu,cpu,cpu"}, "batch 4 across 5 ranks"},
		{[]string{"--ranks", "-1"}, "--ranks -1"},
		{[]string{"--ranks", "2", "--device", "cuda:1"}, "--device takes cpu or sim"},
	} {
		args := append(append([]string(nil), common...), c.args...)
		if _, err := run(t, args...); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("gocu %s: %v, want an error saying %q", strings.Join(c.args, " "), err, c.want)
		}
	}
}

// On the GPUs: --devices and --ranks over all of them train as one GPU
// does with the same global batch.
func TestGPUGPTDataParallel(t *testing.T) {
	names := multigpu.Names(t)
	n := len(names)
	if n < 2 {
		t.Skipf("%d GPU: needs 2 or more", n)
	}
	data := gptCorpus(t)
	common := []string{"gpt", "train", "--data", data, "--model", "tiny", "--steps", "12", "--batch", strconv.Itoa(8 * n),
		"--warmup", "2", "--eval", "0", "--eval-batches", "2", "--sample", "0", "--save", ""}
	one, err := run(t, append(common, "--device", "cuda:0")...)
	if err != nil {
		t.Fatalf("one GPU: %v\n%s", err, one)
	}
	all, err := run(t, append(common, "--devices", strings.Join(names, ","))...)
	if err != nil {
		t.Fatalf("--devices: %v\n%s", err, all)
	}
	t.Setenv("GOCU_TEST_MAIN", "1")
	procs, err := run(t, append(common, "--ranks", strconv.Itoa(n))...)
	if err != nil {
		t.Fatalf("--ranks %d: %v\n%s", n, err, procs)
	}
	t.Logf("\n%s\n%s\n%s", one, all, procs)
	l1, la, lp := lossOf(t, one), lossOf(t, all), lossOf(t, procs)
	if d := max(abs(la-l1), abs(lp-l1)); d > 2e-3 {
		t.Errorf("validation loss: one GPU %.4f, --devices %.4f, --ranks %.4f", l1, la, lp)
	}
}

func abs(x float64) float64 { return max(x, -x) }
