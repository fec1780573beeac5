package launch

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"

	"github.com/gocu-dev/gocu"
	"github.com/gocu-dev/gocu/meta"
)

// stale returns an error wrapping gocu.ErrStale when a Go function the
// program was generated from changed since (meta.Module.GoSources). It
// checks once per program, at its first launch, against the files beside
// the generated file. Where the generated file cannot be read, such as a
// binary run away from its sources or built with -trimpath, there is
// nothing to compare with and it returns nil.
func (p *Program) stale() error {
	p.staleOnce.Do(func() { p.staleErr = checkSources(p.file, p.mod) })
	return p.staleErr
}

// checkSources compares the functions m records with those in the
// directory of the generated file gen.
func checkSources(gen string, m *meta.Module) error {
	if gen == "" || len(m.GoSources) == 0 || os.Getenv("GOCU_NO_STALE_CHECK") == "1" {
		return nil
	}
	if _, err := os.Stat(gen); err != nil {
		return nil
	}
	dir := filepath.Dir(gen)
	fset := token.NewFileSet()
	type parsed struct {
		src   []byte
		funcs map[string]*ast.FuncDecl
	}
	files := map[string]*parsed{}
	for _, g := range m.GoSources {
		f, ok := files[g.File]
		if !ok {
			f = &parsed{}
			files[g.File] = f
			path := filepath.Join(dir, g.File)
			src, err := os.ReadFile(path)
			if err == nil {
				f.src = src
				af, _ := parser.ParseFile(fset, path, src, parser.SkipObjectResolution)
				if af != nil {
					f.funcs = map[string]*ast.FuncDecl{}
					for _, d := range af.Decls {
						if fd, ok := d.(*ast.FuncDecl); ok {
							f.funcs[funcKey(fd)] = fd
						}
					}
				}
			}
		}
		what := ""
		switch d := f.funcs[g.Func]; {
		case f.src == nil:
			what = "the file is gone"
		case d == nil:
			what = g.Func + " is no longer in it"
		default:
			tf := fset.File(d.Pos())
			start, end := tf.Offset(d.Pos()), tf.Offset(d.End())
			sum := sha256.Sum256(f.src[start:end])
			if hex.EncodeToString(sum[:]) != g.SHA256 {
				what = g.Func + " is not the one " + filepath.Base(gen) + " was generated from"
			}
		}
		if what != "" {
			return &staleError{file: g.File, what: what, dir: dir}
		}
	}
	return nil
}

// staleError is a launch refused because the kernels' Go source changed
// since gocu gen.
type staleError struct {
	file, what, dir string
}

func (e *staleError) Error() string {
	return fmt.Sprintf("gocu: %s changed since gocu gen: run go generate in %s (%s)", e.file, e.dir, e.what)
}

func (e *staleError) Is(target error) bool { return target == gocu.ErrStale }

// funcKey is the name meta.GoSource gives a function declaration, as gocu
// gen computes it: its name, or Type.Method for a method.
func funcKey(d *ast.FuncDecl) string {
	if d.Recv == nil || len(d.Recv.List) == 0 {
		return d.Name.Name
	}
	t := d.Recv.List[0].Type
	for {
		switch x := t.(type) {
		case *ast.StarExpr:
			t = x.X
		case *ast.ParenExpr:
			t = x.X
		case *ast.IndexExpr:
			t = x.X
		case *ast.IndexListExpr:
			t = x.X
		case *ast.Ident:
			return x.Name + "." + d.Name.Name
		default:
			return d.Name.Name
		}
	}
}
