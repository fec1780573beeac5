package gen

import (
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/gocu-dev/gocu"
	"github.com/gocu-dev/gocu/gen/testdata/kernels/params"
	"github.com/gocu-dev/gocu/internal/gputest"
	"github.com/gocu-dev/gocu/kernel"
)

func TestLauncherName(t *testing.T) {
	for in, want := range map[string]string{"Gray": "LaunchGray", "gray": "launchGray", "_x": "launch_x", "éclair": "launchÉclair", "SGEMM": "LaunchSGEMM"} {
		if got := LauncherName(in); got != want {
			t.Errorf("LauncherName(%q) = %q, want %q", in, got, want)
		}
	}
}

// launcherDevices are the simulator and, where one is usable, the GPU.
func launcherDevices(t *testing.T) []*gocu.Device {
	s, err := gocu.Open("sim")
	if err != nil {
		t.Fatal(err)
	}
	devs := []*gocu.Device{s}
	if gputest.Usable(t, gocu.GPUUsable()) {
		g, err := gocu.Open("cuda")
		if err != nil {
			t.Fatal(err)
		}
		devs = append(devs, g)
	}
	return devs
}

// TestLauncherParams passes every kind of parameter through a generated
// launcher: a slice, Go int and uint (8 bytes), a blank parameter, bool,
// a named integer, a padded struct, an array, a 16-byte aligned vector and
// a Dim3, with parameter names that clash with the launcher's own.
func TestLauncherParams(t *testing.T) {
	for _, d := range launcherDevices(t) {
		t.Run(d.Kind().String(), func(t *testing.T) {
			out, err := gocu.FromSlice(d, []int64{-9, -9, -9, -9, -9, -9, -9, -9, -9, -9})
			if err != nil {
				t.Fatal(err)
			}
			err = params.LaunchScalars(d, gocu.Grid1D(1, 32), out, 7, 1.5, 9, true, -3,
				params.Point{X: 5, Y: 6, W: 2.5}, [3]int32{1, 2, 3}, kernel.Float4{X: 1, Y: 2, Z: 3, W: 4}, kernel.Dim3{X: 1, Y: 2, Z: 3})
			if err != nil {
				t.Fatal(err)
			}
			got, err := out.ToSlice()
			if err != nil {
				t.Fatal(err)
			}
			want := []int64{7, 9, 1, -3, 5000006, 10, 321, 4321, 321, 10}
			for i := range want {
				if got[i] != want[i] {
					t.Errorf("d[%d] = %d, want %d (all: %v)", i, got[i], want[i], got)
				}
			}
			x, _ := gocu.FromSlice(d, []float32{1, -2, 3})
			if err := params.Scale(d, gocu.Auto(3), x, 2.5); err != nil {
				t.Fatal(err)
			}
			if xs, _ := x.ToSlice(); xs[0] != 2.5 || xs[1] != -5 || xs[2] != 7.5 {
				t.Errorf("scale: %v", xs)
			}
			if err := params.Scale(d, gocu.Auto(3), x, float32(math.NaN())); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// TestLauncherNameTaken: a package identifier with a launcher's name, or
// the program variable's, is reported where it is declared.
func TestLauncherNameTaken(t *testing.T) {
	for _, c := range []struct{ decls, want string }{
		{"func LaunchK() {}", "k.go:10:6: LaunchK is declared here, but gocu gen needs the name for the launcher of kernel K: rename it"},
		{"var gocuProgram = 1", "k.go:10:5: gocuProgram is declared here, but gocu gen needs the name for the package's compiled kernels"},
		{"const gocuSource = \"x\"", "k.go:10:7: gocuSource is declared here, but identifiers starting with gocu are gocu gen's"},
		{"var gocuModule = 1", "k.go:10:5: gocuModule is declared here, but identifiers starting with gocu are gocu gen's"},
		{"func gocuChecked_K() {}", "k.go:10:6: gocuChecked_K is declared here, but identifiers starting with gocu are gocu gen's"},
	} {
		_, err := translate(t, kernelSrc(c.decls, "x []float32", "x[0] = 1"))
		var e *Error
		if !errors.As(err, &e) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.decls, err, c.want)
		}
	}
}

// TestTwinSliceOfArrayElement: slicing a row of a shared array takes its
// address; the checked twin checks the indices and records no read of the
// row (which would count as a read of uninitialized shared memory).
func TestTwinSliceOfArrayElement(t *testing.T) {
	p := mustTranslate(t, kernelSrc("", "x []float32",
		"tile := kernel.Shared[[4][8]float32](t)\nr := t.ThreadIdx.X % 4\nrow := tile[r][:]\nrow[t.ThreadIdx.X%8] = 1\nt.SyncThreads()\nx[t.ThreadIdx.X] = tile[r][0]"))
	twin := string(p.Go)
	if !strings.Contains(twin, "row := tile[kernel.Index(gocuT, int(r), 4, &gocuSite") && !strings.Contains(twin, "row := tile[kernel.Index(t, int(r), 4, &gocuSite") {
		t.Errorf("the twin does not slice the row through kernel.Index:\n%s", twin)
	}
	if strings.Contains(twin, "kernel.Read))[:]") {
		t.Errorf("the twin reads the row it slices:\n%s", twin)
	}
}
