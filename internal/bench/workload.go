package bench

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"

	"github.com/gocu-dev/gocu"
	"github.com/gocu-dev/gocu/cuda"
)

// Device is where a workload runs; Workload.Devices is a set of them.
type Device uint8

// The devices.
const (
	CUDA Device = 1 << iota // a GPU, through gocu and the driver
	Sim                     // Go kernels on the CPU simulator
	CPU                     // plain Go on all cores (the array package's CPU backend)
)

func (d Device) String() string {
	var s []string
	for _, x := range []struct {
		d    Device
		name string
	}{{CUDA, "cuda"}, {Sim, "sim"}, {CPU, "cpu"}} {
		if d&x.d != 0 {
			s = append(s, x.name)
		}
	}
	if len(s) == 0 {
		return "none"
	}
	return strings.Join(s, "|")
}

// ParseDevice reads "cuda", "sim" or "cpu".
func ParseDevice(s string) (Device, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "cuda", "gpu":
		return CUDA, nil
	case "sim":
		return Sim, nil
	case "cpu":
		return CPU, nil
	}
	return 0, fmt.Errorf("bench: unknown device %q: want cuda, sim or cpu", s)
}

// Kind says what a workload's figure of merit is.
type Kind uint8

// The kinds of workload.
const (
	Bandwidth Kind = iota + 1 // bytes moved per second
	Compute                   // floating-point operations per second
	Latency                   // time per operation (a launch, a compile)
)

func (k Kind) String() string {
	switch k {
	case Bandwidth:
		return "bandwidth"
	case Compute:
		return "compute"
	case Latency:
		return "latency"
	}
	return fmt.Sprintf("Kind(%d)", k)
}

// Roof is the ceiling a workload's result is compared with.
type Roof uint8

// The roofs.
const (
	// RoofAuto is the roofline at the workload's arithmetic intensity:
	// min(memory bandwidth x intensity, FP32 rate); memory bandwidth alone
	// for a workload that does no arithmetic.
	RoofAuto Roof = iota
	RoofNone      // no ceiling applies (host transfers, latencies)
	RoofTF32      // the roofline with the TF32 tensor-core rate
	RoofBF16      // ... with the bfloat16 tensor-core rate
	RoofFP16      // ... with the float16 tensor-core rate
	RoofInt8      // ... with the int8 tensor-core rate (operations, not FLOP)
	RoofFP8       // ... with the FP8 (e4m3) tensor-core rate
)

// Clock is how a repetition is timed.
type Clock uint8

// The clocks.
const (
	// Events times the GPU work of a repetition with CUDA events on the
	// benchmark's stream (Env.Stream), as the peers in baseline.py do. On
	// the simulator and the CPU it means the wall clock.
	Events Clock = iota
	// Wall times a repetition with the wall clock, from before Run to after
	// the device is synchronised: what a caller waits for (launch
	// overhead, compilation).
	Wall
)

// Ceiling marks a workload that measures a ceiling of the device; such
// workloads run first, whatever is selected.
type Ceiling uint8

// The ceilings.
const (
	NoCeiling  Ceiling = iota
	MemoryRoof         // copy bandwidth, bytes read + written
	FP32Roof           // FP32 matrix multiply rate
	TF32Roof           // TF32 tensor-core matrix multiply rate
	// The low-precision tensor-core rates (library matrix products). They
	// are measured only when a selected workload is compared with them.
	BF16Roof
	FP16Roof
	Int8Roof
	FP8Roof
)

// roofOf is the Roof a workload compared with ceiling c uses.
func roofOf(c Ceiling) Roof {
	switch c {
	case TF32Roof:
		return RoofTF32
	case BF16Roof:
		return RoofBF16
	case FP16Roof:
		return RoofFP16
	case Int8Roof:
		return RoofInt8
	case FP8Roof:
		return RoofFP8
	}
	return RoofAuto
}

// Metric is the unit of a peer's figure in baseline.json.
type Metric uint8

