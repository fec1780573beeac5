package demo

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/gocu-dev/gocu"
	"github.com/gocu-dev/gocu/cmd/gocu/internal/demo/bugs"
	"github.com/gocu-dev/gocu/internal/lecture"
	"github.com/gocu-dev/gocu/kernel"
	"github.com/gocu-dev/gocu/sim"
)

// Bug is a classic GPU bug planted in a kernel of package kernels, and the
// report of it.
type Bug struct {
	Name   string     // what kind of bug
	Kernel string     // the kernel that has it
	How    string     // how it was run
	Want   error      // the sentinel the report must match
	Err    *sim.Error // the report
}

// The off-by-one launch that Bugs runs on the simulator and DebugOffByOne
// on a GPU: n elements, blocks of offBlock threads.
const (
	offN     = 1000
	offBlock = 256
)

var offHow = fmt.Sprintf("n = %d, %d blocks of %d threads", offN, (offN+offBlock-1)/offBlock, offBlock)

// Bugs runs the broken kernels of package kernels on the simulator and
// returns each report: the tiled matmul without its second SyncThreads (a
// shared-memory race) and the addition whose guard is off by one (an
// out-of-range index), both in checked mode, where the checked twins gocu
// gen wrote name the access and the memory; and the block sum with a
// barrier inside a divergent branch. It fails if a bug goes unreported or
// is reported as something else. seed fixes the schedule (0: random); the
// reports carry it. The blocks run one at a time, so that a seed also
// fixes which block's report comes first.
func Bugs(seed uint64) ([]Bug, error) {
	r := rand.New(rand.NewPCG(seed, 0x5eed))
	var found []Bug

	// A race: without the barrier at the end of a phase, a fast thread
	// loads the next tile while slower ones still read this one. sim.Run
	// finds the kernel's checked twin through the generated file.
	const m, n, k = 64, 64, 64
	a, b, c := lecture.RandomMatrix(r, m, k), lecture.RandomMatrix(r, k, n), make([]float32, m*n)
	cfg := sim.Config{Grid: kernel.Dim3{X: n / bugs.Tile, Y: m / bugs.Tile}, Block: kernel.Dim3{X: bugs.Tile, Y: bugs.Tile}, Seed: seed, Checked: true, Workers: 1}
	err := sim.Run(cfg, bugs.TiledMatMulNoSync, a, b, c, int32(m), int32(n), int32(k))
	found = append(found, Bug{Name: "data race in shared memory", Kernel: "bugs.TiledMatMulNoSync",
		How: fmt.Sprintf("%dx%dx%d, checked mode", m, n, k), Want: sim.ErrRace, Err: simError(err)})

	// An out-of-range index: the guard i <= n lets thread n through.
	x, y, z := lecture.RandomMatrix(r, 1, offN), lecture.RandomMatrix(r, 1, offN), make([]float32, offN)
	cfg = sim.Config{Grid: kernel.Dim3{X: (offN + offBlock - 1) / offBlock}, Block: kernel.Dim3{X: offBlock}, Seed: seed, Checked: true, Workers: 1}
	err = sim.Run(cfg, bugs.AddOffByOne, x, y, z, int32(offN))
	found = append(found, Bug{Name: "index out of range", Kernel: "bugs.AddOffByOne",
		How: offHow + ", checked mode", Want: sim.ErrOutOfRange, Err: simError(err)})

	// A divergent barrier: only the lower half of the threads reach the
	// SyncThreads inside the if.
	partial := make([]float32, 4)
	cfg = sim.Config{Grid: kernel.Dim3{X: 4}, Block: kernel.Dim3{X: 256}, Seed: seed, Workers: 1}
	err = sim.Run(cfg, bugs.BlockSumDivergent, x, partial, int32(offN))
	found = append(found, Bug{Name: "divergent barrier", Kernel: "bugs.BlockSumDivergent",
		How: offHow, Want: sim.ErrDivergentBarrier, Err: simError(err)})

	for _, b := range found {
		if err := b.check("the simulator"); err != nil {
			return found, err
		}
	}
	return found, nil
}

// check fails unless the bug was reported as itself; who reported it.
func (b *Bug) check(who string) error {
	if b.Err == nil {
		return fmt.Errorf("%s did not report the %s in %s", who, b.Name, b.Kernel)
	}
	if !errors.Is(b.Err, b.Want) {
		return fmt.Errorf("%s reported the %s in %s as: %w", who, b.Name, b.Kernel, b.Err)
	}
	return nil
}

