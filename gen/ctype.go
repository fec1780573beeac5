package gen

import (
	"bytes"
	"fmt"
	"go/ast"
	"go/constant"
	"go/printer"
	"go/token"
	"go/types"
	"math"
	"strconv"
	"strings"
)

// vectorTypes maps the kernel package's vector types to CUDA's.
var vectorTypes = map[string]string{
	"Float2": "float2",
	"Float4": "float4",
	"Int4":   "int4",
	"Uint4":  "uint4",
	"Uchar4": "uchar4",
	// tensor.go
	"Half2":      "gocu_half2",
	"BFloat16x2": "gocu_bf16x2",
}

// cstruct is a Go struct type emitted as a C struct.
type cstruct struct {
	named  *types.Named
	name   string
	fields []string // C member names, one per Go field
	done   bool
}

// tuple is the C struct a function with several results returns.
type tuple struct {
	name  string
	types []string
}

func isKernelNamed(t types.Type, name string) bool {
	n, ok := types.Unalias(t).(*types.Named)
	return ok && n.Obj().Pkg() != nil && n.Obj().Pkg().Path() == kernelPath && n.Obj().Name() == name
}

func vectorType(t types.Type) (string, bool) {
	n, ok := types.Unalias(t).(*types.Named)
	if !ok || n.Obj().Pkg() == nil || n.Obj().Pkg().Path() != kernelPath {
		return "", false
	}
	v, ok := vectorTypes[n.Obj().Name()]
	return v, ok
}

// noteTypes registers the struct types f uses, so that they get C names
// before any local name is chosen.
func (u *unit) noteTypes(f *fn) {
	info := u.info(f)
	ast.Inspect(f.src.decl, func(n ast.Node) bool {
		switch n := n.(type) {
		case ast.Expr:
			if t := info.TypeOf(n); t != nil {
				u.noteType(t, 0)
			}
		}
		return true
	})
}

func (u *unit) noteType(t types.Type, depth int) {
	if depth > 20 {
		return
	}
	switch t := types.Unalias(t).(type) {
	case *types.Named:
		if t.Obj().Pkg() != nil && t.Obj().Pkg().Path() == kernelPath {
			return
		}
		if _, ok := t.Underlying().(*types.Struct); ok {
			if _, seen := u.structs[t]; !seen && t.TypeArgs().Len() == 0 {
				u.structs[t] = &cstruct{named: t}
				u.structOrder = append(u.structOrder, u.structs[t])
			}
		}
		u.noteType(t.Underlying(), depth+1)
	case *types.Struct:
		for i := 0; i < t.NumFields(); i++ {
			u.noteType(t.Field(i).Type(), depth+1)
		}
	case *types.Array:
		u.noteType(t.Elem(), depth+1)
	case *types.Slice:
		u.noteType(t.Elem(), depth+1)
	case *types.Pointer:
		u.noteType(t.Elem(), depth+1)
	case *types.Tuple:
		for i := 0; i < t.Len(); i++ {
			u.noteType(t.At(i).Type(), depth+1)
		}
	}
}

// nameStructs gives every noted struct a global C name and member names.
func (u *unit) nameStructs() {
	for _, s := range u.structOrder {
		name := s.named.Obj().Name()
		if s.named.Obj().Pkg() != u.pkg.Types {
			name = s.named.Obj().Pkg().Name() + "_" + name
		}
		if s.named.Obj().Parent() != nil && s.named.Obj().Parent() != s.named.Obj().Pkg().Scope() {
			name += "_local"
		}
		s.name = u.globals.take(name)
		members := newNames(nil)
		st := s.named.Underlying().(*types.Struct)
		for i := 0; i < st.NumFields(); i++ {
			fname := st.Field(i).Name()
			if fname == "_" {
				fname = fmt.Sprintf("gocu_pad%d", i)
				members.used[fname] = true
				s.fields = append(s.fields, fname)
				continue
			}
			s.fields = append(s.fields, members.take(fname))
		}
	}
}

