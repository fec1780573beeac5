package attn

import (
	"testing"

	"github.com/gocu-dev/gocu"
)

// runForwardWG runs fwd128WG on the problem (through forwardStrided with
// WGMMAEnv set when env), poisoning o and lse first, and checks them
// against the reference.
func (p *problem) runForwardWG(t *testing.T, d *gocu.Device, checked, env bool) {
	n, rows := p.s.size(), p.s.bh()*p.s.Seq
	o := poisoned(t, d, n, nanBF16)
	lse := poisoned(t, d, rows, nanF32)
	c := p.s.contiguous()
	ls := [4]layout{c, c, c, c}
	if env {
		t.Setenv(WGMMAEnv, "1")
		if !useWGMMA(d, p.s) {
			t.Fatalf("%s=1 does not select fwd128WG on %v", WGMMAEnv, d)
		}
		must(t, forwardStrided(d, p.qb, p.kb, p.vb, o, lse, ls, p.s, float32(p.scale), p.causal, checked))
	} else {
		must(t, forwardWG(d, p.qb, p.kb, p.vb, o, lse, ls, p.s, float32(p.scale), p.causal, checked))
	}
	p.reference()
	compare(t, "o", p, download(t, o), func(g Result) []float64 { return g.O }, oRtol, oAtol, oFrob)
	compare(t, "lse", p, download(t, lse), func(g Result) []float64 { return g.LSE }, 1e-5, 1e-5, 1e-5)
}

// TestSimWG runs fwd128WG on the simulator: less than a tile (17), one
// tile, a partial last tile (200), and four tiles (400), which go round
// the three stages; causal and full, on several batches and heads.
func TestSimWG(t *testing.T) {
	d := simDev(t)
	for _, s := range []shape{{1, 2, 17, 128}, {2, 1, 128, 128}, {1, 2, 200, 128}, {2, 2, 400, 128}} {
		for _, causal := range []bool{false, true} {
			t.Run(name(s, causal), func(t *testing.T) {
				p := newProblem(t, d, newRand(t), s, causal, allHeads(s.bh()))
				p.runForwardWG(t, d, false, s.Seq == 200)
			})
		}
	}
}

// TestSimWGRaceFree runs fwd128WG in the simulator's checked mode, causal
// over four tiles with a partial last one: a stage is refilled only after
// every warpgroup waited for the MMAs that read it, and the copies are
// fenced for the async proxy.
func TestSimWGRaceFree(t *testing.T) {
	d := simDev(t)
	s := shape{1, 1, 420, 128}
	for _, causal := range []bool{true, false} {
		t.Run(name(s, causal), func(t *testing.T) {
			p := newProblem(t, d, newRand(t), s, causal, []int{0})
			p.runForwardWG(t, d, true, false)
		})
	}
}

// TestWGMMASelect: WGMMAEnv selects fwd128WG for head dimension 128 only.
func TestWGMMASelect(t *testing.T) {
	d := simDev(t)
	t.Setenv(WGMMAEnv, "")
	if useWGMMA(d, shape{1, 1, 64, 128}) {
		t.Errorf("fwd128WG selected without %s", WGMMAEnv)
	}
	t.Setenv(WGMMAEnv, "1")
	if !useWGMMA(d, shape{1, 1, 64, 128}) {
		t.Errorf("%s=1 does not select fwd128WG for D=128", WGMMAEnv)
	}
	if useWGMMA(d, shape{1, 1, 64, 64}) {
		t.Errorf("%s=1 selects fwd128WG for D=64", WGMMAEnv)
	}
}
