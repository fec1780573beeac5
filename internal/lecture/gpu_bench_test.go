package lecture_test

import (
	"fmt"
	"math"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gocu-dev/gocu"
	"github.com/gocu-dev/gocu/cublas"
	"github.com/gocu-dev/gocu/cuda"
	"github.com/gocu-dev/gocu/internal/lecture"
	"github.com/gocu-dev/gocu/meta"
	"github.com/gocu-dev/gocu/nvrtc"
)

// GPU benchmarks: every kernel through its generated launcher, timed with
// CUDA events, reported as the median of the iterations. The peers they
// are compared with are measured in the same binary (device-to-device copy
// for bandwidth, cuBLAS for SGEMM), so the ratios come from one run:
//
//	go test -c ./internal/lecture && ./lecture.test -test.run '^$' -test.bench GPU

// gpuTimer times GPU work with a pair of events on the device's default
// stream, where launches that name no stream go.
type gpuTimer struct {
	start, end *cuda.Event
	s          *cuda.Stream
}

func newGPUTimer(b testing.TB, d *gocu.Device) *gpuTimer {
	b.Helper()
	s, err := d.CUDA().NewEvent(cuda.EventDefault)
	must(b, err)
	e, err := d.CUDA().NewEvent(cuda.EventDefault)
	must(b, err)
	b.Cleanup(func() { s.Close(); e.Close() })
	return &gpuTimer{s, e, d.Stream().CUDA()}
}

// once returns the GPU time of the work f queues on the default stream.
func (g *gpuTimer) once(b testing.TB, f func() error) time.Duration {
	b.Helper()
	must(b, g.start.Record(g.s))
	must(b, f())
	must(b, g.end.Record(g.s))
	must(b, g.end.Synchronize())
	el, err := cuda.Elapsed(g.start, g.end)
	must(b, err)
	return el
}

// median runs f three times untimed, then max(b.N, 10) times timed, and
// returns the median GPU time (so that -benchtime 1x still takes a median).
func (g *gpuTimer) median(b *testing.B, f func() error) time.Duration {
	b.Helper()
	for range 3 {
		must(b, f())
	}
	var ts []time.Duration
	b.ResetTimer()
	for range max(b.N, 10) {
		ts = append(ts, g.once(b, f))
	}
	slices.Sort(ts)
	return ts[len(ts)/2]
}

// report reports a median time and the rate it gives.
func report(b *testing.B, t time.Duration, work float64, unit string) float64 {
	b.ReportMetric(float64(t.Nanoseconds())/1e3, "us-median")
	rate := work / t.Seconds()
	switch unit {
	case "GB/s":
		rate /= 1e9
	case "TFLOP/s":
		rate /= 1e12
	}
	b.ReportMetric(rate, unit)
	return rate
}

// The peers, measured once per binary.
var (
	copyOnce sync.Once
	copyBW   float64 // device-to-device copy, bytes read + written per second
	blasOnce sync.Once
	blasRate float64 // cuBLAS SGEMM 4096^3, FLOP/s
)

// copyBandwidth measures cuMemcpyDtoD of 256 MiB, counting the bytes read
// and written, as baseline.py does for torch.
func copyBandwidth(b *testing.B, d *gocu.Device) float64 {
	copyOnce.Do(func() { copyBW = copyBandwidthOf(b, d, 256<<20) })
	return copyBW
}

// copyBandwidthOf measures cuMemcpyDtoD of n bytes, counting the bytes
// read and written: the median of 20 copies after 5 warm-ups.
func copyBandwidthOf(b *testing.B, d *gocu.Device, n int) float64 {
	src, err := d.CUDA().Alloc(n)
	must(b, err)
	defer src.Free()
	dst, err := d.CUDA().Alloc(n)
	must(b, err)
	defer dst.Free()
	must(b, src.MemsetD8(1))
	g := newGPUTimer(b, d)
	var ts []time.Duration
	for i := range 25 {
		t := g.once(b, func() error { return cuda.CopyDtoDAsync(dst, src, n, nil) })
		if i >= 5 {
			ts = append(ts, t)
		}
	}
	slices.Sort(ts)
	return 2 * float64(n) / ts[len(ts)/2].Seconds()
}

