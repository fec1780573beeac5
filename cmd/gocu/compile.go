package main

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/gocu-dev/gocu/cuda"
	"github.com/gocu-dev/gocu/internal/units"
	"github.com/gocu-dev/gocu/nvrtc"
)

type compileFlags struct {
	arch     string
	ptx      bool
	out      string
	defines  []string
	includes []string
	std      string
	fastMath bool
	lineInfo bool
	debug    bool
	device   int
}

func newCompileCmd() *cobra.Command {
	var f compileFlags
	cmd := &cobra.Command{
		Use:   "compile FILE.cu",
		Short: "Compile CUDA C with NVRTC and show each kernel's registers, shared memory and spills",
		Long: `gocu compile compiles a CUDA C file with NVRTC, as gocu.Compile does at run
time: a CUBIN for the exact GPU (--arch sm_XX, default the GPU present) or
PTX (--ptx). Compile errors are printed with their source lines and the
exit status is 1. #include "..." finds files next to FILE.cu and in the -I
directories.

With a GPU present the module is loaded and each kernel's resource usage is
printed: registers per thread, static shared memory, local memory per
thread (register spills and stack), the most threads a block may have, and
the block size the occupancy calculator suggests with the occupancy it
gives. Without a GPU the kernels found in the output are listed; their
resource usage needs a GPU, because the driver reports it.`,
		Example: `  gocu compile kernel.cu
  gocu compile kernel.cu --arch sm_90 -o kernel.cubin
  gocu compile kernel.cu --ptx -o kernel.ptx -DTILE=32 -I include
  gocu compile kernel.cu --arch sm_80 --std c++17 --fast-math`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error { return runCompile(cmd, args[0], &f) },
	}
	fl := cmd.Flags()
	fl.StringVar(&f.arch, "arch", "", "target: sm_XX for a CUBIN, compute_XX for PTX (default: the GPU present)")
	fl.BoolVar(&f.ptx, "ptx", false, "write PTX (for compute_XX of --arch) instead of a CUBIN")
	fl.StringVarP(&f.out, "output", "o", "", "output `FILE`; - for standard output (default: FILE with .cubin or .ptx, in the current directory)")
	fl.StringArrayVarP(&f.defines, "define", "D", nil, "define a macro: NAME or NAME=VALUE (repeatable)")
	fl.StringArrayVarP(&f.includes, "include", "I", nil, "add an include `DIR` (repeatable)")
	fl.StringVar(&f.std, "std", "", "C++ dialect, e.g. c++17")
	fl.BoolVar(&f.fastMath, "fast-math", false, "compile with --use_fast_math")
	fl.BoolVar(&f.lineInfo, "lineinfo", false, "keep source line information for profilers")
	fl.BoolVarP(&f.debug, "debug", "G", false, "device debug information, no optimisation")
	fl.IntVar(&f.device, "device", 0, "the GPU that sets the default --arch and loads the code for the resource report")
	return cmd
}

// archArg reads --arch: sm_90, compute_90, 90 or 9.0.
func archArg(s string, ptx bool) (string, error) {
	s = strings.ToLower(strings.TrimSpace(s))
	num := s
	for _, p := range []string{"sm_", "compute_"} {
		num = strings.TrimPrefix(num, p)
	}
	num = strings.TrimSuffix(strings.Replace(num, ".", "", 1), "a")
	cc, err := strconv.Atoi(num)
	if err != nil || cc < 30 || cc > 999 {
		return "", fmt.Errorf("--arch %q: want sm_XX (a CUBIN for one GPU, e.g. sm_90 for an H100) or compute_XX (PTX)", s)
	}
	suffix := ""
	if strings.HasSuffix(s, "a") {
		suffix = "a"
	}
	if ptx || strings.HasPrefix(s, "compute_") {
		return fmt.Sprintf("compute_%d%s", cc, suffix), nil
	}
	return fmt.Sprintf("sm_%d%s", cc, suffix), nil
}

