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

	"github.com/gocu-dev/gocu/internal/units"
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
	wt, err := p.WriterTo(plotW, plotH, format)
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

// The size of the drawing.
const (
	plotW = 11 * vg.Inch
	plotH = 8 * vg.Inch
)

// labelSize is the font size of the legend and of the points' labels.
const labelSize = 9

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
			transfers = append(transfers, slope{x.GBps, fmt.Sprintf("%s %s GB/s", x.Name, units.Sig(x.GBps))})
		case x.Ops > 0 && x.Flops == 0:
			latencies = append(latencies, fmt.Sprintf("%s: %s %s", x.Name, units.Sig(x.PerOp), x.Unit))
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
	peaks := []float64{fp32, tf32}
	for _, x := range r.Ceilings.lowp() {
		peaks = append(peaks, x.tflops*1e3)
	}
	for _, peak := range peaks {
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
	p.Legend.TextStyle.Font.Size = labelSize
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
	var roofs []plotter.XYs // the roofs' segments, which labels keep off
	// The roof: bandwidth up to the knee of the highest flat roof.
	top := max(fp32, tf32)
	for _, x := range r.Ceilings.lowp() {
		top = max(top, x.tflops*1e3)
	}
	if mem > 0 {
		end := xmax
		if top > 0 {
			end = min(xmax, top/mem)
		}
		seg := plotter.XYs{{X: xmin, Y: mem * xmin}, {X: end, Y: mem * end}}
		roofs = append(roofs, seg)
		l, err := line(seg, black, 2, nil)
		if err != nil {
			return nil, err
		}
		p.Add(l)
		p.Legend.Add(fmt.Sprintf("memory: %s GB/s (measured copy)", units.Sig(mem)), l)
	}
	flat := []struct {
		v      float64
		name   string
		dashes []vg.Length
	}{{fp32, "FP32", nil}, {tf32, "TF32 tensor cores", []vg.Length{vg.Points(6), vg.Points(3)}}}
	for i, x := range r.Ceilings.lowp() {
		flat = append(flat, struct {
			v      float64
			name   string
			dashes []vg.Length
		}{x.tflops * 1e3, x.name + " tensor cores", []vg.Length{vg.Points(float64(2 + i)), vg.Points(2)}})
	}
	for _, roof := range flat {
		if roof.v <= 0 {
			continue
		}
		start := xmin
		if mem > 0 {
			start = max(xmin, roof.v/mem)
		}
		seg := plotter.XYs{{X: start, Y: roof.v}, {X: xmax, Y: roof.v}}
		roofs = append(roofs, seg)
		l, err := line(seg, black, 2, roof.dashes)
		if err != nil {
			return nil, err
		}
		p.Add(l)
		p.Legend.Add(fmt.Sprintf("%s: %s (measured library GEMM)", roof.name, units.FLOPRate(1e9*roof.v)), l)
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

	// One point per workload, in the legend with its own colour and glyph,
	// and labelled beside it.
	for i, q := range pts {
		s, err := plotter.NewScatter(plotter.XYs{{X: q.x, Y: q.y}})
		if err != nil {
			return nil, err
		}
		s.GlyphStyle = draw.GlyphStyle{Color: palette[i%len(palette)], Radius: vg.Points(4), Shape: glyphs[i%len(glyphs)]}
		p.Add(s)
		p.Legend.Add(q.label, s)
	}
	if len(pts) > 0 {
		labels, leaders, err := placeLabels(p, pts, roofs, plotW, plotH)
		if err != nil {
			return nil, err
		}
		for _, l := range leaders {
			ll, err := line(l, gray, 0.5, nil)
			if err != nil {
				return nil, err
			}
			p.Add(ll)
		}
		p.Add(labels)
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

// box is a rectangle in decades of the log axes.
type box struct{ x0, x1, y0, y1 float64 }

func (a box) overlaps(b box) bool {
	return a.x0 < b.x1 && b.x0 < a.x1 && a.y0 < b.y1 && b.y0 < a.y1
}

// placeLabels puts each point's label beside it, right or left, where it
// covers no other label, point or the legend, moving it up or down by a
// line at a time when the points crowd (the matmuls share an intensity),
// and off the roofs;
// a label moved off its point gets a thin leader line. The data area is
// estimated from the drawing's size w x h less the axes and the title.
func placeLabels(p *plot.Plot, pts []point, roofs []plotter.XYs, w, h vg.Length) (*plotter.Labels, []plotter.XYs, error) {
	lx0, lx1 := math.Log10(p.X.Min), math.Log10(p.X.Max)
	ly0, ly1 := math.Log10(p.Y.Min), math.Log10(p.Y.Max)
	areaW, areaH := float64(w-vg.Points(80)), float64(h-vg.Points(75))
	xdec, ydec := (lx1-lx0)/areaW, (ly1-ly0)/areaH // decades per point
	var xy plotter.XYLabels
	for _, q := range pts {
		xy.XYs = append(xy.XYs, plotter.XY{X: q.x, Y: q.y})
		xy.Labels = append(xy.Labels, q.label)
	}
	labels, err := plotter.NewLabels(xy)
	if err != nil {
		return nil, nil, err
	}
	sty := labels.TextStyle[0]
	sty.Font.Size = labelSize
	line := float64(sty.Height("Mg")) * 1.15 * ydec
	gap := 9 * xdec // clear of the glyphs at the point, with the margin below
	// Obstacles: the points, and the legend in the top left corner.
	var taken []box
	r := 4.5
	for _, q := range pts {
		x, y := math.Log10(q.x), math.Log10(q.y)
		taken = append(taken, box{x - r*xdec, x + r*xdec, y - r*ydec, y + r*ydec})
	}
	lg := p.Legend.TextStyle
	var legW float64
	for _, q := range pts {
		legW = max(legW, float64(lg.Width(q.label)))
	}
	legW += float64(p.Legend.ThumbnailWidth) + 40 // the glyph, the offsets, the longest roof entry's excess
	legH := float64(lg.Height("Mg")) * float64(len(pts)+5)
	taken = append(taken, box{lx0, lx0 + legW*xdec, ly1 - (legH+24)*ydec, ly1})
	// The roofs, as boxes of a few points around every step of 2 points.
	for _, seg := range roofs {
		ax, ay := math.Log10(seg[0].X), math.Log10(seg[0].Y)
		bx, by := math.Log10(seg[1].X), math.Log10(seg[1].Y)
		steps := int(math.Hypot((bx-ax)/xdec, (by-ay)/ydec)/2) + 1
		for k := 0; k <= steps; k++ {
			t := float64(k) / float64(steps)
			x, y := ax+t*(bx-ax), ay+t*(by-ay)
			taken = append(taken, box{x - xdec, x + xdec, y - 2*ydec, y + 2*ydec})
		}
	}

	// Place from the top down, so that crowded labels stack downwards.
	order := make([]int, len(pts))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return -cmpFloat(pts[a].y, pts[b].y) })
	var leaders []plotter.XYs
	for _, i := range order {
		q := pts[i]
		x, y := math.Log10(q.x), math.Log10(q.y)
		wd := float64(sty.Width(q.label)) * xdec
		placed := false
		for k := 0; k < 60 && !placed; k++ {
			dy := float64((k+1)/2) * line // 0, down, up, further down, ...
			if k%2 == 1 {
				dy = -dy
			}
			ly := y + dy
			for _, right := range []bool{true, false} {
				b := box{x + gap, x + gap + wd, ly - line/2, ly + line/2}
				if !right {
					b.x0, b.x1 = x-gap-wd, x-gap
				}
				// A margin of a few points keeps a label clear of its neighbours.
				m := box{b.x0 - 4*xdec, b.x1 + 4*xdec, b.y0, b.y1}
				free := true
				for j, t := range taken {
					if j != i && m.overlaps(t) { // the label's own point is taken[i]
						free = false
						break
					}
				}
				if b.x0 < lx0 || b.x1 > lx1 || b.y0 < ly0 || b.y1 > ly1 || !free {
					continue
				}
				taken = append(taken, b)
				ts := sty
				ts.YAlign = draw.YCenter
				ax := b.x0
				if !right {
					ts.XAlign, ax = draw.XRight, b.x1
				}
				labels.TextStyle[i] = ts
				labels.XYs[i] = plotter.XY{X: math.Pow(10, ax), Y: math.Pow(10, ly)}
				if math.Abs(dy) > line/2 {
					leaders = append(leaders, plotter.XYs{{X: q.x, Y: q.y}, {X: math.Pow(10, ax), Y: math.Pow(10, ly)}})
				}
				placed = true
				break
			}
		}
		if !placed { // nowhere free: beside the point, overlapping
			ts := sty
			ts.YAlign = draw.YCenter
			labels.TextStyle[i] = ts
			labels.XYs[i] = plotter.XY{X: math.Pow(10, x+gap), Y: q.y}
		}
	}
	return labels, leaders, nil
}

func cmpFloat(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}
