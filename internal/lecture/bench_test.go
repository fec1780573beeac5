package lecture_test

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/gocu-dev/gocu/internal/lecture"
	"github.com/gocu-dev/gocu/kernel"
	"github.com/gocu-dev/gocu/sim"
)

// perThread reports the time per simulated thread.
func perThread(b *testing.B, threads int) {
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(threads), "ns/thread")
}

func benchGray(b *testing.B, w, h int, checked bool) {
	n := w * h
	r := rand.New(rand.NewPCG(1, 2))
	rgb, gray := randBytes(r, 3*n), make([]uint8, n)
	cfg := sim.Config{Grid: kernel.Dim3{X: cdiv(n, 256)}, Block: kernel.Dim3{X: 256}, Checked: checked}
	k := sim.Kernel{Name: "Gray", Args: []any{rgb, gray, int32(n)},
		Func:    func(t *kernel.Thread) { lecture.Gray(t, rgb, gray, int32(n)) },
		Checked: func(t *kernel.Thread) { grayChecked(t, rgb, gray, int32(n)) }}
	b.SetBytes(int64(4 * n))
	for b.Loop() {
		if err := sim.Launch(cfg, k); err != nil {
			b.Fatal(err)
		}
	}
	perThread(b, n)
}

// BenchmarkGray is the headline: the lecture's grayscale kernel on a
// 4096x4096 image, in ns per simulated thread (Numba's simulator: ~104 us).
func BenchmarkGray(b *testing.B) { benchGray(b, 4096, 4096, false) }

func BenchmarkGray1024(b *testing.B)        { benchGray(b, 1024, 1024, false) }
func BenchmarkGray1024Checked(b *testing.B) { benchGray(b, 1024, 1024, true) }

func BenchmarkGrayRun(b *testing.B) {
	const n = 1024 * 1024
	r := rand.New(rand.NewPCG(1, 2))
	rgb, gray := randBytes(r, 3*n), make([]uint8, n)
	cfg := sim.Config{Grid: kernel.Dim3{X: cdiv(n, 256)}, Block: kernel.Dim3{X: 256}}
	for b.Loop() {
		if err := sim.Run(cfg, lecture.Gray, rgb, gray, int32(n)); err != nil {
			b.Fatal(err)
		}
	}
	perThread(b, n)
}

func benchMatMul(b *testing.B, size int, fn, twin func(*kernel.Thread, []float32, []float32, []float32, int32, int32, int32), block, dyn int, checked bool) {
	r := rand.New(rand.NewPCG(1, 2))
	a, bm, c := randFloats(r, size*size), randFloats(r, size*size), make([]float32, size*size)
	s := int32(size)
	cfg := sim.Config{Grid: dim(cdiv(size, block), cdiv(size, block)), Block: dim(int32(block), int32(block)), DynamicSharedBytes: dyn, Checked: checked}
	k := sim.Kernel{Name: "matmul", Args: []any{a, bm, c, s, s, s}, Func: func(t *kernel.Thread) { fn(t, a, bm, c, s, s, s) }}
	if twin != nil {
		k.Checked = func(t *kernel.Thread) { twin(t, a, bm, c, s, s, s) }
	}
	for b.Loop() {
		if err := sim.Launch(cfg, k); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(2*float64(size*size*size)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
	perThread(b, size*size)
}

// BenchmarkTiledMatMul is the 16x16-tiled matmul at 64^3 (Numba's
// simulator: ~6.9 s) and 256^3, in default and checked mode.
func BenchmarkTiledMatMul(b *testing.B) {
	for _, size := range []int{64, 256} {
		b.Run(fmt.Sprint(size), func(b *testing.B) {
			benchMatMul(b, size, lecture.TiledMatMul, tiledMatMulChecked, Tile, 0, false)
		})
		b.Run(fmt.Sprint(size, "-checked"), func(b *testing.B) {
			benchMatMul(b, size, lecture.TiledMatMul, tiledMatMulChecked, Tile, 0, true)
		})
	}
	b.Run("256-dynamic", func(b *testing.B) {
		benchMatMul(b, 256, lecture.TiledMatMulDynamic, nil, Tile, 2*Tile*Tile*4, false)
	})
	b.Run("256-naive", func(b *testing.B) {
		benchMatMul(b, 256, lecture.MatMul, nil, Tile, 0, false)
	})
}

func BenchmarkSum(b *testing.B) {
	const n = 1 << 22
	r := rand.New(rand.NewPCG(1, 2))
	x, partial := randFloats(r, n), make([]float32, 256)
	cfg := sim.Config{Grid: kernel.Dim3{X: 256}, Block: kernel.Dim3{X: 256}}
	k := sim.Kernel{Name: "Sum", Func: func(t *kernel.Thread) { lecture.Sum(t, x, partial, n) }}
	for b.Loop() {
		if err := sim.Launch(cfg, k); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/n, "ns/element")
}

func BenchmarkHistogram(b *testing.B) {
	const n = 1 << 22
	r := rand.New(rand.NewPCG(1, 2))
	data, hist := randBytes(r, n), make([]uint32, lecture.Bins)
	cfg := sim.Config{Grid: kernel.Dim3{X: 256}, Block: kernel.Dim3{X: 256}}
	k := sim.Kernel{Name: "Histogram", Func: func(t *kernel.Thread) { lecture.Histogram(t, data, hist, n) }}
	for b.Loop() {
		if err := sim.Launch(cfg, k); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/n, "ns/element")
}

func BenchmarkScan(b *testing.B) {
	const n = 1 << 20
	x := make([]int32, n)
	for i := range x {
		x[i] = int32(i % 13)
	}
	for b.Loop() {
		if _, err := scan(x); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/n, "ns/element")
}
