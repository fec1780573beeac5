package attn

import (
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
