package gen

import (
	"flag"
	"go/ast"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"golang.org/x/tools/go/packages"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// The kernel and math packages, loaded once, so that tests can translate
// single files without running the go command.
var (
	depsOnce sync.Once
	depsPkgs map[string]*types.Package
	depsErr  error
)

func deps(t testing.TB) map[string]*types.Package {
	t.Helper()
	needGo(t)
	depsOnce.Do(func() {
		cfg := &packages.Config{Mode: packages.NeedName | packages.NeedTypes | packages.NeedImports | packages.NeedDeps}
		pkgs, err := packages.Load(cfg, kernelPath, "math", "github.com/gocu-dev/gocu/gen/testdata/kernels/util")
		if err != nil {
			depsErr = err
			return
		}
		depsPkgs = map[string]*types.Package{}
		packages.Visit(pkgs, nil, func(p *packages.Package) {
			if p.Types != nil {
				depsPkgs[p.PkgPath] = p.Types
			}
		})
	})
	if depsErr != nil {
		t.Fatal(depsErr)
	}
	return depsPkgs
}

type importerFunc func(path string) (*types.Package, error)

func (f importerFunc) Import(path string) (*types.Package, error) { return f(path) }

// translate translates one Go file (package k, importing kernel and math
// as needed) without the go command. The file is named k.go in messages.
func translate(t testing.TB, src string) (*Package, error) {
	t.Helper()
	ps := deps(t)
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "k.go", src, parser.ParseComments|parser.SkipObjectResolution)
	if err != nil {
		return nil, err
	}
	std := importer.Default()
	conf := types.Config{
		Importer: importerFunc(func(path string) (*types.Package, error) {
			if p := ps[path]; p != nil {
				return p, nil
			}
			return std.Import(path)
		}),
		Sizes: types.SizesFor("gc", "amd64"),
	}
	info := &types.Info{
		Types:      map[ast.Expr]types.TypeAndValue{},
		Defs:       map[*ast.Ident]types.Object{},
		Uses:       map[*ast.Ident]types.Object{},
		Implicits:  map[ast.Node]types.Object{},
		Selections: map[*ast.SelectorExpr]*types.Selection{},
		Scopes:     map[ast.Node]*types.Scope{},
		Instances:  map[*ast.Ident]types.Instance{},
	}
	tp, err := conf.Check("example.com/k", fset, []*ast.File{f}, info)
	if err != nil {
		return nil, err
	}
	pkg := &packages.Package{
		ID: "example.com/k", Name: tp.Name(), PkgPath: "example.com/k", Fset: fset,
		Syntax: []*ast.File{f}, Types: tp, TypesInfo: info,
		GoFiles: []string{"k.go"}, CompiledGoFiles: []string{"k.go"},
	}
	prog := newProgram(fset, "")
	prog.add(pkg)
	prog.roots = []*packages.Package{pkg}
	res, err := prog.generate(Config{})
	if err != nil {
		return nil, err
	}
	if len(res.Packages) == 0 {
		return nil, nil
	}
	return res.Packages[0], nil
}

// mustTranslate translates src and fails the test on an error.
func mustTranslate(t testing.TB, src string) *Package {
	t.Helper()
	p, err := translate(t, src)
	if err != nil {
		t.Fatalf("translate: %v\n%s", err, src)
	}
	if p == nil {
		t.Fatalf("no kernels in\n%s", src)
	}
	return p
}

// kernelSrc wraps a kernel body into a file.
func kernelSrc(decls, params, body string) string {
	return "package k\n\nimport (\n\t\"fmt\"; \"math\"\n\t\"github.com/gocu-dev/gocu/kernel\"\n)\n\nvar _, _ = math.Pi, fmt.Printf\n\n" + decls +
		"\n\n//gocu:kernel\nfunc K(t *kernel.Thread, " + params + ") {\n" + body + "\n}\n"
}

// cbody returns the C code of the kernel K in a translation.
func cbody(p *Package) string {
	i := strings.Index(p.CUDA, "end of gocu runtime ----")
	return p.CUDA[i:]
}

func readFile(t testing.TB, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func kernelDirs(t testing.TB) []string {
	t.Helper()
	dirs, err := filepath.Glob("testdata/kernels/*")
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, d := range dirs {
		if fi, err := os.Stat(d); err == nil && fi.IsDir() && filepath.Base(d) != "util" {
			out = append(out, d)
		}
	}
	return out
}

// needGo skips a test that loads packages with the go command where there
// is none (the GPU machine runs prebuilt test binaries).
func needGo(t testing.TB) {
	t.Helper()
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go command to load packages with:", err)
	}
}
