package gocu

import (
	"bytes"
	"errors"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/gocu-dev/gocu/cuda"
	"github.com/gocu-dev/gocu/internal/syncdebug"
)

// twiceSrc is the kernel checkSyncDebug launches with In and Out buffers.
const twiceSrc = `
extern "C" __global__ void twice(const float* x, float* y, int n) {
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n) y[i] = 2 * x[i];
}`

// syncMode sets the sync debug mode for one test and catches what the warn
// mode writes.
func syncMode(t *testing.T, m SyncDebugMode) *bytes.Buffer {
	t.Helper()
	var b bytes.Buffer
	old, oldOut := SetSyncDebugMode(m), syncdebug.SetOutput(&b)
	t.Cleanup(func() { SetSyncDebugMode(old); syncdebug.SetOutput(oldOut) })
	return &b
}

// checkSyncDebug provokes every wait of a Buffer on d, a GPU, with k the
// twice kernel: the warn mode names each at its line here, the error mode
// refuses each before it waits and changes nothing, and the operations
// that do not wait, explicit waits included, are never reported. real
// says that d computes (not the fake driver), so values are checked.
func checkSyncDebug(t *testing.T, d *Device, k *Kernel, real bool) {
	out := syncMode(t, SyncDebugWarn)
	const n = 1000
	r := rand.New(rand.NewPCG(1, 2))
	src := make([]float32, n)
	for i := range src {
		src[i] = float32(r.NormFloat64())
	}
	nan := float32(math.NaN())
	poisoned := func() []float32 {
		s := make([]float32, n)
		for i := range s {
			s[i] = nan
		}
		return s
	}
	b, err := Alloc[float32](d, n)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Free()
	if err := b.CopyFromAsync(src, nil); err != nil {
		t.Fatal(err)
	}
	dst := poisoned()
	waits := []struct {
		op, kind string
		run      func() error
	}{
		{"FromSlice", "a copy that waits", func() error {
			c, err := FromSlice(d, src)
			if err == nil {
				c.Free()
			}
			return err
		}},
		{"CopyFrom", "a copy that waits", func() error { return b.CopyFrom(src) }},
		{"CopyTo", "a copy that waits", func() error { return b.CopyTo(dst) }},
		{"ToSlice", "a copy that waits", func() error { _, err := b.ToSlice(); return err }},
		{"CopyToAsync", "a copy into pageable memory", func() error { return b.CopyToAsync(dst, nil) }},
		{"Launch", "a launch with host buffers", func() error { return k.Launch(Grid1D(n, 128), In(src), Out(dst), int32(n)) }},
	}

	// What does not wait, and explicit waits, report nothing.
	if err := b.Zero(); err != nil {
		t.Fatal(err)
	}
	if err := b.CopyFromAsync(src, d.Stream()); err != nil {
		t.Fatal(err)
	}
	if err := k.Launch(Grid1D(n, 128), b, b, int32(n)); err != nil {
		t.Fatal(err)
	}
	if err := d.Stream().Synchronize(); err != nil {
		t.Fatal(err)
	}
	if err := d.Synchronize(); err != nil {
		t.Fatal(err)
	}
	if err := d.TrimCache(); err != nil {
		t.Fatal(err)
	}
	if out.Len() != 0 {
		t.Fatalf("operations that do not wait reported %q", out)
	}
	if err := b.CopyFromAsync(src, nil); err != nil {
		t.Fatal(err)
	}

	for _, w := range waits {
		out.Reset()
		syncdebug.SetOutput(out) // forget the call sites seen
		if err := w.run(); err != nil {
			t.Fatalf("%s: %v", w.op, err)
		}
		want := w.op + " waits for the device (" + w.kind + ") at "
		if got := out.String(); !strings.Contains(got, want) || strings.Count(got, "\n") != 1 ||
			!strings.Contains(got, "/syncdebug_internal_test.go:") {
			t.Errorf("%s wrote %q; want one line with %q, naming a line of this file", w.op, got, want)
		}
	}

	// The error mode: each fails before it waits and leaves the host
	// memory as it was.
	out.Reset()
	SetSyncDebugMode(SyncDebugError)
	for _, w := range waits {
		dst = poisoned()
		err := w.run()
		var se *SyncError
		if !errors.Is(err, ErrHiddenSync) || !errors.As(err, &se) || se.Op != w.op {
			t.Errorf("%s in the error mode: %v", w.op, err)
			continue
		}
		if real && !math.IsNaN(float64(dst[0])) {
			t.Errorf("%s, refused, wrote %v into the host memory", w.op, dst[0])
		}
	}
	if out.Len() != 0 {
		t.Errorf("the error mode wrote %q", out)
	}
	if real {
		// Memory the driver pinned is copied into asynchronously: no report.
		h, err := d.CUDA().AllocHost(4 * n)
		if err != nil {
			t.Fatal(err)
		}
		defer h.Free()
		if err := b.CopyToAsync(cuda.HostSlice[float32](h), nil); err != nil {
			t.Errorf("CopyToAsync into pinned memory in the error mode: %v", err)
		}
	}

	// Back to off: everything works, with the right values.
	SetSyncDebugMode(SyncDebugOff)
	for _, w := range waits {
		dst = poisoned()
		if err := w.run(); err != nil {
			t.Errorf("%s after the error mode: %v", w.op, err)
		}
		if !real || w.op == "FromSlice" || w.op == "CopyFrom" || w.op == "ToSlice" {
			continue
		}
		if w.op == "CopyToAsync" {
			if err := d.Synchronize(); err != nil {
				t.Fatal(err)
			}
		}
		for i, v := range dst {
			want := src[i]
			if w.op == "Launch" {
				want *= 2
			}
			if v != want {
				t.Fatalf("%s: element %d is %v, want %v", w.op, i, v, want)
			}
		}
	}
	if out.Len() != 0 {
		t.Errorf("the off mode wrote %q", out)
	}
}