func BenchmarkGPUCopy(b *testing.B) {
	d := needGPU(b)
	bw := copyBandwidth(b, d)
	b.ReportMetric(bw/1e9, "GB/s")
}

// grayBench times a grayscale launcher on a 4096 x 4096 image and reports
// GB/s (3 bytes read and 1 written per pixel) and the share of the copy
// bandwidth.
func grayBench(b *testing.B, launch func(d *gocu.Device, rgb, gray *gocu.Buffer[uint8], n int) error) {
	grayBenchSize(b, 4096, 4096, launch)
}

// grayBenchSize is grayBench on a w x h image. It also reports the share of
// a device-to-device copy of the same number of bytes (2n read, 2n written),
// which separates the kernel from the ramp-up every short kernel pays.
func grayBenchSize(b *testing.B, w, h int, launch func(d *gocu.Device, rgb, gray *gocu.Buffer[uint8], n int) error) {
	d := needGPU(b)
	n := w * h
	r := newRand(b)
	rgbHost := randBytes(r, 3*n)
	rgb, gray := upload(b, d, rgbHost), poisoned(b, d, n, uint8(0))
	g := newGPUTimer(b, d)
	t := g.median(b, func() error { return launch(d, rgb, gray, n) })
	rate := report(b, t, 4*float64(n), "GB/s")
	b.ReportMetric(100*rate*1e9/copyBandwidth(b, d), "%copy")
	b.ReportMetric(100*rate*1e9/copyBandwidthOf(b, d, 2*n), "%copy-same-bytes")
	// The timed results are right.
	ref, edge := grayRef(rgbHost, n)
	got := download(b, gray)
	for i := range ref {
		if dd := int(got[i]) - int(ref[i]); dd != 0 && !(edge[i] && (dd == 1 || dd == -1)) {
			b.Fatalf("gray[%d] = %d, want %d", i, got[i], ref[i])
		}
	}
}

func BenchmarkGPUGray(b *testing.B) {
	grayBench(b, func(d *gocu.Device, rgb, gray *gocu.Buffer[uint8], n int) error {
		return lecture.LaunchGray(d, gocu.Grid1D(n, 256), rgb, gray, int32(n))
	})
}

func BenchmarkGPUGray2D(b *testing.B) {
	grayBench(b, func(d *gocu.Device, rgb, gray *gocu.Buffer[uint8], n int) error {
		return lecture.LaunchGray2D(d, gocu.Grid2D(4096, 4096, 16, 16), rgb, gray, 4096, 4096)
	})
}

func BenchmarkGPUGrayVec4(b *testing.B) {
	grayBench(b, func(d *gocu.Device, rgb, gray *gocu.Buffer[uint8], n int) error {
		return lecture.LaunchGrayVec4(d, gocu.Grid1D(n/4, 256), rgb, gray, int32(n))
	})
}

// BenchmarkGPUGrayFast is the bandwidth-bound grayscale (target: at least
// 85% of the copy bandwidth; CuPy's lecture kernel reaches 38%).
func BenchmarkGPUGrayFast(b *testing.B) {
	for _, block := range []int{128, 256} {
		b.Run(fmt.Sprint("block", block), func(b *testing.B) {
			grayBench(b, func(d *gocu.Device, rgb, gray *gocu.Buffer[uint8], n int) error {
				return lecture.LaunchGrayFast(d, gocu.Grid1D(n/16, block), rgb, gray, int32(n))
			})
		})
	}
}

