package nn_test

import (
	"errors"
	"math"
	"slices"
	"testing"

	"github.com/gocu-dev/gocu/array"
	"github.com/gocu-dev/gocu/nn"
)

// The quantised linear layer: int8 weights per output channel, input per
// row, int8 product, fused epilogue; close to the float32 layer.
func TestQuantizedLinear(t *testing.T) {
	d := array.CPU()
	for _, c := range []struct{ m, in, out int }{{16, 784, 512}, {5, 30, 10}, {1, 7, 3}} {
		x := d.NewRNG(1).Normal(array.Float32, 0, 1, c.m, c.in)
		w := d.NewRNG(2).Normal(array.Float32, 0, 1/math.Sqrt(float64(c.in)), c.in, c.out)
		b := d.NewRNG(3).Normal(array.Float32, 0, 0.1, c.out)
		l, err := nn.NewQuantizedLinear(w, b)
		if err != nil {
			t.Fatal(err)
		}
		y := l.Forward(x)
		ref := x.MatMul(w).Add(b)
		yv, err := y.Float32s()
		if err != nil {
			t.Fatal(err)
		}
		rv, _ := ref.Float32s()
		xmax, _ := x.Abs().Max().Item()
		wmax, _ := w.Abs().Max().Item()
		// Worst case: half a step of x times |w| summed, plus |x| times
		// half a step of w, over the inputs.
		bound := float64(c.in) * (xmax/127/2*wmax + xmax*wmax/127/2) * 1.01
		worst := 0.0
		for i := range yv {
			worst = math.Max(worst, math.Abs(float64(yv[i]-rv[i])))
		}
		if worst > bound || worst == 0 {
			t.Errorf("%v: largest difference from float32 %v, bound %v", c, worst, bound)
		}
		if !slices.Equal(y.Shape(), []int{c.m, c.out}) {
			t.Errorf("shape %v", y.Shape())
		}
		y3 := l.Forward(x.Reshape(1, c.m, c.in))
		if !slices.Equal(y3.Shape(), []int{1, c.m, c.out}) || y3.Err() != nil {
			t.Errorf("batched: %v %v", y3.Shape(), y3.Err())
		}
		l.Close()
	}
}

// Shapes that do not fit are errors that match array.ErrShape.
func TestQuantizedLinearErrors(t *testing.T) {
	d := array.CPU()
	w := d.NewRNG(1).Normal(array.Float32, 0, 1, 6, 4)
	if _, err := nn.NewQuantizedLinear(d.Zeros(array.Float32, 6), nil); !errors.Is(err, array.ErrShape) {
		t.Errorf("1-D weights: %v, want ErrShape", err)
	}
	if _, err := nn.NewQuantizedLinear(w, d.Zeros(array.Float32, 5)); !errors.Is(err, array.ErrShape) {
		t.Errorf("bias of 5 for 4 outputs: %v, want ErrShape", err)
	}
	l, err := nn.NewQuantizedLinear(w, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if err := l.Forward(d.Zeros(array.Float32, 2, 5)).Err(); !errors.Is(err, array.ErrShape) {
		t.Errorf("input of 5 for 6 inputs: %v, want ErrShape", err)
	}
	bad := array.Failed(errors.New("upstream"))
	if err := l.Forward(bad).Err(); err == nil || err.Error() != "upstream" {
		t.Errorf("failed input: %v, want its own error", err)
	}
}

// The quantised linear layer on the GPU gives what the CPU gives (an
// exact int8 product; the epilogue in float32 with the same rounding).
func TestGPUQuantizedLinearMatchesCPU(t *testing.T) {
	g := testGPU(t).Device()
	rng := array.CPU().NewRNG(1)
	x := rng.Normal(array.Float32, 0, 1, 64, 784)
	w := rng.Normal(array.Float32, 0, 0.05, 784, 10)
	b := rng.Normal(array.Float32, 0, 0.1, 10)
	lc, err := nn.NewQuantizedLinear(w, b)
	if err != nil {
		t.Fatal(err)
	}
	defer lc.Close()
	l, err := nn.NewQuantizedLinear(w.To(g), b.To(g))
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	got, err := l.Forward(x.To(g)).ReLU().Float32s()
	if err != nil {
		t.Fatal(err)
	}
	want, err := lc.Forward(x).ReLU().Float32s()
	if err != nil {
		t.Fatal(err)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("element %d = %v, CPU %v", i, got[i], want[i])
		}
	}
}
