package bench

import (
	"errors"
	"fmt"
	"image/color"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// The roofline: attained GFLOP/s against arithmetic intensity (FLOP per
// byte), both log scales. The measured memory bandwidth is the slanted
// roof, the measured FP32 (and TF32) matmul rates the flat ones. Every
// workload that computes is a labelled point with its share of the roof
// above it; pure transfers with another ceiling (host copies) are drawn as
// their own slanted lines, and the latencies are listed in a box, so that
// the picture reads without the table.

var palette = []color.Color{
	color.RGBA{0x1f, 0x77, 0xb4, 0xff}, color.RGBA{0xd6, 0x27, 0x28, 0xff}, color.RGBA{0x2c, 0xa0, 0x2c, 0xff},
	color.RGBA{0x94, 0x67, 0xbd, 0xff}, color.RGBA{0xff, 0x7f, 0x0e, 0xff}, color.RGBA{0x8c, 0x56, 0x4b, 0xff},
	color.RGBA{0xe3, 0x77, 0xc2, 0xff}, color.RGBA{0x17, 0xbe, 0xcf, 0xff}, color.RGBA{0xbc, 0xbd, 0x22, 0xff},
}

var glyphs = []draw.GlyphDrawer{draw.CircleGlyph{}, draw.SquareGlyph{}, draw.TriangleGlyph{}, draw.PyramidGlyph{},
	draw.RingGlyph{}, draw.BoxGlyph{}, draw.CrossGlyph{}, draw.PlusGlyph{}}

// Plot draws the report's roofline into w in format "png" or "svg".
func (r *Report) Plot(w io.Writer, format string) error {
	format = strings.TrimPrefix(strings.ToLower(format), ".")
	if format != "png" && format != "svg" {
		return fmt.Errorf("bench: plot format %q: want png or svg", format)
	}
	p, err := r.roofline()
	if err != nil {
		return err
	}
	wt, err := p.WriterTo(11*vg.Inch, 7*vg.Inch, format)
	if err != nil {
		return err
	}
	_, err = wt.WriteTo(w)
	return err
}

// PlotFile draws the roofline into a .png or .svg file.
func (r *Report) PlotFile(path string) error {
	ext := strings.ToLower(filepath.Ext(path))
	if ext != ".png" && ext != ".svg" {
		return fmt.Errorf("bench: --plot %s: the file must end in .png or .svg", path)
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	err = r.Plot(f, ext)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(path)
	}
	return err
}

type point struct {
	x, y  float64 // FLOP/B, GFLOP/s
	label string
}

func (r *Report) roofline() (*plot.Plot, error) {
	mem := r.Ceilings.MemoryGBps
	fp32 := r.Ceilings.FP32TFLOPs * 1e3
	tf32 := r.Ceilings.TF32TFLOPs * 1e3
	var pts []point
	type slope struct {
		gbps  float64
		label string
	}
	var transfers []slope
	var latencies []string
	for _, x := range r.Results {
		if x.Error != "" || x.Skipped != "" {
			continue
		}
		switch {
		case x.Flops > 0 && x.Bytes > 0:
			label := x.Name
			if x.Percent > 0 {
				label += " " + percent(x.Percent)
			}
			pts = append(pts, point{x: x.Intensity, y: x.TFLOPs * 1e3, label: label})
		case x.Bytes > 0 && x.Roof == "" && x.GBps > 0:
			transfers = append(transfers, slope{x.GBps, fmt.Sprintf("%s %s GB/s", x.Name, sig(x.GBps))})
		case x.Ops > 0 && x.Flops == 0:
			latencies = append(latencies, fmt.Sprintf("%s: %s %s", x.Name, sig(x.PerOp), x.Unit))
		}
	}
	if len(pts) == 0 && mem == 0 && fp32 == 0 {
		return nil, errors.New("bench: nothing to plot: no workload with a rate and no ceiling")
	}

	// Axis ranges, in decades around the points and the roofs' knees.
	xs := []float64{}
	ys := []float64{}
	for _, q := range pts {
		xs, ys = append(xs, q.x), append(ys, q.y)
	}
	for _, peak := range []float64{fp32, tf32} {
		if peak > 0 {
			ys = append(ys, peak)
			if mem > 0 {
				xs = append(xs, peak/mem)
			}
		}
	}
	if len(xs) == 0 {
		xs = []float64{0.1, 100}
	}
	if len(ys) == 0 {
		ys = []float64{mem * 0.1, mem * 100}
	}
	xmin := math.Pow(10, math.Floor(math.Log10(slices.Min(xs)/3)))
	xmax := math.Pow(10, math.Ceil(math.Log10(slices.Max(xs)*3)))
	// Two decades above the highest roof or point hold the legend, in the
	// corner no workload can reach (high rate, low intensity).
	ymax := math.Pow(10, math.Ceil(math.Log10(slices.Max(ys)*2))+2)
	ymin := slices.Min(ys) / 30
	for _, t := range transfers {
		ymin = min(ymin, t.gbps*xmin)
	}
	if mem > 0 {
		ymin = min(ymin, mem*xmin)
	}
	ymin = math.Pow(10, math.Floor(math.Log10(ymin)))

	p := plot.New()
	title := "Roofline: " + r.Device.Kind
	if r.Device.Name != "" {
		title += ", " + r.Device.Name
	}
	title += ", " + r.Date.Format("2006-01-02")
	if r.Small {
		title += " (small sizes)"
	}
	p.Title.Text = title
	p.X.Label.Text = "arithmetic intensity (FLOP per byte moved)"
	p.Y.Label.Text = "attained FLOP/s"
	p.X.Scale, p.Y.Scale = plot.LogScale{}, plot.LogScale{}
	p.X.Tick.Marker, p.Y.Tick.Marker = plot.LogTicks{Prec: -1}, siTicks{}
	p.X.Min, p.X.Max, p.Y.Min, p.Y.Max = xmin, xmax, ymin, ymax
	p.Legend.Top, p.Legend.Left = true, true
	p.Legend.XOffs, p.Legend.YOffs = vg.Points(12), -vg.Points(12)
	p.Add(plotter.NewGrid())

	line := func(xys plotter.XYs, c color.Color, width vg.Length, dashes []vg.Length) (*plotter.Line, error) {
		l, err := plotter.NewLine(xys)
		if err != nil {
			return nil, err
		}
		l.LineStyle = draw.LineStyle{Color: c, Width: width, Dashes: dashes}
		return l, nil
	}
	black, gray := color.Black, color.Gray{0x80}
	// The roof: bandwidth up to the knee of the highest flat roof.
	top := max(fp32, tf32)
	if mem > 0 {
		end := xmax
		if top > 0 {
			end = min(xmax, top/mem)
		}
		l, err := line(plotter.XYs{{X: xmin, Y: mem * xmin}, {X: end, Y: mem * end}}, black, 2, nil)
		if err != nil {
			return nil, err
		}
		p.Add(l)
		p.Legend.Add(fmt.Sprintf("memory: %s GB/s (measured copy)", sig(mem)), l)
	}
	for _, roof := range []struct {
		v      float64
		name   string
		dashes []vg.Length
	}{{fp32, "FP32", nil}, {tf32, "TF32 tensor cores", []vg.Length{vg.Points(6), vg.Points(3)}}} {
		if roof.v <= 0 {
			continue
		}
		start := xmin
		if mem > 0 {
			start = max(xmin, roof.v/mem)
		}
		l, err := line(plotter.XYs{{X: start, Y: roof.v}, {X: xmax, Y: roof.v}}, black, 2, roof.dashes)
		if err != nil {
			return nil, err
		}
		p.Add(l)
		p.Legend.Add(fmt.Sprintf("%s: %s (measured library SGEMM)", roof.name, rate(roof.v)), l)
	}
	for _, t := range transfers {
		end := xmax
		if top > 0 {
			end = min(xmax, top/t.gbps)
		}
		l, err := line(plotter.XYs{{X: xmin, Y: t.gbps * xmin}, {X: end, Y: t.gbps * end}}, gray, 1, []vg.Length{vg.Points(2), vg.Points(2)})
		if err != nil {
			return nil, err
		}
		p.Add(l)
		p.Legend.Add(t.label, l)
	}

	// One point per workload, labelled beside it.
	var placed []point
	var labels plotter.XYLabels
	for i, q := range pts {
		s, err := plotter.NewScatter(plotter.XYs{{X: q.x, Y: q.y}})
		if err != nil {
			return nil, err
		}
		s.GlyphStyle = draw.GlyphStyle{Color: palette[i%len(palette)], Radius: vg.Points(4), Shape: glyphs[i%len(glyphs)]}
		p.Add(s)
		p.Legend.Add(q.label, s)
		lx, ly := q.x*1.25, q.y
		for _, o := range placed { // keep labels of close points apart
			if math.Abs(math.Log10(lx/o.x)) < 0.8 && math.Abs(math.Log10(ly/o.y)) < 0.09 {
				ly = o.y / math.Pow(10, 0.1)
			}
		}
		placed = append(placed, point{x: lx, y: ly})
		labels.XYs = append(labels.XYs, plotter.XY{X: lx, Y: ly})
		labels.Labels = append(labels.Labels, q.label)
	}
	if len(labels.XYs) > 0 {
		l, err := plotter.NewLabels(labels)
		if err != nil {
			return nil, err
		}
		p.Add(l)
	}
	if len(latencies) > 0 {
		box, err := plotter.NewLabels(plotter.XYLabels{
			XYs:    plotter.XYs{{X: xmax / math.Pow(10, 0.05), Y: ymin * math.Pow(10, 0.1)}},
			Labels: []string{"latencies:\n" + strings.Join(latencies, "\n")},
		})
		if err != nil {
			return nil, err
		}
		for i := range box.TextStyle {
			box.TextStyle[i].XAlign = draw.XRight
			box.TextStyle[i].YAlign = draw.YBottom
		}
		p.Add(box)
	}
	return p, nil
}

// rate prints a rate given in GFLOP/s in GFLOP/s or TFLOP/s.
func rate(gflops float64) string {
	if gflops >= 1000 {
		return sig(gflops/1e3) + " TFLOP/s"
	}
	return sig(gflops) + " GFLOP/s"
}

// percent prints a share with two significant digits below 10%.
func percent(p float64) string {
	if p >= 10 {
		return fmt.Sprintf("%.0f%%", p)
	}
	return fmt.Sprintf("%.2g%%", p)
}

// siTicks labels a log axis in GFLOP/s with SI prefixes: 1G, 10G, ...,
// 1T, 1P.
type siTicks struct{}

func (siTicks) Ticks(lo, hi float64) []plot.Tick {
	ticks := plot.LogTicks{Prec: -1}.Ticks(lo, hi)
	for i := range ticks {
		if ticks[i].Label == "" {
			continue
		}
		v := ticks[i].Value * 1e9 // GFLOP/s to FLOP/s
		for _, u := range []struct {
			div    float64
			prefix string
		}{{1e15, "P"}, {1e12, "T"}, {1e9, "G"}, {1e6, "M"}, {1e3, "k"}, {1, ""}} {
			if v >= u.div {
				ticks[i].Label = strconv.FormatFloat(v/u.div, 'g', -1, 64) + u.prefix
				break
			}
		}
	}
	return ticks
}
