package attn

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"sync"
	"testing"

	"github.com/gocu-dev/gocu"
	"github.com/gocu-dev/gocu/internal/gputest"
	"github.com/gocu-dev/gocu/kernel"
	"github.com/gocu-dev/gocu/nvrtc"
)

// The kernels run through forward and backward on the simulator at small
// sizes and on the GPU at full size, on random inputs with poisoned
// outputs, against Reference in float64 on whole heads. Failures say how
// far off a result is (relative Frobenius error and the first
// mismatches), to diagnose a GPU run from its log alone.

// newRand returns a generator seeded from the test's name and the clock.
func newRand(t testing.TB) *rand.Rand {
	var h uint64 = 14695981039346656037
	for _, c := range t.Name() {
		h = (h ^ uint64(c)) * 1099511628211
	}
	return rand.New(rand.NewPCG(h, rand.Uint64()))
}

func randBF16s(r *rand.Rand, n int) []kernel.BFloat16 {
	s := make([]kernel.BFloat16, n)
	for i := range s {
		s[i] = kernel.ToBFloat16(float32(r.NormFloat64()))
	}
	return s
}

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

var (
	nanBF16 = kernel.BFloat16(0x7fc1)
	nanF32  = float32(math.NaN())
)

// problem is one attention problem: its shape, inputs and the heads the
// reference checks.
type problem struct {
	s             shape
	causal        bool
	scale         float64
	q, k, v, do   []kernel.BFloat16
	heads         []int
	refs          map[int]Result
	qb, kb, vb, g *gocu.Buffer[kernel.BFloat16]
}

func newProblem(t testing.TB, d *gocu.Device, r *rand.Rand, s shape, causal bool, heads []int) *problem {
	n := s.size()
	p := &problem{s: s, causal: causal, scale: 1 / math.Sqrt(float64(s.Dim)),
		q: randBF16s(r, n), k: randBF16s(r, n), v: randBF16s(r, n), do: randBF16s(r, n), heads: heads}
	p.qb, p.kb, p.vb, p.g = upload(t, d, p.q), upload(t, d, p.k), upload(t, d, p.v), upload(t, d, p.do)
	return p
}

// reference computes Reference on the problem's heads.
func (p *problem) reference() {
	p.refs = map[int]Result{}
	hd := p.s.Seq * p.s.Dim
	f := func(x []kernel.BFloat16, h int) []float64 {
		y := make([]float64, hd)
		for i := range y {
			y[i] = float64(x[h*hd+i].Float32())
		}
		return y
	}
	for _, h := range p.heads {
		p.refs[h] = Reference(f(p.q, h), f(p.k, h), f(p.v, h), f(p.do, h), p.s.Seq, p.s.Dim, p.scale, p.causal)
	}
}

// allHeads is 0..n-1.
func allHeads(n int) []int {
	h := make([]int, n)
	for i := range h {
		h[i] = i
	}
	return h
}

// compare checks got (a whole tensor, heads of size per head) against
// want on the problem's heads: every element within rtol·|want| + atol·rms
// (rms over the checked heads), and the relative Frobenius error under
// frob.
func compare[T kernel.BFloat16 | float32](t *testing.T, what string, p *problem, got []T, want func(Result) []float64, rtol, atol, frob float64) {
	t.Helper()
	var num, den float64
	cnt := 0
	for _, h := range p.heads {
		for _, w := range want(p.refs[h]) {
			den += w * w
			cnt++
		}
	}
	rms := math.Sqrt(den / float64(cnt))
	bad := 0
	for _, h := range p.heads {
		w := want(p.refs[h])
		for i, wi := range w {
			var g float64
			switch x := any(got[h*len(w)+i]).(type) {
			case kernel.BFloat16:
				g = float64(x.Float32())
			case float32:
				g = float64(x)
			}
			d := g - wi
			num += d * d
			if !(math.Abs(d) <= rtol*math.Abs(wi)+atol*rms) {
				if bad++; bad <= 8 {
					n := len(w) / p.s.Seq
					t.Errorf("%s[head %d][%d][%d] = %.6g, want %.6g (diff %.3g, rms %.3g)", what, h, i/n, i%n, g, wi, d, rms)
				}
			}
		}
	}
	rel := math.Sqrt(num / den)
	t.Logf("%s: relative Frobenius error %.3g on %d heads", what, rel, len(p.heads))
	if bad > 0 || !(rel <= frob) {
		t.Errorf("%s: %d elements out of tolerance; relative error %.3g (want <= %.3g)", what, bad, rel, frob)
	}
}

