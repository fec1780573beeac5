package gen

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

// errorCase is a kernel that must be rejected. The source marks the
// reported position with /*ERR*/: the diagnostic is at the character after
// the marker.
type errorCase struct {
	name   string
	decls  string
	params string
	body   string
	msg    string
	file   string // a whole file instead of decls, params and body
}

var errorCases = []errorCase{
	{name: "huge shared", params: "x []float32", body: "s := /*ERR*/kernel.Shared[[1 << 40]float32](t)\ns[0] = x[0]",
		msg: "4398046511104 bytes of kernel.Shared arrays is not supported in a kernel: CUDA gives a block at most 49152 bytes (48 KiB) of static shared memory; use smaller arrays, or kernel.DynamicShared with a launch that asks for more"},
	{name: "shared over 48 KiB", params: "x []float32", body: "a := kernel.Shared[[8192]float32](t)\nb := /*ERR*/kernel.Shared[[4097]float32](t)\na[0], b[0] = x[0], x[1]",
		msg: "49156 bytes of kernel.Shared arrays is not supported in a kernel: CUDA gives a block at most 49152 bytes (48 KiB) of static shared memory; use smaller arrays, or kernel.DynamicShared with a launch that asks for more"},
	{name: "huge array", params: "x []float32", body: "var /*ERR*/a [1 << 31]int32\na[0] = 1\nx[0] = float32(a[0])",
		msg: "an array of 2147483648 elements is not supported in a kernel: CUDA C++ arrays have at most 2147483647 elements (their length is an int); use a slice"},
	{name: "map", params: "x []float32", body: "m := /*ERR*/map[int32]float32{}\n_ = m",
		msg: "a map is not supported in a kernel: use a slice or a fixed-size array indexed by an integer key"},
	{name: "map literal", params: "x []float32", body: "var m map[int]int\n_ = m",
		msg: "", file: ""},
	{name: "interface", params: "x []float32", body: "var /*ERR*/v any\n_ = v",
		msg: "an interface is not supported in a kernel: use concrete types"},
	{name: "closure", params: "x []float32", body: "f := /*ERR*/func() {}\n_ = f",
		msg: "a function literal (closure) is not supported in a kernel: write a named function and call it"},
	{name: "goroutine", decls: "func f() {}", params: "x []float32", body: "/*ERR*/go f()",
		msg: "a go statement is not supported in a kernel: every GPU thread already runs the kernel; use more threads"},
	{name: "defer", decls: "func f() {}", params: "x []float32", body: "/*ERR*/defer f()",
		msg: "defer is not supported in a kernel: call the function at the end explicitly"},
	{name: "select", params: "x []float32", body: "/*ERR*/select {}",
		msg: "select is not supported in a kernel: communicate through shared memory and SyncThreads"},
	{name: "channel", params: "x []float32", body: "var /*ERR*/c chan int\n_ = c",
		msg: "a channel is not supported in a kernel: communicate through shared memory and SyncThreads"},
	{name: "make", params: "x []float32", body: "s := /*ERR*/make([]float32, 4)\n_ = s",
		msg: "make (it allocates memory) is not supported in a kernel: pass buffers in as slice parameters, or use fixed-size arrays and kernel.Shared"},
	{name: "new", params: "x []float32", body: "p := /*ERR*/new(int32)\n_ = p",
		msg: "new (it allocates memory) is not supported in a kernel: pass buffers in as slice parameters, or use fixed-size arrays and kernel.Shared"},
	{name: "append", params: "x []float32", body: "x = /*ERR*/append(x, 1)",
		msg: "append (it allocates memory) is not supported in a kernel: pass buffers in as slice parameters, or use fixed-size arrays and kernel.Shared"},
	{name: "slice literal", params: "x []float32", body: "s := /*ERR*/[]float32{1, 2}\n_ = s",
		msg: "a slice literal (it allocates memory) is not supported in a kernel: use a fixed-size array, such as [4]float32{...}"},
	{name: "string", params: "x []float32", body: "s := /*ERR*/\"gpu\"\n_ = s",
		msg: "a string is not supported in a kernel: pass bytes as a []uint8"},
	{name: "recursion", decls: "func f(n int32) int32 {\n\tif n == 0 {\n\t\treturn 0\n\t}\n\treturn /*ERR*/f(n-1) + 1\n}", params: "x []float32", body: "x[0] = float32(f(3))",
		msg: "recursion (k.f calls itself, directly or through other functions) is not supported in a kernel: rewrite it as a loop; GPU threads have tiny stacks"},
	{name: "pointer parameter", params: "x []float32, /*ERR*/p *int32", body: "_ = x",
		msg: "a pointer parameter is not supported in a kernel: pass a slice (or, to a device function, a pointer to a shared array)"},
	{name: "address of local", params: "x []float32", body: "v := float32(1)\np := /*ERR*/&v\n_ = p",
		msg: "taking an address is not supported in a kernel: pass &s[i] only to the kernel package's atomics; use slices otherwise"},
	{name: "panic", params: "x []float32", body: "if len(x) == 0 {\n\t/*ERR*/panic(\"empty\")\n}",
		msg: "panic is not supported in a kernel: write an error code into an output slice and return"},
	{name: "method value", decls: "type T struct{ a int32 }\n\nfunc (v T) M() int32 { return v.a }", params: "x []float32", body: "v := T{}\nf := /*ERR*/v.M\n_ = f",
		msg: "a method value is not supported in a kernel: call the method directly"},
	{name: "unsupported math", params: "x []float64", body: "x[0] = /*ERR*/math.Ldexp(x[1], 3)",
		msg: "math.Ldexp is not supported in a kernel: use the math functions CUDA provides (Sqrt, Exp, Log, Sin, Pow, FMA, ...)"},
	{name: "other package", file: "package k\n\nimport (\n\t\"unicode/utf8\"\n\n\t\"github.com/gocu-dev/gocu/kernel\"\n)\n\n//gocu:kernel\nfunc K(t *kernel.Thread, x []int) { x[0] = /*ERR*/utf8.RuneLen(65) }\n",
		msg: "calling utf8.RuneLen is not supported in a kernel: kernels can call Go functions with bodies in your module, and the kernel, math and math/bits packages"},
	{name: "package variable", decls: "var scale float32 = 2", params: "x []float32", body: "x[0] = /*ERR*/scale",
		msg: "the package-level variable scale is not supported in a kernel: kernels read package-level arrays initialised with constants (constant tables); pass the value as a parameter, or declare a constant"},
	{name: "table without literal", decls: "var tab [4]float32", params: "x []float32", body: "x[0] = /*ERR*/tab[1]",
		msg: "the package-level table tab without a literal of constants is not supported in a kernel: initialise it where it is declared with a composite literal of constants, such as [3]float32{0.25, 0.5, 0.25}: the GPU's copy in constant memory holds those values; pass values computed at run time as a slice parameter"},
	{name: "table of variables", decls: "var one = float32(1)\n\nvar tab = [2]float32{one, 2}", params: "x []float32", body: "x[0] = /*ERR*/tab[1]",
		msg: "the package-level table tab without a literal of constants is not supported in a kernel: initialise it where it is declared with a composite literal of constants, such as [3]float32{0.25, 0.5, 0.25}: the GPU's copy in constant memory holds those values; pass values computed at run time as a slice parameter"},
	{name: "table written by init", decls: "var tab = [2]float32{1, 2}\n\nfunc init() { tab[1] = 3 }", params: "x []float32", body: "x[0] = /*ERR*/tab[1]",
		msg: "the package-level table tab (written at k.go:12:15) is not supported in a kernel: the GPU's copy in constant memory holds the values of its declaration only; initialise it there and never write it, or pass it as a slice parameter"},
	{name: "table written by a kernel", decls: "var tab = [2]float32{1, 2}", params: "x []float32", body: "x[0] = tab[0]\n/*ERR*/tab[1] = x[1]",
		msg: "writing the package-level table tab is not supported in a kernel: it lives in constant memory, which kernels only read; copy it into a local array (c := tab) and change the copy"},
	{name: "table atomic", decls: "var tab = [2]int32{1, 2}", params: "x []int32", body: "kernel.AtomicAdd(&/*ERR*/tab[0], 1)",
		msg: "an atomic on the package-level table tab is not supported in a kernel: it lives in constant memory, which kernels only read; copy it into a local array (c := tab) and change the copy"},
	{name: "table sliced", decls: "var tab = [2]float32{1, 2}", params: "x []float32", body: "/*ERR*/s := tab[:]\nx[0] = s[0]",
		msg: ""},
	{name: "table of slices", decls: "var tab = []float32{1, 2}", params: "x []float32", body: "x[0] = /*ERR*/tab[0]",
		msg: "the package-level variable tab is not supported in a kernel: kernels read package-level arrays initialised with constants (constant tables); pass the value as a parameter, or declare a constant"},
	{name: "table too big", decls: "var tab = [20000]float32{1}", params: "x []float32", body: "x[0] = /*ERR*/tab[0]",
		msg: "80000 bytes of package-level tables is not supported in a kernel: they live in constant memory, of which a GPU has 65536 bytes (64 KiB); pass larger tables as slice parameters"},
	{name: "kernel with any", file: "package k\n\nimport \"github.com/gocu-dev/gocu/kernel\"\n\n//gocu:kernel\nfunc K[/*ERR*/T any](t *kernel.Thread, x []T) {}\n",
		msg: "the type parameter T any of a kernel is not supported in a kernel: constrain it to number types, such as kernel.Float, kernel.Integer, kernel.Number or interface{ ~int32 | ~float32 }, whose every type gocu gen compiles; or name the instantiations: //gocu:instantiate K[float32]"},
	{name: "too many instances", file: "package k\n\nimport \"github.com/gocu-dev/gocu/kernel\"\n\n//gocu:kernel\nfunc /*ERR*/K[T, U kernel.Number](t *kernel.Thread, x []T, y []U) {}\n",
		msg: "a generic kernel with 144 instantiations (every combination its constraints allow) is not supported in a kernel: name the ones you launch, at most 16, such as //gocu:instantiate K[int8, int8]"},
	{name: "bad instantiate", file: "package k\n\nimport \"github.com/gocu-dev/gocu/kernel\"\n\n//gocu:kernel\n/*ERR*///gocu:instantiate K[string]\nfunc K[T kernel.Float](t *kernel.Thread, x []T) {}\n",
		msg: "//gocu:instantiate: K[string]: string does not satisfy github.com/gocu-dev/gocu/kernel.Float (string missing in ~float32 | ~float64)"},
	{name: "instantiate other name", file: "package k\n\nimport \"github.com/gocu-dev/gocu/kernel\"\n\n//gocu:kernel\n/*ERR*///gocu:instantiate F[float32]\nfunc K[T kernel.Float](t *kernel.Thread, x []T) {}\n",
		msg: "//gocu:instantiate: \"F[float32]\" is not an instantiation of K, such as //gocu:instantiate K[float32] K[float64]"},
	{name: "instantiate plain kernel", file: "package k\n\nimport \"github.com/gocu-dev/gocu/kernel\"\n\n//gocu:kernel\n/*ERR*///gocu:instantiate K[float32]\nfunc K(t *kernel.Thread, x []float32) {}\n",
		msg: "//gocu:instantiate applies to generic kernels, and K has no type parameters"},
	{name: "printf verb", params: "x []float32", body: "fmt.Printf(\"%b\\n\", /*ERR*/x[0])",
		msg: "%b of float32 in a print is not supported in a kernel: CUDA's printf has no such verb; print numbers with %d, %x, %e, %f or %g"},
	{name: "printf quote", params: "x []int32", body: "fmt.Printf(\"%q\\n\", /*ERR*/x[0])",
		msg: "%q of int32 in a print is not supported in a kernel: CUDA's printf has no such verb; print numbers with %d, %x, %e, %f or %g"},
	{name: "printf arguments", params: "x []int32", body: "/*ERR*/fmt.Printf(\"%d %d\\n\", x[0])",
		msg: "the format \"%d %d\\n\" with more verbs than arguments is not supported in a kernel: give every verb an argument"},
	{name: "printf extra", params: "x []int32", body: "/*ERR*/fmt.Printf(\"%d\\n\", x[0], x[1])",
		msg: "2 arguments for the 1 verbs of the format \"%d\\n\" is not supported in a kernel: give every argument a verb"},
	{name: "printf star", params: "x []int32", body: "/*ERR*/fmt.Printf(\"%*d\\n\", 4, x[0])",
		msg: "the format \"%*d\\n\" with a * width or an argument index is not supported in a kernel: write widths and precisions as numbers and the arguments in order"},
	{name: "printf signed hex width", params: "x []int32", body: "fmt.Printf(\"%8x\\n\", /*ERR*/x[0])",
		msg: "%x of int32 in a print is not supported in a kernel: Go pads a negative value's sign and magnitude together, which C's printf cannot; convert to an unsigned type, as in %x of uint32(v), or drop the width and flags"},
	{name: "printf struct", decls: "type P struct{ A int32 }", params: "x []P", body: "fmt.Println(/*ERR*/x[0])",
		msg: "printing a value of type k.P is not supported in a kernel: print numbers and bools; print a struct or an array field by field"},
	{name: "printf stringer", decls: "type Mode int32\n\nfunc (m Mode) String() string { return \"mode\" }", params: "x []Mode", body: "fmt.Printf(\"%v\\n\", /*ERR*/x[0])",
		msg: "%v of a k.Mode, whose String method Go would call, is not supported in a kernel: C's printf prints the number; convert it to its underlying type to print the number, as in int32(v)"},
	{name: "printf half", params: "x []kernel.Half", body: "fmt.Println(/*ERR*/x[0])",
		msg: "printing a value of type kernel.Half is not supported in a kernel: convert it to float32 first (its Float32 method)"},
	{name: "vector table", decls: "var tab = [1]kernel.Float4{{1, 2, 3, 4}}", params: "x []float32", body: "x[0] = /*ERR*/tab[0].X",
		msg: "the package-level table tab of kernel vector types is not supported in a kernel: a table is initialised with constants, and CUDA's vector types are made by functions; use an array of float32 (or of a struct of float32 fields)"},
	{name: "printf format variable", params: "x []int32", body: "f := \"%d\"\nfmt.Printf(f, x[0])",
		msg: ""},
	{name: "sprintf", params: "x []int32", body: "_ = /*ERR*/fmt.Sprint(x[0])",
		msg: ""},
	{name: "pointer receiver on a number", decls: "type T int32\n\nfunc (v *T) Inc() { *v++ }", params: "x []float32", body: "var v T\n/*ERR*/v.Inc()\nx[0] = float32(v)",
		msg: "calling the pointer-receiver method k.T.Inc of a int32 is not supported in a kernel: pointer receivers are supported on struct and array types; use a value receiver and return the new value"},
	{name: "method of generic type", decls: "type V[T any] struct{ a T }\n\nfunc (v V[T]) Get() T { return v.a }", params: "x []float32", body: "var v V[float32]\nx[0] = /*ERR*/v.Get()",
		msg: ""},
	{name: "goto", params: "x []float32", body: "/*ERR*/goto end\nend:\nx[0] = 1",
		msg: "goto is not supported in a kernel: use labelled break and continue"},
	{name: "fallthrough", params: "x []float32, n int32", body: "switch n {\ncase 1:\n\tx[0] = 1\n\t/*ERR*/fallthrough\ncase 2:\n\tx[1] = 2\n}",
		msg: "fallthrough is not supported in a kernel: list the values in one case (case a, b:) or repeat the code"},
	{name: "cap", params: "x []float32", body: "n := /*ERR*/cap(x)\n_ = n",
		msg: "cap is not supported in a kernel: GPU slices carry only their length; use len"},
	{name: "complex", params: "x []float32", body: "c := /*ERR*/complex(x[0], 1)\n_ = c",
		msg: "complex numbers is not supported in a kernel: use pairs of floats (kernel.Float2)"},
	{name: "shared in loop", params: "x []float32", body: "for i := 0; i < 2; i++ {\n\ts := /*ERR*/kernel.Shared[[4]float32](t)\n\t_ = s\n}",
		msg: "kernel.Shared outside the top level of a kernel body is not supported in a kernel: declare shared arrays first in the kernel, outside loops and branches, and pass them to functions"},
	{name: "two effects", decls: "func w(s []float32) float32 {\n\ts[0] = 1\n\treturn 1\n}", params: "x []float32", body: "x[1] = w(x) + /*ERR*/w(x)",
		msg: "calling w and w in one statement when one of them has side effects is not supported in a kernel: CUDA C does not fix the order of the two calls; assign the result of the first to a variable first"},
	{name: "atomic on local", params: "x []int32", body: "var a [4]int32\nkernel.AtomicAdd(/*ERR*/&a[0], 1)\nx[0] = a[0]",
		msg: "an atomic on a local array is not supported in a kernel: local arrays are private to a thread; use a plain update, or a shared array"},
	{name: "vector in struct", decls: "type V struct {\n\tA float32\n\t/*ERR*/B kernel.Float4\n}", params: "v []V", body: "_ = v",
		msg: "a kernel vector type (kernel.Float4) as a struct field is not supported in a kernel: CUDA aligns its vector types to their size and Go does not, so the layouts differ; use separate float32 fields"},
	{name: "misplaced unroll", params: "x []float32", body: "/*ERR*///gocu:unroll\nx[0] = 1",
		msg: "//gocu:unroll must be on the line just before a for statement"},
	{name: "slice of slices", params: "/*ERR*/x [][]float32", body: "_ = x",
		msg: "a slice of slices is not supported in a kernel: use one flat slice and compute the index"},
	{name: "uintptr", params: "x []float32, /*ERR*/p uintptr", body: "_ = x",
		msg: "uintptr and unsafe.Pointer is not supported in a kernel: use integer types and slices"},
	{name: "three-index slice", params: "x []float32", body: "y := /*ERR*/x[0:1:2]\n_ = y",
		msg: "a three-index slice expression is not supported in a kernel: GPU slices carry no capacity; use s[lo:hi]"},
	{name: "println", params: "x []float32", body: "/*ERR*/println(x[0])",
		msg: "println is not supported in a kernel: use fmt.Printf, fmt.Println or kernel.Printf, which print on the GPU and, ordered by block and thread, on the simulator"},
	{name: "nil", params: "x []float32", body: "var y []float32 = /*ERR*/nil\n_ = y",
		msg: "nil is not supported in a kernel: use an empty slice parameter or a length of zero"},
	{name: "assign shared", params: "x []float32", body: "s := kernel.Shared[[4]float32](t)\n/*ERR*/s = kernel.Shared[[4]float32](t)\n_ = s",
		msg: ""},
	{name: "anonymous struct", params: "x []float32", body: "/*ERR*/v := struct{ a int32 }{1}\n_ = v",
		msg: ""},
	{name: "kernel results", file: "package k\n\nimport \"github.com/gocu-dev/gocu/kernel\"\n\n//gocu:kernel\nfunc K(t *kernel.Thread) /*ERR*/int32 { return 0 }\n",
		msg: "a kernel with results is not supported in a kernel: write results into a slice parameter"},
	{name: "kernel without thread", file: "package k\n\n//gocu:kernel\nfunc /*ERR*/K(x []float32) {}\n",
		msg: "kernel K must take a *kernel.Thread as its first parameter"},
	{name: "unknown directive", file: "package k\n\nimport \"github.com/gocu-dev/gocu/kernel\"\n\n//gocu:kernel\n/*ERR*///gocu:fast\nfunc K(t *kernel.Thread) {}\n",
		msg: "unknown directive //gocu:fast before a kernel (known: kernel, noalias, launch_bounds, instantiate)"},
	{name: "bad launch bounds", file: "package k\n\nimport \"github.com/gocu-dev/gocu/kernel\"\n\n//gocu:kernel\n/*ERR*///gocu:launch_bounds 2048\nfunc K(t *kernel.Thread) {}\n",
		msg: "//gocu:launch_bounds: \"2048\" is not a thread count from 1 to 1024"},
	{name: "method kernel", file: "package k\n\nimport \"github.com/gocu-dev/gocu/kernel\"\n\ntype T struct{}\n\n//gocu:kernel\nfunc (T) /*ERR*/K(t *kernel.Thread) {}\n",
		msg: "a method as a kernel is not supported in a kernel: make the kernel a plain function"},
	{name: "directive on device function", file: "package k\n\nimport \"github.com/gocu-dev/gocu/kernel\"\n\n/*ERR*///gocu:noalias\nfunc f() {}\n\n//gocu:kernel\nfunc K(t *kernel.Thread) { f() }\n",
		msg: "//gocu:noalias applies to kernels only, and f is not marked //gocu:kernel"},
	{name: "thread as value", params: "x []float32", body: "u := /*ERR*/t\n_ = u",
		msg: "using the *kernel.Thread as a value is not supported in a kernel: pass it to a function, or read its fields and methods"},
	{name: "struct with slice parameter", decls: "type P struct {\n\tX []float32\n\tN int32\n}", params: "/*ERR*/p P", body: "p.X[0] = 1",
		msg: "a struct or array holding a slice as a kernel parameter (k.P) is not supported in a kernel: pass each slice as a parameter of its own"},
	{name: "array of slices parameter", params: "/*ERR*/p [2][]float32", body: "p[0][0] = 1",
		msg: "a struct or array holding a slice as a kernel parameter ([2][]float32) is not supported in a kernel: pass each slice as a parameter of its own"},
	{name: "variadic call", decls: "func sum(xs ...float32) float32 {\n\treturn xs[0]\n}", params: "x []float32", body: "x[0] = /*ERR*/sum(x[1], x[2])",
		msg: "calling the variadic function k.sum is not supported in a kernel: pass a fixed-size array or the values as separate parameters"},
	{name: "variadic call with slice", decls: "func sum(xs ...float32) float32 {\n\treturn xs[0]\n}", params: "x []float32", body: "x[0] = /*ERR*/sum(x...)",
		msg: "calling the variadic function k.sum is not supported in a kernel: pass a fixed-size array or the values as separate parameters"},
	{name: "make channel", params: "x []float32", body: "c := /*ERR*/make(chan int)\n_ = c",
		msg: "a channel is not supported in a kernel: communicate through shared memory and SyncThreads"},
	{name: "kernel call", file: "package k\n\nimport \"github.com/gocu-dev/gocu/kernel\"\n\n//gocu:kernel\nfunc A(t *kernel.Thread) {}\n\n//gocu:kernel\nfunc B(t *kernel.Thread) { /*ERR*/A(t) }\n",
		msg: "calling a kernel from a kernel is not supported in a kernel: move the shared code into a function both call"},
}