// BenchmarkGPUGrayFastLarge is GrayFast on a 16384 x 16384 image (1 GiB
// moved), where the kernel runs long enough to be compared with the copy
// ceiling, itself measured on a large copy; and with a grid of a few blocks
// per SM walking the image (grid-stride), against one pixel group per thread.
func BenchmarkGPUGrayFastLarge(b *testing.B) {
	const w, h = 16384, 16384
	b.Run("one-per-thread", func(b *testing.B) {
		grayBenchSize(b, w, h, func(d *gocu.Device, rgb, gray *gocu.Buffer[uint8], n int) error {
			return lecture.LaunchGrayFast(d, gocu.Grid1D(n/16, 256), rgb, gray, int32(n))
		})
	})
	b.Run("grid-stride", func(b *testing.B) {
		grayBenchSize(b, w, h, func(d *gocu.Device, rgb, gray *gocu.Buffer[uint8], n int) error {
			sms := d.CUDA().Props().Multiprocessors
			return lecture.LaunchGrayFast(d, gocu.Config{Grid: gocu.Dim3{X: int32(8 * sms)}, Block: gocu.Dim3{X: 256}}, rgb, gray, int32(n))
		})
	})
}

// BenchmarkGPUGrayFastStride is GrayFast at 4096 x 4096 with a grid of 8
// blocks per SM walking the image.
func BenchmarkGPUGrayFastStride(b *testing.B) {
	grayBench(b, func(d *gocu.Device, rgb, gray *gocu.Buffer[uint8], n int) error {
		sms := d.CUDA().Props().Multiprocessors
		return lecture.LaunchGrayFast(d, gocu.Config{Grid: gocu.Dim3{X: int32(8 * sms)}, Block: gocu.Dim3{X: 256}}, rgb, gray, int32(n))
	})
}

// matmulBench times a 4096^3 product (2 m n k flops).
func matmulBench(b *testing.B, launch func(d *gocu.Device, a, bm, c *gocu.Buffer[float32], n int) error) (rate float64) {
	d := needGPU(b)
	const n = 4096
	r := newRand(b)
	a, bm := upload(b, d, randFloats(r, n*n)), upload(b, d, randFloats(r, n*n))
	c := poisoned(b, d, n*n, float32(math.NaN()))
	g := newGPUTimer(b, d)
	t := g.median(b, func() error { return launch(d, a, bm, c, n) })
	return report(b, t, 2*float64(n)*n*n, "TFLOP/s")
}

func BenchmarkGPUMatMul(b *testing.B) {
	matmulBench(b, func(d *gocu.Device, a, bm, c *gocu.Buffer[float32], n int) error {
		return lecture.LaunchMatMul(d, gocu.Grid2D(n, n, 16, 16), a, bm, c, int32(n), int32(n), int32(n))
	})
}

func BenchmarkGPUTiledMatMul(b *testing.B) {
	matmulBench(b, func(d *gocu.Device, a, bm, c *gocu.Buffer[float32], n int) error {
		return lecture.LaunchTiledMatMul(d, gocu.Grid2D(n, n, Tile, Tile), a, bm, c, int32(n), int32(n), int32(n))
	})
}

func BenchmarkGPUTiledMatMulDynamic(b *testing.B) {
	for _, w := range []int{16, 32} {
		b.Run(fmt.Sprint("tile", w), func(b *testing.B) {
			matmulBench(b, func(d *gocu.Device, a, bm, c *gocu.Buffer[float32], n int) error {
				cfg := gocu.Grid2D(n, n, w, w)
				cfg.Shared = 2 * w * w * 4
				return lecture.LaunchTiledMatMulDynamic(d, cfg, a, bm, c, int32(n), int32(n), int32(n))
			})
		})
	}
}

