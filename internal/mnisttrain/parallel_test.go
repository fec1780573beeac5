package mnisttrain

import (
	"fmt"
	"math"
	"testing"

	"github.com/gocu-dev/gocu"
	"github.com/gocu-dev/gocu/array"
	"github.com/gocu-dev/gocu/dist"
	"github.com/gocu-dev/gocu/internal/gputest"
)

// maxRel is the largest relative difference between two runs' losses.
func maxRel(a, b *Result) float64 {
	m := 0.0
	for i := range a.Losses {
		x, y := a.Losses[i].Loss, b.Losses[i].Loss
		m = max(m, math.Abs(x-y)/max(math.Abs(x), 1e-12))
	}
	return m
}

func sameShape(t *testing.T, a, b *Result) {
	t.Helper()
	if len(a.Losses) != len(b.Losses) || a.Steps != b.Steps || a.Images != b.Images {
		t.Fatalf("%d/%d loss readings, %d/%d steps, %d/%d images", len(a.Losses), len(b.Losses), a.Steps, b.Steps, a.Images, b.Images)
	}
	for i := range a.Losses {
		if a.Losses[i].Step != b.Losses[i].Step {
			t.Fatalf("reading %d at steps %d and %d", i, a.Losses[i].Step, b.Losses[i].Step)
		}
	}
}

// With one rank, data-parallel training computes what the plain trainer
// computes, bit for bit: the all-reduce and the broadcast of one rank
// leave the arrays as they are. On the CPU the rank goes through the host
// backend, in this process (Devices) and through a hub (Comm from Join).
func TestParallelOneRankIsThePlainTrainer(t *testing.T) {
	needData(t)
	cpu := gocu.MustOpen("cpu")
	cfg := Config{MaxSteps: 120, Hidden: 64, Seed: 3, Batch: 50}
	plain := cfg
	plain.Device = cpu
	want, err := Run(plain)
	if err != nil {
		t.Fatal(err)
	}
	par := cfg
	par.Devices = []*gocu.Device{cpu}
	got, err := Run(par)
	if err != nil {
		t.Fatal(err)
	}
	if got.Ranks != 1 {
		t.Fatalf("%d ranks", got.Ranks)
	}
	sameShape(t, want, got)
	if d := maxRel(want, got); d != 0 || got.Accuracy != want.Accuracy {
		t.Fatalf("one rank in process: losses differ by %g, accuracy %v vs %v", d, got.Accuracy, want.Accuracy)
	}
	id, err := dist.NewID(gocu.CPU)
	if err != nil {
		t.Fatal(err)
	}
	c, err := dist.Join(id, 1, 0, cpu)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	par = cfg
	par.Comm = c
	got, err = Run(par)
	if err != nil {
		t.Fatal(err)
	}
	sameShape(t, want, got)
	if d := maxRel(want, got); d != 0 || got.Accuracy != want.Accuracy {
		t.Fatalf("one rank through the hub: losses differ by %g, accuracy %v vs %v", d, got.Accuracy, want.Accuracy)
	}
}

// Several ranks train as one device with the whole batch does, up to
// float rounding: equal shares (Avg), unequal ones (weighted Sum), and
// ranks with no rows at all (a batch smaller than the ranks).
func TestParallelMatchesOneDevice(t *testing.T) {
	needData(t)
	cpu, sim := gocu.MustOpen("cpu"), gocu.MustOpen("sim")
	for _, tc := range []struct {
		devs       []*gocu.Device
		batch, max int
	}{
		{[]*gocu.Device{cpu, cpu}, 64, 100},
		{[]*gocu.Device{cpu, sim, cpu}, 64, 100}, // 22, 21, 21 rows
		{[]*gocu.Device{cpu, cpu, cpu}, 2, 40},   // one rank without rows
	} {
		t.Run(fmt.Sprintf("%dx%d", len(tc.devs), tc.batch), func(t *testing.T) {
			cfg := Config{MaxSteps: tc.max, Hidden: 64, Seed: 5, Batch: tc.batch, Constant: true}
			one := cfg
			one.Device = cpu
			want, err := Run(one)
			if err != nil {
				t.Fatal(err)
			}
			cfg.Devices = tc.devs
			got, err := Run(cfg)
			if err != nil {
				t.Fatal(err)
			}
			sameShape(t, want, got)
			d := maxRel(want, got)
			t.Logf("%d ranks, batch %d: losses differ by at most %.2g relative; accuracy %.4f vs %.4f", len(tc.devs), tc.batch, d, got.Accuracy, want.Accuracy)
			if d > 2e-3 || math.Abs(got.Accuracy-want.Accuracy) > 0.005 {
				t.Fatalf("losses %v\nwant   %v", got.Losses, want.Losses)
			}
		})
	}
}

