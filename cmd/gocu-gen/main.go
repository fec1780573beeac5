package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/gocu-dev/gocu/gen"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

const usage = `usage: gocu-gen [-tags list] [-cu] [-check] [packages]

gocu-gen translates the functions marked //gocu:kernel in the packages
(default: the one in the current directory), and the Go functions they
call, to CUDA C++, and writes zz_gocu_<pkg>.go with a typed launcher per
kernel. Run it from go generate:

	//go:generate go tool gocu-gen

Flags (one dash or two):
  -tags list  comma-separated build tags, as for go build
  -cu         also write the CUDA source as zz_gocu_<pkg>.cu, for reading
  -check      write nothing; fail if a generated file is out of date
`

// run is the command with its arguments and outputs; it returns the exit
// status.
func run(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("gocu-gen", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	tags := fs.String("tags", "", "")
	cu := fs.Bool("cu", false, "")
	check := fs.Bool("check", false, "")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprint(stdout, usage)
			return 0
		}
		fmt.Fprintf(stderr, "gocu-gen: %v (see gocu-gen -help)\n", err)
		return 2
	}
	for _, a := range fs.Args() {
		if len(a) > 1 && a[0] == '-' {
			fmt.Fprintf(stderr, "gocu-gen: flag %s after the packages: put flags first\n", a)
			return 2
		}
	}
	cfg := gen.Config{CUDAFile: *cu, Check: *check}
	if *tags != "" {
		cfg.BuildFlags = []string{"-tags=" + *tags}
	}
	diags, err := gen.Run(cfg, stdout, fs.Args()...)
	for _, d := range diags {
		fmt.Fprintln(stderr, d.String())
	}
	if len(diags) > 0 {
		n := len(diags)
		var e *gen.Error
		if errors.As(err, &e) && e.Omitted > 0 {
			n += e.Omitted - 1 // the last line counts the omitted ones
		}
		fmt.Fprintf(stderr, "gocu-gen: %d problem(s) in kernel code; nothing was written\n", n)
		return 1
	}
	if err != nil {
		fmt.Fprintln(stderr, err)
		return 1
	}
	return 0
}
