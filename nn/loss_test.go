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

// ceRef is torch's cross-entropy with class indices, in float64, from its
// definition: rows of x (N, C), labels y, optional class weights w, an
// ignored label and label smoothing eps. logits false is nll_loss.
func ceRef(x []float64, c int, y []int64, w []float64, ignore *int64, eps float64, red nn.Reduction, logits bool) []float64 {
	n := len(y)
	terms := make([]float64, n)
	total, den := 0.0, 0.0
	for i := range n {
		if ignore != nil && y[i] == *ignore {
			continue
		}
		row := x[i*c : i*c+c]
		lp := append([]float64(nil), row...)
		if logits {
			m := math.Inf(-1)
			for _, v := range row {
				m = math.Max(m, v)
			}
			s := 0.0
			for _, v := range row {
				s += math.Exp(v - m)
			}
			for j, v := range row {
				lp[j] = v - m - math.Log(s)
			}
		}
		wt := func(j int64) float64 {
			if w == nil {
				return 1
			}
			return w[j]
		}
		nll := -wt(y[i]) * lp[y[i]]
		smooth := 0.0
		for j := range c {
			smooth -= wt(int64(j)) * lp[j]
		}
		terms[i] = (1-eps)*nll + eps/float64(c)*smooth
		total += terms[i]
		den += wt(y[i])
	}
	switch red {
	case nn.ReduceNone:
		return terms
	case nn.ReduceSum:
		return []float64{total}
	}
	return []float64{total / den}
}

func ints64(a *array.Array) []int64 {
	v, err := a.AsType(array.Int64).Int64s()
	if err != nil {
		panic(err)
	}
	return v
}

// TestCrossEntropyOptions compares CrossEntropyWith and NLLLoss with the
// float64 reference for every combination of weights, an ignored label,
// smoothing and reduction, and checks their gradients.
func TestCrossEntropyOptions(t *testing.T) {
	rng := array.CPU().NewRNG(21)
	const n, c = 7, 5
	x := rng.Normal(array.Float64, 0, 3, n, c)
	labels := array.FromSlice([]int64{4, 0, 2, -100, 1, 2, 3})
	weight := rng.Uniform(array.Float64, 0.2, 2, c)
	xs, ys, ws := f64(t, x), ints64(labels), f64(t, weight)
	ign := int64(-100)
	for _, logits := range []bool{true, false} {
		for _, weighted := range []bool{false, true} {
			for _, eps := range []float64{0, 0.1, 1} {
				for _, red := range []nn.Reduction{nn.ReduceMean, nn.ReduceSum, nn.ReduceNone} {
					if !logits && eps != 0 {
						continue
					}
					name := fmt.Sprintf("logits=%v/weight=%v/eps=%v/%v", logits, weighted, eps, red)
					t.Run(name, func(t *testing.T) {
						o := &nn.CrossEntropyOptions{Ignore: true, IgnoreIndex: -100, LabelSmoothing: eps, Reduction: red}
						var w []float64
						if weighted {
							o.Weight, w = weight, ws
						}
						loss := func(v ...*grad.Var) *grad.Var {
							if logits {
								return nn.CrossEntropyWith(v[0], labels, o)
							}
							return nn.NLLLoss(v[0], labels, o)
						}
						got := f64(t, loss(grad.Const(x)).Value())
						near(t, "loss", got, ceRef(xs, c, ys, w, &ign, eps, red, logits), 1e-13)
						if err := grad.Check(loss, []*array.Array{x}, 1e-6); err != nil {
							t.Fatal(err)
						}
						// The ignored row gets no gradient.
						p := grad.Param(x)
						if err := loss(p).Sum().Backward(); err != nil {
							t.Fatal(err)
						}
						for j, v := range f64(t, p.Grad())[3*c : 4*c] {
							if v != 0 {
								t.Fatalf("gradient of the ignored row [%d] = %v", j, v)
							}
						}
					})
				}
			}
		}
	}
}

