package demo

import (
	"fmt"
	"image"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"time"

	"github.com/gocu-dev/gocu"
	"github.com/gocu-dev/gocu/array"
	"github.com/gocu-dev/gocu/internal/lecture"
	"github.com/gocu-dev/gocu/internal/sample"
	"github.com/gocu-dev/gocu/internal/units"
)

// Options configure Run.
type Options struct {
	// Device is "", "auto", "sim", "cuda" or "cuda:N"; see OpenDevice.
	Device string
	// Size is the matrix size of the three products (Size^3); 0 means
	// lecture.DefaultSize for the device.
	Size int
	// Out is where the grayscale image is written (PNG or JPEG by its
	// extension); "" means DefaultOut().
	Out string
	// Seed seeds the random matrices and the simulator's schedule of the
	// planted bugs; 0 takes a random seed.
	Seed uint64
}

// DefaultOut is where the demo writes its image when not told: gocu-gray.png
// in the OS's temporary directory, so that running the demo in a
// checkout leaves nothing behind.
func DefaultOut() string { return filepath.Join(os.TempDir(), "gocu-gray.png") }

// Row is one step of the demo as it prints it.
type Row struct {
	Step  string        // what the step does
	Code  string        // the Go function that ran
	Where string        // the device it ran on
	Size  string        // problem size
	Time  time.Duration // time of one run (see Time)
	Rate  string        // GB/s or GFLOP/s
	Check string        // how it was verified
}

// Report is what Run did.
type Report struct {
	Device      string // Describe(device)
	ArrayDevice string
	Rows        []Row
	Out         string    // the image written
	Bugs        []Bug     // the planted bugs, caught by the simulator
	Debug       *Debugged // on a GPU, the off-by-one caught in debug mode
	Total       time.Duration
}

// Run runs the lecture end to end and prints it to w as it goes: the
// grayscale of the sample image with the 1-D and the 2-D kernel, the
// naive, tiled and library matrix products, each checked against a CPU
// reference and timed, then the planted bugs caught by the simulator and,
// on a GPU, the off-by-one caught by the GPU's debug mode with the
// simulator's message. Any wrong result, or a bug missed, is an error.
func Run(o Options, w io.Writer) (*Report, error) {
	start := time.Now()
	dev, err := OpenDevice(o.Device)
	if err != nil {
		return nil, err
	}
	size := o.Size
	if size == 0 {
		size = lecture.DefaultSize(dev)
	}
	if size < 1 || size > 16384 {
		return nil, fmt.Errorf("--size %d: must be 1 to 16384", size)
	}
	out := o.Out
	if out == "" {
		out = DefaultOut()
	}
	if _, err := OutputFormat(out); err != nil {
		return nil, err
	}
	seed := o.Seed
	if seed == 0 {
		seed = 1 + rand.Uint64N(999_999) // short enough to retype into GOCU_SIM_SEED
	}
	ad, err := ArrayDevice(dev)
	if err != nil {
		return nil, err
	}
	rep := &Report{Device: Describe(dev), ArrayDevice: ad.String(), Out: out}
	if ad == array.CPU() {
		rep.ArrayDevice += fmt.Sprintf(" (all %d cores)", runtime.GOMAXPROCS(0))
	}
	fmt.Fprintf(w, "gocu demo: CUDA-mode lectures 3 and 5 in Go\ndevice: %s\narrays: %s\n\n", rep.Device, rep.ArrayDevice)

	// Rows print as they are measured, in fixed columns wide enough for
	// every step.
	const format = "%-36s  %-19s  %-7s  %-14s  %9s  %14s  %s\n"
	fmt.Fprintf(w, format, "step", "code", "ran on", "size", "time", "rate", "check")
	add := func(r Row) {
		rep.Rows = append(rep.Rows, r)
		fmt.Fprintf(w, format, r.Step, r.Code, r.Where, r.Size, units.Duration(r.Time), r.Rate, r.Check)
	}
	where := dev.String()

	if dev.Kind() == gocu.CUDA {
		t0 := time.Now()
		if err := Compile(dev); err != nil {
			return rep, err
		}
		add(Row{Step: "compile the Go kernels' CUDA C++", Code: "gocu gen + NVRTC", Where: where, Time: time.Since(t0), Check: "cached on disk"})
	}

	gray, err := grayRows(dev, add)
	if err != nil {
		return rep, err
	}
	if err := WriteImage(out, gray, 90); err != nil {
		return rep, err
	}

	r := rand.New(rand.NewPCG(seed, 0xdea0))
	if err := matmulRows(dev, ad, size, r, add); err != nil {
		return rep, err
	}
	if dev.Kind() != gocu.CUDA {
		fmt.Fprintf(w, "\nThe kernels' times on %s measure the simulator, which runs every GPU thread as Go code, not a GPU:\nits tiled matmul is slower than the naive one because its threads really meet at every barrier.\n", dev)
	}
	fmt.Fprintf(w, "\nwrote %s: the sample image in grayscale\n", out)

	fmt.Fprintf(w, "\nThe simulator catches what a GPU hides (kernels in cmd/gocu/internal/demo/bugs/broken.go):\n")
	bugs, err := Bugs(seed)
	rep.Bugs = bugs
	if err != nil {
		return rep, err
	}
	for _, b := range bugs {
		fmt.Fprintf(w, "\n%s in %s (%s):\n  %v\n", b.Name, b.Kernel, b.How, b.Err)
	}
	if dev.Kind() == gocu.CUDA {
		fmt.Fprintf(w, "\nThe GPU's debug mode (gocu.Config{Debug: true}: Go's bounds checks compiled into the CUDA C++)\ncatches the off-by-one with the simulator's message:\n")
		d, err := DebugOffByOne(dev, r)
		rep.Debug = d
		if err != nil {
			return rep, err
		}
		b := d.Bug
		fmt.Fprintf(w, "\n%s in %s (%s):\n  %v\n", b.Name, b.Kernel, b.How, b.Err)
		if d.Release == nil {
			fmt.Fprintf(w, "without debug mode the GPU reports nothing: the read and the write past the ends go unnoticed\n")
		} else {
			fmt.Fprintf(w, "without Debug in the launch it reports it too, since GOCU_DEBUG=1 makes every launch a debug launch\n")
		}
	}
	rep.Total = time.Since(start)
	fmt.Fprintf(w, "\ndone in %s\n", units.Duration(rep.Total))
	return rep, nil
}

