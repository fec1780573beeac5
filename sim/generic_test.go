package sim_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/gocu-dev/gocu/kernel"
	"github.com/gocu-dev/gocu/meta"
	"github.com/gocu-dev/gocu/sim"
)

// Mix is a generic kernel as gocu gen sees one: out = x + w*(y-x).
func Mix[T kernel.Float](t *kernel.Thread, x, y, out []T, w T) {
	i := t.Index()
	out[i] = x[i] + w*(y[i]-x[i]) // out of range past len(out)
}

var mixSite = kernel.Site{File: "generic_test.go", Line: 16, Col: 2, Expr: "out[i]"}

// gocuChecked_Mix is Mix's checked twin as gocu gen writes it.
func gocuChecked_Mix[T kernel.Float](t *kernel.Thread, x, y, out []T, w T) {
	i := t.Index()
	*kernel.At(t, out, int(i), &mixSite, kernel.Write) = *kernel.At(t, x, int(i), &mixSite, kernel.Read) +
		w*(*kernel.At(t, y, int(i), &mixSite, kernel.Read)-*kernel.At(t, x, int(i), &mixSite, kernel.Read))
}

// Other has Mix[float32]'s signature: the lookup must not take it for Mix.
func Other(t *kernel.Thread, x, y, out []float32, w float32) {}

// Meters is a named float type, as users declare them.
type Meters float32

func init() {
	// What the generated file of this package would register.
	meta.Register(&meta.Module{Package: "github.com/gocu-dev/gocu/sim_test", Kernels: []meta.Kernel{
		{Name: "Mix[float32]", Func: Mix[float32], Checked: gocuChecked_Mix[float32]},
		{Name: "Mix[float64]", Func: Mix[float64], Checked: gocuChecked_Mix[float64]},
		{Name: "Other", Func: Other},
	}})
}

// runMix runs Mix through a type parameter, as generic user code does.
func runMix[T kernel.Float](cfg sim.Config, x, y, out []T, w T) error {
	return sim.Run(cfg, Mix[T], x, y, out, w)
}

// sim.Run finds the registered instance of a generic kernel passed through
// a type parameter or at a named float type: it runs its checked twin in
// checked mode and names it Mix[float32] in errors, in both modes.
func TestRunGenericInstances(t *testing.T) {
	const n = 64
	for _, checked := range []bool{false, true} {
		cfg := sim.Config{Grid: d1(2), Block: d1(n / 2), Checked: checked}
		x, y := make([]float32, n), make([]float32, n)
		for i := range x {
			x[i], y[i] = float32(i), float32(3*i+1)
		}
		out := make([]float32, n)
		if err := runMix(cfg, x, y, out, 0.25); err != nil {
			t.Fatalf("checked=%v: runMix: %v", checked, err)
		}
		for i := range out {
			if want := float64(x[i]) + 0.25*float64(y[i]-x[i]); float64(out[i]) != want {
				t.Fatalf("checked=%v: out[%d] = %v, want %v", checked, i, out[i], want)
			}
		}
		mx, my, mout := make([]Meters, n), make([]Meters, n), make([]Meters, n)
		for i := range mx {
			mx[i], my[i] = Meters(i), Meters(2*i)
		}
		if err := sim.Run(cfg, Mix[Meters], mx, my, mout, Meters(0.5)); err != nil {
			t.Fatalf("checked=%v: Mix[Meters]: %v", checked, err)
		}
		for i := range mout {
			if want := 1.5 * float64(i); float64(mout[i]) != want {
				t.Fatalf("checked=%v: Mix[Meters] out[%d] = %v, want %v", checked, i, mout[i], want)
			}
		}
		// An out-of-range write names the instance, not Go's closure.
		short := make([]float32, n-1)
		err := runMix(cfg, x, y, short, 1)
		var e *sim.Error
		if !errors.As(err, &e) || e.Kernel != "Mix[float32]" || e.Kind != sim.KindOutOfRange {
			t.Errorf("checked=%v: through a type parameter: %v", checked, err)
		}
		err = sim.Run(cfg, Mix[Meters], mx, my, make([]Meters, n-1), Meters(1))
		if !errors.As(err, &e) || e.Kernel != "Mix[float32]" || strings.Contains(err.Error(), "...") {
			t.Errorf("checked=%v: at Meters: %v", checked, err)
		}
	}
}
