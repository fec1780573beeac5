package kernels_test

import (
	"fmt"
	"math"
	"testing"

	"github.com/gocu-dev/gocu"
	"github.com/gocu-dev/gocu/examples/kernels"
	"github.com/gocu-dev/gocu/kernel"
)

// The tuning variants of the tensor-core kernels (docs/tensor-cores.md,
// "Tuning"): each is tested like the kernel it may replace, on the
// simulator at small sizes and on the GPU at full size, and benchmarked
// side by side, so that one GPU pass compares them all:
//
//	kernels.test -test.run '^$' -test.bench 'GPU(Flash|Gemm)Variants'

type flashLaunch func(d *gocu.Device, cfg gocu.Config, q, k, v, o *gocu.Buffer[kernel.BFloat16], seq int32, scale float32, causal bool) error

// flashVariant is one attention kernel of head dimension 128 and its
// launch geometry: seq/rows blocks per head of threads threads.
type flashVariant struct {
	name          string
	rows, threads int
	shared        int
	launch        flashLaunch
}

var flashVariants = []flashVariant{
	{"FlashAttention128", kernels.FlashBR, kernels.FlashThreads, kernels.Flash128Shared, kernels.LaunchFlashAttention128},
	{"FlashAttn128B64", kernels.FAB64BR, kernels.FAB64Threads, kernels.FAB64Shared, kernels.LaunchFlashAttn128B64},
	{"FlashAttn128B128", kernels.FAB128BR, kernels.FAB128Threads, kernels.FAB128Shared, kernels.LaunchFlashAttn128B128},
}

func (f flashVariant) config(bh, seq int) gocu.Config {
	return gocu.Config{Grid: gocu.Dim3{X: int32(seq / f.rows), Y: int32(bh)}, Block: gocu.Dim3{X: int32(f.threads)}, Shared: f.shared}
}

func TestFlashVariants(t *testing.T) {
	onDevices(t, func(t *testing.T, d *gocu.Device) {
		r := newRand(t)
		type shape struct{ bh, seq int }
		shapes := []shape{{2, 256}}
		if onGPU(d) {
			shapes = []shape{{2, 256}, {3, 640}, {64, 4096}}
		}
		const dim = 128
		for _, f := range flashVariants[1:] {
			for _, s := range shapes {
				for _, causal := range []bool{false, true} {
					t.Run(fmt.Sprintf("%s/bh%d_s%d_causal=%v", f.name, s.bh, s.seq, causal), func(t *testing.T) {
						n := s.bh * s.seq * dim
						qh, kh, vh := randBF16s(r, n, 1), randBF16s(r, n, 1), randBF16s(r, n, 1)
						o := poisoned(t, d, n, kernel.BFloat16(0x7fff))
						scale := 1 / math.Sqrt(dim)
						must(t, f.launch(d, f.config(s.bh, s.seq), upload(t, d, qh), upload(t, d, kh), upload(t, d, vh), o, int32(s.seq), float32(scale), causal))
						rows := sampleRows(r, s.bh*s.seq)
						if s.bh*s.seq > 512 {
							rows = append(rows, 1, s.seq-1, s.seq, 2*s.seq-1)
						}
						ref, mag := attentionRefRows(qh, kh, vh, rows, s.seq, dim, scale, causal)
						compareAttention(t, download(t, o), ref, mag, dim)
					})
				}
			}
		}
	})
}

// TestFlashVariantsRaceFree runs each variant once in the simulator's
// checked mode, causal (the masked and the unmasked tile bodies).
func TestFlashVariantsRaceFree(t *testing.T) {
	d := simDev(t)
	const bh, seq, dim = 1, 256, 128
	for _, f := range flashVariants[1:] {
		t.Run(f.name, func(t *testing.T) {
			r := newRand(t)
			n := bh * seq * dim
			qh, kh, vh := randBF16s(r, n, 1), randBF16s(r, n, 1), randBF16s(r, n, 1)
			o := poisoned(t, d, n, kernel.BFloat16(0x7fff))
			cfg := f.config(bh, seq)
			cfg.Checked = true
			must(t, f.launch(d, cfg, upload(t, d, qh), upload(t, d, kh), upload(t, d, vh), o, seq, 0.125, true))
			rows := sampleRows(r, seq)
			ref, mag := attentionRefRows(qh, kh, vh, rows, seq, dim, 0.125, true)
			compareAttention(t, download(t, o), ref, mag, dim)
		})
	}
}

// BenchmarkGPUFlashVariants times every variant at torch's peer shape,
// B=4 H=16 S=4096 D=128, non-causal and causal, counted as
// baseline_lowp.py counts (4 B H S² D, halved when causal).
func BenchmarkGPUFlashVariants(b *testing.B) {
	d := needGPU(b)
	const bh, seq, dim = 4 * 16, 4096, 128
	r := newRand(b)
	n := bh * seq * dim
	q, k, v := upload(b, d, randBF16s(r, n, 1)), upload(b, d, randBF16s(r, n, 1)), upload(b, d, randBF16s(r, n, 1))
	o := poisoned(b, d, n, kernel.BFloat16(0))
	for _, f := range flashVariants {
		for _, causal := range []bool{false, true} {
			name := f.name
			if causal {
				name += "Causal"
			}
			b.Run(name, func(b *testing.B) {
				g := newGPUTimer(b, d)
				t := g.median(b, func() error {
					return f.launch(d, f.config(bh, seq), q, k, v, o, seq, float32(1/math.Sqrt(dim)), causal)
				})
				flop := 4 * float64(bh) * seq * seq * dim
				if causal {
					flop /= 2
				}
				report(b, t, flop, "TFLOP/s")
			})
		}
	}
}

