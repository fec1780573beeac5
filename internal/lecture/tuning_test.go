package lecture_test

import (
	"fmt"
	"math"
	"testing"

	"github.com/gocu-dev/gocu"
	"github.com/gocu-dev/gocu/internal/lecture"
	"github.com/gocu-dev/gocu/kernel"
)

// The tuning variants of the tensor-core kernels (docs/tensor-cores.md,
// "Tuning"): each is tested like the kernel it may replace, on the
// simulator at small sizes and on the GPU at full size, and benchmarked
// side by side, so that one GPU pass compares them all:
//
//	lecture.test -test.run '^$' -test.bench 'GPU(Flash|Gemm)Variants'

type flashLaunch func(d *gocu.Device, cfg gocu.Config, q, k, v, o *gocu.Buffer[kernel.BFloat16], seq int32, scale float32, causal bool) error

// flashVariant is one attention kernel, its head dimension and its launch
// geometry: seq/rows blocks per head of threads threads.
type flashVariant struct {
	name          string
	dim           int
	rows, threads int
	shared        int
	launch        flashLaunch
}

// flashVariants are the attention kernels; the first of each dimension is
// the one they may replace (tested in tensor_test.go).
var flashVariants = []flashVariant{
	{"FlashAttention128", 128, lecture.FlashBR, lecture.FlashThreads, lecture.Flash128Shared, lecture.LaunchFlashAttention128},
	{"FlashAttn128B64", 128, lecture.FAB64BR, lecture.FAB64Threads, lecture.FAB64Shared, lecture.LaunchFlashAttn128B64},
	{"FlashAttn128B128", 128, lecture.FAB128BR, lecture.FAB128Threads, lecture.FAB128Shared, lecture.LaunchFlashAttn128B128},
	{"FlashAttention64", 64, lecture.FlashBR, lecture.FlashThreads, lecture.Flash64Shared, lecture.LaunchFlashAttention64},
	{"FlashAttn64B64", 64, lecture.FA64B64BR, lecture.FA64B64Threads, lecture.FA64B64Shared, lecture.LaunchFlashAttn64B64},
}

