package frame

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/gocu-dev/gocu/array"
)

// Expr is a column expression: Col("x").Mul(Col("y")).Add(1). It is
// evaluated against a frame by With and Filter, through array's lazy
// elementwise operations, so a whole expression runs as one fused
// program per column it produces.
type Expr struct {
	op   string
	name string // column, for op "col"
	lit  any    // value, for op "lit"
	args []*Expr
	dt   array.DType // for "astype"
}

// Col refers to the column named name.
func Col(name string) *Expr { return &Expr{op: "col", name: name} }

// Lit is a constant: a Go number, bool, string or time.Time.
func Lit(v any) *Expr { return &Expr{op: "lit", lit: v} }

func operand(v any) *Expr {
	if e, ok := v.(*Expr); ok {
		return e
	}
	return Lit(v)
}

func (e *Expr) bin(op string, v any) *Expr { return &Expr{op: op, args: []*Expr{e, operand(v)}} }
func (e *Expr) un(op string) *Expr         { return &Expr{op: op, args: []*Expr{e}} }

// Add returns e + v (v an *Expr or a constant); so do the other binary
// operations. Nulls propagate: the result is null where an operand is.
func (e *Expr) Add(v any) *Expr { return e.bin("Add", v) }

// Sub returns e - v.
func (e *Expr) Sub(v any) *Expr { return e.bin("Sub", v) }

// Mul returns e * v.
func (e *Expr) Mul(v any) *Expr { return e.bin("Mul", v) }

// Div returns e / v, true division (integers divide in float64).
func (e *Expr) Div(v any) *Expr { return e.bin("Div", v) }

// Mod returns e mod v with the divisor's sign (Python's %).
func (e *Expr) Mod(v any) *Expr { return e.bin("Mod", v) }

// Pow returns e to the power v.
func (e *Expr) Pow(v any) *Expr { return e.bin("Pow", v) }

// Eq returns e == v; strings and categoricals compare with strings.
func (e *Expr) Eq(v any) *Expr { return e.bin("Eq", v) }

// Ne returns e != v.
func (e *Expr) Ne(v any) *Expr { return e.bin("Ne", v) }

// Lt returns e < v.
func (e *Expr) Lt(v any) *Expr { return e.bin("Lt", v) }

// Le returns e <= v.
func (e *Expr) Le(v any) *Expr { return e.bin("Le", v) }

// Gt returns e > v.
func (e *Expr) Gt(v any) *Expr { return e.bin("Gt", v) }

// Ge returns e >= v.
func (e *Expr) Ge(v any) *Expr { return e.bin("Ge", v) }

// And returns e and v in Kleene's logic: false and null is false.
func (e *Expr) And(v any) *Expr { return e.bin("And", v) }

// Or returns e or v in Kleene's logic: true or null is true.
func (e *Expr) Or(v any) *Expr { return e.bin("Or", v) }

// Not returns not e.
func (e *Expr) Not() *Expr { return e.un("Not") }

// Neg returns -e.
func (e *Expr) Neg() *Expr { return e.un("Neg") }

// Abs returns |e|.
func (e *Expr) Abs() *Expr { return e.un("Abs") }

// Sqrt returns the square root of e.
func (e *Expr) Sqrt() *Expr { return e.un("Sqrt") }

// Log returns the natural logarithm of e.
func (e *Expr) Log() *Expr { return e.un("Log") }

// Exp returns e to the power of e.
func (e *Expr) Exp() *Expr { return e.un("Exp") }

// IsNull is true where e is null (or NaN, as pandas' isna), never null.
func (e *Expr) IsNull() *Expr { return e.un("IsNull") }

// NotNull is IsNull's negation.
func (e *Expr) NotNull() *Expr { return e.un("IsNull").un("Not") }

// FillNull replaces nulls (and NaN) with v.
func (e *Expr) FillNull(v any) *Expr { return e.bin("FillNull", v) }

// StrLen is the length of each string in bytes (pandas counts
// characters; the two agree on ASCII), as int64.
func (e *Expr) StrLen() *Expr { return e.un("StrLen") }