// cublasRate measures cuBLAS SGEMM on 4096^3 row-major matrices (as
// Cᵀ = Bᵀ·Aᵀ), the reference for SGEMM.
func cublasRate(b *testing.B, d *gocu.Device) float64 {
	blasOnce.Do(func() {
		if err := cublas.Load(); err != nil {
			b.Skip("no cuBLAS:", err)
		}
		const n = 4096
		r := newRand(b)
		a, bm := upload(b, d, randFloats(r, n*n)), upload(b, d, randFloats(r, n*n))
		c := poisoned(b, d, n*n, float32(0))
		var h *cublas.Handle
		must(b, d.CUDA().WithContext(func() (err error) { h, err = cublas.Create(); return err }))
		defer d.CUDA().WithContext(h.Destroy)
		// On the device's stream, where the timer's events are recorded.
		must(b, d.CUDA().WithContext(func() error { return h.SetStream(d.Stream().CUDA().Handle()) }))
		pa, _ := a.DevicePointer()
		pb, _ := bm.DevicePointer()
		pc, _ := c.DevicePointer()
		sgemm := func() error {
			return d.CUDA().WithContext(func() error {
				return h.Sgemm(cublas.NoTrans, cublas.NoTrans, n, n, n, 1, uint64(pb), n, uint64(pa), n, 0, uint64(pc), n)
			})
		}
		g := newGPUTimer(b, d)
		var ts []time.Duration
		for i := range 15 {
			t := g.once(b, sgemm)
			if i >= 3 {
				ts = append(ts, t)
			}
		}
		slices.Sort(ts)
		blasRate = 2 * n * n * n / ts[len(ts)/2].Seconds()
	})
	if blasRate == 0 {
		b.Skip("no cuBLAS measurement")
	}
	return blasRate
}

func BenchmarkGPUCublasSGEMM(b *testing.B) {
	d := needGPU(b)
	b.ReportMetric(cublasRate(b, d)/1e12, "TFLOP/s")
}

// BenchmarkGPUSGEMM is the register-tiled SGEMM written in Go (target: at
// least 50% of cuBLAS; the lecture's tiled kernel reaches 16%).
func BenchmarkGPUSGEMM(b *testing.B) {
	d := needGPU(b)
	rate := matmulBench(b, func(d *gocu.Device, a, bm, c *gocu.Buffer[float32], n int) error {
		return lecture.LaunchSGEMM(d, gemmConfig(n, n), a, bm, c, int32(n), int32(n), int32(n), 1, 0)
	})
	b.ReportMetric(100*rate*1e12/cublasRate(b, d), "%cublas")
}

func BenchmarkGPUSum(b *testing.B) {
	d := needGPU(b)
	const n = 1 << 26
	x := upload(b, d, randFloats(newRand(b), n))
	sms := d.CUDA().Props().Multiprocessors
	blocks := 4 * sms
	partial := poisoned(b, d, blocks, float32(0))
	total := poisoned(b, d, 1, float32(0))
	g := newGPUTimer(b, d)
	t := g.median(b, func() error {
		if err := lecture.LaunchSum(d, gocu.Grid1D(blocks*256, 256), x, partial, n); err != nil {
			return err
		}
		return lecture.LaunchSum(d, gocu.Grid1D(1024, 1024), partial, total, int32(blocks))
	})
	rate := report(b, t, 4*n, "GB/s")
	b.ReportMetric(100*rate*1e9/copyBandwidth(b, d), "%copy")
}

func BenchmarkGPUHistogram(b *testing.B) {
	d := needGPU(b)
	const n = 1 << 26
	data := upload(b, d, randBytes(newRand(b), n))
	hist := poisoned(b, d, lecture.Bins, uint32(0))
	blocks := 4 * d.CUDA().Props().Multiprocessors
	g := newGPUTimer(b, d)
	t := g.median(b, func() error {
		return lecture.LaunchHistogram(d, gocu.Grid1D(blocks*256, 256), data, hist, n)
	})
	report(b, t, n, "GB/s")
}

