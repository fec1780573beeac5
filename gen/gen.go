package gen

import (
	"bytes"
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"

	"github.com/gocu-dev/gocu/kernel"
	"github.com/gocu-dev/gocu/meta"
	"golang.org/x/tools/go/packages"
)

// kernelPath is the import path of the package kernel code imports.
const kernelPath = "github.com/gocu-dev/gocu/kernel"

// metaPath is the import path of the metadata package generated files use.
const metaPath = "github.com/gocu-dev/gocu/meta"

// Config controls a run of the translator.
type Config struct {
	// Dir is the directory in which the patterns are resolved and against
	// which diagnostic paths are shown; empty means the current directory.
	Dir string
	// BuildFlags are passed to the go command, such as "-tags=gpu".
	BuildFlags []string
	// Env is the environment of the go command; nil means os.Environ().
	Env []string
	// CUDAFile also writes the CUDA source beside the generated Go file,
	// as zz_gocu_<pkg>.cu, for reading and for tools. Nothing needs it.
	CUDAFile bool
	// Check writes nothing: Run fails with ErrStale when a generated file
	// is not what this run would write, so that CI finds a forgotten go
	// generate.
	Check bool
}

// A Diagnostic is a problem found in kernel code, at a source position.
type Diagnostic struct {
	Pos token.Position
	Msg string
}

func (d Diagnostic) String() string {
	if !d.Pos.IsValid() {
		return d.Msg
	}
	return fmt.Sprintf("%s:%d:%d: %s", d.Pos.Filename, d.Pos.Line, d.Pos.Column, d.Msg)
}

// Error is returned when kernel code cannot be translated. It lists every
// problem found, in source order.
type Error struct {
	Diagnostics []Diagnostic
	// Omitted counts the problems past MaxDiagnostics: the last
	// diagnostic, without a position, says how many.
	Omitted int
}

func (e *Error) Error() string {
	var b strings.Builder
	for i, d := range e.Diagnostics {
		if i > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(d.String())
	}
	return b.String()
}

// ErrNoPackages is returned when the patterns match no Go package.
var ErrNoPackages = errors.New("gocu gen: the patterns match no Go package")

// Result is the output of a translation, not yet written.
type Result struct {
	Packages []*Package
	// Stale lists generated files of packages that no longer have kernels;
	// Write removes them.
	Stale []string
	// NoKernels lists the import paths of the matched packages that have
	// no kernels.
	NoKernels []string
}

// Package is the output for one Go package that has kernels.
type Package struct {
	Path    string   // import path
	Name    string   // package name
	Dir     string   // directory of the package
	Kernels []string // Go names of its kernels, in source order
	// Meta describes the kernels as the generated file does (without
	// Func and Checked, which only exist in the compiled package).
	Meta []meta.Kernel
	// Sites is the site table of the generated file.
	Sites  []kernel.Site
	CUDA   string // the CUDA C++ source of all its kernels
	GoFile string // path of the generated Go file
	Go     []byte // contents of the generated Go file
	CUFile string // path of the .cu file written when Config.CUDAFile is set
}

// Generate loads the packages matched by patterns (as the go command does),
// translates every function marked //gocu:kernel and every function they
// call, and returns the generated files without writing them. Problems in
// kernel code are returned together as an *Error.
func Generate(cfg Config, patterns ...string) (*Result, error) {
	prog, err := load(cfg, patterns)
	if err != nil {
		return nil, err
	}
	return prog.generate(cfg)
}

// Write writes every generated file whose contents changed and removes
// stale ones. It returns the paths it wrote or removed.
func (r *Result) Write() ([]string, error) {
	var changed []string
	write := func(path string, data []byte) error {
		old, err := os.ReadFile(path)
		if err == nil && bytes.Equal(old, data) {
			return nil
		}
		if err := writeAtomic(path, data); err != nil {
			return err
		}
		changed = append(changed, path)
		return nil
	}
	for _, p := range r.Packages {
		if err := write(p.GoFile, p.Go); err != nil {
			return changed, err
		}
		if p.CUFile != "" {
			if err := write(p.CUFile, []byte(p.CUDA)); err != nil {
				return changed, err
			}
		}
	}
	for _, s := range r.Stale {
		if err := os.Remove(s); err != nil && !errors.Is(err, os.ErrNotExist) {
			return changed, err
		}
		changed = append(changed, s)
	}
	return changed, nil
}

// ErrStale is returned by Run with Config.Check when generated files are
// out of date.
var ErrStale = errors.New("the kernels changed since gocu gen: run go generate")

