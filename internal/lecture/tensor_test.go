package lecture_test

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"sync"
	"testing"

	"github.com/gocu-dev/gocu"
	"github.com/gocu-dev/gocu/internal/lecture"
	"github.com/gocu-dev/gocu/kernel"
	"github.com/gocu-dev/gocu/launch"
	"github.com/gocu-dev/gocu/meta"
)

// Tests and benchmarks of the tensor-core kernels: the bf16 GEMMs
// (GemmBF16 on the warpgroup MMA, GemmBF16MMA on mma.sync) and the
// flash-attention forward (FlashAttention128 and FlashAttention64). On
// the simulator they run at small sizes; on the GPU at full size, checked
// against float64 references on sampled rows. Every failure message says
// how far off the result is (relative Frobenius error and the first
// mismatches), to diagnose a GPU run from its log alone.

func randBF16s(r *rand.Rand, n int, scale float64) []kernel.BFloat16 {
	s := make([]kernel.BFloat16, n)
	for i := range s {
		s[i] = kernel.ToBFloat16(float32(r.NormFloat64() * scale))
	}
	return s
}

// parallelRows runs f(i) for i in rows on all cores.
func parallelRows(rows []int, f func(i int)) {
	var wg sync.WaitGroup
	next := make(chan int)
	for range runtime.GOMAXPROCS(0) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				f(i)
			}
		}()
	}
	for _, i := range rows {
		next <- i
	}
	close(next)
	wg.Wait()
}

// sampleRows returns all rows of an m-row result below 512, or 64 rows
// spread over it (the first, the last, random ones between).
func sampleRows(r *rand.Rand, m int) []int {
	if m <= 512 {
		rows := make([]int, m)
		for i := range rows {
			rows[i] = i
		}
		return rows
	}
	rows := []int{0, m - 1}
	for len(rows) < 64 {
		rows = append(rows, r.IntN(m))
	}
	return rows
}

// compareRows checks got against ref on the rows given (each of width n):
// every element must be within tol*|ref| + atol, and the relative
// Frobenius error under frob. It reports the first mismatches.
func compareRows(t *testing.T, what string, got []kernel.BFloat16, ref map[int][]float64, n int, tol, atol, frob float64) {
	t.Helper()
	var num, den float64
	bad := 0
	for i, row := range ref {
		for j, want := range row {
			g := float64(got[i*n+j].Float32())
			d := g - want
			num += d * d
			den += want * want
			if !(math.Abs(d) <= tol*math.Abs(want)+atol) {
				if bad++; bad <= 8 {
					t.Errorf("%s[%d][%d] = %.6g, want %.6g (diff %.3g)", what, i, j, g, want, d)
				}
			}
		}
	}
	rel := math.Sqrt(num / den)
	t.Logf("%s: relative Frobenius error %.3g on %d sampled rows", what, rel, len(ref))
	if bad > 0 || !(rel <= frob) {
		t.Fatalf("%s: %d elements out of tolerance; relative error %.3g (want <= %.3g)", what, bad, rel, frob)
	}
}

// gemmRefRows computes rows of a b in float64.
func gemmRefRows(a, b []kernel.BFloat16, rows []int, n, k int) map[int][]float64 {
	ref := make(map[int][]float64, len(rows))
	var mu sync.Mutex
	bf := make([]float64, len(b))
	for i, v := range b {
		bf[i] = float64(v.Float32())
	}
	parallelRows(rows, func(i int) {
		row := make([]float64, n)
		for kk := range k {
			av := float64(a[i*k+kk].Float32())
			bk := bf[kk*n : kk*n+n]
			for j := range n {
				row[j] += av * bk[j]
			}
		}
		mu.Lock()
		ref[i] = row
		mu.Unlock()
	})
	return ref
}

type gemmLaunch func(d *gocu.Device, cfg gocu.Config, a, b, c gocu.Slice[kernel.BFloat16], m, n, k int32) error

// gemmKernel is one bf16 GEMM of the package: its stage depth (k must be
// a multiple), its launch, and whether it needs the warpgroup MMA.
type gemmKernel struct {
	name   string
	bk     int
	config func(m, n int) gocu.Config
	launch gemmLaunch
	wgmma  bool
}

