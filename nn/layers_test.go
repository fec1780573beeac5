package nn_test

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/gocu-dev/gocu/array"
	"github.com/gocu-dev/gocu/grad"
	"github.com/gocu-dev/gocu/nn"
)

func TestLinearForwardAndInit(t *testing.T) {
	rng := array.CPU().NewRNG(1)
	l := nn.NewLinear(rng, 50, 7)
	if s := l.Weight.Shape(); s[0] != 7 || s[1] != 50 || l.Bias.Shape()[0] != 7 {
		t.Fatalf("shapes %v %v", l.Weight.Shape(), l.Bias.Shape())
	}
	w, b := f64(t, l.Weight.Value()), f64(t, l.Bias.Value())
	bound := 1 / math.Sqrt(50)
	mean := 0.0
	for _, v := range append(append([]float64{}, w...), b...) {
		if math.Abs(v) > bound {
			t.Fatalf("initial value %v outside ±%v", v, bound)
		}
		mean += v
	}
	if mean /= float64(len(w) + len(b)); math.Abs(mean) > bound/5 {
		t.Fatalf("mean of initial values %v", mean)
	}
	// The same seed gives the same layer.
	l2 := nn.NewLinear(array.CPU().NewRNG(1), 50, 7)
	near(t, "same seed", f64(t, l2.Weight.Value()), w, 0)

	x := array.CPU().NewRNG(2).Normal(array.Float32, 0, 1, 4, 3, 50)
	y := l.Forward(grad.Const(x))
	if s := y.Shape(); len(s) != 3 || s[0] != 4 || s[1] != 3 || s[2] != 7 {
		t.Fatalf("output shape %v", s)
	}
	xs := f64(t, x)
	var want []float64
	for r := 0; r < 12; r++ {
		for o := 0; o < 7; o++ {
			s := b[o]
			for i := 0; i < 50; i++ {
				s += xs[r*50+i] * w[o*50+i]
			}
			want = append(want, s)
		}
	}
	near(t, "x·Wᵀ+b", f64(t, y.Value()), want, 1e-5)
}

func TestActivations(t *testing.T) {
	xs := []float64{-3, -1.5, -0.3, 0, 0.2, 1, 2.5}
	x := grad.Const(array.FromSlice(xs))
	ref := map[string]func(float64) float64{
		"ReLU":    func(v float64) float64 { return math.Max(v, 0) },
		"Tanh":    math.Tanh,
		"Sigmoid": func(v float64) float64 { return 1 / (1 + math.Exp(-v)) },
		"GELU":    func(v float64) float64 { return v * (1 + math.Erf(v/math.Sqrt2)) / 2 },
		"GELU/tanh": func(v float64) float64 {
			return 0.5 * v * (1 + math.Tanh(math.Sqrt(2/math.Pi)*(v+0.044715*v*v*v)))
		},
	}
	mods := map[string]nn.Module{"ReLU": nn.ReLU{}, "Tanh": nn.Tanh{}, "Sigmoid": nn.Sigmoid{}, "GELU": nn.GELU{}, "GELU/tanh": nn.GELU{Tanh: true}}
	for name, m := range mods {
		var want []float64
		for _, v := range xs {
			want = append(want, ref[name](v))
		}
		near(t, name, f64(t, m.Forward(x).Value()), want, 4e-7) // GELU's erf: 1.5e-7 absolute
	}
}

