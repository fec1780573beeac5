package gen

import (
	"fmt"
	"go/ast"
	"go/constant"
	"go/types"
	"strings"
)

// Printing from a kernel: kernel.Printf(t, format, args...) and fmt.Printf,
// fmt.Println and fmt.Print become CUDA's printf with the format translated
// from Go's verbs to C's for the types of the arguments (package kernel,
// Printf, documents the differences). The twins print through
// kernel.Printf (twin.go), which the simulator orders by block and thread.

// printFuncs are the fmt functions a kernel may call.
var printFuncs = map[string]bool{"Printf": true, "Println": true, "Print": true}

// fmtCall translates a call into package fmt.
func (fc *fnCtx) fmtCall(c *ast.CallExpr, callee *types.Func) cx {
	name := callee.Name()
	if !printFuncs[name] {
		fc.unsupported(c.Pos(), "fmt."+name, "print with fmt.Printf, fmt.Println or fmt.Print (or kernel.Printf)")
		return prim("0")
	}
	fc.eff.fmtPrint = true
	if name == "Printf" {
		if len(c.Args) == 0 {
			return prim("0")
		}
		return fc.printCall(c, name, c.Args[0], c.Args[1:])
	}
	return fc.printCall(c, name, nil, c.Args)
}

// isPrint reports whether f is one of the print functions kernels may
// call: fmt.Printf, fmt.Println, fmt.Print or kernel.Printf.
func isPrint(f *types.Func) bool {
	if f.Pkg() == nil || f.Signature().Recv() != nil {
		return false
	}
	switch f.Pkg().Path() {
	case "fmt":
		return printFuncs[f.Name()]
	case kernelPath:
		return f.Name() == "Printf"
	}
	return false
}

// printArg is an argument of a print call.
type printArg struct {
	e ast.Expr
	t types.Type
	s *string // the value of a constant string
}

// printCall translates a print call: name is Printf, Println or Print;
// format is the format expression of Printf (nil otherwise) and args the
// arguments after it.
func (fc *fnCtx) printCall(c *ast.CallExpr, name string, format ast.Expr, args []ast.Expr) cx {
	fc.eff.writes = true // output: ordered like a store
	if c.Ellipsis.IsValid() {
		fc.unsupported(c.Pos(), "passing a slice as the arguments of "+name+" (args...)", "pass the values one by one")
		return prim("0")
	}
	var pas []printArg
	for _, a := range args {
		pa := printArg{e: a, t: fc.typeOf(a)}
		if tv := fc.info.Types[a]; tv.Value != nil && tv.Value.Kind() == constant.String {
			s := constant.StringVal(tv.Value)
			pa.s = &s
		}
		pas = append(pas, pa)
	}
	var goFormat string
	switch name {
	case "Printf":
		tv := fc.info.Types[format]
		if tv.Value == nil || tv.Value.Kind() != constant.String {
			fc.unsupported(format.Pos(), "a format that is not a constant string", "write the format as a string literal or constant")
			return prim("0")
		}
		goFormat = constant.StringVal(tv.Value)
	default:
		goFormat = printFormat(name, pas)
	}
	cfmt, cargs, ok := fc.cFormat(c, goFormat, pas)
	if !ok {
		return prim("0")
	}
	return callx("printf", append([]cx{prim(cString(cfmt))}, cargs...)...)
}

// printFormat returns the format that prints like fmt.Println or
// fmt.Print: %v per operand, separated by spaces (Print: only between
// operands neither of which is a string), and a newline for Println.
func printFormat(name string, args []printArg) string {
	var b strings.Builder
	for i, a := range args {
		if i > 0 && (name == "Println" || a.s == nil && args[i-1].s == nil) {
			b.WriteByte(' ')
		}
		b.WriteString("%v")
	}
	if name == "Println" {
		b.WriteByte('\n')
	}
	return b.String()
}

