package mnisttrain

import (
	"errors"
	"fmt"
	"image/color"

	"github.com/gocu-dev/gocu/internal/cli"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
)

// CheckPlotPath reports whether PlotLoss can write path: a name ending in
// an image format it writes, in a folder that exists.
func CheckPlotPath(path string) error {
	if err := cli.CheckPlotPath(path); err != nil {
		return fmt.Errorf("mnisttrain: %w", err)
	}
	return nil
}

// PlotLoss draws the training loss against the step into a PNG (or SVG)
// file, with the test accuracy after each epoch in the title.
func PlotLoss(path string, r *Result) error {
	if len(r.Losses) == 0 {
		return errors.New("mnisttrain: no losses to plot")
	}
	p := plot.New()
	p.Title.Text = fmt.Sprintf("MLP %s on MNIST (%s, %d steps): test accuracy %.2f%%", r.Model, r.Device, r.Steps, 100*r.Accuracy)
	p.X.Label.Text = "step"
	p.Y.Label.Text = "training loss (cross-entropy)"
	p.Y.Scale = plot.LogScale{}
	p.Y.Tick.Marker = plot.LogTicks{Prec: -1}
	pts := make(plotter.XYs, 0, len(r.Losses))
	for _, l := range r.Losses {
		if l.Loss > 0 {
			pts = append(pts, plotter.XY{X: float64(l.Step), Y: l.Loss})
		}
	}
	line, err := plotter.NewLine(pts)
	if err != nil {
		return err
	}
	line.Color = color.RGBA{0x1f, 0x77, 0xb4, 0xff}
	line.Width = vg.Points(1.5)
	p.Add(line, plotter.NewGrid())
	return p.Save(9*vg.Inch, 5*vg.Inch, path)
}