// StrContains is true where the string contains sub.
func (e *Expr) StrContains(sub string) *Expr {
	return &Expr{op: "StrContains", args: []*Expr{e}, lit: sub}
}

// StrStartsWith is true where the string starts with prefix.
func (e *Expr) StrStartsWith(prefix string) *Expr {
	return &Expr{op: "StrStartsWith", args: []*Expr{e}, lit: prefix}
}

// StrEndsWith is true where the string ends with suffix.
func (e *Expr) StrEndsWith(suffix string) *Expr {
	return &Expr{op: "StrEndsWith", args: []*Expr{e}, lit: suffix}
}

// StrUpper maps the strings to upper case (a categorical column).
func (e *Expr) StrUpper() *Expr { return e.un("StrUpper") }

// StrLower maps the strings to lower case (a categorical column).
func (e *Expr) StrLower() *Expr { return e.un("StrLower") }

// AsType converts e's values to dt.
func (e *Expr) AsType(dt array.DType) *Expr { return &Expr{op: "astype", args: []*Expr{e}, dt: dt} }

// String prints the expression.
func (e *Expr) String() string {
	switch e.op {
	case "col":
		return fmt.Sprintf("Col(%q)", e.name)
	case "lit":
		return fmt.Sprintf("%#v", e.lit)
	case "astype":
		return fmt.Sprintf("%v.AsType(%v)", e.args[0], e.dt)
	}
	if len(e.args) == 1 {
		if e.lit != nil {
			return fmt.Sprintf("%v.%s(%q)", e.args[0], e.op, e.lit)
		}
		return fmt.Sprintf("%v.%s()", e.args[0], e.op)
	}
	return fmt.Sprintf("%v.%s(%v)", e.args[0], e.op, e.args[1])
}

// value is an evaluated expression: a column, or a constant (lit set).
type value struct {
	s   *Series
	lit any
	con bool
}

func and(a, b *array.Array) *array.Array {
	switch {
	case a == nil:
		return b
	case b == nil:
		return a
	}
	return a.LogicalAnd(b)
}

// eval evaluates e against f.
func (f *Frame) eval(op string, e *Expr) (value, error) {
	switch e.op {
	case "col":
		s, err := f.col(op, e.name)
		if err != nil {
			return value{}, err
		}
		return value{s: s}, nil
	case "lit":
		switch v := e.lit.(type) {
		case time.Time:
			return value{lit: v.UnixNano(), con: true}, nil
		case int, int8, int16, int32, int64, uint8, uint16, uint32, float32, float64, bool, string:
			return value{lit: v, con: true}, nil
		}
		return value{}, errorf(op, ErrType, "constant %v of type %T", e.lit, e.lit)
	}
	args := make([]value, len(e.args))
	for i, a := range e.args {
		v, err := f.eval(op, a)
		if err != nil {
			return value{}, err
		}
		args[i] = v
	}
	if len(args) == 1 {
		return f.unary(op, e, args[0])
	}
	return f.binary(op, e, args[0], args[1])
}

// numeric returns the array of a number or timestamp column.
func numeric(op string, e *Expr, v value) (*array.Array, error) {
	if v.s.kind == String || v.s.kind == Categorical {
		return nil, errorf(op, ErrType, "%v: column %q is a %v column", e, v.s.name, v.s.kind)
	}
	return v.s.data, nil
}

func (f *Frame) constant(op string, v value) (*Series, error) {
	if s, ok := v.lit.(string); ok {
		return NewSeries(f.dev, "", slices.Repeat([]string{s}, f.n))
	}
	a := array.On(f.dev).Full(array.Float64, 0, f.n)
	switch v.lit.(type) {
	case bool:
		a = array.On(f.dev).Full(array.Bool, v.lit, f.n)
	case int, int8, int16, int32, int64, uint8, uint16, uint32:
		a = array.On(f.dev).Full(array.Int64, v.lit, f.n)
	case float32:
		a = array.On(f.dev).Full(array.Float32, v.lit, f.n)
	case float64:
		a = array.On(f.dev).Full(array.Float64, v.lit, f.n)
	}
	return FromArray("", a, nil)
}