// The metrics of baseline.json keys.
const (
	Millis      Metric = iota + 1 // milliseconds per repetition
	MicrosPerOp                   // microseconds per operation
	GBps                          // GB/s
	TFLOPs                        // TFLOP/s
	Seconds                       // seconds per repetition
	MillisPerOp                   // milliseconds per operation (a training step)
)

// Peer names the figure of another library for the same workload in the
// anchors' baseline.json (bench/anchors/baseline.py).
type Peer struct {
	Name   string // "CuPy RawKernel", "torch"
	Key    string // "gray_4096_cupy_rawkernel_ms"
	Metric Metric
}

// Workload is one benchmark. Register adds it to the registry; gocu bench
// runs the registered workloads that match the device and the selection.
type Workload struct {
	Name    string // unique per device; what --only selects
	Doc     string // one line: what runs, at what size
	Kind    Kind
	Devices Device // where it runs
	// Suites are the suites it belongs to besides "all", e.g. "runtime".
	// The first one is the group it is listed under in the table (the
	// ceilings are listed first, under "ceilings").
	Suites  []string
	Clock   Clock
	Roof    Roof
	Ceiling Ceiling // the ceiling it measures, if any
	// Unit is the time unit of the per-operation figure when the Case
	// has Ops: "ns", "us" or "ms" (default "us").
	Unit   string
	Reps   int // default repetitions (0: 20, or Options.Reps)
	Warmup int // repetitions before timing (0: 2)
	Peers  []Peer
	// Setup prepares one run of the workload on e: it allocates, fills the
	// inputs with random values and poisons the outputs, and returns the
	// Case to time. It may return an error wrapping ErrSkip when the device
	// lacks what the workload needs (a library, a feature).
	Setup func(e *Env) (*Case, error)
}

// Case is a workload set up on a device.
type Case struct {
	// Run does one repetition. With the Events clock it queues its GPU work
	// on e.Stream; the runner records events around it and waits.
	Run func() error
	// Check verifies the output of the first Run against a CPU reference
	// (the runner synchronises the device first). A wrong result fails the
	// benchmark. It may be nil only with NoCheck set.
	Check   func() error
	NoCheck string
	// Close releases what Setup allocated (after the device is idle).
	Close func() error
	// Bytes and Flops are the bytes moved and floating-point operations of
	// one Run; Ops is the number of operations in one Run whose time each
	// is reported (launches, threads, compilations).
	Bytes, Flops float64
	Ops          int
	// Stream, when not nil, is the stream the Events clock records on: the
	// stream the workload's GPU work goes to when it is not Env.CUStream
	// (the array package queues everything on a stream of its own).
	Stream *cuda.Stream
	// Note, when not nil, says something about the timed runs (a peak of
	// memory); the table prints it under the results.
	Note func() string
}

// ErrSkip marks a workload that cannot run on this device.
var ErrSkip = errors.New("skipped")

// Skipf returns an error wrapping ErrSkip.
func Skipf(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrSkip, fmt.Sprintf(format, args...))
}

// Env is what a workload is set up with.
type Env struct {
	Device Device
	// Dev is the gocu device: the GPU for CUDA, the simulator for Sim; nil
	// on the CPU.
	Dev *gocu.Device
	// GPU is the driver's device (CUDA only).
	GPU *cuda.Device
	// Stream is the stream the runner times on: the device's default
	// stream (nil), so that synchronous copies and setup work are ordered
	// with it. CUStream is the driver's stream behind it.
	Stream   *gocu.Stream
	CUStream *cuda.Stream
	// Small asks for small sizes (tests); peers are not compared then.
	Small bool
	// Rand is seeded per run; workloads draw their inputs from it.
	Rand *rand.Rand

	mu     sync.Mutex
	shared map[string]any
	closes []func() error
}

