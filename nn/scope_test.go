package nn_test

import (
	"slices"
	"testing"
	"time"

	"github.com/gocu-dev/gocu/array"
	"github.com/gocu-dev/gocu/grad"
	"github.com/gocu-dev/gocu/nn"
)

// scopedMLP is a two-layer MLP written out Var by Var, so that a step can
// close every array it made (the explicit way), leave that to a scope, or
// drop them for the collector.
type scopedMLP struct {
	d              *array.Maker
	w1, b1, w2, b2 *grad.Var
	opt            *nn.Adam
	x, y           *array.Array
}

func newScopedMLP(d *array.Maker, batch, in, hidden, out int) *scopedMLP {
	r := d.NewRNG(5)
	m := &scopedMLP{d: d,
		w1: grad.Param(r.Normal(array.Float32, 0, 0.05, in, hidden).Copy()),
		b1: grad.Param(d.Zeros(array.Float32, hidden).Copy()),
		w2: grad.Param(r.Normal(array.Float32, 0, 0.05, hidden, out).Copy()),
		b2: grad.Param(d.Zeros(array.Float32, out).Copy()),
		x:  r.Normal(array.Float32, 0, 1, batch, in).Copy(),
		y:  r.Uniform(array.Float32, 0, float64(out), batch).AsType(array.Int64).Copy(),
	}
	m.opt = nn.NewAdam([]*grad.Var{m.w1, m.b1, m.w2, m.b2}, 1e-3)
	return m
}

// step runs one training step; mode is "scope", "close" or "drop".
func (m *scopedMLP) step(mode string) error {
	var s *array.Scope
	if mode == "scope" {
		s = m.d.NewScope()
		defer s.Close()
	}
	m.opt.ZeroGrad()
	x := grad.Const(m.x)
	z1 := x.MatMul(m.w1)
	a1 := z1.Add(m.b1)
	h := a1.ReLU()
	z2 := h.MatMul(m.w2)
	logits := z2.Add(m.b2)
	loss := nn.CrossEntropy(logits, m.y)
	if err := loss.Backward(); err != nil {
		return err
	}
	err := m.opt.Step()
	if mode == "close" {
		for _, v := range []*grad.Var{z1, a1, h, z2, logits, loss} {
			v.Close()
		}
	}
	return err
}

func (m *scopedMLP) params(t testing.TB) [][]float32 {
	var out [][]float32
	for _, p := range []*grad.Var{m.w1, m.b1, m.w2, m.b2} {
		v, err := p.Value().Float32s()
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, v)
	}
	return out
}

// TestScopedTraining: a training loop whose steps run in scopes and close
// nothing trains exactly as the loop that closes every array, and on a
// GPU holds no more device memory after each step than after the first.
func TestScopedTraining(t *testing.T) {
	devs := map[string]*array.Maker{"cpu": array.CPU()}
	if g, err := gpuOnce(); err == nil {
		devs["gpu"] = g
	}
	for name, d := range devs {
		t.Run(name, func(t *testing.T) {
			var got [2][][]float32
			for k, mode := range []string{"close", "scope"} {
				m := newScopedMLP(d, 32, 20, 16, 5)
				var first int64
				for i := range 20 {
					if err := m.step(mode); err != nil {
						t.Fatal(err)
					}
					if !d.IsGPU() {
						continue
					}
					if err := d.Sync(); err != nil {
						t.Fatal(err)
					}
					used := d.CUDAStream().Device().Allocator().Stats().InUse
					if i == 0 {
						first = used
					} else if mode == "scope" && used > first {
						t.Fatalf("step %d: %d bytes in use, %d after the first step", i, used, first)
					}
				}
				got[k] = m.params(t)
			}
			for i := range got[0] {
				if !slices.Equal(got[0][i], got[1][i]) {
					t.Fatalf("parameter %d differs between the closing and the scoped loop", i)
				}
			}
		})
	}
}

// BenchmarkScopedStepGPU: the MLP step at batch 256 with every array
// closed, in a scope, and dropped for the collector: ms per step and the
// device memory in use between steps, as a multiple of the closing loop's.
func BenchmarkScopedStepGPU(b *testing.B) {
	d := testGPU(b)
	al := d.CUDAStream().Device().Allocator()
	var base float64
	for _, mode := range []string{"close", "scope", "drop"} {
		b.Run(mode, func(b *testing.B) {
			m := newScopedMLP(d, 256, 784, 1024, 10)
			for range 5 {
				if err := m.step(mode); err != nil {
					b.Fatal(err)
				}
			}
			if err := d.Sync(); err != nil {
				b.Fatal(err)
			}
			const steps = 200
			var peak int64
			var times []time.Duration
			for range max(b.N, 1) {
				t0 := time.Now()
				for range steps {
					if err := m.step(mode); err != nil {
						b.Fatal(err)
					}
					peak = max(peak, al.Stats().InUse)
				}
				if err := d.Sync(); err != nil {
					b.Fatal(err)
				}
				times = append(times, time.Since(t0)/steps)
			}
			slices.Sort(times)
			b.ReportMetric(float64(times[len(times)/2].Microseconds())/1e3, "ms/step")
			if mode == "close" {
				base = float64(peak)
			}
			if base > 0 {
				b.ReportMetric(float64(peak)/base, "x-close-mem")
			}
			b.Logf("%s: peak in use between steps %d bytes", mode, peak)
		})
	}
}
