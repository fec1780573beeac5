package cuda_test

// Benchmarks on a real GPU (they skip without one). GPU work is timed with
// CUDA events after a warm-up and each benchmark reports the median of its
// rounds through b.ReportMetric; launch overhead is wall-clock time, as the
// peers measure it (bench/anchors/baseline.py).

import (
	"slices"
	"testing"
	"time"

	"github.com/gocu-dev/gocu/cuda"
)

func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	return s[len(s)/2]
}

// BenchmarkLaunch: 10,000 launches of a tiny kernel (p[0] += 1, one
// thread), then one synchronisation; microseconds per launch.
func BenchmarkLaunch(b *testing.B) {
	f := kernel(b, "inc1")
	d := f.Device()
	p, err := d.Alloc(4)
	must(b, err)
	defer p.Free()
	must(b, p.MemsetD32(0))
	cfg := cuda.Config{Grid: cuda.Dim3{X: 1}, Block: cuda.Dim3{X: 1}}
	launches := 0
	for range 1000 { // warm-up
		must(b, f.Launch(cfg, p))
		launches++
	}
	must(b, d.Synchronize())
	var us []float64
	b.ReportAllocs()
	for b.Loop() {
		t0 := time.Now()
		for range 10_000 {
			if err := f.Launch(cfg, p); err != nil {
				b.Fatal(err)
			}
		}
		must(b, d.Synchronize())
		us = append(us, time.Since(t0).Seconds()/10_000*1e6)
		launches += 10_000
	}
	b.ReportMetric(median(us), "us/launch")
	got := make([]float32, 1)
	must(b, cuda.CopyDtoH(got, p))
	if int(got[0]) != launches {
		b.Fatalf("the kernel ran %v times, want %d", got[0], launches)
	}
}

// BenchmarkGraphReplay: a graph of 100 tiny launches replayed 100 times;
// microseconds per kernel.
func BenchmarkGraphReplay(b *testing.B) {
	f := kernel(b, "inc1")
	d := f.Device()
	s, err := d.NewStream(cuda.StreamNonBlocking)
	must(b, err)
	defer s.Close()
	p, err := d.AllocOn(s, 4)
	must(b, err)
	defer p.Free()
	must(b, p.MemsetD32Async(0, s))
	g, err := s.Capture(cuda.CaptureRelaxed, func(s *cuda.Stream) error {
		for range 100 {
			if err := f.Launch(cuda.Config{Grid: cuda.Dim3{X: 1}, Block: cuda.Dim3{X: 1}, Stream: s}, p); err != nil {
				return err
			}
		}
		return nil
	})
	must(b, err)
	defer g.Close()
	x, err := g.Instantiate()
	must(b, err)
	defer x.Close()
	must(b, x.Upload(s))
	replays := 0
	for range 10 {
		must(b, x.Launch(s))
		replays++
	}
	must(b, s.Synchronize())
	var us []float64
	b.ReportAllocs()
	for b.Loop() {
		t0 := time.Now()
		for range 100 {
			if err := x.Launch(s); err != nil {
				b.Fatal(err)
			}
		}
		must(b, s.Synchronize())
		us = append(us, time.Since(t0).Seconds()/10_000*1e6)
		replays += 100
	}
	b.ReportMetric(median(us), "us/kernel")
	got := make([]float32, 1)
	must(b, cuda.CopyDtoH(got, p))
	if int(got[0]) != 100*replays {
		b.Fatalf("the kernels ran %v times, want %d", got[0], 100*replays)
	}
}

// timed runs op on s between two events and returns the GPU time.
func timed(b *testing.B, s *cuda.Stream, op func() error) time.Duration {
	d := s.Device()
	start, err := d.NewEvent(cuda.EventDefault)
	must(b, err)
	defer start.Close()
	end, err := d.NewEvent(cuda.EventDefault)
	must(b, err)
	defer end.Close()
	must(b, start.Record(s))
	must(b, op())
	must(b, end.Record(s))
	must(b, end.Synchronize())
	dt, err := cuda.Elapsed(start, end)
	must(b, err)
	return dt
}

