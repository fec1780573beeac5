package main

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/gocu-dev/gocu/datasets/mnist"
	"github.com/gocu-dev/gocu/internal/multigpu"
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

// lineWith returns the line of out that starts with prefix.
func lineWith(out, prefix string) string {
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, prefix) {
			return l
		}
	}
	return ""
}

// Data-parallel training on the CPU: two ranks in this process, and two
// processes started by --ranks (this test binary runs as gocu in them),
// train as one: the same test accuracy, and the same as one device up to
// float rounding.
func TestTrainDataParallel(t *testing.T) {
	if _, err := mnist.Dir(); errors.Is(err, mnist.ErrNotFound) {
		t.Skip(err)
	}
	if testing.Short() {
		t.Skip("starts processes")
	}
	common := []string{"train", "--max-steps", "60", "--hidden", "32", "--batch", "64", "--plot", ""}
	one, err := run(t, append(common, "--device", "cpu")...)
	if err != nil {
		t.Fatalf("one device: %v\n%s", err, one)
	}
	two, err := run(t, append(common, "--devices", "cpu,cpu")...)
	if err != nil {
		t.Fatalf("--devices cpu,cpu: %v\n%s", err, two)
	}
	if !strings.Contains(two, "on 2 ranks, data-parallel (host; this process: ranks 0-1 on cpu, cpu), 32 images per rank") {
		t.Errorf("--devices output:\n%s", two)
	}
	t.Setenv("GOCU_TEST_MAIN", "1") // the ranks are this binary, running gocu's main
	save := filepath.Join(t.TempDir(), "mlp.safetensors")
	procs, err := run(t, append(common, "--ranks", "2", "--device", "cpu", "--save", save)...)
	if err != nil {
		t.Fatalf("--ranks 2: %v\n%s", err, procs)
	}
	if !strings.Contains(procs, "this process: rank 0 on cpu") || strings.Contains(procs, "rank 1 on") {
		t.Errorf("--ranks output (rank 0's only):\n%s", procs)
	}
	if st, err := os.Stat(save); err != nil || st.Size() == 0 {
		t.Errorf("rank 0 saved no weights: %v", err)
	}
	acc1, acc2, accP := lineWith(one, "test accuracy"), lineWith(two, "test accuracy"), lineWith(procs, "test accuracy")
	t.Logf("one device: %s\n--devices cpu,cpu: %s\n--ranks 2: %s", acc1, acc2, accP)
	if acc2 == "" || acc2 != accP {
		t.Errorf("two ranks in one process and in two give different results:\n%s\n%s", acc2, accP)
	}
	if acc1 != acc2 {
		t.Logf("(one device differs from two ranks by float rounding)")
	}
	for _, bad := range [][]string{
		{"train", "--ranks", "2", "--devices", "cpu,cpu"},
		{"train", "--ranks", "2", "--device", "cuda:1"},
		{"train", "--devices", "cpu,nope"},
		{"train", "--devices", "cpu", "--device", "cpu"},
	} {
		if _, err := run(t, bad...); err == nil {
			t.Errorf("gocu %v succeeded", bad)
		}
	}
}

// The same on the GPUs (skips without a GPU, NCCL or the data): the plain
// trainer on cuda:0, every GPU from this process, and one process per GPU
// (with one GPU: one rank through NCCL, which must train as the plain
// trainer does).
func TestGPUTrainDataParallel(t *testing.T) {
	names := multigpu.Names(t)
	n := len(names)
	if _, err := mnist.Dir(); errors.Is(err, mnist.ErrNotFound) {
		t.Skip(err)
	}
	common := []string{"train", "--max-steps", "200", "--hidden", "256", "--batch", strconv.Itoa(256 * n), "--plot", ""}
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
	acc := func(out string) float64 {
		var a float64
		fmt.Sscanf(lineWith(out, "test accuracy"), "test accuracy %f%%", &a)
		return a
	}
	a1, a2, a3 := acc(one), acc(all), acc(procs)
	if a1 < 90 || math.Abs(a2-a1) > 0.5 || math.Abs(a3-a1) > 0.5 {
		t.Fatalf("test accuracy %.2f%% (one GPU), %.2f%% (--devices), %.2f%% (--ranks)", a1, a2, a3)
	}
}

// Flags that would train nothing or nonsense, or fail only after training,
// are refused before anything runs, naming the flag; so is data with no
// images.
func TestTrainFlagErrors(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--lr", "nan"}, "--lr NaN"},
		{[]string{"--lr", "inf"}, "--lr +Inf"},
		{[]string{"--lr", "0"}, "--lr 0"},
		{[]string{"--lr", "-1"}, "--lr -1"},
		{[]string{"--batch", "-64"}, "--batch -64"},
		{[]string{"--batch", "0"}, "--batch 0"},
		{[]string{"--hidden", "-5"}, "--hidden -5"},
		{[]string{"--epochs", "0"}, "--epochs 0"},
		{[]string{"--max-steps", "-1"}, "--max-steps -1"},
		{[]string{"--ranks", "-1"}, "--ranks -1"},
		{[]string{"--ranks", "4611686018427387904", "--device", "cpu"}, "want 1 to 65536"},
		{[]string{"--plot", filepath.Join(dir, "loss.txt")}, "--plot: mnisttrain: plot file " + filepath.Join(dir, "loss.txt") + ": want a name ending in .png"},
		{[]string{"--plot", filepath.Join(dir, "nodir", "loss.png")}, "no such file or directory"},
	} {
		args := append([]string{"train", "--device", "cpu", "--data", dir}, c.args...)
		if out, err := run(t, args...); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("gocu %v: %v, want %q\n%s", args, err, c.want, out)
		}
	}
	// A data folder whose files hold no images.
	write := func(name string, magic uint32, n uint32) {
		b := binary.BigEndian.AppendUint32(nil, magic)
		b = binary.BigEndian.AppendUint32(b, n)
		size := int(n)
		if magic == mnist.MagicImages {
			b = binary.BigEndian.AppendUint32(b, 28)
			b = binary.BigEndian.AppendUint32(b, 28)
			size *= 28 * 28
		}
		b = append(b, make([]byte, size)...)
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write(mnist.TrainImages, mnist.MagicImages, 0)
	write(mnist.TrainLabels, mnist.MagicLabels, 0)
	write(mnist.TestImages, mnist.MagicImages, 0)
	write(mnist.TestLabels, mnist.MagicLabels, 0)
	if out, err := run(t, "train", "--device", "cpu", "--data", dir, "--plot", ""); err == nil || !strings.Contains(err.Error(), "0 training and 0 test images") {
		t.Errorf("gocu train on empty data: %v\n%s", err, out)
	}
	// A batch larger than the training set.
	for _, f := range []string{mnist.TrainImages, mnist.TestImages} {
		write(f, mnist.MagicImages, 3)
	}
	for _, f := range []string{mnist.TrainLabels, mnist.TestLabels} {
		write(f, mnist.MagicLabels, 3)
	}
	if out, err := run(t, "train", "--device", "cpu", "--data", dir, "--plot", "", "--batch", "9223372036854775807"); err == nil || !strings.Contains(err.Error(), "batch of 9223372036854775807 images: the training set has 3") {
		t.Errorf("gocu train --batch 2^63-1: %v\n%s", err, out)
	}
}