func BenchmarkGPUScan(b *testing.B) {
	d := needGPU(b)
	const n = 1 << 24
	xh := make([]int32, n)
	for i := range xh {
		xh[i] = int32(i % 7)
	}
	x := upload(b, d, xh)
	seg := 2 * lecture.ScanThreads
	nb := n / seg
	y := poisoned(b, d, n, int32(0))
	sums := poisoned(b, d, nb, int32(0))
	nb2 := nb / seg
	sums2 := poisoned(b, d, nb2, int32(0))
	sums3 := poisoned(b, d, 1, int32(0))
	offs := poisoned(b, d, nb, int32(0))
	offs2 := poisoned(b, d, nb2, int32(0))
	block := gocu.Dim3{X: lecture.ScanThreads}
	g := newGPUTimer(b, d)
	// Three levels for 2^24 elements: 32768 segments, 64, 1.
	t := g.median(b, func() error {
		for _, e := range []error{
			lecture.LaunchScanBlocks(d, gocu.Config{Grid: gocu.Dim3{X: int32(nb)}, Block: block}, x, y, sums, n),
			lecture.LaunchScanBlocks(d, gocu.Config{Grid: gocu.Dim3{X: int32(nb2)}, Block: block}, sums, offs, sums2, int32(nb)),
			lecture.LaunchScanBlocks(d, gocu.Config{Grid: gocu.Dim3{X: 1}, Block: block}, sums2, offs2, sums3, int32(nb2)),
			lecture.LaunchScanAdd(d, gocu.Auto(nb), offs, offs2, int32(nb)),
			lecture.LaunchScanAdd(d, gocu.Auto(n), y, offs, n),
		} {
			if e != nil {
				return e
			}
		}
		return nil
	})
	report(b, t, 8*n, "GB/s") // each element read and written once
	got := download(b, y)
	var acc int32
	for i := range xh {
		if got[i] != acc {
			b.Fatalf("y[%d] = %d, want %d", i, got[i], acc)
		}
		acc += xh[i]
	}
}

// BenchmarkGPUDebug is the cost of debug mode: the grayscale kernel and
// SGEMM with Go's bounds checks on the GPU against the release build, both
// timed from the launch to the end of the kernel (a debug launch waits for
// its kernel and reads the error buffer).
func BenchmarkGPUDebug(b *testing.B) {
	d := needGPU(b)
	const w = 4096
	n := w * w
	r := newRand(b)
	rgb, gray := upload(b, d, randBytes(r, 3*n)), poisoned(b, d, n, uint8(0))
	const m = 2048
	a, bm := upload(b, d, randFloats(r, m*m)), upload(b, d, randFloats(r, m*m))
	c := poisoned(b, d, m*m, float32(0))
	for _, k := range []struct {
		name   string
		launch func(cfg gocu.Config) error
		cfg    gocu.Config
	}{
		{"gray", func(cfg gocu.Config) error { return lecture.LaunchGray(d, cfg, rgb, gray, int32(n)) }, gocu.Grid1D(n, 256)},
		{"grayfast", func(cfg gocu.Config) error { return lecture.LaunchGrayFast(d, cfg, rgb, gray, int32(n)) }, gocu.Grid1D(n/16, 256)},
		{"sgemm2048", func(cfg gocu.Config) error {
			return lecture.LaunchSGEMM(d, cfg, a, bm, c, m, m, m, 1, 0)
		}, gemmConfig(m, m)},
	} {
		b.Run(k.name, func(b *testing.B) {
			wall := func(cfg gocu.Config) time.Duration {
				for range 3 {
					must(b, k.launch(cfg))
				}
				must(b, d.Synchronize())
				var ts []time.Duration
				for range max(b.N, 5) {
					t0 := time.Now()
					must(b, k.launch(cfg))
					must(b, d.Synchronize())
					ts = append(ts, time.Since(t0))
				}
				slices.Sort(ts)
				return ts[len(ts)/2]
			}
			rel := wall(k.cfg)
			dbg := k.cfg
			dbg.Debug = true
			deb := wall(dbg)
			b.ReportMetric(float64(rel.Nanoseconds())/1e3, "us-release")
			b.ReportMetric(float64(deb.Nanoseconds())/1e3, "us-debug")
			b.ReportMetric(float64(deb)/float64(rel), "x-debug")
		})
	}
}