func TestDropout(t *testing.T) {
	x := grad.Const(array.Ones(array.Float32, 200, 100))
	d := nn.NewDropout(array.CPU().NewRNG(5), 0.3)
	y := f64(t, d.Forward(x).Value())
	zeros := 0
	for _, v := range y {
		switch {
		case v == 0:
			zeros++
		case math.Abs(v-1/0.7) > 1e-6:
			t.Fatalf("kept value %v, want 1/(1-p)", v)
		}
	}
	if f := float64(zeros) / float64(len(y)); math.Abs(f-0.3) > 0.01 {
		t.Fatalf("dropped %.4f of the elements, want 0.3", f)
	}
	// The same seed draws the same mask; the next draw differs.
	d2 := nn.NewDropout(array.CPU().NewRNG(5), 0.3)
	near(t, "same seed", f64(t, d2.Forward(x).Value()), y, 0)
	if y2 := f64(t, d2.Forward(x).Value()); fmt.Sprint(y2[:50]) == fmt.Sprint(y[:50]) {
		t.Fatal("the second mask equals the first")
	}
	nn.Train(d, false)
	if got := d.Forward(x); got != x {
		t.Fatal("Dropout in evaluation is not the identity")
	}
}

func TestLayerNorm(t *testing.T) {
	x := array.CPU().NewRNG(3).Normal(array.Float32, 2, 3, 4, 6)
	ln := nn.NewLayerNorm(array.CPU(), 6)
	y := f64(t, ln.Forward(grad.Const(x)).Value())
	xs := f64(t, x)
	for r := 0; r < 4; r++ {
		row := xs[r*6 : r*6+6]
		m, v := 0.0, 0.0
		for _, e := range row {
			m += e / 6
		}
		for _, e := range row {
			v += (e - m) * (e - m) / 6
		}
		for i, e := range row {
			want := (e - m) / math.Sqrt(v+1e-5)
			if math.Abs(y[r*6+i]-want) > 2e-6 {
				t.Fatalf("row %d: %v, want %v", r, y[r*6+i], want)
			}
		}
	}
}

// conv2dRef is a direct convolution in float64.
func conv2dRef(x, w, b []float64, n, c, h, wd, o, k, stride, pad int) ([]float64, int, int) {
	ho, wo := (h+2*pad-k)/stride+1, (wd+2*pad-k)/stride+1
	out := make([]float64, n*o*ho*wo)
	for in := 0; in < n; in++ {
		for oc := 0; oc < o; oc++ {
			for i := 0; i < ho; i++ {
				for j := 0; j < wo; j++ {
					s := b[oc]
					for ic := 0; ic < c; ic++ {
						for di := 0; di < k; di++ {
							for dj := 0; dj < k; dj++ {
								y, xx := i*stride+di-pad, j*stride+dj-pad
								if y < 0 || y >= h || xx < 0 || xx >= wd {
									continue
								}
								s += x[((in*c+ic)*h+y)*wd+xx] * w[((oc*c+ic)*k+di)*k+dj]
							}
						}
					}
					out[((in*o+oc)*ho+i)*wo+j] = s
				}
			}
		}
	}
	return out, ho, wo
}

func TestConv2dAndMaxPool(t *testing.T) {
	for _, tc := range []struct{ k, stride, pad int }{{3, 1, 0}, {3, 1, 1}, {2, 2, 0}, {3, 2, 1}} {
		t.Run(fmt.Sprintf("k%d_s%d_p%d", tc.k, tc.stride, tc.pad), func(t *testing.T) {
			rng := array.CPU().NewRNG(7)
			conv := nn.NewConv2d(rng, 2, 3, tc.k, tc.stride, tc.pad)
			x := rng.Normal(array.Float32, 0, 1, 2, 2, 6, 5)
			y := conv.Forward(grad.Const(x))
			want, ho, wo := conv2dRef(f64(t, x), f64(t, conv.Weight.Value()), f64(t, conv.Bias.Value()), 2, 2, 6, 5, 3, tc.k, tc.stride, tc.pad)
			if s := y.Shape(); s[2] != ho || s[3] != wo {
				t.Fatalf("output shape %v, want (2,3,%d,%d)", s, ho, wo)
			}
			near(t, "conv", f64(t, y.Value()), want, 1e-5)
		})
	}
	x := array.CPU().NewRNG(8).Normal(array.Float32, 0, 1, 1, 2, 5, 4)
	p := nn.NewMaxPool2d(2).Forward(grad.Const(x))
	xs := f64(t, x)
	var want []float64
	for c := 0; c < 2; c++ {
		for i := 0; i < 2; i++ {
			for j := 0; j < 2; j++ {
				m := math.Inf(-1)
				for di := 0; di < 2; di++ {
					for dj := 0; dj < 2; dj++ {
						m = math.Max(m, xs[(c*5+2*i+di)*4+2*j+dj])
					}
				}
				want = append(want, m)
			}
		}
	}
	near(t, "maxpool", f64(t, p.Value()), want, 0)
	if err := nn.NewConv2d(array.CPU().NewRNG(1), 3, 1, 3, 1, 0).Forward(grad.Const(x)).Err(); err == nil {
		t.Fatal("Conv2d accepted 2 channels for 3")
	}
}

