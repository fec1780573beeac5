package nn

import (
	"math"
	"testing"

	"github.com/gocu-dev/gocu/array"
	"github.com/gocu-dev/gocu/grad"
)

// TestCrossEntropyPoison checks the GPU's way of reporting an out-of-range
// label (its row makes the loss and its gradient NaN) on the CPU, and that
// in-range labels give the same loss and gradient either way.
func TestCrossEntropyPoison(t *testing.T) {
	rng := array.CPU().NewRNG(7)
	x := rng.Normal(array.Float32, 0, 2, 4, 5)
	run := func(labels []int64, check bool) (float64, []float32) {
		t.Helper()
		p := grad.Param(x.Copy())
		l := crossEntropy(p, array.FromSliceOn(x.Device(), labels), check)
		if dt := l.DType(); dt != array.Float32 {
			t.Fatalf("loss of dtype %v, want float32", dt)
		}
		if err := l.Backward(); err != nil {
			t.Fatal(err)
		}
		v, err := l.Value().Item()
		if err != nil {
			t.Fatal(err)
		}
		g, err := p.Grad().Float32s()
		if err != nil {
			t.Fatal(err)
		}
		return v, g
	}
	good := []int64{4, 0, 2, 1}
	l1, g1 := run(good, true)
	l2, g2 := run(good, false)
	if l1 != l2 || math.IsNaN(l1) {
		t.Fatalf("loss %v checked, %v unchecked", l1, l2)
	}
	for i := range g1 {
		if g1[i] != g2[i] {
			t.Fatalf("gradient %v checked, %v unchecked", g1, g2)
		}
	}
	for _, bad := range []int64{5, -1} {
		l, g := run([]int64{4, bad, 2, 1}, false)
		if !math.IsNaN(l) {
			t.Fatalf("label %d: loss %v, want NaN", bad, l)
		}
		for i, v := range g {
			if row := i / 5; (row == 1) != math.IsNaN(float64(v)) {
				t.Fatalf("label %d: gradient %v: only row 1 should be NaN", bad, g)
			}
		}
	}
}

// TestClassLossPoison checks the GPU's report of an out-of-range label
// with options on the CPU: only its row is NaN, an ignored row is not,
// and in-range labels give the same results checked or not.
func TestClassLossPoison(t *testing.T) {
	rng := array.CPU().NewRNG(8)
	x := rng.Normal(array.Float32, 0, 2, 4, 5)
	o := &CrossEntropyOptions{Weight: rng.Uniform(array.Float32, 0.5, 2, 5), Ignore: true, IgnoreIndex: -100, LabelSmoothing: 0.1}
	for _, soft := range []bool{true, false} {
		if !soft {
			o.LabelSmoothing = 0
		}
		for _, red := range []Reduction{ReduceMean, ReduceNone} {
			o.Reduction = red
			run := func(labels []int64, check bool) ([]float64, []float64) {
				t.Helper()
				p := grad.Param(x.Copy())
				l := classLoss("CrossEntropy", p, array.FromSlice(labels), o, soft, check)
				if err := l.Sum().Backward(); err != nil {
					t.Fatal(err)
				}
				v, err1 := l.Value().AsType(array.Float64).Float64s()
				g, err2 := p.Grad().AsType(array.Float64).Float64s()
				if err1 != nil || err2 != nil {
					t.Fatal(err1, err2)
				}
				return v, g
			}
			good := []int64{4, 0, -100, 1}
			l1, g1 := run(good, true)
			l2, g2 := run(good, false)
			for i := range l1 {
				if l1[i] != l2[i] || math.IsNaN(l1[i]) {
					t.Fatalf("soft %v %v: loss %v checked, %v unchecked", soft, red, l1, l2)
				}
			}
			for i := range g1 {
				if g1[i] != g2[i] {
					t.Fatalf("soft %v %v: gradient %v checked, %v unchecked", soft, red, g1, g2)
				}
			}
			l, g := run([]int64{4, 5, -100, 1}, false)
			for i, v := range l {
				if (red == ReduceMean || i == 1) != math.IsNaN(v) {
					t.Fatalf("soft %v %v: loss %v: only row 1 should be NaN", soft, red, l)
				}
			}
			for i, v := range g {
				if row := i / 5; (row == 1) != math.IsNaN(v) || (row == 2 && v != 0) {
					t.Fatalf("soft %v %v: gradient %v: only row 1 should be NaN, row 2 zero", soft, red, g)
				}
			}
		}
	}
}

// TestBCEPoison checks the GPU's report of a probability outside [0, 1]
// on the CPU: that element's term and gradient are NaN, and only it.
func TestBCEPoison(t *testing.T) {
	p := grad.Param(array.FromSlice([]float32{0.2, 1.5, 0.7, -0.1, 0.5}))
	y := array.FromSlice([]float32{1, 0, 1, 1, 0})
	l := bce(p, y, &BCEOptions{Reduction: ReduceNone}, false)
	if err := l.Sum().Backward(); err != nil {
		t.Fatal(err)
	}
	v, err1 := l.Value().Float32s()
	g, err2 := p.Grad().Float32s()
	if err1 != nil || err2 != nil {
		t.Fatal(err1, err2)
	}
	for i := range v {
		bad := i == 1 || i == 3
		if bad != math.IsNaN(float64(v[i])) || bad != math.IsNaN(float64(g[i])) {
			t.Fatalf("terms %v, gradient %v: only elements 1 and 3 should be NaN", v, g)
		}
	}
}