func runCompile(cmd *cobra.Command, path string, f *compileFlags) error {
	out := cmd.OutOrStdout()
	src, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	var gpu *cuda.Device
	if cuda.Available() {
		if gpu, err = cuda.DeviceAt(f.device); err != nil {
			return err
		}
	}
	arch := f.arch
	switch {
	case arch != "":
		if arch, err = archArg(arch, f.ptx); err != nil {
			return err
		}
	case gpu != nil:
		if arch, err = nvrtc.TargetFor(gpu.ComputeCapability()); err != nil {
			return err
		}
		if f.ptx {
			arch = nvrtc.Compute(gpu.ComputeCapability())
		}
	default:
		reason := "no CUDA driver"
		if err := cuda.Init(); err != nil {
			reason = units.OneLine(err)
		}
		return fmt.Errorf("no GPU to compile for (%s): name the target with --arch, e.g. --arch sm_90 for an H100", reason)
	}
	opts := nvrtc.Options{Name: path, Arch: arch, Std: f.std, FastMath: f.fastMath, LineInfo: f.lineInfo, Debug: f.debug,
		IncludePaths: f.includes, SearchSourceDir: true}
	for _, d := range f.defines {
		name, value, _ := strings.Cut(d, "=")
		if name == "" {
			return fmt.Errorf("-D %q: want NAME or NAME=VALUE", d)
		}
		if opts.Defines == nil {
			opts.Defines = map[string]string{}
		}
		opts.Defines[name] = value
	}
	res, err := nvrtc.Compile(string(src), opts)
	if err != nil {
		return err // a *nvrtc.CompileError prints each diagnostic with its source line
	}
	for _, d := range res.Diagnostics {
		fmt.Fprintln(cmd.ErrOrStderr(), d.String())
	}
	code := res.Code
	if res.Format == nvrtc.PTX {
		code = []byte(res.PTXText())
	}
	dst := f.out
	if dst == "" {
		ext := ".cubin"
		if res.Format == nvrtc.PTX {
			ext = ".ptx"
		}
		dst = strings.TrimSuffix(filepath.Base(path), filepath.Ext(path)) + ext
	}
	if dst == "-" {
		if _, err := out.Write(code); err != nil {
			return err
		}
		return nil // the code is the output: no report after it
	}
	if err := os.WriteFile(dst, code, 0o644); err != nil {
		return err
	}
	fmt.Fprintf(out, "compiled %s for %s: wrote %s (%d bytes, %v)\n", path, arch, dst, len(code), res.Format)

	names, err := kernelNames(res, src, opts)
	if err != nil {
		return err
	}
	if len(names) == 0 {
		fmt.Fprintln(out, "no kernels (__global__ functions) in the output")
		return nil
	}
	if gpu == nil {
		fmt.Fprintf(out, "kernels: %s\n", strings.Join(names, ", "))
		fmt.Fprintln(out, "resource usage (registers, shared memory, spills, occupancy) needs a GPU: the driver reports it when it loads the code")
		return nil
	}
	return printResources(out, gpu, res.Code, names)
}

var entryRE = regexp.MustCompile(`(?m)^\s*(?:\.(?:visible|weak|extern)\s+)*\.entry\s+([A-Za-z_$%][\w$%.]*)`)

// ptxEntries returns the kernels (.entry directives) of PTX text.
func ptxEntries(ptx string) []string {
	var names []string
	for _, m := range entryRE.FindAllStringSubmatch(ptx, -1) {
		names = append(names, m[1])
	}
	return names
}