// TestUnsupported checks that each construct outside the subset is
// rejected with its position and a suggestion, and that nothing crashes.
func TestUnsupported(t *testing.T) {
	for _, c := range errorCases {
		t.Run(c.name, func(t *testing.T) {
			src := c.file
			if src == "" {
				src = kernelSrc(c.decls, c.params, c.body)
			}
			p, err := translate(t, strings.Replace(src, "/*ERR*/", "", 1))
			if err == nil {
				t.Fatalf("translated without error:\n%s", cbody(p))
			}
			var e *Error
			if !errors.As(err, &e) {
				// A type error of the test source itself.
				t.Fatalf("not a translation error: %v", err)
			}
			if c.msg == "" {
				return // only checks that it is rejected
			}
			i := strings.Index(src, "/*ERR*/")
			if i < 0 {
				t.Fatal("no /*ERR*/ marker")
			}
			line := strings.Count(src[:i], "\n") + 1
			col := i - strings.LastIndex(src[:i], "\n")
			want := fmt.Sprintf("k.go:%d:%d: %s", line, col, c.msg)
			for _, d := range e.Diagnostics {
				if d.String() == want {
					return
				}
			}
			t.Errorf("diagnostics\n%v\ndo not include\n%s", err, want)
		})
	}
}

// TestAllProblemsAtOnce checks that one run reports the problems of every
// stage of the translation, sorted by position: directives, signatures,
// type errors, constructs outside the subset, struct layouts, tables and
// launcher names.
func TestAllProblemsAtOnce(t *testing.T) {
	needGo(t)
	_, err := Generate(Config{}, "./testdata/many")
	var e *Error
	if !errors.As(err, &e) {
		t.Fatalf("Generate: %v, want an *Error", err)
	}
	want := []string{
		"testdata/many/many.go:12:2: a kernel vector type (kernel.Float4) as a struct field is not supported",
		"testdata/many/many.go:16:5: LaunchFoo is declared here",
		"testdata/many/many.go:19:6: kernel NoThread must take a *kernel.Thread",
		"testdata/many/many.go:22:1: unknown directive //gocu:fast",
		"testdata/many/many.go:24:7: a map is not supported",
		"testdata/many/many.go:26:2: //gocu:unroll must be on the line just before a for statement",
		"testdata/many/many.go:32:9: undefined: undefined",
		"testdata/many/many.go:37:10: the type parameter T any of a kernel is not supported",
		"testdata/many/many.go:44:9: the package-level table table (written at testdata/many/many.go:49:15) is not supported",
		"testdata/many/many.go:55:9: recursion (many.rec calls itself",
	}
	if len(e.Diagnostics) != len(want) {
		t.Errorf("%d diagnostics, want %d:\n%v", len(e.Diagnostics), len(want), err)
	}
	for i, w := range want {
		if i < len(e.Diagnostics) && !strings.HasPrefix(e.Diagnostics[i].String(), w) {
			t.Errorf("diagnostic %d is\n%s\nwant it to start\n%s", i, e.Diagnostics[i], w)
		}
	}
}

