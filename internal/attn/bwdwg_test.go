package attn

import (
	"math"
	"slices"
	"testing"

	"github.com/gocu-dev/gocu"
	"github.com/gocu-dev/gocu/kernel"
)

// grads is the output of one backward pass.
type grads struct{ dq, dk, dv *gocu.Buffer[kernel.BFloat16] }

// runBackwardWG runs fwd128 (the default forward pass), then bwdPrep
// and backwardWG (backwardAllWG when atomic) on its o and lse with every
// output poisoned, and returns the gradients; when refs it checks them
// against the reference.
func (p *problem) runBackwardWG(t *testing.T, d *gocu.Device, checked, refs, atomic bool) grads {
	n, rows := p.s.size(), p.s.bh()*p.s.Seq
	o := poisoned(t, d, n, nanBF16)
	lse := poisoned(t, d, rows, nanF32)
	t.Setenv(WGMMAEnv, "")
	must(t, forward(d, p.qb, p.kb, p.vb, o, lse, p.s, float32(p.scale), p.causal, checked))
	g := grads{poisoned(t, d, n, nanBF16), poisoned(t, d, n, nanBF16), poisoned(t, d, n, nanBF16)}
	dvec := poisoned(t, d, rows, nanF32)
	c := p.s.contiguous()
	ls := [8]layout{c, c, c, c, c, c, c, c}
	prep := gocu.Config{Grid: gocu.Dim3{X: int32((rows + warps - 1) / warps)}, Block: gocu.Dim3{X: threads}, Checked: checked}
	must(t, launchBwdPrep(d, prep, o, p.g, dvec, c, c, int32(p.s.Heads), int32(p.s.Seq), int32(rows), int32(p.s.Dim)))
	bwd := backwardWG
	if atomic {
		bwd = backwardAllWG
	}
	must(t, bwd(d, p.qb, p.kb, p.vb, lse, p.g, dvec, g.dq, g.dk, g.dv, ls, p.s, float32(p.scale), p.causal, checked))
	if refs {
		if p.refs == nil {
			p.reference()
		}
		compare(t, "dq", p, download(t, g.dq), func(g Result) []float64 { return g.DQ }, gRtol, gAtol, gFrob)
		compare(t, "dk", p, download(t, g.dk), func(g Result) []float64 { return g.DK }, gRtol, gAtol, gFrob)
		compare(t, "dv", p, download(t, g.dv), func(g Result) []float64 { return g.DV }, gRtol, gAtol, gFrob)
	}
	return g
}

// TestSimWGBwd runs bwdKVWG and bwdQWG on the simulator: less than a
// tile (17), one block (128), a partial last tile (200) and five query
// tiles over three key blocks (300); causal and full, on several batches
// and heads.
func TestSimWGBwd(t *testing.T) {
	d := simDev(t)
	for _, s := range []shape{{1, 2, 17, 128}, {2, 1, 128, 128}, {1, 2, 200, 128}, {2, 2, 300, 128}} {
		for _, causal := range []bool{false, true} {
			t.Run(name(s, causal), func(t *testing.T) {
				p := newProblem(t, d, newRand(t), s, causal, allHeads(s.bh()))
				p.runBackwardWG(t, d, false, true, false)
			})
		}
	}
}

// TestSimWGBwdRaceFree runs bwdKVWG and bwdQWG in the simulator's
// checked mode over several tiles with a partial last one: a stage is
// refilled only after every warpgroup waited for the MMAs that read it,
// the copies are fenced for the async proxy, and the staged statistics
// are written only after the barrier that ends their last reads.
func TestSimWGBwdRaceFree(t *testing.T) {
	d := simDev(t)
	s := shape{1, 1, 300, 128}
	for _, causal := range []bool{true, false} {
		t.Run(name(s, causal), func(t *testing.T) {
			p := newProblem(t, d, newRand(t), s, causal, []int{0})
			p.runBackwardWG(t, d, true, true, false)
		})
	}
}

// TestSimWGStrided runs Forward and Backward with WGMMAEnv set on the
// strided views of a projection's heads: fwd128WG, bwdKVWG and bwdQWG
// through the API.
func TestSimWGStrided(t *testing.T) {
	d := simDev(t)
	t.Setenv(WGMMAEnv, "1")
	for _, causal := range []bool{false, true} {
		s := shape{2, 2, 80, 128}
		t.Run(name(s, causal), func(t *testing.T) {
			runStrided(t, d, newRand(t), s, causal, allHeads(s.bh()))
		})
	}
}

