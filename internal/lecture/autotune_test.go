package lecture_test

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gocu-dev/gocu"
	"github.com/gocu-dev/gocu/cuda"
	"github.com/gocu-dev/gocu/internal/lecture"
)

// grayCandidates are block shapes for GrayFast on n pixels; those above
// the kernel's //gocu:launch_bounds 256 cannot run.
func grayCandidates(n int) []gocu.Config {
	var cs []gocu.Config
	for _, b := range []int{32, 64, 128, 256, 512, 1024} {
		cs = append(cs, gocu.Grid1D(n/16, b))
	}
	return cs
}

// TestAutotuneSim: on the simulator Autotune times nothing and runs the
// first candidate.
func TestAutotuneSim(t *testing.T) {
	d := simDev(t)
	const n = 4096
	r := newRand(t)
	rgbHost := randBytes(r, 3*n)
	ref, edge := grayRef(rgbHost, n)
	rgb, gray := upload(t, d, rgbHost), poisoned(t, d, n, uint8(0))
	res, err := gocu.Autotune(d, gocu.Tuning{Kernel: lecture.GrayFast, Shape: []int{n}}, grayCandidates(n), func(c gocu.Config) error {
		return lecture.LaunchGrayFast(d, c, rgb, gray, n)
	})
	if err != nil || res.Index != 0 || res.Cached {
		t.Fatalf("%+v %v: want the first candidate", res, err)
	}
	checkGray(t, download(t, gray), ref, edge)
}

// TestAutotuneGPU tunes GrayFast's block size on the GPU, checks the
// result is plausible and stored, and that a second process uses the
// stored choice without timing.
func TestAutotuneGPU(t *testing.T) {
	d := needGPU(t)
	dir := t.TempDir()
	t.Setenv("GOCU_CACHE_DIR", dir)
	t.Setenv("GOCU_CACHE", "")
	const n = 4096 * 4096
	r := newRand(t)
	rgbHost := randBytes(r, 3*n)
	ref, edge := grayRef(rgbHost, n)
	rgb, gray := upload(t, d, rgbHost), poisoned(t, d, n, uint8(0))
	cands := grayCandidates(n)
	launch := func(c gocu.Config) error { return lecture.LaunchGrayFast(d, c, rgb, gray, n) }
	res, err := gocu.Autotune(d, gocu.Tuning{Kernel: lecture.GrayFast, Shape: []int{n}}, cands, launch)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("times %v, winner block %d", res.Times, res.Best.Block.X)
	if res.Cached {
		t.Fatal("the first tuning in a fresh cache directory came from the cache")
	}
	for i, c := range cands {
		switch {
		case c.Block.X > 256:
			if !errors.Is(res.Errors[i], cuda.ErrInvalidConfig) || res.Times[i] != 0 {
				t.Errorf("block %d beyond the launch bounds: time %v error %v, want skipped", c.Block.X, res.Times[i], res.Errors[i])
			}
		case res.Errors[i] != nil || res.Times[i] <= 0 || res.Times[i] > 10*time.Millisecond:
			t.Errorf("block %d: time %v error %v", c.Block.X, res.Times[i], res.Errors[i])
		case res.Times[i] < res.Times[res.Index]:
			t.Errorf("block %d took %v, less than the winner's %v", c.Block.X, res.Times[i], res.Times[res.Index])
		}
	}
	if res.Best.Block.X > 256 {
		t.Errorf("winner %v cannot run", res.Best)
	}
	checkGray(t, download(t, gray), ref, edge)
	files, _ := filepath.Glob(filepath.Join(dir, "autotune", "*.json"))
	if len(files) != 1 {
		t.Fatalf("stored choices: %v, want one file", files)
	}
	// A second process finds the choice without timing anything.
	cmd := exec.Command(os.Args[0], "-test.run", "^TestAutotuneGPUChild$", "-test.v")
	cmd.Env = append(os.Environ(), "GOCU_TEST_AUTOTUNE_CHILD=1", "GOCU_CACHE_DIR="+dir)
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "--- PASS: TestAutotuneGPUChild") {
		t.Fatalf("second process: %v\n%s", err, out)
	}
}

// TestAutotuneGPUChild is TestAutotuneGPU's second process.
func TestAutotuneGPUChild(t *testing.T) {
	if os.Getenv("GOCU_TEST_AUTOTUNE_CHILD") == "" {
		t.Skip("run by TestAutotuneGPU")
	}
	d := needGPU(t)
	const n = 4096 * 4096
	rgb, gray := poisoned(t, d, 3*n, uint8(1)), poisoned(t, d, n, uint8(0))
	res, err := gocu.Autotune(d, gocu.Tuning{Kernel: lecture.GrayFast, Shape: []int{n}}, grayCandidates(n), func(c gocu.Config) error {
		return lecture.LaunchGrayFast(d, c, rgb, gray, n)
	})
	if err != nil || !res.Cached || res.Times[res.Index] != 0 {
		t.Fatalf("%+v %v: want the stored choice, untimed", res, err)
	}
}

// TestAutotuneInPlaceGPU tunes a kernel that writes its input (ScanAdd:
// y += offsets): the candidates run on a scratch copy, and y ends up with
// exactly one application.
func TestAutotuneInPlaceGPU(t *testing.T) {
	d := needGPU(t)
	t.Setenv("GOCU_CACHE", "off")
	const n = 1 << 20
	r := newRand(t)
	y0 := make([]int32, n)
	for i := range y0 {
		y0[i] = r.Int32N(1000)
	}
	offs := make([]int32, n/(2*lecture.ScanThreads)+1)
	for i := range offs {
		offs[i] = r.Int32N(1000)
	}
	y, o := upload(t, d, y0), upload(t, d, offs)
	var cands []gocu.Config
	for _, b := range []int{64, 128, 256, 512, 1024} {
		cands = append(cands, gocu.Grid1D(n, b))
	}
	res, err := gocu.Autotune(d, gocu.Tuning{Kernel: lecture.ScanAdd, Shape: []int{n}, Written: []gocu.AnyBuffer{y}}, cands,
		func(c gocu.Config) error { return lecture.LaunchScanAdd(d, c, y, o, n) })
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("times %v, winner block %d", res.Times, res.Best.Block.X)
	got := download(t, y)
	for i := range got {
		if want := y0[i] + offs[i/(2*lecture.ScanThreads)]; got[i] != want {
			t.Fatalf("y[%d] = %d, want %d: the candidates wrote the real buffer", i, got[i], want)
		}
	}
}
