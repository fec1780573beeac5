package launch

import (
	"errors"
	"fmt"
	"os"
	"path"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/gocu-dev/gocu"
	"github.com/gocu-dev/gocu/cuda"
	"github.com/gocu-dev/gocu/kernel"
	"github.com/gocu-dev/gocu/meta"
	"github.com/gocu-dev/gocu/nvrtc"
)

// Program is the CUDA C++ source that gocu gen wrote for the kernels of one
// Go package, compiled and loaded on first use on each GPU. The generated
// file (zz_gocu_<pkg>.go) makes one with NewProgram, and its launchers
// (Launch<Kernel>) run kernels through a Call. Programs are safe for
// concurrent use.
type Program struct {
	mod  *meta.Module
	file string // the generated file, as the compiler named it

	staleOnce sync.Once
	staleErr  error

	mu     sync.Mutex               // serialises builds
	builds atomic.Pointer[[]*build] // copy on write: launches read it without locking
}

// NewProgram returns the program of a generated module. Launch errors then
// name the first caller outside the module's package, not its generated
// launchers.
func NewProgram(m *meta.Module) *Program {
	cuda.MarkHelperPackage(m.Package)
	cuda.MarkHelperPackage("github.com/gocu-dev/gocu/launch")
	_, file, _, _ := runtime.Caller(1)
	return &Program{mod: m, file: file}
}

// Module returns the metadata gocu gen wrote: the CUDA source, its hash,
// each kernel's parameters and the source-site table.
func (p *Program) Module() *meta.Module { return p.mod }

// variant says which build of a program's source a launch needs.
type variant uint8

const (
	variantDebug variant = 1 << iota // -DGOCU_DEBUG: Go's checks on the GPU
	variantNoFMA                     // --fmad=false: float results bit-identical to Go
)

// build is a program compiled for one device in one variant, with its
// kernels looked up.
type build struct {
	dev *gocu.Device
	v   variant
	err error // a build that failed fails every launch the same way, without recompiling

	mod  *gocu.Module
	fns  []*cuda.Function // by kernel index
	auto []atomic.Int32   // block size suggested by the occupancy calculator, 0 until asked
	dyn  []atomic.Int32   // dynamic shared memory the kernel was opted in to, beyond the default 48 KiB

	// Debug builds: the error buffer gocu_err is read through a kernel of
	// the debug source, gocu_err_take, which copies it to errDev and
	// clears it. Launches hold dmu from clearing the buffer to reading it.
	dmu     sync.Mutex
	take    *cuda.Function
	errDev  *cuda.Memory
	errHost []uint64
}

