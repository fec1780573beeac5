package nn_test

import (
	"fmt"
	"math"
	"testing"

	"github.com/gocu-dev/gocu/array"
	"github.com/gocu-dev/gocu/grad"
	"github.com/gocu-dev/gocu/nn"
)

// moduleCheck compares the gradients of loss(m(x)) with respect to x and
// every parameter of m, in float64, with central finite differences.
func moduleCheck(t *testing.T, m nn.Module, x *array.Array, loss func(y *grad.Var) *grad.Var) {
	t.Helper()
	if err := nn.Cast(m, array.Float64); err != nil {
		t.Fatal(err)
	}
	xv := grad.Param(x.AsType(array.Float64).Copy())
	eval := func() float64 {
		var l *grad.Var
		grad.NoGrad(func() { l = loss(m.Forward(xv)) })
		v, err := l.Item()
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	if err := loss(m.Forward(xv)).Backward(); err != nil {
		t.Fatal(err)
	}
	named := append([]nn.Named{{Name: "input", Var: xv}}, m.Named()...)
	for _, n := range named {
		if !n.Var.RequiresGrad() {
			continue // a buffer (BatchNorm's running statistics)
		}
		ana := f64(t, n.Var.Grad())
		base := f64(t, n.Var.Value())
		shape := n.Var.Shape()
		num := make([]float64, len(base))
		for j, x0 := range base {
			h := 1e-6 * math.Max(1, math.Abs(x0))
			var l [2]float64
			for s, d := range [2]float64{h, -h} {
				v := append([]float64(nil), base...)
				v[j] = x0 + d
				if err := n.Var.SetValue(array.FromSlice(v, shape...)); err != nil {
					t.Fatal(err)
				}
				l[s] = eval()
			}
			num[j] = (l[0] - l[1]) / (2 * h)
		}
		if err := n.Var.SetValue(array.FromSlice(base, shape...)); err != nil {
			t.Fatal(err)
		}
		near(t, "gradient of "+n.Name, ana, num, 1e-6)
	}
}

func TestLayerGradients(t *testing.T) {
	rng := array.CPU().NewRNG(11)
	x := rng.Normal(array.Float32, 0, 1, 3, 5)
	labels := array.FromSlice([]int64{2, 0, 1})
	ce := func(y *grad.Var) *grad.Var { return nn.CrossEntropy(y, labels) }
	sq := func(y *grad.Var) *grad.Var { return y.Square().Mean() }
	cases := []struct {
		name string
		m    nn.Module
		x    *array.Array
		loss func(y *grad.Var) *grad.Var
	}{
		{"Linear+CrossEntropy", nn.NewLinear(rng, 5, 3), x, ce},
		{"Linear without bias", nn.NewLinearNoBias(rng, 5, 4), x, sq},
		{"Linear 3-D input", nn.NewLinear(rng, 5, 2), rng.Normal(array.Float32, 0, 1, 2, 3, 5), sq},
		{"Tanh", nn.Tanh{}, x, sq},
		{"Sigmoid", nn.Sigmoid{}, x, sq},
		{"ReLU", nn.ReLU{}, x, sq},
		{"GELU", nn.GELU{}, x, sq},
		{"GELU tanh", nn.GELU{Tanh: true}, x, sq},
		{"LayerNorm", nn.NewSequential(nn.NewLinear(rng, 5, 6), nn.NewLayerNorm(array.CPU(), 6)), x, sq},
		{"LayerNorm 2 axes", nn.NewLayerNorm(array.CPU(), 3, 5), rng.Normal(array.Float32, 1, 2, 2, 3, 5), sq},
		{"Conv2d", nn.NewConv2d(rng, 2, 3, 3, 1, 1), rng.Normal(array.Float32, 0, 1, 2, 2, 5, 4), sq},
		{"Conv2d stride 2", nn.NewConv2d(rng, 2, 2, 2, 2, 0), rng.Normal(array.Float32, 0, 1, 1, 2, 5, 6), sq},
		{"Conv2d+MaxPool2d", nn.NewSequential(nn.NewConv2d(rng, 1, 2, 3, 1, 1), nn.NewMaxPool2d(2)), rng.Normal(array.Float32, 0, 1, 2, 1, 6, 4), sq},
		{"MaxPool2d stride 1", &nn.MaxPool2d{K: 2, Stride: 1}, rng.Normal(array.Float32, 0, 1, 1, 2, 4, 4), sq},
		{"SiLU", nn.SiLU{}, x, sq},
		{"Softmax", nn.Softmax{Axis: 1}, x, sq},
		{"Softmax axis -2", nn.Softmax{Axis: -2}, rng.Normal(array.Float32, 0, 1, 2, 3, 5), sq},
		{"RMSNorm", nn.NewSequential(nn.NewLinear(rng, 5, 6), nn.NewRMSNorm(array.CPU(), 6)), x, sq},
		{"RMSNorm 2 axes eps", &nn.RMSNorm{Shape: []int{3, 5}, Eps: 0.1, Weight: grad.Param(rng.Normal(array.Float32, 1, 0.5, 3, 5))}, rng.Normal(array.Float32, 1, 2, 2, 3, 5), sq},
		{"RMSNorm no weight", &nn.RMSNorm{Shape: []int{5}}, x, sq},
		{"BatchNorm1d", nn.NewSequential(nn.NewLinear(rng, 5, 4), randomAffine(nn.NewBatchNorm1d(array.CPU(), 4), rng)), x, sq},
		{"BatchNorm1d (N, C, L)", randomAffine(nn.NewBatchNorm1d(array.CPU(), 3), rng), rng.Normal(array.Float32, 2, 3, 2, 3, 4), sq},
		{"BatchNorm2d", randomAffine(nn.NewBatchNorm2d(array.CPU(), 2), rng), rng.Normal(array.Float32, -1, 2, 3, 2, 3, 2), sq},
		{"BatchNorm2d eval", evalBN(nn.NewBatchNorm2d(array.CPU(), 2), rng), rng.Normal(array.Float32, -1, 2, 3, 2, 3, 2), sq},
		{"BatchNorm2d no affine", &nn.BatchNorm{Eps: 1e-5, Momentum: 0.1, Training: true}, rng.Normal(array.Float32, -1, 2, 3, 2, 3, 2), sq},
		{"MSE", nn.NewLinear(rng, 5, 2), x, func(y *grad.Var) *grad.Var { return nn.MSE(y, array.FromSlice([]float64{1, -1})) }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) { moduleCheck(t, c.m, c.x, c.loss) })
	}
	t.Run("Dropout", func(t *testing.T) {
		// A fixed mask: a fresh layer with the same seed per evaluation.
		d := &reseeded{seed: 4, p: 0.4}
		moduleCheck(t, d, x, sq)
	})
}

