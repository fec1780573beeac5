package sim

import (
	"fmt"
	"os"
	"reflect"
	"runtime"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"github.com/gocu-dev/gocu/kernel"
	"github.com/gocu-dev/gocu/meta"
)

var threadType = reflect.TypeFor[*kernel.Thread]()

// Run launches the kernel function fn with its arguments:
//
//	err := sim.Run(sim.Config{Grid: kernel.Dim3{X: 64}, Block: kernel.Dim3{X: 256}}, Gray, rgb, gray, n)
//
// fn must be a function whose first parameter is a *kernel.Thread and that
// returns nothing; args must match its other parameters exactly (an int
// where the kernel takes an int32 is an error, as it would be for a typed
// launcher). Run calls fn through reflection, which costs a few hundred
// nanoseconds per thread; generated launchers, and Launch with a closure,
// call the kernel directly. In checked mode Run uses the instrumented twin
// that gocu gen wrote for fn (found through package meta, where the
// generated file registers it) or that RegisterChecked recorded.
func Run(cfg Config, fn any, args ...any) error {
	k, err := KernelOf(fn, args...)
	if err != nil {
		return err
	}
	return Launch(cfg, k)
}

// KernelOf checks fn and its arguments as Run does and returns the Kernel that
// Run launches, so that it can be launched repeatedly.
func KernelOf(fn any, args ...any) (Kernel, error) {
	fv := reflect.ValueOf(fn)
	usage := func(name, format string, a ...any) (Kernel, error) {
		return Kernel{}, &Error{Kind: KindUsage, Kernel: name, Msg: fmt.Sprintf(format, a...)}
	}
	if !fv.IsValid() || fv.Kind() != reflect.Func || fv.IsNil() {
		return usage("", "the kernel must be a non-nil function, not %T", fn)
	}
	name := funcName(fv)
	ft := fv.Type()
	if ft.NumIn() == 0 || ft.In(0) != threadType {
		return usage(name, "the first parameter of a kernel must be a *kernel.Thread; %s is %s", name, ft)
	}
	if ft.NumOut() != 0 {
		return usage(name, "a kernel returns nothing; %s is %s", name, ft)
	}
	if ft.IsVariadic() {
		return usage(name, "a kernel cannot be variadic; %s is %s", name, ft)
	}
	if want := ft.NumIn() - 1; len(args) != want {
		return usage(name, "%s takes %d arguments after the *kernel.Thread, got %d", name, want, len(args))
	}
	in := make([]reflect.Value, len(args))
	for i, a := range args {
		pt := ft.In(i + 1)
		if a == nil {
			switch pt.Kind() {
			case reflect.Slice, reflect.Pointer, reflect.Map, reflect.Interface, reflect.Func, reflect.Chan:
				in[i] = reflect.Zero(pt)
				continue
			}
			return usage(name, "argument %d of %s is nil, but the parameter is %s", i+1, name, pt)
		}
		av := reflect.ValueOf(a)
		if !av.Type().AssignableTo(pt) {
			hint := ""
			if av.Type().ConvertibleTo(pt) {
				hint = fmt.Sprintf(": convert it, as in %s(x)", pt)
			}
			return usage(name, "argument %d of %s is %s, but the parameter is %s%s", i+1, name, av.Type(), pt, hint)
		}
		in[i] = av
	}
	k := Kernel{Name: name, Func: reflectCall(fv, in), Args: args}
	_, km, registered := meta.Lookup(fn)
	if !registered {
		km, registered = findInstance(fv)
	}
	if registered {
		k.Name = km.Name // Axpy[float32] rather than the runtime's Axpy[...]
	}
	if tw, ok := twins.Load(fv.Pointer()); ok {
		k.Checked = reflectCall(tw.(reflect.Value), in)
	} else if registered && km.Checked != nil {
		if cv := reflect.ValueOf(km.Checked); sameLayout(cv.Type(), ft, 0) {
			k.Checked = reflectCall(cv, reinterpret(in, cv.Type()))
			if km.Prints {
				// fmt.Printf goes straight to standard output; the twin
				// prints through kernel.Printf, in block and thread order.
				k.Func = k.Checked
			}
		}
	}
	return k, nil
}

// reflectCall returns a function that calls fv with a thread and the
// bound arguments.
func reflectCall(fv reflect.Value, args []reflect.Value) func(*kernel.Thread) {
	return func(t *kernel.Thread) {
		in := make([]reflect.Value, len(args)+1)
		in[0] = reflect.ValueOf(t)
		copy(in[1:], args)
		fv.Call(in)
	}
}

// twins maps a kernel function's code pointer to its instrumented twin.
var twins sync.Map

// RegisterChecked records checked as the instrumented twin of the kernel
// function fn, for Run and KernelOf in checked mode; both must have the same
// type. Kernels translated by gocu gen need no registration: their
// generated file registers the twin with package meta, where Run finds it.
func RegisterChecked(fn, checked any) error {
	fv, cv := reflect.ValueOf(fn), reflect.ValueOf(checked)
	if !fv.IsValid() || fv.Kind() != reflect.Func || fv.IsNil() || !cv.IsValid() || cv.Kind() != reflect.Func || cv.IsNil() {
		return &Error{Kind: KindUsage, Msg: fmt.Sprintf("RegisterChecked needs two non-nil functions, got %T and %T", fn, checked)}
	}
	if fv.Type() != cv.Type() {
		return &Error{Kind: KindUsage, Kernel: funcName(fv), Msg: fmt.Sprintf("the checked twin of %s has type %s, not %s", funcName(fv), cv.Type(), fv.Type())}
	}
	twins.Store(fv.Pointer(), cv)
	return nil
}

