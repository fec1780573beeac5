package lecture_test

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"sync"
	"testing"

	"github.com/gocu-dev/gocu"
	"github.com/gocu-dev/gocu/internal/gputest"
	"github.com/gocu-dev/gocu/internal/lecture"
	"github.com/gocu-dev/gocu/kernel"
	"github.com/gocu-dev/gocu/nvrtc"
	"github.com/gocu-dev/gocu/sim"
)

// The tests in this file run every kernel through its generated launcher
// on the simulator and, where one is usable, on the GPU: the same Go
// source, the same call, checked against CPU references on random inputs
// with poisoned outputs.

var gpuDev = sync.OnceValues(func() (*gocu.Device, error) {
	d, err := gocu.Open("cuda")
	if err != nil {
		return nil, err
	}
	if !nvrtc.Available() {
		return nil, errors.New("no NVRTC library")
	}
	return d, nil
})

// needGPU returns the GPU or skips with the reason.
func needGPU(t testing.TB) *gocu.Device {
	t.Helper()
	d, err := gpuDev()
	gputest.Need(t, err)
	return d
}

func simDev(t testing.TB) *gocu.Device {
	t.Helper()
	d, err := gocu.Open("sim")
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// onDevices runs f on the simulator and, when there is one, on the GPU.
func onDevices(t *testing.T, f func(t *testing.T, d *gocu.Device)) {
	t.Run("sim", func(t *testing.T) { f(t, simDev(t)) })
	t.Run("gpu", func(t *testing.T) { f(t, needGPU(t)) })
}

func onGPU(d *gocu.Device) bool { return d.Kind() == gocu.CUDA }

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func upload[T any](t testing.TB, d *gocu.Device, s []T) *gocu.Buffer[T] {
	t.Helper()
	b, err := gocu.FromSlice(d, s)
	must(t, err)
	t.Cleanup(func() { b.Free() })
	return b
}

// poisoned returns a buffer of n copies of v: an element the kernel fails
// to write keeps it.
func poisoned[T any](t testing.TB, d *gocu.Device, n int, v T) *gocu.Buffer[T] {
	t.Helper()
	s := make([]T, n)
	for i := range s {
		s[i] = v
	}
	return upload(t, d, s)
}

func download[T any](t testing.TB, b *gocu.Buffer[T]) []T {
	t.Helper()
	s, err := b.ToSlice()
	must(t, err)
	return s
}

func TestLaunchGray(t *testing.T) {
	onDevices(t, func(t *testing.T, d *gocu.Device) {
		r := newRand(t)
		sizes := [][2]int{{1, 1}, {31, 17}, {640, 480}}
		if onGPU(d) {
			sizes = append(sizes, [2]int{4096, 4096}, [2]int{1920, 1081})
		}
		for _, s := range sizes {
			w, h := s[0], s[1]
			n := w * h
			t.Run(fmt.Sprintf("%dx%d", w, h), func(t *testing.T) {
				rgbHost := randBytes(r, 3*n)
				ref, edge := grayRef(rgbHost, n)
				bad := make([]uint8, n)
				poisonBytes(bad, ref)
				rgb := upload(t, d, rgbHost)
				run := func(name string, launch func(gray *gocu.Buffer[uint8]) error) {
					t.Helper()
					gray := upload(t, d, bad)
					if err := launch(gray); err != nil {
						t.Fatalf("%s: %v", name, err)
					}
					checkGray(t, download(t, gray), ref, edge)
				}
				run("Gray", func(g *gocu.Buffer[uint8]) error {
					return lecture.LaunchGray(d, gocu.Grid1D(n, 256), rgb, g, int32(n))
				})
				run("Gray auto", func(g *gocu.Buffer[uint8]) error { return lecture.LaunchGray(d, gocu.Auto(n), rgb, g, int32(n)) })
				run("Gray2D", func(g *gocu.Buffer[uint8]) error {
					return lecture.LaunchGray2D(d, gocu.Grid2D(w, h, 16, 16), rgb, g, int32(w), int32(h))
				})
				if n%4 == 0 {
					run("GrayVec4", func(g *gocu.Buffer[uint8]) error {
						return lecture.LaunchGrayVec4(d, gocu.Grid1D(n/4, 256), rgb, g, int32(n))
					})
				}
				if n%16 == 0 {
					run("GrayFast", func(g *gocu.Buffer[uint8]) error {
						return lecture.LaunchGrayFast(d, gocu.Grid1D(n/16, 256), rgb, g, int32(n))
					})
					run("GrayFast, a small grid striding", func(g *gocu.Buffer[uint8]) error {
						return lecture.LaunchGrayFast(d, gocu.Config{Grid: gocu.Dim3{X: 3}, Block: gocu.Dim3{X: 64}}, rgb, g, int32(n))
					})
				}
			})
		}
	})
}

func TestLaunchMatMul(t *testing.T) {
	onDevices(t, func(t *testing.T, d *gocu.Device) {
		r := newRand(t)
		shapes := [][3]int{{1, 1, 1}, {37, 53, 29}, {64, 48, 100}}
		if onGPU(d) {
			shapes = append(shapes, [3]int{512, 384, 257})
		}
		for _, s := range shapes {
			m, n, k := s[0], s[1], s[2]
			t.Run(fmt.Sprintf("%dx%dx%d", m, n, k), func(t *testing.T) {
				ah, bh := randFloats(r, m*k), randFloats(r, k*n)
				ref, mag := matmulRef(ah, bh, m, n, k)
				a, b := upload(t, d, ah), upload(t, d, bh)
				nan := float32(math.NaN())
				cfg := gocu.Grid2D(n, m, 16, 16)
				c := poisoned(t, d, m*n, nan)
				must(t, lecture.LaunchMatMul(d, cfg, a, b, c, int32(m), int32(n), int32(k)))
				checkMatMul(t, download(t, c), ref, mag, k)
				c = poisoned(t, d, m*n, nan)
				must(t, lecture.LaunchTiledMatMul(d, cfg, a, b, c, int32(m), int32(n), int32(k)))
				checkMatMul(t, download(t, c), ref, mag, k)
				for _, w := range []int{8, 16, 32} {
					c = poisoned(t, d, m*n, nan)
					cfg := gocu.Grid2D(n, m, w, w)
					cfg.Shared = 2 * w * w * 4
					must(t, lecture.LaunchTiledMatMulDynamic(d, cfg, a, b, c, int32(m), int32(n), int32(k)))
					checkMatMul(t, download(t, c), ref, mag, k)
				}
			})
		}
	})
}

func TestLaunchSum(t *testing.T) {
	onDevices(t, func(t *testing.T, d *gocu.Device) {
		r := newRand(t)
		sizes := []int{1, 1000, 100003}
		if onGPU(d) {
			sizes = append(sizes, 1<<24+5)
		}
		for _, n := range sizes {
			xh := randFloats(r, n)
			var ref, mag float64
			for _, v := range xh {
				ref += float64(v)
				mag += math.Abs(float64(v))
			}
			x := upload(t, d, xh)
			const blocks = 40
			partial := poisoned(t, d, blocks, float32(math.NaN()))
			total := poisoned(t, d, 1, float32(math.NaN()))
			must(t, lecture.LaunchSum(d, gocu.Grid1D(blocks*256, 256), x, partial, int32(n)))
			must(t, lecture.LaunchSum(d, gocu.Grid1D(64, 64), partial, total, blocks))
			if got := download(t, total)[0]; !relClose(got, ref, mag, 1e-5) {
				t.Errorf("n=%d: sum = %v, want %v", n, got, ref)
			}
		}
	})
}

func TestLaunchHistogram(t *testing.T) {
	onDevices(t, func(t *testing.T, d *gocu.Device) {
		r := newRand(t)
		sizes := []int{1, 777, 200000}
		if onGPU(d) {
			sizes = append(sizes, 1<<24+7)
		}
		for _, n := range sizes {
			data := make([]uint8, n)
			for i := range data {
				data[i] = uint8(r.NormFloat64()*40 + 128) // skewed, so bins contend
			}
			start := make([]uint32, lecture.Bins) // it accumulates: start from random counts
			for i := range start {
				start[i] = r.Uint32N(1000)
			}
			want := append([]uint32(nil), start...)
			for _, v := range data {
				want[v]++
			}
			hist := upload(t, d, start)
			must(t, lecture.LaunchHistogram(d, gocu.Config{Grid: gocu.Dim3{X: 13}, Block: gocu.Dim3{X: 96}}, upload(t, d, data), hist, int32(n)))
			got := download(t, hist)
			for b := range want {
				if got[b] != want[b] {
					t.Fatalf("n=%d: hist[%d] = %d, want %d", n, b, got[b], want[b])
				}
			}
		}
	})
}

// scanOn computes the exclusive prefix sums of x on d: ScanBlocks per
// segment, then (with more than one segment) the scan of the segment
// totals, added back by ScanAdd.
func scanOn(t *testing.T, d *gocu.Device, x *gocu.Buffer[int32]) *gocu.Buffer[int32] {
	t.Helper()
	n := x.Len()
	seg := 2 * lecture.ScanThreads
	nb := max(1, (n+seg-1)/seg)
	y := poisoned(t, d, n, int32(math.MinInt32))
	sums := poisoned(t, d, nb, int32(math.MinInt32))
	must(t, lecture.LaunchScanBlocks(d, gocu.Config{Grid: gocu.Dim3{X: int32(nb)}, Block: gocu.Dim3{X: lecture.ScanThreads}}, x, y, sums, int32(n)))
	if nb == 1 {
		return y
	}
	offsets := scanOn(t, d, sums)
	must(t, lecture.LaunchScanAdd(d, gocu.Auto(n), y, offsets, int32(n)))
	return y
}

func TestLaunchScan(t *testing.T) {
	onDevices(t, func(t *testing.T, d *gocu.Device) {
		r := newRand(t)
		sizes := []int{1, 511, 512, 513, 100000}
		if onGPU(d) {
			sizes = append(sizes, 1<<22+3)
		}
		for _, n := range sizes {
			xh := make([]int32, n)
			for i := range xh {
				xh[i] = int32(r.IntN(2001)) - 1000
			}
			y := download(t, scanOn(t, d, upload(t, d, xh)))
			var acc int32
			for i := range xh {
				if y[i] != acc {
					t.Fatalf("n=%d: y[%d] = %d, want %d", n, i, y[i], acc)
				}
				acc += xh[i]
			}
		}
	})
}

// checkGEMM compares c with alpha a b + beta c0 computed in float64, within
// the rounding bound of a float32 dot product of k terms.
func checkGEMM(t *testing.T, got, ah, bh, c0 []float32, m, n, k int, alpha, beta float32) {
	t.Helper()
	ref, mag := matmulRef(ah, bh, m, n, k)
	tol := 2 * float64(k+2) * 0x1p-24
	bad := 0
	for i := range ref {
		want := float64(alpha) * ref[i]
		scale := math.Abs(float64(alpha)) * mag[i]
		if beta != 0 {
			want += float64(beta) * float64(c0[i])
			scale += math.Abs(float64(beta) * float64(c0[i]))
		}
		if !relClose(got[i], want, scale, tol) {
			if bad++; bad <= 5 {
				t.Errorf("c[%d][%d] = %v, want %v", i/n, i%n, got[i], want)
			}
		}
	}
	if bad > 0 {
		t.Fatalf("%d of %d elements wrong", bad, len(ref))
	}
}

// gemmConfig is the launch of SGEMM for an m x n product.
func gemmConfig(m, n int) gocu.Config {
	return gocu.Config{Grid: gocu.Dim3{X: int32(n / lecture.GemmBN), Y: int32(m / lecture.GemmBM)}, Block: gocu.Dim3{X: lecture.GemmThreads}}
}

func TestLaunchSGEMM(t *testing.T) {
	onDevices(t, func(t *testing.T, d *gocu.Device) {
		r := newRand(t)
		shapes := [][3]int{{128, 256, 64}, {256, 128, 8}}
		if onGPU(d) {
			shapes = append(shapes, [3]int{512, 640, 264}, [3]int{1024, 1024, 1024})
		}
		for _, s := range shapes {
			m, n, k := s[0], s[1], s[2]
			t.Run(fmt.Sprintf("%dx%dx%d", m, n, k), func(t *testing.T) {
				ah, bh, c0 := randFloats(r, m*k), randFloats(r, k*n), randFloats(r, m*n)
				a, b := upload(t, d, ah), upload(t, d, bh)
				// beta == 0: c is not read, so NaN poison must vanish.
				c := poisoned(t, d, m*n, float32(math.NaN()))
				must(t, lecture.LaunchSGEMM(d, gemmConfig(m, n), a, b, c, int32(m), int32(n), int32(k), 1, 0))
				checkGEMM(t, download(t, c), ah, bh, nil, m, n, k, 1, 0)
				c = upload(t, d, c0)
				must(t, lecture.LaunchSGEMM(d, gemmConfig(m, n), a, b, c, int32(m), int32(n), int32(k), 1.5, -0.5))
				checkGEMM(t, download(t, c), ah, bh, c0, m, n, k, 1.5, -0.5)
			})
		}
	})
}

// TestSGEMMRaceFree runs SGEMM in the simulator's checked mode: the
// double-buffered panels have one barrier per stage, and no thread may
// touch an element another thread uses without a barrier between them.
func TestSGEMMRaceFree(t *testing.T) {
	d := simDev(t)
	r := newRand(t)
	const m, n, k = 128, 128, 32
	ah, bh := randFloats(r, m*k), randFloats(r, k*n)
	c := poisoned(t, d, m*n, float32(math.NaN()))
	cfg := gemmConfig(m, n)
	cfg.Checked = true
	must(t, lecture.LaunchSGEMM(d, cfg, upload(t, d, ah), upload(t, d, bh), c, m, n, k, 1, 0))
	checkGEMM(t, download(t, c), ah, bh, nil, m, n, k, 1, 0)
}

// TestSGEMMBitsSimVsGPU: SGEMM multiplies and adds with kernel.FMA in a
// fixed order, so the GPU computes the simulator's bits exactly.
func TestSGEMMBitsSimVsGPU(t *testing.T) {
	g := needGPU(t)
	s := simDev(t)
	r := newRand(t)
	const m, n, k = 256, 128, 72
	ah, bh, c0 := randFloats(r, m*k), randFloats(r, k*n), randFloats(r, m*n)
	var out [2][]float32
	for i, d := range []*gocu.Device{s, g} {
		c := upload(t, d, c0)
		must(t, lecture.LaunchSGEMM(d, gemmConfig(m, n), upload(t, d, ah), upload(t, d, bh), c, m, n, k, 0.75, 2))
		out[i] = download(t, c)
	}
	for i := range out[0] {
		if math.Float32bits(out[0][i]) != math.Float32bits(out[1][i]) {
			t.Fatalf("c[%d]: simulator %v, GPU %v", i, out[0][i], out[1][i])
		}
	}
}

// TestDebugCorrectKernels runs correct kernels in debug mode on the GPU:
// no error, the right results.
func TestDebugCorrectKernels(t *testing.T) {
	d := needGPU(t)
	r := newRand(t)
	const w, h = 640, 480
	n := w * h
	rgbHost := randBytes(r, 3*n)
	ref, edge := grayRef(rgbHost, n)
	rgb := upload(t, d, rgbHost)
	for _, launch := range []func(g *gocu.Buffer[uint8], cfg gocu.Config) error{
		func(g *gocu.Buffer[uint8], cfg gocu.Config) error {
			return lecture.LaunchGray(d, cfg, rgb, g, int32(n))
		},
		func(g *gocu.Buffer[uint8], cfg gocu.Config) error {
			cfg.N = n / 16
			return lecture.LaunchGrayFast(d, cfg, rgb, g, int32(n))
		},
	} {
		g := poisoned(t, d, n, uint8(7))
		must(t, launch(g, gocu.Config{N: n, Debug: true}))
		checkGray(t, download(t, g), ref, edge)
	}
	const m, nn, k = 256, 256, 64
	ah, bh := randFloats(r, m*k), randFloats(r, k*nn)
	c := poisoned(t, d, m*nn, float32(math.NaN()))
	cfg := gemmConfig(m, nn)
	cfg.Debug = true
	must(t, lecture.LaunchSGEMM(d, cfg, upload(t, d, ah), upload(t, d, bh), c, m, nn, k, 1, 0))
	checkGEMM(t, download(t, c), ah, bh, nil, m, nn, k, 1, 0)
}

// TestLaunchInOut passes host slices with In and Out.
func TestLaunchInOut(t *testing.T) {
	onDevices(t, func(t *testing.T, d *gocu.Device) {
		r := newRand(t)
		const n = 1000
		rgb := randBytes(r, 3*n)
		ref, edge := grayRef(rgb, n)
		gray := make([]uint8, n)
		poisonBytes(gray, ref)
		must(t, lecture.LaunchGray(d, gocu.Auto(n), gocu.In(rgb), gocu.Out(gray), n))
		checkGray(t, gray, ref, edge)
		// InOut: y += offsets, in place.
		y := []int32{1, 2, 3, 4}
		must(t, lecture.LaunchScanAdd(d, gocu.Auto(4), gocu.InOut(y), gocu.In([]int32{10}), 4))
		if y[0] != 11 || y[3] != 14 {
			t.Errorf("InOut: %v, want [11 12 13 14]", y)
		}
	})
}

// TestLaunchStream queues kernels on a stream of their own.
func TestLaunchStream(t *testing.T) {
	onDevices(t, func(t *testing.T, d *gocu.Device) {
		s, err := d.NewStream()
		must(t, err)
		defer s.Close()
		r := newRand(t)
		const n = 4096
		rgb := randBytes(r, 3*n)
		ref, edge := grayRef(rgb, n)
		in := upload(t, d, rgb)
		out := poisoned(t, d, n, uint8(1))
		cfg := gocu.Auto(n)
		cfg.Stream = s
		must(t, lecture.LaunchGray(d, cfg, in, out, n))
		must(t, s.Synchronize())
		checkGray(t, download(t, out), ref, edge)
	})
}

// TestLaunchErrors provokes the user errors a launcher reports.
func TestLaunchErrors(t *testing.T) {
	onDevices(t, func(t *testing.T, d *gocu.Device) {
		rgb := poisoned(t, d, 30, uint8(1))
		gray := poisoned(t, d, 10, uint8(1))
		freed, err := gocu.Alloc[uint8](d, 10)
		must(t, err)
		freed.Free()
		cases := []struct {
			err  error
			want string
			is   error
		}{
			{lecture.LaunchGray(d, gocu.Grid1D(10, 32), rgb, freed, 10), "argument 2 (gray): buffer used after Free", gocu.ErrFreed},
			{lecture.LaunchGray(d, gocu.Grid1D(10, 32), nil, gray, 10), "argument 1 (rgb): nil (pass a *gocu.Buffer or an array)", nil},
			{lecture.LaunchGray(d, gocu.Config{Grid: gocu.Dim3{X: -1}, Block: gocu.Dim3{X: 32}}, rgb, gray, 10), "negative size", nil},
			{lecture.LaunchGray(d, gocu.Auto(0), rgb, gray, 10), "N = 0", nil},
			{lecture.LaunchGrayFast(d, gocu.Grid1D(1, 512), rgb, gray, 10), "more than the 256 of the kernel's //gocu:launch_bounds", nil},
			{lecture.LaunchTiledMatMulDynamic(d, gocu.Grid2D(1, 1, 16, 16), nil, nil, nil, 1, 1, 1), "Config.Shared is 0", nil},
			{lecture.LaunchGray(nil, gocu.Auto(10), rgb, gray, 10), "no device", nil},
		}
		if onGPU(d) {
			s := simDev(t)
			other := poisoned(t, s, 10, uint8(1))
			cases = append(cases,
				struct {
					err  error
					want string
					is   error
				}{lecture.LaunchGray(d, gocu.Grid1D(10, 32), rgb, other, 10), "argument 2 (gray): Buffer[uint8](10) on sim is on another device", nil},
				struct {
					err  error
					want string
					is   error
				}{lecture.LaunchGray(s, gocu.Grid1D(10, 32), rgb, other, 10), "argument 1 (rgb): Buffer[uint8](30) on cuda", nil},
				struct {
					err  error
					want string
					is   error
				}{lecture.LaunchGray(d, gocu.Config{Grid: gocu.Dim3{X: 1}, Block: gocu.Dim3{X: 32}, Checked: true}, rgb, gray, 10), "a GPU cannot do", nil},
				struct {
					err  error
					want string
					is   error
				}{lecture.LaunchGray(d, gocu.Grid1D(10, 2048), rgb, gray, 10), "2048", nil},
			)
		}
		for i, c := range cases {
			if c.err == nil || !strings.Contains(c.err.Error(), c.want) {
				t.Errorf("case %d: %v, want an error with %q", i, c.err, c.want)
			}
			if c.is != nil && !errors.Is(c.err, c.is) {
				t.Errorf("case %d: errors.Is(%v, %v) is false", i, c.err, c.is)
			}
		}
		// A Reinterpret the data does not allow: 10 pixels are not whole
		// words. The simulator and the GPU's debug build both report it.
		cfg := gocu.Grid1D(1, 32)
		cfg.Debug = true
		if err := lecture.LaunchGrayVec4(d, cfg, rgb, gray, 10); !errors.Is(err, sim.ErrMisaligned) {
			t.Errorf("GrayVec4 of 10 pixels: %v, want a misaligned reinterpretation", err)
		}
	})
}

// TestLaunchAllocs: a GPU launch through a generated launcher allocates
// nothing; a simulator launch allocates only what sim.Launch does plus the
// closures binding the arguments.
func TestLaunchAllocs(t *testing.T) {
	onDevices(t, func(t *testing.T, d *gocu.Device) {
		const n = 256
		rgb := poisoned(t, d, 3*n, uint8(9))
		gray := poisoned(t, d, n, uint8(0))
		cfg := gocu.Grid1D(n, 256)
		must(t, lecture.LaunchGray(d, cfg, rgb, gray, n)) // compiles on a GPU
		got := testing.AllocsPerRun(100, func() {
			if err := lecture.LaunchGray(d, cfg, rgb, gray, n); err != nil {
				t.Fatal(err)
			}
		})
		if onGPU(d) {
			must(t, d.Synchronize())
			if got != 0 {
				t.Errorf("a GPU launch allocates %v times, want 0", got)
			}
			return
		}
		h, g := rgb.Host(), gray.Host()
		k := sim.Kernel{Name: "Gray", Func: func(t *kernel.Thread) { lecture.Gray(t, h, g, n) }, Args: []any{h, g, int32(n)}}
		base := testing.AllocsPerRun(100, func() {
			if err := sim.Launch(sim.Config{Grid: kernel.Dim3{X: 1}, Block: kernel.Dim3{X: 256}}, k); err != nil {
				t.Fatal(err)
			}
		})
		// Two closures, the argument list and its three boxed values.
		if got > base+6 {
			t.Errorf("a simulator launch through LaunchGray allocates %v times, sim.Launch alone %v: want at most 6 more", got, base)
		}
	})
}

// TestLaunchConcurrent launches from many goroutines at once, release and
// debug builds mixed (debug launches of one module take turns on its error
// buffer).
func TestLaunchConcurrent(t *testing.T) {
	onDevices(t, func(t *testing.T, d *gocu.Device) {
		r := newRand(t)
		const n = 1 << 14
		rgbHost := randBytes(r, 3*n)
		ref, edge := grayRef(rgbHost, n)
		rgb := upload(t, d, rgbHost)
		var wg sync.WaitGroup
		errs := make(chan error, 8)
		for g := range 8 {
			gray := poisoned(t, d, n, uint8(1))
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := range 10 {
					cfg := gocu.Auto(n)
					cfg.Debug = (g+i)%2 == 0
					if err := lecture.LaunchGray(d, cfg, rgb, gray, n); err != nil {
						errs <- err
						return
					}
				}
			}()
			t.Cleanup(func() { checkGray(t, download(t, gray), ref, edge) })
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Error(err)
		}
	})
}

