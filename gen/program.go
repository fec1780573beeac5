package gen

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"go/ast"
	"go/token"
	"go/types"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"golang.org/x/tools/go/packages"
)

// program is a set of loaded, type-checked packages.
type program struct {
	fset       *token.FileSet
	dir        string
	byTypes    map[*types.Package]*packages.Package
	roots      []*packages.Package
	typeErrors []packages.Error
	sizes      types.Sizes
	ctxt       *types.Context             // instances of generic types, shared
	writes     map[*types.Var][]token.Pos // tableWrite's answers

	funcs   map[*types.Func]*funcSrc
	indexed map[*packages.Package]bool
	dirs    map[*ast.File]map[int]directive
}

// funcSrc is the declaration of a Go function.
type funcSrc struct {
	decl *ast.FuncDecl
	pkg  *packages.Package
	file *ast.File
}

func newProgram(fset *token.FileSet, dir string) *program {
	return &program{
		fset:    fset,
		dir:     dir,
		byTypes: map[*types.Package]*packages.Package{},
		sizes:   types.SizesFor("gc", "amd64"),
		ctxt:    types.NewContext(),
		writes:  map[*types.Var][]token.Pos{},
		funcs:   map[*types.Func]*funcSrc{},
		indexed: map[*packages.Package]bool{},
		dirs:    map[*ast.File]map[int]directive{},
	}
}

func (p *program) add(pkg *packages.Package) {
	if pkg.Types != nil {
		p.byTypes[pkg.Types] = pkg
	}
}

// source returns the declaration of fn, or nil when its package was not
// loaded from source or it has no body.
func (p *program) source(fn *types.Func) *funcSrc {
	fn = fn.Origin()
	if fn.Pkg() == nil {
		return nil
	}
	pkg := p.byTypes[fn.Pkg()]
	if pkg == nil || pkg.TypesInfo == nil {
		return nil
	}
	if !p.indexed[pkg] {
		p.indexed[pkg] = true
		for _, f := range pkg.Syntax {
			for _, d := range f.Decls {
				if fd, ok := d.(*ast.FuncDecl); ok {
					if obj, ok := pkg.TypesInfo.Defs[fd.Name].(*types.Func); ok {
						p.funcs[obj] = &funcSrc{decl: fd, pkg: pkg, file: f}
					}
				}
			}
		}
	}
	return p.funcs[fn]
}

// directive is a //gocu: comment.
type directive struct {
	pos  token.Pos
	name string // "kernel", "unroll", ...
	args []string
}

// directives returns the //gocu: comments of f by line.
func (p *program) directives(f *ast.File) map[int]directive {
	if m, ok := p.dirs[f]; ok {
		return m
	}
	m := map[int]directive{}
	for _, g := range f.Comments {
		for _, c := range g.List {
			text, ok := strings.CutPrefix(c.Text, "//gocu:")
			if !ok {
				continue
			}
			fields := strings.Fields(text)
			if len(fields) == 0 {
				continue
			}
			m[p.fset.Position(c.Pos()).Line] = directive{pos: c.Pos(), name: fields[0], args: fields[1:]}
		}
	}
	p.dirs[f] = m
	return m
}

// funcDirectives returns the //gocu: directives in the doc comment of fd.
func (p *program) funcDirectives(fd *ast.FuncDecl) []directive {
	var ds []directive
	if fd.Doc == nil {
		return nil
	}
	for _, c := range fd.Doc.List {
		text, ok := strings.CutPrefix(c.Text, "//gocu:")
		if !ok {
			continue
		}
		fields := strings.Fields(text)
		if len(fields) > 0 {
			ds = append(ds, directive{pos: c.Pos(), name: fields[0], args: fields[1:]})
		}
	}
	return ds
}

func isKernelDecl(p *program, fd *ast.FuncDecl) bool {
	for _, d := range p.funcDirectives(fd) {
		if d.name == "kernel" {
			return true
		}
	}
	return false
}

