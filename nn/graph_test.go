package nn_test

import (
	"fmt"
	"testing"

	"github.com/gocu-dev/gocu/array"
	"github.com/gocu-dev/gocu/grad"
	"github.com/gocu-dev/gocu/nn"
)

// TestCapturedStepMatchesEager trains a small model for a few steps
// eagerly and with the step captured as a CUDA graph (on the CPU the
// capture runs the step) and compares the parameters: the optimisers'
// device-side step count and learning rate make the replays right, with a
// learning rate changed between replays.
func TestCapturedStepMatchesEager(t *testing.T) {
	devs := map[string]*array.Maker{"cpu": array.CPU()}
	if g, err := gpuOnce(); err == nil {
		devs["gpu"] = g
	}
	for dn, d := range devs {
		for _, name := range []string{"Adam", "AdamW", "SGD"} {
			t.Run(dn+"/"+name, func(t *testing.T) {
				var got [2][][]float64
				for k, graph := range []bool{false, true} {
					rng := d.NewRNG(3)
					m := nn.NewSequential(nn.NewLinear(rng, 20, 16), nn.GELU{}, nn.NewLinear(rng, 16, 5))
					var o nn.Optimizer
					var setLR func(float64) error
					switch name {
					case "Adam":
						a := nn.NewAdam(nn.Params(m), 1e-2)
						o, setLR = a, a.SetLR
					case "AdamW":
						a := nn.NewAdamW(nn.Params(m), 1e-2, 0.1)
						o, setLR = a, a.SetLR
					default:
						s := nn.NewSGD(nn.Params(m), 0.1)
						s.Momentum, s.Nesterov = 0.9, true
						o, setLR = s, s.SetLR
					}
					x := d.Zeros(array.Float32, 8, 20).Copy()
					y := d.Zeros(array.Int64, 8).Copy()
					step := func() error {
						o.ZeroGrad()
						if err := nn.CrossEntropy(m.Forward(grad.Const(x)), y).Backward(); err != nil {
							return err
						}
						return o.Step()
					}
					data := func(i int) error {
						r := d.NewRNG(uint64(100 + i))
						if err := x.Assign(r.Normal(array.Float32, 0, 1, 8, 20)); err != nil {
							return err
						}
						return y.Assign(r.Uniform(array.Float32, 0, 5, 8).AsType(array.Int64))
					}
					var g *array.Graph
					for i := range 6 {
						if err := data(i); err != nil {
							t.Fatal(err)
						}
						if i == 3 {
							if err := setLR(0.003); err != nil {
								t.Fatal(err)
							}
						}
						var err error
						switch {
						case !graph:
							err = step()
						case g == nil:
							g, err = d.Capture(step)
						default:
							err = g.Replay()
						}
						if err != nil {
							t.Fatal(err)
						}
					}
					if g != nil {
						defer g.Close()
					}
					for _, p := range nn.Params(m) {
						got[k] = append(got[k], f64(t, p.Value()))
					}
				}
				for i := range got[0] {
					near(t, fmt.Sprintf("parameter %d", i), got[1][i], got[0][i], 1e-6)
				}
			})
		}
	}
}