// Debugged is the off-by-one of bugs.AddOffByOne caught on a GPU.
type Debugged struct {
	Bug Bug // the report of the GPU's debug mode
	// Sim is the simulator's message for the same launch in checked mode,
	// without its schedule's seed (a GPU has none): the GPU's message.
	Sim string
	// Release is what the same launch reported without debug mode: nil,
	// the GPU hides the bug (the read and the write past the ends land in
	// the padding of the allocations), unless GOCU_DEBUG=1 makes every
	// launch a debug launch.
	Release error
}

// DebugOffByOne launches bugs.AddOffByOne on dev, a GPU, in debug mode
// (gocu.Config{Debug: true}): the launcher runs the build of the generated
// CUDA C++ that has Go's bounds checks compiled in, waits for the kernel
// and returns the first failed check as the *sim.Error the simulator
// reports for it. DebugOffByOne fails unless the GPU reports the index out
// of range with the simulator's message for the same launch (made on the
// simulator through the same launcher, in checked mode) and every thread
// in range computed its element. Then it makes the launch again without
// debug mode, and returns what that reported. r draws the inputs.
func DebugOffByOne(dev *gocu.Device, r *rand.Rand) (res *Debugged, err error) {
	if dev == nil || dev.Kind() != gocu.CUDA {
		return nil, fmt.Errorf("GPU debug mode: %v is not a GPU", dev)
	}
	s, err := gocu.Open("sim")
	if err != nil {
		return nil, err
	}
	x, y := lecture.RandomMatrix(r, 1, offN), lecture.RandomMatrix(r, 1, offN)
	cfg := gocu.Config{Grid: gocu.Dim3{X: (offN + offBlock - 1) / offBlock}, Block: gocu.Dim3{X: offBlock}}
	// launch runs the kernel on d with cfg and returns its error and c,
	// poisoned with NaN before the launch.
	launch := func(d *gocu.Device, cfg gocu.Config) (kerr error, c []float32, err error) {
		a, err := gocu.FromSlice(d, x)
		if err != nil {
			return nil, nil, err
		}
		defer freeInto(a, &err)
		b, err := gocu.FromSlice(d, y)
		if err != nil {
			return nil, nil, err
		}
		defer freeInto(b, &err)
		dc, err := gocu.FromSlice(d, lecture.Fill(make([]float32, offN), float32(math.NaN())))
		if err != nil {
			return nil, nil, err
		}
		defer freeInto(dc, &err)
		kerr = bugs.LaunchAddOffByOne(d, cfg, a, b, dc, offN)
		if kerr == nil {
			kerr = d.Synchronize()
		}
		c, err = dc.ToSlice()
		return kerr, c, err
	}

	checked := cfg
	checked.Checked = true
	serr, _, err := launch(s, checked)
	if err != nil {
		return nil, err
	}
	se := simError(serr)
	if se == nil || !errors.Is(se, sim.ErrOutOfRange) {
		return nil, fmt.Errorf("the simulator reported the off-by-one in bugs.AddOffByOne as: %v", serr)
	}
	noSeed := *se
	noSeed.Seed = 0
	res = &Debugged{Sim: noSeed.Error()}

	debug := cfg
	debug.Debug = true
	gerr, c, err := launch(dev, debug)
	if err != nil {
		return nil, err
	}
	res.Bug = Bug{Name: "index out of range", Kernel: "bugs.AddOffByOne", How: offHow + ", on " + dev.String() + " in debug mode",
		Want: sim.ErrOutOfRange, Err: simError(gerr)}
	if err := res.Bug.check(dev.String() + " in debug mode"); err != nil {
		if res.Bug.Err == nil && gerr != nil {
			err = fmt.Errorf("%v in debug mode reported the off-by-one in bugs.AddOffByOne as: %w", dev, gerr)
		}
		return res, err
	}
	if got := res.Bug.Err.Error(); got != res.Sim {
		return res, fmt.Errorf("%v in debug mode reported\n  %s\nthe simulator\n  %s", dev, got, res.Sim)
	}
	for i := range offN { // every thread in range did its work
		if c[i] != x[i]+y[i] {
			return res, fmt.Errorf("%v in debug mode: c[%d] = %v, want %v", dev, i, c[i], x[i]+y[i])
		}
	}

	res.Release, _, err = launch(dev, cfg)
	if err != nil {
		return res, err
	}
	if res.Release != nil && !errors.Is(res.Release, sim.ErrOutOfRange) { // not GOCU_DEBUG=1's report
		return res, fmt.Errorf("%v, release build of bugs.AddOffByOne: %w", dev, res.Release)
	}
	return res, nil
}

func simError(err error) *sim.Error {
	var e *sim.Error
	if errors.As(err, &e) {
		return e
	}
	return nil
}
