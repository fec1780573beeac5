package grad_test

import (
	"errors"
	"testing"

	"github.com/gocu-dev/gocu/array"
	"github.com/gocu-dev/gocu/grad"
)

// Every method of a nil *Var fails with ErrNilVar (or returns a zero
// value) instead of panicking, as do operations taking one as an operand,
// Backward, Of and Check.
func TestNilVar(t *testing.T) {
	var v *grad.Var
	p := grad.Param(array.CPU().Ones(array.Float64, 3))
	for name, y := range map[string]*grad.Var{
		"Add": v.Add(1), "Mul": v.Mul(p), "operand": p.Add(v), "Exp": v.Exp(), "Sign": v.Sign(),
		"Reshape": v.Reshape(3), "Slice": v.Slice(array.S(1)), "Sum": v.Sum(), "Softmax": v.Softmax(0),
		"MatMul": v.MatMul(p), "AsType": v.AsType(array.Float32), "Detach": v.Detach(), "T": v.T(),
	} {
		if err := y.Err(); !errors.Is(err, grad.ErrNilVar) {
			t.Errorf("%s: %v", name, err)
		}
	}
	if _, err := v.Item(); !errors.Is(err, grad.ErrNilVar) {
		t.Errorf("Item: %v", err)
	}
	if err := v.Backward(); !errors.Is(err, grad.ErrNilVar) {
		t.Errorf("Backward: %v", err)
	}
	if _, err := grad.Of(p.Sum(), v); !errors.Is(err, grad.ErrNilVar) {
		t.Errorf("Of: %v", err)
	}
	if err := v.SetValue(p.Value()); !errors.Is(err, grad.ErrNilVar) {
		t.Errorf("SetValue: %v", err)
	}
	v.ZeroGrad()
	if v.Shape() != nil || v.Size() != 0 || v.Grad() != nil || v.Close() != nil {
		t.Error("nil Var: Shape, Size, Grad or Close")
	}
	if err := grad.Check(nil, []*array.Array{p.Value()}, 1e-6); err == nil {
		t.Error("Check(nil, ...): no error")
	}
	if err := grad.Check(func(...*grad.Var) *grad.Var { return nil }, []*array.Array{p.Value()}, 1e-6); !errors.Is(err, grad.ErrNilVar) {
		t.Errorf("Check of a function returning nil: %v", err)
	}
	if err := grad.Check(func(xs ...*grad.Var) *grad.Var { return xs[0] }, []*array.Array{nil}, 1e-6); err == nil {
		t.Error("Check of a nil input: no error")
	}
}
