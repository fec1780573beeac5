package dist_test

// Tests on GPUs with the real libnccl; they skip, saying why, without a
// GPU or NCCL, and those of several ranks with fewer than two GPUs.
//
//	go test ./dist -run GPU -v
//	go test ./dist -run '^$' -bench GPU          (2 GPUs or more)

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gocu-dev/gocu"
	"github.com/gocu-dev/gocu/array"
	"github.com/gocu-dev/gocu/cuda"
	"github.com/gocu-dev/gocu/dist"
	"github.com/gocu-dev/gocu/internal/multigpu"
)

// gpus returns every GPU as a gocu device, or skips.
func gpus(t testing.TB) []*gocu.Device { return multigpu.Devices(t) }

// One rank on one GPU: every collective leaves the arrays as they are, and
// is ordered on the device's stream with the array operations around it.
func TestGPUOneRank(t *testing.T) {
	dev := gpus(t)[0]
	c, err := dist.New(dev)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if c.Backend() != "nccl" || len(c.NCCL()) != 1 {
		t.Fatalf("%v", c)
	}
	m := array.On(dev)
	x := m.NewRNG(3).Normal(array.Float32, 0, 1, 1000, 257).Copy()
	want, err := x.Float32s()
	if err != nil {
		t.Fatal(err)
	}
	y := x.Mul(2) // pending: the all-reduce evaluates it first
	for _, op := range []dist.Op{dist.Sum, dist.Avg, dist.Max, dist.Min, dist.Prod} {
		if err := c.AllReduce(op, y); err != nil {
			t.Fatal(err)
		}
	}
	if err := c.Broadcast(0, y); err != nil {
		t.Fatal(err)
	}
	z := y.Add(1) // queued after the collectives, no host wait between
	got, err := z.Float32s()
	if err != nil {
		t.Fatal(err)
	}
	for i := range got {
		if got[i] != 2*want[i]+1 {
			t.Fatalf("element %d: %v, want %v", i, got[i], 2*want[i]+1)
		}
	}
	for _, dt := range []array.DType{array.Float64, array.BFloat16, array.Float16, array.Int64, array.Int32, array.Uint8, array.Int8} {
		a := m.Arange(array.Float32, 0, 100).AsType(dt).Copy()
		before, _ := a.AsType(array.Float64).Float64s()
		if err := c.AllReduce(dist.Avg, a); err != nil {
			t.Fatalf("%v: %v", dt, err)
		}
		if after, err := a.AsType(array.Float64).Float64s(); err != nil || !slices.Equal(after, before) {
			t.Fatalf("%v: one-rank Avg changed the array (%v)", dt, err)
		}
	}
}

// Every GPU of the host, from one process: the reductions against the
// exact reference, several in one Group.
func TestGPUAllDevices(t *testing.T) {
	devs := gpus(t)
	if len(devs) < 2 {
		t.Skipf("%d GPU: needs 2 or more", len(devs))
	}
	c, err := dist.New(devs...)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	for _, dt := range []array.DType{array.Float32, array.Float64, array.BFloat16, array.Int32, array.Int64} {
		for _, op := range []dist.Op{dist.Sum, dist.Avg, dist.Max, dist.Min} {
			xs := makeArrays(t, devs, dt, 3, 1001)
			ys := makeArrays(t, devs, dt, 7)
			err := c.Group(func() error {
				if err := c.AllReduce(op, xs...); err != nil {
					return err
				}
				return c.AllReduce(op, ys...)
			})
			if err != nil {
				t.Fatalf("%v %v: %v", dt, op, err)
			}
			integer := dt == array.Int32 || dt == array.Int64
			w := want(op, len(devs), 3*1001, integer)
			tol := 0.0
			if op == dist.Avg && !integer {
				tol = 1e-6
				if dt == array.BFloat16 {
					tol = 1.0 / 64
				}
			}
			for r := range devs {
				if got := values(t, xs[r]); !closeTo(got, w, tol) {
					t.Fatalf("%v %v rank %d: %v, want %v", dt, op, r, got[:6], w[:6])
				}
				if got := values(t, ys[r]); !closeTo(got, w[:7], tol) {
					t.Fatalf("%v %v rank %d (second array): %v", dt, op, r, got)
				}
			}
		}
	}
	xs := makeArrays(t, devs, array.Float32, 4096)
	if err := c.Broadcast(len(devs)-1, xs...); err != nil {
		t.Fatal(err)
	}
	for r := range devs {
		if got := values(t, xs[r]); !slices.Equal(got, rankData(len(devs)-1, 4096)) {
			t.Fatalf("broadcast rank %d", r)
		}
	}
}

