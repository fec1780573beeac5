package gen

import (
	"go/ast"
	"os"
	"path/filepath"
	"sort"

	"github.com/gocu-dev/gocu/meta"
)

// staleNote follows the first line of every generated Go file, for the
// reader whom a build error brings here.
const staleNote = `//
// If this file does not compile, or a launch says the kernels changed, the
// kernels changed since gocu gen wrote it: run go generate.
`

// goSources returns the hash of the source text of every translated
// function declared in the unit's package (kernels and the functions
// they call), sorted by file and name, for meta.Module.GoSources.
// Functions of other packages are not recorded: their files may be
// anywhere, such as the module cache, where they do not change.
func (u *unit) goSources() []meta.GoSource {
	seen := map[*ast.FuncDecl]bool{}
	files := map[string][]byte{}
	var out []meta.GoSource
	for _, f := range append(append([]*fn(nil), u.kernels...), u.order...) {
		if f.src == nil || f.src.pkg != u.pkg || seen[f.src.decl] {
			continue
		}
		seen[f.src.decl] = true
		tf := u.prog.fset.File(f.src.decl.Pos())
		if tf == nil {
			continue
		}
		name := tf.Name()
		src, ok := files[name]
		if !ok {
			src, _ = os.ReadFile(name)
			files[name] = src
		}
		start, end := tf.Offset(f.src.decl.Pos()), tf.Offset(f.src.decl.End())
		if src == nil || start < 0 || end > len(src) || start > end {
			continue
		}
		out = append(out, meta.GoSource{
			File:   filepath.Base(name),
			Func:   funcKey(f.src.decl),
			SHA256: sha256hex(string(src[start:end])),
		})
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].File != out[j].File {
			return out[i].File < out[j].File
		}
		return out[i].Func < out[j].Func
	})
	return out
}

// funcKey is the name meta.GoSource gives a function declaration: its
// name, or Type.Method for a method, with the receiver's base type name.
func funcKey(d *ast.FuncDecl) string {
	if d.Recv == nil || len(d.Recv.List) == 0 {
		return d.Name.Name
	}
	t := d.Recv.List[0].Type
	for {
		switch x := t.(type) {
		case *ast.StarExpr:
			t = x.X
			continue
		case *ast.ParenExpr:
			t = x.X
			continue
		case *ast.IndexExpr:
			t = x.X
			continue
		case *ast.IndexListExpr:
			t = x.X
			continue
		case *ast.Ident:
			return x.Name + "." + d.Name.Name
		}
		return d.Name.Name
	}
}
