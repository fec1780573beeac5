package mnisttrain

import (
	"fmt"
	"strings"
	"testing"

	"github.com/gocu-dev/gocu"
	"github.com/gocu-dev/gocu/array"
	"github.com/gocu-dev/gocu/dist"
	"github.com/gocu-dev/gocu/internal/gputest"
)

// The training figures of issue 12, against ../shared/anchors/train_mlp.py
// (torch on the same GPU): one step of 784-512-512-10 with Adam at batch
// 64 and 1024, eager and replayed as a CUDA graph, and one epoch of 60,000
// samples at batch 64, on random data already on the device (as the
// anchor). GPU benchmarks skip without a GPU.
//
//	go test -run XXX -bench 'MLP' ./internal/mnisttrain

func gpuOnly(b *testing.B) *array.Maker {
	gputest.Need(b, gocu.GPUUsable())
	g, err := array.GPU(0)
	if err != nil {
		b.Fatal(err)
	}
	return g
}

// randomBatch is the anchor's data: normal images, uniform labels.
func randomBatch(d *array.Maker, n int) (x, y *array.Array) {
	r := d.NewRNG(7)
	return r.Normal(array.Float32, 0, 1, n, 784), r.Uniform(array.Float32, 0, 10, n).AsType(array.Int64).Eval()
}

func BenchmarkMLPStep(b *testing.B) {
	for _, dn := range []string{"cpu", "gpu"} {
		for _, batch := range []int{64, 1024} {
			for _, mode := range []string{"eager", "graph", "eager-unfused-adam", "eager-bf16", "graph-bf16"} {
				b.Run(fmt.Sprintf("%s/b%d/%s", dn, batch, mode), func(b *testing.B) {
					d := array.CPU()
					if dn == "gpu" {
						d = gpuOnly(b)
					} else if mode != "eager" || batch != 64 {
						b.Skip("the CPU runs the eager step at batch 64 (a graph is the step there)")
					}
					t := NewTrainer(d, 1, 512, 1e-3)
					t.Track = false
					t.Opt.Unfused = mode == "eager-unfused-adam"
					if strings.HasSuffix(mode, "-bf16") {
						t.SetCompute(array.BFloat16)
					}
					x, y := randomBatch(d, batch)
					step := func() error { return t.Step(x, y) }
					if strings.HasPrefix(mode, "graph") {
						if err := t.Capture(x, y); err != nil {
							b.Fatal(err)
						}
						defer t.Close()
						step = t.Replay
					}
					for range 20 {
						if err := step(); err != nil {
							b.Fatal(err)
						}
					}
					if err := d.Sync(); err != nil {
						b.Fatal(err)
					}
					b.ResetTimer()
					for range b.N {
						if err := step(); err != nil {
							b.Fatal(err)
						}
					}
					if err := d.Sync(); err != nil {
						b.Fatal(err)
					}
					b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N), "us/step")
				})
			}
		}
	}
}

