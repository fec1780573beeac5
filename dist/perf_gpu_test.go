package dist_test

import (
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/gocu-dev/gocu/array"
	"github.com/gocu-dev/gocu/dist"
	"github.com/gocu-dev/gocu/grad"
)

// BenchmarkGPUCollectives is package nccl's BenchmarkNCCLTests through
// dist, on arrays: the same sizes, nccl-tests' timing (20 iterations back
// to back after a warm-up, one synchronisation of every device) and bus
// factors, for AllReduce and Broadcast in place and ReduceScatter and
// AllGather out of place, with the watchdog (an event after every
// collective) on and off. The gap to BenchmarkNCCLTests is the array
// layer's cost.
//
//	go test ./dist -run '^$' -bench GPUCollectives -benchtime 5x
func BenchmarkGPUCollectives(b *testing.B) {
	devs := gpus(b)
	nr := len(devs)
	const maxBytes = 1 << 30
	f := float64(nr)
	for _, watch := range []string{"on", "off"} {
		timeout := "10m"
		if watch == "off" {
			timeout = "off"
		}
		b.Setenv(dist.EnvTimeout, timeout)
		c, err := dist.New(devs...)
		if err != nil {
			b.Fatal(err)
		}
		send := make([]*array.Array, nr)
		recv := make([]*array.Array, nr)
		for r, d := range devs {
			send[r] = array.On(d).Ones(array.Float32, maxBytes/4).Copy()
			recv[r] = array.On(d).Ones(array.Float32, maxBytes/4).Copy()
		}
		colls := []struct {
			name   string
			factor float64
			prep   func(size int) func() error
		}{
			{"all_reduce", 2 * (f - 1) / f, func(size int) func() error {
				xs := part(recv, size/4)
				return func() error { return c.AllReduce(dist.Sum, xs...) }
			}},
			{"reduce_scatter", (f - 1) / f, func(size int) func() error {
				ss, rs := part(send, size/4), part(recv, size/4/nr)
				return func() error { return c.ReduceScatter(dist.Sum, ss, rs) }
			}},
			{"all_gather", (f - 1) / f, func(size int) func() error {
				ss, rs := part(send, size/4/nr), part(recv, size/4)
				return func() error { return c.AllGather(ss, rs) }
			}},
			{"broadcast", 1, func(size int) func() error {
				xs := part(recv, size/4)
				return func() error { return c.Broadcast(0, xs...) }
			}},
		}
		const iters = 20
		for _, co := range colls {
			for size := 8; size <= maxBytes; size *= 2 {
				if size/4%nr != 0 {
					continue
				}
				b.Run(fmt.Sprintf("watchdog=%s/%s/%s", watch, co.name, byteName(size)), func(b *testing.B) {
					one := co.prep(size)
					sync := func() {
						for _, d := range devs {
							if err := d.Synchronize(); err != nil {
								b.Fatal(err)
							}
						}
					}
					for range 5 {
						if err := one(); err != nil {
							b.Fatal(err)
						}
					}
					sync()
					var times []float64
					for b.Loop() {
						start := time.Now()
						for range iters {
							if err := one(); err != nil {
								b.Fatal(err)
							}
						}
						sync()
						times = append(times, time.Since(start).Seconds()/iters)
					}
					slices.Sort(times)
					med := times[len(times)/2]
					alg := float64(size) / med / 1e9
					b.ReportMetric(med*1e6, "us")
					b.ReportMetric(alg, "algGB/s")
					b.ReportMetric(alg*co.factor, "busGB/s")
					b.ReportMetric(float64(nr), "ranks")
				})
			}
		}
		for r := range devs {
			send[r].Close()
			recv[r].Close()
		}
		if err := c.Close(); err != nil {
			b.Fatal(err)
		}
	}
}

// part returns the first n elements of every array, as views.
func part(xs []*array.Array, n int) []*array.Array {
	out := make([]*array.Array, len(xs))
	for i, x := range xs {
		out[i] = x.Slice(array.S(0, n))
	}
	return out
}

// BenchmarkGPUDDP is one data-parallel step of an MLP of 8 layers of
// 4096×4096 float32 weights (512 MiB of gradients) on every GPU from one
// process, batch 256 per GPU: the backward passes then an all-reduce of
// every gradient in one Group ("after"), against DDP's buckets reduced
// during the passes ("ddp", 25 MiB buckets). The difference is the
// communication DDP hides.
//
//	go test ./dist -run '^$' -bench GPUDDP -benchtime 10x
func BenchmarkGPUDDP(b *testing.B) {
	devs := gpus(b)
	const layers, width, batch = 8, 4096, 256
	type model struct {
		ws []*grad.Var
		x  *grad.Var
	}
	models := make([]model, len(devs))
	reps := make([][]*grad.Var, len(devs))
	for i, d := range devs {
		r := array.On(d).NewRNG(1)
		for range layers {
			models[i].ws = append(models[i].ws, grad.Param(r.Normal(array.Float32, 0, 1.0/64, width, width).Copy()))
		}
		models[i].x = grad.Const(r.Normal(array.Float32, 0, 1, batch, width).Copy())
		reps[i] = models[i].ws
	}
	c, err := dist.New(devs...)
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	backward := func() error {
		errs := make([]error, len(devs))
		var wg sync.WaitGroup
		for i, m := range models {
			wg.Go(func() {
				h := m.x
				for _, w := range m.ws {
					h = h.MatMul(w).Tanh()
				}
				errs[i] = h.Square().Mean().Backward()
			})
		}
		wg.Wait()
		return errors.Join(errs...)
	}
	zero := func() {
		for _, m := range models {
			for _, w := range m.ws {
				if g := w.Grad(); g != nil {
					g.Close()
				}
				w.ZeroGrad()
			}
		}
	}
	syncAll := func() {
		for _, d := range devs {
			if err := d.Synchronize(); err != nil {
				b.Fatal(err)
			}
		}
	}
	after := func() error {
		if err := backward(); err != nil {
			return err
		}
		return c.Group(func() error {
			for j := range layers {
				gs := make([]*array.Array, len(devs))
				for i, m := range models {
					gs[i] = m.ws[j].Grad()
				}
				if err := c.AllReduce(dist.Avg, gs...); err != nil {
					return err
				}
			}
			return nil
		})
	}
	run := func(name string, step func() error) {
		b.Run(name, func(b *testing.B) {
			for range 2 {
				if err := step(); err != nil {
					b.Fatal(err)
				}
				zero()
			}
			syncAll()
			var times []float64
			for b.Loop() {
				start := time.Now()
				if err := step(); err != nil {
					b.Fatal(err)
				}
				syncAll()
				times = append(times, time.Since(start).Seconds())
				zero()
			}
			slices.Sort(times)
			b.ReportMetric(times[len(times)/2]*1e3, "ms/step")
			b.ReportMetric(float64(len(devs)), "ranks")
		})
	}
	run("after", after)
	// The hooks go on only now: they would reduce during "after" too.
	d, err := dist.NewDDP(c, dist.DDPOptions{}, reps...)
	if err != nil {
		b.Fatal(err)
	}
	defer d.Close()
	run("ddp", func() error {
		if err := backward(); err != nil {
			return err
		}
		return d.Wait()
	})
}
