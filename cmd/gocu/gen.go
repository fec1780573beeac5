package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/gocu-dev/gocu/gen"
)

func newGenCmd() *cobra.Command {
	var tags string
	var cu bool
	cmd := &cobra.Command{
		Use:   "gen [packages]",
		Short: "Translate Go kernels (//gocu:kernel) to CUDA C and write their launchers",
		Long: `gocu gen translates every function marked //gocu:kernel in the packages
(default: the one in the current directory), and every Go function those
kernels call, to CUDA C++. For each package with kernels it writes
zz_gocu_<pkg>.go beside the sources: the CUDA source and its SHA-256, the
kernels' metadata, their checked copies for the simulator's race detection,
and one typed launcher per kernel (Launch<Kernel>) that runs the kernel on
a GPU (compiled with NVRTC on first use) or on the simulator.

Run it from go generate with this line in the package:

	//go:generate go run github.com/gocu-dev/gocu/cmd/gocu gen

Files are rewritten only when their contents change. Code outside the
kernel subset is reported as file:line:col: what is not supported, and
what to write instead; then nothing is written and the exit status is 1.`,
		Example: "  gocu gen\n  gocu gen ./kernels/...\n  gocu gen -tags gpu ./...",
		RunE: func(cmd *cobra.Command, args []string) error {
			cfg := gen.Config{CUDAFile: cu}
			if tags != "" {
				cfg.BuildFlags = []string{"-tags=" + tags}
			}
			diags, err := gen.Run(cfg, cmd.OutOrStdout(), args...)
			if len(diags) > 0 {
				for _, d := range diags {
					fmt.Fprintln(cmd.ErrOrStderr(), d.String())
				}
				return fmt.Errorf("gocu gen: %d problem(s) in kernel code; nothing was written", len(diags))
			}
			return err // package gen's errors start with "gocu gen: "
		},
	}
	cmd.Flags().StringVar(&tags, "tags", "", "comma-separated build tags, as for go build")
	cmd.Flags().BoolVar(&cu, "cu", false, "also write the CUDA source as zz_gocu_<pkg>.cu, for reading")
	return cmd
}
