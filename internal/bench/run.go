package bench

import (
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"runtime"
	"runtime/debug"
	"slices"
	"strings"
	"time"

	"github.com/gocu-dev/gocu/internal/cli"

	"github.com/gocu-dev/gocu"
	"github.com/gocu-dev/gocu/cuda"
)

// Options say what Run measures.
type Options struct {
	Device Device   // CUDA, Sim or CPU
	Only   []string // workload names; empty: all
	Suite  string   // "" or "all": every suite
	// Reps is the number of timed repetitions of every workload; 0 takes
	// each workload's default (20 unless it says otherwise).
	Reps int
	// Small runs small sizes (tests, a quick look); the peers' figures are
	// not compared then.
	Small bool
	// Seed seeds the random inputs; 0 takes a random seed.
	Seed uint64
	// Progress, when not nil, receives a progress bar (use NewProgress).
	Progress *Progress
}

// ErrFailed is returned (wrapped) when a workload failed: an error, or a
// wrong result.
var ErrFailed = errors.New("bench: a workload failed")

const (
	defaultReps   = 20
	defaultWarmup = 2
)

// Run measures the device's ceilings, then the selected workloads, and
// returns the report. The error wraps ErrFailed when a workload failed,
// with the report still returned; other errors (no such device, an
// unknown workload) come with a nil report.
func Run(o Options) (*Report, error) {
	if o.Device == 0 {
		o.Device = CUDA
	}
	sel, err := selectWorkloads(o.Device, o.Only, o.Suite)
	if err != nil {
		return nil, err
	}
	seed := o.Seed
	if seed == 0 {
		seed = rand.Uint64()
	}
	e := &Env{Device: o.Device, Small: o.Small, Rand: rand.New(rand.NewPCG(seed, 0x6f637567))}
	rep := &Report{Schema: Schema, Date: time.Now(), Small: o.Small,
		Host: HostInfo{OS: runtime.GOOS, Arch: runtime.GOARCH, CPUs: runtime.NumCPU(), Go: runtime.Version()}}
	if err := openDevice(e, rep); err != nil {
		return nil, err
	}
	defer e.close()

	// Ceilings first, whatever is selected; a selected ceiling workload is
	// reported with the others.
	var plan []*Workload
	for _, c := range []Ceiling{MemoryRoof, FP32Roof, TF32Roof, BF16Roof, FP16Roof, Int8Roof, FP8Roof} {
		if c >= BF16Roof && !needsCeiling(sel, c) {
			continue // a low-precision ceiling only for workloads compared with it
		}
		for _, w := range Workloads(o.Device) {
			if w.Ceiling == c {
				plan = append(plan, w)
			}
		}
	}
	for _, w := range sel {
		if !slices.Contains(plan, w) {
			plan = append(plan, w)
		}
	}
	o.Progress.start(len(plan))
	var timer *eventTimer
	if o.Device == CUDA {
		if timer, err = newEventTimer(e.GPU); err != nil {
			return nil, err
		}
		defer timer.close()
	}
	var sources []string
	for i, w := range plan {
		o.Progress.workload(i, w.Name)
		res := runOne(e, w, o.Reps, timer, o.Progress)
		if w.Ceiling != NoCeiling && res.Error == "" && res.Skipped == "" {
			switch w.Ceiling {
			case MemoryRoof:
				rep.Ceilings.MemoryGBps = res.Bytes / res.Seconds / 1e9
				res.Ceiling = "memory"
			case FP32Roof:
				rep.Ceilings.FP32TFLOPs = res.Flops / res.Seconds / 1e12
				res.Ceiling = "fp32"
			case TF32Roof:
				rep.Ceilings.TF32TFLOPs = res.Flops / res.Seconds / 1e12
				res.Ceiling = "tf32"
			case BF16Roof:
				rep.Ceilings.BF16TFLOPs = res.Flops / res.Seconds / 1e12
				res.Ceiling = "bf16"
			case FP16Roof:
				rep.Ceilings.FP16TFLOPs = res.Flops / res.Seconds / 1e12
				res.Ceiling = "fp16"
			case Int8Roof:
				rep.Ceilings.Int8TOPs = res.Flops / res.Seconds / 1e12
				res.Ceiling = "int8"
			case FP8Roof:
				rep.Ceilings.FP8TFLOPs = res.Flops / res.Seconds / 1e12
				res.Ceiling = "fp8"
			}
			sources = append(sources, w.Name)
		}
		if slices.Contains(sel, w) || res.Error != "" {
			rep.Results = append(rep.Results, res)
		}
	}
	o.Progress.done()
	if len(sources) > 0 {
		rep.Ceilings.Source = "measured by " + strings.Join(sources, ", ")
	}
	for i := range rep.Results {
		rep.derive(&rep.Results[i], find(plan, rep.Results[i].Name))
	}
	sortGroups(rep.Results)
	if err := e.close(); err != nil {
		return rep, err
	}
	var failed []string
	for _, r := range rep.Results {
		if r.Error != "" {
			failed = append(failed, r.Name)
		}
	}
	if len(failed) > 0 {
		return rep, fmt.Errorf("%w: %s", ErrFailed, strings.Join(failed, ", "))
	}
	return rep, nil
}