// BenchmarkMLPEpoch is one pass over 60,000 samples at batch 64 (the last
// batch of 32 included), the data on the device.
func BenchmarkMLPEpoch(b *testing.B) {
	const n, batch = 60000, 64
	for _, dn := range []string{"cpu", "gpu"} {
		for _, mode := range []string{"eager", "graph"} {
			b.Run(dn+"/b64/"+mode, func(b *testing.B) {
				d := array.CPU()
				if dn == "gpu" {
					d = gpuOnly(b)
				} else if mode == "graph" {
					b.Skip("on the CPU a graph is the step")
				}
				t := NewTrainer(d, 1, 512, 1e-3)
				t.Track = false
				x, y := randomBatch(d, n)
				if mode == "graph" {
					if err := t.Capture(x.Slice(array.S(0, batch)), y.Slice(array.S(0, batch))); err != nil {
						b.Fatal(err)
					}
					defer t.Close()
				}
				epoch := func() error {
					for i := 0; i < n; i += batch {
						j := min(i+batch, n)
						xb, yb := x.Slice(array.S(i, j)), y.Slice(array.S(i, j))
						var err error
						if mode == "graph" && j-i == batch {
							err = t.StepGraph(xb, yb)
						} else {
							err = t.Step(xb, yb)
						}
						if err != nil {
							return err
						}
					}
					return d.Sync()
				}
				if dn == "gpu" {
					if err := epoch(); err != nil { // warm-up
						b.Fatal(err)
					}
				}
				b.ResetTimer()
				for range b.N {
					if err := epoch(); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(b.Elapsed().Seconds()/float64(b.N), "s/epoch")
			})
		}
	}
}

// BenchmarkAdam is the optimiser step alone for the MLP's six parameters:
// the fused update (two launches on a GPU) against array expressions
// (three passes per parameter, 18 launches).
func BenchmarkAdam(b *testing.B) {
	for _, dn := range []string{"cpu", "gpu"} {
		for _, mode := range []string{"fused", "unfused"} {
			b.Run(dn+"/"+mode, func(b *testing.B) {
				d := array.CPU()
				if dn == "gpu" {
					d = gpuOnly(b)
				}
				t := NewTrainer(d, 1, 512, 1e-3)
				t.Track = false
				t.Opt.Unfused = mode == "unfused"
				x, y := randomBatch(d, 64)
				if err := t.Step(x, y); err != nil { // gradients and state
					b.Fatal(err)
				}
				grads := make([]*array.Array, 0, 6)
				for _, p := range t.Opt.Params() {
					grads = append(grads, p.Grad())
				}
				if err := d.Sync(); err != nil {
					b.Fatal(err)
				}
				b.ResetTimer()
				for range b.N {
					for i, p := range t.Opt.Params() {
						p.SetGrad(grads[i])
					}
					if err := t.Opt.Step(); err != nil {
						b.Fatal(err)
					}
				}
				if err := d.Sync(); err != nil {
					b.Fatal(err)
				}
				b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N), "us/step")
			})
		}
	}
}

// BenchmarkGPUParallelEpoch is the data-parallel figure: one pass
// over 60,000 samples at batch 1024 per GPU, on 1 GPU (batch 1024) and on
// every GPU of the host from this process (batch 1024 × GPUs, split), the
// data already on each device, eager steps. The ratio of the two s/epoch
// is the speed-up (target: 1.6x or more on 2 GPUs). It needs 2 GPUs or
// more (and NCCL).
//
//	go test -run XXX -bench GPUParallelEpoch ./internal/mnisttrain
func BenchmarkGPUParallelEpoch(b *testing.B) {
	gpuOnly(b)
	var devs []*gocu.Device
	for i := 0; ; i++ {
		d, err := gocu.Open(fmt.Sprintf("cuda:%d", i))
		if err != nil {
			break
		}
		devs = append(devs, d)
	}
	if len(devs) < 2 {
		b.Skipf("%d GPU: the data-parallel epoch needs 2 or more", len(devs))
	}
	const n, perGPU = 60000, 1024
	for _, k := range []int{1, len(devs)} {
		b.Run(fmt.Sprintf("gpus=%d/b%d", k, perGPU*k), func(b *testing.B) {
			c, err := dist.New(devs[:k]...)
			if err != nil {
				b.Fatal(err)
			}
			defer c.Close()
			p, err := NewParallel(c, 1, 512, 1e-3)
			if err != nil {
				b.Fatal(err)
			}
			xs := make([]*array.Array, k)
			ys := make([]*array.Array, k)
			for r := range k {
				p.Replicas[r].Track = false
				xs[r], ys[r] = randomBatch(array.On(devs[r]), n)
			}
			batch := perGPU * k
			epoch := func() error {
				for i := 0; i < n; i += batch {
					j := min(i+batch, n)
					bx := make([]*array.Array, k)
					by := make([]*array.Array, k)
					for r := range k {
						lo, hi := dist.Split(j-i, k, r)
						bx[r], by[r] = xs[r].Slice(array.S(i+lo, i+hi)), ys[r].Slice(array.S(i+lo, i+hi))
					}
					if err := p.Step(bx, by, j-i); err != nil {
						return err
					}
				}
				return p.Sync()
			}
			if err := epoch(); err != nil { // warm-up: compiles, connects
				b.Fatal(err)
			}
			b.ResetTimer()
			for range b.N {
				if err := epoch(); err != nil {
					b.Fatal(err)
				}
			}
			s := b.Elapsed().Seconds() / float64(b.N)
			b.ReportMetric(s, "s/epoch")
			b.ReportMetric(n/s, "images/s")
		})
	}
}
