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
	{name: "generic function", decls: "func g[T kernel.Number](v T) T { return v }", params: "x []float32", body: "x[0] = /*ERR*/g(x[1])",
		msg: "calling the generic function k.g is not supported in a kernel: write a non-generic function per element type"},
	{name: "unsupported math", params: "x []float64", body: "x[0] = /*ERR*/math.Ldexp(x[1], 3)",
		msg: "math.Ldexp is not supported in a kernel: use the math functions CUDA provides (Sqrt, Exp, Log, Sin, Pow, FMA, ...)"},
	{name: "other package", file: "package k\n\nimport (\n\t\"unicode/utf8\"\n\n\t\"github.com/gocu-dev/gocu/kernel\"\n)\n\n//gocu:kernel\nfunc K(t *kernel.Thread, x []int) { x[0] = /*ERR*/utf8.RuneLen(65) }\n",
		msg: "calling utf8.RuneLen is not supported in a kernel: kernels can call Go functions with bodies in your module, and the kernel, math and math/bits packages"},
	{name: "package variable", decls: "var scale float32 = 2", params: "x []float32", body: "x[0] = /*ERR*/scale",
		msg: "the package-level variable scale is not supported in a kernel: pass the value as a parameter, or declare a constant"},
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
		msg: "println is not supported in a kernel: write values into an output slice, or run the kernel on the simulator and print there"},
	{name: "nil", params: "x []float32", body: "var y []float32 = /*ERR*/nil\n_ = y",
		msg: "nil is not supported in a kernel: use an empty slice parameter or a length of zero"},
	{name: "pointer receiver", decls: "type T struct{ a int32 }\n\nfunc (v *T) Inc() { v.a++ }", params: "x []float32", body: "var v T\n/*ERR*/v.Inc()\nx[0] = float32(v.a)",
		msg: "calling the pointer-receiver method k.T.Inc is not supported in a kernel: use a value receiver and return the new value"},
	{name: "assign shared", params: "x []float32", body: "s := kernel.Shared[[4]float32](t)\n/*ERR*/s = kernel.Shared[[4]float32](t)\n_ = s",
		msg: ""},
	{name: "anonymous struct", params: "x []float32", body: "/*ERR*/v := struct{ a int32 }{1}\n_ = v",
		msg: ""},
	{name: "kernel results", file: "package k\n\nimport \"github.com/gocu-dev/gocu/kernel\"\n\n//gocu:kernel\nfunc K(t *kernel.Thread) /*ERR*/int32 { return 0 }\n",
		msg: "a kernel with results is not supported in a kernel: write results into a slice parameter"},
	{name: "kernel without thread", file: "package k\n\n//gocu:kernel\nfunc /*ERR*/K(x []float32) {}\n",
		msg: "kernel K must take a *kernel.Thread as its first parameter"},
	{name: "unknown directive", file: "package k\n\nimport \"github.com/gocu-dev/gocu/kernel\"\n\n//gocu:kernel\n/*ERR*///gocu:fast\nfunc K(t *kernel.Thread) {}\n",
		msg: "unknown directive //gocu:fast before a kernel (known: kernel, noalias, launch_bounds)"},
	{name: "bad launch bounds", file: "package k\n\nimport \"github.com/gocu-dev/gocu/kernel\"\n\n//gocu:kernel\n/*ERR*///gocu:launch_bounds 2048\nfunc K(t *kernel.Thread) {}\n",
		msg: "//gocu:launch_bounds: \"2048\" is not a thread count from 1 to 1024"},
	{name: "method kernel", file: "package k\n\nimport \"github.com/gocu-dev/gocu/kernel\"\n\ntype T struct{}\n\n//gocu:kernel\nfunc (T) /*ERR*/K(t *kernel.Thread) {}\n",
		msg: "a method as a kernel is not supported in a kernel: make the kernel a plain function"},
	{name: "directive on device function", file: "package k\n\nimport \"github.com/gocu-dev/gocu/kernel\"\n\n/*ERR*///gocu:noalias\nfunc f() {}\n\n//gocu:kernel\nfunc K(t *kernel.Thread) { f() }\n",
		msg: "//gocu:noalias applies to kernels only, and f is not marked //gocu:kernel"},
	{name: "thread as value", params: "x []float32", body: "u := /*ERR*/t\n_ = u",
		msg: "using the *kernel.Thread as a value is not supported in a kernel: pass it to a function, or read its fields and methods"},
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