// bandwidth reports the median GB/s of op moving bytes per run.
func bandwidth(b *testing.B, s *cuda.Stream, bytes float64, op func() error) {
	for range 3 { // warm-up
		timed(b, s, op)
	}
	var gbs []float64
	for b.Loop() {
		gbs = append(gbs, bytes/timed(b, s, op).Seconds()/1e9)
	}
	b.ReportMetric(median(gbs), "GB/s")
}

// BenchmarkCopyDtoD: 2^28 float32 copied device to device; GB/s counts the
// bytes read and written.
func BenchmarkCopyDtoD(b *testing.B) {
	d := device(b)
	const n = 1 << 28
	src, err := cuda.AllocSlice[float32](d, n)
	must(b, err)
	defer src.Free()
	dst, err := cuda.AllocSlice[float32](d, n)
	must(b, err)
	defer dst.Free()
	must(b, src.MemsetD32(0x3f800000))
	s, err := d.NewStream(cuda.StreamNonBlocking)
	must(b, err)
	defer s.Close()
	must(b, d.Synchronize())
	bandwidth(b, s, 2*4*n, func() error { return cuda.CopyDtoDAsync(dst, src, 4*n, s) })
}

const hostBytes = 256 << 20

func hostBench(b *testing.B, pinned, toDevice bool) {
	d := device(b)
	dev, err := d.Alloc(hostBytes)
	must(b, err)
	defer dev.Free()
	must(b, dev.MemsetD8(1))
	s, err := d.NewStream(cuda.StreamNonBlocking)
	must(b, err)
	defer s.Close()
	must(b, d.Synchronize())
	var host []byte
	if pinned {
		h, err := d.AllocHost(hostBytes)
		must(b, err)
		defer h.Free()
		host = h.Bytes()
	} else {
		host = make([]byte, hostBytes)
	}
	for i := range host {
		host[i] = byte(i)
	}
	if toDevice {
		bandwidth(b, s, hostBytes, func() error { return cuda.CopyHtoDAsync(dev, host, s) })
	} else {
		bandwidth(b, s, hostBytes, func() error { return cuda.CopyDtoHAsync(host, dev, s) })
	}
}

// BenchmarkCopyHtoDPageable: 256 MiB from ordinary Go memory.
func BenchmarkCopyHtoDPageable(b *testing.B) { hostBench(b, false, true) }

// BenchmarkCopyHtoDPinned: 256 MiB from pinned memory.
func BenchmarkCopyHtoDPinned(b *testing.B) { hostBench(b, true, true) }

// BenchmarkCopyDtoHPinned: 256 MiB to pinned memory.
func BenchmarkCopyDtoHPinned(b *testing.B) { hostBench(b, true, false) }

// BenchmarkCopyDtoHPageable: 256 MiB to ordinary Go memory.
func BenchmarkCopyDtoHPageable(b *testing.B) { hostBench(b, false, false) }

// BenchmarkDriverCall measures the cost of the thread model on a cheap
// driver call: lock the OS thread, check (and if needed set) the current
// context, cuStreamQuery on an idle stream, unlock.
func BenchmarkDriverCall(b *testing.B) {
	d := device(b)
	s, err := d.NewStream(cuda.StreamNonBlocking)
	must(b, err)
	defer s.Close()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := s.Query(); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkAllocFree: a cached 1 MiB allocation and its free.
func BenchmarkAllocFree(b *testing.B) {
	d := device(b)
	b.ReportAllocs()
	for b.Loop() {
		m, err := d.Alloc(1 << 20)
		if err != nil {
			b.Fatal(err)
		}
		if err := m.Free(); err != nil {
			b.Fatal(err)
		}
	}
}
