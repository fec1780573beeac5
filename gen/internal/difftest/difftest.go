// Package difftest generates random differential tests of the Go to CUDA
// translation: typed Go expressions over every integer width, unsigned
// types, floats, shifts, division, conversions, min, max and math
// functions, evaluated in Go, together with a kernel that computes the same
// expressions. A test translates the kernel with gocu gen, runs it (as host
// C++ on the CPU, or on the GPU) and compares each result with Go's bits.
//
// Expressions are evaluated by an interpreter whose every operation is
// Go's own operator applied to run-time values of the right type, so the
// expected values are what compiled Go computes (on amd64, where float to
// integer conversions of out-of-range values are defined by the hardware).
// Results are compared as bits: exactly for integers and for float
// operations IEEE 754 defines exactly, within Tol ulps for transcendental
// functions; any NaN equals any NaN.
package difftest

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
)

// Kind is a Go numeric type.
type Kind int

// The kinds, in the order of the kernel's input parameters.
const (
	I8 Kind = iota
	I16
	I32
	I64
	Int
	U8
	U16
	U32
	U64
	Uint
	F32
	F64
	numKinds
)

var kindNames = [...]string{"int8", "int16", "int32", "int64", "int", "uint8", "uint16", "uint32", "uint64", "uint", "float32", "float64"}

var paramNames = [...]string{"i8", "i16", "i32", "i64", "in", "u8", "u16", "u32", "u64", "un", "f32", "f64"}

func (k Kind) String() string { return kindNames[k] }

func (k Kind) isFloat() bool  { return k == F32 || k == F64 }
func (k Kind) isSigned() bool { return k <= Int }
func (k Kind) bits() int {
	switch k {
	case I8, U8:
		return 8
	case I16, U16:
		return 16
	case I32, U32, F32:
		return 32
	}
	return 64
}

// Value is a Go value of a kind, kept as the bits of its Go representation
// (integers sign- or zero-extended to 64 bits).
type Value struct {
	Kind Kind
	Bits uint64
}

// Inputs are the kernel's input slices, one per kind, in Kind order.
type Inputs [numKinds][]Value

// Case is one differential test.
type Case struct {
	// Source is a Go file of package Package with one kernel, Kernel:
	//
	//	func Diff(t *kernel.Thread, i8 []int8, i16 []int16, i32 []int32,
	//		i64 []int64, in []int, u8 []uint8, u16 []uint16, u32 []uint32,
	//		u64 []uint64, un []uint, f32 []float32, f64 []float64, out []uint64)
	//
	// Thread 0 writes the bits of expression k into out[k]; launch it
	// with one block of one thread.
	Source  string
	Package string
	Kernel  string
	Inputs  Inputs
	Exprs   []string // Go text of each expression
	Kinds   []Kind   // kind of each result
	Want    []uint64 // Go's result bits
	Tol     []int    // allowed difference in ulps (0: exact)
	// AbsTol is an allowed absolute difference (0: none). Go's float64
	// transcendental functions lose accuracy where the result is small
	// compared with the argument (Sin near a multiple of pi, Log2 near 1),
	// so there the bound scales with the argument instead of the result.
	AbsTol []float64
}

// Args returns the kernel's arguments as Go slices (in parameter order,
// after the thread), with out poisoned.
func (c *Case) Args() []any {
	var args []any
	for k := Kind(0); k < numKinds; k++ {
		args = append(args, goSlice(k, c.Inputs[k]))
	}
	out := make([]uint64, len(c.Want))
	for i := range out {
		out[i] = 0xdeadbeefdeadbeef
	}
	return append(args, out)
}

func goSlice(k Kind, vs []Value) any {
	switch k {
	case I8:
		return conv(vs, func(v Value) int8 { return int8(v.Bits) })
	case I16:
		return conv(vs, func(v Value) int16 { return int16(v.Bits) })
	case I32:
		return conv(vs, func(v Value) int32 { return int32(v.Bits) })
	case I64:
		return conv(vs, func(v Value) int64 { return int64(v.Bits) })
	case Int:
		return conv(vs, func(v Value) int { return int(v.Bits) })
	case U8:
		return conv(vs, func(v Value) uint8 { return uint8(v.Bits) })
	case U16:
		return conv(vs, func(v Value) uint16 { return uint16(v.Bits) })
	case U32:
		return conv(vs, func(v Value) uint32 { return uint32(v.Bits) })
	case U64:
		return conv(vs, func(v Value) uint64 { return v.Bits })
	case Uint:
		return conv(vs, func(v Value) uint { return uint(v.Bits) })
	case F32:
		return conv(vs, func(v Value) float32 { return math.Float32frombits(uint32(v.Bits)) })
	}
	return conv(vs, func(v Value) float64 { return math.Float64frombits(v.Bits) })
}

func conv[T any](vs []Value, f func(Value) T) []T {
	out := make([]T, len(vs))
	for i, v := range vs {
		out[i] = f(v)
	}
	return out
}

// Check compares results with the expected bits and returns a message for
// each mismatch.
func (c *Case) Check(got []uint64) []string {
	var bad []string
	for i, w := range c.Want {
		if i >= len(got) {
			bad = append(bad, fmt.Sprintf("expression %d missing", i))
			continue
		}
		if !equalBits(c.Kinds[i], got[i], w, c.Tol[i], c.AbsTol[i]) {
			bad = append(bad, fmt.Sprintf("%s (%s): got %s, want %s", c.Exprs[i], c.Kinds[i], show(c.Kinds[i], got[i]), show(c.Kinds[i], w)))
		}
	}
	return bad
}