var gemmKernels = []gemmKernel{
	{"GemmBF16", lecture.BF16BK, lecture.GemmBF16Config, lecture.LaunchGemmBF16, true},
	{"GemmBF16MMA", lecture.MMABK, lecture.GemmBF16MMAConfig, lecture.LaunchGemmBF16MMA, false},
}

// TestGemmBF16 runs both GEMMs. Every k is a multiple of the stage depth;
// n past a block's columns and not a multiple of its 256 checks the zero
// fill. On a GPU without sm_90a, GemmBF16's launch must fail with
// launch.ErrNeedsSM90a, before anything runs.
func TestGemmBF16(t *testing.T) {
	onDevices(t, func(t *testing.T, d *gocu.Device) {
		r := newRand(t)
		for _, g := range gemmKernels {
			shapes := [][3]int{{128, 128, 2 * g.bk}, {256, 264, g.bk}}
			if onGPU(d) {
				shapes = append(shapes, [3]int{512, 1000, 3 * g.bk}, [3]int{4096, 4096, 4096})
			}
			for _, s := range shapes {
				m, n, k := s[0], s[1], s[2]
				t.Run(fmt.Sprintf("%s/%dx%dx%d", g.name, m, n, k), func(t *testing.T) {
					ah, bh := randBF16s(r, m*k, 1), randBF16s(r, k*n, 1)
					c := poisoned(t, d, m*n, kernel.BFloat16(0x7fff)) // NaN: an unwritten element fails
					err := g.launch(d, g.config(m, n), upload(t, d, ah), upload(t, d, bh), c, int32(m), int32(n), int32(k))
					if g.wgmma && !lecture.HasWGMMA(d) {
						if !errors.Is(err, launch.ErrNeedsSM90a) {
							t.Fatalf("%s on a GPU without sm_90a: %v, want launch.ErrNeedsSM90a", g.name, err)
						}
						t.Skipf("%s needs sm_90a: %v", g.name, err)
					}
					must(t, err)
					// The result is rounded once to bf16 (8 bits): within 2^-8
					// relative, plus float32 summation-order noise.
					compareRows(t, "c", download(t, c), gemmRefRows(ah, bh, sampleRows(r, m), n, k), n, 1.0/256, 1e-3*math.Sqrt(float64(k)), 5e-3)
				})
			}
		}
	})
}

// TestGemmBF16RaceFree runs both GEMMs in the simulator's checked mode
// with more k-tiles than stages, so that every stage is refilled: a stage
// is refilled only after every warp passed the barrier that follows its
// last use (after every warpgroup waited for the MMAs that read it), no
// LdMatrix or MMA reads a stage before the CpAsyncWait that completes it,
// and GemmBF16 fences the copies (FenceProxyAsync) before its MMAs read
// them.
func TestGemmBF16RaceFree(t *testing.T) {
	d := simDev(t)
	for _, g := range gemmKernels {
		t.Run(g.name, func(t *testing.T) {
			r := newRand(t)
			m, n, k := 128, 256, 12*g.bk
			ah, bh := randBF16s(r, m*k, 1), randBF16s(r, k*n, 1)
			c := poisoned(t, d, m*n, kernel.BFloat16(0x7fff))
			cfg := g.config(m, n)
			cfg.Checked = true
			must(t, g.launch(d, cfg, upload(t, d, ah), upload(t, d, bh), c, int32(m), int32(n), int32(k)))
			compareRows(t, "c", download(t, c), gemmRefRows(ah, bh, sampleRows(r, m), n, k), n, 1.0/256, 1e-2, 5e-3)
		})
	}
}

// TestMatMulBF16 runs the host function that picks the GEMM for the
// device, and checks that it refuses shapes the kernels do not take.
func TestMatMulBF16(t *testing.T) {
	onDevices(t, func(t *testing.T, d *gocu.Device) {
		r := newRand(t)
		const m, n, k = 256, 136, 128
		ah, bh := randBF16s(r, m*k, 1), randBF16s(r, k*n, 1)
		a, b := upload(t, d, ah), upload(t, d, bh)
		c := poisoned(t, d, m*n, kernel.BFloat16(0x7fff))
		must(t, lecture.MatMulBF16(d, nil, a, b, c, m, n, k))
		compareRows(t, "c", download(t, c), gemmRefRows(ah, bh, sampleRows(r, m), n, k), n, 1.0/256, 1e-3*math.Sqrt(k), 5e-3)
		for _, s := range [][3]int{{100, n, k}, {m, 130, k}, {m, n, 16}, {m, n, 0}, {2 * m, n, k}} {
			if err := lecture.MatMulBF16(d, nil, a, b, c, s[0], s[1], s[2]); err == nil {
				t.Errorf("MatMulBF16 of %dx%d by %dx%d: no error", s[0], s[2], s[2], s[1])
			}
		}
	})
}

