package nn_test

import (
	"errors"
	"runtime"
	"testing"

	"github.com/gocu-dev/gocu/array"
	"github.com/gocu-dev/gocu/grad"
	"github.com/gocu-dev/gocu/nn"
)

// ClipGradNorm replaces each gradient by its scaled copy and closes the
// old one: the gradients' memory does not double. Parameters that shared
// a gradient share its copy, scaled once.
func TestClipGradNormFrees(t *testing.T) {
	d := array.CPU()
	rng := d.NewRNG(11)
	const n = 64 << 10 // 256 KiB of float32 per gradient
	a := grad.Param(rng.Normal(array.Float32, 0, 1, n).Copy())
	b := grad.Param(rng.Normal(array.Float32, 0, 1, n).Copy())
	c := grad.Param(rng.Normal(array.Float32, 0, 1, n).Copy())
	ga, gb := rng.Normal(array.Float32, 0, 1, n).Copy(), rng.Normal(array.Float32, 0, 1, n).Copy()
	a.SetGrad(ga)
	b.SetGrad(gb)
	c.SetGrad(gb) // shared, as a tied weight's
	va, vb := f64(t, ga), f64(t, gb)
	runtime.GC()
	before := d.Memory().InUse
	norm, err := nn.ClipGradNorm([]*grad.Var{a, b, c}, 1, nil)
	if err != nil {
		t.Fatal(err)
	}
	total := f64(t, norm)[0]
	if grew := d.Memory().InUse - before; grew > 1024 {
		t.Errorf("ClipGradNorm left %d more bytes in use, want the old gradients freed", grew)
	}
	if !errors.Is(ga.Err(), array.ErrClosed) || !errors.Is(gb.Err(), array.ErrClosed) {
		t.Errorf("the old gradients: %v, %v; want them closed", ga.Err(), gb.Err())
	}
	if b.Grad() != c.Grad() {
		t.Error("parameters that shared a gradient got different copies")
	}
	coef := 1 / (total + 1e-6)
	for i, v := range [][]float64{va, vb, vb} {
		want := make([]float64, len(v))
		for j := range v {
			want[j] = v[j] * coef
		}
		near(t, "clipped gradient", f64(t, []*grad.Var{a, b, c}[i].Grad()), want, 1e-6)
	}
}

// LinearMixed keeps, after its forward pass, its result and the casts its
// gradient reads, not the product before the bias; its backward pass
// leaves the gradients and nothing it made for itself.
func TestLinearMixedFrees(t *testing.T) {
	d := array.CPU()
	rng := d.NewRNG(12)
	const rows, in, out = 256, 128, 192
	x := grad.Param(rng.Normal(array.Float32, 0, 1, rows, in).Copy())
	w := grad.Param(rng.Normal(array.Float32, 0, 0.1, out, in).Copy())
	b := grad.Param(rng.Normal(array.Float32, 0, 0.1, out).Copy())
	runtime.GC()
	sc := d.NewScope()
	defer sc.Close()
	before := d.Memory().InUse
	y := nn.LinearMixed(x, w, b, array.BFloat16)
	if err := y.Value().Eval().Err(); err != nil {
		t.Fatal(err)
	}
	// y (float32) and the bfloat16 casts of x and w.
	want := int64(rows*out*4 + rows*in*2 + out*in*2)
	// At most: the collector may free other tests' dropped arrays
	// meanwhile.
	if got := d.Memory().InUse - before; got > want || got < want/2 {
		t.Errorf("after the forward pass %d bytes in use, want %d", got, want)
	}
	loss := y.Mul(y).Sum()
	if err := loss.Backward(); err != nil {
		t.Fatal(err)
	}
	for _, p := range []*grad.Var{x, w, b} {
		if err := p.Grad().Eval().Err(); err != nil {
			t.Fatal(err)
		}
	}
	// y, y·y (evaluated by the loss's sum), the loss and the float32
	// gradients of x, w and b.
	want = int64(2*rows*out*4+4) + int64(rows*in*4+out*in*4+out*4)
	if got := d.Memory().InUse - before; got > want {
		t.Errorf("after the backward pass %d bytes in use, want at most %d", got, want)
	}
}