func show(k Kind, b uint64) string {
	switch k {
	case F32:
		return fmt.Sprintf("%v (%#08x)", math.Float32frombits(uint32(b)), uint32(b))
	case F64:
		return fmt.Sprintf("%v (%#016x)", math.Float64frombits(b), b)
	}
	if k.isSigned() {
		return strconv.FormatInt(int64(b), 10)
	}
	return strconv.FormatUint(b, 10)
}

func equalBits(k Kind, got, want uint64, tol int, abs float64) bool {
	switch k {
	case F32:
		g, w := math.Float32frombits(uint32(got)), math.Float32frombits(uint32(want))
		if g != g || w != w {
			return g != g && w != w
		}
		if uint32(got) == uint32(want) {
			return true
		}
		return tol > 0 && ulps32(g, w) <= tol
	case F64:
		g, w := math.Float64frombits(got), math.Float64frombits(want)
		if g != g || w != w {
			return g != g && w != w
		}
		if got == want {
			return true
		}
		return tol > 0 && (ulps64(g, w) <= tol || math.Abs(g-w) <= abs)
	}
	return got == want
}

func ulps32(a, b float32) int {
	if math.IsInf(float64(a), 0) || math.IsInf(float64(b), 0) {
		return math.MaxInt32
	}
	ia, ib := int64(math.Float32bits(a)), int64(math.Float32bits(b))
	if ia < 0 {
		ia = math.MinInt32 - ia
	}
	if ib < 0 {
		ib = math.MinInt32 - ib
	}
	d := ia - ib
	if d < 0 {
		d = -d
	}
	return int(min(d, math.MaxInt32))
}

func ulps64(a, b float64) int {
	if math.IsInf(a, 0) || math.IsInf(b, 0) {
		return math.MaxInt32
	}
	ia, ib := int64(math.Float64bits(a)), int64(math.Float64bits(b))
	if ia < 0 {
		ia = math.MinInt64 - ia
	}
	if ib < 0 {
		ib = math.MinInt64 - ib
	}
	d := ia - ib
	if d < 0 {
		d = -d
	}
	if d < 0 || d > math.MaxInt32 {
		return math.MaxInt32
	}
	return int(d)
}

// Config sizes a case.
type Config struct {
	Exprs   int  // number of expressions (default 200)
	Depth   int  // maximum depth of an expression (default 4)
	Inputs  int  // values per input slice (default 16)
	NoMath  bool // leave out transcendental math functions
	Package string
}

// Generate returns a random case.
func Generate(r *rand.Rand, cfg Config) *Case {
	if cfg.Exprs == 0 {
		cfg.Exprs = 200
	}
	if cfg.Depth == 0 {
		cfg.Depth = 4
	}
	if cfg.Inputs == 0 {
		cfg.Inputs = 16
	}
	if cfg.Package == "" {
		cfg.Package = "diff"
	}
	g := &generator{r: r, cfg: cfg}
	c := &Case{Package: cfg.Package, Kernel: "Diff"}
	for k := Kind(0); k < numKinds; k++ {
		c.Inputs[k] = g.inputs(k, cfg.Inputs)
	}
	g.in = &c.Inputs
	var body strings.Builder
	for len(c.Exprs) < cfg.Exprs {
		k := Kind(r.IntN(int(numKinds)))
		e, ok := g.root(k)
		if !ok || e.konst {
			// A constant root would make uint64(-1) a compile error.
			continue
		}
		idx := len(c.Exprs)
		c.Exprs = append(c.Exprs, e.src)
		c.Kinds = append(c.Kinds, k)
		c.Want = append(c.Want, e.val.Bits)
		c.Tol = append(c.Tol, e.tol)
		c.AbsTol = append(c.AbsTol, e.abs)
		switch k {
		case F32:
			fmt.Fprintf(&body, "\tout[%d] = uint64(math.Float32bits(%s))\n", idx, e.src)
		case F64:
			fmt.Fprintf(&body, "\tout[%d] = math.Float64bits(%s)\n", idx, e.src)
		default:
			fmt.Fprintf(&body, "\tout[%d] = uint64(%s)\n", idx, e.src)
		}
	}
	var src strings.Builder
	fmt.Fprintf(&src, "// Code generated by difftest. DO NOT EDIT.\n\npackage %s\n\n", cfg.Package)
	src.WriteString("import (\n\t\"math\"\n\n\t\"github.com/gocu-dev/gocu/kernel\"\n)\n\n")
	src.WriteString("var _ = math.Pi\n\n")
	src.WriteString("// Diff computes the differential test's expressions on thread 0.\n//\n//gocu:kernel\n")
	src.WriteString("func Diff(t *kernel.Thread, i8 []int8, i16 []int16, i32 []int32, i64 []int64, in []int, u8 []uint8, u16 []uint16, u32 []uint32, u64 []uint64, un []uint, f32 []float32, f64 []float64, out []uint64) {\n")
	src.WriteString("\tif t.Index() != 0 {\n\t\treturn\n\t}\n")
	src.WriteString(body.String())
	src.WriteString("}\n")
	c.Source = src.String()
	return c
}