// The tolerances: o and the gradients are rounded to bf16 (2⁻⁹), and the
// kernels round P and dS to bf16 for the tensor cores; lse is float32.
// The relative Frobenius error is the real check: a causal mask off by
// one gives 0.3. Elements are checked only against gross errors, because
// the first rows of a causal head attend to a few keys with large
// weights: there, one rounding of P or of the stored o (which the
// gradients' rowsum(dO∘o) reads) moves an element by up to 11% of the
// tensor's rms (seen on an H200 at S 2048 and 4096).
const (
	oRtol, oAtol, oFrob = 1.0 / 32, 1.0 / 8, 1e-2
	gRtol, gAtol, gFrob = 1.0 / 32, 1.0 / 4, 1e-2
)

// run runs forward and backward on the problem, poisoning every output
// first, and checks them against the reference.
func (p *problem) run(t *testing.T, d *gocu.Device, checked bool) {
	n, rows := p.s.size(), p.s.bh()*p.s.Seq
	o := poisoned(t, d, n, nanBF16)
	lse := poisoned(t, d, rows, nanF32)
	must(t, forward(d, p.qb, p.kb, p.vb, o, lse, p.s, float32(p.scale), p.causal, checked))
	dq, dk, dv := poisoned(t, d, n, nanBF16), poisoned(t, d, n, nanBF16), poisoned(t, d, n, nanBF16)
	dvec := poisoned(t, d, rows, nanF32)
	must(t, backward(d, p.qb, p.kb, p.vb, o, lse, p.g, dvec, dq, dk, dv, p.s, float32(p.scale), p.causal, checked))
	p.reference()
	compare(t, "o", p, download(t, o), func(g Result) []float64 { return g.O }, oRtol, oAtol, oFrob)
	compare(t, "lse", p, download(t, lse), func(g Result) []float64 { return g.LSE }, 1e-5, 1e-5, 1e-5)
	compare(t, "dq", p, download(t, dq), func(g Result) []float64 { return g.DQ }, gRtol, gAtol, gFrob)
	compare(t, "dk", p, download(t, dk), func(g Result) []float64 { return g.DK }, gRtol, gAtol, gFrob)
	compare(t, "dv", p, download(t, dv), func(g Result) []float64 { return g.DV }, gRtol, gAtol, gFrob)
}

func name(s shape, causal bool) string {
	return fmt.Sprintf("b%dh%ds%dd%d_causal=%v", s.Batch, s.Heads, s.Seq, s.Dim, causal)
}

// TestSim runs forward and backward on the simulator: whole tiles, a
// partial last tile (80, 17: less than one) and several tiles.
func TestSim(t *testing.T) {
	d := simDev(t)
	for _, seq := range []int{64, 80, 17, 128} {
		for _, dim := range []int{64, 128} {
			for _, causal := range []bool{false, true} {
				s := shape{1, 2, seq, dim}
				t.Run(name(s, causal), func(t *testing.T) {
					p := newProblem(t, d, newRand(t), s, causal, allHeads(s.bh()))
					p.run(t, d, false)
				})
			}
		}
	}
}

// TestSimRaceFree runs the kernels in the simulator's checked mode, causal
// with a partial last tile (every tile body): the double buffers are
// refilled only after the barrier that follows their last use.
func TestSimRaceFree(t *testing.T) {
	d := simDev(t)
	for _, dim := range []int{64, 128} {
		s := shape{1, 1, 144, dim}
		t.Run(name(s, true), func(t *testing.T) {
			p := newProblem(t, d, newRand(t), s, true, []int{0})
			p.run(t, d, true)
		})
	}
}

// TestGPU runs forward and backward on the GPU, from small shapes to the
// peers' B4 H16 S4096 D128, checking the first and last heads (all of
// them for small shapes).
func TestGPU(t *testing.T) {
	d := needGPU(t)
	for _, c := range []struct {
		s      shape
		causal bool
	}{
		{shape{1, 2, 80, 64}, true}, {shape{1, 2, 80, 128}, false},
		{shape{2, 3, 1000, 64}, false}, {shape{2, 3, 1000, 128}, true},
		{shape{1, 4, 2048, 64}, true}, {shape{1, 4, 2048, 128}, false},
		{shape{4, 16, 4096, 64}, true}, {shape{4, 16, 4096, 128}, false}, {shape{4, 16, 4096, 128}, true},
	} {
		t.Run(name(c.s, c.causal), func(t *testing.T) {
			heads := allHeads(c.s.bh())
			if len(heads) > 8 {
				heads = []int{0, c.s.bh() - 1}
			}
			p := newProblem(t, d, newRand(t), c.s, c.causal, heads)
			p.run(t, d, false)
		})
	}
}
