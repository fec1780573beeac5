package sim

import (
	"reflect"
	"runtime"
	"strings"

	"github.com/gocu-dev/gocu/kernel"
)

// A site is the call site of a barrier, warp operation or shared
// declaration: the return addresses of the executor method's caller and of
// the two frames above it. Comparing sites is how the simulator tells one
// SyncThreads from another; they are turned into source positions only
// when an error is reported.
type site = [3]uintptr

// useFP says whether fpCallers agrees with runtime.Callers on this build;
// otherwise slowCallers is used.
var useFP = haveFP && probeFP()

// slowCallers is fpCallers through runtime.Callers. Like fpCallers it must
// be called directly from the executor method whose call site it records.
func slowCallers(pcs *site) {
	*pcs = site{}
	// Skip runtime.Callers, slowCallers and the executor method.
	runtime.Callers(3, pcs[:])
}

//go:noinline
func probeInner(fast bool, pcs *site) {
	if fast {
		fpCallers(pcs)
	} else {
		slowCallers(pcs)
	}
}

//go:noinline
func probeOuter(fast bool, pcs *site) { probeInner(fast, pcs) }

// probeFP checks that fpCallers finds the same frames as runtime.Callers.
func probeFP() bool {
	var got [2]site
	for i := range got {
		probeOuter(i == 0, &got[i]) // one call site for both, so both see the same frames
	}
	fast, slow := got[0], got[1]
	if fast[0] == 0 || fast[1] == 0 {
		return false
	}
	for i := range fast {
		f, _ := runtime.CallersFrames(fast[i : i+1]).Next()
		s, _ := runtime.CallersFrames(slow[i : i+1]).Next()
		if f.Function != s.Function || f.Line != s.Line {
			return false
		}
	}
	f, _ := runtime.CallersFrames(fast[:1]).Next()
	return strings.HasSuffix(f.Function, ".probeOuter")
}

var (
	kernelPkg = reflect.TypeFor[kernel.Thread]().PkgPath() + "."
	simPkg    = reflect.TypeFor[Config]().PkgPath() + "."
)

// internal reports whether a frame belongs to the machinery between the
// user's kernel code and the point of interest: the runtime, reflect, iter,
// package kernel and the simulator itself (but not their tests, so that
// kernels written in test files are reported).
func internal(f runtime.Frame) bool {
	fn := f.Function
	switch {
	case strings.HasPrefix(fn, "runtime."), strings.HasPrefix(fn, "reflect."), strings.HasPrefix(fn, "iter."),
		strings.HasPrefix(fn, "internal/"), strings.HasPrefix(fn, "sync."):
		return true
	case strings.HasPrefix(fn, kernelPkg), strings.HasPrefix(fn, simPkg):
		return !strings.HasSuffix(f.File, "_test.go")
	}
	return false
}

// posOf returns the first user frame of a site.
func posOf(pcs []uintptr) Pos {
	n := 0
	for n < len(pcs) && pcs[n] != 0 {
		n++
	}
	if n == 0 {
		return Pos{}
	}
	frames := runtime.CallersFrames(pcs[:n])
	var first Pos
	for {
		f, more := frames.Next()
		p := Pos{Func: f.Function, File: f.File, Line: f.Line}
		if !first.IsValid() {
			first = p
		}
		if !internal(f) {
			return p
		}
		if !more {
			return first
		}
	}
}

// panicPos returns the user frame where a panic started; it must be called
// from the deferred function that recovered it.
func panicPos() Pos {
	var buf [64]uintptr
	n := runtime.Callers(1, buf[:])
	frames := runtime.CallersFrames(buf[:n])
	inPanic := false
	var fallback Pos
	for {
		f, more := frames.Next()
		switch {
		case f.Function == "runtime.gopanic" || f.Function == "runtime.sigpanic" || f.Function == "runtime.panicmem":
			inPanic = true
		case inPanic && !internal(f):
			return Pos{Func: f.Function, File: f.File, Line: f.Line}
		case !fallback.IsValid() && !internal(f):
			fallback = Pos{Func: f.Function, File: f.File, Line: f.Line}
		}
		if !more {
			return fallback
		}
	}
}