// check returns an error wrapping ErrStale that names the files Write
// would change, or nil when there are none.
func (r *Result) check(dir string) error {
	var stale []string
	same := func(path string, data []byte) {
		if old, err := os.ReadFile(path); err != nil || !bytes.Equal(old, data) {
			stale = append(stale, relPath(dir, path))
		}
	}
	for _, p := range r.Packages {
		same(p.GoFile, p.Go)
		if p.CUFile != "" {
			same(p.CUFile, []byte(p.CUDA))
		}
	}
	for _, s := range r.Stale {
		stale = append(stale, relPath(dir, s))
	}
	if len(stale) == 0 {
		return nil
	}
	return fmt.Errorf("gocu gen: %s out of date: %w", strings.Join(stale, ", "), ErrStale)
}

func writeAtomic(path string, data []byte) error {
	f, err := os.CreateTemp(filepath.Dir(path), ".gocu-gen-*")
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		os.Remove(f.Name())
		return err
	}
	if err := f.Close(); err != nil {
		os.Remove(f.Name())
		return err
	}
	if err := os.Chmod(f.Name(), 0o644); err != nil {
		os.Remove(f.Name())
		return err
	}
	if err := os.Rename(f.Name(), path); err != nil {
		os.Remove(f.Name())
		return err
	}
	return nil
}

// Run is gocu gen: it translates the packages matched by patterns, writes
// the files that changed, and reports each written file on w. It returns
// the diagnostics (also as the error, an *Error) when kernel code cannot be
// translated, in which case nothing is written.
func Run(cfg Config, w io.Writer, patterns ...string) ([]Diagnostic, error) {
	if len(patterns) == 0 {
		patterns = []string{"."}
	}
	res, err := Generate(cfg, patterns...)
	if err != nil {
		var e *Error
		if errors.As(err, &e) {
			return e.Diagnostics, err
		}
		return nil, err
	}
	if cfg.Check {
		return nil, res.check(cfg.Dir)
	}
	changed, err := res.Write()
	for _, c := range changed {
		verb := "wrote"
		if !fileExists(c) {
			verb = "removed"
		}
		fmt.Fprintf(w, "gocu gen: %s %s\n", verb, relPath(cfg.Dir, c))
	}
	if len(res.Packages) == 0 && err == nil {
		fmt.Fprintf(w, "gocu gen: found no kernels (functions marked //gocu:kernel) in %s\n", listPaths(res.NoKernels, 3))
	}
	return nil, err
}

// generatedPrefix starts the name of every file gocu gen writes.
const generatedPrefix = "zz_gocu_"

// generatedMarker is the first line of every generated Go file.
const generatedMarker = "// Code generated by gocu gen. DO NOT EDIT."

// load runs go/packages. Generated files of an earlier run are read as
// empty (their package clause only), so that a stale one cannot break the
// load; the code that uses generated launchers then has type errors, which
// matter only where they touch kernel code.
func load(cfg Config, patterns []string) (*program, error) {
	goroot := filepath.Clean(runtime.GOROOT()) + string(filepath.Separator)
	pc := &packages.Config{
		Mode: packages.NeedName | packages.NeedFiles | packages.NeedSyntax | packages.NeedTypes |
			packages.NeedTypesInfo | packages.NeedDeps | packages.NeedImports | packages.NeedTypesSizes,
		Dir:        cfg.Dir,
		Env:        cfg.Env,
		BuildFlags: cfg.BuildFlags,
		ParseFile: func(fset *token.FileSet, name string, src []byte) (*ast.File, error) {
			if strings.HasPrefix(filepath.Base(name), generatedPrefix) {
				return parser.ParseFile(fset, name, src, parser.PackageClauseOnly)
			}
			f, err := parser.ParseFile(fset, name, src, parser.ParseComments|parser.SkipObjectResolution)
			if f != nil && strings.HasPrefix(name, goroot) {
				// The standard library is never translated: skip its bodies.
				for _, d := range f.Decls {
					if fd, ok := d.(*ast.FuncDecl); ok {
						fd.Body = nil
					}
				}
			}
			return f, err
		},
	}
	roots, err := packages.Load(pc, patterns...)
	if err != nil {
		return nil, loadError(cfg, err)
	}
	if len(roots) == 0 {
		return nil, ErrNoPackages
	}
	prog := newProgram(roots[0].Fset, cfg.Dir)
	var diags []Diagnostic
	var missing []string
	packages.Visit(roots, nil, func(p *packages.Package) {
		prog.add(p)
	})
	for _, p := range roots {
		for _, e := range p.Errors {
			if e.Kind == packages.TypeError {
				// Judged later: only errors inside translated code count.
				prog.typeErrors = append(prog.typeErrors, e)
				continue
			}
			if e.Pos == "" || e.Pos == "-" {
				// Not a problem in a source file: a pattern that matches no
				// directory or package, an import path that does not
				// resolve. One line each, without a position.
				missing = append(missing, patternError(p, e.Msg))
				continue
			}
			diags = append(diags, Diagnostic{Pos: parsePos(e.Pos), Msg: e.Msg})
		}
	}
	if len(missing) > 0 {
		return nil, errors.New(strings.Join(dedupeStrings(missing), "\n"))
	}
	if len(diags) > 0 {
		return nil, newError(diags)
	}
	prog.roots = roots
	return prog, nil
}