// ReduceScatter and AllGather on every GPU from one process.
func TestGPUReduceScatterAllGather(t *testing.T) {
	devs := gpus(t)
	if len(devs) < 2 {
		t.Skipf("%d GPU: needs 2 or more", len(devs))
	}
	c, err := dist.New(devs...)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	for _, dt := range []array.DType{array.Float32, array.Float64, array.BFloat16, array.Int32} {
		for _, op := range []dist.Op{dist.Sum, dist.Avg, dist.Max} {
			if err := checkScatterGather(c, dt, op, 1001); err != nil {
				t.Error(err)
			}
		}
	}
}

// One process per GPU (all of them; one with one GPU), through NCCL.
func TestGPUProcesses(t *testing.T) {
	devs := gpus(t)
	names := make([]string, len(devs))
	for i, d := range devs {
		names[i] = d.ID()
	}
	errs, outs := runRanks(t, gocu.CUDA, names)
	for r := range errs {
		t.Logf("rank %d: %s", r, strings.TrimSpace(outs[r]))
		if errs[r] != nil {
			t.Errorf("rank %d: %v", r, errs[r])
		}
	}
}

// One rank stops calling collectives after the first: the other's
// all-reduce, or the read after it, returns once the watchdog aborted the
// communicator, and the Comm reports ErrTimeout (hangMain checks it).
func TestGPUHungRank(t *testing.T) {
	devs := gpus(t)
	if len(devs) < 2 {
		t.Skipf("%d GPU: needs 2 or more", len(devs))
	}
	runHung(t, gocu.CUDA, []string{devs[0].ID(), devs[1].ID()}, 1)
}