// TestCrossEntropyFloat32 checks the float32 loss and gradient against
// the float64 ones with options that change every term.
func TestCrossEntropyFloat32(t *testing.T) {
	rng := array.CPU().NewRNG(22)
	x := rng.Normal(array.Float32, 0, 4, 33, 10)
	labels := rng.Uniform(array.Float32, 0, 10, 33).AsType(array.Int32)
	o := &nn.CrossEntropyOptions{Weight: rng.Uniform(array.Float32, 0.5, 1.5, 10), Ignore: true, IgnoreIndex: 3, LabelSmoothing: 0.2}
	var vals, grads [2][]float64
	for k, dt := range []array.DType{array.Float32, array.Float64} {
		p := grad.Param(x.AsType(dt).Copy())
		l := nn.CrossEntropyWith(p, labels, o)
		if l.DType() != dt {
			t.Fatalf("loss of dtype %v for %v logits", l.DType(), dt)
		}
		if err := l.Backward(); err != nil {
			t.Fatal(err)
		}
		vals[k], grads[k] = f64(t, l.Value()), f64(t, p.Grad())
	}
	near(t, "loss", vals[0], vals[1], 1e-6)
	near(t, "gradient", grads[0], grads[1], 1e-6)
}

// TestCrossEntropyHalf checks bfloat16 and float16 logits: the loss is
// float32, as under torch's autocast, and equals the float64 loss of the
// same (rounded) logits; the gradient comes back in the logits' dtype.
func TestCrossEntropyHalf(t *testing.T) {
	rng := array.CPU().NewRNG(24)
	labels := rng.Uniform(array.Float32, 0, 10, 33).AsType(array.Int32)
	o := &nn.CrossEntropyOptions{Weight: rng.Uniform(array.Float32, 0.5, 1.5, 10), LabelSmoothing: 0.1}
	for _, dt := range []array.DType{array.BFloat16, array.Float16} {
		x := rng.Normal(array.Float32, 0, 4, 33, 10).AsType(dt)
		p := grad.Param(x.Copy())
		l := nn.CrossEntropyWith(p, labels, o)
		if l.DType() != array.Float32 {
			t.Fatalf("%v logits: loss of dtype %v, want float32", dt, l.DType())
		}
		if err := l.Backward(); err != nil {
			t.Fatal(err)
		}
		if p.Grad().DType() != dt {
			t.Fatalf("%v logits: gradient of dtype %v", dt, p.Grad().DType())
		}
		ref := grad.Param(x.AsType(array.Float64).Copy())
		lr := nn.CrossEntropyWith(ref, labels, o)
		if err := lr.Backward(); err != nil {
			t.Fatal(err)
		}
		near(t, dt.String()+" loss", f64(t, l.Value()), f64(t, lr.Value()), 1e-6)
		near(t, dt.String()+" gradient", f64(t, p.Grad()), f64(t, ref.Grad()), 1e-3)
	}
}

// TestCrossEntropyKDim checks logits (N, C, d1, d2) against the reference
// applied to each element's row of classes.
func TestCrossEntropyKDim(t *testing.T) {
	rng := array.CPU().NewRNG(23)
	const n, c, d1, d2 = 2, 4, 3, 2
	x := rng.Normal(array.Float64, 0, 2, n, c, d1, d2)
	labels := rng.Uniform(array.Float64, 0, c, n, d1, d2).AsType(array.Int64)
	xs, ys := f64(t, x), ints64(labels)
	// The rows of classes, in the labels' order.
	rows := make([]float64, 0, len(xs))
	for i := range n {
		for e := range d1 * d2 {
			for j := range c {
				rows = append(rows, xs[(i*c+j)*d1*d2+e])
			}
		}
	}
	plain := nn.CrossEntropy(grad.Const(x), labels)
	near(t, "CrossEntropy", f64(t, plain.Value()), ceRef(rows, c, ys, nil, nil, 0, nn.ReduceMean, true), 1e-13)
	w := []float64{0.5, 1, 2, 1.5}
	for _, red := range []nn.Reduction{nn.ReduceMean, nn.ReduceNone} {
		o := &nn.CrossEntropyOptions{Weight: array.FromSlice(w), LabelSmoothing: 0.3, Reduction: red}
		f := func(v ...*grad.Var) *grad.Var { return nn.CrossEntropyWith(v[0], labels, o) }
		y := f(grad.Const(x))
		if red == nn.ReduceNone && fmt.Sprint(y.Shape()) != fmt.Sprint([]int{n, d1, d2}) {
			t.Fatalf("loss of shape %v, want the labels' (%d, %d, %d)", y.Shape(), n, d1, d2)
		}
		near(t, red.String(), f64(t, y.Value()), ceRef(rows, c, ys, w, nil, 0.3, red, true), 1e-13)
		if err := grad.Check(f, []*array.Array{x}, 1e-6); err != nil {
			t.Fatal(err)
		}
	}
}