// TestGPUWGBwd runs bwdKVWG and bwdQWG on the GPU (sm_90a) from small
// shapes to the peers' B4 H16 S4096: against Reference on the first and
// last heads (all of them for small shapes), against bwdKV128 and
// bwdQ128 on every element (relative Frobenius difference), and twice,
// requiring the same bits: the pass is deterministic. bwdAllWG, whose dq
// is not, is checked against the reference and bwdKV128 and bwdQ128.
func TestGPUWGBwd(t *testing.T) {
	d := needGPU(t)
	if !hasWGMMA(d) {
		major, minor := d.CUDA().ComputeCapability()
		t.Skipf("bwdKVWG needs compute capability 9.0 (sm_90a); this GPU has %d.%d", major, minor)
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
			wg := p.runBackwardWG(t, d, false, true, false)
			again := p.runBackwardWG(t, d, false, false, false)
			at := p.runBackwardWG(t, d, false, true, true)

			// Against bwdKV128 and bwdQ128 from the same forward pass.
			n, rows := c.s.size(), c.s.bh()*c.s.Seq
			o, lse := poisoned(t, d, n, nanBF16), poisoned(t, d, rows, nanF32)
			must(t, forward(d, p.qb, p.kb, p.vb, o, lse, c.s, float32(p.scale), c.causal, false))
			dq, dk, dv := poisoned(t, d, n, nanBF16), poisoned(t, d, n, nanBF16), poisoned(t, d, n, nanBF16)
			must(t, backward(d, p.qb, p.kb, p.vb, o, lse, p.g, poisoned(t, d, rows, nanF32), dq, dk, dv, c.s, float32(p.scale), c.causal, false))
			for _, x := range []struct {
				what           string
				old, new, next *gocu.Buffer[kernel.BFloat16]
				atomic         *gocu.Buffer[kernel.BFloat16]
			}{{"dq", dq, wg.dq, again.dq, at.dq}, {"dk", dk, wg.dk, again.dk, at.dk}, {"dv", dv, wg.dv, again.dv, at.dv}} {
				a, b := download(t, x.old), download(t, x.new)
				if !slices.Equal(b, download(t, x.next)) {
					t.Errorf("%s differs between two runs", x.what)
				}
				relDiff(t, x.what, "the mma.sync kernels'", a, b)
				relDiff(t, x.what+" (atomic)", "the mma.sync kernels'", a, download(t, x.atomic))
			}
		})
	}
}

// relDiff checks that b is within 2e-2 of a in relative Frobenius norm.
func relDiff(t *testing.T, what, ref string, a, b []kernel.BFloat16) {
	t.Helper()
	var num, den float64
	for i := range a {
		u, v := float64(a[i].Float32()), float64(b[i].Float32())
		num += (u - v) * (u - v)
		den += u * u
	}
	if rel := math.Sqrt(num / den); !(rel <= 2e-2) {
		t.Errorf("%s differs from %s by %.3g (relative Frobenius)", what, ref, rel)
	} else {
		t.Logf("%s: relative Frobenius difference from %s %.3g", what, ref, rel)
	}
}

// TestSimWGAtomic runs bwdAllWG and bwdDQ, dq through atomics, on the
// simulator, as TestSimWGBwd does bwdKVWG and bwdQWG, and in checked
// mode over several tiles: dS is written to shared memory only after the
// dq MMAs of the previous tile completed, and read only after the
// barrier that follows both warpgroups' stores.
func TestSimWGAtomic(t *testing.T) {
	d := simDev(t)
	for _, s := range []shape{{1, 2, 17, 128}, {2, 1, 128, 128}, {1, 2, 200, 128}, {1, 1, 300, 128}} {
		for _, causal := range []bool{false, true} {
			t.Run(name(s, causal), func(t *testing.T) {
				p := newProblem(t, d, newRand(t), s, causal, allHeads(s.bh()))
				p.runBackwardWG(t, d, s.Seq == 300, true, true)
			})
		}
	}
}

// TestSimWGAtomicSelect: WGMMAAtomicEnv with WGMMAEnv selects bwdAllWG
// through the API, on strided views.
func TestSimWGAtomicSelect(t *testing.T) {
	d := simDev(t)
	t.Setenv(WGMMAEnv, "1")
	t.Setenv(WGMMAAtomicEnv, "1")
	if !useAtomic() {
		t.Fatalf("%s=1 does not select bwdAllWG", WGMMAAtomicEnv)
	}
	s := shape{2, 2, 80, 128}
	for _, causal := range []bool{false, true} {
		t.Run(name(s, causal), func(t *testing.T) {
			runStrided(t, d, newRand(t), s, causal, allHeads(s.bh()))
		})
	}
}
