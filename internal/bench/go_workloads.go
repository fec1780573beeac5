package bench

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"sync"

	"github.com/gocu-dev/gocu"
	"github.com/gocu-dev/gocu/internal/lecture"
	"github.com/gocu-dev/gocu/kernel"
)

// Kernels written in Go on the GPU: the lecture's kernels and the fast
// ones of internal/lecture, translated to CUDA C by gocu gen and launched
// through their generated typed launchers (compiled by NVRTC on the first
// launch, which is the checked run, before any timing). Sizes and peers are
// those of the CUDA C workloads they mirror.

var (
	grayPeers  = []Peer{{"CuPy RawKernel", "gray_4096_cupy_rawkernel_ms", Millis}, {"torch", "gray_4096_torch_ms", Millis}}
	cublasFP32 = []Peer{{"torch cuBLAS", "sgemm_4096_cublas_fp32_ms", Millis}}
	// The tensor-core kernels' peers are baseline_lowp.py's (compare with
	// its baseline_lowp.json): cuBLAS's bf16 GEMM and SDPA's flash backend
	// through torch, as TFLOP/s counted as the kernels count them.
	cublasBF16 = []Peer{{"torch cuBLAS", "matmul_4096_bf16_TFLOPs", TFLOPs}}
	sdpaFull   = []Peer{{"torch SDPA flash", "sdpa_flash_bf16_full_TFLOPs", TFLOPs}}
	sdpaCausal = []Peer{{"torch SDPA flash", "sdpa_flash_bf16_causal_TFLOPs", TFLOPs}}
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
	Register(Workload{Name: "gemm_bf16_go", Doc: "bf16 GEMM written in Go (lecture.MatMulBF16: GemmBF16, the warpgroup MMA, on sm_90a; GemmBF16MMA, mma.sync, elsewhere), 4096^3, float32 accumulation",
		Kind: Compute, Devices: CUDA, Suites: []string{"go"}, Roof: RoofBF16, Peers: cublasBF16, Setup: setupGoGemmBF16})
	Register(Workload{Name: "flash_attn_go", Doc: "flash-attention forward written in Go (lecture.FlashAttention128, mma.sync), bf16, B=4 H=16 S=4096 D=128",
		Kind: Compute, Devices: CUDA, Suites: []string{"go"}, Roof: RoofBF16, Reps: 10, Peers: sdpaFull, Setup: setupGoAttention(false)})
	Register(Workload{Name: "flash_attn_causal_go", Doc: "the same, causal",
		Kind: Compute, Devices: CUDA, Suites: []string{"go"}, Roof: RoofBF16, Reps: 10, Peers: sdpaCausal, Setup: setupGoAttention(true)})
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

// bf16Host draws n values uniform in [-1, 1), rounded to bf16.
func bf16Host(r *rand.Rand, n int) []kernel.BFloat16 {
	x := make([]kernel.BFloat16, n)
	for i := range x {
		x[i] = kernel.ToBFloat16(2*r.Float32() - 1)
	}
	return x
}

// bf16Buffers uploads host slices and makes outputs of n elements filled
// with NaN (on the GPU or the simulator).
func bf16Buffers(e *Env, c *closer, in [][]kernel.BFloat16, outs ...int) ([]*gocu.Buffer[kernel.BFloat16], error) {
	var bs []*gocu.Buffer[kernel.BFloat16]
	for _, h := range in {
		b, err := gocu.FromSlice(e.Dev, h)
		if err != nil {
			return nil, err
		}
		c.add(b.Free)
		bs = append(bs, b)
	}
	for _, n := range outs {
		nan := make([]kernel.BFloat16, n)
		for i := range nan {
			nan[i] = 0x7fff
		}
		b, err := gocu.FromSlice(e.Dev, nan)
		if err != nil {
			return nil, err
		}
		c.add(b.Free)
		bs = append(bs, b)
	}
	return bs, nil
}

// setupGoGemmBF16 times lecture.MatMulBF16 on n x n bf16 matrices, checked
// on 8 random rows and columns (and the first and last) against float64:
// each element within 2^-8 of its value (the one rounding to bf16) plus
// float32 summation noise.
func setupGoGemmBF16(e *Env) (*Case, error) {
	n := size(e, 4096, 512)
	ah, bh := bf16Host(e.Rand, n*n), bf16Host(e.Rand, n*n)
	var c closer
	bs, err := bf16Buffers(e, &c, [][]kernel.BFloat16{ah, bh}, n*n)
	if err != nil {
		return c.fail(err)
	}
	a, b, out := bs[0], bs[1], bs[2]
	return &Case{
		Run: func() error { return lecture.MatMulBF16(e.Dev, e.Stream, a, b, out, n, n, n) },
		Check: func() error {
			got, err := out.ToSlice()
			if err != nil {
				return err
			}
			return checkGemmBF16(ah, bh, got, n, e.Rand)
		},
		Close: c.close,
		Flops: 2 * float64(n) * float64(n) * float64(n), Bytes: 3 * 2 * float64(n) * float64(n),
	}, nil
}

func checkGemmBF16(a, b, c []kernel.BFloat16, n int, r *rand.Rand) error {
	var rows, cols []int
	for range 8 {
		rows, cols = append(rows, r.IntN(n)), append(cols, r.IntN(n))
	}
	rows, cols = append(rows, 0, n-1), append(cols, 0, n-1)
	var bad error
	var once sync.Once
	elem := func(i, j int) {
		var ref, mag float64
		for p := range n {
			x := float64(a[i*n+p].Float32()) * float64(b[p*n+j].Float32())
			ref += x
			mag += math.Abs(x)
		}
		got := float64(c[i*n+j].Float32())
		if d := math.Abs(got - ref); !(d <= math.Abs(ref)/256+tolFP32*mag) {
			once.Do(func() { bad = fmt.Errorf("bf16 GEMM: c[%d][%d] = %v, want %v (error %.3g)", i, j, got, ref, d) })
		}
	}
	parallel(len(rows)*n+len(cols)*n, 64, func(lo, hi int) {
		for t := lo; t < hi; t++ {
			if t < len(rows)*n {
				elem(rows[t/n], t%n)
			} else {
				u := t - len(rows)*n
				elem(u%n, cols[u/n])
			}
		}
	})
	return bad
}

// setupGoAttention times lecture.Attention at baseline_lowp.py's shape,
// B=4 H=16 S=4096 D=128 (small: B·H=2, S=256), counted as it counts:
// 4·B·H·S²·D floating-point operations, half when causal. The check
// compares 10 rows with a float64 softmax: each element within 2^-6 of its
// value plus 2^-7 of the weighted mean |v| (the kernel rounds the
// probabilities to bf16 for the tensor cores).
func setupGoAttention(causal bool) func(e *Env) (*Case, error) {
	return func(e *Env) (*Case, error) {
		bh, seq := size(e, 64, 2), size(e, 4096, 256)
		const dim = 128
		nel := bh * seq * dim
		qh, kh, vh := bf16Host(e.Rand, nel), bf16Host(e.Rand, nel), bf16Host(e.Rand, nel)
		var c closer
		bs, err := bf16Buffers(e, &c, [][]kernel.BFloat16{qh, kh, vh}, nel)
		if err != nil {
			return c.fail(err)
		}
		scale := float32(1 / math.Sqrt(dim))
		flops := 4 * float64(bh) * float64(seq) * float64(seq) * dim
		if causal {
			flops /= 2
		}
		return &Case{
			Run: func() error {
				return lecture.Attention(e.Dev, e.Stream, bs[0], bs[1], bs[2], bs[3], bh, seq, dim, scale, causal)
			},
			Check: func() error {
				got, err := bs[3].ToSlice()
				if err != nil {
					return err
				}
				rows := []int{0, seq - 1, bh*seq - 1}
				for range 7 {
					rows = append(rows, e.Rand.IntN(bh*seq))
				}
				return checkAttention(qh, kh, vh, got, rows, seq, dim, float64(scale), causal)
			},
			Close: c.close,
			Flops: flops, Bytes: 4 * 2 * float64(nel),
		}, nil
	}
}

func checkAttention(q, k, v, o []kernel.BFloat16, rows []int, seq, dim int, scale float64, causal bool) error {
	var bad error
	var once sync.Once
	parallel(len(rows), 1, func(lo, hi int) {
		for _, hr := range rows[lo:hi] {
			base, i := hr/seq*seq*dim, hr%seq
			n := seq
			if causal {
				n = i + 1
			}
			s := make([]float64, n)
			mx := math.Inf(-1)
			for j := range s {
				for c := range dim {
					s[j] += float64(q[base+i*dim+c].Float32()) * float64(k[base+j*dim+c].Float32())
				}
				s[j] *= scale
				mx = max(mx, s[j])
			}
			out, mag := make([]float64, dim), make([]float64, dim)
			sum := 0.0
			for j := range s {
				p := math.Exp(s[j] - mx)
				sum += p
				for c := range dim {
					x := float64(v[base+j*dim+c].Float32())
					out[c] += p * x
					mag[c] += p * math.Abs(x)
				}
			}
			for c := range dim {
				want, got := out[c]/sum, float64(o[base+i*dim+c].Float32())
				if d := math.Abs(got - want); !(d <= math.Abs(want)/64+mag[c]/sum/128+1e-4) {
					once.Do(func() {
						bad = fmt.Errorf("attention: o[%d][%d] = %v, want %v (error %.3g)", hr, c, got, want, d)
					})
					return
				}
			}
		}
	})
	return bad
}
