package demo

import (
	"errors"
	"fmt"
	"math/rand/v2"

	"github.com/gocu-dev/gocu/examples/kernels"
	"github.com/gocu-dev/gocu/kernel"
	"github.com/gocu-dev/gocu/sim"
)

// Bug is a classic GPU bug planted in a kernel of package kernels, and the
// simulator's report of it.
type Bug struct {
	Name   string     // what kind of bug
	Kernel string     // the kernel that has it
	How    string     // how it was run
	Want   error      // the sentinel the report must match
	Err    *sim.Error // the report
}

// Bugs runs the broken kernels of package kernels on the simulator and
// returns each report: the tiled matmul without its second SyncThreads in
// checked mode (a shared-memory race), the addition whose guard is off by
// one (an out-of-range index) and the block sum with a barrier inside a
// divergent branch. It fails if a bug goes unreported or is reported as
// something else. seed fixes the schedule (0: random); the reports carry it.
// The blocks run one at a time, so that a seed also fixes which block's
// report comes first.
func Bugs(seed uint64) ([]Bug, error) {
	r := rand.New(rand.NewPCG(seed, 0x5eed))
	var bugs []Bug

	// A race: without the barrier at the end of a phase, a fast thread
	// loads the next tile while slower ones still read this one.
	const m, n, k = 64, 64, 64
	a, b, c := RandomMatrix(r, m, k), RandomMatrix(r, k, n), make([]float32, m*n)
	twin, ok := Twin(kernels.TiledMatMulNoSync)
	if !ok {
		return nil, errors.New("no checked twin of kernels.TiledMatMulNoSync: run go generate ./examples/kernels")
	}
	cfg := sim.Config{Grid: kernel.Dim3{X: n / kernels.Tile, Y: m / kernels.Tile}, Block: kernel.Dim3{X: kernels.Tile, Y: kernels.Tile}, Seed: seed, Checked: true, Workers: 1}
	err := sim.Launch(cfg, sim.Kernel{Name: "TiledMatMulNoSync", Args: []any{a, b, c, int32(m), int32(n), int32(k)},
		Func:    func(t *kernel.Thread) { kernels.TiledMatMulNoSync(t, a, b, c, m, n, k) },
		Checked: func(t *kernel.Thread) { twin(t, a, b, c, m, n, k) }})
	bugs = append(bugs, Bug{Name: "data race in shared memory", Kernel: "kernels.TiledMatMulNoSync",
		How: fmt.Sprintf("%dx%dx%d, checked mode", m, n, k), Want: sim.ErrRace, Err: simError(err)})

	// An out-of-range index: the guard i <= n lets thread n through.
	const size = 1000
	x, y, z := RandomMatrix(r, 1, size), RandomMatrix(r, 1, size), make([]float32, size)
	cfg = sim.Config{Grid: kernel.Dim3{X: (size + 255) / 256}, Block: kernel.Dim3{X: 256}, Seed: seed, Workers: 1}
	err = sim.Run(cfg, kernels.AddOffByOne, x, y, z, int32(size))
	bugs = append(bugs, Bug{Name: "index out of range", Kernel: "kernels.AddOffByOne",
		How: fmt.Sprintf("n = %d, 4 blocks of 256 threads", size), Want: sim.ErrOutOfRange, Err: simError(err)})

	// A divergent barrier: only the lower half of the threads reach the
	// SyncThreads inside the if.
	partial := make([]float32, 4)
	cfg = sim.Config{Grid: kernel.Dim3{X: 4}, Block: kernel.Dim3{X: 256}, Seed: seed, Workers: 1}
	err = sim.Run(cfg, kernels.BlockSumDivergent, x, partial, int32(size))
	bugs = append(bugs, Bug{Name: "divergent barrier", Kernel: "kernels.BlockSumDivergent",
		How: fmt.Sprintf("n = %d, 4 blocks of 256 threads", size), Want: sim.ErrDivergentBarrier, Err: simError(err)})

	for _, b := range bugs {
		if b.Err == nil {
			return bugs, fmt.Errorf("the simulator did not report the %s in %s", b.Name, b.Kernel)
		}
		if !errors.Is(b.Err, b.Want) {
			return bugs, fmt.Errorf("the simulator reported the %s in %s as: %w", b.Name, b.Kernel, b.Err)
		}
	}
	return bugs, nil
}

func simError(err error) *sim.Error {
	var e *sim.Error
	if errors.As(err, &e) {
		return e
	}
	return nil
}
