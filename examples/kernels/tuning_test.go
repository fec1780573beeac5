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
