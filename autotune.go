package gocu

import (
	"encoding/json"
	"errors"
	"fmt"
	"math/bits"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/gocu-dev/gocu/cuda"
	"github.com/gocu-dev/gocu/meta"
)

// Tuning says what Autotune tunes and how.
type Tuning struct {
	// Kernel is the Go kernel function being tuned, one translated by gocu
	// gen (kernels.Gray): its package, name and source hash identify the
	// stored choice, so that editing the kernel discards it. For anything
	// else (a CUDA C kernel, a sequence of launches) leave it nil and set
	// Name and Version.
	Kernel any
	// Name identifies the tuned code when Kernel is nil, and Version must
	// change whenever the code does (a hash of its source, for example).
	Name, Version string
	// Shape is the problem size, such as {n} or {m, n, k}. Each entry is
	// reduced to its power-of-two bucket (1000 and 1023 share one, 1024
	// starts the next), the shape class: a choice is reused for problems
	// of the same order of magnitude and tuned anew for others.
	Shape []int
	// Written lists the buffers the launch writes. While Autotune times
	// the candidates, each is replaced by a scratch copy, refreshed from
	// the real contents before every candidate, so that no candidate sees
	// another's results (an in-place kernel stays correct); the final
	// launch of the winner runs on the real buffers. They must be the very
	// *Buffer values the launch passes, and nothing else may use them
	// during Autotune.
	Written []AnyBuffer
	// Stream is the stream the launch function queues its work on (nil:
	// the device's default stream). Candidates are timed with CUDA events
	// recorded on it.
	Stream *Stream
	// Warmup is the number of untimed launches of each candidate before
	// its timing (default 2; the first launch also compiles the kernel).
	Warmup int
	// Reps is the number of launches in each of the five timed samples of
	// a candidate; 0 chooses enough for about 1 ms of GPU time per sample
	// (between 1 and 100).
	Reps int
}

// Tuned is what Autotune found.
type Tuned[C any] struct {
	Best  C   // the fastest candidate
	Index int // its index in the candidates
	// Times is the median GPU time of one launch of each candidate (0 for
	// a candidate that failed, and for all when nothing was timed).
	Times []time.Duration
	// Errors says why a candidate could not run (nil for those that ran):
	// a block too large for the kernel's registers, too much shared
	// memory, ... Such candidates are skipped.
	Errors []error
	// Cached is set when the choice was read from the cache directory or
	// made earlier in this process: nothing was timed.
	Cached bool
}

// Autotune finds the fastest of candidate launch configurations (block
// shapes, or any tunable parameter: C is the candidates' type) and runs
// the launch once with it. launch(c) must queue the work for candidate c
// on t.Stream; Autotune calls it for every candidate after t.Warmup
// untimed calls, times five samples of t.Reps calls each with CUDA events
// and keeps the candidate with the smallest median. Candidates whose
// launch fails (an invalid configuration) are skipped; a sticky error that
// loses the CUDA context ends the tuning.
//
// The choice is kept for the rest of the process and stored in the cache
// directory (nvrtc.DefaultDir()/autotune, private to the user; GOCU_CACHE=off
// keeps it in memory only), keyed by the kernel's identity and source hash,
// the GPU's name, compute capability and driver version, the shape class
// and the candidate list, so that the next process launches the winner at
// once. A stored entry is verified when read (its checksum, its key and
// that it names one of the candidates) and is tuned again, never trusted,
// when it fails.
//
// Candidates must be values encoding/json can encode (Config is), so that
// the stored choice can be matched against them; others are tuned once per
// process.
//
// On the simulator there is nothing to time: Autotune runs the launch with
// the first candidate and returns it.
func Autotune[C any](d *Device, t Tuning, candidates []C, launch func(C) error) (Tuned[C], error) {
	var res Tuned[C]
	if d == nil || d.kind == 0 {
		return res, errors.New("gocu: Autotune: no device (a nil or zero *gocu.Device)")
	}
	if len(candidates) == 0 {
		return res, errors.New("gocu: Autotune: no candidates")
	}
	if launch == nil {
		return res, errors.New("gocu: Autotune: nil launch function")
	}
	if d.kind != CUDA {
		res.Best, res.Index = candidates[0], 0
		return res, launch(candidates[0])
	}
	env, err := cudaTuneEnv(d, t.Stream)
	if err != nil {
		return res, err
	}
	defer env.close()
	return autotune(env, t, candidates, launch)
}

// A tuneEnv is the device side of tuning: its identity for the cache key,
// a timer and a place to store choices. Tests replace it with a fake.
type tuneEnv struct {
	device string       // name, compute capability and driver version
	dir    string       // where choices are stored, "" for nowhere
	stream *cuda.Stream // where scratch copies are refreshed
	// time runs launch reps times and returns the GPU time of one launch.
	time  func(launch func() error, reps int) (time.Duration, error)
	close func()
}