// The replicas stay equal: after training, every rank's parameters are
// rank 0's, bit for bit.
func TestParallelReplicasStayEqual(t *testing.T) {
	cpu := gocu.MustOpen("cpu")
	c, err := dist.New(cpu, cpu, cpu)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	p, err := NewParallel(c, 1, 32, 1e-3)
	if err != nil {
		t.Fatal(err)
	}
	x, y := randomBatch(array.CPU(), 30)
	for range 5 {
		var xs, ys []*array.Array
		for k := range 3 {
			lo, hi := dist.Split(30, 3, k)
			xs, ys = append(xs, x.Slice(array.S(lo, hi))), append(ys, y.Slice(array.S(lo, hi)))
		}
		if err := p.Step(xs, ys, 30); err != nil {
			t.Fatal(err)
		}
	}
	for j := range p.Replicas[0].Opt.Params() {
		ref, _ := p.Replicas[0].Opt.Params()[j].Value().Float32s()
		for k := 1; k < 3; k++ {
			got, _ := p.Replicas[k].Opt.Params()[j].Value().Float32s()
			for i := range ref {
				if got[i] != ref[i] {
					t.Fatalf("parameter %d of replica %d differs at %d: %v vs %v", j, k, i, got[i], ref[i])
				}
			}
		}
	}
	if s, err := p.LossSum(); err != nil || !(s > 0) {
		t.Fatalf("loss sum %v %v", s, err)
	}
	// A share of the wrong size is refused.
	if err := p.Step([]*array.Array{x, x, x}, []*array.Array{y, y, y}, 30); err == nil {
		t.Fatal("shares of 30 rows each for a batch of 30 were taken")
	}
}

// On the GPU: one rank through NCCL is the plain trainer (same losses);
// with 2 GPUs or more, the batch split across them trains as one GPU.
func TestGPUParallel(t *testing.T) {
	needData(t)
	gputest.Need(t, gocu.GPUUsable())
	gpu0, err := gocu.Open("cuda:0")
	if err != nil {
		t.Fatal(err)
	}
	cfg := Config{MaxSteps: 150, Hidden: 256, Seed: 4, Batch: 128, Constant: true}
	one := cfg
	one.Device = gpu0
	want, err := Run(one)
	if err != nil {
		t.Fatal(err)
	}
	par := cfg
	par.Devices = []*gocu.Device{gpu0}
	got, err := Run(par)
	if err != nil {
		t.Skipf("one NCCL rank on cuda:0: %v", err) // no NCCL
	}
	sameShape(t, want, got)
	d := maxRel(want, got)
	t.Logf("one rank through NCCL vs the plain trainer: losses differ by %g (bit-identical: %v), accuracy %.4f vs %.4f", d, d == 0, got.Accuracy, want.Accuracy)
	if d > 1e-5 || math.Abs(got.Accuracy-want.Accuracy) > 0.002 {
		t.Fatalf("losses %v\nwant   %v", got.Losses, want.Losses)
	}
	var gpus []*gocu.Device
	for i := 0; ; i++ {
		d, err := gocu.Open(fmt.Sprintf("cuda:%d", i))
		if err != nil {
			break
		}
		gpus = append(gpus, d)
	}
	if len(gpus) < 2 {
		t.Logf("%d GPU: the multi-GPU half needs 2 or more", len(gpus))
		return
	}
	par.Devices = gpus
	got, err = Run(par)
	if err != nil {
		t.Fatal(err)
	}
	sameShape(t, want, got)
	d = maxRel(want, got)
	t.Logf("%d GPUs vs one: losses differ by %.2g relative; accuracy %.4f vs %.4f", len(gpus), d, got.Accuracy, want.Accuracy)
	if d > 2e-3 || math.Abs(got.Accuracy-want.Accuracy) > 0.005 {
		t.Fatalf("losses %v\nwant   %v", got.Losses, want.Losses)
	}
}