func TestLosses(t *testing.T) {
	logits := array.FromSlice([]float64{1, 2, 3, 1000, 0, -1000, -5, 5, 0}, 3, 3)
	labels := array.FromSlice([]int64{2, 0, 1})
	l := nn.CrossEntropy(grad.Const(logits), labels)
	want := ((math.Log(math.Exp(1)+math.Exp(2)+math.Exp(3)) - 3) + 0 + (math.Log(math.Exp(-5)+math.Exp(5)+1) - 5)) / 3
	near(t, "cross-entropy", f64(t, l.Value()), []float64{want}, 1e-14)
	if err := nn.CrossEntropy(grad.Const(logits), array.FromSlice([]int64{1, 2})).Err(); err == nil {
		t.Fatal("CrossEntropy took 2 labels for 3 rows")
	}
	if err := nn.CrossEntropy(grad.Const(logits), array.FromSlice([]float64{1, 2, 0})).Err(); err == nil {
		t.Fatal("CrossEntropy took float labels")
	}
	for _, bad := range []int64{3, -1} {
		err := nn.CrossEntropy(grad.Const(logits), array.FromSlice([]int64{2, bad, 1})).Err()
		if !errors.Is(err, array.ErrIndex) || !strings.Contains(err.Error(), "row 1") {
			t.Fatalf("label %d: error %v, want array.ErrIndex naming row 1", bad, err)
		}
	}
	m := nn.MSE(grad.Const(array.FromSlice([]float64{1, 2, 4})), array.FromSlice([]float64{1, 0, 1}))
	near(t, "mse", f64(t, m.Value()), []float64{13.0 / 3}, 1e-15)
}

func TestSequentialNamesTrainCast(t *testing.T) {
	rng := array.CPU().NewRNG(1)
	m := nn.NewSequential(nn.NewLinear(rng, 4, 8), nn.ReLU{}, nn.NewDropout(rng, 0.5), nn.NewLayerNorm(array.CPU(), 8), nn.NewLinear(rng, 8, 2))
	var names []string
	for _, n := range m.Named() {
		names = append(names, n.Name)
	}
	if got := fmt.Sprint(names); got != "[0.weight 0.bias 3.weight 3.bias 4.weight 4.bias]" {
		t.Fatalf("names %s", got)
	}
	if len(nn.Params(m)) != 6 {
		t.Fatal("Params")
	}
	nn.Train(m, false)
	if m.Layers[2].(*nn.Dropout).Training {
		t.Fatal("Train(false) left Dropout training")
	}
	x := grad.Const(array.CPU().NewRNG(2).Normal(array.Float32, 0, 1, 3, 4))
	y32 := f64(t, m.Forward(x).Value())
	if err := nn.Cast(m, array.Float64); err != nil {
		t.Fatal(err)
	}
	for _, p := range nn.Params(m) {
		if p.DType() != array.Float64 {
			t.Fatalf("Cast left %v", p.DType())
		}
	}
	y64 := f64(t, m.Forward(grad.Const(x.Value().AsType(array.Float64))).Value())
	near(t, "float64 after Cast", y64, y32, 1e-5)
}
