package gpttrain

import (
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/gocu-dev/gocu/datasets/gosrc"
	"github.com/gocu-dev/gocu/gpt"
	"github.com/gocu-dev/gocu/internal/multigpu"
)

// syntheticCorpus is Go-like text made from a seed: the GPU machines have
// no go command, whose source tree corpus packs.
func syntheticCorpus(n int) *gosrc.Corpus {
	rng := rand.New(rand.NewPCG(1, 2))
	words := strings.Fields("func var if for return range := { } ( ) err nil x y i n len append make int string byte package import type struct")
	text := func(n int) []byte {
		var b strings.Builder
		for b.Len() < n {
			b.WriteString(words[rng.IntN(len(words))])
			if rng.IntN(8) == 0 {
				b.WriteString("\n\t")
			} else {
				b.WriteByte(' ')
			}
		}
		return []byte(b.String()[:n])
	}
	return &gosrc.Corpus{Train: text(n), Val: text(n / 4), TrainFiles: 1, ValFiles: 1}
}

// TestGPUDataParallel trains on 2 GPUs (and 4 where there are), through
// NCCL from one process, with DDP and with ZeRO-1, and checks one GPU's
// loss curve at the same global batch within float rounding; one NCCL rank
// is the plain trainer.
func TestGPUDataParallel(t *testing.T) {
	devs := multigpu.Devices(t)
	n := len(devs)
	cfg := Config{Device: devs[0], Corpus: syntheticCorpus(1 << 20), Batch: 8, Steps: 12, LR: 1e-3, MinLR: 1e-4,
		Warmup: 3, Decay: 0.1, Beta2: 0.99, Clip: 1, Seed: 3, Report: 1, EvalN: 2,
		Model: gpt.Config{Layers: 2, Heads: 4, Dim: 128, Context: 64, Vocab: 256, Bias: true}}
	one, err := Run(cfg)
	if err != nil {
		t.Fatal(err)
	}
	dp := cfg
	dp.Device, dp.Devices = nil, devs[:1]
	r, err := Run(dp)
	if err != nil {
		t.Fatal(err)
	}
	if err := sameCurve(one, r, 1e-5, 1e-4); err != nil {
		t.Errorf("one NCCL rank: %v", err)
	}
	if n < 2 {
		t.Skipf("%d GPU: the data-parallel runs need 2 or more", n)
	}
	for _, k := range []int{2, 3, 4} {
		if k > n {
			continue
		}
		for _, zero := range []bool{false, true} {
			dp.Devices, dp.ZeRO = devs[:k], zero
			r, err := Run(dp)
			if err != nil {
				t.Fatalf("%d GPUs, ZeRO %v: %v", k, zero, err)
			}
			// Batch 8 on 3 GPUs splits 3, 3, 2.
			if err := sameCurve(one, r, 2e-4, 1e-2); err != nil {
				t.Errorf("%d GPUs, ZeRO %v: %v", k, zero, err)
			}
			t.Logf("%d GPUs, ZeRO %v: final loss %.6f, one GPU %.6f", k, zero, r.Train[len(r.Train)-1].Loss, one.Train[len(one.Train)-1].Loss)
		}
	}
}