// ctype returns the C++ type of a Go type. Types outside the subset are
// reported at pos.
func (u *unit) ctype(t types.Type, pos token.Pos) string {
	switch t := types.Unalias(t).(type) {
	case *types.Basic:
		switch t.Kind() {
		case types.Bool, types.UntypedBool:
			return "bool"
		case types.Int8:
			return "signed char"
		case types.Int16:
			return "short"
		case types.Int32, types.UntypedRune:
			return "int"
		case types.Int64, types.Int, types.UntypedInt:
			return "long long"
		case types.Uint8:
			return "unsigned char"
		case types.Uint16:
			return "unsigned short"
		case types.Uint32:
			return "unsigned int"
		case types.Uint64, types.Uint:
			return "unsigned long long"
		case types.Float32:
			return "float"
		case types.Float64, types.UntypedFloat:
			return "double"
		}
	case *types.Named:
		if v, ok := vectorType(t); ok {
			if _, lowp := tensorTypes[t.Obj().Name()]; lowp {
				u.tensor = true
			}
			return v
		}
		if t.Obj().Pkg() != nil && t.Obj().Pkg().Path() == kernelPath && tensorTypes[t.Obj().Name()] == "gocu_u16x8" {
			u.tensor = true
			return "gocu_u16x8"
		}
		if isKernelNamed(t, "Dim3") {
			return "gocu_Dim3"
		}
		if s := u.structs[t]; s != nil {
			return s.name
		}
		switch t.Underlying().(type) {
		case *types.Basic, *types.Slice, *types.Array, *types.Pointer:
			return u.ctype(t.Underlying(), pos)
		}
	case *types.Slice:
		return "gocu_slice<" + u.ctype(t.Elem(), pos) + ">"
	case *types.Array:
		if t.Len() > math.MaxInt32 {
			if !u.hugeArrays[t.String()] { // once, not at every use of the type
				u.hugeArrays[t.String()] = true
				u.unsupported(pos, fmt.Sprintf("an array of %d elements", t.Len()), "CUDA C++ arrays have at most 2147483647 elements (their length is an int); use a slice")
			}
			return "gocu_invalid"
		}
		return fmt.Sprintf("gocu_array<%s, %d>", u.ctype(t.Elem(), pos), t.Len())
	case *types.Pointer:
		switch t.Elem().Underlying().(type) {
		case *types.Array, *types.Struct:
			// A shared array or struct, or a pointer receiver.
			return u.ctype(t.Elem(), pos) + "*"
		}
	}
	u.checkValueType(pos, t)
	return "gocu_invalid"
}

// utype returns the unsigned C type of the width of a signed 32- or 64-bit
// integer type.
func utype(t types.Type) string {
	if b, ok := t.Underlying().(*types.Basic); ok && (b.Kind() == types.Int32 || b.Kind() == types.UntypedRune) {
		return "unsigned int"
	}
	return "unsigned long long"
}

// Integer classes of Go types, by how C must treat them.
type intClass int

const (
	notInt     intClass = iota
	wideSigned          // int32, int64, int: arithmetic wraps through unsigned
	wideUns             // uint32, uint64, uint: C arithmetic is Go's
	narrowS             // int8, int16: C promotes to int
	narrowU             // uint8, uint16: C promotes to int
)

func basicOf(t types.Type) *types.Basic {
	b, _ := t.Underlying().(*types.Basic)
	return b
}

func classOf(t types.Type) intClass {
	b := basicOf(t)
	if b == nil {
		return notInt
	}
	switch b.Kind() {
	case types.Int32, types.Int64, types.Int, types.UntypedInt, types.UntypedRune:
		return wideSigned
	case types.Uint32, types.Uint64, types.Uint:
		return wideUns
	case types.Int8, types.Int16:
		return narrowS
	case types.Uint8, types.Uint16:
		return narrowU
	}
	return notInt
}

func isFloat(t types.Type) bool {
	b := basicOf(t)
	return b != nil && b.Info()&types.IsFloat != 0
}

func isFloat32(t types.Type) bool {
	b := basicOf(t)
	return b != nil && b.Kind() == types.Float32
}

func isSigned(t types.Type) bool {
	c := classOf(t)
	return c == wideSigned || c == narrowS
}

func isBool(t types.Type) bool {
	b := basicOf(t)
	return b != nil && b.Info()&types.IsBoolean != 0
}

// bits returns the width of an integer or float type.
func bits(t types.Type) int {
	b := basicOf(t)
	if b == nil {
		return 0
	}
	switch b.Kind() {
	case types.Int8, types.Uint8:
		return 8
	case types.Int16, types.Uint16:
		return 16
	case types.Int32, types.Uint32, types.Float32, types.UntypedRune:
		return 32
	}
	return 64
}