// grayRows converts the sample image with both grayscale kernels, checks
// each against GrayReference and returns the image.
func grayRows(dev *gocu.Device, add func(Row)) (*image.Gray, error) {
	rgb, w, h := sample.Planar()
	n := w * h
	want := lecture.GrayReference(rgb, n)
	in, err := gocu.FromSlice(dev, rgb)
	if err != nil {
		return nil, err
	}
	defer in.Free()
	out, err := gocu.Alloc[uint8](dev, n)
	if err != nil {
		return nil, err
	}
	defer out.Free()
	reps := 1
	if dev.Kind() == gocu.CUDA {
		reps = 100
	}
	var img *image.Gray
	for _, twoD := range []bool{false, true} {
		if err := out.CopyFrom(lecture.Fill(make([]uint8, n), 0xA5)); err != nil { // poison
			return nil, err
		}
		step, code := "grayscale, 1-D grid", "lecture.Gray"
		run := func() error { return lecture.LaunchGray(dev, gocu.Grid1D(n, 256), in, out, int32(n)) }
		if twoD {
			step, code = "grayscale, 2-D grid", "lecture.Gray2D"
			run = func() error { return lecture.LaunchGray2D(dev, gocu.Grid2D(w, h, 16, 16), in, out, int32(w), int32(h)) }
		}
		d, err := lecture.Time(dev, reps, run)
		if err != nil {
			return nil, err
		}
		got, err := out.ToSlice()
		if err != nil {
			return nil, err
		}
		check, err := compareGray(got, want, dev.Kind() == gocu.CUDA)
		if err != nil {
			return nil, fmt.Errorf("%s (%s) on %v: %w", step, code, dev, err)
		}
		add(Row{Step: step, Code: code, Where: dev.String(), Size: fmt.Sprintf("%dx%d", w, h), Time: d,
			Rate: fmt.Sprintf("%.3g GB/s", float64(4*n)/d.Seconds()/1e9), Check: check})
		img = GrayImage(got, w, h)
	}
	return img, nil
}

// compareGray checks a kernel's gray image against the plain-Go reference.
// The simulator computes exactly what Go computes. On a GPU the compiler
// may contract 0.2989 r + 0.5870 g into a fused multiply-add, whose single
// rounding can move a value that lies within an ulp of an integer across
// it: one gray level, which is allowed there and counted.
func compareGray(got, want []uint8, gpu bool) (string, error) {
	off := 0
	for i := range want {
		if d := int(got[i]) - int(want[i]); d != 0 {
			if !gpu || d < -1 || d > 1 {
				return "", fmt.Errorf("pixel %d is %d, the plain-Go reference gives %d", i, got[i], want[i])
			}
			off++
		}
	}
	if off == 0 {
		return fmt.Sprintf("exact (%d pixels)", len(want)), nil
	}
	return fmt.Sprintf("%d pixels, %d one level off (FMA)", len(want), off), nil
}

