package nccl_test

import (
	"fmt"
	"math"
	"slices"
	"testing"
	"time"

	"github.com/gocu-dev/gocu/cuda"
	"github.com/gocu-dev/gocu/nccl"
)

// BenchmarkNCCLTests times the collectives as nccl-tests does (its
// all_reduce_perf, reduce_scatter_perf, all_gather_perf and
// broadcast_perf with -g <every GPU> -d float -o sum), so that the figures
// compare one to one: one process drives every GPU, each iteration is one
// Group of the collective on all ranks on non-blocking streams, 20
// iterations back to back after a warm-up, then one synchronisation of
// every stream; the time is the wall-clock time over 20. Sizes are
// nccl-tests' (the bytes of the largest buffer: recv for all-gather, send
// for reduce-scatter), 8 B to 1 GiB by factors of 2, in place and out of
// place. Each of b.N rounds measures the 20 iterations once; the median
// is reported as us, algbw and busbw (GB/s, 1e9), with nccl-tests' bus
// factors: 2(n-1)/n for all-reduce, (n-1)/n for reduce-scatter and
// all-gather, 1 for broadcast.
//
//	go test ./nccl -run '^$' -bench NCCLTests -benchtime 5x
//
// With one GPU it runs too (one rank: copies), for the launch overhead.
func BenchmarkNCCLTests(b *testing.B) {
	devs := gpus(b)
	logVersion(b)
	nr := len(devs)
	comms, err := nccl.InitAll(devs)
	if err != nil {
		b.Fatal(err)
	}
	const maxBytes = 1 << 30
	send := make([]*cuda.Memory, nr)
	recv := make([]*cuda.Memory, nr)
	streams := make([]*cuda.Stream, nr)
	for r, d := range devs {
		if send[r], err = d.Alloc(maxBytes); err != nil {
			b.Fatal(err)
		}
		if recv[r], err = d.Alloc(maxBytes); err != nil {
			b.Fatal(err)
		}
		if err := send[r].MemsetD32(math.Float32bits(1)); err != nil {
			b.Fatal(err)
		}
		if err := recv[r].MemsetD32(math.Float32bits(1)); err != nil {
			b.Fatal(err)
		}
		if streams[r], err = d.NewStream(cuda.StreamNonBlocking); err != nil {
			b.Fatal(err)
		}
	}
	b.Cleanup(func() {
		for r := range devs {
			_ = streams[r].Synchronize()
			_ = comms[r].Destroy()
			_ = streams[r].Close()
			_ = send[r].Free()
			_ = recv[r].Free()
		}
	})
	sync := func() {
		for _, s := range streams {
			if err := s.Synchronize(); err != nil {
				b.Fatal(err)
			}
		}
	}
	view := func(m *cuda.Memory, off, n int) *cuda.Memory {
		v, err := m.View(off, n)
		if err != nil {
			b.Fatal(err)
		}
		return v
	}
	type coll struct {
		name   string
		factor float64
		// prep returns the call of rank r's collective of size bytes
		// (nccl-tests' size), its buffers set up outside the timing.
		prep func(r int, size int, inPlace bool) func() error
	}
	f := float64(nr)
	colls := []coll{
		{"all_reduce", 2 * (f - 1) / f, func(r, size int, in bool) func() error {
			s, d := send[r], recv[r]
			if in {
				s = d
			}
			return func() error { return comms[r].AllReduce(s, d, size/4, nccl.Float32, nccl.Sum, streams[r]) }
		}},
		{"reduce_scatter", (f - 1) / f, func(r, size int, in bool) func() error {
			n := size / 4 / nr
			s, d := send[r], recv[r]
			if in {
				s, d = recv[r], view(recv[r], r*n*4, n*4)
			}
			return func() error { return comms[r].ReduceScatter(s, d, n, nccl.Float32, nccl.Sum, streams[r]) }
		}},
		{"all_gather", (f - 1) / f, func(r, size int, in bool) func() error {
			n := size / 4 / nr
			s, d := send[r], recv[r]
			if in {
				s = view(recv[r], r*n*4, n*4)
			}
			return func() error { return comms[r].AllGather(s, d, n, nccl.Float32, streams[r]) }
		}},
		{"broadcast", 1, func(r, size int, in bool) func() error {
			s, d := send[r], recv[r]
			if in {
				s = d
			}
			return func() error { return comms[r].Broadcast(s, d, size/4, nccl.Float32, 0, streams[r]) }
		}},
	}
	const iters = 20
	for _, c := range colls {
		for _, inPlace := range []bool{false, true} {
			mode := "out"
			if inPlace {
				mode = "in"
			}
			for size := 8; size <= maxBytes; size *= 2 {
				if (c.name == "reduce_scatter" || c.name == "all_gather") && size/4%nr != 0 {
					continue
				}
				b.Run(fmt.Sprintf("%s/%s/%s", c.name, mode, byteSize(size)), func(b *testing.B) {
					calls := make([]func() error, nr)
					for r := range calls {
						calls[r] = c.prep(r, size, inPlace)
					}
					all := func() error {
						for _, call := range calls {
							if err := call(); err != nil {
								return err
							}
						}
						return nil
					}
					one := func() error {
						if nr == 1 {
							return all() // as nccl-tests with one GPU: no group
						}
						return nccl.Group(all)
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
					b.ReportMetric(alg*c.factor, "busGB/s")
					b.ReportMetric(float64(nr), "ranks")
				})
			}
		}
	}
}