// TestArchSpecific checks what gocu gen recorded per kernel: the kernels
// with warpgroup MMAs, and only those, are marked for sm_90a, which is
// what the launchers check before they build for a GPU.
func TestArchSpecific(t *testing.T) {
	for _, c := range []struct {
		name string
		fn   any
		want bool
	}{
		{"GemmBF16", lecture.GemmBF16, true},
		{"WGProbe", lecture.WGProbe, true},
		{"GemmBF16MMA", lecture.GemmBF16MMA, false},
		{"FlashAttention128", lecture.FlashAttention128, false},
		{"FlashAttention64", lecture.FlashAttention64, false},
		{"SGEMM", lecture.SGEMM, false},
	} {
		m, k, ok := meta.Lookup(c.fn)
		if !ok {
			t.Fatalf("%s is not registered", c.name)
		}
		if k.ArchSpecific != c.want {
			t.Errorf("%s: ArchSpecific %v, want %v", c.name, k.ArchSpecific, c.want)
		}
		if !m.ArchSpecific {
			t.Errorf("the module of %s is not ArchSpecific", c.name)
		}
	}
}

// BenchmarkGPUGemmBF16 times GemmBF16 at 4096^3. The peer is cuBLAS's bf16
// GEMM through torch (baseline_lowp.py's matmul_4096_bf16_TFLOPs: 712.7
// TFLOP/s on the H100 on 2026-11-25, and GemmBF16 605.0, 0.85 of it); run
// it in the same device call.
func BenchmarkGPUGemmBF16(b *testing.B) { benchGemm(b, gemmKernels[0]) }

// BenchmarkGPUGemmBF16MMA times GemmBF16MMA at 4096^3 (340.1 TFLOP/s on
// the H100 on 2026-11-25, 0.48 of cuBLAS).
func BenchmarkGPUGemmBF16MMA(b *testing.B) { benchGemm(b, gemmKernels[1]) }

func benchGemm(b *testing.B, g gemmKernel) {
	d := needGPU(b)
	if g.wgmma && !lecture.HasWGMMA(d) {
		b.Skipf("%s needs sm_90a (compute capability 9.0)", g.name)
	}
	const n = 4096
	r := newRand(b)
	a, bm := upload(b, d, randBF16s(r, n*n, 1)), upload(b, d, randBF16s(r, n*n, 1))
	c := poisoned(b, d, n*n, kernel.BFloat16(0))
	tm := newGPUTimer(b, d)
	t := tm.median(b, func() error { return g.launch(d, g.config(n, n), a, bm, c, n, n, n) })
	report(b, t, 2*float64(n)*n*n, "TFLOP/s")
}

// BenchmarkSimGemmBF16 is the simulator figure: a 128^3 product
// on the simulator (all cores), GemmBF16 and GemmBF16MMA, default and
// checked mode.
func BenchmarkSimGemmBF16(b *testing.B) {
	d := simDev(b)
	const n = 128
	r := newRand(b)
	a, bm := upload(b, d, randBF16s(r, n*n, 1)), upload(b, d, randBF16s(r, n*n, 1))
	c := poisoned(b, d, n*n, kernel.BFloat16(0))
	for _, g := range gemmKernels {
		for _, checked := range []bool{false, true} {
			name := g.name
			if checked {
				name += "-checked"
			}
			b.Run(name, func(b *testing.B) {
				cfg := g.config(n, n)
				cfg.Checked = checked
				for b.Loop() {
					must(b, g.launch(d, cfg, a, bm, c, n, n, n))
				}
			})
		}
	}
}