// matmulRows runs the three products of size^3 and checks each.
func matmulRows(dev *gocu.Device, ad *array.Maker, size int, r *rand.Rand, add func(Row)) error {
	s := int32(size)
	a, b := lecture.RandomMatrix(r, size, size), lecture.RandomMatrix(r, size, size)
	nan := float32(math.NaN())
	samples := 1 << 16
	flops := 2 * math.Pow(float64(size), 3)
	dims := fmt.Sprintf("%dx%dx%d", size, size, size)
	rate := func(d time.Duration) string { return units.FLOPRate(flops / d.Seconds()) }

	da, err := gocu.FromSlice(dev, a)
	if err != nil {
		return err
	}
	defer da.Free()
	db, err := gocu.FromSlice(dev, b)
	if err != nil {
		return err
	}
	defer db.Free()
	dc, err := gocu.Alloc[float32](dev, size*size)
	if err != nil {
		return err
	}
	defer dc.Free()
	reps := 1
	if dev.Kind() == gocu.CUDA {
		reps = 10
	}
	cfg := gocu.Grid2D(size, size, lecture.Tile, lecture.Tile)
	for _, k := range []struct {
		step, code string
		launch     func(*gocu.Device, gocu.Config, gocu.Slice[float32], gocu.Slice[float32], gocu.Slice[float32], int32, int32, int32) error
	}{
		{"matmul, naive (2-D grid)", "lecture.MatMul", lecture.LaunchMatMul},
		{"matmul, tiled 16x16 in shared memory", "lecture.TiledMatMul", lecture.LaunchTiledMatMul},
	} {
		if err := dc.CopyFrom(lecture.Fill(make([]float32, size*size), nan)); err != nil {
			return err
		}
		d, err := lecture.Time(dev, reps, func() error { return k.launch(dev, cfg, da, db, dc, s, s, s) })
		if err != nil {
			return err
		}
		c, err := dc.ToSlice()
		if err != nil {
			return err
		}
		chk, err := lecture.CheckMatMul(a, b, c, size, size, size, samples, r)
		if err != nil {
			return fmt.Errorf("%s (%s) on %v: %w", k.step, k.code, dev, err)
		}
		add(Row{Step: k.step, Code: k.code, Where: dev.String(), Size: dims, Time: d, Rate: rate(d), Check: chk.String()})
	}

	// The library: package array's matmul (cuBLAS on a GPU, a packed
	// AVX2 GEMM on the CPU).
	x, y := array.FromSliceOn(ad.Device(), a, size, size), array.FromSliceOn(ad.Device(), b, size, size)
	defer x.Close()
	defer y.Close()
	areps := 3
	if ad.IsGPU() {
		areps = 10
	}
	z, d, err := timeArray(ad, areps, func() *array.Array { return x.MatMul(y) })
	if err != nil {
		return err
	}
	defer z.Close()
	c, err := z.Float32s()
	if err != nil {
		return err
	}
	chk, err := lecture.CheckMatMul(a, b, c, size, size, size, samples, r)
	if err != nil {
		return fmt.Errorf("library matmul on %v: %w", ad, err)
	}
	add(Row{Step: "matmul, library", Code: "array.MatMul", Where: ad.String(), Size: dims, Time: d, Rate: rate(d), Check: chk.String()})
	return nil
}

// timeArray times an array computation: the median of reps runs after one
// warm-up, each from the call to the device's completion. It returns the
// last run's result and closes the others, so that a GPU's memory holds
// one result at a time.
func timeArray(ad *array.Maker, reps int, f func() *array.Array) (*array.Array, time.Duration, error) {
	var (
		times []time.Duration
		res   *array.Array
	)
	for i := range reps + 1 {
		if res != nil {
			res.Close()
		}
		t0 := time.Now()
		res = f().Eval()
		if err := ad.Sync(); err != nil {
			return nil, 0, err
		}
		if err := res.Err(); err != nil {
			return nil, 0, err
		}
		if i > 0 {
			times = append(times, time.Since(t0))
		}
	}
	return res, median(times), nil
}

func median(t []time.Duration) time.Duration {
	s := slices.Clone(t)
	slices.Sort(s)
	return s[len(s)/2]
}
