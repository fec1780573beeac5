package dist

import (
	"fmt"
	"sync"
	"time"
)

// A watchdog keeps an NCCL communicator from hanging its process, as
// torch's NCCL watchdog does: NCCL waits forever for a rank that stopped,
// and reports a crashed one only through ncclCommGetAsyncError. The
// backend records an event after every collective it issues; the watchdog
// polls those events and the asynchronous error, and when a collective has
// not completed within the timeout, or NCCL reports an error, it aborts
// the communicator (ncclCommAbort), which ends the kernels that wait, so
// that a host waiting for the device returns, and the next call of the
// Comm returns the error.

// work is one collective the watchdog waits for.
type work struct {
	seq   int
	what  func() string
	start time.Time
	done  func() (bool, error) // whether it has completed on every local rank
	free  func()               // returns its events
}

type watchdog struct {
	timeout  time.Duration
	interval time.Duration
	asyncErr func() error // NCCL's asynchronous error of any local rank
	abort    func()       // ncclCommAbort on every local rank
	desc     string       // the local ranks, for errors: "rank 1 of 2"

	mu      sync.Mutex
	seq     int
	pending []work
	err     error
	stop    chan struct{}
	stopped chan struct{}
}

func newWatchdog(timeout time.Duration, desc string, asyncErr func() error, abort func()) *watchdog {
	w := &watchdog{
		timeout:  timeout,
		interval: min(max(timeout/10, 10*time.Millisecond), time.Second),
		asyncErr: asyncErr,
		abort:    abort,
		desc:     desc,
		stop:     make(chan struct{}),
		stopped:  make(chan struct{}),
	}
	go w.run()
	return w
}

// failure returns the error that ended the communicator, or nil.
func (w *watchdog) failure() error {
	if w == nil {
		return nil
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.err
}

// add registers a collective that was just issued.
func (w *watchdog) add(what func() string, done func() (bool, error), free func()) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.seq++
	w.pending = append(w.pending, work{seq: w.seq, what: what, start: time.Now(), done: done, free: free})
}

// drain waits until the collectives issued so far have completed, or the
// watchdog has aborted the communicator.
func (w *watchdog) drain() {
	if w == nil {
		return
	}
	for {
		w.mu.Lock()
		n, err := len(w.pending), w.err
		w.mu.Unlock()
		if n == 0 || err != nil {
			return
		}
		select {
		case <-w.stopped:
			return
		case <-time.After(w.interval):
		}
	}
}

// close stops the watchdog and waits for it.
func (w *watchdog) close() {
	if w == nil {
		return
	}
	select {
	case <-w.stop:
	default:
		close(w.stop)
	}
	<-w.stopped
}

func (w *watchdog) run() {
	defer close(w.stopped)
	t := time.NewTicker(w.interval)
	defer t.Stop()
	for {
		select {
		case <-w.stop:
			w.mu.Lock()
			for _, p := range w.pending {
				p.free()
			}
			w.pending = nil
			w.mu.Unlock()
			return
		case <-t.C:
		}
		if err := w.check(time.Now()); err != nil {
			w.mu.Lock()
			w.err = err
			w.mu.Unlock()
			w.abort()
			w.mu.Lock()
			for _, p := range w.pending {
				p.free()
			}
			w.pending = nil
			w.mu.Unlock()
			return
		}
	}
}

// check returns why the communicator must be aborted, or nil: NCCL's
// asynchronous error, or the oldest collective that is still running
// after the timeout. Completed collectives are forgotten.
func (w *watchdog) check(now time.Time) error {
	if err := w.asyncErr(); err != nil {
		return fmt.Errorf("dist: %s: NCCL reports an error (a rank crashed or left?), the communicator was aborted: %w: %w", w.desc, err, ErrPeer)
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	for len(w.pending) > 0 {
		p := w.pending[0]
		ok, err := p.done()
		if err != nil {
			return fmt.Errorf("dist: %s: collective #%d (%s): %w: %w", w.desc, p.seq, p.what(), err, ErrPeer)
		}
		if !ok {
			if took := now.Sub(p.start); took > w.timeout {
				return fmt.Errorf("dist: %s: collective #%d (%s) did not complete within %v: another rank stopped, crashed, or did not call it (%s sets the limit); the communicator was aborted: %w",
					w.desc, p.seq, p.what(), w.timeout, EnvTimeout, ErrTimeout)
			}
			return nil
		}
		p.free()
		w.pending = w.pending[1:]
	}
	return nil
}
