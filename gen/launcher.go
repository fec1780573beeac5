package gen

import (
	"fmt"
	"go/types"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/gocu-dev/gocu/meta"
)

// rootPath is the import path of package gocu, whose Device, Config and
// Buffer the launchers take.
const rootPath = "github.com/gocu-dev/gocu"

// launchPath is the import path of the launchers' runtime, package launch,
// whose Program and Call they use.
const launchPath = "github.com/gocu-dev/gocu/launch"

// programVar is the generated variable holding the package's launch.Program.
const programVar = "gocuProgram"

// LauncherName returns the name of the typed launcher gocu gen writes for
// the kernel called name: "Launch" followed by the name for an exported
// kernel (Gray: LaunchGray), "launch" followed by the name with its first
// letter in upper case for an unexported one (gray: launchGray), so that
// the launcher is exported exactly when the kernel is.
func LauncherName(name string) string {
	r, size := utf8.DecodeRuneInString(name)
	if unicode.IsUpper(r) {
		return "Launch" + name
	}
	return "launch" + string(unicode.ToUpper(r)) + name[size:]
}

// checkLauncherNames reports package identifiers that take the names the
// generated file needs for its launchers and its program variable.
func (u *unit) checkLauncherNames() {
	scope := u.pkg.Types.Scope()
	taken := func(name, what string) {
		if obj := scope.Lookup(name); obj != nil {
			u.errorf(obj.Pos(), "%s is declared here, but gocu gen needs the name for %s: rename it", name, what)
		}
	}
	taken(programVar, "the package's compiled kernels (identifiers starting with gocu are gocu gen's)")
	for _, name := range scope.Names() {
		// The generated file declares gocuSource, gocuModule, gocuSite0,
		// gocuChecked_K and others: a user's gocuX would collide.
		r, _ := utf8.DecodeRuneInString(strings.TrimPrefix(name, "gocu"))
		if name != programVar && strings.HasPrefix(name, "gocu") && (unicode.IsUpper(r) || r == '_') {
			u.errorf(scope.Lookup(name).Pos(), "%s is declared here, but identifiers starting with gocu are gocu gen's (its file declares gocuSource, gocuModule and others): rename it", name)
		}
	}
	seen := map[string]string{}
	for _, k := range u.origins() {
		name := LauncherName(k.obj.Name())
		if other, ok := seen[name]; ok {
			u.errorf(k.src.decl.Name.Pos(), "the kernels %s and %s would both have the launcher %s: rename one", other, k.obj.Name(), name)
			continue
		}
		seen[name] = k.obj.Name()
		taken(name, "the launcher of kernel "+k.obj.Name())
	}
}

// launcherParam is one kernel parameter as the launcher takes it.
type launcherParam struct {
	name   string // in the launcher
	goType string // the kernel's type, spelled in the generated file
	meta   meta.Param
	elem   string // element type of a slice
	conv   string // for a scalar: the conversion to the type the driver packs, or ""
	// generic: a value whose type mentions a type parameter, passed by its
	// bytes.
	generic bool
	// elemGeneric: a slice whose elements are of a type parameter's type,
	// passed as a *gocu.Buffer so that the type argument is inferred.
	elemGeneric bool
}

// buffer is the expression of the *gocu.Buffer of slice parameter i.
func (p launcherParam) buffer(lp, l string, i int) string {
	if p.elemGeneric {
		return p.name
	}
	return fmt.Sprintf("%s.Buffer[%s](&%s, %d, %s)", lp, p.elem, l, i, p.name)
}

