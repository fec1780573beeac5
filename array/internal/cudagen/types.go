package cudagen

import (
	"fmt"
	"strings"

	"github.com/gocu-dev/gocu/array/internal/backend"
)

// ctype is the C type holding a dtype's values.
func ctype(d backend.DType) string {
	switch d {
	case backend.Bool:
		return "bool"
	case backend.Uint8:
		return "unsigned char"
	case backend.Int32:
		return "int"
	case backend.Int64:
		return "long long"
	case backend.Float32:
		return "float"
	case backend.Int8:
		return "signed char"
	case backend.Int16:
		return "short"
	case backend.Uint16:
		return "unsigned short"
	case backend.Uint32:
		return "unsigned int"
	case backend.Uint64:
		return "unsigned long long"
	case backend.Float16, backend.BFloat16:
		return "unsigned short"
	case backend.Float8E4M3, backend.Float8E5M2:
		return "unsigned char"
	}
	return "double"
}

// utype is the unsigned type integer arithmetic wraps in.
func utype(d backend.DType) string {
	switch d {
	case backend.Int64:
		return "unsigned long long"
	}
	return "unsigned int"
}

// vtype is the vector type loading w elements of d at once: gocu's own
// aligned structs (declared in helpersSource), so that nothing depends on
// which CUDA headers NVRTC provides implicitly.
func vtype(d backend.DType, w int) string {
	base := map[backend.DType]string{backend.Bool: "u8", backend.Uint8: "u8", backend.Int32: "i32",
		backend.Int64: "i64", backend.Float32: "f32", backend.Float64: "f64", backend.Int8: "i8",
		backend.Float16: "u16", backend.BFloat16: "u16", backend.Float8E4M3: "u8", backend.Float8E5M2: "u8",
		backend.Int16: "i16", backend.Uint16: "u16", backend.Uint32: "u32", backend.Uint64: "u64"}[d]
	return fmt.Sprintf("gocu_%sx%d", base, w)
}

// vecComps are the member names of the vector structs.
var vecComps = []string{"x", "y", "z", "w", "x4", "x5", "x6", "x7"}

// vectorTypes declares the vector structs; a 16-byte-aligned struct load
// compiles to one 128-bit memory instruction. Types of one and two bytes
// also have 8-element vectors.
var vectorTypes = func() string {
	var b strings.Builder
	for _, v := range []struct {
		name, t string
		size    int
	}{{"u8", "unsigned char", 1}, {"i8", "signed char", 1}, {"u16", "unsigned short", 2}, {"i16", "short", 2}, {"i32", "int", 4}, {"u32", "unsigned int", 4}, {"f32", "float", 4},
		{"i64", "long long", 8}, {"u64", "unsigned long long", 8}, {"f64", "double", 8}} {
		for _, w := range []int{2, 4, 8} {
			if w == 8 && v.size > 2 {
				continue
			}
			comps := vecComps[:w]
			fmt.Fprintf(&b, "struct alignas(%d) gocu_%sx%d { %s %s; };\n", v.size*w, v.name, w, v.t, strings.Join(comps, ", "))
		}
	}
	return b.String()
}()

// scalarParamType is how a scalar travels: double for floats, long long
// for integers and bool.
func scalarParamType(d backend.DType) Type {
	if d.IsFloating() {
		return F64
	}
	return I64
}

// zero and one literals of a dtype.
func lit(d backend.DType, v int) string {
	switch d {
	case backend.Bool:
		if v != 0 {
			return "true"
		}
		return "false"
	case backend.Float32:
		return fmt.Sprintf("%d.0f", v)
	case backend.Float64:
		return fmt.Sprintf("%d.0", v)
	case backend.Int64:
		return fmt.Sprintf("%dll", v)
	}
	return fmt.Sprintf("(%s)%d", ctype(d), v)
}