// cFormat translates a Go format and its arguments into a C printf format
// and arguments.
func (fc *fnCtx) cFormat(c *ast.CallExpr, format string, args []printArg) (string, []cx, bool) {
	var out strings.Builder
	var cargs []cx
	next := 0
	bad := func(msg, instead string) (string, []cx, bool) {
		fc.unsupported(c.Pos(), msg, instead)
		return "", nil, false
	}
	for i := 0; i < len(format); i++ {
		ch := format[i]
		if ch != '%' {
			out.WriteByte(ch) // cString escapes what needs it
			continue
		}
		// %[flags][width][.prec]verb
		j := i + 1
		flags := ""
		for j < len(format) && strings.IndexByte("+-# 0", format[j]) >= 0 {
			flags += string(format[j])
			j++
		}
		width := ""
		for j < len(format) && format[j] >= '0' && format[j] <= '9' {
			width += string(format[j])
			j++
		}
		prec := ""
		hasPrec := false
		if j < len(format) && format[j] == '.' {
			hasPrec = true
			j++
			for j < len(format) && format[j] >= '0' && format[j] <= '9' {
				prec += string(format[j])
				j++
			}
		}
		if j >= len(format) {
			return bad(fmt.Sprintf("the format %q, which ends in the middle of a verb", format), "finish the verb, or write %% for a percent sign")
		}
		verb := format[j]
		i = j
		switch verb {
		case '%':
			out.WriteString("%%")
			continue
		case '*', '[':
			return bad("the format "+fmtQuote(format)+" with a * width or an argument index", "write widths and precisions as numbers and the arguments in order")
		}
		spec := flags + width
		if hasPrec {
			spec += "." + prec
		}
		if next >= len(args) {
			return bad(fmt.Sprintf("the format %s with more verbs than arguments", fmtQuote(format)), "give every verb an argument")
		}
		a := args[next]
		next++
		text, xs, ok := fc.cVerb(c, format, verb, flags, spec, hasPrec, a)
		if !ok {
			return "", nil, false
		}
		out.WriteString(text)
		cargs = append(cargs, xs...)
	}
	if next < len(args) {
		return bad(fmt.Sprintf("%d arguments for the %d verbs of the format %s", len(args), next, fmtQuote(format)), "give every argument a verb")
	}
	return out.String(), cargs, true
}

func fmtQuote(s string) string {
	q := fmt.Sprintf("%q", s)
	if len(q) > 60 {
		q = q[:57] + "...\""
	}
	return q
}

// cVerb translates one verb with its argument.
func (fc *fnCtx) cVerb(c *ast.CallExpr, format string, verb byte, flags, spec string, hasPrec bool, a printArg) (string, []cx, bool) {
	bad := func(instead string) (string, []cx, bool) {
		fc.unsupported(a.e.Pos(), fmt.Sprintf("%%%c of %s in a print", verb, types.TypeString(a.t, byName)), instead)
		return "", nil, false
	}
	switch verb {
	case 'b', 'q', 'U', 'T', 'p', 'w':
		return bad("CUDA's printf has no such verb; print numbers with %d, %x, %e, %f or %g")
	}
	if a.s != nil {
		switch verb {
		case 's', 'v':
			if spec == "" {
				return strings.ReplaceAll(*a.s, "%", "%%"), nil, true
			}
			return "%" + spec + "s", []cx{prim(cString(*a.s))}, true
		}
		return bad("print a string with %s or %v")
	}
	b := basicOf(a.t)
	if lowpKind(a.t) != "" {
		fc.unsupported(a.e.Pos(), "printing a value of type "+types.TypeString(a.t, byName), "convert it to float32 first (its Float32 method)")
		return "", nil, false
	}
	if b == nil || b.Info()&(types.IsNumeric|types.IsBoolean) == 0 || b.Info()&types.IsComplex != 0 {
		fc.unsupported(a.e.Pos(), "printing a value of type "+types.TypeString(a.t, byName), "print numbers and bools; print a struct or an array field by field")
		return "", nil, false
	}
	if m := formatMethod(a.t, verb); m != "" {
		fc.unsupported(a.e.Pos(), fmt.Sprintf("%%%c of a %s, whose %s method Go would call,", verb, types.TypeString(a.t, byName), m),
			"C's printf prints the number; convert it to its underlying type to print the number, as in "+types.TypeString(b, nil)+"(v)")
		return "", nil, false
	}
	x := fc.val(a.e)
	cast := func(ct string, x cx) cx { // the argument as the C type printf reads
		if fc.ctype(a.t) == ct {
			return x
		}
		return cast(ct, x)
	}
	switch {
	case b.Info()&types.IsBoolean != 0:
		if verb != 't' && verb != 'v' {
			return bad("print a bool with %t or %v")
		}
		return "%" + spec + "s", []cx{{s: x.at(precCond+1) + " ? \"true\" : \"false\"", prec: precCond}}, true
	case b.Info()&types.IsFloat != 0:
		switch verb {
		case 'e', 'E', 'f', 'g', 'G':
		case 'F':
			verb = 'f'
		case 'v':
			verb = 'g'
		default:
			return bad("print a float with %e, %f, %g or %v")
		}
		return "%" + spec + string(verb), []cx{cast("double", x)}, true
	}
	// Integers.
	signed := isSigned(a.t)
	wide := bits(a.t) == 64
	switch verb {
	case 'd', 'v':
		switch {
		case signed && wide:
			return "%" + spec + "lld", []cx{cast("long long", x)}, true
		case signed:
			return "%" + spec + "d", []cx{cast("int", x)}, true
		case wide:
			return "%" + spec + "llu", []cx{cast("unsigned long long", x)}, true
		default:
			return "%" + spec + "u", []cx{cast("unsigned int", x)}, true
		}
	case 'c':
		return "%" + spec + "c", []cx{cast("int", x)}, true
	case 'x', 'X', 'o', 'O':
		if strings.Contains(flags, "#") || verb == 'O' {
			return bad("C's # flag differs from Go's; write the prefix yourself, as in 0x%x")
		}
		if !signed {
			if wide {
				return "%" + spec + "ll" + string(verb), []cx{cast("unsigned long long", x)}, true
			}
			return "%" + spec + string(verb), []cx{cast("unsigned int", x)}, true
		}
		// Go prints a negative value with a minus sign and its magnitude,
		// C the two's complement: print the sign apart.
		if spec != "" {
			return bad("Go pads a negative value's sign and magnitude together, which C's printf cannot; convert to an unsigned type, as in %x of uint32(v), or drop the width and flags")
		}
		if !fc.pure(a.e) {
			fc.unsupported(a.e.Pos(), fmt.Sprintf("%%%c of a signed expression with calls in a print", verb), "assign the value to a variable first")
			return "", nil, false
		}
		v := fc.sgn(x, a.t)
		ll := cast("long long", v)
		sign := cx{s: ll.at(precRel) + " < 0 ? \"-\" : \"\"", prec: precCond}
		mag := cx{s: ll.at(precRel) + " < 0 ? 0ull - (unsigned long long)" + ll.at(precUnary) + " : (unsigned long long)" + ll.at(precUnary), prec: precCond}
		return "%s%ll" + string(verb), []cx{sign, mag}, true
	}
	return bad("print an integer with %d, %x, %o, %c or %v")
}