// attentionRefRows computes rows of softmax(q kᵀ scale) v in float64, for
// the (head, row) pairs given as head*seq+row. mag holds, per element, the
// same weighted mean of |v|: the scale of the rounding error a kernel
// makes when it rounds the probabilities to bf16 for the tensor cores.
func attentionRefRows(q, k, v []kernel.BFloat16, rows []int, seq, dim int, scale float64, causal bool) (ref, mag map[int][]float64) {
	ref, mag = make(map[int][]float64, len(rows)), make(map[int][]float64, len(rows))
	var mu sync.Mutex
	parallelRows(rows, func(hr int) {
		h, i := hr/seq, hr%seq
		base := h * seq * dim
		n := seq
		if causal {
			n = i + 1
		}
		s := make([]float64, n)
		mx := math.Inf(-1)
		for j := range n {
			dot := 0.0
			for c := range dim {
				dot += float64(q[base+i*dim+c].Float32()) * float64(k[base+j*dim+c].Float32())
			}
			s[j] = dot * scale
			mx = max(mx, s[j])
		}
		out, abs := make([]float64, dim), make([]float64, dim)
		sum := 0.0
		for j := range n {
			p := math.Exp(s[j] - mx)
			sum += p
			for c := range dim {
				x := float64(v[base+j*dim+c].Float32())
				out[c] += p * x
				abs[c] += p * math.Abs(x)
			}
		}
		for c := range out {
			out[c] /= sum
			abs[c] /= sum
		}
		mu.Lock()
		ref[hr], mag[hr] = out, abs
		mu.Unlock()
	})
	return ref, mag
}

// compareAttention checks an attention output against attentionRefRows:
// each element within 2^-6 of its value plus 2^-7 of its weighted mean
// |v| (bf16 probabilities are off by up to 2^-9 each, and a row of few
// keys does not average that out), and the relative Frobenius error under
// 1e-2.
func compareAttention(t *testing.T, got []kernel.BFloat16, ref, mag map[int][]float64, dim int) {
	t.Helper()
	var num, den float64
	bad := 0
	for i, row := range ref {
		for j, want := range row {
			g := float64(got[i*dim+j].Float32())
			d := g - want
			num += d * d
			den += want * want
			if !(math.Abs(d) <= math.Abs(want)/64+mag[i][j]/128+1e-4) {
				if bad++; bad <= 8 {
					t.Errorf("o[%d][%d] = %.6g, want %.6g (diff %.3g, weighted |v| %.3g)", i, j, g, want, d, mag[i][j])
				}
			}
		}
	}
	rel := math.Sqrt(num / den)
	t.Logf("o: relative Frobenius error %.3g on %d sampled rows", rel, len(ref))
	if bad > 0 || !(rel <= 1e-2) {
		t.Fatalf("o: %d elements out of tolerance; relative error %.3g (want <= 0.01)", bad, rel)
	}
}

func TestFlashAttention(t *testing.T) {
	onDevices(t, func(t *testing.T, d *gocu.Device) {
		r := newRand(t)
		type shape struct{ bh, seq int }
		shapes := []shape{{2, 256}}
		if onGPU(d) {
			shapes = []shape{{2, 256}, {3, 640}, {64, 4096}}
		}
		for _, s := range shapes {
			for _, dim := range []int{64, 128} {
				for _, causal := range []bool{false, true} {
					t.Run(fmt.Sprintf("bh%d_s%d_d%d_causal=%v", s.bh, s.seq, dim, causal), func(t *testing.T) {
						n := s.bh * s.seq * dim
						qh, kh, vh := randBF16s(r, n, 1), randBF16s(r, n, 1), randBF16s(r, n, 1)
						q, k, v := upload(t, d, qh), upload(t, d, kh), upload(t, d, vh)
						o := poisoned(t, d, n, kernel.BFloat16(0x7fff))
						scale := 1 / math.Sqrt(float64(dim))
						must(t, lecture.Attention(d, nil, q, k, v, o, s.bh, s.seq, dim, float32(scale), causal))
						got := download(t, o)
						rows := sampleRows(r, s.bh*s.seq)
						if s.bh*s.seq > 512 {
							rows = append(rows, 1, s.seq-1, s.seq, 2*s.seq-1) // first rows see few keys when causal
						}
						ref, mag := attentionRefRows(qh, kh, vh, rows, s.seq, dim, scale, causal)
						compareAttention(t, got, ref, mag, dim)
					})
				}
			}
		}
		// Shapes the kernels do not take.
		q := poisoned(t, d, 2*256*128, kernel.BFloat16(0))
		for _, c := range [][3]int{{2, 256, 96}, {2, 100, 128}, {2, 0, 128}, {4, 256, 128}} {
			if err := lecture.Attention(d, nil, q, q, q, q, c[0], c[1], c[2], 1, false); err == nil {
				t.Errorf("Attention of %d x %d x %d: no error", c[0], c[1], c[2])
			}
		}
	})
}