// position converts pos to a Position whose file name is shown relative to
// the configured directory.
func (p *program) position(pos token.Pos) token.Position {
	ps := p.fset.Position(pos)
	if ps.Filename != "" {
		ps.Filename = relPath(p.dir, ps.Filename)
	}
	return ps
}

// generate translates every root package that has kernels.
func (p *program) generate(cfg Config) (*Result, error) {
	res := &Result{}
	var diags []Diagnostic
	for _, pkg := range p.roots {
		if pkg.TypesInfo == nil || len(pkg.Syntax) == 0 {
			continue
		}
		dir := packageDir(pkg)
		goFile := filepath.Join(dir, generatedPrefix+pkg.Name+".go")
		var kernels []*funcSrc
		for _, f := range sortedFiles(p, pkg) {
			for _, d := range f.Decls {
				if fd, ok := d.(*ast.FuncDecl); ok && isKernelDecl(p, fd) {
					kernels = append(kernels, &funcSrc{decl: fd, pkg: pkg, file: f})
				}
			}
		}
		if len(kernels) == 0 {
			res.NoKernels = append(res.NoKernels, pkg.PkgPath)
			if isGenerated(goFile) {
				res.Stale = append(res.Stale, goFile)
				if cu := strings.TrimSuffix(goFile, ".go") + ".cu"; fileExists(cu) {
					res.Stale = append(res.Stale, cu)
				}
			}
			continue
		}
		u := newUnit(p, pkg)
		out := u.safeRun(kernels)
		diags = append(diags, u.diags...)
		if len(u.diags) > 0 {
			continue
		}
		out.Dir = dir
		out.GoFile = goFile
		if cfg.CUDAFile {
			out.CUFile = strings.TrimSuffix(goFile, ".go") + ".cu"
		}
		res.Packages = append(res.Packages, out)
	}
	if len(diags) > 0 {
		return nil, newError(diags)
	}
	return res, nil
}

func dedupe(ds []Diagnostic) []Diagnostic {
	var out []Diagnostic
	seen := map[string]bool{}
	for _, d := range ds {
		if k := d.String(); !seen[k] {
			seen[k] = true
			out = append(out, d)
		}
	}
	return out
}

func packageDir(pkg *packages.Package) string {
	for _, f := range pkg.CompiledGoFiles {
		return filepath.Dir(f)
	}
	for _, f := range pkg.GoFiles {
		return filepath.Dir(f)
	}
	return "."
}

// sortedFiles returns the syntax of pkg ordered by file name, so that the
// output does not depend on the order the loader used.
func sortedFiles(p *program, pkg *packages.Package) []*ast.File {
	files := append([]*ast.File(nil), pkg.Syntax...)
	sort.SliceStable(files, func(i, j int) bool {
		return p.fset.Position(files[i].Pos()).Filename < p.fset.Position(files[j].Pos()).Filename
	})
	return files
}

func isGenerated(path string) bool {
	data, err := os.ReadFile(path)
	return err == nil && strings.HasPrefix(string(data), generatedMarker)
}

// writtenByGen reports whether the file at path starts with a line of
// gocu gen's, as its generated Go and CUDA files do.
func writtenByGen(path string) bool {
	if fi, err := os.Stat(path); err != nil || !fi.Mode().IsRegular() {
		return false
	}
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	head := make([]byte, 64)
	n, _ := io.ReadFull(f, head)
	return bytes.HasPrefix(head[:n], []byte("// Code generated by gocu gen"))
}

func fileExists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

func sha256hex(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

// parseDirectiveInt parses the numeric argument of a directive.
func parseDirectiveInt(s string) (int, bool) {
	n, err := strconv.Atoi(s)
	return n, err == nil && n > 0
}

// safeRun runs the unit, turning a translator crash into a diagnostic:
// gocu gen must never take go generate down with a stack trace.
func (u *unit) safeRun(kernels []*funcSrc) (out *Package) {
	defer func() {
		if r := recover(); r != nil {
			u.errorf(kernels[0].decl.Pos(), "gocu gen: internal error while translating package %s (please report it with this file): %v", u.pkg.PkgPath, r)
			out = nil
		}
	}()
	return u.run(kernels)
}