// needsCeiling reports whether a selected workload measures ceiling c or
// is compared with it.
func needsCeiling(sel []*Workload, c Ceiling) bool {
	for _, w := range sel {
		if w.Ceiling == c || w.Roof == roofOf(c) {
			return true
		}
	}
	return false
}

func find(ws []*Workload, name string) *Workload {
	for _, w := range ws {
		if w.Name == name {
			return w
		}
	}
	return nil
}

// openDevice fills in the environment and the report's device.
func openDevice(e *Env, rep *Report) error {
	switch e.Device {
	case CUDA:
		d, err := gocu.Open("cuda")
		if err != nil {
			return fmt.Errorf("bench: --device cuda: %w (the simulator runs with --device sim)", err)
		}
		e.Dev, e.GPU = d, d.CUDA()
		e.CUStream = d.Stream().CUDA() // the device's stream: launches that name none go there
		p := e.GPU.Props()
		rep.Device = DeviceInfo{Kind: "cuda", Name: p.Name, Arch: p.Arch(), Multiprocessors: p.Multiprocessors,
			Memory: p.TotalMemory, TheoreticalGBps: math.Round(p.Bandwidth() / 1e9)}
		rep.Device.Driver, _ = cuda.DriverVersion()
	case Sim:
		d, err := gocu.Open("sim")
		if err != nil {
			return err
		}
		e.Dev = d
		rep.Device = DeviceInfo{Kind: "sim", Name: fmt.Sprintf("CPU simulator on %d cores", runtime.GOMAXPROCS(0))}
	case CPU:
		rep.Device = DeviceInfo{Kind: "cpu", Name: fmt.Sprintf("%s/%s, %d cores", runtime.GOOS, runtime.GOARCH, runtime.GOMAXPROCS(0))}
	default:
		return fmt.Errorf("bench: device %v: want one of cuda, sim, cpu", e.Device)
	}
	return nil
}

