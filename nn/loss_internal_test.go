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
