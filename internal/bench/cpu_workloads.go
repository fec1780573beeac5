package bench

import (
	"fmt"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas32"

	"github.com/gocu-dev/gocu/array"
	"github.com/gocu-dev/gocu/internal/lecture"
	"github.com/gocu-dev/gocu/kernel"
	"github.com/gocu-dev/gocu/sim"
)

// Workloads of the CPU: the ceilings of the machine (for the simulator and
// for the array package's CPU backend, whose workloads register with
// Devices: CPU), and the lecture's Go kernels on the simulator.

func init() {
	Register(Workload{Name: "copy", Doc: "Go copy of 256 MiB on all cores (bytes read + written)", Kind: Bandwidth, Devices: Sim | CPU,
		Ceiling: MemoryRoof, Reps: 10, Setup: setupCPUCopy})
	Register(Workload{Name: "sgemm_fp32", Doc: "gonum SGEMM 1024^3 (pure Go BLAS)", Kind: Compute, Devices: Sim,
		Ceiling: FP32Roof, Reps: 5, Warmup: 1, Setup: setupGonumSgemm})
	// On the CPU the roof is the fastest SGEMM there is in Go: package
	// array's (a packed GEMM with an AVX2/FMA micro-kernel, about 8x
	// gonum's; gonum's BLAS on machines without AVX2), so that no workload
	// sits above its roof.
	Register(Workload{Name: "sgemm_fp32", Doc: "SGEMM 1024^3 of package array's CPU backend (packed, AVX2/FMA)", Kind: Compute, Devices: CPU,
		Ceiling: FP32Roof, Reps: 5, Warmup: 1, Setup: setupArrayMatmul(cpuArrays, array.FP32)})
	Register(Workload{Name: "gray", Doc: "lecture grayscale kernel in Go, 4096x4096, on the simulator (time per thread)", Kind: Bandwidth,
		Devices: Sim, Suites: []string{"lecture"}, Unit: "ns", Reps: 5, Warmup: 1, Setup: setupSimGray})
	for _, n := range []int{64, 256} {
		Register(Workload{Name: fmt.Sprintf("matmul_tiled_%d", n), Doc: fmt.Sprintf("lecture 16x16-tiled matmul in Go, %d^3, on the simulator", n),
			Kind: Compute, Devices: Sim, Suites: []string{"lecture"}, Reps: 5, Warmup: 1, Setup: setupSimTiled(n)})
	}
}

func setupCPUCopy(e *Env) (*Case, error) {
	n := size(e, 256<<20, 4<<20)
	src, dst := randBytes(e.Rand, n), make([]byte, n)
	poisonBytes(dst)
	return &Case{
		Run: func() error {
			parallel(n, 1<<20, func(lo, hi int) { copy(dst[lo:hi], src[lo:hi]) })
			return nil
		},
		Check: func() error { return sameBytes("copy", dst, src) },
		Close: func() error { return nil },
		Bytes: 2 * float64(n),
	}, nil
}

func setupGonumSgemm(e *Env) (*Case, error) {
	n := size(e, 1024, 128)
	a, b, c := randFloats(e.Rand, n*n), randFloats(e.Rand, n*n), make([]float32, n*n)
	poisonBytes(asBytes(c))
	ga := blas32.General{Rows: n, Cols: n, Stride: n, Data: a}
	gb := blas32.General{Rows: n, Cols: n, Stride: n, Data: b}
	gc := blas32.General{Rows: n, Cols: n, Stride: n, Data: c}
	return &Case{
		Run: func() error {
			blas32.Gemm(blas.NoTrans, blas.NoTrans, 1, ga, gb, 0, gc)
			return nil
		},
		Check: func() error { return checkMatmul(a, b, c, n, n, n, tolFP32, e.Rand) },
		Close: func() error { return nil },
		Flops: 2 * float64(n) * float64(n) * float64(n), Bytes: 12 * float64(n) * float64(n),
	}, nil
}

func setupSimGray(e *Env) (*Case, error) {
	side := size(e, 4096, 256)
	n := side * side
	rgb, gray := randBytes(e.Rand, 3*n), make([]byte, n)
	poisonBytes(gray)
	cfg := sim.Config{Grid: kernel.Dim3{X: int32((n + 255) / 256)}, Block: kernel.Dim3{X: 256}}
	k := sim.Kernel{Name: "Gray", Func: func(t *kernel.Thread) { lecture.Gray(t, rgb, gray, int32(n)) }}
	return &Case{
		Run:   func() error { return sim.Launch(cfg, k) },
		Check: func() error { return checkGray(rgb, gray, n) },
		Close: func() error { return nil },
		Bytes: 4 * float64(n), Flops: 5 * float64(n), Ops: n,
	}, nil
}

func setupSimTiled(full int) func(e *Env) (*Case, error) {
	return func(e *Env) (*Case, error) {
		n := full
		if e.Small {
			n = full / 4 // 16 and 64: one tile, then several
		}
		a, b, c := randFloats(e.Rand, n*n), randFloats(e.Rand, n*n), make([]float32, n*n)
		poisonBytes(asBytes(c))
		tiles := int32((n + lecture.Tile - 1) / lecture.Tile)
		s := int32(n)
		cfg := sim.Config{Grid: kernel.Dim3{X: tiles, Y: tiles}, Block: kernel.Dim3{X: lecture.Tile, Y: lecture.Tile}}
		k := sim.Kernel{Name: "TiledMatMul", Func: func(t *kernel.Thread) { lecture.TiledMatMul(t, a, b, c, s, s, s) }}
		return &Case{
			Run:   func() error { return sim.Launch(cfg, k) },
			Check: func() error { return checkMatmul(a, b, c, n, n, n, tolFP32, e.Rand) },
			Close: func() error { return nil },
			Flops: 2 * float64(n) * float64(n) * float64(n), Bytes: 12 * float64(n) * float64(n),
		}, nil
	}
}