// TestDiagnosticsCap checks that a run reports at most MaxDiagnostics
// problems, the first ones, and counts the rest.
func TestDiagnosticsCap(t *testing.T) {
	var body strings.Builder
	for i := range MaxDiagnostics + 10 {
		fmt.Fprintf(&body, "m%d := map[int32]float32{}\n_ = m%d\n", i, i)
	}
	_, err := translate(t, kernelSrc("", "x []float32", body.String()))
	var e *Error
	if !errors.As(err, &e) {
		t.Fatalf("translate: %v, want an *Error", err)
	}
	if len(e.Diagnostics) != MaxDiagnostics+1 || e.Omitted != 10 {
		t.Fatalf("%d diagnostics, %d omitted; want %d and 10", len(e.Diagnostics), e.Omitted, MaxDiagnostics+1)
	}
	if first := e.Diagnostics[0].String(); !strings.HasPrefix(first, "k.go:14:") {
		t.Errorf("first diagnostic %s, want the first map (k.go:14)", first)
	}
	if last := e.Diagnostics[MaxDiagnostics].String(); last != "gocu gen: 10 more problem(s) not shown; fix these first" {
		t.Errorf("last line %q", last)
	}
}

// TestVariadicCallKeepsOtherProblems: a call of a variadic function is
// reported at the call, without an internal error, beside the kernel's
// other problems.
func TestVariadicCallKeepsOtherProblems(t *testing.T) {
	src := kernelSrc("func sum(xs ...float32) float32 {\n\treturn xs[0]\n}", "x []float32",
		"x[0] = sum(x[1], x[2])\nm := map[int32]float32{}\n_ = m")
	_, err := translate(t, src)
	var e *Error
	if !errors.As(err, &e) {
		t.Fatalf("translate: %v, want an *Error", err)
	}
	msg := err.Error()
	for _, want := range []string{"k.go:10:6: a variadic function", "k.go:16:8: calling the variadic function k.sum", "k.go:17:6: a map is not supported"} {
		if !strings.Contains(msg, want) {
			t.Errorf("diagnostics lack %q:\n%s", want, msg)
		}
	}
	if strings.Contains(msg, "internal error") {
		t.Errorf("an internal error:\n%s", msg)
	}
}
