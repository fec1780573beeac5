package main

import (
	"errors"
	"flag"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/gocu-dev/gocu/gen"
)

func newGenCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "gen [--tags list] [--cu] [--check] [packages]",
		Short: "Translate Go kernels (//gocu:kernel) to CUDA C and write their launchers",
		Long: `gocu gen translates every function marked //gocu:kernel in the packages
(default: the one in the current directory), and every Go function those
kernels call, to CUDA C++. For each package with kernels it writes
zz_gocu_<pkg>.go beside the sources: the CUDA source and its SHA-256, the
kernels' metadata, their checked copies for the simulator's race detection,
and one typed launcher per kernel (Launch<Kernel>) that runs the kernel on
a GPU (compiled with NVRTC on first use) or on the simulator.

Run it from go generate with this line in the package:

	//go:generate go tool gocu-gen

after "go get -tool github.com/gocu-dev/gocu/cmd/gocu-gen" in the module
(gocu-gen is this command alone, with only the translator's imports).
With --check it writes nothing and fails when a generated file is out of
date, for CI.

Files are rewritten only when their contents change. Code outside the
kernel subset is reported as file:line:col: what is not supported, and
what to write instead, every problem of the packages in one run (sorted,
at most 50); then nothing is written and the exit status is 1.

Flags are written as for the go command: -tags and --tags are the same.`,
		Example:            "  gocu gen\n  gocu gen ./kernels/...\n  gocu gen -tags gpu ./...",
		DisableFlagParsing: true, // Go-style flags: see parseGenFlags
		RunE: func(cmd *cobra.Command, args []string) error {
			cfg, pkgs, err := parseGenFlags(args)
			if errors.Is(err, flag.ErrHelp) {
				return cmd.Help()
			}
			if err != nil {
				return fmt.Errorf("gocu gen: %w (see gocu gen --help)", err)
			}
			diags, err := gen.Run(cfg, cmd.OutOrStdout(), pkgs...)
			if len(diags) > 0 {
				for _, d := range diags {
					fmt.Fprintln(cmd.ErrOrStderr(), d.String())
				}
				n := len(diags)
				var e *gen.Error
				if errors.As(err, &e) && e.Omitted > 0 {
					n += e.Omitted - 1 // the last line counts the omitted ones
				}
				return fmt.Errorf("gocu gen: %d problem(s) in kernel code; nothing was written", n)
			}
			return err // package gen's errors start with "gocu gen: "
		},
	}
	// For the help text only: the flags are parsed by parseGenFlags.
	cmd.Flags().String("tags", "", "comma-separated build tags, as for go build")
	cmd.Flags().Bool("cu", false, "also write the CUDA source as zz_gocu_<pkg>.cu, for reading")
	cmd.Flags().Bool("check", false, "write nothing; fail if a generated file is out of date")
	return cmd
}

// parseGenFlags parses gocu gen's arguments as the go command parses its
// own: a flag may start with one dash or two (-tags gpu, --tags=gpu), and
// flags come before the packages.
func parseGenFlags(args []string) (gen.Config, []string, error) {
	fs := flag.NewFlagSet("gen", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	tags := fs.String("tags", "", "")
	cu := fs.Bool("cu", false, "")
	check := fs.Bool("check", false, "")
	if err := fs.Parse(args); err != nil {
		return gen.Config{}, nil, err
	}
	cfg := gen.Config{CUDAFile: *cu, Check: *check}
	if *tags != "" {
		cfg.BuildFlags = []string{"-tags=" + *tags}
	}
	for _, a := range fs.Args() {
		if len(a) > 1 && a[0] == '-' {
			return gen.Config{}, nil, fmt.Errorf("flag %s after the packages: put flags first", a)
		}
	}
	return cfg, fs.Args(), nil
}