// parsePos parses "file:line:col" or "file:line" as go/packages reports
// positions.
func parsePos(s string) token.Position {
	p := token.Position{Filename: s}
	parts := strings.Split(s, ":")
	nums := 0
	for i := len(parts) - 1; i >= 1 && nums < 2; i-- {
		if _, err := strconv.Atoi(parts[i]); err != nil {
			break
		}
		nums++
	}
	if nums == 0 {
		return p
	}
	n := len(parts) - nums
	p.Filename = strings.Join(parts[:n], ":")
	p.Line, _ = strconv.Atoi(parts[n])
	if nums == 2 {
		p.Column, _ = strconv.Atoi(parts[n+1])
	}
	return p
}

// relPath shows path relative to dir (or the current directory) when it is
// below it.
func relPath(dir, path string) string {
	base := dir
	if base == "" {
		base, _ = os.Getwd()
	} else if abs, err := filepath.Abs(base); err == nil {
		base = abs
	}
	if rel, err := filepath.Rel(base, path); err == nil && !strings.HasPrefix(rel, "..") {
		return rel
	}
	return path
}

func sortDiagnostics(ds []Diagnostic) {
	sort.SliceStable(ds, func(i, j int) bool {
		a, b := ds[i].Pos, ds[j].Pos
		if a.Filename != b.Filename {
			return a.Filename < b.Filename
		}
		if a.Line != b.Line {
			return a.Line < b.Line
		}
		return a.Column < b.Column
	})
}

// loadError turns a failure of the go command as a whole into one line.
func loadError(cfg Config, err error) error {
	msg := strings.TrimSpace(err.Error())
	// go/packages reports "err: exit status 1: stderr: go: ..."
	if _, after, ok := strings.Cut(msg, "stderr: "); ok {
		msg = after
	}
	msg = strings.TrimPrefix(msg, "go: ")
	if strings.Contains(msg, "go.mod file not found") {
		dir := cfg.Dir
		if dir == "" {
			dir, _ = os.Getwd()
		}
		if abs, err := filepath.Abs(dir); err == nil {
			dir = abs
		}
		return fmt.Errorf("gocu gen: not inside a Go module: there is no go.mod in %s or any folder above it; run gocu gen in a module (go mod init creates one)", dir)
	}
	return fmt.Errorf("gocu gen: %s", firstLine(msg))
}

// patternError is the line for a root package the go command could not
// find: a pattern that names no directory, a directory without Go files,
// an import path no module provides.
func patternError(p *packages.Package, msg string) string {
	name := p.ID
	if name == "" {
		name = p.PkgPath
	}
	switch {
	case strings.HasSuffix(msg, ": directory not found"):
		dir := strings.TrimSuffix(strings.TrimPrefix(msg, "stat "), ": directory not found")
		return fmt.Sprintf("gocu gen: %s: no such directory (%s)", name, dir)
	case strings.HasPrefix(msg, "pattern ") && strings.HasSuffix(msg, "no such file or directory"):
		return fmt.Sprintf("gocu gen: %s: no such directory", name)
	case strings.HasPrefix(msg, "no required module provides package"):
		return fmt.Sprintf("gocu gen: %s: no package with this import path in the module or its requirements (a directory is written ./dir)", name)
	}
	msg = firstLine(msg)
	if strings.Contains(msg, name) {
		return "gocu gen: " + msg
	}
	return fmt.Sprintf("gocu gen: %s: %s", name, msg)
}

// listPaths lists at most n paths, then how many more.
func listPaths(ps []string, n int) string {
	if len(ps) <= n {
		return strings.Join(ps, ", ")
	}
	return fmt.Sprintf("%s and %d more packages", strings.Join(ps[:n], ", "), len(ps)-n)
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	return strings.TrimSuffix(strings.TrimSpace(s), ";")
}

func dedupeStrings(ss []string) []string {
	var out []string
	seen := map[string]bool{}
	for _, s := range ss {
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	return out
}

// MaxDiagnostics is the most problems gocu gen reports in one run; a
// last line says how many more there are.
const MaxDiagnostics = 50

// newError returns the *Error of diagnostics: sorted, without
// duplicates, the first MaxDiagnostics and a line counting the rest.
func newError(ds []Diagnostic) *Error {
	sortDiagnostics(ds)
	ds = dedupe(ds)
	if len(ds) <= MaxDiagnostics {
		return &Error{Diagnostics: ds}
	}
	more := len(ds) - MaxDiagnostics
	out := append([]Diagnostic(nil), ds[:MaxDiagnostics]...)
	out = append(out, Diagnostic{Msg: fmt.Sprintf("gocu gen: %d more problem(s) not shown; fix these first", more)})
	return &Error{Diagnostics: out, Omitted: more}
}
