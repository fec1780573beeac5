package nvrtc

import (
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// Format is the kind of code a compilation produces.
type Format uint8

const (
	// CUBIN is machine code for one exact GPU (Arch "sm_XX"): it loads with
	// no further compilation.
	CUBIN Format = 1
	// PTX is virtual assembly (Arch "compute_XX") that the driver compiles
	// when it loads it, for any GPU at least that capable.
	PTX Format = 2
)

func (f Format) String() string {
	switch f {
	case CUBIN:
		return "CUBIN"
	case PTX:
		return "PTX"
	}
	return fmt.Sprintf("Format(%d)", uint8(f))
}

// Options says how to compile one program. The zero value of every field but
// Arch means NVRTC's default.
type Options struct {
	// Name is the program's file name, used in diagnostics and __FILE__.
	// Default "kernel.cu".
	Name string
	// Arch is the target: "sm_90" produces a CUBIN for exactly that GPU,
	// "compute_90" produces PTX. Architecture-specific variants ("sm_90a")
	// are accepted. Use SM or Compute to build it from a compute capability.
	Arch string
	// Headers maps an include name to its source: #include "name" finds it
	// without touching the file system.
	Headers map[string]string
	// Std is the language dialect, e.g. "c++17" (--std).
	Std string
	// Defines are predefined macros: NAME -> value, or "" for NAME alone
	// (defined as 1).
	Defines map[string]string
	// IncludePaths are directories searched for headers after Headers
	// (--include-path). The cache key covers the files under them.
	IncludePaths []string
	// SearchSourceDir also searches the directory of Name (the current
	// directory for a bare name) for #include "..." files. NVRTC does this by
	// default; gocu does not (--no-source-include), so that no header
	// reaches the compiler without being part of the cache key. When set,
	// that directory is fingerprinted like IncludePaths.
	SearchSourceDir bool
	// NoFMAD disables contracting multiply and add into FMA (--fmad=false).
	NoFMAD bool
	// FastMath trades precision for speed (--use_fast_math).
	FastMath bool
	// LineInfo keeps source line information for profilers
	// (--generate-line-info).
	LineInfo bool
	// Debug generates device debug information and disables optimisation
	// (--device-debug, -G).
	Debug bool
	// Extra options are passed to NVRTC as they are, after all others.
	Extra []string
	// NameExpressions are C++ expressions naming __global__ functions or
	// __device__/__constant__ variables, typically template instantiations
	// ("axpy<float>"), whose mangled names Result.Lowered reports.
	NameExpressions []string
}

// DefaultName is the program name used when Options.Name is empty.
const DefaultName = "kernel.cu"

// SM returns the CUBIN target for a compute capability: SM(9, 0) is "sm_90".
func SM(major, minor int) string { return fmt.Sprintf("sm_%d%d", major, minor) }

// Compute returns the PTX target for a compute capability: Compute(9, 0) is
// "compute_90".
func Compute(major, minor int) string { return fmt.Sprintf("compute_%d%d", major, minor) }

var archRE = regexp.MustCompile(`^(sm|compute)_([1-9][0-9]{1,2})([af]?)$`)

// ParseArch splits a target like "sm_90" into the output it produces and the
// compute capability as a number (90).
func ParseArch(arch string) (Format, int, error) {
	m := archRE.FindStringSubmatch(arch)
	if m == nil {
		return 0, 0, optionErrorf("Arch %q: want sm_XX for a CUBIN or compute_XX for PTX, e.g. sm_90 (see nvrtc.SM)", arch)
	}
	cc, _ := strconv.Atoi(m[2])
	if m[1] == "sm" {
		return CUBIN, cc, nil
	}
	return PTX, cc, nil
}

var identRE = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// validate checks everything NVRTC would otherwise reject less clearly, and
// returns the format the target produces.
func (o *Options) validate() (Format, error) {
	f, _, err := ParseArch(o.Arch)
	if err != nil {
		return 0, err
	}
	if strings.ContainsRune(o.Name, 0) {
		return 0, optionErrorf("Name %q contains a NUL byte", o.Name)
	}
	if o.Std != "" && !strings.HasPrefix(o.Std, "c++") {
		return 0, optionErrorf("Std %q: want a dialect like c++17", o.Std)
	}
	for name, src := range o.Headers {
		if name == "" {
			return 0, optionErrorf("a header has an empty name")
		}
		if strings.ContainsRune(name, 0) || strings.ContainsRune(src, 0) {
			return 0, optionErrorf("header %q contains a NUL byte", name)
		}
	}
	for name, v := range o.Defines {
		if !identRE.MatchString(name) {
			return 0, optionErrorf("Defines: %q is not a macro name", name)
		}
		if strings.ContainsAny(v, "\x00\n") {
			return 0, optionErrorf("Defines: the value of %s contains a NUL byte or a newline", name)
		}
	}
	for _, p := range o.IncludePaths {
		if p == "" || strings.ContainsRune(p, 0) {
			return 0, optionErrorf("IncludePaths: %q is not a directory name", p)
		}
	}
	for _, e := range o.Extra {
		if strings.ContainsRune(e, 0) {
			return 0, optionErrorf("Extra option %q contains a NUL byte", e)
		}
	}
	seen := map[string]bool{}
	for _, e := range o.NameExpressions {
		if strings.TrimSpace(e) == "" || strings.ContainsRune(e, 0) {
			return 0, optionErrorf("name expression %q is empty or contains a NUL byte", e)
		}
		if seen[e] {
			return 0, optionErrorf("name expression %q is given twice", e)
		}
		seen[e] = true
	}
	return f, nil
}

func (o *Options) name() string {
	if o.Name == "" {
		return DefaultName
	}
	return o.Name
}

// Args returns the options as NVRTC receives them, in a fixed order.
func (o *Options) Args() []string {
	args := []string{"--gpu-architecture=" + o.Arch}
	if !o.SearchSourceDir {
		args = append(args, "--no-source-include")
	}
	if o.Std != "" {
		args = append(args, "--std="+o.Std)
	}
	for _, name := range sortedKeys(o.Defines) {
		if v := o.Defines[name]; v != "" {
			args = append(args, "--define-macro="+name+"="+v)
		} else {
			args = append(args, "--define-macro="+name)
		}
	}
	for _, p := range o.IncludePaths {
		args = append(args, "--include-path="+p)
	}
	if o.NoFMAD {
		args = append(args, "--fmad=false")
	}
	if o.FastMath {
		args = append(args, "--use_fast_math")
	}
	if o.LineInfo {
		args = append(args, "--generate-line-info")
	}
	if o.Debug {
		args = append(args, "--device-debug")
	}
	return append(args, o.Extra...)
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// optionError is a mistake in Options found before NVRTC sees them; it
// matches errors.Is(err, InvalidOption) like NVRTC's own rejection.
type optionError struct{ msg string }

func optionErrorf(format string, args ...any) error {
	return &optionError{fmt.Sprintf(format, args...)}
}

func (e *optionError) Error() string        { return "nvrtc: invalid option: " + e.msg }
func (e *optionError) Is(target error) bool { return target == InvalidOption }
