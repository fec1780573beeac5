package gpttrain

import (
	"fmt"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/gocu-dev/gocu/array"
	"github.com/gocu-dev/gocu/dist"
	"github.com/gocu-dev/gocu/gpt"
	"github.com/gocu-dev/gocu/internal/gputest"
	"github.com/gocu-dev/gocu/internal/multigpu"
	"github.com/gocu-dev/gocu/nccl"
)

// BenchmarkGPUDataParallel times GPT-2 124M training steps as
// ../shared/anchors/train_gpt.py does (bf16 products, float32 weights,
// clip 1, AdamW; random tokens already on the GPUs) at 16 windows of 1024
// tokens per GPU (GOCU_DP_BATCH changes it), as tools/gpu/train_gpt_ddp.py
// runs torch's DistributedDataParallel: one GPU without dist (gpus=1),
// then 2 and 4 GPUs from one process, the gradients reduced during the
// backward pass (DDP) or the optimiser state sharded (ZeRO-1). Each
// iteration is a step; tokens/s counts all GPUs' tokens, and the scaling
// is against gpus=1.
func BenchmarkGPUDataParallel(b *testing.B) {
	devs := multigpu.Devices(b)
	n := len(devs)
	var err error
	per := 16
	if s := os.Getenv("GOCU_DP_BATCH"); s != "" {
		if per, err = strconv.Atoi(s); err != nil || per < 1 {
			b.Fatalf("GOCU_DP_BATCH=%q: want windows per GPU >= 1", s)
		}
	}
	cfg := Config{Model: gpt.GPT2(), LR: 6e-4, Decay: 0.1, Beta2: 0.95, Clip: 1, BF16: true, Seed: 1}
	T := cfg.Model.Context
	tokens := func(mk *array.Maker, seed uint64) *array.Array {
		return mk.NewRNG(seed).Uniform(array.Float32, 0, float64(cfg.Model.Vocab), per, T).AsType(array.Int64).Copy()
	}
	var base float64 // gpus=1's tokens/s
	report := func(b *testing.B, k int, el time.Duration) {
		tps := float64(b.N*per*k*T) / el.Seconds()
		b.ReportMetric(tps, "tokens/s")
		b.ReportMetric(el.Seconds()*1e3/float64(b.N), "ms/step")
		if k == 1 {
			base = tps
		} else if base > 0 {
			b.ReportMetric(tps/base, "x-1gpu")
		}
	}
	b.Run("gpus=1", func(b *testing.B) {
		mk := array.On(devs[0])
		m, err := gpt.New(mk.NewRNG(cfg.Seed), cfg.Model)
		if err != nil {
			b.Fatal(err)
		}
		m.Compute = array.BFloat16
		opt, err := newAdamW(&cfg, m)
		if err != nil {
			b.Fatal(err)
		}
		x, y := tokens(mk, 2), tokens(mk, 3)
		for range 3 { // compiles the kernels
			if err := Step(m, opt, cfg.Clip, x, y, nil); err != nil {
				b.Fatal(err)
			}
		}
		if err := mk.Sync(); err != nil {
			b.Fatal(err)
		}
		b.ResetTimer()
		start := time.Now()
		for range b.N {
			if err := Step(m, opt, cfg.Clip, x, y, nil); err != nil {
				b.Fatal(err)
			}
		}
		if err := mk.Sync(); err != nil {
			b.Fatal(err)
		}
		report(b, 1, time.Since(start))
	})
	for _, k := range []int{2, 4} {
		for _, zero := range []bool{false, true} {
			name := fmt.Sprintf("gpus=%d", k)
			if zero {
				name += "-zero"
			}
			b.Run(name, func(b *testing.B) {
				if k > n {
					b.Skipf("%d GPUs: needs %d", n, k)
				}
				gputest.Need(b, nccl.Load())
				c, err := dist.New(devs[:k]...)
				if err != nil {
					b.Fatal(err)
				}
				defer c.Close()
				dp := cfg
				dp.Batch, dp.ZeRO = per*k, zero
				r, err := newReplicas(&dp, c, nil)
				if err != nil {
					b.Fatal(err)
				}
				defer r.close()
				xs := make([]*array.Array, k)
				ys := make([]*array.Array, k)
				for i, mk := range r.makers {
					xs[i], ys[i] = tokens(mk, uint64(2+2*i)), tokens(mk, uint64(3+2*i))
				}
				step := func() {
					sc := r.scopes()
					err := r.stepOn(xs, ys)
					closeAll(sc)
					if err != nil {
						b.Fatal(err)
					}
				}
				for range 3 {
					step()
				}
				if err := r.sync(); err != nil {
					b.Fatal(err)
				}
				b.ResetTimer()
				start := time.Now()
				for range b.N {
					step()
				}
				if err := r.sync(); err != nil {
					b.Fatal(err)
				}
				report(b, k, time.Since(start))
			})
		}
	}
}