func (f *Frame) unary(op string, e *Expr, x value) (value, error) {
	if x.con {
		s, err := f.constant(op, x)
		if err != nil {
			return value{}, err
		}
		x = value{s: s}
	}
	if strings.HasPrefix(e.op, "Str") {
		return f.strUnary(op, e, x)
	}
	out := &Series{kind: Number, n: x.s.n, dev: f.dev, valid: x.s.valid}
	if e.op == "IsNull" {
		isNull := func(a *array.Array) *array.Array {
			if x.s.data != nil && x.s.data.DType().IsFloating() {
				return x.s.data.IsNaN().LogicalOr(a)
			}
			return a
		}
		if x.s.valid == nil {
			out.data = isNull(array.On(f.dev).Full(array.Bool, false, x.s.n))
		} else {
			out.data = isNull(x.s.valid.LogicalNot())
		}
		out.valid = nil
		return value{s: out}, nil
	}
	a, err := numeric(op, e, x)
	if err != nil {
		return value{}, err
	}
	switch e.op {
	case "Not":
		out.data = a.LogicalNot()
	case "Neg":
		out.data = a.Neg()
	case "Abs":
		out.data = a.Abs()
	case "Sqrt":
		out.data = a.Sqrt()
	case "Log":
		out.data = a.Log()
	case "Exp":
		out.data = a.Exp()
	case "astype":
		out.data = a.AsType(e.dt)
	default:
		return value{}, errorf(op, ErrValue, "unknown operation %s", e.op)
	}
	if err := out.data.Err(); err != nil {
		return value{}, wrapErr(op, ErrType, err, "%v", e)
	}
	return value{s: out}, nil
}

// strCodes compares a string or categorical column with a string
// constant through the dictionary: the constant's code, or -1.
func strCode(s *Series, lit string) (*Series, int32, error) {
	c, err := s.sortedCodes()
	if err != nil {
		return nil, 0, err
	}
	i, ok := slices.BinarySearch(c.dict, lit)
	if !ok {
		return c, -1, nil
	}
	return c, int32(i), nil
}

func (f *Frame) binary(op string, e *Expr, x, y value) (value, error) {
	if x.con && y.con {
		s, err := f.constant(op, x)
		if err != nil {
			return value{}, err
		}
		x = value{s: s}
	}
	if x.con { // constant on the left: swap comparisons, broadcast the rest
		switch e.op {
		case "Lt", "Le", "Gt", "Ge", "Eq", "Ne":
			flip := map[string]string{"Lt": "Gt", "Le": "Ge", "Gt": "Lt", "Ge": "Le", "Eq": "Eq", "Ne": "Ne"}
			return f.binary(op, &Expr{op: flip[e.op], args: []*Expr{e.args[1], e.args[0]}}, y, x)
		}
		s, err := f.constant(op, x)
		if err != nil {
			return value{}, err
		}
		x = value{s: s}
	}
	out := &Series{kind: Number, n: x.s.n, dev: f.dev}
	// Strings compare through dictionary codes.
	if x.s.kind == String || x.s.kind == Categorical {
		return f.strBinary(op, e, x, y)
	}
	a, err := numeric(op, e, x)
	if err != nil {
		return value{}, err
	}
	var b any
	var bValid *array.Array
	if y.con {
		if _, ok := y.lit.(string); ok {
			return value{}, errorf(op, ErrType, "%v: a %v column with a string", e, x.s.kind)
		}
		b = y.lit
	} else {
		if b, err = numeric(op, e, y); err != nil {
			return value{}, err
		}
		bValid = y.s.valid
	}
	valid := and(x.s.valid, bValid)
	switch e.op {
	case "Add":
		out.data = a.Add(b)
	case "Sub":
		out.data = a.Sub(b)
	case "Mul":
		out.data = a.Mul(b)
	case "Div":
		out.data = a.Div(b)
	case "Mod":
		out.data = a.Mod(b)
	case "Pow":
		out.data = a.Pow(b)
	case "Eq":
		out.data = a.Eq(b)
	case "Ne":
		out.data = a.Ne(b)
	case "Lt":
		out.data = a.Lt(b)
	case "Le":
		out.data = a.Le(b)
	case "Gt":
		out.data = a.Gt(b)
	case "Ge":
		out.data = a.Ge(b)
	case "And", "Or":
		ba, ok := b.(*array.Array)
		if !ok {
			ba = array.On(f.dev).Full(array.Bool, b, x.s.n)
		}
		out.data, valid = kleene(e.op == "And", a, ba, x.s.valid, bValid)
	case "FillNull":
		fill := a
		if a.DType().IsFloating() {
			fill = array.Where(a.IsNaN(), b, a)
		}
		if x.s.valid != nil {
			fill = array.Where(x.s.valid, fill, b)
		}
		out.data, valid = fill, nil
		if !y.con {
			out.valid = y.s.valid
		}
	default:
		return value{}, errorf(op, ErrValue, "unknown operation %s", e.op)
	}
	if err := out.data.Err(); err != nil {
		return value{}, wrapErr(op, ErrType, err, "%v", e)
	}
	if e.op != "FillNull" {
		out.valid = valid
	}
	if x.s.kind == Timestamp && (e.op == "Add" || e.op == "Sub") && (y.con || y.s.kind != Timestamp) {
		out.kind = Timestamp
	}
	return value{s: out}, nil
}