// build returns the build of p for d in variant v, compiling and loading
// it on first use. The common case is one atomic load and a short scan.
func (p *Program) build(d *gocu.Device, v variant) (*build, error) {
	if bs := p.builds.Load(); bs != nil {
		for _, b := range *bs {
			if b.dev == d && b.v == v {
				return b, b.err
			}
		}
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	var old []*build
	if bs := p.builds.Load(); bs != nil {
		old = *bs
		for _, b := range old {
			if b.dev == d && b.v == v {
				return b, b.err
			}
		}
	}
	b := p.compile(d, v)
	bs := append(append(make([]*build, 0, len(old)+1), old...), b)
	p.builds.Store(&bs)
	return b, b.err
}

// compile compiles and loads the program for d in variant v.
func (p *Program) compile(d *gocu.Device, v variant) *build {
	b := &build{dev: d, v: v}
	opts := []gocu.Option{gocu.Std("c++17"), gocu.Name(p.sourceName())}
	if v&variantDebug != 0 {
		opts = append(opts, gocu.Define("GOCU_DEBUG", ""))
	}
	if v&variantNoFMA != 0 {
		opts = append(opts, func(o *nvrtc.Options) { o.NoFMAD = true })
	}
	if p.mod.ArchSpecific {
		opts = append(opts, gocu.ArchSpecific())
	}
	m, err := d.Compile(p.mod.Source, opts...)
	if err != nil {
		b.err = p.buildError(err)
		return b
	}
	b.mod = m
	n := len(p.mod.Kernels)
	b.fns = make([]*cuda.Function, n)
	b.auto = make([]atomic.Int32, n)
	b.dyn = make([]atomic.Int32, n)
	for i := range p.mod.Kernels {
		k := &p.mod.Kernels[i]
		f, err := m.CUDA().Function(k.Entry)
		if err != nil {
			b.err = fmt.Errorf("gocu: kernel %s of package %s: %w", k.Name, p.mod.Package, err)
			return b
		}
		b.fns[i] = f
	}
	if v&variantDebug != 0 {
		if b.take, err = m.CUDA().Function("gocu_err_take"); err != nil {
			b.err = fmt.Errorf("gocu: the debug build of package %s has no error buffer (regenerate it with a current gocu gen): %w", p.mod.Package, err)
			return b
		}
		if b.errDev, err = d.CUDA().Alloc(meta.ErrorWords * 8); err != nil {
			b.err = err
			return b
		}
		b.errHost = make([]uint64, meta.ErrorWords)
	}
	return b
}

// sourceName is the file name of the program in compiler messages, the
// name gocu gen gives the CUDA source when it writes it out.
func (p *Program) sourceName() string {
	return "zz_gocu_" + path.Base(p.mod.Package) + ".cu"
}

// envFlag reads a boolean environment variable: set and not "0", "false"
// or "off".
func envFlag(name string) bool {
	v := strings.TrimSpace(os.Getenv(name))
	return v != "" && v != "0" && !strings.EqualFold(v, "false") && !strings.EqualFold(v, "off")
}

// envVariant is the variant the environment asks for, read once:
// GOCU_DEBUG=1 adds the debug build to every launch, GOCU_FMAD=0 compiles
// without multiply-add contraction.
var envVariant = sync.OnceValue(func() variant {
	var v variant
	if envFlag("GOCU_DEBUG") {
		v |= variantDebug
	}
	if s := strings.TrimSpace(os.Getenv("GOCU_FMAD")); s != "" && !envFlag("GOCU_FMAD") {
		v |= variantNoFMA
	}
	return v
})

// buildError explains a failure to build the generated source. A compile
// error is a bug of gocu gen (the translator checks everything NVRTC would
// reject); it is shown with the Go source of each failing CUDA line.
func (p *Program) buildError(err error) error {
	var ce *nvrtc.CompileError
	if !errors.As(err, &ce) {
		return fmt.Errorf("gocu: building the kernels of package %s: %w", p.mod.Package, err)
	}
	return &genCompileError{pkg: p.mod.Package, src: p.mod.Source, sites: p.mod.Sites, err: ce}
}

// genCompileError is NVRTC's rejection of a source gocu gen wrote, with
// the Go positions of the failing lines. errors.As finds the
// *nvrtc.CompileError inside.
type genCompileError struct {
	pkg   string
	src   string
	sites []*kernel.Site
	err   *nvrtc.CompileError
}

func (e *genCompileError) Unwrap() error { return e.err }

func (e *genCompileError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "gocu: the CUDA source gocu gen wrote for package %s does not compile for %s; this is a bug of gocu gen: please report it with the generated file", e.pkg, e.err.Arch)
	lines := strings.Split(e.src, "\n")
	shown := 0
	for i := range e.err.Diagnostics {
		d := &e.err.Diagnostics[i]
		if !d.IsError() {
			continue
		}
		b.WriteString("\n")
		b.WriteString(d.String())
		if g := goPositions(lines, d.Line, e.sites); g != "" {
			b.WriteString("\n  Go: ")
			b.WriteString(g)
		}
		shown++
	}
	if shown == 0 {
		b.WriteString("\n")
		b.WriteString(strings.TrimSpace(e.err.Log))
	}
	return b.String()
}
