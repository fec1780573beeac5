package grad_test

import (
	"fmt"
	"slices"
	"testing"

	"github.com/gocu-dev/gocu/array"
	"github.com/gocu-dev/gocu/grad"
)

// mlp is a two-layer network on random data whose parameters report, in
// OnGradReady, their gradient at that moment.
type mlp struct {
	w1, b1, w2, b2 *grad.Var
	x              *grad.Var
}

func newMLP(seed uint64) *mlp {
	r := array.CPU().NewRNG(seed)
	return &mlp{
		w1: grad.Param(r.Normal(array.Float64, 0, 1, 5, 7)),
		b1: grad.Param(r.Normal(array.Float64, 0, 1, 7)),
		w2: grad.Param(r.Normal(array.Float64, 0, 1, 7, 3)),
		b2: grad.Param(r.Normal(array.Float64, 0, 1, 3)),
		x:  grad.Const(r.Normal(array.Float64, 0, 1, 4, 5)),
	}
}

func (m *mlp) params() []*grad.Var { return []*grad.Var{m.w1, m.b1, m.w2, m.b2} }

func (m *mlp) loss() *grad.Var {
	h := m.x.MatMul(m.w1).Add(m.b1).Tanh()
	return h.MatMul(m.w2).Add(m.b2).Square().Sum()
}

// A hook sees the leaf's final gradient for the pass, before the pass has
// reached the parameters that come earlier in the forward computation.
func TestOnGradReady(t *testing.T) {
	m := newMLP(1)
	names := map[*grad.Var]string{m.w1: "w1", m.b1: "b1", m.w2: "w2", m.b2: "b2"}
	var order []string
	seen := map[string][]float64{}
	var w1Early bool
	for _, p := range m.params() {
		p.OnGradReady(func(v *grad.Var) {
			if v != p {
				t.Errorf("hook of %s called with another Var", names[p])
			}
			order = append(order, names[v])
			seen[names[v]] = vals(t, v.Grad())
			if names[v] == "w2" && m.w1.Grad() != nil {
				w1Early = true
			}
		})
	}
	for pass := 1; pass <= 2; pass++ {
		order = order[:0]
		if err := m.loss().Backward(); err != nil {
			t.Fatal(err)
		}
		if len(order) != 4 {
			t.Fatalf("pass %d: hooks %v, want one per parameter", pass, order)
		}
		pos := func(s string) int { return slices.Index(order, s) }
		if pos("w2") > pos("w1") || pos("b2") > pos("w1") || pos("b2") > pos("b1") {
			t.Errorf("pass %d: order %v: the second layer's gradients are ready first", pass, order)
		}
		for _, p := range m.params() {
			if got, want := seen[names[p]], vals(t, p.Grad()); !slices.Equal(got, want) {
				t.Errorf("pass %d: %s: the hook saw %v, the final gradient is %v", pass, names[p], got, want)
			}
		}
		if pass == 1 && w1Early {
			t.Errorf("w1 had a gradient when w2's hook ran: the pass reached it first")
		}
	}
}

// A leaf used several times fires once, with the sum; an unused parameter,
// a constant, Of and a removed hook fire nothing.
func TestOnGradReadyOnceAndRemove(t *testing.T) {
	x := grad.Param(array.FromSlice([]float64{1, 2, 3}))
	unused := grad.Param(array.FromSlice([]float64{4}))
	c := grad.Const(array.FromSlice([]float64{5, 6, 7}))
	calls := map[string]int{}
	var got []float64
	remove := x.OnGradReady(func(v *grad.Var) { calls["x"]++; got = vals(t, v.Grad()) })
	unused.OnGradReady(func(*grad.Var) { calls["unused"]++ })
	c.OnGradReady(func(*grad.Var) { calls["c"]++ })
	loss := func() *grad.Var { return x.Mul(x).Add(x.Mul(c)).Sum() }
	if err := loss().Backward(); err != nil {
		t.Fatal(err)
	}
	if want := []float64{2 + 5, 4 + 6, 6 + 7}; calls["x"] != 1 || !slices.Equal(got, want) {
		t.Fatalf("x: %d calls, gradient %v, want 1 and %v", calls["x"], got, want)
	}
	if calls["unused"] != 0 || calls["c"] != 0 {
		t.Errorf("unused %d, const %d calls", calls["unused"], calls["c"])
	}
	if _, err := grad.Of(loss(), x); err != nil || calls["x"] != 1 {
		t.Errorf("Of: %v, %d calls", err, calls["x"])
	}
	remove()
	remove()
	if err := loss().Backward(); err != nil || calls["x"] != 1 {
		t.Errorf("a removed hook: %v, %d calls", err, calls["x"])
	}
	var nilVar *grad.Var
	nilVar.OnGradReady(func(*grad.Var) {})()
	x.OnGradReady(nil)()
}

// A hook runs when a parameter's gradient is final, while the backward
// pass goes on to the parameters computed earlier: here b's gradient is
// ready before w's.
func ExampleVar_OnGradReady() {
	w := grad.Param(array.FromSlice([]float64{2, 3}))
	b := grad.Param(array.FromSlice([]float64{1}))
	for name, p := range map[string]*grad.Var{"w": w, "b": b} {
		p.OnGradReady(func(v *grad.Var) {
			g, _ := v.Grad().Float64s()
			fmt.Println(name, g)
		})
	}
	x := grad.Const(array.FromSlice([]float64{4, 5}))
	loss := x.Mul(w).Sum().Add(b).Square()
	if err := loss.Backward(); err != nil {
		fmt.Println(err)
	}
	// Output:
	// b [48]
	// w [192 240]
}