// Shared returns the value made by mk for key, making it once per run, so
// that workloads can share inputs (the matrices of the matmuls). close, if
// not nil, runs when the whole run ends.
func (e *Env) Shared(key string, mk func() (v any, close func() error, err error)) (any, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if v, ok := e.shared[key]; ok {
		return v, nil
	}
	v, c, err := mk()
	if err != nil {
		return nil, err
	}
	if e.shared == nil {
		e.shared = map[string]any{}
	}
	e.shared[key] = v
	if c != nil {
		e.closes = append(e.closes, c)
	}
	return v, nil
}

func (e *Env) close() error {
	var errs []error
	for i := len(e.closes) - 1; i >= 0; i-- {
		errs = append(errs, e.closes[i]())
	}
	e.closes, e.shared = nil, nil
	return errors.Join(errs...)
}

var (
	regMu    sync.Mutex
	registry []*Workload
)

// Register adds a workload to the registry. It panics on a programming
// error: an empty name, no Setup or Devices, or a name already registered
// for one of the same devices. Register from an init function:
//
//	func init() {
//		bench.Register(bench.Workload{
//			Name: "axpy", Doc: "y = a x + y, 2^26 float32", Kind: bench.Bandwidth, Devices: bench.CUDA | bench.CPU,
//			Suites: []string{"mine"}, Setup: setupAxpy,
//		})
//	}
func Register(w Workload) {
	if w.Name == "" || w.Setup == nil || w.Devices == 0 || w.Kind == 0 {
		panic(fmt.Sprintf("bench: Register(%q): a workload needs a Name, a Kind, Devices and Setup", w.Name))
	}
	regMu.Lock()
	defer regMu.Unlock()
	for _, r := range registry {
		if r.Name == w.Name && r.Devices&w.Devices != 0 {
			panic(fmt.Sprintf("bench: workload %q registered twice for %v", w.Name, r.Devices&w.Devices))
		}
	}
	registry = append(registry, &w)
}

// Workloads returns the registered workloads that run on d (all of them
// for d == 0), by group as the table lists them (the ceilings, runtime,
// lecture, go, arrays, then other suites), in registration order within a
// group.
func Workloads(d Device) []*Workload {
	regMu.Lock()
	defer regMu.Unlock()
	var out []*Workload
	for _, w := range registry {
		if d == 0 || w.Devices&d != 0 {
			out = append(out, w)
		}
	}
	slices.SortStableFunc(out, func(a, b *Workload) int { return groupRank(groupOf(a)) - groupRank(groupOf(b)) })
	return out
}

// Suites returns the names of the suites the workloads of d belong to,
// "all" first.
func Suites(d Device) []string {
	set := map[string]bool{}
	for _, w := range Workloads(d) {
		for _, s := range w.Suites {
			set[s] = true
		}
	}
	out := []string{"all"}
	for s := range set {
		out = append(out, s)
	}
	slices.Sort(out[1:])
	return out
}

// selectWorkloads returns the workloads of d to run: those named in only
// (all of them when only is empty) that belong to suite ("" or "all": any).
// Unknown names and suites are errors that list the known ones.
func selectWorkloads(d Device, only []string, suite string) ([]*Workload, error) {
	all := Workloads(d)
	if suite != "" && suite != "all" && !slices.Contains(Suites(d), suite) {
		return nil, fmt.Errorf("bench: no suite %q on %v; suites: %s", suite, d, strings.Join(Suites(d), ", "))
	}
	var names []string
	for _, w := range all {
		names = append(names, w.Name)
	}
	want := map[string]bool{}
	for _, n := range only {
		n = strings.TrimSpace(n)
		if n == "" {
			continue
		}
		if !slices.Contains(names, n) {
			return nil, fmt.Errorf("bench: no workload %q on %v; workloads: %s", n, d, strings.Join(names, ", "))
		}
		want[n] = true
	}
	var out []*Workload
	for _, w := range all {
		if len(want) > 0 && !want[w.Name] {
			continue
		}
		if suite != "" && suite != "all" && !slices.Contains(w.Suites, suite) {
			continue
		}
		out = append(out, w)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("bench: nothing selected on %v (suite %q, only %q)", d, suite, strings.Join(only, ","))
	}
	return out, nil
}
