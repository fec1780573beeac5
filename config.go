package gocu

import (
	"fmt"

	"github.com/gocu-dev/gocu/cuda"
	"github.com/gocu-dev/gocu/kernel"
)

// Dim3 is a grid or block size. A Y or Z of 0 counts as 1, so Dim3{X: 256}
// is one-dimensional.
type Dim3 = kernel.Dim3

// Config is a kernel launch configuration.
type Config struct {
	Grid   Dim3 // blocks in the grid
	Block  Dim3 // threads per block
	Shared int  // dynamic shared memory per block, in bytes
	// Stream orders the launch; nil means the device's default stream.
	Stream *Stream
	// N, when Grid and Block are zero, asks for a 1-D launch covering N
	// threads with the block size the occupancy calculator suggests for
	// the kernel (256 on the simulator, or the kernel's
	// //gocu:launch_bounds if smaller).
	N int
	// Debug runs a kernel written in Go with Go's bounds checks on the GPU:
	// the launch uses the debug build of the generated CUDA source
	// (compiled with -DGOCU_DEBUG), waits for the kernel and returns the
	// first failed check as the *sim.Error the simulator reports for it.
	// GOCU_DEBUG=1 turns it on for every launch. The simulator always
	// checks bounds, so Debug changes nothing there; CUDA C kernels
	// (Compile) ignore it.
	Debug bool
	// Checked runs a kernel written in Go in the simulator's checked mode
	// (race detection; see package sim), like GOCU_SIM_CHECKED=1. A GPU
	// cannot check races: on a CUDA device Checked is an error.
	Checked bool
}

// Grid1D returns a 1-D configuration of blocks of block threads covering n
// threads: the grid has ceil(n/block) blocks. A block of 0 or fewer
// threads gives a configuration that a launch refuses (Auto picks a block
// size).
func Grid1D(n, block int) Config {
	if block <= 0 {
		return Config{Grid: Dim3{X: 1}, Block: Dim3{X: int32(max(block, -1))}}
	}
	return Config{Grid: Dim3{X: int32((n + block - 1) / block)}, Block: Dim3{X: int32(block)}}
}

// Grid2D returns a 2-D configuration of bx-by-by blocks covering a w-by-h
// domain (x counts columns, y rows).
func Grid2D(w, h, bx, by int) Config {
	return Config{
		Grid:  Dim3{X: int32((w + bx - 1) / bx), Y: int32((h + by - 1) / by)},
		Block: Dim3{X: int32(bx), Y: int32(by)},
	}
}

// Auto returns the 1-D configuration covering n threads with the block size
// the occupancy calculator suggests at launch.
func Auto(n int) Config { return Config{N: n} }

// norm fills in 1 for zero Y and Z.
func norm(d Dim3) Dim3 {
	if d.Y == 0 {
		d.Y = 1
	}
	if d.Z == 0 {
		d.Z = 1
	}
	return d
}

func (c Config) String() string {
	if c.Grid == (Dim3{}) && c.Block == (Dim3{}) {
		return fmt.Sprintf("auto(%d)", c.N)
	}
	g, b := norm(c.Grid), norm(c.Block)
	return fmt.Sprintf("grid (%d,%d,%d) block (%d,%d,%d) shared %d", g.X, g.Y, g.Z, b.X, b.Y, b.Z, c.Shared)
}

// cudaDim converts a Dim3 for the driver, refusing negative sizes.
func cudaDim(what string, d Dim3) (cuda.Dim3, error) {
	if d.X < 0 || d.Y < 0 || d.Z < 0 {
		return cuda.Dim3{}, fmt.Errorf("gocu: %s (%d,%d,%d) has a negative size: %w", what, d.X, d.Y, d.Z, cuda.ErrInvalidConfig)
	}
	if d.X == 0 {
		return cuda.Dim3{}, fmt.Errorf("gocu: %s (%d,%d,%d) is empty: X must be at least 1 (a Y or Z of 0 counts as 1): %w", what, d.X, d.Y, d.Z, cuda.ErrInvalidConfig)
	}
	return cuda.Dim3{X: uint32(d.X), Y: uint32(d.Y), Z: uint32(d.Z)}, nil
}