// runOne sets up, checks and times one workload.
func runOne(e *Env, w *Workload, reps int, timer *eventTimer, prog *Progress) (res Result) {
	res = Result{Name: w.Name, Group: groupOf(w), Device: e.Device.String(), Kind: w.Kind.String(), Doc: w.Doc, Clock: "wall"}
	if e.Device == CUDA && w.Clock == Events {
		res.Clock = "cuda events"
	}
	defer func() {
		if r := recover(); r != nil {
			res.Error = fmt.Sprintf("panic: %v\n%s", r, debug.Stack())
		}
	}()
	c, err := w.Setup(e)
	if errors.Is(err, ErrSkip) {
		res.Skipped = err.Error()
		return res
	}
	if err != nil {
		res.Error = "setup: " + err.Error()
		return res
	}
	sync := func() error {
		if e.GPU != nil {
			return e.GPU.Synchronize()
		}
		return nil
	}
	defer func() {
		err := sync()
		if c.Close != nil {
			err = errors.Join(err, c.Close())
		}
		if err != nil && res.Error == "" {
			res.Error = "close: " + err.Error()
		}
	}()
	if c.Check == nil && c.NoCheck == "" {
		res.Error = "the workload has no correctness check"
		return res
	}
	if reps <= 0 {
		reps = orDefault(w.Reps, defaultReps)
	}
	warm := orDefault(w.Warmup, defaultWarmup)
	// The first run is checked against the CPU reference.
	if err := errors.Join(sync(), c.Run(), sync()); err != nil {
		res.Error = err.Error()
		return res
	}
	if c.Check != nil {
		if err := c.Check(); err != nil {
			res.Error = "wrong result: " + err.Error()
			return res
		}
	}
	for range warm - 1 {
		if err := c.Run(); err != nil {
			res.Error = err.Error()
			return res
		}
	}
	if err := sync(); err != nil {
		res.Error = err.Error()
		return res
	}
	times := make([]float64, 0, reps)
	for i := range reps {
		prog.rep(i, reps)
		var t float64
		var err error
		if timer != nil && w.Clock == Events {
			s := e.CUStream
			if c.Stream != nil {
				s = c.Stream
			}
			t, err = timer.time(s, c.Run)
		} else {
			t0 := time.Now()
			err = errors.Join(c.Run(), sync())
			t = time.Since(t0).Seconds()
		}
		if err != nil {
			res.Error = err.Error()
			return res
		}
		times = append(times, t)
	}
	slices.Sort(times)
	res.Reps = reps
	res.Seconds, res.Min, res.Max = times[len(times)/2], times[0], times[len(times)-1]
	res.Bytes, res.Flops, res.Ops = c.Bytes, c.Flops, c.Ops
	if c.Note != nil {
		res.Note = c.Note()
	}
	return res
}

// groups are the table's groups, in the order it lists them; other
// groups follow in the order of their first workload.
var groups = []string{"ceilings", "runtime", "lecture", "go", "arrays", "training"}

// groupOf returns the group a workload is listed under: "ceilings" for
// the ceilings, else its first suite.
func groupOf(w *Workload) string {
	switch {
	case w.Ceiling != NoCeiling:
		return "ceilings"
	case len(w.Suites) > 0:
		return w.Suites[0]
	}
	return ""
}

// groupRank is the place of a group in the table.
func groupRank(g string) int {
	if i := slices.Index(groups, g); i >= 0 {
		return i
	}
	return len(groups)
}

// sortGroups orders results by group, keeping the order within a group.
func sortGroups(rs []Result) {
	slices.SortStableFunc(rs, func(a, b Result) int { return groupRank(a.Group) - groupRank(b.Group) })
}

func orDefault(v, def int) int {
	if v > 0 {
		return v
	}
	return def
}