type gemmLaunch func(d *gocu.Device, cfg gocu.Config, a, b, c *gocu.Buffer[kernel.BFloat16], m, n, k int32) error

// gemmVariant is one bf16 GEMM and its launch geometry.
type gemmVariant struct {
	name            string
	bm, bn, bk      int
	threads, shared int
	launch          gemmLaunch
}

var gemmVariants = []gemmVariant{
	{"GemmBF16", kernels.BF16BM, kernels.BF16BN, kernels.BF16BK, kernels.BF16Threads, kernels.BF16Shared, kernels.LaunchGemmBF16},
	{"GemmBF16Pipe32", kernels.GP32BM, kernels.GP32BN, kernels.GP32BK, kernels.GP32Threads, kernels.GP32Shared, kernels.LaunchGemmBF16Pipe32},
	{"GemmBF16Pipe64", kernels.GP64BM, kernels.GP64BN, kernels.GP64BK, kernels.GP64Threads, kernels.GP64Shared, kernels.LaunchGemmBF16Pipe64},
}

func (g gemmVariant) config(m, n int) gocu.Config {
	return gocu.Config{Grid: gocu.Dim3{X: cdiv(n, g.bn), Y: int32(m / g.bm)}, Block: gocu.Dim3{X: int32(g.threads)}, Shared: g.shared}
}

func TestGemmVariants(t *testing.T) {
	onDevices(t, func(t *testing.T, d *gocu.Device) {
		r := newRand(t)
		for _, g := range gemmVariants[1:] {
			// Every k fits the stage depth; n past a block's columns and not
			// a multiple of the block tile checks the zero fill.
			shapes := [][3]int{{g.bm, g.bn, 4 * g.bk}, {2 * g.bm, g.bn + 8, g.bk}}
			if onGPU(d) {
				shapes = append(shapes, [3]int{512, 1000, 3 * g.bk}, [3]int{4096, 4096, 4096})
			}
			for _, s := range shapes {
				m, n, k := s[0], s[1], s[2]
				t.Run(fmt.Sprintf("%s/%dx%dx%d", g.name, m, n, k), func(t *testing.T) {
					ah, bh := randBF16s(r, m*k, 1), randBF16s(r, k*n, 1)
					c := poisoned(t, d, m*n, kernel.BFloat16(0x7fff))
					must(t, g.launch(d, g.config(m, n), upload(t, d, ah), upload(t, d, bh), c, int32(m), int32(n), int32(k)))
					compareRows(t, "c", download(t, c), gemmRefRows(ah, bh, sampleRows(r, m), n, k), n, 1.0/256, 1e-3*math.Sqrt(float64(k)), 5e-3)
				})
			}
		}
	})
}

// TestGemmVariantsRaceFree runs each variant in the simulator's checked
// mode with more k-tiles than stages, so that every stage is refilled.
func TestGemmVariantsRaceFree(t *testing.T) {
	d := simDev(t)
	for _, g := range gemmVariants[1:] {
		t.Run(g.name, func(t *testing.T) {
			r := newRand(t)
			m, n, k := g.bm, g.bn, 6*g.bk
			ah, bh := randBF16s(r, m*k, 1), randBF16s(r, k*n, 1)
			c := poisoned(t, d, m*n, kernel.BFloat16(0x7fff))
			cfg := g.config(m, n)
			cfg.Checked = true
			must(t, g.launch(d, cfg, upload(t, d, ah), upload(t, d, bh), c, int32(m), int32(n), int32(k)))
			compareRows(t, "c", download(t, c), gemmRefRows(ah, bh, sampleRows(r, m), n, k), n, 1.0/256, 1e-2, 5e-3)
		})
	}
}

// BenchmarkGPUGemmVariants times every variant at 4096^3; the peer is
// cuBLAS through torch (baseline_lowp.py's matmul_4096_bf16_TFLOPs).
func BenchmarkGPUGemmVariants(b *testing.B) {
	d := needGPU(b)
	const n = 4096
	r := newRand(b)
	a, bm := upload(b, d, randBF16s(r, n*n, 1)), upload(b, d, randBF16s(r, n*n, 1))
	c := poisoned(b, d, n*n, kernel.BFloat16(0))
	for _, g := range gemmVariants {
		b.Run(g.name, func(b *testing.B) {
			tm := newGPUTimer(b, d)
			t := tm.median(b, func() error { return g.launch(d, g.config(n, n), a, bm, c, n, n, n) })
			report(b, t, 2*float64(n)*n*n, "TFLOP/s")
		})
	}
}
