package sim

import (
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/gocu-dev/gocu/kernel"
)

// Limits is the device model a launch is checked against.
type Limits struct {
	Name               string
	MaxThreadsPerBlock int
	MaxBlock           kernel.Dim3 // the largest block in each dimension
	MaxGrid            kernel.Dim3 // the largest grid in each dimension
	// MaxStaticShared is the most static shared memory (the sum of a
	// block's kernel.Shared declarations) a block may use, in bytes.
	MaxStaticShared int
	// MaxShared is the most shared memory, static plus dynamic, a block may
	// use after opting in (cudaFuncAttributeMaxDynamicSharedMemorySize), in
	// bytes.
	MaxShared int
}

// H100 is the device model of an NVIDIA H100 (compute capability 9.0), the
// default. Warps have kernel.WarpSize (32) lanes on every NVIDIA GPU.
var H100 = Limits{
	Name:               "H100 (sm_90)",
	MaxThreadsPerBlock: 1024,
	MaxBlock:           kernel.Dim3{X: 1024, Y: 1024, Z: 64},
	MaxGrid:            kernel.Dim3{X: 1<<31 - 1, Y: 65535, Z: 65535},
	MaxStaticShared:    48 << 10,
	MaxShared:          227 << 10,
}

// Config describes one launch.
type Config struct {
	// Grid and Block are the launch shape. A Y or Z of 0 means 1, so that
	// kernel.Dim3{X: 256} is a 1-D shape; X must be at least 1.
	Grid, Block kernel.Dim3
	// DynamicSharedBytes is the size of the memory kernel.DynamicShared
	// returns to each block.
	DynamicSharedBytes int
	// Seed fixes the block order and the interleaving of the threads of
	// each block. 0 takes GOCU_SIM_SEED from the environment or, without
	// it, a random seed. Every error carries the seed it ran with.
	Seed uint64
	// Checked runs the kernel's instrumented twin (Kernel.Checked), which
	// adds shared- and global-memory race detection and the detection of
	// reads of uninitialized shared memory. GOCU_SIM_CHECKED=1 turns it on
	// for every launch.
	Checked bool
	// Device names the gocu device the launch is for ("cpu" or "sim"),
	// for tracers such as the profiler; empty means "sim".
	Device string
	// Limits is the device model; the zero value means H100.
	Limits Limits
	// Workers is the number of blocks run in parallel; 0 means GOMAXPROCS.
	// With 1 worker a seed also fixes the order of accesses between blocks.
	Workers int
	// Timeout is the launch's time budget (wall clock): a launch still
	// running after it returns a KindTimeout error naming the threads still
	// running. 0 takes GOCU_SIM_TIMEOUT from the environment (a Go duration
	// such as "30s", or "off") or, without it, DefaultTimeout; a negative
	// Timeout means no budget. LaunchContext adds a context's deadline and
	// cancellation.
	Timeout time.Duration
	// Stdout receives the output of kernel.Printf (and of fmt.Printf in
	// kernels translated by gocu gen) when the launch ends, ordered by
	// block and thread; nil means os.Stdout.
	Stdout io.Writer
}

// DefaultTimeout is the time budget of a launch that sets neither
// Config.Timeout nor GOCU_SIM_TIMEOUT: far more than the simulator needs
// for the sizes one debugs with (a 256^3 tiled matmul takes 0.14 s), so
// that only a kernel that never returns reaches it.
const DefaultTimeout = time.Minute

// timeout resolves the time budget; 0 means none.
func (c *Config) timeout() (time.Duration, *Error) {
	switch {
	case c.Timeout < 0:
		return 0, nil
	case c.Timeout > 0:
		return c.Timeout, nil
	}
	s := strings.TrimSpace(os.Getenv("GOCU_SIM_TIMEOUT"))
	switch {
	case s == "":
		return DefaultTimeout, nil
	case s == "0" || strings.EqualFold(s, "off") || strings.EqualFold(s, "none"):
		return 0, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil || d < 0 {
		return 0, &Error{Kind: KindUsage, Msg: fmt.Sprintf("GOCU_SIM_TIMEOUT=%q is not a duration such as 30s or 2m, or off", s)}
	}
	return d, nil
}

// shape is a launch shape with zero Y and Z replaced by 1.
func shape(d kernel.Dim3) kernel.Dim3 {
	if d.Y == 0 {
		d.Y = 1
	}
	if d.Z == 0 {
		d.Z = 1
	}
	return d
}

// check validates the configuration against the limits; lim must be
// resolved already.
func (c *Config) check(lim *Limits) *Error {
	bad := func(format string, args ...any) *Error {
		return &Error{Kind: KindLimit, Msg: fmt.Sprintf(format, args...) + " on " + lim.Name}
	}
	g, b := shape(c.Grid), shape(c.Block)
	axes := [3]string{"X", "Y", "Z"}
	gv, bv := [3]int32{g.X, g.Y, g.Z}, [3]int32{b.X, b.Y, b.Z}
	mg, mb := [3]int32{lim.MaxGrid.X, lim.MaxGrid.Y, lim.MaxGrid.Z}, [3]int32{lim.MaxBlock.X, lim.MaxBlock.Y, lim.MaxBlock.Z}
	for i := range 3 {
		if bv[i] < 1 || bv[i] > mb[i] {
			return bad("block %s = %d is outside [1, %d]", axes[i], bv[i], mb[i])
		}
		if gv[i] < 1 || gv[i] > mg[i] {
			return bad("grid %s = %d is outside [1, %d]", axes[i], gv[i], mg[i])
		}
	}
	if n := b.Size(); n > lim.MaxThreadsPerBlock {
		return bad("a block of %dx%dx%d = %d threads exceeds %d threads per block", b.X, b.Y, b.Z, n, lim.MaxThreadsPerBlock)
	}
	if c.DynamicSharedBytes < 0 {
		return &Error{Kind: KindUsage, Msg: fmt.Sprintf("negative dynamic shared memory size %d", c.DynamicSharedBytes)}
	}
	if c.DynamicSharedBytes > lim.MaxShared {
		return bad("%d bytes of dynamic shared memory exceed the %d-byte limit per block", c.DynamicSharedBytes, lim.MaxShared)
	}
	return nil
}

func (c *Config) limits() Limits {
	if c.Limits == (Limits{}) {
		return H100
	}
	l := c.Limits
	if l.Name == "" {
		l.Name = "the configured device"
	}
	return l
}

func (c *Config) workers() int {
	if c.Workers > 0 {
		return c.Workers
	}
	return runtime.GOMAXPROCS(0)
}

// seed resolves the schedule seed: the configured one, GOCU_SIM_SEED, or a
// fresh random one (never 0).
func (c *Config) seed() (uint64, *Error) {
	if c.Seed != 0 {
		return c.Seed, nil
	}
	if s := strings.TrimSpace(os.Getenv("GOCU_SIM_SEED")); s != "" {
		v, err := strconv.ParseUint(s, 0, 64)
		if err != nil {
			return 0, &Error{Kind: KindUsage, Msg: fmt.Sprintf("GOCU_SIM_SEED=%q is not an unsigned integer", s)}
		}
		if v != 0 {
			return v, nil
		}
	}
	for {
		if v := rand.Uint64(); v != 0 {
			return v, nil
		}
	}
}

// checked reports whether the launch runs in checked mode.
func (c *Config) checked() bool {
	if c.Checked {
		return true
	}
	v := strings.TrimSpace(os.Getenv("GOCU_SIM_CHECKED"))
	return v != "" && v != "0" && !strings.EqualFold(v, "false")
}