// TestCrossEntropyDefaults checks that nil options are CrossEntropy, that
// the zero options are torch's defaults (no label ignored) and that a
// mean over no rows is NaN, as torch's.
func TestCrossEntropyDefaults(t *testing.T) {
	rng := array.CPU().NewRNG(24)
	x := rng.Normal(array.Float64, 0, 1, 6, 3)
	labels := array.FromSlice([]int32{0, 2, 1, 1, 0, 2})
	want := ceRef(f64(t, x), 3, ints64(labels), nil, nil, 0, nn.ReduceMean, true)
	for name, l := range map[string]*grad.Var{
		"CrossEntropy":      nn.CrossEntropy(grad.Const(x), labels),
		"nil options":       nn.CrossEntropyWith(grad.Const(x), labels, nil),
		"zero options":      nn.CrossEntropyWith(grad.Const(x), labels, &nn.CrossEntropyOptions{}),
		"NLLLoss of logp":   nn.NLLLoss(grad.Const(x).LogSoftmax(1), labels, nil),
		"NLLLoss of logp 2": nn.NLLLoss(grad.Const(x).LogSoftmax(1), labels, &nn.CrossEntropyOptions{}),
	} {
		near(t, name, f64(t, l.Value()), want, 1e-14)
	}
	all := &nn.CrossEntropyOptions{Ignore: true, IgnoreIndex: 1}
	l := nn.CrossEntropyWith(grad.Const(x), array.FromSlice([]int64{1, 1}), all)
	if err := l.Err(); err == nil {
		t.Fatal("2 labels for 6 rows accepted")
	}
	l = nn.CrossEntropyWith(grad.Const(x.Slice(array.S(0, 2))), array.FromSlice([]int64{1, 1}), all)
	if v := f64(t, l.Value())[0]; !math.IsNaN(v) {
		t.Fatalf("mean over no rows = %v, want NaN", v)
	}
}

// bceRef is torch's binary cross-entropy of probabilities, in float64.
func bceRef(p, y, w []float64) []float64 {
	out := make([]float64, len(p))
	for i := range p {
		lp, lq := math.Max(math.Log(p[i]), -100), math.Max(math.Log(1-p[i]), -100)
		out[i] = -(y[i]*lp + (1-y[i])*lq)
		if w != nil {
			out[i] *= w[i%len(w)]
		}
	}
	return out
}

// logSigmoid is log(1/(1+exp(-x))) without overflow or underflow.
func logSigmoid(x float64) float64 {
	if x > 0 {
		return -math.Log1p(math.Exp(-x))
	}
	return x - math.Log1p(math.Exp(x))
}

// bceLogitsRef is -w·(pw·y·log σ(x) + (1-y)·log(1-σ(x))), in float64.
func bceLogitsRef(x, y, w, pw []float64) []float64 {
	out := make([]float64, len(x))
	for i := range x {
		pos := 1.0
		if pw != nil {
			pos = pw[i%len(pw)]
		}
		out[i] = -(pos*y[i]*logSigmoid(x[i]) + (1-y[i])*logSigmoid(-x[i]))
		if w != nil {
			out[i] *= w[i%len(w)]
		}
	}
	return out
}

func reduce(v []float64, r nn.Reduction) []float64 {
	if r == nn.ReduceNone {
		return v
	}
	s := 0.0
	for _, e := range v {
		s += e
	}
	if r == nn.ReduceMean {
		s /= float64(len(v))
	}
	return []float64{s}
}

func TestBCE(t *testing.T) {
	rng := array.CPU().NewRNG(25)
	p := rng.Uniform(array.Float64, 0.05, 0.95, 4, 3)
	y := rng.Uniform(array.Float64, 0, 1, 4, 3) // soft targets, as torch allows
	w := rng.Uniform(array.Float64, 0.5, 2, 3)
	ps, ys, ws := f64(t, p), f64(t, y), f64(t, w)
	for _, red := range []nn.Reduction{nn.ReduceMean, nn.ReduceSum, nn.ReduceNone} {
		for _, weighted := range []bool{false, true} {
			o := &nn.BCEOptions{Reduction: red}
			var wr []float64
			if weighted {
				o.Weight, wr = w, ws
			}
			f := func(v ...*grad.Var) *grad.Var { return nn.BCE(v[0], y, o) }
			near(t, fmt.Sprintf("BCE %v weight=%v", red, weighted), f64(t, f(grad.Const(p)).Value()), reduce(bceRef(ps, ys, wr), red), 1e-14)
			if err := grad.Check(f, []*array.Array{p}, 1e-6); err != nil {
				t.Fatalf("%v weight=%v: %v", red, weighted, err)
			}
		}
	}
	// At 0 and 1 the logs clamp at -100, and the gradient's denominator
	// at 1e-12, as torch's.
	edge := grad.Param(array.FromSlice([]float64{0, 0, 1, 1}))
	l := nn.BCE(edge, array.FromSlice([]float64{0, 1, 0, 1}), &nn.BCEOptions{Reduction: nn.ReduceNone})
	near(t, "clamped", f64(t, l.Value()), []float64{0, 100, 100, 0}, 0)
	if err := l.Sum().Backward(); err != nil {
		t.Fatal(err)
	}
	near(t, "clamped gradient", f64(t, edge.Grad()), []float64{0, -1e12, 1e12, 0}, 1e-15)
}