// constLit returns the C literal of constant v of type t: exact, and of
// exactly type t (float32 constants get an f suffix, never double).
func (u *unit) constLit(v constant.Value, t types.Type, pos token.Pos) cx {
	b := basicOf(t)
	if b == nil {
		u.errorf(pos, "constant of type %s is not supported in a kernel", t)
		return cx{s: "0", prec: precPrimary}
	}
	switch {
	case b.Info()&types.IsBoolean != 0:
		if constant.BoolVal(v) {
			return cx{s: "true", prec: precPrimary}
		}
		return cx{s: "false", prec: precPrimary}
	case b.Info()&types.IsFloat != 0:
		if b.Kind() == types.Float32 {
			f, _ := constant.Float32Val(constant.ToFloat(v))
			return floatLit(float64(f), 32)
		}
		f, _ := constant.Float64Val(constant.ToFloat(v))
		return floatLit(f, 64)
	case b.Info()&types.IsInteger != 0:
		iv := constant.ToInt(v)
		if iv.Kind() != constant.Int {
			u.errorf(pos, "constant %s is not an integer", v)
			return cx{s: "0", prec: precPrimary}
		}
		return intLit(iv, t)
	case b.Info()&types.IsString != 0:
		u.unsupported(pos, "a string", "pass bytes as a []uint8")
	default:
		u.unsupported(pos, "a constant of type "+t.String(), "use integer, float or bool constants")
	}
	return cx{s: "0", prec: precPrimary}
}

func intLit(v constant.Value, t types.Type) cx {
	neg := constant.Sign(v) < 0
	abs := v
	if neg {
		abs = constant.UnaryOp(token.SUB, v, 0)
	}
	s := abs.ExactString()
	if !isSigned(t) && bits(t) >= 32 {
		// Unsigned bit patterns such as masks read better in hex.
		if u, ok := constant.Uint64Val(abs); ok && u >= 1<<16 {
			s = fmt.Sprintf("0x%x", u)
		}
	}
	suffix := ""
	switch bits(t) {
	case 64:
		if isSigned(t) {
			suffix = "LL"
		} else {
			suffix = "ull"
		}
	case 32:
		if !isSigned(t) {
			suffix = "u"
		}
	}
	c := cx{s: s + suffix, prec: precPrimary, cval: v}
	if neg {
		// The most negative value has no literal of its type.
		switch {
		case bits(t) == 64 && s == "9223372036854775808":
			c.s = "(-9223372036854775807LL - 1)"
		case bits(t) == 32 && s == "2147483648":
			c.s = "(-2147483647 - 1)"
		default:
			c.s = "-" + c.s
			c.prec = precUnary
		}
	}
	return c
}

// floatLit prints f with the shortest decimal that reads back as exactly f
// in the given width; a C compiler rounds it to the same value.
func floatLit(f float64, width int) cx {
	s := strconv.FormatFloat(f, 'g', -1, width)
	if !strings.ContainsAny(s, ".eEn") { // no dot, exponent, NaN or Inf
		s += ".0"
	}
	if math.IsInf(f, 0) || math.IsNaN(f) {
		// Constants are never infinite or NaN in Go; kept for safety.
		s = "(0.0/0.0)"
	}
	if width == 32 {
		s += "f"
	}
	c := cx{s: s, prec: precPrimary}
	if f < 0 || (f == 0 && math.Signbit(f)) {
		c.prec = precUnary
	}
	return c
}

// zero returns the zero value of t as a C expression.
func (u *unit) zero(t types.Type, pos token.Pos) cx {
	if b := basicOf(t); b != nil {
		switch {
		case b.Info()&types.IsBoolean != 0:
			return cx{s: "false", prec: precPrimary}
		case b.Info()&types.IsFloat != 0:
			return floatLit(0, bits(t))
		case b.Info()&types.IsInteger != 0:
			return intLit(constant.MakeInt64(0), t)
		}
	}
	if v, ok := vectorType(t); ok {
		return cx{s: v + "{}", prec: precPrimary}
	}
	return cx{s: u.ctype(t, pos) + "{}", prec: precPrimary}
}

// cudaSize returns the size and alignment of t in CUDA (equal to Go's
// except for the vector types, which CUDA aligns to their size).
func (u *unit) cudaSize(t types.Type) (size, align int64) {
	if isKernelNamed(t, "Half8") || isKernelNamed(t, "BFloat16x8") {
		return 16, 16
	}
	if v, ok := vectorType(t); ok {
		s := u.prog.sizes.Sizeof(t)
		switch v {
		case "float2":
			return s, 8
		default:
			return s, s
		}
	}
	if a, ok := t.Underlying().(*types.Array); ok {
		s, al := u.cudaSize(a.Elem())
		return s * a.Len(), al
	}
	return u.prog.sizes.Sizeof(t), u.prog.sizes.Alignof(t)
}

