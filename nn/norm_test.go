package nn_test

import (
	"bytes"
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/gocu-dev/gocu/array"
	"github.com/gocu-dev/gocu/grad"
	"github.com/gocu-dev/gocu/nn"
)

// TestRMSNormValues compares RMSNorm with a float64 loop of torch's
// formula, with torch's default eps (float32's machine epsilon).
func TestRMSNormValues(t *testing.T) {
	rng := array.CPU().NewRNG(21)
	x := rng.Normal(array.Float32, 0.5, 2, 3, 4)
	l := nn.NewRMSNorm(array.CPU(), 4)
	w := rng.Normal(array.Float32, 1, 0.3, 4)
	l.Weight = grad.Param(w)
	got := f64(t, l.Forward(grad.Const(x)).Value())
	xv, wv := f64(t, x), f64(t, w)
	var want []float64
	for r := range 3 {
		ms := 0.0
		for j := range 4 {
			ms += xv[4*r+j] * xv[4*r+j] / 4
		}
		for j := range 4 {
			want = append(want, xv[4*r+j]/math.Sqrt(ms+0x1p-23)*wv[j])
		}
	}
	near(t, "RMSNorm", got, want, 1e-6)
	l.Eps = -1
	if err := l.Forward(grad.Const(x)).Err(); !errors.Is(err, nn.ErrHyper) {
		t.Fatalf("eps -1: %v", err)
	}
	if err := nn.NewRMSNorm(array.CPU(), 3).Forward(grad.Const(x)).Err(); err == nil || !strings.Contains(err.Error(), "normalised shape") {
		t.Fatalf("wrong shape: %v", err)
	}
}

// TestBatchNormStatistics follows torch's BatchNorm2d through two
// training steps and an evaluation, against float64 loops of its
// formulas: batch statistics with the biased variance for the output,
// the unbiased one for the running variance.
func TestBatchNormStatistics(t *testing.T) {
	rng := array.CPU().NewRNG(8)
	const n, c, h, w = 3, 2, 2, 3
	b := nn.NewBatchNorm2d(array.CPU(), c)
	b.Momentum = 0.3
	b.Weight = grad.Param(rng.Normal(array.Float32, 1, 0.5, c))
	b.Bias = grad.Param(rng.Normal(array.Float32, 0, 0.5, c))
	wv, bv := f64(t, b.Weight.Value()), f64(t, b.Bias.Value())
	rm, rv := []float64{0, 0}, []float64{1, 1}
	at := func(i, ch, k int) int { return (i*c+ch)*h*w + k }
	for step := range 3 {
		x := rng.Normal(array.Float32, float64(step), 2, n, c, h, w)
		xv := f64(t, x)
		train := step < 2
		nn.Train(b, train)
		got := f64(t, b.Forward(grad.Const(x)).Value())
		want := make([]float64, len(xv))
		for ch := range c {
			mean, sq := 0.0, 0.0
			for i := range n {
				for k := range h * w {
					mean += xv[at(i, ch, k)]
				}
			}
			mean /= n * h * w
			for i := range n {
				for k := range h * w {
					d := xv[at(i, ch, k)] - mean
					sq += d * d
				}
			}
			m, v := mean, sq/(n*h*w)
			if !train {
				m, v = rm[ch], rv[ch]
			}
			for i := range n {
				for k := range h * w {
					want[at(i, ch, k)] = (xv[at(i, ch, k)]-m)/math.Sqrt(v+1e-5)*wv[ch] + bv[ch]
				}
			}
			if train {
				rm[ch] = 0.7*rm[ch] + 0.3*mean
				rv[ch] = 0.7*rv[ch] + 0.3*sq/(n*h*w-1)
			}
		}
		near(t, "output", got, want, 1e-5)
		near(t, "running mean", f64(t, b.RunningMean.Value()), rm, 1e-6)
		near(t, "running var", f64(t, b.RunningVar.Value()), rv, 1e-6)
	}
	names := ""
	for _, x := range b.Named() {
		names += x.Name + " "
	}
	if names != "weight bias running_mean running_var " {
		t.Fatalf("names %q", names)
	}
}

func TestBatchNormErrors(t *testing.T) {
	x := grad.Const(array.CPU().NewRNG(1).Normal(array.Float32, 0, 1, 4, 3))
	cases := []struct {
		b    *nn.BatchNorm
		x    *grad.Var
		want string
	}{
		{nn.NewBatchNorm1d(array.CPU(), 2), x, "3 channels"},
		{nn.NewBatchNorm2d(array.CPU(), 3), x, "want (N, C, H, W)"},
		{nn.NewBatchNorm1d(array.CPU(), 3), grad.Const(array.Ones(array.Float32, 1, 3)), "more than 1 value per channel"},
		{&nn.BatchNorm{Eps: math.NaN(), Training: true}, x, "eps NaN"},
		{&nn.BatchNorm{Momentum: 1.5, Training: true}, x, "momentum 1.5"},
	}
	for _, c := range cases {
		if err := c.b.Forward(c.x).Err(); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("error %v, want one containing %q", err, c.want)
		}
	}
	if err := (&nn.BatchNorm{Momentum: -1}).Forward(x).Err(); !errors.Is(err, nn.ErrHyper) {
		t.Errorf("momentum -1: %v does not wrap ErrHyper", err)
	}
	// In evaluation one value per channel is fine, as in torch.
	b := nn.NewBatchNorm1d(array.CPU(), 3)
	nn.Train(b, false)
	if err := b.Forward(grad.Const(array.Ones(array.Float32, 1, 3))).Err(); err != nil {
		t.Fatal(err)
	}
}

// A BatchNorm model trains with Adam: the running statistics are buffers
// that the optimiser leaves alone, and a checkpoint carries them.
func TestBatchNormTrains(t *testing.T) {
	rng := array.CPU().NewRNG(2)
	m := nn.NewSequential(nn.NewLinear(rng, 4, 3), nn.NewBatchNorm1d(array.CPU(), 3))
	o := nn.NewAdam(nn.Params(m), 1e-2)
	x := rng.Normal(array.Float32, 0, 1, 8, 4)
	if err := m.Forward(grad.Const(x)).Square().Mean().Backward(); err != nil {
		t.Fatal(err)
	}
	rm := f64(t, m.Layers[1].(*nn.BatchNorm).RunningMean.Value())
	if err := o.Step(); err != nil {
		t.Fatal(err)
	}
	near(t, "running mean after a step", f64(t, m.Layers[1].(*nn.BatchNorm).RunningMean.Value()), rm, 0)
	var buf bytes.Buffer
	if err := nn.Save(&buf, m, nil); err != nil {
		t.Fatal(err)
	}
	m2 := nn.NewSequential(nn.NewLinear(rng, 4, 3), nn.NewBatchNorm1d(array.CPU(), 3))
	if _, err := nn.Load(&buf, m2); err != nil {
		t.Fatal(err)
	}
	near(t, "loaded running mean", f64(t, m2.Layers[1].(*nn.BatchNorm).RunningMean.Value()), rm, 0)
}