// TestFlashAttentionRaceFree runs the attention kernels in the
// simulator's checked mode, causal (the masked and the unmasked tile
// bodies): the K and V double buffer is refilled only after the barrier
// that follows its last use, and nothing reads a tile before its
// CpAsyncWait.
func TestFlashAttentionRaceFree(t *testing.T) {
	d := simDev(t)
	const bh, seq = 1, 256
	for _, dim := range []int{64, 128} {
		t.Run(fmt.Sprint("d", dim), func(t *testing.T) {
			r := newRand(t)
			n := bh * seq * dim
			qh, kh, vh := randBF16s(r, n, 1), randBF16s(r, n, 1), randBF16s(r, n, 1)
			o := poisoned(t, d, n, kernel.BFloat16(0x7fff))
			cfg := lecture.FlashAttentionConfig(bh, seq, dim)
			cfg.Checked = true
			q, k, v := upload(t, d, qh), upload(t, d, kh), upload(t, d, vh)
			if dim == 64 {
				must(t, lecture.LaunchFlashAttention64(d, cfg, q, k, v, o, seq, 0.125, true))
			} else {
				must(t, lecture.LaunchFlashAttention128(d, cfg, q, k, v, o, seq, 0.125, true))
			}
			rows := sampleRows(r, seq)
			ref, mag := attentionRefRows(qh, kh, vh, rows, seq, dim, 0.125, true)
			compareAttention(t, download(t, o), ref, mag, dim)
		})
	}
}

// benchFlash times one attention kernel at torch's peer shape, B=4 H=16
// S=4096, and reports TFLOP/s counted as baseline_lowp.py counts them
// (4 B H S^2 D, halved when causal).
func benchFlash(b *testing.B, dim int, causal bool) {
	d := needGPU(b)
	const bh, seq = 4 * 16, 4096
	r := newRand(b)
	n := bh * seq * dim
	q, k, v := upload(b, d, randBF16s(r, n, 1)), upload(b, d, randBF16s(r, n, 1)), upload(b, d, randBF16s(r, n, 1))
	o := poisoned(b, d, n, kernel.BFloat16(0))
	g := newGPUTimer(b, d)
	t := g.median(b, func() error {
		return lecture.Attention(d, nil, q, k, v, o, bh, seq, dim, float32(1/math.Sqrt(float64(dim))), causal)
	})
	flop := 4 * float64(bh) * seq * seq * float64(dim)
	if causal {
		flop /= 2
	}
	report(b, t, flop, "TFLOP/s")
}

// The peers: torch SDPA's flash backend, baseline_lowp.py's
// sdpa_flash_bf16_{full,causal}_TFLOPs (341.2 and 286.3 TFLOP/s on the
// H100 on 2026-11-25, at D=128; FlashAttention128 325.9 and 297.5 in the
// same call); run it in the same device call.
func BenchmarkGPUFlashAttention128(b *testing.B)       { benchFlash(b, 128, false) }
func BenchmarkGPUFlashAttention128Causal(b *testing.B) { benchFlash(b, 128, true) }
func BenchmarkGPUFlashAttention64(b *testing.B)        { benchFlash(b, 64, false) }
func BenchmarkGPUFlashAttention64Causal(b *testing.B)  { benchFlash(b, 64, true) }

// needWGMMA skips a GPU run on GPUs without sm_90a's warpgroup MMA.
func needWGMMA(t testing.TB, d *gocu.Device) {
	t.Helper()
	if !lecture.HasWGMMA(d) {
		major, minor := d.CUDA().ComputeCapability()
		t.Skipf("warpgroup MMA needs compute capability 9.0 (sm_90a); this GPU has %d.%d", major, minor)
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
			// groups of k 1024 apart, k-steps 16 rows: GemmBF16's layouts.
			{"K128/MN128", k128, mn128, [2]bool{}},
			{"K128same/MN128", wgLayout{sw: kernel.WGSwizzle128, lbo: 1024, sbo: 1024, kstep: 32}, mn128, [2]bool{}},
			{"K128/MN128swapped", k128, mn128, [2]bool{false, true}},
			// 64-byte rows of k (all 32), b stored n-major too.
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
