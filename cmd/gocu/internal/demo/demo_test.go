package demo

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gocu-dev/gocu/array"
	"github.com/gocu-dev/gocu/internal/lecture"
	"github.com/gocu-dev/gocu/internal/sample"
)

// TestRun runs the whole demo on the simulator and checks what it did and
// printed, and the image it wrote.
func TestRun(t *testing.T) {
	out := filepath.Join(t.TempDir(), "gray.png")
	var buf bytes.Buffer
	rep, err := Run(Options{Device: "sim", Size: 48, Out: out}, &buf)
	if err != nil {
		t.Fatalf("%v\n%s", err, buf.String())
	}
	text := buf.String()
	steps := []string{"lecture.Gray", "lecture.Gray2D", "lecture.MatMul", "lecture.TiledMatMul", "array.MatMul"}
	if len(rep.Rows) != len(steps) {
		t.Fatalf("%d rows, want %d:\n%s", len(rep.Rows), len(steps), text)
	}
	for i, r := range rep.Rows {
		if r.Code != steps[i] || r.Time <= 0 || r.Rate == "" || r.Check == "" {
			t.Errorf("row %d: %+v", i, r)
		}
		wantWhere := "sim" // the arrays of the simulator device compute natively on the CPU
		if r.Where != wantWhere {
			t.Errorf("%s ran on %s, want %s", r.Code, r.Where, wantWhere)
		}
		if !strings.Contains(text, r.Code) {
			t.Errorf("output lacks %s", r.Code)
		}
	}
	if rep.Rows[0].Check != "exact (262144 pixels)" || !strings.HasPrefix(rep.Rows[2].Check, "2304 entries") || rep.Rows[2].Size != "48x48x48" {
		t.Errorf("checks: %q, %q (%s)", rep.Rows[0].Check, rep.Rows[2].Check, rep.Rows[2].Size)
	}
	if len(rep.Bugs) != 3 {
		t.Errorf("%d bugs shown", len(rep.Bugs))
	}
	for _, s := range []string{"device: sim, the CPU simulator", "wrote " + out, "shared-memory race", "index 1000 out of range", "divergent barrier", "done in"} {
		if !strings.Contains(text, s) {
			t.Errorf("output lacks %q:\n%s", s, text)
		}
	}

	// The image is the sample in grayscale, as the reference computes it.
	img, format, err := ReadImage(out)
	if err != nil || format != "png" {
		t.Fatalf("reading the demo's image: %v (%s)", err, format)
	}
	rgb, w, h := sample.Planar()
	got, _, _ := Planar(img)
	want := lecture.GrayReference(rgb, w*h)
	if !bytes.Equal(got[:w*h], want) {
		t.Error("the written image is not the sample in grayscale")
	}
}

func TestRunErrors(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		o    Options
		want string
	}{
		{Options{Device: "sim", Size: -3, Out: filepath.Join(dir, "a.png")}, "--size -3"},
		{Options{Device: "sim", Size: 8, Out: filepath.Join(dir, "a.gif")}, ".png, .jpg or .jpeg"},
		{Options{Device: "tpu", Size: 8, Out: filepath.Join(dir, "a.png")}, "tpu"},
		{Options{Device: "sim", Size: 8, Out: filepath.Join(dir, "missing", "a.png")}, "does not exist"},
	} {
		var buf bytes.Buffer
		_, err := Run(c.o, &buf)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v, want %q", c.o, err, c.want)
		}
	}
	assertNoStray(t, dir)
}

func TestDefaults(t *testing.T) {
	dev := simDevice(t)
	if lecture.DefaultSize(dev) != 256 {
		t.Errorf("default size on the simulator %d", lecture.DefaultSize(dev))
	}
	if !strings.HasSuffix(DefaultOut(), "gocu-gray.png") || !filepath.IsAbs(DefaultOut()) {
		t.Errorf("default output %s", DefaultOut())
	}
	if d := Describe(dev); !strings.HasPrefix(d, "sim, the CPU simulator on ") {
		t.Errorf("Describe: %s", d)
	}
	if ad, err := ArrayDevice(dev); err != nil || ad != array.On(dev) || ad.String() != "sim" || ad.IsGPU() {
		t.Errorf("the arrays of the simulator: %v, %v; want array.On(sim), computing on the CPU", ad, err)
	}
	if err := Compile(dev); err != nil {
		t.Errorf("Compile on the simulator: %v", err)
	}
}
