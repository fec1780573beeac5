package gpttrain

import (
	"errors"
	"fmt"
	"image/color"

	"github.com/gocu-dev/gocu/internal/cli"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
)

// checkPlotPath reports whether PlotLoss can write path.
func checkPlotPath(path string) error {
	if err := cli.CheckPlotPath(path); err != nil {
		if errors.Is(err, cli.ErrPlotName) {
			return fmt.Errorf("gpttrain: %w: %w", err, ErrConfig)
		}
		return fmt.Errorf("gpttrain: %w", err)
	}
	return nil
}

// PlotLoss draws the training and validation losses against the step.
func PlotLoss(path string, r *Result) error {
	if len(r.Train) == 0 {
		return errors.New("gpttrain: no losses to plot")
	}
	c := r.Model.Config
	p := plot.New()
	p.Title.Text = fmt.Sprintf("GPT %dL %dH %dd ctx %d (%.1fM parameters) on Go source, %s: %d steps, %.0f tokens/s",
		c.Layers, c.Heads, c.Dim, c.Context, float64(r.Params)/1e6, r.Device, r.Steps, r.TokensPS)
	p.X.Label.Text = "step"
	p.Y.Label.Text = "loss (nats per byte)"
	xy := func(ps []Point) plotter.XYs {
		out := make(plotter.XYs, 0, len(ps))
		for _, q := range ps {
			out = append(out, plotter.XY{X: float64(q.Step), Y: q.Loss})
		}
		return out
	}
	train, err := plotter.NewLine(xy(r.Train))
	if err != nil {
		return err
	}
	train.Color = color.RGBA{0x1f, 0x77, 0xb4, 0xff}
	train.Width = vg.Points(1.2)
	p.Add(train, plotter.NewGrid())
	p.Legend.Add("training", train)
	if len(r.Val) > 0 {
		val, err := plotter.NewLine(xy(r.Val))
		if err != nil {
			return err
		}
		val.Color = color.RGBA{0xd6, 0x27, 0x28, 0xff}
		val.Width = vg.Points(1.8)
		pts, err := plotter.NewScatter(xy(r.Val))
		if err != nil {
			return err
		}
		pts.Color = val.Color
		p.Add(val, pts)
		p.Legend.Add("validation", val)
	}
	p.Legend.Top = true
	return p.Save(9*vg.Inch, 5*vg.Inch, path)
}