// kleene is And or Or in three-valued logic.
func kleene(isAnd bool, a, b, va, vb *array.Array) (data, valid *array.Array) {
	a, b = a.AsType(array.Bool), b.AsType(array.Bool)
	if isAnd {
		data = a.LogicalAnd(b)
	} else {
		data = a.LogicalOr(b)
	}
	if va == nil && vb == nil {
		return data, nil
	}
	decided := func(x, v *array.Array) *array.Array { // x is valid and decides the result
		if !isAnd {
			return and(v, x)
		}
		return and(v, x.LogicalNot())
	}
	valid = decided(a, va).LogicalOr(decided(b, vb))
	both := and(va, vb)
	return data, valid.LogicalOr(both)
}

func (f *Frame) strBinary(op string, e *Expr, x, y value) (value, error) {
	out := &Series{kind: Number, n: x.s.n, dev: f.dev}
	var a, b *array.Array
	var err error
	if y.con {
		lit, ok := y.lit.(string)
		if !ok {
			return value{}, errorf(op, ErrType, "%v: a %v column with %T", e, x.s.kind, y.lit)
		}
		c, code, err := strCode(x.s, lit)
		if err != nil {
			return value{}, err
		}
		a = c.data
		switch {
		case code >= 0:
			b = array.On(f.dev).Full(array.Int32, code, x.s.n)
		case e.op == "Eq" || e.op == "Ne":
			b = array.On(f.dev).Full(array.Int32, -1, x.s.n)
		default: // ordering against an absent string: between two codes
			i, _ := slices.BinarySearch(c.dict, lit)
			a = a.Mul(2)
			b = array.On(f.dev).Full(array.Int32, 2*int32(i)-1, x.s.n)
		}
		out.valid = x.s.valid
	} else {
		if y.s.kind != String && y.s.kind != Categorical {
			return value{}, errorf(op, ErrType, "%v: a %v column with a %v column", e, x.s.kind, y.s.kind)
		}
		a, b, err = commonCodes(x.s, y.s)
		if err != nil {
			return value{}, err
		}
		out.valid = and(x.s.valid, y.s.valid)
	}
	switch e.op {
	case "Eq":
		out.data = a.Eq(b)
	case "Ne":
		out.data = a.Ne(b)
	case "Lt":
		out.data = a.Lt(b)
	case "Le":
		out.data = a.Le(b)
	case "Gt":
		out.data = a.Gt(b)
	case "Ge":
		out.data = a.Ge(b)
	default:
		return value{}, errorf(op, ErrType, "%v: not defined for strings", e)
	}
	return value{s: out}, nil
}

