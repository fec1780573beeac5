// Command apitrim rewrites Go code to the names of issue 25's API trim.
// It renames uses only: the declarations changed once, in the commit
// that introduced this command.
//
// It resolves names with go/types, so a method of another type that
// shares an old name is left alone. A use of a name that no longer
// exists still has a typed receiver, so the command also works on a tree
// merged after the declarations changed. It rewrites files in place and
// prints each one it changes.
//
//	go run ./tools/apitrim ./...
package main

import (
	"bytes"
	"flag"
	"fmt"
	"go/ast"
	"go/format"
	"go/token"
	"go/types"
	"os"
	"sort"

	"golang.org/x/tools/go/packages"
)

const mod = "github.com/gocu-dev/gocu"

// method is a method renamed on one named type.
type method struct{ pkg, typ, old, new string }

var methods = []method{
	{mod + "/array", "Array", "Unsqueeze", "ExpandDims"},
	{mod + "/array", "Array", "Permute", "Transpose"},
	{mod + "/grad", "Var", "Unsqueeze", "ExpandDims"},
	{mod + "/grad", "Var", "Permute", "Transpose"},
}

// function is a package-level function renamed.
type function struct{ pkg, old, new string }

var functions = []function{
	{mod + "/cuda", "GetDevice", "DeviceAt"},
}

// receivers renames the receiver of every method of a type.
var receivers = []struct{ pkg, typ, old, new string }{
	{mod + "/array", "Maker", "d", "m"},
}

func main() {
	flag.Parse()
	cfg := &packages.Config{
		Mode: packages.NeedName | packages.NeedFiles | packages.NeedSyntax |
			packages.NeedTypes | packages.NeedTypesInfo | packages.NeedImports,
		Tests: true,
	}
	pkgs, err := packages.Load(cfg, flag.Args()...)
	if err != nil {
		fmt.Fprintln(os.Stderr, "apitrim:", err)
		os.Exit(1)
	}
	// A file belongs to several packages with Tests; each edit is kept
	// once, by file offset.
	edits := map[string]map[int]edit{}
	for _, p := range pkgs {
		for _, f := range p.Syntax {
			name := p.Fset.File(f.Pos()).Name()
			for _, e := range fileEdits(p, f) {
				if edits[name] == nil {
					edits[name] = map[int]edit{}
				}
				edits[name][p.Fset.Position(e.pos).Offset] = e
			}
		}
	}
	names := make([]string, 0, len(edits))
	for n := range edits {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		if err := apply(n, edits[n]); err != nil {
			fmt.Fprintln(os.Stderr, "apitrim:", err)
			os.Exit(1)
		}
		fmt.Println(n)
	}
}

type edit struct {
	pos      token.Pos
	old, new string
}

func fileEdits(p *packages.Package, f *ast.File) []edit {
	var out []edit
	sels := map[*ast.Ident]bool{}
	ast.Inspect(f, func(n ast.Node) bool {
		if sel, ok := n.(*ast.SelectorExpr); ok {
			sels[sel.Sel] = true
			if e, ok := renameSelector(p.TypesInfo, sel); ok {
				out = append(out, e)
			}
		}
		return true
	})
	// Unqualified uses inside the function's own package: resolved, or
	// undefined once the declaration has its new name.
	ast.Inspect(f, func(n ast.Node) bool {
		id, ok := n.(*ast.Ident)
		if !ok || sels[id] {
			return true
		}
		for _, fn := range functions {
			if p.PkgPath != fn.pkg || id.Name != fn.old {
				continue
			}
			o, def := p.TypesInfo.Uses[id], p.TypesInfo.Defs[id]
			if def == nil && (o == nil || o.Parent() == p.Types.Scope()) {
				out = append(out, edit{id.Pos(), fn.old, fn.new})
			}
		}
		return true
	})
	for _, d := range f.Decls {
		if fd, ok := d.(*ast.FuncDecl); ok {
			out = append(out, renameReceiver(p, fd)...)
		}
	}
	return out
}

func renameSelector(info *types.Info, sel *ast.SelectorExpr) (edit, bool) {
	name := sel.Sel.Name
	if id, ok := sel.X.(*ast.Ident); ok {
		if pn, ok := info.Uses[id].(*types.PkgName); ok {
			for _, fn := range functions {
				if pn.Imported().Path() == fn.pkg && name == fn.old {
					return edit{sel.Sel.Pos(), fn.old, fn.new}, true
				}
			}
			return edit{}, false
		}
	}
	t := info.TypeOf(sel.X)
	if t == nil {
		return edit{}, false
	}
	if ptr, ok := t.(*types.Pointer); ok {
		t = ptr.Elem()
	}
	named, ok := t.(*types.Named)
	if !ok || named.Obj().Pkg() == nil {
		return edit{}, false
	}
	for _, m := range methods {
		if named.Obj().Pkg().Path() == m.pkg && named.Obj().Name() == m.typ && name == m.old {
			return edit{sel.Sel.Pos(), m.old, m.new}, true
		}
	}
	return edit{}, false
}

// renameReceiver renames a listed type's method receiver and its uses,
// unless the method already uses another object of the new name.
func renameReceiver(p *packages.Package, fd *ast.FuncDecl) []edit {
	if fd.Recv == nil || len(fd.Recv.List) != 1 || len(fd.Recv.List[0].Names) != 1 {
		return nil
	}
	recv := fd.Recv.List[0].Names[0]
	obj := p.TypesInfo.Defs[recv]
	if obj == nil {
		return nil
	}
	t := obj.Type()
	if ptr, ok := t.(*types.Pointer); ok {
		t = ptr.Elem()
	}
	named, ok := t.(*types.Named)
	if !ok {
		return nil
	}
	for _, r := range receivers {
		if p.PkgPath != r.pkg || named.Obj().Name() != r.typ || recv.Name != r.old {
			continue
		}
		var out []edit
		clash := false
		ast.Inspect(fd, func(n ast.Node) bool {
			id, ok := n.(*ast.Ident)
			if !ok {
				return true
			}
			o := p.TypesInfo.ObjectOf(id)
			switch {
			case o == obj:
				out = append(out, edit{id.Pos(), r.old, r.new})
			case id.Name == r.new && o != nil && o.Parent() != nil && o.Parent() != types.Universe:
				clash = true // a variable, constant, type or function in scope; not a field or method
			}
			return true
		})
		if clash {
			fmt.Fprintf(os.Stderr, "apitrim: %s: %s already uses %q; receiver left as %q\n",
				p.Fset.Position(fd.Pos()), fd.Name.Name, r.new, r.old)
			return nil
		}
		return out
	}
	return nil
}

func apply(name string, es map[int]edit) error {
	src, err := os.ReadFile(name)
	if err != nil {
		return err
	}
	offs := make([]int, 0, len(es))
	for o := range es {
		offs = append(offs, o)
	}
	sort.Sort(sort.Reverse(sort.IntSlice(offs)))
	for _, o := range offs {
		e := es[o]
		if !bytes.HasPrefix(src[o:], []byte(e.old)) {
			return fmt.Errorf("%s: offset %d is not %q", name, o, e.old)
		}
		src = append(src[:o], append([]byte(e.new), src[o+len(e.old):]...)...)
	}
	out, err := format.Source(src)
	if err != nil {
		return fmt.Errorf("%s: %v", name, err)
	}
	return os.WriteFile(name, out, 0o644)
}