// cudaTuneEnv times with CUDA events on stream s of d.
func cudaTuneEnv(d *Device, s *Stream) (*tuneEnv, error) {
	cs, err := d.CUDAStream(s)
	if err != nil {
		return nil, fmt.Errorf("gocu: Autotune: %w", err)
	}
	drv, err := cuda.DriverVersion()
	if err != nil {
		return nil, err
	}
	major, minor := d.gpu.ComputeCapability()
	start, err := d.gpu.NewEvent(cuda.EventDefault)
	if err != nil {
		return nil, err
	}
	end, err := d.gpu.NewEvent(cuda.EventDefault)
	if err != nil {
		start.Close()
		return nil, err
	}
	env := &tuneEnv{
		device: fmt.Sprintf("%s sm_%d%d driver %d", d.gpu.Name(), major, minor, drv),
		stream: cs,
		close:  func() { start.Close(); end.Close() },
	}
	env.dir, _ = tuneDir()
	env.time = func(launch func() error, reps int) (time.Duration, error) {
		if err := start.Record(cs); err != nil {
			return 0, err
		}
		for range reps {
			if err := launch(); err != nil {
				return 0, err
			}
		}
		if err := end.Record(cs); err != nil {
			return 0, err
		}
		if err := end.Synchronize(); err != nil {
			return 0, err
		}
		el, err := cuda.Elapsed(start, end)
		return el / time.Duration(reps), err
	}
	return env, nil
}

// shapeClass returns the shape class of a problem size as Autotune keys
// it: the power-of-two bucket of each entry, as "2^10x2^12".
func shapeClass(shape []int) string {
	parts := make([]string, len(shape))
	for i, n := range shape {
		if n <= 0 {
			parts[i] = strconv.Itoa(n)
			continue
		}
		parts[i] = "2^" + strconv.Itoa(bits.Len(uint(n))-1)
	}
	return strings.Join(parts, "x")
}

// identity returns the name and version of the tuned code.
func (t *Tuning) identity() (name, version string, err error) {
	if t.Kernel == nil {
		if t.Name == "" || t.Version == "" {
			return "", "", errors.New("gocu: Autotune: set Tuning.Kernel to a kernel translated by gocu gen, or Tuning.Name and Tuning.Version")
		}
		return t.Name, t.Version, nil
	}
	m, k, ok := meta.Lookup(t.Kernel)
	if !ok {
		return "", "", fmt.Errorf("gocu: Autotune: Tuning.Kernel (%T) is not a kernel translated by gocu gen: run go generate, or set Name and Version instead", t.Kernel)
	}
	return m.Package + "." + k.Name, m.SHA256, nil
}

// autotune is Autotune on a tuning environment.
func autotune[C any](env *tuneEnv, t Tuning, candidates []C, launch func(C) error) (Tuned[C], error) {
	res := Tuned[C]{Times: make([]time.Duration, len(candidates)), Errors: make([]error, len(candidates))}
	name, version, err := t.identity()
	if err != nil {
		return res, err
	}
	key := tuneKey{Name: name, Version: version, Device: env.device, Shape: shapeClass(t.Shape)}
	if enc, err := json.Marshal(candidates); err == nil {
		key.Candidates = string(enc)
	}
	if i, ok := recall(env.dir, key, candidates); ok {
		res.Best, res.Index, res.Cached = candidates[i], i, true
		return res, launch(candidates[i])
	}

	scratch := make([]scratchBuf, 0, len(t.Written))
	restore := func() {
		for _, s := range scratch {
			s.restore()
		}
		scratch = nil
	}
	for _, w := range t.Written {
		if w == nil {
			restore()
			return res, errors.New("gocu: Autotune: nil buffer in Tuning.Written")
		}
		s, err := w.scratch(env.stream)
		if err != nil {
			restore()
			return res, fmt.Errorf("gocu: Autotune: scratch copy of %v: %w", w, err)
		}
		scratch = append(scratch, s)
	}
	best := -1
	for i, c := range candidates {
		if err := timeCandidate(env, &t, scratch, func() error { return launch(c) }, &res.Times[i]); err != nil {
			if errors.Is(err, cuda.ErrContextLost) {
				restore()
				return res, fmt.Errorf("gocu: Autotune: candidate %d: %w", i, err)
			}
			res.Errors[i] = err
			continue
		}
		if best < 0 || res.Times[i] < res.Times[best] {
			best = i
		}
	}
	restore()
	if best < 0 {
		var b strings.Builder
		b.WriteString("gocu: Autotune: no candidate could run:")
		for i, e := range res.Errors {
			fmt.Fprintf(&b, "\n  candidate %d: %v", i, e)
		}
		return res, errors.New(b.String())
	}
	res.Best, res.Index = candidates[best], best
	remember(env.dir, key, best, res.Times)
	return res, launch(candidates[best])
}

// timeCandidate warms a candidate up and stores the median time of one
// launch in *out.
func timeCandidate(env *tuneEnv, t *Tuning, scratch []scratchBuf, launch func() error, out *time.Duration) error {
	for _, s := range scratch {
		if err := s.reset(); err != nil {
			return err
		}
	}
	warm := t.Warmup
	if warm <= 0 {
		warm = 2
	}
	for range warm {
		if err := launch(); err != nil {
			return err
		}
	}
	reps := t.Reps
	if reps <= 0 {
		one, err := env.time(launch, 1)
		if err != nil {
			return err
		}
		reps = 100
		if one > 0 {
			reps = int(min(100, max(1, time.Millisecond/one)))
		}
	}
	const samples = 5
	var ts [samples]time.Duration
	for i := range ts {
		d, err := env.time(launch, reps)
		if err != nil {
			return err
		}
		ts[i] = d
	}
	slices.Sort(ts[:])
	*out = ts[samples/2]
	return nil
}