// cubinKernels returns the kernels of a CUBIN: its function symbols marked
// as CUDA entry points (STO_CUDA_ENTRY in st_other). A CUBIN's ELF header
// carries CUDA's own e_version, which debug/elf refuses; a copy with the
// standard version is parsed.
func cubinKernels(code []byte) ([]string, error) {
	if len(code) < 64 || !bytes.HasPrefix(code, []byte("\x7fELF")) {
		return nil, errors.New("not an ELF file")
	}
	c := bytes.Clone(code)
	if c[elf.EI_DATA] == byte(elf.ELFDATA2LSB) {
		binary.LittleEndian.PutUint32(c[20:], uint32(elf.EV_CURRENT))
	}
	f, err := elf.NewFile(bytes.NewReader(c))
	if err != nil {
		return nil, err
	}
	syms, err := f.Symbols()
	if err != nil {
		return nil, err
	}
	const stoCUDAEntry = 0x10
	var names []string
	for _, s := range syms {
		if elf.ST_TYPE(s.Info) == elf.STT_FUNC && s.Other&stoCUDAEntry != 0 {
			names = append(names, s.Name)
		}
	}
	return names, nil
}

// kernelNames lists the kernels of a compilation: from the PTX, or from
// the CUBIN's symbols, or else (an ELF layout this code does not know) by
// compiling the PTX alongside.
func kernelNames(res *nvrtc.Result, src []byte, opts nvrtc.Options) ([]string, error) {
	if res.Format == nvrtc.PTX {
		return ptxEntries(res.PTXText()), nil
	}
	if names, err := cubinKernels(res.Code); err == nil && len(names) > 0 {
		return names, nil
	}
	_, cc, err := nvrtc.ParseArch(opts.Arch)
	if err != nil {
		return nil, err
	}
	opts.Arch = nvrtc.Compute(cc/10, cc%10)
	ptx, err := nvrtc.Compile(string(src), opts)
	if err != nil {
		return nil, err
	}
	return ptxEntries(ptx.PTXText()), nil
}

// printResources loads the code on the GPU and prints each kernel's
// resource usage.
func printResources(w io.Writer, gpu *cuda.Device, code []byte, names []string) error {
	m, err := gpu.LoadModule(code)
	if err != nil {
		fmt.Fprintf(w, "kernels: %s\n", strings.Join(names, ", "))
		return fmt.Errorf("the GPU (%s, %s) cannot load this code, so its resource usage is unknown: %w", gpu.Name(), gpu.Arch(), err)
	}
	defer m.Unload()
	p := gpu.Props()
	t := [][]string{{"kernel", "registers", "shared (static)", "local (spills)", "max threads/block", "suggested block", "occupancy"}}
	for _, n := range names {
		fn, err := m.Function(n)
		if err != nil {
			return err
		}
		a, err := fn.Attributes()
		if err != nil {
			return err
		}
		block, _, err := fn.SuggestedBlockSize(0)
		if err != nil {
			return err
		}
		occ := ""
		if blocks, err := fn.MaxActiveBlocksPerSM(block, 0); err == nil && p.MaxThreadsPerMultiprocessor > 0 {
			occ = fmt.Sprintf("%.0f%%", 100*float64(blocks*block)/float64(p.MaxThreadsPerMultiprocessor))
		}
		t = append(t, []string{n, strconv.Itoa(a.NumRegs), units.Bytes(int64(a.SharedSizeBytes)), units.Bytes(int64(a.LocalSizeBytes)),
			strconv.Itoa(a.MaxThreadsPerBlock), strconv.Itoa(block), occ})
	}
	fmt.Fprintf(w, "on %s (%s):\n", gpu.Name(), gpu.Arch())
	writeTable(w, t)
	return nil
}

// writeTable writes rows with the first column aligned left and the others
// right.
func writeTable(w io.Writer, t [][]string) {
	width := make([]int, len(t[0]))
	for _, row := range t {
		for i, c := range row {
			width[i] = max(width[i], len(c))
		}
	}
	for _, row := range t {
		var b strings.Builder
		for i, c := range row {
			p := strings.Repeat(" ", width[i]-len(c))
			if i == 0 {
				b.WriteString(c + p)
			} else {
				b.WriteString("  " + p + c)
			}
		}
		fmt.Fprintln(w, strings.TrimRight(b.String(), " "))
	}
}