// emitStructs writes the C structs in dependency order, each followed by
// static assertions that its layout is Go's.
func (u *unit) emitStructs(b *strings.Builder) {
	var emit func(s *cstruct)
	emit = func(s *cstruct) {
		if s.done {
			return
		}
		s.done = true
		st := s.named.Underlying().(*types.Struct)
		for i := 0; i < st.NumFields(); i++ {
			u.structDeps(st.Field(i).Type(), emit)
		}
		fmt.Fprintf(b, "struct %s {\n", s.name)
		for i := 0; i < st.NumFields(); i++ {
			f := st.Field(i)
			fmt.Fprintf(b, "  %s %s;\n", u.ctype(f.Type(), f.Pos()), s.fields[i])
		}
		b.WriteString("};\n")
		size := u.prog.sizes.Sizeof(s.named)
		align := u.prog.sizes.Alignof(s.named)
		fmt.Fprintf(b, "static_assert(sizeof(%s) == %d && alignof(%s) == %d, \"gocu: layout of %s differs from Go\");\n",
			s.name, size, s.name, align, s.named.Obj().Name())
		var fields []*types.Var
		for i := 0; i < st.NumFields(); i++ {
			fields = append(fields, st.Field(i))
		}
		offs := u.prog.sizes.Offsetsof(fields)
		if len(fields) > 1 {
			// NVRTC has no offsetof (no <cstddef>, and its front end does
			// not take __builtin_offsetof); the size and alignment checks
			// above hold everywhere, and the field offsets are checked by
			// clang (CI) and the host compilers of the tests.
			b.WriteString("#ifndef __CUDACC_RTC__\n")
			for i := 1; i < len(fields); i++ {
				fmt.Fprintf(b, "static_assert(__builtin_offsetof(%s, %s) == %d, \"gocu: offset of %s.%s differs from Go\");\n",
					s.name, s.fields[i], offs[i], s.named.Obj().Name(), fields[i].Name())
			}
			b.WriteString("#endif\n")
		}
		b.WriteString("\n")
	}
	for _, s := range u.structOrder {
		emit(s)
	}
}

func (u *unit) structDeps(t types.Type, emit func(*cstruct)) {
	switch t := types.Unalias(t).(type) {
	case *types.Named:
		if s := u.structs[t]; s != nil {
			emit(s)
			return
		}
		u.structDeps(t.Underlying(), emit)
	case *types.Array:
		u.structDeps(t.Elem(), emit)
	case *types.Slice:
		u.structDeps(t.Elem(), emit)
	}
}

// checkStructs rejects struct fields whose C alignment differs from Go's.
func (u *unit) checkStructs() {
	for _, s := range u.structOrder {
		st := s.named.Underlying().(*types.Struct)
		for i := 0; i < st.NumFields(); i++ {
			f := st.Field(i)
			if hasVector(f.Type()) {
				u.unsupported(f.Pos(), "a kernel vector type ("+types.TypeString(f.Type(), byName)+") as a struct field",
					"CUDA aligns its vector types to their size and Go does not, so the layouts differ; use separate float32 fields")
			}
		}
	}
}

func hasVector(t types.Type) bool {
	if _, ok := vectorType(t); ok {
		return true
	}
	if isKernelNamed(t, "Half8") || isKernelNamed(t, "BFloat16x8") {
		return true
	}
	if a, ok := t.Underlying().(*types.Array); ok {
		return hasVector(a.Elem())
	}
	return false
}

// tupleFor returns the C struct returned by a function with results rs.
func (u *unit) tupleFor(rs *types.Tuple, pos token.Pos) *tuple {
	var ts []string
	for i := 0; i < rs.Len(); i++ {
		ts = append(ts, u.ctype(rs.At(i).Type(), pos))
	}
	key := strings.Join(ts, ",")
	if t := u.tuples[key]; t != nil {
		return t
	}
	t := &tuple{name: u.globals.takeInternal(fmt.Sprintf("gocu_tuple%d", len(u.tupleOrder))), types: ts}
	u.tuples[key] = t
	u.tupleOrder = append(u.tupleOrder, t)
	return t
}

// nodeText prints a node as gofmt would.
func (u *unit) nodeText(n ast.Node) string {
	var b bytes.Buffer
	printer.Fprint(&b, u.prog.fset, n)
	return b.String()
}

// byName qualifies types by package name, as Go source spells them.
func byName(p *types.Package) string { return p.Name() }