func TestBCEWithLogits(t *testing.T) {
	rng := array.CPU().NewRNG(26)
	x := rng.Normal(array.Float64, 0, 4, 5, 3)
	// Logits far in the tails: softplus must neither overflow nor lose
	// the small term.
	big := array.FromSlice([]float64{-800, -40, 40, 800, 1e-3, -1e-3}, 2, 3)
	y := rng.Uniform(array.Float64, 0, 1, 5, 3)
	yb := array.FromSlice([]float64{1, 0, 1, 0, 1, 0.5}, 2, 3)
	w := rng.Uniform(array.Float64, 0.5, 2, 3)
	pw := array.FromSlice([]float64{3, 0.5, 1.5})
	for _, tc := range []struct {
		x, y *array.Array
	}{{x, y}, {big, yb}} {
		xs, ys := f64(t, tc.x), f64(t, tc.y)
		for _, red := range []nn.Reduction{nn.ReduceMean, nn.ReduceSum, nn.ReduceNone} {
			for _, opt := range []string{"", "weight", "pos", "both"} {
				o := &nn.BCEOptions{Reduction: red}
				var wr, pr []float64
				if opt == "weight" || opt == "both" {
					o.Weight, wr = w, f64(t, w)
				}
				if opt == "pos" || opt == "both" {
					o.PosWeight, pr = pw, f64(t, pw)
				}
				f := func(v ...*grad.Var) *grad.Var { return nn.BCEWithLogits(v[0], tc.y, o) }
				name := fmt.Sprintf("%v %s x%v", red, opt, tc.x.Shape())
				near(t, name, f64(t, f(grad.Const(tc.x)).Value()), reduce(bceLogitsRef(xs, ys, wr, pr), red), 1e-13)
				if err := grad.Check(f, []*array.Array{tc.x}, 1e-6); err != nil {
					t.Fatalf("%s: %v", name, err)
				}
			}
		}
	}
	// float32 against float64 at the tails.
	x32 := grad.Param(big.AsType(array.Float32).Copy())
	l := nn.BCEWithLogits(x32, yb.AsType(array.Float32), &nn.BCEOptions{PosWeight: pw})
	if err := l.Backward(); err != nil {
		t.Fatal(err)
	}
	x64 := grad.Param(big.Copy())
	l64 := nn.BCEWithLogits(x64, yb, &nn.BCEOptions{PosWeight: pw})
	if err := l64.Backward(); err != nil {
		t.Fatal(err)
	}
	near(t, "float32 loss", f64(t, l.Value()), f64(t, l64.Value()), 1e-6)
	near(t, "float32 gradient", f64(t, x32.Grad()), f64(t, x64.Grad()), 1e-6)
}