// checkSyncDebugOutOfMemory: an allocation beyond the allocator's limit
// empties the cache and retries, which waits; it is warned about in both
// modes and fails with the out-of-memory error, not ErrHiddenSync.
func checkSyncDebugOutOfMemory(t *testing.T, d *Device) {
	out := syncMode(t, SyncDebugError)
	a := d.CUDA().Allocator()
	defer a.SetLimit(a.Limit())
	a.SetLimit(a.Stats().Reserved + 4<<20)
	_, err := Alloc[byte](d, 64<<20)
	if !errors.Is(err, cuda.ErrOutOfMemory) || errors.Is(err, ErrHiddenSync) {
		t.Fatalf("allocation beyond the limit: %v", err)
	}
	if got := out.String(); !strings.Contains(got, "Alloc waits for the device (an out-of-memory retry) at ") ||
		!strings.Contains(got, "/syncdebug_internal_test.go:") {
		t.Fatalf("the retry wrote %q", got)
	}
}

func TestSyncDebugGPU(t *testing.T) {
	d, err := Open("cuda")
	if err != nil {
		t.Skipf("no GPU: %v", err)
	}
	m, err := d.Compile(twiceSrc)
	if err != nil {
		t.Skipf("no NVRTC: %v", err)
	}
	k, err := m.Kernel("twice")
	if err != nil {
		t.Fatal(err)
	}
	checkSyncDebug(t, d, k, true)
	checkSyncDebugOutOfMemory(t, d)
}

// On the CPU and the simulator nothing waits for a device.
func TestSyncDebugSim(t *testing.T) {
	out := syncMode(t, SyncDebugError)
	d := simDev(t)
	b, err := FromSlice(d, []float32{1, 2, 3})
	if err != nil {
		t.Fatal(err)
	}
	dst := make([]float32, 3)
	if err := b.CopyTo(dst); err != nil || dst[2] != 3 {
		t.Fatalf("CopyTo on the simulator in the error mode: %v, %v", dst, err)
	}
	SetSyncDebugMode(SyncDebugWarn)
	if _, err := b.ToSlice(); err != nil || out.Len() != 0 {
		t.Fatalf("ToSlice on the simulator: %v, wrote %q", err, out)
	}
}

func TestSyncDebugModeString(t *testing.T) {
	for m, want := range map[SyncDebugMode]string{SyncDebugOff: "off", SyncDebugWarn: "warn", SyncDebugError: "error"} {
		if m.String() != want {
			t.Errorf("%d.String() = %q, want %q", m, m, want)
		}
	}
	old := SetSyncDebugMode(SyncDebugWarn)
	defer SetSyncDebugMode(old)
	if SyncDebug() != SyncDebugWarn {
		t.Errorf("SyncDebug() = %v after SetSyncDebugMode(SyncDebugWarn)", SyncDebug())
	}
}
