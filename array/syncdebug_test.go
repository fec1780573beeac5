package array

import (
	"bytes"
	"errors"
	"fmt"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/gocu-dev/gocu"
	"github.com/gocu-dev/gocu/internal/syncdebug"
)

// syncMode sets gocu's sync debug mode for one test and catches what the
// warn mode writes.
func syncMode(t *testing.T, m gocu.SyncDebugMode) *bytes.Buffer {
	t.Helper()
	var b bytes.Buffer
	old, oldOut := gocu.SetSyncDebugMode(m), syncdebug.SetOutput(&b)
	t.Cleanup(func() { gocu.SetSyncDebugMode(old); syncdebug.SetOutput(oldOut) })
	return &b
}

// lineAfter returns "file:line" of the nth line after the call.
func lineAfter(n int) string {
	_, file, line, _ := runtime.Caller(1)
	return file + ":" + strconv.Itoa(line+n)
}

// checkSyncDebug provokes every read to the host on d, a GPU, and checks
// that the warn mode names each at its line here, that the error mode
// refuses each with ErrHiddenSync and leaves the arrays usable, and that
// lazy operations and explicit waits are never reported.
func checkSyncDebug(t *testing.T, d *Maker) {
	out := syncMode(t, gocu.SyncDebugWarn)
	x := d.Ones(Float32, 2, 3).Eval()
	defer x.Close()
	reads := []struct {
		op   string
		read func() error
	}{
		{"Item", func() error { _, err := x.Sum().Item(); return err }},
		{"ToSlice", func() error { _, err := ToSlice[float32](x); return err }},
		{"ToSlice", func() error { _, err := x.Float64s(); return err }},
		{"Item", func() error { _, err := ItemOf[int32](x.Sum().AsType(Int32)); return err }},
		{"String", func() error {
			if s := x.String(); strings.Contains(s, "error") {
				return errors.New(s)
			}
			return nil
		}},
		{"WriteNPY", func() error { return x.WriteNPY(new(bytes.Buffer)) }},
		{"To", func() error { return x.To(gocu.MustOpen("cpu")).Err() }},
		{"ToSlice", func() error { _, err := x.T().Float32s(); return err }}, // not contiguous
		{"ToSlice", func() error { _, err := d.Zeros(Float32, 0).Float32s(); return err }},
	}

	// Lazy operations, an evaluation and explicit waits report nothing.
	y := x.Add(1).Mul(x).Eval()
	defer y.Close()
	if err := d.Sync(); err != nil {
		t.Fatal(err)
	}
	d.TrimCache()
	if out.Len() != 0 {
		t.Fatalf("operations that do not read reported %q", out)
	}

	for i, r := range reads {
		out.Reset()
		syncdebug.SetOutput(out) // forget the call sites seen
		if err := r.read(); err != nil {
			t.Fatalf("read %d (%s): %v", i, r.op, err)
		}
		want := fmt.Sprintf("%s waits for the device (a read to the host) at ", r.op)
		if got := out.String(); !strings.Contains(got, want) || strings.Count(got, "\n") != 1 {
			t.Errorf("read %d (%s) wrote %q; want one line with %q", i, r.op, got, want)
		}
		// The site is the line that called the read, in this file.
		if got := out.String(); !strings.Contains(got, "array/syncdebug_test.go:") {
			t.Errorf("read %d (%s) named %q, not a line of this file", i, r.op, got)
		}
	}

	// A loop reports its call site once.
	out.Reset()
	syncdebug.SetOutput(out)
	at := lineAfter(2)
	for range 50 {
		if _, err := x.Float32s(); err != nil {
			t.Fatal(err)
		}
	}
	if got := out.String(); strings.Count(got, "\n") != 1 || !strings.Contains(got, at+" (") {
		t.Errorf("50 reads at %s wrote %q; want one line naming it", at, got)
	}

	// The error mode refuses each read before it waits; the arrays stay
	// usable.
	out.Reset()
	gocu.SetSyncDebugMode(gocu.SyncDebugError)
	for i, r := range reads {
		err := r.read()
		if r.op == "String" { // the text of the error, in the string
			if err == nil || !strings.Contains(err.Error(), "<error: array: String: refused to wait for the device: hidden synchronisation") {
				t.Errorf("String in the error mode: %v", err)
			}
			continue
		}
		var ae *Error
		var se *gocu.SyncError
		if !errors.Is(err, ErrHiddenSync) || !errors.Is(err, gocu.ErrHiddenSync) || !errors.As(err, &se) ||
			!strings.Contains(err.Error(), "GOCU_SYNC_DEBUG=error") {
			t.Errorf("read %d (%s) in the error mode: %v", i, r.op, err)
			continue
		}
		if !errors.As(err, &ae) || ae.Op != r.op || se.Op != r.op {
			t.Errorf("read %d in the error mode: %v, want operation %s", i, err, r.op)
		}
		if !strings.HasSuffix(se.Site.File, "array/syncdebug_test.go") {
			t.Errorf("read %d (%s): site %v, not in this file", i, r.op, se.Site)
		}
	}
	if out.Len() != 0 {
		t.Errorf("the error mode wrote %q", out)
	}
	gocu.SetSyncDebugMode(gocu.SyncDebugOff)
	if err := x.Err(); err != nil {
		t.Fatalf("a refused read left the array failed: %v", err)
	}
	for i, r := range reads {
		if err := r.read(); err != nil {
			t.Errorf("read %d (%s) after the error mode: %v", i, r.op, err)
		}
	}
	if out.Len() != 0 {
		t.Errorf("the off mode wrote %q", out)
	}
}

// On the CPU nothing waits for a device, and the mode reports nothing.
func TestSyncDebugCPU(t *testing.T) {
	out := syncMode(t, gocu.SyncDebugError)
	x := CPU().Ones(Float32, 3)
	if v, err := x.Sum().Item(); err != nil || v != 3 {
		t.Fatalf("Item on the CPU in the error mode: %v, %v", v, err)
	}
	gocu.SetSyncDebugMode(gocu.SyncDebugWarn)
	if _, err := x.Float32s(); err != nil || out.Len() != 0 {
		t.Fatalf("a read on the CPU in the warn mode: %v, wrote %q", err, out)
	}
}

func TestSyncDebugGPU(t *testing.T) { checkSyncDebug(t, testGPU(t)) }

// With the mode off, reading costs what it did: the mode check is one
// atomic load and allocates nothing (the overhead tests check operations).
func BenchmarkItemSyncDebugOffGPU(b *testing.B) {
	d := testGPU(b)
	x := d.Ones(Float32, 1).Eval()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := x.Item(); err != nil {
			b.Fatal(err)
		}
	}
}