// funcName returns a function's name without its package path, such as
// "TiledMatMul".
func funcName(fv reflect.Value) string {
	f := runtime.FuncForPC(fv.Pointer())
	if f == nil {
		return "kernel"
	}
	name := f.Name()
	name = name[strings.LastIndex(name, "/")+1:]
	if i := strings.Index(name, "."); i >= 0 {
		name = name[i+1:]
	}
	return name
}

// findInstance finds the registered instance of a generic kernel that fv
// runs when fv is not itself registered: an instance at a named type
// (Lerp[Meters], which runs Lerp[float32]'s code on the same memory) or
// one made in generic code (Lerp[T] inside run[T], a closure of Go's). The
// candidates are the registered kernels whose signature has fv's memory
// layout, narrowed by the generic function's name: from the runtime's name
// of an instance, or from the source line of the closure. It reports false
// unless exactly one candidate is left.
func findInstance(fv reflect.Value) (*meta.Kernel, bool) {
	f := runtime.FuncForPC(fv.Pointer())
	if f == nil {
		return nil, false
	}
	full := f.Name()
	generic := strings.HasSuffix(full, "[...]")
	closure := strings.Contains(full, "[...]") && !generic
	if !generic && !closure {
		return nil, false // a plain function: Lookup knows it or nobody does
	}
	var names map[string]bool // the origin names the candidate may have
	pkg := ""
	if generic {
		base := strings.TrimSuffix(full, "[...]")
		i := strings.LastIndex(base, ".")
		pkg, names = base[:i], map[string]bool{base[i+1:]: true}
	} else if file, line := f.FileLine(f.Entry()); file != "" {
		names = identsBeforeBracket(sourceLine(file, line))
	}
	var found *meta.Kernel
	n := 0
	for _, m := range meta.Modules() {
		if pkg != "" && m.Package != pkg {
			continue
		}
		for i := range m.Kernels {
			km := &m.Kernels[i]
			origin, _, _ := strings.Cut(km.Name, "[")
			if km.Func == nil || names != nil && !names[origin] || !sameLayout(reflect.TypeOf(km.Func), fv.Type(), 0) {
				continue
			}
			found = km
			n++
		}
	}
	return found, n == 1
}

// sourceLine returns line n of the file at path, or "".
func sourceLine(path string, n int) string {
	st, err := os.Stat(path)
	if err != nil || !st.Mode().IsRegular() || st.Size() > 16<<20 {
		return ""
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	lines := strings.SplitN(string(b), "\n", n+1)
	if n < 1 || len(lines) < n {
		return ""
	}
	return lines[n-1]
}

// identsBeforeBracket returns the identifiers of a line of Go that an
// index or instantiation bracket follows: Lerp in "sim.Run(cfg, Lerp[T]".
func identsBeforeBracket(line string) map[string]bool {
	out := map[string]bool{}
	for i := 0; i < len(line); i++ {
		if line[i] != '[' {
			continue
		}
		j := i
		for j > 0 && (line[j-1] == ' ' || line[j-1] == '\t') {
			j--
		}
		k := j
		for k > 0 {
			r, size := utf8.DecodeLastRuneInString(line[:k])
			if r != '_' && !unicode.IsLetter(r) && !unicode.IsDigit(r) {
				break
			}
			k -= size
		}
		if k < j {
			out[line[k:j]] = true
		}
	}
	return out
}

// sameLayout reports whether values of types a and b have the same memory
// layout: the same kinds, with named types (Meters) and their underlying
// types (float32) alike, down to the elements and fields.
func sameLayout(a, b reflect.Type, depth int) bool {
	if a == b {
		return true
	}
	if a.Kind() != b.Kind() || depth > 16 {
		return false
	}
	switch a.Kind() {
	case reflect.Slice, reflect.Pointer:
		return sameLayout(a.Elem(), b.Elem(), depth+1)
	case reflect.Array:
		return a.Len() == b.Len() && sameLayout(a.Elem(), b.Elem(), depth+1)
	case reflect.Struct:
		if a.NumField() != b.NumField() || a.Size() != b.Size() {
			return false
		}
		for i := range a.NumField() {
			fa, fb := a.Field(i), b.Field(i)
			if fa.Offset != fb.Offset || !sameLayout(fa.Type, fb.Type, depth+1) {
				return false
			}
		}
		return true
	case reflect.Func:
		if a.NumIn() != b.NumIn() || a.NumOut() != 0 || b.NumOut() != 0 || a.IsVariadic() != b.IsVariadic() {
			return false
		}
		for i := range a.NumIn() {
			if !sameLayout(a.In(i), b.In(i), depth+1) {
				return false
			}
		}
		return true
	case reflect.Interface, reflect.Map, reflect.Chan, reflect.String, reflect.UnsafePointer:
		return false // not kernel parameters; identical types matched above
	}
	return true // numbers and bools of one kind
}

// reinterpret returns the arguments as the parameters of the function type
// ft (after its *kernel.Thread), whose layouts sameLayout matched: a
// []Meters is read as the []float32 it is in memory.
func reinterpret(in []reflect.Value, ft reflect.Type) []reflect.Value {
	out := make([]reflect.Value, len(in))
	for i, v := range in {
		pt := ft.In(i + 1)
		if v.Type() == pt {
			out[i] = v
			continue
		}
		p := reflect.New(v.Type())
		p.Elem().Set(v)
		out[i] = reflect.NewAt(pt, p.UnsafePointer()).Elem()
	}
	return out
}
