package attn

import (
	"math"
	"testing"

	"github.com/gocu-dev/gocu"
)

// runForwardWS runs fwd128WS on the problem (through forwardStrided with
// WGMMAEnv=2 when env), poisoning o and lse first, and checks them
// against the reference.
func (p *problem) runForwardWS(t *testing.T, d *gocu.Device, checked, env bool) {
	n, rows := p.s.size(), p.s.bh()*p.s.Seq
	o := poisoned(t, d, n, nanBF16)
	lse := poisoned(t, d, rows, nanF32)
	c := p.s.contiguous()
	ls := [4]layout{c, c, c, c}
	if env {
		t.Setenv(WGMMAEnv, "2")
		if !useWGMMA(d, p.s) {
			t.Fatalf("%s=2 does not select a warpgroup kernel on %v", WGMMAEnv, d)
		}
		must(t, forwardStrided(d, p.qb, p.kb, p.vb, o, lse, ls, p.s, float32(p.scale), p.causal, checked))
	} else {
		must(t, forwardWS(d, p.qb, p.kb, p.vb, o, lse, ls, p.s, float32(p.scale), p.causal, checked))
	}
	p.reference()
	compare(t, "o", p, download(t, o), func(g Result) []float64 { return g.O }, oRtol, oAtol, oFrob)
	compare(t, "lse", p, download(t, lse), func(g Result) []float64 { return g.LSE }, 1e-5, 1e-5, 1e-5)
}

// TestSimWS runs fwd128WS on the simulator: less than a tile (17), one
// tile, a partial last tile (200), and five tiles (520), which refill
// the three stages; causal and full, on several batches and heads.
func TestSimWS(t *testing.T) {
	d := simDev(t)
	for _, s := range []shape{{1, 2, 17, 128}, {2, 1, 128, 128}, {1, 2, 200, 128}, {2, 2, 520, 128}} {
		for _, causal := range []bool{false, true} {
			t.Run(name(s, causal), func(t *testing.T) {
				p := newProblem(t, d, newRand(t), s, causal, allHeads(s.bh()))
				p.runForwardWS(t, d, false, s.Seq == 200)
			})
		}
	}
}

// TestSimWSRaceFree runs fwd128WS in the simulator's checked mode, over
// five tiles with a partial last one: the consumers read a stage only
// after the producer's copies completed, were fenced and handed over, and
// the producer refills it only after both consumers' MMAs that read it
// completed. The named barriers' ordering counts for the race detector.
func TestSimWSRaceFree(t *testing.T) {
	d := simDev(t)
	s := shape{1, 1, 600, 128}
	for _, causal := range []bool{true, false} {
		t.Run(name(s, causal), func(t *testing.T) {
			p := newProblem(t, d, newRand(t), s, causal, []int{0})
			p.runForwardWS(t, d, true, false)
		})
	}
}

// TestWGMMASelectWS: WGMMAEnv=2 selects fwd128WS for head dimension 128
// only, and 1 keeps fwd128WG.
func TestWGMMASelectWS(t *testing.T) {
	d := simDev(t)
	t.Setenv(WGMMAEnv, "2")
	if !useWGMMA(d, shape{1, 1, 64, 128}) || useWGMMA(d, shape{1, 1, 64, 64}) {
		t.Errorf("%s=2 selects a warpgroup kernel for D=64 or not for D=128", WGMMAEnv)
	}
	t.Setenv(WGMMAEnv, "3")
	if useWGMMA(d, shape{1, 1, 64, 128}) {
		t.Errorf("%s=3 selects a warpgroup kernel", WGMMAEnv)
	}
}

// TestGPUWS runs fwd128WS on the GPU (sm_90a) from small shapes to the
// peers' B4 H16 S4096, against Reference on the first and last heads (all
// of them for small shapes) and against fwd128WG on every element: o
// within 1e-2 relative Frobenius difference, as TestGPUWG allows against
// fwd128, and lse within 1e-5.
func TestGPUWS(t *testing.T) {
	d := needGPU(t)
	if !hasWGMMA(d) {
		major, minor := d.CUDA().ComputeCapability()
		t.Skipf("fwd128WS needs compute capability 9.0 (sm_90a); this GPU has %d.%d", major, minor)
	}
	for _, c := range []struct {
		s      shape
		causal bool
	}{
		{shape{1, 2, 80, 128}, true}, {shape{1, 2, 80, 128}, false},
		{shape{2, 3, 1000, 128}, true}, {shape{2, 3, 1000, 128}, false},
		{shape{1, 4, 2048, 128}, true},
		{shape{4, 16, 4096, 128}, false}, {shape{4, 16, 4096, 128}, true},
	} {
		t.Run(name(c.s, c.causal), func(t *testing.T) {
			heads := allHeads(c.s.bh())
			if len(heads) > 8 {
				heads = []int{0, c.s.bh() - 1}
			}
			p := newProblem(t, d, newRand(t), c.s, c.causal, heads)
			p.runForwardWS(t, d, false, c.s.Seq == 1000)
			if c.s.Seq == 1000 { // and the backward pass from its o and lse
				t.Setenv(WGMMAEnv, "2")
				p.run(t, d, false)
			}

			n, rows := c.s.size(), c.s.bh()*c.s.Seq
			o1, l1 := poisoned(t, d, n, nanBF16), poisoned(t, d, rows, nanF32)
			o2, l2 := poisoned(t, d, n, nanBF16), poisoned(t, d, rows, nanF32)
			cl := c.s.contiguous()
			ls := [4]layout{cl, cl, cl, cl}
			must(t, forwardWG(d, p.qb, p.kb, p.vb, o1, l1, ls, c.s, float32(p.scale), c.causal, false))
			must(t, forwardWS(d, p.qb, p.kb, p.vb, o2, l2, ls, c.s, float32(p.scale), c.causal, false))
			a, b := download(t, o1), download(t, o2)
			var num, den float64
			for i := range a {
				x, y := float64(a[i].Float32()), float64(b[i].Float32())
				num += (x - y) * (x - y)
				den += x * x
			}
			if rel := math.Sqrt(num / den); !(rel <= 1e-2) {
				t.Errorf("o differs from fwd128WG's by %.3g (relative Frobenius)", rel)
			} else {
				t.Logf("o: relative Frobenius difference from fwd128WG %.3g", rel)
			}
			la, lb := download(t, l1), download(t, l2)
			bad := 0
			for i := range la {
				if !(math.Abs(float64(la[i]-lb[i])) <= 1e-5*(1+math.Abs(float64(la[i])))) {
					if bad++; bad <= 8 {
						t.Errorf("lse[%d] = %v, fwd128WG gives %v", i, lb[i], la[i])
					}
				}
			}
		})
	}
}
