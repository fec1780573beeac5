package main

import (
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/gocu-dev/gocu/cmd/gocu/internal/demo"
	"github.com/gocu-dev/gocu/internal/units"
)

func newGrayCmd() *cobra.Command {
	var (
		device  string
		twoD    bool
		timing  bool
		quality int
	)
	cmd := &cobra.Command{
		Use:   "gray IN OUT",
		Short: "Convert an image to grayscale with the lecture's kernel",
		Long: `gocu gray reads IN (PNG, JPEG, GIF, BMP, TIFF or WebP, recognised by its
contents), converts it to planar RGB and runs the lecture's grayscale
kernel, written in Go, on the device: the GPU if there is one, else cpu
(where Go kernels run on the simulator). It writes OUT as PNG or JPEG, chosen by OUT's extension
(.png, .jpg, .jpeg), and prints what it wrote.

gray = 0.2989 R + 0.5870 G + 0.1140 B per pixel (alpha is dropped). --2d uses
the kernel on a 2-D grid of 16x16 blocks instead of a 1-D grid of 256
threads. --time prints how long each stage took.

A file that is not an image, or is truncated or corrupt, is an error that
says so. OUT is written to a temporary file beside it and renamed when
complete, so a failure never leaves a partial OUT behind.`,
		Example: `  gocu gray photo.jpg gray.png
  gocu gray --2d --time scan.tiff gray.jpg --quality 95
  gocu gray --device sim picture.webp out.png`,
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) != 2 {
				return fmt.Errorf("gray takes two files, IN and OUT, not %d argument(s) (usage: gocu gray [flags] IN OUT; gocu gray --help)", len(args))
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			in, out := args[0], args[1]
			// Refuse an output format we cannot write before any work.
			outFormat, err := demo.OutputFormat(out)
			if err != nil {
				return err
			}
			outFormat = strings.ToUpper(outFormat)
			dev, err := demo.OpenDevice(device)
			if err != nil {
				return err
			}
			t0 := time.Now()
			img, format, err := demo.ReadImage(in)
			if err != nil {
				return err
			}
			read := time.Since(t0)
			res, err := demo.Gray(dev, img, twoD)
			if err != nil {
				return err
			}
			t0 = time.Now()
			if err := demo.WriteImage(out, res.Image, quality); err != nil {
				return err
			}
			write := time.Since(t0)
			w := cmd.OutOrStdout()
			b := res.Image.Bounds()
			size := ""
			if fi, err := os.Stat(out); err == nil {
				size = ", " + units.Bytes(fi.Size())
			}
			fmt.Fprintf(w, "wrote %s: %dx%d grayscale %s%s, from %s on %s\n", out, b.Dx(), b.Dy(), outFormat, size, in, dev)
			if timing {
				fmt.Fprintf(w, "%s: %dx%d %s on %s, kernel %s %v\n", in, b.Dx(), b.Dy(), format, dev, res.Kernel, res.Config)
				stages := append([]demo.Stage{{Name: "read and decode " + format, Time: read}}, res.Stages...)
				stages = append(stages, demo.Stage{Name: "encode and write", Time: write})
				var total time.Duration
				for _, s := range stages {
					fmt.Fprintf(w, "  %-24s %9s\n", s.Name, units.Duration(s.Time))
					total += s.Time
				}
				fmt.Fprintf(w, "  %-24s %9s\n", "total", units.Duration(total))
			}
			return nil
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&device, "device", "auto", "auto, cpu, sim, cuda or cuda:N (auto: the GPU if there is one, else cpu; gocu devices says what cpu and sim are)")
	fl.BoolVar(&twoD, "2d", false, "use the kernel on a 2-D grid (kernels.Gray2D)")
	fl.BoolVar(&timing, "time", false, "print the time of each stage")
	fl.IntVar(&quality, "quality", 90, "JPEG quality, 1-100")
	return cmd
}