// derive computes the rates, the intensity and the share of the ceiling.
func (rep *Report) derive(x *Result, w *Workload) {
	if x.Error != "" || x.Skipped != "" || x.Seconds <= 0 || w == nil {
		return
	}
	if x.Ops > 0 {
		x.Unit = w.Unit
		if x.Unit == "" {
			x.Unit = "us"
		}
		x.PerOp = x.Seconds / float64(x.Ops) * unitScale(x.Unit)
	}
	if x.Bytes > 0 {
		x.GBps = x.Bytes / x.Seconds / 1e9
	}
	if x.Flops > 0 {
		x.TFLOPs = x.Flops / x.Seconds / 1e12
		if x.Bytes > 0 {
			x.Intensity = x.Flops / x.Bytes
		}
	}
	if w.Roof == RoofNone {
		return
	}
	mem := rep.Ceilings.MemoryGBps
	peak, peakName := rep.Ceilings.FP32TFLOPs, "fp32"
	switch w.Roof {
	case RoofTF32:
		peak, peakName = rep.Ceilings.TF32TFLOPs, "tf32"
	case RoofBF16:
		peak, peakName = rep.Ceilings.BF16TFLOPs, "bf16"
	case RoofFP16:
		peak, peakName = rep.Ceilings.FP16TFLOPs, "fp16"
	case RoofInt8:
		peak, peakName = rep.Ceilings.Int8TOPs, "int8"
	case RoofFP8:
		peak, peakName = rep.Ceilings.FP8TFLOPs, "fp8"
	}
	if peak <= 0 && w.Roof >= RoofBF16 {
		// No low-precision ceiling (the CPU computes these in float32).
		peak, peakName = rep.Ceilings.FP32TFLOPs, "fp32"
	}
	switch {
	case x.Flops == 0 && x.Bytes > 0 && mem > 0:
		x.Roof, x.RoofValue, x.Percent = "memory", mem, 100*x.GBps/mem
	case x.Flops > 0:
		roof, name := math.Inf(1), ""
		if peak > 0 {
			roof, name = peak, peakName
		}
		if x.Intensity > 0 && mem > 0 && mem*x.Intensity/1e3 < roof {
			roof, name = mem*x.Intensity/1e3, "memory"
		}
		switch name {
		case "memory": // memory-bound at this intensity: the same share of the bandwidth
			x.Roof, x.RoofValue, x.Percent = name, mem, 100*x.TFLOPs/roof
		case "":
		default:
			x.Roof, x.RoofValue, x.Percent = name, roof, 100*x.TFLOPs/roof
		}
	}
}

// eventTimer times a repetition's GPU work with two CUDA events.
type eventTimer struct{ start, end *cuda.Event }

func newEventTimer(d *cuda.Device) (*eventTimer, error) {
	s, err := d.NewEvent(cuda.EventDefault)
	if err != nil {
		return nil, err
	}
	e, err := d.NewEvent(cuda.EventDefault)
	if err != nil {
		s.Close()
		return nil, err
	}
	return &eventTimer{s, e}, nil
}

func (t *eventTimer) time(s *cuda.Stream, run func() error) (float64, error) {
	if err := t.start.Record(s); err != nil {
		return 0, err
	}
	if err := run(); err != nil {
		return 0, err
	}
	if err := t.end.Record(s); err != nil {
		return 0, err
	}
	if err := t.end.Synchronize(); err != nil {
		return 0, err
	}
	d, err := cuda.Elapsed(t.start, t.end)
	return d.Seconds(), err
}

func (t *eventTimer) close() error { return errors.Join(t.start.Close(), t.end.Close()) }

// Progress draws a progress bar on a terminal. A nil *Progress draws
// nothing.
type Progress struct {
	w     io.Writer
	total int
	i     int
	name  string
	last  time.Time
}

// NewProgress returns a progress bar drawing on w when w is a terminal,
// and nil (no bar) otherwise.
func NewProgress(w io.Writer) *Progress {
	if !IsTerminal(w) {
		return nil
	}
	return &Progress{w: w}
}

// IsTerminal reports whether w is a terminal (a character device), so
// that a progress bar does not end up in a file or a pipe.
func IsTerminal(w io.Writer) bool { return cli.IsTerminal(w) }

func (p *Progress) start(total int) {
	if p != nil {
		p.total = total
	}
}

func (p *Progress) workload(i int, name string) {
	if p == nil {
		return
	}
	p.i, p.name = i, name
	p.draw("")
}

func (p *Progress) rep(k, n int) {
	if p == nil || time.Since(p.last) < 50*time.Millisecond {
		return
	}
	p.draw(fmt.Sprintf(" rep %d/%d", k+1, n))
}

func (p *Progress) draw(detail string) {
	const width = 24
	filled := width * p.i / max(1, p.total)
	bar := strings.Repeat("#", filled) + strings.Repeat(".", width-filled)
	fmt.Fprintf(p.w, "\r\033[K[%s] %d/%d %s%s", bar, p.i+1, p.total, p.name, detail)
	p.last = time.Now()
}

func (p *Progress) done() {
	if p != nil {
		fmt.Fprint(p.w, "\r\033[K")
	}
}
