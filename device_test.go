package gocu_test

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/gocu-dev/gocu"
)

// One name, one device: the CPU, the simulator and a GPU are each opened
// once, with one default stream.
func TestOpenKinds(t *testing.T) {
	for _, c := range []struct {
		name string
		kind gocu.Kind
		id   string
	}{{"cpu", gocu.CPU, "cpu"}, {" CPU ", gocu.CPU, "cpu"}, {"sim", gocu.Sim, "sim"}} {
		d, err := gocu.Open(c.name)
		if err != nil {
			t.Fatal(err)
		}
		if d.Kind() != c.kind || d.ID() != c.id || d.IsGPU() || d.CUDA() != nil || d.Stream() == nil || d.Stream().CUDA() != nil {
			t.Errorf("Open(%q): kind %v id %s", c.name, d.Kind(), d.ID())
		}
		if again := gocu.MustOpen(c.id); again != d || again.Stream() != d.Stream() {
			t.Errorf("Open(%q) twice gave two devices", c.name)
		}
		if err := d.Synchronize(); err != nil {
			t.Error(err)
		}
		if err := d.TrimCache(); err != nil {
			t.Error(err)
		}
	}
	if gocu.MustOpen("cpu") == gocu.MustOpen("sim") {
		t.Error("cpu and sim are one device")
	}
	defer func() {
		if recover() == nil {
			t.Error("MustOpen(tpu) did not panic")
		}
	}()
	gocu.MustOpen("tpu")
}

// The GPU's default stream is the device's own stream, shared by every
// user of the device, and not the legacy NULL stream.
func TestDefaultStreamGPU(t *testing.T) {
	d := gpu(t)
	s := d.Stream()
	if s == nil || s.CUDA() == nil || s.CUDA().IsDefault() || gocu.MustOpen("cuda:0").Stream() != s || s.Device() != d {
		t.Fatalf("default stream %v", s)
	}
	if cs, err := d.CUDAStream(nil); err != nil || cs != s.CUDA() {
		t.Errorf("CUDAStream(nil) = %v, %v", cs, err)
	}
	if err := s.Close(); err != nil {
		t.Error(err)
	}
	b, err := gocu.FromSlice(d, []float32{1, 2, 3}) // still usable after the no-op Close
	if err != nil {
		t.Fatal(err)
	}
	defer b.Free()
	got, err := b.ToSlice()
	if err != nil || got[2] != 3 {
		t.Errorf("round trip after closing the default stream: %v %v", got, err)
	}
	if _, err := gocu.MustOpen("cpu").CUDAStream(s); err == nil {
		t.Error("a GPU stream was accepted for work on the CPU")
	}
}

// Default follows GOCU_DEVICE, whose one grammar is cpu, sim, cuda and
// cuda:N; it is decided once per process, so each case runs in a child.
func TestDefaultFollowsEnv(t *testing.T) {
	if env := os.Getenv("GOCU_TEST_DEFAULT"); env != "" {
		d, err := gocu.Default()
		if err != nil {
			fmt.Printf("DEFAULT error: %v\n", err)
			return
		}
		fmt.Printf("DEFAULT %s\n", d.ID())
		return
	}
	gpuOK := gocu.GPUUsable() == nil
	cases := []struct{ env, want string }{
		{"cpu", "DEFAULT cpu"},
		{"sim", "DEFAULT sim"},
		{"bogus", "DEFAULT error: gocu: GOCU_DEVICE=bogus: unknown device \"bogus\": want cpu, sim, cuda or cuda:N"},
		{"cuda:99", "DEFAULT error: gocu: GOCU_DEVICE=cuda:99: no CUDA GPU available"},
	}
	if gpuOK {
		cases = append(cases, struct{ env, want string }{"", "DEFAULT cuda:0"}, struct{ env, want string }{"cuda", "DEFAULT cuda:0"})
	} else {
		cases = append(cases, struct{ env, want string }{"", "DEFAULT cpu"})
	}
	for _, c := range cases {
		cmd := exec.Command(os.Args[0], "-test.run=^TestDefaultFollowsEnv$")
		cmd.Env = append(os.Environ(), "GOCU_TEST_DEFAULT=1", "GOCU_DEVICE="+c.env)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Errorf("GOCU_DEVICE=%q: child failed: %v\n%s", c.env, err, out)
			continue
		}
		line := ""
		for _, l := range strings.Split(string(out), "\n") {
			if strings.HasPrefix(l, "DEFAULT") {
				line = l
			}
		}
		if !strings.HasPrefix(line, c.want) {
			t.Errorf("GOCU_DEVICE=%q: %q, want %q", c.env, line, c.want)
		}
	}
}

// A Failed buffer gives its error to every use; Wrap and WrapSlice refuse
// what cannot work.
func TestFailedAndWrappedBuffers(t *testing.T) {
	cause := errors.New("the array it stands for failed")
	b := gocu.Failed[float32](cause)
	if b.Err() != cause {
		t.Errorf("Err = %v", b.Err())
	}
	if _, err := b.ToSlice(); err != cause {
		t.Errorf("ToSlice = %v, want the cause", err)
	}
	if err := b.CopyFrom([]float32{1}); err != cause {
		t.Errorf("CopyFrom = %v, want the cause", err)
	}
	if err := b.Free(); err != nil {
		t.Errorf("Free of a failed buffer: %v", err)
	}
	cpu := gocu.MustOpen("cpu")
	released := 0
	s := []float32{1, 2, 3}
	w, err := gocu.WrapSlice(cpu, s, func() { released++ })
	if err != nil {
		t.Fatal(err)
	}
	w.Host()[1] = 20 // the buffer is s
	if s[1] != 20 || w.Len() != 3 || w.Device() != cpu {
		t.Errorf("WrapSlice does not share s: %v", s)
	}
	if err := w.Free(); err != nil || released != 1 {
		t.Errorf("Free: %v, release called %d times", err, released)
	}
	if err := w.Free(); !errors.Is(err, gocu.ErrFreed) || released != 1 {
		t.Errorf("second Free: %v, release called %d times", err, released)
	}
	if _, err := gocu.Wrap[float32](cpu, nil, 3, nil); err == nil {
		t.Error("Wrap of device memory on the CPU succeeded")
	}
	if _, err := gocu.WrapSlice[float32](nil, s, nil); err == nil {
		t.Error("WrapSlice on a nil device succeeded")
	}
}
