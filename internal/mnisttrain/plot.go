package mnisttrain

import (
	"errors"
	"fmt"
	"image/color"
	"os"
	"path/filepath"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
)

// CheckPlotPath reports whether PlotLoss can write path: a name ending in
// an image format it writes, in a folder that exists.
func CheckPlotPath(path string) error {
	switch strings.ToLower(strings.TrimPrefix(filepath.Ext(path), ".")) {
	case "png", "svg", "pdf", "jpg", "jpeg", "eps", "tif", "tiff":
	default:
		return fmt.Errorf("mnisttrain: plot file %s: want a name ending in .png or .svg (or .pdf, .jpg, .eps, .tif)", path)
	}
	dir := filepath.Dir(path)
	if st, err := os.Stat(dir); err != nil {
		return fmt.Errorf("mnisttrain: plot file %s: %w", path, err)
	} else if !st.IsDir() {
		return fmt.Errorf("mnisttrain: plot file %s: %s is not a folder", path, dir)
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
