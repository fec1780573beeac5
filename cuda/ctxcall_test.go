package cuda

import (
	"runtime"
	"strings"
	"testing"
	"unsafe"

	"github.com/gocu-dev/gocu/internal/dynlib"
)

func libcSym(t testing.TB, lib, name string) uintptr {
	if runtime.GOOS != "linux" {
		t.Skip("the stand-in driver functions come from glibc")
	}
	l, err := dynlib.OpenFile(lib)
	if err != nil {
		t.Skipf("no %s: %v", lib, err)
	}
	p, err := l.Sym(name)
	if err != nil {
		t.Skipf("no %s in %s", name, lib)
	}
	return p
}

// frame.ctxCall with libc functions standing in for the driver:
// sigemptyset(&cur) reports context 0 as current (it zeroes the word, and
// the 120 bytes after it, which in a frame are unused parameter slots),
// labs(ctx) fails with ctx as the CUresult, fegetround succeeds, and
// snprintf with twelve arguments shows that every argument arrives, the
// six passed on the stack included.
func TestCtxCall(t *testing.T) {
	zeroCur := libcSym(t, "libc.so.6", "sigemptyset")
	fail := libcSym(t, "libc.so.6", "labs")
	ok := libcSym(t, "libm.so.6", "fegetround")
	printf := libcSym(t, "libc.so.6", "snprintf")
	f, err := newFrame(frameSize)
	if err != nil {
		t.Fatal(err)
	}
	defer f.free()
	text := f.vals[1024:2048]
	format := f.vals[2048:]
	copy(format, "%lu %lu %lu %lu %lu %lu %lu %lu %lu\x00")
	call := func(a *api, ctx uintptr) (Result, bool, string) {
		f.args[0] = uintptr(unsafe.Pointer(&text[0]))
		f.args[1] = uintptr(len(text))
		f.args[2] = uintptr(unsafe.Pointer(&format[0]))
		for i := 3; i < ctxCallArgs; i++ {
			f.args[i] = uintptr(i*1000 + i)
		}
		clear(text)
		runtime.LockOSThread()
		r, bound := f.ctxCall(a, ctx, printf)
		runtime.UnlockOSThread()
		s := string(text)
		return r, bound, s[:max(strings.IndexByte(s, 0), 0)]
	}
	want := "3003 4004 5005 6006 7007 8008 9009 10010 11011"
	for _, c := range []struct {
		name      string
		get, set  uintptr
		ctx       uintptr
		r         Result
		bound     bool
		wantPrint bool
	}{
		{"current: no set", zeroCur, fail, 0, Result(len(want)), true, true},
		{"not current: set", zeroCur, ok, 77, Result(len(want)), true, true},
		{"set fails", zeroCur, fail, 77, 77, false, false},
		{"get fails", fail, ok, 0, 0, true, true}, // labs(&cur) is nonzero: see below
	} {
		a := &api{cuCtxGetCurrent: c.get, cuCtxSetCurrent: c.set}
		if c.name == "get fails" {
			// labs(&cur) returns the address: a failure from the check.
			r, bound, s := call(a, c.ctx)
			if r == 0 || bound || s != "" {
				t.Errorf("%s: r %d, bound %v, printed %q", c.name, r, bound, s)
			}
			continue
		}
		r, bound, s := call(a, c.ctx)
		if r != c.r || bound != c.bound || (s == want) != c.wantPrint {
			t.Errorf("%s: r %d (want %d), bound %v (want %v), printed %q", c.name, r, c.r, bound, c.bound, s)
		}
	}
}

// BenchmarkCtxCall: one driver call with the context check (stand-in
// functions that return at once).
func BenchmarkCtxCall(b *testing.B) {
	ok := libcSym(b, "libm.so.6", "fegetround")
	a := &api{cuCtxGetCurrent: ok, cuCtxSetCurrent: ok}
	f := getFrame()
	defer putFrame(f)
	for b.Loop() {
		runtime.LockOSThread()
		f.ctxCall(a, 0, ok)
		runtime.UnlockOSThread()
	}
}
