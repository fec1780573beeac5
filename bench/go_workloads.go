package bench

import (
	"errors"

	"github.com/gocu-dev/gocu"
	"github.com/gocu-dev/gocu/internal/lecture"
)

// Kernels written in Go on the GPU: the lecture's kernels and the fast
// ones of internal/lecture, translated to CUDA C by gocu gen and launched
// through their generated typed launchers (compiled by NVRTC on the first
// launch, which is the checked run, before any timing). Sizes and peers are
// those of the CUDA C workloads they mirror.

var (
	grayPeers  = []Peer{{"CuPy RawKernel", "gray_4096_cupy_rawkernel_ms", Millis}, {"torch", "gray_4096_torch_ms", Millis}}
	cublasFP32 = []Peer{{"torch cuBLAS", "sgemm_4096_cublas_fp32_ms", Millis}}
)

func init() {
	Register(Workload{Name: "gray_go", Doc: "lecture grayscale written in Go (lecture.Gray), 4096x4096 uint8, one pixel per thread",
		Kind: Bandwidth, Devices: CUDA, Suites: []string{"go", "lecture"}, Peers: grayPeers, Setup: setupGoGray(false)})
	Register(Workload{Name: "gray_fast", Doc: "GrayFast in Go: 16 pixels per thread in 128-bit loads and stores, 4096x4096 uint8",
		Kind: Bandwidth, Devices: CUDA, Suites: []string{"go"}, Peers: grayPeers, Setup: setupGoGray(true)})
	Register(Workload{Name: "matmul_naive_go", Doc: "lecture naive matmul written in Go (lecture.MatMul), 4096^3, 16x16 blocks",
		Kind: Compute, Devices: CUDA, Suites: []string{"go", "lecture"}, Reps: 10,
		Peers: []Peer{{"CuPy RawKernel", "sgemm_4096_naive_lecture_ms", Millis}},
		Setup: setupGoMatmul(func(e *Env, m *matrices, c *gocu.Buffer[float32]) func() error {
			n := int32(m.n)
			cfg := gocu.Grid2D(m.n, m.n, 16, 16)
			cfg.Stream = e.Stream
			return func() error { return lecture.LaunchMatMul(e.Dev, cfg, m.ba, m.bb, c, n, n, n) }
		})})
	Register(Workload{Name: "matmul_tiled_go", Doc: "lecture 16x16-tiled matmul written in Go (lecture.TiledMatMul), 4096^3, shared memory",
		Kind: Compute, Devices: CUDA, Suites: []string{"go", "lecture"}, Reps: 10,
		Peers: []Peer{{"CuPy RawKernel", "sgemm_4096_tiled16_lecture_ms", Millis}},
		Setup: setupGoMatmul(func(e *Env, m *matrices, c *gocu.Buffer[float32]) func() error {
			n := int32(m.n)
			cfg := gocu.Grid2D(m.n, m.n, lecture.Tile, lecture.Tile)
			cfg.Stream = e.Stream
			return func() error { return lecture.LaunchTiledMatMul(e.Dev, cfg, m.ba, m.bb, c, n, n, n) }
		})})
	Register(Workload{Name: "sgemm_go", Doc: "register-tiled SGEMM written in Go (lecture.SGEMM: 128x128 tiles, 8x8 per thread, float4), 4096^3",
		Kind: Compute, Devices: CUDA, Suites: []string{"go"}, Peers: cublasFP32,
		Setup: setupGoMatmul(func(e *Env, m *matrices, c *gocu.Buffer[float32]) func() error {
			n := int32(m.n)
			cfg := sgemmConfig(m.n, m.n)
			cfg.Stream = e.Stream
			return func() error { return lecture.LaunchSGEMM(e.Dev, cfg, m.ba, m.bb, c, n, n, n, 1, 0) }
		})})
}

// sgemmConfig is the launch of lecture.SGEMM for an m x n product: one
// block of GemmThreads threads per GemmBM x GemmBN tile of c (m and n
// multiples of 128, k of 8).
func sgemmConfig(m, n int) gocu.Config {
	return gocu.Config{Grid: gocu.Dim3{X: int32(n / lecture.GemmBN), Y: int32(m / lecture.GemmBM)}, Block: gocu.Dim3{X: lecture.GemmThreads}}
}

// setupGoGray times lecture.Gray (one pixel per thread) or lecture.GrayFast
// (16 pixels per thread; the side is a multiple of 16, so n is).
func setupGoGray(fast bool) func(e *Env) (*Case, error) {
	return func(e *Env) (*Case, error) {
		side := size(e, 4096, 512)
		n := side * side
		rgb := randBytes(e.Rand, 3*n)
		in, err := gocu.FromSlice(e.Dev, rgb)
		if err != nil {
			return nil, err
		}
		var c closer
		c.add(in.Free)
		out, err := gocu.Alloc[uint8](e.Dev, n)
		if err != nil {
			return c.fail(err)
		}
		c.add(out.Free)
		if err := out.Memory().MemsetD8(0xFF); err != nil {
			return c.fail(err)
		}
		var run func() error
		if fast {
			cfg := gocu.Grid1D(n/16, 256)
			cfg.Stream = e.Stream
			run = func() error { return lecture.LaunchGrayFast(e.Dev, cfg, in, out, int32(n)) }
		} else {
			cfg := gocu.Grid1D(n, 256)
			cfg.Stream = e.Stream
			run = func() error { return lecture.LaunchGray(e.Dev, cfg, in, out, int32(n)) }
		}
		return &Case{
			Run: run,
			Check: func() error {
				got, err := out.ToSlice()
				if err != nil {
					return err
				}
				return checkGray(rgb, got, n)
			},
			Close: c.close,
			Bytes: 4 * float64(n), Flops: 5 * float64(n), // as the CUDA C gray
		}, nil
	}
}

// setupGoMatmul times a matmul kernel written in Go on the shared inputs;
// launch returns the repetition, launching on e.Stream into c.
func setupGoMatmul(launch func(e *Env, m *matrices, c *gocu.Buffer[float32]) func() error) func(e *Env) (*Case, error) {
	return func(e *Env) (*Case, error) {
		m, err := matmulInputs(e)
		if err != nil {
			return nil, err
		}
		out, err := gocu.Alloc[float32](e.Dev, m.n*m.n)
		if err != nil {
			return nil, err
		}
		c := closer{out.Free}
		if err := out.Memory().MemsetD8(0xFF); err != nil { // NaN
			return c.fail(err)
		}
		if m.n%lecture.GemmBM != 0 || m.n%lecture.GemmBN != 0 {
			return c.fail(errors.New("bench: the matmul size is not a multiple of SGEMM's 128x128 tile"))
		}
		return matmulCase(e, m, out.Memory(), tolFP32, launch(e, m, out), c), nil
	}
}
