package nn

import (
	"fmt"
	"reflect"
	"strconv"

	"github.com/gocu-dev/gocu/array"
	"github.com/gocu-dev/gocu/grad"
)

// Module is a layer or a model: it maps a Var to a Var and owns named
// parameters.
type Module interface {
	Forward(x *grad.Var) *grad.Var
	// Named lists the parameters with their names in a state dictionary
	// (PyTorch's: "weight", "0.bias", ...), in a fixed order.
	Named() []Named
}

// Named is a parameter and its name in a model's state.
type Named struct {
	Name string
	Var  *grad.Var
}

// Params returns m's parameters in order (what an optimiser takes).
func Params(m Module) []*grad.Var {
	ns := m.Named()
	ps := make([]*grad.Var, len(ns))
	for i, n := range ns {
		ps[i] = n.Var
	}
	return ps
}

// Trainable is a module whose behaviour differs between training and
// evaluation (Dropout), or one that contains such modules (Sequential).
type Trainable interface {
	SetTraining(on bool)
}

// Train switches m (and every module inside it) between training (true,
// the default) and evaluation (false), as PyTorch's train() and eval().
func Train(m Module, on bool) {
	if t, ok := m.(Trainable); ok {
		t.SetTraining(on)
	}
}

// Cast converts every parameter of m to dtype dt (float32 or float64), in
// place: the Vars stay, their arrays are replaced.
func Cast(m Module, dt array.DType) error {
	if dt != array.Float32 && dt != array.Float64 {
		hint := ""
		if dt == array.Float16 || dt == array.BFloat16 {
			hint = fmt.Sprintf("; keep float32 master weights and compute in %v (Autocast, Linear.Compute, or Var.AsType in Forward), through which gradients flow", dt)
		}
		return fmt.Errorf("nn: Cast to %v: parameters are float32 or float64 (optimisers update only those)%s", dt, hint)
	}
	for _, n := range m.Named() {
		if n.Var.DType() == dt {
			continue
		}
		a := n.Var.Value().AsType(dt).Eval()
		if err := a.Err(); err != nil {
			return fmt.Errorf("nn: Cast %s: %w", n.Name, err)
		}
		if err := n.Var.SetValue(a); err != nil {
			return err
		}
		n.Var.ZeroGrad()
	}
	return nil
}

// Sequential applies modules one after the other. Its parameters are
// named by position, as PyTorch's nn.Sequential: "0.weight", "2.bias".
type Sequential struct {
	Layers []Module
}

// NewSequential returns the modules chained.
func NewSequential(layers ...Module) *Sequential { return &Sequential{Layers: layers} }

// Forward implements Module.
func (s *Sequential) Forward(x *grad.Var) *grad.Var {
	if s == nil {
		return grad.Const(array.Failed(fmt.Errorf("nn: Forward of a nil *Sequential")))
	}
	for i, l := range s.Layers {
		if isNil(l) {
			return grad.Const(array.Failed(fmt.Errorf("nn: Sequential: layer %d is nil", i)))
		}
		x = l.Forward(x)
	}
	return x
}

// isNil reports whether m is nil or a nil pointer of a module type.
func isNil(m Module) bool {
	if m == nil {
		return true
	}
	v := reflect.ValueOf(m)
	return v.Kind() == reflect.Pointer && v.IsNil()
}

// Named implements Module.
func (s *Sequential) Named() []Named {
	var out []Named
	for i, l := range s.Layers {
		if isNil(l) {
			continue // Forward reports it
		}
		for _, n := range l.Named() {
			out = append(out, Named{Name: strconv.Itoa(i) + "." + n.Name, Var: n.Var})
		}
	}
	return out
}

// SetTraining implements Trainable.
func (s *Sequential) SetTraining(on bool) {
	for _, l := range s.Layers {
		if !isNil(l) {
			Train(l, on)
		}
	}
}

// stateless is embedded by modules without parameters.
type stateless struct{}

// Named implements Module: no parameters.
func (stateless) Named() []Named { return nil }