// launcher writes the typed launcher of kernel k: of the kernel function,
// for all instances of a generic one.
func (u *unit) launcher(k *fn) string {
	root := u.imports().alias(rootPath, "gocu")
	lp := u.imports().alias(launchPath, "launch")
	kpkg := u.imports().alias(kernelPath, "kernel")
	insts := u.instancesOf(k.obj)
	idx := u.kernelIndex(insts[0])
	km := u.kernelMeta(insts[0])
	sig := k.obj.Signature()
	tps := sig.TypeParams()
	generic := tps != nil && tps.Len() > 0

	// Identifiers the launcher's body refers to, which a parameter of the
	// same name would shadow.
	reserved := map[string]bool{
		k.obj.Name(): true, u.twinNameOf(k): true, root: true, lp: true, kpkg: true, programVar: true,
		"error": true, "nil": true, "bool": true, "int64": true, "uint64": true, "int": true,
	}
	for _, b := range []string{"int8", "int16", "int32", "uint8", "uint16", "uint32", "float32", "float64"} {
		reserved[b] = true
	}
	var refl, errs, unsafePkg string
	var tparams, targs []string
	if generic {
		refl = u.imports().alias("reflect", "reflect")
		errs = u.imports().alias("errors", "errors")
		unsafePkg = u.imports().alias("unsafe", "unsafe")
		reserved[refl], reserved[errs], reserved[unsafePkg] = true, true, true
		for i := 0; i < tps.Len(); i++ {
			tp := tps.At(i)
			reserved[tp.Obj().Name()] = true
			tparams = append(tparams, tp.Obj().Name()+" "+u.goType(tp.Constraint(), tp.Obj().Pos()))
			targs = append(targs, tp.Obj().Name())
		}
	}
	var ps []launcherParam
	names := map[string]bool{}
	for i := 1; i < sig.Params().Len(); i++ {
		v := sig.Params().At(i)
		p := launcherParam{name: v.Name(), goType: u.goType(v.Type(), v.Pos()), meta: km.Params[i-1]}
		if p.name == "" || p.name == "_" || strings.HasPrefix(p.name, "gocu") || reserved[p.name] {
			p.name = fmt.Sprintf("gocuArg%d", i-1)
		}
		names[p.name] = true
		switch ut := v.Type().Underlying().(type) {
		case *types.Slice:
			p.elem = u.goType(ut.Elem(), v.Pos())
			p.elemGeneric = generic && mentionsTypeParam(ut.Elem())
		case *types.Basic:
			switch ut.Kind() {
			case types.Int:
				p.conv = "int64"
			case types.Uint, types.Uintptr:
				p.conv = "uint64"
			default:
				if _, named := types.Unalias(v.Type()).(*types.Named); named {
					p.conv = ut.Name()
				}
			}
		}
		p.generic = generic && p.elem == "" && mentionsTypeParam(v.Type())
		ps = append(ps, p)
	}
	own := func(name string) string { // the launcher's own parameters
		if names[name] {
			return "gocu" + strings.ToUpper(name[:1]) + name[1:]
		}
		return name
	}
	d, cfg, l := own("d"), own("cfg"), own("l")

	var b strings.Builder
	w := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }
	name := LauncherName(k.obj.Name())
	w("// %s runs the kernel %s on %s with the launch configuration %s:\n", name, k.obj.Name(), d, cfg)
	w("// on a GPU compiled from the package's CUDA source on first use, on the\n")
	w("// simulator as Go. Slices travel as %s.Buffer values of the device, or\n", root)
	w("// as arrays of package array (see %s.Slice). It\n", root)
	w("// returns without waiting for the GPU, except in debug mode and with In,\n")
	w("// Out or InOut buffers. Written by gocu gen.\n")
	if generic {
		var list []string
		for _, in := range insts {
			list = append(list, in.displayName())
		}
		w("//\n// On a GPU it runs the instance for the underlying types of the type\n")
		w("// arguments, one of %s; on the simulator,\n", strings.Join(list, ", "))
		w("// %s[%s] itself.\n", k.obj.Name(), strings.Join(targs, ", "))
	}
	tlist := ""
	if generic {
		tlist = "[" + strings.Join(tparams, ", ") + "]"
	}
	w("func %s%s(%s *%s.Device, %s %s.Config", name, tlist, d, root, cfg, root)
	// A slice travels as a gocu.Slice, which buffers and arrays satisfy;
	// a slice whose elements are of a type parameter as a *gocu.Buffer,
	// from which the type argument is inferred.
	sliceType := func(p launcherParam) string {
		if p.elemGeneric {
			return "*" + root + ".Buffer[" + p.elem + "]"
		}
		return root + ".Slice[" + p.elem + "]"
	}
	for i, p := range ps {
		t := p.goType
		if p.elem != "" {
			t = sliceType(p)
		}
		next := ""
		if i+1 < len(ps) {
			next = ps[i+1].goType
			if ps[i+1].elem != "" {
				next = sliceType(ps[i+1])
			}
		}
		if next == t { // group parameters of one type, as the kernel may
			w(", %s", p.name)
		} else {
			w(", %s %s", p.name, t)
		}
	}
	w(") error {\n")
	kexpr := fmt.Sprint(idx)
	if generic {
		// The instance, by the underlying types of the type arguments.
		var kinds []string
		for _, t := range targs {
			kinds = append(kinds, fmt.Sprintf("%s.TypeFor[%s]().Kind()", refl, t))
		}
		key := func(ks []string) string {
			if len(ks) == 1 {
				return ks[0]
			}
			return fmt.Sprintf("[%d]%s.Kind{%s}", len(ks), refl, strings.Join(ks, ", "))
		}
		w("gocuK := -1\n")
		w("switch %s {\n", key(kinds))
		var compiled []string
		for _, in := range insts {
			var ks []string
			for _, t := range in.targs {
				ks = append(ks, refl+"."+reflectKind(t))
			}
			w("case %s:\ngocuK = %d\n", key(ks), u.kernelIndex(in))
			compiled = append(compiled, in.displayName())
		}
		w("}\n")
		w("if gocuK < 0 {\n")
		var tnames []string
		for _, t := range targs {
			tnames = append(tnames, fmt.Sprintf("%s.TypeFor[%s]().String()", refl, t))
		}
		w("return %s.New(\"gocu: launch of %s: no compiled instance for \" + %s + \"; gocu gen compiled %s: name the instance in the kernel's //gocu:instantiate directive and run go generate\")\n",
			errs, k.obj.Name(), strings.Join(tnames, " + \", \" + "), strings.Join(compiled, ", "))
		w("}\n")
		kexpr = "gocuK"
	}
	w("var %s %s.Call\n", l, lp)
	w("if %s.Start(%s, %s, %s, %s) {\n", l, programVar, kexpr, d, cfg)
	var gpuArgs []string
	for i, p := range ps {
		switch {
		case p.elem != "":
			w("gocuM%d, gocuN%d := %s.DeviceArg(&%s, %d, %s)\n", i, i, lp, l, i, p.buffer(lp, l, i))
			gpuArgs = append(gpuArgs, fmt.Sprintf("gocuM%d", i), fmt.Sprintf("gocuN%d", i))
		case p.generic:
			// A value of a type parameter's type: its bytes, whatever the
			// type argument (a named float32 too).
			w("gocuV%d := %s\n", i, p.name)
			gpuArgs = append(gpuArgs, fmt.Sprintf("%s.ValueArg(&gocuV%d, int(%s.Alignof(gocuV%d)))", lp, i, unsafePkg, i))
		case p.meta.Kind == meta.Struct || p.meta.Kind == meta.Array:
			// A copy, so that taking its address does not move the
			// parameter (which the simulator's closure captures) to the heap.
			w("gocuV%d := %s\n", i, p.name)
			gpuArgs = append(gpuArgs, fmt.Sprintf("%s.ValueArg(&gocuV%d, %d)", lp, i, p.meta.Align))
		case p.conv != "":
			gpuArgs = append(gpuArgs, fmt.Sprintf("%s(%s)", p.conv, p.name))
		default:
			gpuArgs = append(gpuArgs, p.name)
		}
	}
	w("return %s.Run(%s)\n", l, strings.Join(gpuArgs, ", "))
	w("}\n")
	var simArgs []string
	for i, p := range ps {
		if p.elem != "" {
			w("gocuS%d := %s.SimArg(&%s, %d, %s)\n", i, lp, l, i, p.buffer(lp, l, i))
			simArgs = append(simArgs, fmt.Sprintf("gocuS%d", i))
		} else {
			simArgs = append(simArgs, p.name)
		}
	}
	inst := ""
	if generic {
		inst = "[" + strings.Join(targs, ", ") + "]"
	}
	call := strings.Join(append([]string{"gocuT"}, simArgs...), ", ")
	plain := k.obj.Name() + inst
	if km.Prints {
		// fmt.Printf would write at once, in no order: the twin prints
		// through kernel.Printf, which the simulator orders.
		plain = u.twinNameOf(k) + inst
	}
	w("return %s.Simulate(\n", l)
	w("func(gocuT *%s.Thread) { %s(%s) },\n", kpkg, plain, call)
	w("func(gocuT *%s.Thread) { %s%s(%s) },\n", kpkg, u.twinNameOf(k), inst, call)
	if len(simArgs) > 0 {
		w("%s,\n", strings.Join(simArgs, ", "))
	}
	w(")\n}\n")
	return b.String()
}

