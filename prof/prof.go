package prof

import (
	"errors"
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/gocu-dev/gocu/cuda"
	"github.com/gocu-dev/gocu/sim"
)

// Options configure a profiling session.
type Options struct {
	// File, when set, receives the Chrome trace: it is created when
	// profiling starts, brought up to date every Interval while it runs
	// (always left a complete, valid trace), and completed by Flush and
	// Stop.
	File string
	// MaxEvents caps the events kept for Profile.Events and the trace
	// (default 1,000,000, about 500 bytes each); later events still count
	// in the summary.
	MaxEvents int
	// Interval is how often finished GPU timings are collected (without
	// waiting for the device) and File is updated; default 100 ms.
	Interval time.Duration
}

// EnvFile is the environment variable that profiles a whole program: its
// value is the trace file to write (see the package documentation).
const EnvFile = "GOCU_PROFILE"

const (
	defaultMaxEvents = 1_000_000
	defaultInterval  = 100 * time.Millisecond
	anchorEvery      = time.Second
)

// Errors of Start and Stop.
var (
	ErrRunning    = errors.New("prof: profiling is already running")
	ErrNotRunning = errors.New("prof: profiling is not running")
)

var (
	mu  sync.Mutex // guards cur
	cur *session
)

// Start starts profiling with the default options. It returns ErrRunning if
// profiling is already on (for instance through GOCU_PROFILE).
func Start() error { return StartWith(Options{}) }

// StartWith starts profiling with the given options.
func StartWith(o Options) error {
	mu.Lock()
	defer mu.Unlock()
	if cur != nil {
		if cur.opts.File != "" {
			return fmt.Errorf("%w (writing %s)", ErrRunning, cur.opts.File)
		}
		return ErrRunning
	}
	s, err := newSession(o, newCUDAGPU)
	if err != nil {
		return err
	}
	cur = s
	s.install()
	return nil
}

// Running reports whether profiling is on.
func Running() bool {
	mu.Lock()
	defer mu.Unlock()
	return cur != nil
}

// Stop stops profiling and returns what was recorded. It waits for the
// device to finish the recorded work, so that every duration is known, and
// completes the session's File, if any.
func Stop() (*Profile, error) {
	mu.Lock()
	s := cur
	cur = nil
	mu.Unlock()
	if s == nil {
		return nil, ErrNotRunning
	}
	return s.stop()
}

// Flush collects every recorded operation, waiting for the device to
// finish the recorded work, and writes the session's File, and brings
// the memory history's File up to date. Profiling goes on. It does
// nothing when neither is on or has a File, so programs can always call
// it on their way out:
//
//	defer prof.Flush()
func Flush() error {
	merr := flushMemory() // the GOCU_MEMORY_HISTORY file, if any
	mu.Lock()
	s := cur
	mu.Unlock()
	if s == nil {
		return merr
	}
	s.collect(true)
	return errors.Join(s.writeFile(), merr)
}

// Snapshot returns what was recorded so far, waiting for the device to
// finish the recorded work. Profiling goes on.
func Snapshot() (*Profile, error) {
	mu.Lock()
	s := cur
	mu.Unlock()
	if s == nil {
		return nil, ErrNotRunning
	}
	s.collect(true)
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.prof.clone(), s.collectErr
}

// session is one profiling run.
type session struct {
	opts  Options
	began time.Time

	mu         sync.Mutex // guards prof, closed, file, collectErr
	prof       *Profile
	closed     bool
	file       *traceFile
	collectErr error

	gmu    sync.Mutex // guards gpus
	gpus   map[*cuda.Device]*gpu
	newGPU func(*cuda.Device) (*gpu, error)

	collectMu sync.Mutex // one collection at a time
	installed bool       // hooked into cuda and sim, with the collector running
	quit      chan struct{}
	done      chan struct{}
}

func newSession(o Options, newGPU func(*cuda.Device) (*gpu, error)) (*session, error) {
	if o.MaxEvents <= 0 {
		o.MaxEvents = defaultMaxEvents
	}
	if o.Interval <= 0 {
		o.Interval = defaultInterval
	}
	s := &session{opts: o, began: time.Now(), gpus: map[*cuda.Device]*gpu{}, newGPU: newGPU,
		quit: make(chan struct{}), done: make(chan struct{})}
	s.prof = newProfile(s.began)
	if o.File != "" {
		f, err := createTraceFile(o.File, s.began)
		if err != nil {
			return nil, err
		}
		s.file = f
	}
	return s, nil
}