// randomAffine gives a BatchNorm random weights and biases, so that the
// check does not pass on ones and zeros alone.
func randomAffine(b *nn.BatchNorm, rng *array.RNG) *nn.BatchNorm {
	c := b.Weight.Shape()[0]
	b.Weight = grad.Param(rng.Normal(array.Float32, 1, 0.5, c))
	b.Bias = grad.Param(rng.Normal(array.Float32, 0, 0.5, c))
	return b
}

// evalBN is a BatchNorm in evaluation with random running statistics.
func evalBN(b *nn.BatchNorm, rng *array.RNG) *nn.BatchNorm {
	randomAffine(b, rng)
	c := b.Weight.Shape()[0]
	b.RunningMean = grad.Const(rng.Normal(array.Float32, 0, 1, c))
	b.RunningVar = grad.Const(rng.Uniform(array.Float32, 0.5, 2, c))
	b.Training = false
	return b
}

// reseeded is Dropout drawing the same mask on every call.
type reseeded struct {
	seed uint64
	p    float64
}

func (r *reseeded) Forward(x *grad.Var) *grad.Var {
	return nn.NewDropout(array.On(x.Value().Device()).NewRNG(r.seed), r.p).Forward(x)
}
func (r *reseeded) Named() []nn.Named { return nil }

// TestMLPGradient checks the whole training model's gradient (Linear,
// ReLU, Linear, ReLU, Linear, cross-entropy, at a smaller size) against
// finite differences, every parameter element.
func TestMLPGradient(t *testing.T) {
	rng := array.CPU().NewRNG(3)
	m := nn.NewSequential(nn.NewLinear(rng, 12, 16), nn.ReLU{}, nn.NewLinear(rng, 16, 16), nn.ReLU{}, nn.NewLinear(rng, 16, 4))
	x := rng.Uniform(array.Float32, 0, 1, 6, 12)
	labels := array.FromSlice([]int32{0, 3, 1, 2, 3, 0})
	moduleCheck(t, m, x, func(y *grad.Var) *grad.Var { return nn.CrossEntropy(y, labels) })
}

// TestGPUGradientsMatchCPU trains nothing: it computes the MLP's float32
// gradients at MNIST's sizes on the GPU and on the CPU from the same seed
// and compares them.
func TestGPUGradientsMatchCPU(t *testing.T) {
	gpu := testGPU(t)
	var got [2][][]float64
	for k, d := range []*array.Maker{array.CPU(), gpu} {
		rng := d.NewRNG(1)
		m := nn.NewSequential(nn.NewLinear(rng, 784, 512), nn.ReLU{}, nn.NewLinear(rng, 512, 512), nn.ReLU{}, nn.NewLinear(rng, 512, 10))
		x := rng.Uniform(array.Float32, 0, 1, 64, 784)
		y := rng.Uniform(array.Float32, 0, 10, 64).AsType(array.Int64)
		if err := nn.CrossEntropy(m.Forward(grad.Const(x)), y).Backward(); err != nil {
			t.Fatal(err)
		}
		for _, p := range nn.Params(m) {
			got[k] = append(got[k], f64(t, p.Grad()))
		}
	}
	for i := range got[0] {
		near(t, fmt.Sprintf("gradient %d", i), got[1][i], got[0][i], 1e-5)
	}
}

func TestDropoutSameMaskOnGPU(t *testing.T) {
	gpu := testGPU(t)
	var masks [2][]float64
	for k, d := range []*array.Maker{array.CPU(), gpu} {
		x := grad.Const(d.Ones(array.Float32, 64, 100))
		masks[k] = f64(t, nn.NewDropout(d.NewRNG(77), 0.25).Forward(x).Value())
	}
	near(t, "mask", masks[1], masks[0], 0)
}
