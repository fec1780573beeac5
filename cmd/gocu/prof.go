package main

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/gocu-dev/gocu/prof"
)

func newProfCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "prof TRACE.json",
		Short: "Summarise a profile: calls, total, mean, min, max and share per kernel and copy",
		Long: `A program that links the profiler (import _ "github.com/gocu-dev/gocu/prof",
as the gocu command does) records every kernel launch and copy (timed on
the GPU with CUDA events) and every simulator launch (wall time) when
GOCU_PROFILE names a file: it writes a Chrome trace there, which Perfetto
(ui.perfetto.dev) and chrome://tracing open. gocu prof prints its summary,
like PyTorch's key_averages, sorted by total device time.

The file is brought up to date every 100 ms while the program runs; a
program completes it on exit with "defer prof.Flush()" in main (the gocu
command does). "gocu prof run" runs a program with GOCU_PROFILE set and
prints the summary when it ends.`,
		Example: `  GOCU_PROFILE=trace.json go run .
  gocu prof trace.json
  gocu prof run -o trace.json -- go run .
  GOCU_PROFILE=bench.json gocu bench --only gray && gocu prof bench.json`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return printProfile(cmd, args[0])
		},
	}
	cmd.AddCommand(newProfRunCmd(), newProfMemoryCmd())
	return cmd
}

func printProfile(cmd *cobra.Command, path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	p, err := prof.ReadTrace(f)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	w := cmd.OutOrStdout()
	if len(p.Events) == 0 && p.Dropped == 0 {
		fmt.Fprintf(w, "%s: no kernels or copies were recorded\n", path)
		return nil
	}
	for dev, desc := range p.Devices {
		fmt.Fprintf(w, "%s: %s\n", dev, desc)
	}
	return p.WriteTable(w)
}

func newProfRunCmd() *cobra.Command {
	var out string
	cmd := &cobra.Command{
		Use:   "run [-o TRACE.json] -- PROGRAM [ARGS...]",
		Short: "Run a program with GOCU_PROFILE set, then print its profile",
		Example: `  gocu prof run -- go run .
  gocu prof run -o trace.json -- ./myprogram -size 4096`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			path := out
			if path == "" {
				dir, err := os.MkdirTemp("", "gocu-prof-")
				if err != nil {
					return err
				}
				defer os.RemoveAll(dir)
				path = filepath.Join(dir, "trace.json")
			} else if abs, err := filepath.Abs(path); err == nil {
				path = abs
			}
			c := exec.Command(args[0], args[1:]...)
			c.Stdin, c.Stdout, c.Stderr = os.Stdin, cmd.OutOrStdout(), cmd.ErrOrStderr()
			c.Env = append(os.Environ(), prof.EnvFile+"="+path)
			runErr := c.Run()
			var exit *exec.ExitError
			if runErr != nil && !errors.As(runErr, &exit) {
				return runErr
			}
			if _, err := os.Stat(path); err != nil {
				return fmt.Errorf("%s wrote no profile: it must link the profiler (import _ \"github.com/gocu-dev/gocu/prof\") to be profiled", args[0])
			}
			fmt.Fprintln(cmd.OutOrStdout())
			if err := printProfile(cmd, path); err != nil {
				return err
			}
			if out != "" {
				fmt.Fprintf(cmd.OutOrStdout(), "trace: %s (open it in ui.perfetto.dev)\n", out)
			}
			if runErr != nil {
				return fmt.Errorf("%s: %w", args[0], runErr)
			}
			return nil
		},
	}
	cmd.Flags().StringVarP(&out, "output", "o", "", "keep the trace in `FILE` (default: a temporary file)")
	return cmd
}

// flushProfile completes the GOCU_PROFILE trace, if any, before the
// command exits.
func flushProfile() {
	if err := prof.Flush(); err != nil {
		fmt.Fprintf(os.Stderr, "gocu: %s: %v\n", prof.EnvFile, err)
	}
}