// commonCodes encodes two string columns with one sorted dictionary.
func commonCodes(x, y *Series) (*array.Array, *array.Array, error) {
	xs, _, err := x.Strings()
	if err != nil {
		return nil, nil, err
	}
	ys, _, err := y.Strings()
	if err != nil {
		return nil, nil, err
	}
	both, err := NewCategorical(x.dev, "", append(append([]string{}, xs...), ys...), nil)
	if err != nil {
		return nil, nil, err
	}
	return both.data.Slice(array.S(0, x.n)), both.data.Slice(array.S(x.n, x.n+y.n)), nil
}

// With returns the frame with a column name computed by e (replacing a
// column of that name). The column is lazy: it is computed, fused, when
// first read.
func (f *Frame) With(name string, e *Expr) (*Frame, error) {
	const op = "With"
	v, err := f.eval(op, e)
	if err != nil {
		return nil, err
	}
	if v.con {
		s, err := f.constant(op, v)
		if err != nil {
			return nil, err
		}
		v.s = s
	}
	return f.WithColumn(v.s.Rename(name))
}

// Filter returns the rows where the boolean expression cond is true; rows
// where it is null are dropped, as in pandas and Arrow. It reads the
// number of rows kept from the device.
func (f *Frame) Filter(cond *Expr) (*Frame, error) {
	const op = "Filter"
	v, err := f.eval(op, cond)
	if err != nil {
		return nil, err
	}
	if v.con {
		b, ok := v.lit.(bool)
		if !ok {
			return nil, errorf(op, ErrType, "condition %v is not boolean", cond)
		}
		if b {
			return f, nil
		}
		return f.Head(0), nil
	}
	if v.s.data == nil || v.s.data.DType() != array.Bool {
		return nil, errorf(op, ErrType, "condition %v is not boolean (%v)", cond, v.s.DType())
	}
	mask := v.s.data
	if v.s.valid != nil {
		mask = mask.LogicalAnd(v.s.valid)
	}
	idx := mask.FlatNonzero()
	if err := idx.Err(); err != nil {
		return nil, wrapErr(op, ErrValue, err, "%v", cond)
	}
	return f.Take(idx)
}

// strUnary applies a string function to each dictionary entry on the host
// and gathers the results by the codes on the device.
func (f *Frame) strUnary(op string, e *Expr, x value) (value, error) {
	if x.s.kind != String && x.s.kind != Categorical {
		return value{}, errorf(op, ErrType, "%v: column %q is a %v column", e, x.s.name, x.s.kind)
	}
	c, err := x.s.sortedCodes()
	if err != nil {
		return value{}, err
	}
	dict := c.dict
	if len(dict) == 0 {
		dict = []string{""} // every row is null (code 0)
	}
	out := &Series{kind: Number, n: x.s.n, dev: f.dev, valid: x.s.valid}
	arg, _ := e.lit.(string)
	var per *array.Array
	switch e.op {
	case "StrLen":
		per = array.FromSliceOn(f.dev, convert(dict, func(s string) int64 { return int64(len(s)) }))
	case "StrContains":
		per = array.FromSliceOn(f.dev, convert(dict, func(s string) bool { return strings.Contains(s, arg) }))
	case "StrStartsWith":
		per = array.FromSliceOn(f.dev, convert(dict, func(s string) bool { return strings.HasPrefix(s, arg) }))
	case "StrEndsWith":
		per = array.FromSliceOn(f.dev, convert(dict, func(s string) bool { return strings.HasSuffix(s, arg) }))
	case "StrUpper", "StrLower":
		m := strings.ToUpper
		if e.op == "StrLower" {
			m = strings.ToLower
		}
		out.kind, out.dict, out.data = Categorical, convert(dict, m), c.data
		return value{s: out}, nil
	default:
		return value{}, errorf(op, ErrValue, "unknown operation %s", e.op)
	}
	out.data = per.Take(c.data, 0)
	if err := out.data.Err(); err != nil {
		return value{}, wrapErr(op, ErrValue, err, "%v", e)
	}
	return value{s: out}, nil
}