// formatMethod returns the method fmt would call to print a value of type
// t with verb (Format, Error or String), or "".
func formatMethod(t types.Type, verb byte) string {
	ms := types.NewMethodSet(types.NewPointer(t)) // value methods too
	has := func(name string) bool {
		sel := ms.Lookup(nil, name)
		if sel == nil {
			return false
		}
		// Only value methods count: fmt gets a copy.
		if _, ptr := sel.Obj().(*types.Func).Signature().Recv().Type().(*types.Pointer); ptr {
			return false
		}
		return true
	}
	if has("Format") {
		return "Format"
	}
	switch verb {
	case 'v', 's', 'x', 'X', 'q':
		if has("Error") {
			return "Error"
		}
		if has("String") {
			return "String"
		}
	}
	return ""
}

// cString returns s as a C string literal: printable ASCII as is, the rest
// as three-digit octal escapes (which, unlike \x, end where they should).
func cString(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for i := 0; i < len(s); i++ {
		ch := s[i]
		switch {
		case ch == '"' || ch == '\\':
			b.WriteByte('\\')
			b.WriteByte(ch)
		case ch == '\n':
			b.WriteString(`\n`)
		case ch == '\t':
			b.WriteString(`\t`)
		case ch == '?':
			b.WriteString(`\?`) // no trigraphs
		case ch >= ' ' && ch < 0x7f:
			b.WriteByte(ch)
		default:
			fmt.Fprintf(&b, `\%03o`, ch)
		}
	}
	b.WriteByte('"')
	return b.String()
}

// twinPrint prints a fmt print call of a twin as kernel.Printf.
func (tc *twinCtx) twinPrint(c *ast.CallExpr, name string) string {
	var args []string
	var pas []printArg
	for _, a := range c.Args {
		args = append(args, tc.expr(a))
	}
	if name == "Printf" {
		return fmt.Sprintf("%s.Printf(%s, %s)", tc.k, tc.thread, strings.Join(args, ", "))
	}
	for _, a := range c.Args {
		pa := printArg{e: a, t: tc.info.TypeOf(a)}
		if tv := tc.info.Types[a]; tv.Value != nil && tv.Value.Kind() == constant.String {
			s := constant.StringVal(tv.Value)
			pa.s = &s
		}
		pas = append(pas, pa)
	}
	all := append([]string{tc.thread, fmt.Sprintf("%q", printFormat(name, pas))}, args...)
	return fmt.Sprintf("%s.Printf(%s)", tc.k, strings.Join(all, ", "))
}