// A rank killed (SIGKILL) after joining, through NCCL: the launcher names
// it and ends the other, which would otherwise wait for it.
func TestGPULaunchKilledRank(t *testing.T) {
	devs := gpus(t)
	if len(devs) < 2 {
		t.Skipf("%d GPU: needs 2 or more", len(devs))
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv(envChild, "1")
	t.Setenv(envDevice, "")
	t.Setenv(envKillRank, "1")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	err = dist.Launch(ctx, exe, []string{"-test.run=^$"}, 2, gocu.CUDA, nil)
	if ctx.Err() != nil {
		t.Fatalf("the launcher waited: %v", err)
	}
	if err == nil || !strings.Contains(err.Error(), "(rank 1 first)") || !strings.Contains(err.Error(), "--- rank 1: signal: killed") {
		t.Fatalf("a killed rank: %v", err)
	}
}

// DDP on every GPU from one process (the buckets reduced on communication
// streams, launched from the hook of the last replica's pass), then one
// process per GPU: gradients equal an all-reduce after the backward pass
// within float rounding (NCCL may add in another order for other sizes).
func TestGPUDDP(t *testing.T) {
	devs := gpus(t)
	if len(devs) < 2 {
		t.Skipf("%d GPU: needs 2 or more", len(devs))
	}
	for _, n := range []int{2, 4} {
		if n > len(devs) {
			t.Logf("%d GPUs: skipping %d ranks", len(devs), n)
			continue
		}
		c, err := dist.New(devs[:n]...)
		if err != nil {
			t.Fatal(err)
		}
		for _, bucket := range []int{0, 100} {
			if err := checkDDP(c, bucket, false, 1e-5); err != nil {
				t.Errorf("%d ranks, BucketBytes %d: %v", n, bucket, err)
			}
		}
		if err := c.Close(); err != nil {
			t.Fatal(err)
		}
	}
	names := make([]string, len(devs))
	for i, d := range devs {
		names[i] = d.ID()
	}
	t.Setenv(envCheck, "ddp")
	errs, outs := runRanks(t, gocu.CUDA, names)
	for r := range errs {
		t.Logf("rank %d: %s", r, strings.TrimSpace(outs[r]))
		if errs[r] != nil {
			t.Errorf("rank %d: %v", r, errs[r])
		}
	}
}

// ZeRO-1 AdamW on 2 and 4 GPUs from one process, then one process per
// GPU: the parameters of ordinary data-parallel AdamW within rounding.
func TestGPUZeRO1(t *testing.T) {
	devs := gpus(t)
	if len(devs) < 2 {
		t.Skipf("%d GPU: needs 2 or more", len(devs))
	}
	for _, n := range []int{2, 4} {
		if n > len(devs) {
			t.Logf("%d GPUs: skipping %d ranks", len(devs), n)
			continue
		}
		c, err := dist.New(devs[:n]...)
		if err != nil {
			t.Fatal(err)
		}
		if err := checkZeRO(c, 4, 1e-5); err != nil {
			t.Errorf("%d ranks: %v", n, err)
		}
		if err := checkZeROClip(c, 4, 1e-5, 0.5); err != nil {
			t.Errorf("%d ranks, clipped: %v", n, err)
		}
		if err := c.Close(); err != nil {
			t.Fatal(err)
		}
	}
	names := make([]string, len(devs))
	for i, d := range devs {
		names[i] = d.ID()
	}
	t.Setenv(envCheck, "zero")
	errs, outs := runRanks(t, gocu.CUDA, names)
	for r := range errs {
		t.Logf("rank %d: %s", r, strings.TrimSpace(outs[r]))
		if errs[r] != nil {
			t.Errorf("rank %d: %v", r, errs[r])
		}
	}
}

// BenchmarkGPUAllReduce is the all-reduce of float32 arrays across every
// GPU from one process, through dist (the array layer over nccl), from 8
// bytes to 1 GiB, timed with CUDA events on each device's stream: the
// median of the slowest rank, algbw = bytes/time and busbw =
// algbw·2(n-1)/n, as nccl-tests reports them (its -o sum, -d float, in
// place). It needs 2 GPUs or more; BenchmarkAllReduce in package nccl is
// the same on raw device memory.
func BenchmarkGPUAllReduce(b *testing.B) {
	devs := gpus(b)
	if len(devs) < 2 {
		b.Skipf("%d GPU: needs 2 or more", len(devs))
	}
	c, err := dist.New(devs...)
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	nr := len(devs)
	const maxBytes = 1 << 30
	full := make([]*array.Array, nr)
	start := make([]*cuda.Event, nr)
	end := make([]*cuda.Event, nr)
	for r, d := range devs {
		full[r] = array.On(d).Ones(array.Float32, maxBytes/4).Copy()
		if start[r], err = d.CUDA().NewEvent(cuda.EventDefault); err != nil {
			b.Fatal(err)
		}
		if end[r], err = d.CUDA().NewEvent(cuda.EventDefault); err != nil {
			b.Fatal(err)
		}
	}
	defer func() {
		for r := range devs {
			_ = devs[r].Synchronize()
			full[r].Close()
			start[r].Close()
			end[r].Close()
		}
	}()
	sizes := []int{8}
	for s := 16; s <= maxBytes; s *= 4 {
		sizes = append(sizes, s)
	}
	for _, size := range sizes {
		xs := make([]*array.Array, nr)
		for r := range devs {
			xs[r] = full[r].Slice(array.S(0, size/4))
		}
		b.Run(byteName(size), func(b *testing.B) {
			for range 5 {
				if err := c.AllReduce(dist.Sum, xs...); err != nil {
					b.Fatal(err)
				}
			}
			var times []float64
			for b.Loop() {
				for r, d := range devs {
					if err := start[r].Record(d.Stream().CUDA()); err != nil {
						b.Fatal(err)
					}
				}
				if err := c.AllReduce(dist.Sum, xs...); err != nil {
					b.Fatal(err)
				}
				slowest := 0.0
				for r, d := range devs {
					if err := end[r].Record(d.Stream().CUDA()); err != nil {
						b.Fatal(err)
					}
				}
				for r := range devs {
					if err := end[r].Synchronize(); err != nil {
						b.Fatal(err)
					}
					el, err := cuda.Elapsed(start[r], end[r])
					if err != nil {
						b.Fatal(err)
					}
					slowest = max(slowest, el.Seconds())
				}
				times = append(times, slowest)
			}
			slices.Sort(times)
			med := times[len(times)/2]
			algbw := float64(size) / med / 1e9
			b.ReportMetric(med*1e6, "us/allreduce")
			b.ReportMetric(algbw, "algGB/s")
			b.ReportMetric(algbw*2*float64(nr-1)/float64(nr), "busGB/s")
			b.ReportMetric(float64(nr), "ranks")
		})
	}
}

func byteName(n int) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%dGiB", n>>30)
	case n >= 1<<20:
		return fmt.Sprintf("%dMiB", n>>20)
	case n >= 1<<10:
		return fmt.Sprintf("%dKiB", n>>10)
	}
	return fmt.Sprintf("%dB", n)
}
