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

// callKernel is the one place the simulator calls kernel code from, so that
// the frames below the kernel are the same for every thread.
//
//go:noinline
func callKernel(f func(*kernel.Thread), t *kernel.Thread) { f(t) }

// kernelReturn is the return address into callKernel: a site ends there,
// since the frames below belong to the simulator and differ between the
// fast path and barrier mode.
var kernelReturn = probeKernelReturn()

func probeKernelReturn() uintptr {
	var pcs site
	callKernel(func(*kernel.Thread) {
		if useFP {
			fpCallers(&pcs)
		} else {
			slowCallers(&pcs)
		}
	}, nil)
	return pcs[0]
}

// trim cuts a site at the simulator's frames.
func trim(pcs *site) {
	for i, pc := range pcs {
		if pc == kernelReturn {
			clear(pcs[i:])
			return
		}
	}
}

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

// frames symbolizes a site. It ends the list with a return address into
// callKernel, an internal frame, because runtime.CallersFrames expands the
// functions inlined at a PC only when another PC follows it.
func frames(pcs []uintptr) *runtime.Frames {
	var buf [len(site{}) + 1]uintptr
	n := copy(buf[:], pcs)
	for i, pc := range buf[:n] {
		if pc == 0 {
			n = i
			break
		}
	}
	if n == 0 {
		return nil
	}
	buf[n] = kernelReturn
	return runtime.CallersFrames(buf[:n+1])
}

// posOf returns the first user frame of a site.
func posOf(pcs []uintptr) Pos {
	frames := frames(pcs)
	if frames == nil {
		return Pos{}
	}
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

// userFrames returns the user frames of a site, innermost first.
func userFrames(pcs site) []Pos {
	var out []Pos
	frames := frames(pcs[:])
	if frames == nil {
		return out
	}
	for {
		f, more := frames.Next()
		if !internal(f) {
			out = append(out, Pos{Func: f.Function, File: f.File, Line: f.Line})
		}
		if !more {
			return out
		}
	}
}

// distinctPos returns the innermost user frames of two sites that differ,
// so that two calls of a device function that synchronises are told apart
// by their call sites.
func distinctPos(a, b site) (Pos, Pos) {
	fa, fb := userFrames(a), userFrames(b)
	for i := 0; i < len(fa) && i < len(fb); i++ {
		if fa[i] != fb[i] {
			return fa[i], fb[i]
		}
	}
	return posOf(a[:]), posOf(b[:])
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
