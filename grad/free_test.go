package grad_test

import (
	"errors"
	"runtime"
	"testing"

	"github.com/gocu-dev/gocu/array"
	"github.com/gocu-dev/gocu/grad"
)

// freeGraph records y = sum(tanh(a·w)·b + exp(a·w)) through views, a
// same-dtype cast, a product read twice and a Func whose gradient makes
// temporaries; it returns y and the intermediate Vars.
func freeGraph(a, w, b *grad.Var) (y *grad.Var, mids []*grad.Var) {
	h := a.MatMul(w)         // read by two operations
	r := h.Reshape(-1)       // a view
	c := r.AsType(r.DType()) // may hold r's array itself
	t := c.Tanh()
	sq := grad.Func("Square", t.Value().Mul(t.Value()), []*grad.Var{t}, func(g *array.Array) []*array.Array {
		two := t.Value().Mul(2).Copy() // a temporary the gradient does not return
		return []*array.Array{g.Mul(two)}
	})
	e := h.Exp().Reshape(-1)
	m := sq.Mul(b)
	y = m.Add(e).Sum()
	return y, []*grad.Var{h, r, c, t, sq, e, m}
}

// BackwardFree gives Backward's gradients and closes the intermediate
// values, not the parameters or the loss.
func TestBackwardFree(t *testing.T) {
	for name, d := range devices(t) {
		t.Run(name, func(t *testing.T) {
			rng := d.NewRNG(7)
			av := rng.Normal(array.Float64, 0, 1, 3, 4).Copy()
			wv := rng.Normal(array.Float64, 0, 0.5, 4, 5).Copy()
			bv := rng.Normal(array.Float64, 0, 1, 15).Copy()
			var want [][]float64
			var wantLoss float64
			for i, free := range []bool{false, true} {
				a, w, b := grad.Param(av.Copy()), grad.Param(wv.Copy()), grad.Param(bv.Copy())
				sc := d.NewScope()
				y, mids := freeGraph(a, w, b)
				var err error
				if free {
					err = y.BackwardFree()
				} else {
					err = y.Backward()
				}
				if err != nil {
					t.Fatal(err)
				}
				loss, err := y.Value().Item()
				if err != nil {
					t.Fatalf("free=%v: the loss: %v", free, err)
				}
				got := [][]float64{vals(t, a.Grad()), vals(t, w.Grad()), vals(t, b.Grad()), vals(t, a.Value())}
				if i == 0 {
					want, wantLoss = got, loss
				} else {
					if loss != wantLoss {
						t.Errorf("loss %v, want %v", loss, wantLoss)
					}
					for k := range want {
						near(t, "BackwardFree", got[k], want[k], 0)
					}
					for k, m := range mids {
						if err := m.Value().Err(); !errors.Is(err, array.ErrClosed) {
							t.Errorf("intermediate %d after BackwardFree: %v, want ErrClosed", k, err)
						}
					}
				}
				sc.Close()
			}
		})
	}
}

// BackwardFree returns the forward pass's memory during the pass: the
// bytes in use afterwards, inside the step's scope, are those of the
// gradients and the loss, not of the activations.
func TestBackwardFreeMemory(t *testing.T) {
	d := array.CPU()
	rng := d.NewRNG(3)
	const n = 256 // 256 KiB per float32 activation
	x := grad.Const(rng.Normal(array.Float32, 0, 1, n, n).Copy())
	w := grad.Param(rng.Normal(array.Float32, 0, 0.1, n, n).Copy())
	after := map[bool]int64{}
	for _, free := range []bool{false, true} {
		if g := w.Grad(); g != nil {
			g.Close()
		}
		w.ZeroGrad()
		runtime.GC() // no garbage of earlier tests left for the collector to free meanwhile
		sc := d.NewScope()
		h := x
		for range 8 {
			h = h.MatMul(w).Tanh()
		}
		y := h.Mul(h).Sum()
		if err := y.Value().Eval().Err(); err != nil {
			t.Fatal(err)
		}
		before := d.Memory().InUse
		var err error
		if free {
			err = y.BackwardFree()
		} else {
			err = y.Backward()
		}
		if err != nil {
			t.Fatal(err)
		}
		after[free] = d.Memory().InUse - before
		sc.Close()
	}
	t.Logf("bytes in use after Backward: %d; after BackwardFree: %d", after[false], after[true])
	// The forward pass holds at least the 8 products, of act bytes each:
	// Backward leaves them to the scope, BackwardFree frees them as it
	// passes (6 of them at least, whatever the collector does meanwhile).
	act := int64(n * n * 4)
	if after[false]-after[true] < 6*act {
		t.Errorf("BackwardFree freed %d bytes more than Backward, want at least %d (6 activations)", after[false]-after[true], 6*act)
	}
}
