package nn_test

import (
	"errors"
	"fmt"
	"math"
	"testing"

	"github.com/gocu-dev/gocu/array"
	"github.com/gocu-dev/gocu/grad"
	"github.com/gocu-dev/gocu/nn"
)

func TestDecayGroups(t *testing.T) {
	rng := array.CPU().NewRNG(50)
	m := nn.NewSequential(nn.NewEmbedding(rng, 10, 4), nn.NewLayerNorm(array.CPU(), 4),
		nn.NewMultiheadAttention(rng, 4, 2), nn.NewBatchNorm1d(array.CPU(), 4), nn.NewLinear(rng, 4, 3))
	decay, noDecay := nn.DecayGroups(m)
	names := map[*grad.Var]string{}
	for _, n := range m.Named() {
		names[n.Var] = n.Name
	}
	var got [2][]string
	for i, g := range [][]*grad.Var{decay, noDecay} {
		for _, p := range g {
			got[i] = append(got[i], names[p])
		}
	}
	want := [2][]string{
		{"0.weight", "2.in_proj_weight", "2.out_proj.weight", "4.weight"},
		{"1.weight", "1.bias", "2.in_proj_bias", "2.out_proj.bias", "3.weight", "3.bias", "4.bias"},
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("groups %v, want %v", got, want)
	}
}

// runGroups takes five AdamW steps on parameters of two dtypes, some
// decayed and some not: with one optimiser and SetWeightDecay (groups
// true), or with one optimiser per weight decay.
func runGroups(t *testing.T, d *array.Maker, groups, unfused bool) [][]float64 {
	t.Helper()
	rng := d.NewRNG(51)
	var decay, noDecay []*grad.Var
	for i, n := range [][]int{{300, 250}, {250}, {7, 3}, {3}} {
		dt := array.Float32
		if i >= 2 {
			dt = array.Float64
		}
		p := grad.Param(rng.Normal(dt, 0, 1, n...))
		if len(n) == 2 {
			decay = append(decay, p)
		} else {
			noDecay = append(noDecay, p)
		}
	}
	all := append(append([]*grad.Var{}, decay...), noDecay...)
	var opts []*nn.Adam
	if groups {
		o := nn.NewAdamW(all, 1e-2, 0.1)
		if err := o.SetWeightDecay(noDecay, 0); err != nil {
			t.Fatal(err)
		}
		opts = []*nn.Adam{o}
	} else {
		opts = []*nn.Adam{nn.NewAdamW(decay, 1e-2, 0.1), nn.NewAdamW(noDecay, 1e-2, 0)}
	}
	for range 5 {
		for _, p := range all {
			p.SetGrad(rng.Normal(p.DType(), 0, 1, p.Shape()...))
		}
		for _, o := range opts {
			o.Unfused = unfused
			if err := o.Step(); err != nil {
				t.Fatal(err)
			}
		}
	}
	var out [][]float64
	for _, p := range all {
		out = append(out, f64(t, p.Value()))
	}
	return out
}

// SetWeightDecay gives exactly the result of separate optimisers, on
// the fused and the unfused paths, and on a GPU (where several groups on
// one device advance the step count once).
func TestWeightDecayGroups(t *testing.T) {
	makers := []*array.Maker{array.CPU()}
	if g, err := gpuOnce(); err == nil {
		makers = append(makers, g)
	}
	var ref [][]float64
	for _, d := range makers {
		for _, unfused := range []bool{false, true} {
			want := runGroups(t, d, false, unfused)
			got := runGroups(t, d, true, unfused)
			sameBits(t, fmt.Sprintf("%v unfused=%v", d, unfused), got, want)
			if ref == nil {
				ref = want
			} else {
				for i := range ref {
					near(t, fmt.Sprintf("%v unfused=%v param %d against the CPU", d, unfused, i), got[i], ref[i], 1e-6)
				}
			}
		}
	}
	// The undecayed parameters moved as Adam without decay would, and
	// the decayed ones differ from that.
	rng := array.CPU().NewRNG(52)
	p := grad.Param(rng.Normal(array.Float32, 0, 1, 4, 4))
	b := grad.Param(rng.Normal(array.Float32, 0, 1, 4))
	o := nn.NewAdamW([]*grad.Var{p, b}, 0.1, 0.5)
	if err := o.SetWeightDecay([]*grad.Var{b}, 0); err != nil {
		t.Fatal(err)
	}
	if wd, ok := o.WeightDecayOf(b); !ok || wd != 0 {
		t.Fatalf("WeightDecayOf(bias) = %v, %v", wd, ok)
	}
	if _, ok := o.WeightDecayOf(p); ok {
		t.Fatal("WeightDecayOf(weight) reports an override")
	}
	p0, b0 := f64(t, p.Value()), f64(t, b.Value())
	gp, gb := rng.Normal(array.Float32, 0, 1, 4, 4), rng.Normal(array.Float32, 0, 1, 4)
	p.SetGrad(gp)
	b.SetGrad(gb)
	if err := o.Step(); err != nil {
		t.Fatal(err)
	}
	// Step one of Adam moves by lr·sign(g) (up to eps); AdamW first
	// scales by 1 - lr·wd.
	for i, g := range f64(t, gb) {
		near(t, "bias", f64(t, b.Value())[i:i+1], []float64{b0[i] - 0.1*math.Copysign(1, g)}, 1e-6)
	}
	for i, g := range f64(t, gp) {
		near(t, "weight", f64(t, p.Value())[i:i+1], []float64{p0[i]*(1-0.05) - 0.1*math.Copysign(1, g)}, 1e-6)
	}
}

func TestSetWeightDecayErrors(t *testing.T) {
	p := grad.Param(array.Zeros(array.Float32, 2))
	q := grad.Param(array.Zeros(array.Float32, 2))
	o := nn.NewAdamW([]*grad.Var{p}, 1e-3, 0.1)
	for _, wd := range []float64{-1, math.NaN(), math.Inf(1)} {
		if err := o.SetWeightDecay([]*grad.Var{p}, wd); !errors.Is(err, nn.ErrHyper) {
			t.Errorf("weight decay %v: error %v, want ErrHyper", wd, err)
		}
	}
	if err := o.SetWeightDecay([]*grad.Var{q}, 0); !errors.Is(err, nn.ErrHyper) {
		t.Errorf("a parameter of another optimiser: error %v, want ErrHyper", err)
	}
	s := nn.NewSGD([]*grad.Var{p}, 0.1)
	if err := s.SetWeightDecay([]*grad.Var{p}, 0.5); err != nil {
		t.Fatal(err)
	}
	p.SetGrad(array.FromSlice([]float32{1, -1}))
	if err := p.Value().Assign(array.FromSlice([]float32{2, 4})); err != nil {
		t.Fatal(err)
	}
	if err := s.Step(); err != nil {
		t.Fatal(err)
	}
	// SGD: p - lr·(g + wd·p).
	near(t, "SGD with a group's weight decay", f64(t, p.Value()), []float64{2 - 0.1*(1+1), 4 - 0.1*(-1+2)}, 1e-6)
}