// kernelIndex returns the index of kernel k in the module.
func (u *unit) kernelIndex(k *fn) int {
	for i, o := range u.kernels {
		if o == k {
			return i
		}
	}
	return -1
}

// mentionsTypeParam reports whether t contains a type parameter.
func mentionsTypeParam(t types.Type) bool {
	found := false
	var walk func(t types.Type, depth int)
	walk = func(t types.Type, depth int) {
		if found || depth > 20 {
			return
		}
		switch t := types.Unalias(t).(type) {
		case *types.TypeParam:
			found = true
		case *types.Slice:
			walk(t.Elem(), depth+1)
		case *types.Array:
			walk(t.Elem(), depth+1)
		case *types.Pointer:
			walk(t.Elem(), depth+1)
		case *types.Named:
			for i := 0; i < t.TypeArgs().Len(); i++ {
				walk(t.TypeArgs().At(i), depth+1)
			}
		}
	}
	walk(t, 0)
	return found
}

// reflectKind names the reflect.Kind of a basic type.
func reflectKind(t types.Type) string {
	b, _ := t.Underlying().(*types.Basic)
	if b == nil {
		return "Invalid"
	}
	switch b.Kind() {
	case types.Bool:
		return "Bool"
	case types.Int:
		return "Int"
	case types.Int8:
		return "Int8"
	case types.Int16:
		return "Int16"
	case types.Int32:
		return "Int32"
	case types.Int64:
		return "Int64"
	case types.Uint:
		return "Uint"
	case types.Uint8:
		return "Uint8"
	case types.Uint16:
		return "Uint16"
	case types.Uint32:
		return "Uint32"
	case types.Uint64:
		return "Uint64"
	case types.Float32:
		return "Float32"
	case types.Float64:
		return "Float64"
	}
	return "Invalid"
}