// install hooks the session into cuda and sim and starts the collector.
func (s *session) install() {
	s.installed = true
	cuda.SetTracer(cudaTracer{s})
	sim.SetTracer(simTracer{s})
	go s.loop()
}

// now is the time since the session began.
func (s *session) now() time.Duration { return time.Since(s.began) }

func (s *session) loop() {
	defer close(s.done)
	t := time.NewTicker(s.opts.Interval)
	defer t.Stop()
	for {
		select {
		case <-s.quit:
			return
		case <-t.C:
			s.collect(false)
			if err := s.writeFile(); err != nil {
				s.mu.Lock()
				if s.collectErr == nil {
					s.collectErr = err
				}
				s.mu.Unlock()
			}
		}
	}
}

func (s *session) stop() (*Profile, error) {
	if s.installed {
		cuda.SetTracer(nil)
		sim.SetTracer(nil)
		close(s.quit)
		<-s.done
	}
	s.collect(true)
	s.mu.Lock()
	s.closed = true // from here on gpu() creates nothing and finished() records nothing
	s.mu.Unlock()
	var errs []error
	s.gmu.Lock()
	for _, g := range s.gpus {
		errs = append(errs, g.close())
	}
	s.gmu.Unlock()
	errs = append(errs, s.writeFile())
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.file != nil {
		errs = append(errs, s.file.close())
		s.file = nil
	}
	errs = append(errs, s.collectErr)
	return s.prof.clone(), errors.Join(errs...)
}

// finished records a complete event.
func (s *session) finished(evs ...Event) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return
	}
	for _, e := range evs {
		s.prof.add(e, s.opts.MaxEvents)
	}
}

// collect reads the GPU timings that are ready (all of them, waiting for
// the device, when wait is set) and records their events.
func (s *session) collect(wait bool) {
	s.collectMu.Lock()
	defer s.collectMu.Unlock()
	s.gmu.Lock()
	gpus := make([]*gpu, 0, len(s.gpus))
	for _, g := range s.gpus {
		gpus = append(gpus, g)
	}
	s.gmu.Unlock()
	for _, g := range gpus {
		s.finished(g.collect(wait)...)
	}
}

// writeFile brings the trace file up to date.
func (s *session) writeFile() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.file == nil {
		return nil
	}
	return s.file.update(s.prof)
}

// gpu returns the profiler's state for device d, creating it on first use.
func (s *session) gpu(d *cuda.Device) (*gpu, error) {
	s.gmu.Lock()
	defer s.gmu.Unlock()
	if g := s.gpus[d]; g != nil {
		return g, nil
	}
	s.mu.Lock()
	closed := s.closed
	s.mu.Unlock()
	if closed {
		return nil, errClosed
	}
	g, err := s.newGPU(d)
	if err != nil {
		return nil, err
	}
	s.gpus[d] = g
	s.mu.Lock()
	s.prof.Devices[g.name] = g.desc
	s.mu.Unlock()
	return g, nil
}

// envStart starts profiling when GOCU_PROFILE names a file.
func envStart() {
	path := os.Getenv(EnvFile)
	if path == "" {
		return
	}
	if err := StartWith(Options{File: path}); err != nil {
		fmt.Fprintf(os.Stderr, "gocu: %s=%s: profiling not started: %v\n", EnvFile, path, err)
	}
}

// envStartMemory starts a memory history when GOCU_MEMORY_HISTORY names a
// file.
func envStartMemory() {
	path := os.Getenv(EnvMemoryFile)
	if path == "" {
		return
	}
	if err := RecordMemoryHistory(MemoryOptions{File: path}); err != nil {
		fmt.Fprintf(os.Stderr, "gocu: %s=%s: memory history not recorded: %v\n", EnvMemoryFile, path, err)
	}
}

func init() {
	envStart()
	envStartMemory()
}