// TestLaunchView launches on a view of a buffer: the kernel sees exactly
// the view's elements, at its own address and length.
func TestLaunchView(t *testing.T) {
	onDevices(t, func(t *testing.T, d *gocu.Device) {
		y0 := make([]int32, 1000)
		for i := range y0 {
			y0[i] = int32(i)
		}
		y := upload(t, d, y0)
		v, err := y.Slice(100, 300)
		must(t, err)
		// ScanAdd adds offsets[i/512] to y[i] for i < n: on the view, i
		// counts from the view's start.
		must(t, lecture.LaunchScanAdd(d, gocu.Auto(v.Len()), v, upload(t, d, []int32{1000}), int32(v.Len())))
		got := download(t, y)
		for i, g := range got {
			want := int32(i)
			if i >= 100 && i < 300 {
				want += 1000
			}
			if g != want {
				t.Fatalf("y[%d] = %d, want %d", i, g, want)
			}
		}
		// Indexing past the view is past its length, on both devices.
		cfg := gocu.Auto(v.Len() + 1)
		cfg.Debug = true
		err = lecture.LaunchScanAdd(d, cfg, v, upload(t, d, []int32{1}), int32(v.Len()+1))
		var e *sim.Error
		if !errors.As(err, &e) || e.Index != 200 || e.Length != 200 {
			t.Errorf("one past the view: %v, want index 200 out of range [0:200]", err)
		}
	})
}
