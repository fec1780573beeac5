package mnisttrain

import (
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gocu-dev/gocu"
	"github.com/gocu-dev/gocu/array"
	"github.com/gocu-dev/gocu/datasets/mnist"
	"github.com/gocu-dev/gocu/internal/gputest"
	"github.com/gocu-dev/gocu/nn"
)

func needData(t *testing.T) {
	t.Helper()
	if _, err := mnist.Dir(); errors.Is(err, mnist.ErrNotFound) {
		t.Skip(err)
	}
}

// TestShortTraining is the CI run: a few hundred steps of the real model
// on the real data, on the CPU. The loss must fall and the test accuracy
// pass a bound.
func TestShortTraining(t *testing.T) {
	needData(t)
	var out strings.Builder
	dir := t.TempDir()
	res, err := Run(Config{Device: gocu.MustOpen("cpu"), MaxSteps: 300, Seed: 1, Out: &out,
		Plot: filepath.Join(dir, "loss.png"), Save: filepath.Join(dir, "mlp.safetensors")})
	if err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	t.Logf("\n%s", out.String())
	if res.Steps != 300 || res.Images != 300*64 || len(res.Losses) != 6 {
		t.Fatalf("%d steps, %d images, %d loss readings", res.Steps, res.Images, len(res.Losses))
	}
	first, last := res.Losses[0].Loss, res.Losses[len(res.Losses)-1].Loss
	if !(first > 0.5 && last < first/2) {
		t.Fatalf("the loss did not fall: %v", res.Losses)
	}
	if res.Accuracy < 0.93 {
		t.Fatalf("test accuracy %.4f after 300 steps, want at least 0.93", res.Accuracy)
	}
	if st, err := os.Stat(filepath.Join(dir, "loss.png")); err != nil || st.Size() < 1000 {
		t.Fatalf("loss curve: %v", err)
	}
	// The checkpoint restores the accuracy.
	tr := NewTrainer(array.CPU(), 99, 512, 1e-3)
	if _, err := nn.LoadFile(filepath.Join(dir, "mlp.safetensors"), tr.Model); err != nil {
		t.Fatal(err)
	}
	_, test, err := mnist.Load("")
	if err != nil {
		t.Fatal(err)
	}
	cpu := gocu.MustOpen("cpu") // where the trainer is
	x := array.FromSliceOn(cpu, test.Images, test.N, 784)
	y := array.FromSliceOn(cpu, test.Labels).AsType(array.Int64)
	acc, err := tr.Accuracy(x, y)
	if err != nil || acc != res.Accuracy {
		t.Fatalf("accuracy of the loaded weights %v, trained %v (%v)", acc, res.Accuracy, err)
	}
}

// TestGraphModeMatchesEager: with Graph set, a device without CUDA graphs
// runs the step directly, and the result is the same bit for bit; on a GPU
// the replayed graph must train as the eager steps do.
func TestGraphModeMatchesEager(t *testing.T) {
	needData(t)
	devs := []*gocu.Device{gocu.MustOpen("cpu")}
	if gputest.Usable(t, gocu.GPUUsable()) {
		d, err := gocu.Open("cuda")
		if err != nil {
			t.Fatal(err)
		}
		devs = append(devs, d)
	}
	for _, d := range devs {
		var res [2]*Result
		for i, graph := range []bool{false, true} {
			r, err := Run(Config{Device: d, MaxSteps: 120, Hidden: 128, Seed: 2, Graph: graph})
			if err != nil {
				t.Fatal(err)
			}
			res[i] = r
		}
		tol := 0.0
		if d.IsGPU() {
			tol = 1e-4
		}
		for i := range res[0].Losses {
			a, b := res[0].Losses[i].Loss, res[1].Losses[i].Loss
			if diff := a - b; diff > tol*a || -diff > tol*a {
				t.Fatalf("%v: loss %d: eager %v, graph %v", d, i, a, b)
			}
		}
		if diff := res[0].Accuracy - res[1].Accuracy; diff > 0.002 || diff < -0.002 {
			t.Fatalf("%v: accuracy eager %v, graph %v", d, res[0].Accuracy, res[1].Accuracy)
		}
	}
}

func TestMissingData(t *testing.T) {
	_, err := Run(Config{Device: gocu.MustOpen("cpu"), DataDir: t.TempDir()})
	if !errors.Is(err, os.ErrNotExist) || !strings.Contains(err.Error(), mnist.TrainImages) {
		t.Fatalf("Run without data: %v", err)
	}
}

// A Config with negative sizes, a learning rate that is not a finite
// number >= 0, or a plot file it cannot write fails before loading data.
func TestBadConfig(t *testing.T) {
	for _, c := range []struct {
		cfg  Config
		want string
	}{
		{Config{Batch: -64}, "batch -64"},
		{Config{Hidden: -5}, "hidden units -5"},
		{Config{Epochs: -1}, "epochs -1"},
		{Config{LR: math.NaN()}, "learning rate NaN"},
		{Config{LR: math.Inf(1)}, "learning rate +Inf"},
		{Config{LR: -1}, "learning rate -1"},
		{Config{Plot: "loss.txt"}, "plot file loss.txt"},
	} {
		c.cfg.Device, c.cfg.DataDir = gocu.MustOpen("cpu"), t.TempDir()
		if _, err := Run(c.cfg); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v, want %q", c.cfg, err, c.want)
		}
	}
}

// Mixed precision learns too: 150 steps with the products in bfloat16 on
// the CPU, the loss falls and the accuracy passes a bound.
func TestShortTrainingBF16(t *testing.T) {
	needData(t)
	var out strings.Builder
	res, err := Run(Config{Device: gocu.MustOpen("cpu"), MaxSteps: 150, Seed: 2, Out: &out, BF16: true})
	if err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	first, last := res.Losses[0].Loss, res.Losses[len(res.Losses)-1].Loss
	if !(last < first/2) || res.Accuracy < 0.90 {
		t.Fatalf("bfloat16 training: losses %v, accuracy %.4f\n%s", res.Losses, res.Accuracy, out.String())
	}
	t.Logf("bfloat16, 150 steps: loss %.3f -> %.3f, accuracy %.4f", first, last, res.Accuracy)
}
