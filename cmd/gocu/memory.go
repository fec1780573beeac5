package main

import (
	"errors"
	"fmt"
	"image/color"
	"os"
	"sort"

	"github.com/spf13/cobra"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"

	"github.com/gocu-dev/gocu/prof"
)

func newProfMemoryCmd() *cobra.Command {
	var out string
	var top int
	cmd := &cobra.Command{
		Use:   "memory HISTORY.json [-o timeline.png]",
		Short: "Summarise a memory history: peaks, and the call sites holding memory at the peak",
		Long: `A program that links the profiler (import _ "github.com/gocu-dev/gocu/prof")
records every device allocation and free, with its size, stream, time
and Go stack, when GOCU_MEMORY_HISTORY names a file: a Chrome trace with a
counter track of the memory in use and reserved and an event with its
stack per allocation, which Perfetto (ui.perfetto.dev) and
chrome://tracing open. gocu prof memory prints each device's peaks and
the call sites holding the most memory at the peak of memory in use;
with -o it draws the memory in use and reserved over time (PNG, SVG or
PDF, by the file's extension).`,
		Example: `  GOCU_MEMORY_HISTORY=mem.json go run .
  gocu prof memory mem.json -o timeline.png`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			f, err := os.Open(args[0])
			if err != nil {
				return err
			}
			defer f.Close()
			h, err := prof.ReadMemoryHistory(f)
			if err != nil {
				return fmt.Errorf("%s: %w", args[0], err)
			}
			w := cmd.OutOrStdout()
			if len(h.Events) == 0 {
				fmt.Fprintf(w, "%s: no device memory was allocated\n", args[0])
			} else if err := h.WriteSummary(w, top); err != nil {
				return err
			}
			if out == "" {
				return nil
			}
			if err := plotMemory(out, h); err != nil {
				return err
			}
			fmt.Fprintf(w, "timeline: %s\n", out)
			return nil
		},
	}
	cmd.Flags().StringVarP(&out, "output", "o", "", "draw the memory over time into `FILE` (.png, .svg or .pdf)")
	cmd.Flags().IntVar(&top, "top", 10, "call sites listed per device")
	return cmd
}

// plotMemory draws each device's memory in use and reserved (MiB) over
// time (seconds) into path.
func plotMemory(path string, h *prof.MemoryHistory) error {
	if len(h.Events) == 0 {
		return errors.New("no memory events to draw")
	}
	type series struct{ inUse, reserved plotter.XYs }
	byDev := map[string]*series{}
	for _, e := range h.Events {
		s := byDev[e.Device]
		if s == nil {
			s = &series{}
			byDev[e.Device] = s
		}
		x := e.Time.Seconds()
		s.inUse = append(s.inUse, plotter.XY{X: x, Y: float64(e.InUse) / (1 << 20)})
		s.reserved = append(s.reserved, plotter.XY{X: x, Y: float64(e.Reserved) / (1 << 20)})
	}
	devs := make([]string, 0, len(byDev))
	for d := range byDev {
		devs = append(devs, d)
	}
	sort.Strings(devs)
	p := plot.New()
	p.Title.Text = "device memory over time"
	if h.Dropped > 0 {
		p.Title.Text += fmt.Sprintf(" (%d events dropped)", h.Dropped)
	}
	p.X.Label.Text = "time since recording began (s)"
	p.Y.Label.Text = "MiB"
	// In use and reserved of one device in two shades of one colour.
	palette := [][2]color.RGBA{
		{{0x1f, 0x77, 0xb4, 0xff}, {0x9e, 0xc5, 0xe0, 0xff}},
		{{0xd6, 0x27, 0x28, 0xff}, {0xf0, 0xa0, 0xa0, 0xff}},
		{{0x2c, 0xa0, 0x2c, 0xff}, {0x9f, 0xd8, 0x9f, 0xff}},
		{{0x94, 0x67, 0xbd, 0xff}, {0xcf, 0xb8, 0xe3, 0xff}},
	}
	for i, d := range devs {
		s := byDev[d]
		for j, l := range []struct {
			name string
			pts  plotter.XYs
			dash bool
		}{{d + " in use", s.inUse, false}, {d + " reserved", s.reserved, true}} {
			c := palette[i%len(palette)][j]
			line, err := plotter.NewLine(steps(l.pts))
			if err != nil {
				return err
			}
			line.Color, line.Width = c, vg.Points(1.5)
			if l.dash {
				line.Dashes = []vg.Length{vg.Points(4), vg.Points(3)}
			}
			p.Add(line)
			p.Legend.Add(l.name, line)
		}
	}
	p.Add(plotter.NewGrid())
	p.Legend.Top = true
	p.Legend.Left = true
	return p.Save(10*vg.Inch, 5*vg.Inch, path)
}

// steps turns a series of levels into a staircase: each value holds until
// the next event.
func steps(pts plotter.XYs) plotter.XYs {
	out := make(plotter.XYs, 0, 2*len(pts))
	for i, pt := range pts {
		if i > 0 {
			out = append(out, plotter.XY{X: pt.X, Y: pts[i-1].Y})
		}
		out = append(out, pt)
	}
	return out
}
