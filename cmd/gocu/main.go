// Command gocu is gocu's command line: it lists devices, runs the demo,
// benchmarks, translates Go kernels (gocu gen), compiles CUDA C and manages
// the compilation cache. Run "gocu help" for the commands.
package main

import (
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"
)

func main() {
	err := newRoot().Execute()
	flushProfile() // completes $GOCU_PROFILE, if set
	if err != nil {
		fmt.Fprintln(os.Stderr, errorLine(err))
		os.Exit(1)
	}
}

// errorLine is what the command prints for err: prefixed with the
// command's name, unless the error already starts with it (errors of
// package gocu start with "gocu: ", those of gocu gen with "gocu gen: "),
// so that the prefix is never said twice.
func errorLine(err error) string {
	msg := err.Error()
	if strings.HasPrefix(msg, "gocu: ") || strings.HasPrefix(msg, "gocu gen: ") {
		return msg
	}
	return "gocu: " + msg
}

func newRoot() *cobra.Command {
	root := &cobra.Command{
		Use:   "gocu",
		Short: "NVIDIA GPUs from Go: kernels in Go, arrays, run-time CUDA C, honest benchmarks",
		Long: `gocu runs CUDA work from Go without cgo. With no GPU it runs kernels on an
exact CPU simulator that reports out-of-range indices, divergent barriers
and data races.`,
		Example:       "  gocu devices\n  gocu demo\n  gocu cache info\n  gocu bench\n  gocu compile kernel.cu\n  gocu train\n  gocu gpt train",
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.AddCommand(newCacheCmd(), newDevicesCmd())
	root.AddCommand(newBenchCmd(), newCompileCmd(), newProfCmd())
	root.AddCommand(newDemoCmd(), newGrayCmd())
	root.AddCommand(newGenCmd())
	root.AddCommand(newTrainCmd(), newGPTCmd())
	root.InitDefaultCompletionCmd()
	refuseUnknown(root)
	return root
}

// refuseUnknown makes every command that only groups others (cache,
// completion) fail on an unknown subcommand instead of printing its help
// and exiting 0.
func refuseUnknown(c *cobra.Command) {
	for _, sub := range c.Commands() {
		if sub.HasSubCommands() && !sub.Runnable() {
			sub.Args = cobra.ArbitraryArgs
			sub.RunE = func(cmd *cobra.Command, args []string) error {
				if len(args) > 0 {
					return fmt.Errorf("unknown command %q for %q (see %s --help)", args[0], cmd.CommandPath(), cmd.CommandPath())
				}
				return cmd.Help()
			}
		}
		refuseUnknown(sub)
	}
}