// tuned returns the variants that tensor_test.go does not test.
func tunedFlash() []flashVariant {
	var out []flashVariant
	for _, f := range flashVariants {
		if f.name != "FlashAttention128" && f.name != "FlashAttention64" {
			out = append(out, f)
		}
	}
	return out
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
		for _, f := range tunedFlash() {
			dim := f.dim
			for _, s := range shapes {
				for _, causal := range []bool{false, true} {
					t.Run(fmt.Sprintf("%s/bh%d_s%d_causal=%v", f.name, s.bh, s.seq, causal), func(t *testing.T) {
						n := s.bh * s.seq * dim
						qh, kh, vh := randBF16s(r, n, 1), randBF16s(r, n, 1), randBF16s(r, n, 1)
						o := poisoned(t, d, n, kernel.BFloat16(0x7fff))
						scale := 1 / math.Sqrt(float64(dim))
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
	const bh, seq = 1, 256
	for _, f := range tunedFlash() {
		t.Run(f.name, func(t *testing.T) {
			r := newRand(t)
			dim := f.dim
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
// B=4 H=16 S=4096 (D=128 or 64), non-causal and causal, counted as
// baseline_lowp.py counts (4 B H S² D, halved when causal).
func BenchmarkGPUFlashVariants(b *testing.B) {
	d := needGPU(b)
	const bh, seq = 4 * 16, 4096
	r := newRand(b)
	n := bh * seq * 128
	q, k, v := upload(b, d, randBF16s(r, n, 1)), upload(b, d, randBF16s(r, n, 1)), upload(b, d, randBF16s(r, n, 1))
	o := poisoned(b, d, n, kernel.BFloat16(0))
	for _, f := range flashVariants {
		dim := f.dim
		for _, causal := range []bool{false, true} {
			name := f.name
			if causal {
				name += "Causal"
			}
			b.Run(name, func(b *testing.B) {
				g := newGPUTimer(b, d)
				t := g.median(b, func() error {
					return f.launch(d, f.config(bh, seq), q, k, v, o, seq, float32(1/math.Sqrt(float64(dim))), causal)
				})
				flop := 4 * float64(bh) * seq * seq * float64(dim)
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
	{"GemmBF16", lecture.BF16BM, lecture.BF16BN, lecture.BF16BK, lecture.BF16Threads, lecture.BF16Shared, lecture.LaunchGemmBF16},
	{"GemmBF16Pipe32", lecture.GP32BM, lecture.GP32BN, lecture.GP32BK, lecture.GP32Threads, lecture.GP32Shared, lecture.LaunchGemmBF16Pipe32},
	{"GemmBF16Pipe64", lecture.GP64BM, lecture.GP64BN, lecture.GP64BK, lecture.GP64Threads, lecture.GP64Shared, lecture.LaunchGemmBF16Pipe64},
	{"GemmBF16WG64", lecture.GW64BM, lecture.GW64BN, lecture.GW64BK, lecture.GW64Threads, lecture.GW64Shared, lecture.LaunchGemmBF16WG64},
	{"GemmBF16WG32", lecture.GW32BM, lecture.GW32BN, lecture.GW32BK, lecture.GW32Threads, lecture.GW32Shared, lecture.LaunchGemmBF16WG32},
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
			m, n, k := g.bm, g.bn, 12*g.bk
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

// needWGMMA skips a GPU run on GPUs without sm_90a's warpgroup MMA.
func needWGMMA(t testing.TB, d *gocu.Device) {
	t.Helper()
	if onGPU(d) {
		if major, minor := d.CUDA().ComputeCapability(); major != 9 || minor != 0 {
			t.Skipf("warpgroup MMA needs compute capability 9.0 (sm_90a); this GPU has %d.%d", major, minor)
		}
	}
}

// wgLayout places the elements of a wgmma operand (PTX ISA, "Shared
// Memory Matrix Layout"): the byte offset, before the swizzle, of element
// (mn, k) of a tile whose k-slice ks (16 deep) starts ks·kstep bytes in.
type wgLayout struct {
	sw       kernel.WGSwizzle
	mnMajor  bool
	lbo, sbo int32
	kstep    int32
}

func (l wgLayout) offset(mn, k int) int32 {
	ks, kk, m := int32(k/16), int32(k%16), int32(mn)
	s := map[kernel.WGSwizzle]int32{kernel.WGSwizzle128: 128, kernel.WGSwizzle64: 64, kernel.WGSwizzle32: 32}[l.sw]
	var off int32
	switch {
	case !l.mnMajor && l.sw == kernel.WGInterleave: // 8x8 core matrices
		off = m/8*l.sbo + m%8*16 + kk/8*l.lbo + kk%8*2
	case !l.mnMajor:
		off = m/8*l.sbo + m%8*s + kk*2
	case l.sw == kernel.WGInterleave:
		off = m/8*l.sbo + m%8*2 + kk%8*16 + kk/8*l.lbo
	default:
		e := s / 2
		off = m/e*l.lbo + m%e*2 + kk%8*s + kk/8*l.sbo
	}
	return ks*l.kstep + off
}

// swizzled applies the layout's swizzle to a shared address (relative to
// a 1024-byte-aligned start).
func (l wgLayout) swizzled(a int32) int32 {
	switch l.sw {
	case kernel.WGSwizzle128:
		return a ^ (a >> 3 & 0x70)
	case kernel.WGSwizzle64:
		return a ^ (a >> 3 & 0x30)
	case kernel.WGSwizzle32:
		return a ^ (a >> 3 & 0x10)
	}
	return a
}

// TestWGProbe runs lecture.WGProbe for one layout of each kind: on the
// simulator it checks package kernel's layouts against this file's, on
// the GPU against the tensor cores. The "swapped" cases put the stride of
// 8-row groups in lbo instead of sbo (and the column-block stride in sbo):
// if the GPU passes them and fails their partners, package kernel has the
// two fields the wrong way round; "same" cases pass either way.
func TestWGProbe(t *testing.T) {
	onDevices(t, func(t *testing.T, d *gocu.Device) {
		needWGMMA(t, d)
		r := newRand(t)
		const n = 128
		ah, bh := randBF16s(r, 64*32, 1), randBF16s(r, 32*n, 1)
		want, scale := make([]float32, 64*n), make([]float64, 64*n)
		for i := range 64 {
			for j := range n {
				var acc float32 // two k-steps, each rounded once
				for ks := range 2 {
					s := float64(acc)
					for k := 16 * ks; k < 16*ks+16; k++ {
						p := float64(ah[i*32+k].Float32()) * float64(bh[k*n+j].Float32())
						s += p
						scale[i*n+j] += math.Abs(p)
					}
					acc = float32(s)
				}
				want[i*n+j] = acc
			}
		}
		k128 := wgLayout{sw: kernel.WGSwizzle128, lbo: 16, sbo: 1024, kstep: 32}
		mn128 := wgLayout{sw: kernel.WGSwizzle128, mnMajor: true, lbo: 4096, sbo: 1024, kstep: 2048}
		for _, c := range []struct {
			name string
			a, b wgLayout
			swap [2]bool // the descriptor gets lbo and sbo swapped, the image not
		}{
			// a: 128-byte rows of k, 8-row groups 1024 apart, k-steps 32
			// bytes; b: rows of n in two 64-column blocks 4096 apart, 8-row
			// groups of k 1024 apart, k-steps 16 rows: GemmBF16WG64's layouts.
			{"K128/MN128", k128, mn128, [2]bool{}},
			{"K128same/MN128", wgLayout{sw: kernel.WGSwizzle128, lbo: 1024, sbo: 1024, kstep: 32}, mn128, [2]bool{}},
			{"K128/MN128swapped", k128, mn128, [2]bool{false, true}},
			// 64-byte rows of k (all 32), b stored n-major too: GemmBF16WG32's a.
			{"K64/K64", wgLayout{sw: kernel.WGSwizzle64, lbo: 16, sbo: 512, kstep: 32}, wgLayout{sw: kernel.WGSwizzle64, lbo: 16, sbo: 512, kstep: 32}, [2]bool{}},
			// 32-byte rows, one k-step each; b MN-major in 32-column blocks.
			{"K32/MN64", wgLayout{sw: kernel.WGSwizzle32, lbo: 16, sbo: 256, kstep: 2048}, wgLayout{sw: kernel.WGSwizzle64, mnMajor: true, lbo: 2048, sbo: 512, kstep: 1024}, [2]bool{}},
			// Core matrices of 8 rows of 16 bytes, no swizzle.
			{"Interleave", wgLayout{lbo: 128, sbo: 512, kstep: 256}, wgLayout{mnMajor: true, lbo: 128, sbo: 512, kstep: 256}, [2]bool{}},
		} {
			t.Run(c.name, func(t *testing.T) {
				img := make([]kernel.BFloat16, lecture.WGProbeShared/2)
				for i := range 64 * 32 {
					m, k := i/32, i%32
					img[c.a.swizzled(c.a.offset(m, k))/2] = ah[i]
				}
				for i := range 32 * n {
					k, j := i/n, i%n
					img[(8192+c.b.swizzled(c.b.offset(j, k)))/2] = bh[i]
				}
				da, db := c.a, c.b
				if c.swap[0] {
					da.lbo, da.sbo = da.sbo, da.lbo
				}
				if c.swap[1] {
					db.lbo, db.sbo = db.sbo, db.lbo
				}
				out := poisoned(t, d, 64*n, float32(math.NaN()))
				cfg := gocu.Config{Grid: gocu.Dim3{X: 1}, Block: gocu.Dim3{X: 128}, Shared: lecture.WGProbeShared}
				must(t, lecture.LaunchWGProbe(d, cfg, upload(t, d, img), out, da.sw, db.sw, da.lbo, da.sbo, da.kstep, db.lbo, db.sbo, db.kstep, db.mnMajor))
				got := download(t, out)
				bad := 0
				for i, v := range got {
					// The tensor cores sum a k-step with their own internal
					// precision: allow float32 rounding of the partial sums,
					// far below what a misplaced element costs.
					if !(math.Abs(float64(v-want[i])) <= 1e-5*scale[i]) {
						if bad++; bad <= 4 {
							t.Logf("d[%d][%d] = %v, want %v", i/n, i%n, v, want[i])
						}
					}
				}
				if swapped := c.swap[0] || c.swap[1]; swapped != (bad > 0) {
					if swapped {
						t.Errorf("the GPU agrees with lbo and sbo swapped: package kernel's layouts have them the wrong way round (%d of %d elements off otherwise)", 64*n-bad, 64*n)
					} else {
						t.Errorf("%d of %d elements wrong: the layout %+v / %+v is not the GPU's", bad, 64*n, c.a, c.b)
					}
				}
			})
		}
	})
}
