package lecture_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"sync"
	"testing"

	"github.com/gocu-dev/gocu"
	"github.com/gocu-dev/gocu/internal/lecture"
	"github.com/gocu-dev/gocu/kernel"
)

// Tests and benchmarks of the tensor-core kernels: GemmBF16 and the
// flash-attention forward. On the simulator they run at small sizes; on
// the GPU at full size, checked against float64 references on sampled
// rows. Every failure message says how far off the result is (relative
// Frobenius error and the first mismatches), to diagnose a GPU run from
// its log alone.

func randBF16s(r *rand.Rand, n int, scale float64) []kernel.BFloat16 {
	s := make([]kernel.BFloat16, n)
	for i := range s {
		s[i] = kernel.ToBFloat16(float32(r.NormFloat64() * scale))
	}
	return s
}

// bf16Config is the launch of GemmBF16 for an m x n product.
func bf16Config(m, n int) gocu.Config {
	return gocu.Config{Grid: gocu.Dim3{X: cdiv(n, lecture.BF16BN), Y: int32(m / lecture.BF16BM)},
		Block: gocu.Dim3{X: lecture.BF16Threads}, Shared: lecture.BF16Shared}
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

func TestGemmBF16(t *testing.T) {
	onDevices(t, func(t *testing.T, d *gocu.Device) {
		r := newRand(t)
		shapes := [][3]int{{128, 128, 128}, {256, 264, 64}}
		if onGPU(d) {
			shapes = [][3]int{{128, 128, 128}, {256, 264, 64}, {512, 1000, 96}, {4096, 4096, 4096}}
		}
		for _, s := range shapes {
			m, n, k := s[0], s[1], s[2]
			t.Run(fmt.Sprintf("%dx%dx%d", m, n, k), func(t *testing.T) {
				ah, bh := randBF16s(r, m*k, 1), randBF16s(r, k*n, 1)
				a, b := upload(t, d, ah), upload(t, d, bh)
				c := poisoned(t, d, m*n, kernel.BFloat16(0x7fff)) // NaN: an unwritten element fails
				must(t, lecture.LaunchGemmBF16(d, bf16Config(m, n), a, b, c, int32(m), int32(n), int32(k)))
				got := download(t, c)
				// The result is rounded once to bf16 (8 bits): within 2^-8
				// relative, plus float32 summation-order noise.
				compareRows(t, "c", got, gemmRefRows(ah, bh, sampleRows(r, m), n, k), n, 1.0/256, 1e-3*math.Sqrt(float64(k)), 5e-3)
			})
		}
	})
}

// TestGemmBF16RaceFree runs GemmBF16 in the simulator's checked mode: the
// four-stage pipeline has one barrier per stage, a stage is refilled only
// after every warp passed the barrier that follows its last use, and no
// LdMatrix reads a stage before the CpAsyncWait that completes it.
func TestGemmBF16RaceFree(t *testing.T) {
	d := simDev(t)
	r := newRand(t)
	const m, n, k = 128, 256, 160
	ah, bh := randBF16s(r, m*k, 1), randBF16s(r, k*n, 1)
	a, b := upload(t, d, ah), upload(t, d, bh)
	c := poisoned(t, d, m*n, kernel.BFloat16(0x7fff))
	cfg := bf16Config(m, n)
	cfg.Checked = true
	must(t, lecture.LaunchGemmBF16(d, cfg, a, b, c, m, n, k))
	compareRows(t, "c", download(t, c), gemmRefRows(ah, bh, sampleRows(r, m), n, k), n, 1.0/256, 1e-2, 5e-3)
}

// BenchmarkGPUGemmBF16 times GemmBF16 at 4096^3. The peer is cuBLAS's bf16
// GEMM through torch (baseline_lowp.py's matmul_4096_bf16_TFLOPs, 677
// TFLOP/s on the H100 on 2026-11-25); run it in the same device call.
func BenchmarkGPUGemmBF16(b *testing.B) {
	d := needGPU(b)
	const n = 4096
	r := newRand(b)
	a, bm := upload(b, d, randBF16s(r, n*n, 1)), upload(b, d, randBF16s(r, n*n, 1))
	c := poisoned(b, d, n*n, kernel.BFloat16(0))
	g := newGPUTimer(b, d)
	t := g.median(b, func() error {
		return lecture.LaunchGemmBF16(d, bf16Config(n, n), a, bm, c, n, n, n)
	})
	report(b, t, 2*float64(n)*n*n, "TFLOP/s")
}

// flashConfig is the launch of the attention kernels.
func flashConfig(bh, seq, d int) gocu.Config {
	shared := lecture.Flash128Shared
	if d == 64 {
		shared = lecture.Flash64Shared
	}
	return gocu.Config{Grid: gocu.Dim3{X: int32(seq / lecture.FlashBR), Y: int32(bh)}, Block: gocu.Dim3{X: lecture.FlashThreads}, Shared: shared}
}

func launchFlash(d *gocu.Device, dim int, cfg gocu.Config, q, k, v, o *gocu.Buffer[kernel.BFloat16], seq int, scale float32, causal bool) error {
	if dim == 64 {
		return lecture.LaunchFlashAttention64(d, cfg, q, k, v, o, int32(seq), scale, causal)
	}
	return lecture.LaunchFlashAttention128(d, cfg, q, k, v, o, int32(seq), scale, causal)
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
						must(t, launchFlash(d, dim, flashConfig(s.bh, s.seq, dim), q, k, v, o, s.seq, float32(scale), causal))
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
	})
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
		return launchFlash(d, dim, flashConfig(bh, seq, dim), q, k, v, o, seq, float32(1/math.Sqrt(float64(dim))), causal)
	})
	flop := 4 * float64(bh) * seq * seq * float64(dim)
	if causal {
		flop /= 2
	}
	report(b, t, flop, "TFLOP/s")
}

// The peers: torch SDPA's flash backend, baseline_lowp.py's
// sdpa_flash_bf16_{full,causal}_TFLOPs (350 and 300 TFLOP/s on the H100,
// 2026-11-25, at D=128); run it in the same device call.
func BenchmarkGPUFlashAttention128(b *testing.B)       { benchFlash(b, 128, false) }
func BenchmarkGPUFlashAttention128Causal(b *testing.B) { benchFlash(b, 128, true) }
func BenchmarkGPUFlashAttention64(b *testing.B)        { benchFlash(b, 64, false) }
func BenchmarkGPUFlashAttention64Causal(b *testing.B)  { benchFlash(b, 64, true) }

// TestFlashAttentionRaceFree runs the attention kernel in the simulator's
// checked mode: the K and V double buffer is refilled only after the
// barrier that follows its last use, and nothing reads a tile before its
// CpAsyncWait.
func TestFlashAttentionRaceFree(t *testing.T) {
	d := simDev(t)
	r := newRand(t)
	const bh, seq, dim = 1, 256, 64
	n := bh * seq * dim
	qh, kh, vh := randBF16s(r, n, 1), randBF16s(r, n, 1), randBF16s(r, n, 1)
	o := poisoned(t, d, n, kernel.BFloat16(0x7fff))
	cfg := flashConfig(bh, seq, dim)
	cfg.Checked = true
	must(t, launchFlash(d, dim, cfg, upload(t, d, qh), upload(t, d, kh), upload(t, d, vh), o, seq, 0.125, true))
	rows := sampleRows(r, seq)
	ref, mag := attentionRefRows(qh, kh, vh, rows, seq, dim, 0.125, true)
	compareAttention(t, download(t, o), ref, mag, dim)
}