// BenchmarkGPULaunch compares the launch overhead of a generated launcher
// with a raw cuda.Function.Launch of the same kernel (10,000 queued
// launches of a one-block grayscale; GPU work overlaps, so this is the CPU
// cost per launch).
func BenchmarkGPULaunch(b *testing.B) {
	d := needGPU(b)
	const n = 256
	rgb, gray := poisoned(b, d, 3*n, uint8(3)), poisoned(b, d, n, uint8(0))
	cfg := gocu.Grid1D(n, 256)
	must(b, lecture.LaunchGray(d, cfg, rgb, gray, n))
	// The same module through the device's module cache: the raw function.
	m, k, _ := meta.Lookup(lecture.Gray)
	mod, err := d.Compile(m.Source, gocu.Std("c++17"), gocu.Name("zz_gocu_lecture.cu"))
	must(b, err)
	fn, err := mod.CUDA().Function(k.Entry)
	must(b, err)
	cc := cuda.Config{Grid: cuda.Dim3{X: 1}, Block: cuda.Dim3{X: 256}}
	rm, gm := rgb.Memory(), gray.Memory()
	per := func(f func() error) float64 {
		const launches = 10000
		for range 1000 {
			must(b, f())
		}
		must(b, d.Synchronize())
		best := math.Inf(1)
		for range 5 {
			t0 := time.Now()
			for range launches {
				if err := f(); err != nil {
					b.Fatal(err)
				}
			}
			best = min(best, float64(time.Since(t0).Nanoseconds())/launches)
			must(b, d.Synchronize())
		}
		return best
	}
	b.ResetTimer()
	var gen, raw float64
	for range min(b.N, 3) {
		gen = per(func() error { return lecture.LaunchGray(d, cfg, rgb, gray, n) })
		raw = per(func() error { return fn.Launch(cc, rm, int64(3*n), gm, int64(n), int32(n)) })
	}
	b.ReportMetric(gen/1e3, "us/launch")
	b.ReportMetric(raw/1e3, "us/raw-launch")
	b.ReportMetric((gen-raw)/1e3, "us-overhead")
}

// BenchmarkGPUCompile is the first-launch compile time of this package's
// CUDA source (all its kernels): cold, with NVRTC compiling (a fresh cache
// directory), and warm, from the disk cache; each in a fresh process of
// this test binary, timing its first LaunchGray.
func BenchmarkGPUCompile(b *testing.B) {
	needGPU(b)
	dir := b.TempDir()
	child := func() time.Duration {
		cmd := exec.Command(os.Args[0], "-test.run", "^TestFirstLaunchChild$")
		cmd.Env = append(os.Environ(), "GOCU_TEST_FIRST_LAUNCH=1", "GOCU_CACHE_DIR="+dir, "GOCU_CACHE=")
		out, err := cmd.CombinedOutput()
		if err != nil {
			b.Fatalf("child: %v\n%s", err, out)
		}
		i := strings.Index(string(out), "first-launch-ns=")
		if i < 0 {
			b.Fatalf("child printed no time:\n%s", out)
		}
		f := strings.Fields(string(out)[i+len("first-launch-ns="):])
		ns, err := strconv.ParseInt(f[0], 10, 64)
		must(b, err)
		return time.Duration(ns)
	}
	var cold, warm []time.Duration
	for range min(b.N, 3) {
		os.RemoveAll(dir)
		cold = append(cold, child())
		warm = append(warm, child())
	}
	slices.Sort(cold)
	slices.Sort(warm)
	b.ReportMetric(float64(cold[len(cold)/2].Nanoseconds())/1e6, "ms-cold")
	b.ReportMetric(float64(warm[len(warm)/2].Nanoseconds())/1e6, "ms-warm")
}

// TestFirstLaunchChild is BenchmarkGPUCompile's child process: it times
// the first launch of a kernel of this package, which compiles (or loads
// from the cache) and loads the package's module.
func TestFirstLaunchChild(t *testing.T) {
	if os.Getenv("GOCU_TEST_FIRST_LAUNCH") == "" {
		t.Skip("run by BenchmarkGPUCompile")
	}
	d := needGPU(t)
	if err := nvrtc.Load(); err != nil {
		t.Fatal(err)
	}
	rgb, gray := poisoned(t, d, 3*256, uint8(1)), poisoned(t, d, 256, uint8(0))
	must(t, d.Synchronize())
	t0 := time.Now()
	must(t, lecture.LaunchGray(d, gocu.Grid1D(256, 256), rgb, gray, 256))
	el := time.Since(t0)
	must(t, d.Synchronize())
	fmt.Printf("first-launch-ns=%d\n", el.Nanoseconds())
}