// TestLossErrors provokes every error the losses report.
func TestLossErrors(t *testing.T) {
	rng := array.CPU().NewRNG(27)
	x := grad.Const(rng.Normal(array.Float32, 0, 1, 4, 3))
	labels := array.FromSlice([]int64{0, 2, 1, 1})
	p := grad.Const(rng.Uniform(array.Float32, 0.1, 0.9, 4, 3))
	y := rng.Uniform(array.Float32, 0, 1, 4, 3)
	ce := func(o *nn.CrossEntropyOptions) *grad.Var { return nn.CrossEntropyWith(x, labels, o) }
	cases := []struct {
		name string
		v    *grad.Var
		want string
		is   error
	}{
		{"smoothing -0.1", ce(&nn.CrossEntropyOptions{LabelSmoothing: -0.1}), "label smoothing -0.1: want a number in [0, 1]", nn.ErrHyper},
		{"smoothing 1.5", ce(&nn.CrossEntropyOptions{LabelSmoothing: 1.5}), "label smoothing 1.5", nn.ErrHyper},
		{"smoothing NaN", ce(&nn.CrossEntropyOptions{LabelSmoothing: math.NaN()}), "label smoothing NaN", nn.ErrHyper},
		{"NLLLoss smoothing", nn.NLLLoss(x, labels, &nn.CrossEntropyOptions{LabelSmoothing: 0.1}), "NLLLoss takes none", nn.ErrHyper},
		{"reduction", ce(&nn.CrossEntropyOptions{Reduction: 7}), "reduction Reduction(7)", nn.ErrHyper},
		{"weight length", ce(&nn.CrossEntropyOptions{Weight: array.FromSlice([]float32{1, 2})}), "weight of shape [2]", nil},
		{"weight 2-D", ce(&nn.CrossEntropyOptions{Weight: array.Ones(array.Float32, 1, 3)}), "want 3 floats, one per class", nil},
		{"weight ints", ce(&nn.CrossEntropyOptions{Weight: array.FromSlice([]int64{1, 2, 3})}), "dtype int64", nil},
		{"label 3", nn.CrossEntropyWith(x, array.FromSlice([]int64{0, 3, 1, 1}), &nn.CrossEntropyOptions{Ignore: true, IgnoreIndex: -100}), "label 3 of row 1 is outside [0, 3)", array.ErrIndex},
		{"labels shape", nn.NLLLoss(x, array.FromSlice([]int64{0, 1}), nil), "want integer labels of shape [4]", nil},
		{"float labels", nn.NLLLoss(x, array.FromSlice([]float32{0, 1, 1, 0}), nil), "dtype float32", nil},
		{"1-D input", nn.CrossEntropyWith(x.Reshape(-1), labels, nil), "want floats of shape (N, C)", nil},
		{"K-dim labels", nn.CrossEntropyWith(x.Reshape(2, 3, 2), labels, &nn.CrossEntropyOptions{}), "want integer labels of shape [2 2]", nil},
		{"BCE p > 1", nn.BCE(p.Add(0.5), y, nil), "is outside [0, 1]", nil},
		{"BCE p NaN", nn.BCE(p.Mul(math.NaN()), y, nil), "probability NaN at flat index 0", nil},
		{"BCE target shape", nn.BCE(p, y.Reshape(3, 4), nil), "target of shape [3 4] for input of shape [4 3]", nil},
		{"BCE PosWeight", nn.BCE(p, y, &nn.BCEOptions{PosWeight: array.Ones(array.Float32, 3)}), "PosWeight is BCEWithLogits's", nil},
		{"BCE weight shape", nn.BCE(p, y, &nn.BCEOptions{Weight: array.Ones(array.Float32, 4)}), "Weight of shape [4]", nil},
		{"BCE reduction", nn.BCE(p, y, &nn.BCEOptions{Reduction: 3}), "reduction Reduction(3)", nn.ErrHyper},
		{"BCEWithLogits PosWeight", nn.BCEWithLogits(x, y, &nn.BCEOptions{PosWeight: array.Ones(array.Float32, 2)}), "PosWeight of shape [2]", nil},
		{"BCEWithLogits int input", nn.BCEWithLogits(grad.Const(labels), labels, nil), "dtype int64, want floats", nil},
	}
	for _, c := range cases {
		err := c.v.Err()
		if err == nil || !strings.Contains(err.Error(), c.want) || (c.is != nil && !errors.Is(err, c.is)) {
			t.Errorf("%s: error %v, want one containing %q (is %v)", c.name, err, c.want, c.is)
		}
	}
	// An ignored label may lie outside the classes; other labels may not.
	o := &nn.CrossEntropyOptions{Ignore: true, IgnoreIndex: -100}
	if err := nn.CrossEntropyWith(x, array.FromSlice([]int64{0, -100, 1, 1}), o).Err(); err != nil {
		t.Errorf("ignored label -100: %v", err)
	}
	if err := nn.CrossEntropyWith(x, array.FromSlice([]int64{0, -100, 1, 1}), &nn.CrossEntropyOptions{}).Err(); !errors.Is(err, array.ErrIndex) {
		t.Errorf("label -100 without Ignore: %v, want ErrIndex", err)
	}
}
