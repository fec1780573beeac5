package sim

import (
	"fmt"
	"reflect"
	"runtime"
	"strings"
	"sync"

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
	if registered {
		k.Name = km.Name // Axpy[float32] rather than the runtime's Axpy[...]
	}
	if tw, ok := twins.Load(fv.Pointer()); ok {
		k.Checked = reflectCall(tw.(reflect.Value), in)
	} else if registered && km.Checked != nil {
		if cv := reflect.ValueOf(km.Checked); cv.Type() == ft {
			k.Checked = reflectCall(cv, in)
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
