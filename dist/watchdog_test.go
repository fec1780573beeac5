package dist

import (
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// The watchdog without GPUs: collectives are functions that say whether
// they completed, NCCL's asynchronous error a function too.

func TestWatchdogCompletes(t *testing.T) {
	var aborted, freed atomic.Int32
	w := newWatchdog(time.Second, "rank 0 of 2", func() error { return nil }, func() { aborted.Add(1) })
	var done atomic.Bool
	w.add(label("AllReduce sum of float32 [8]"), func() (bool, error) { return done.Load(), nil }, func() { freed.Add(1) })
	time.Sleep(50 * time.Millisecond)
	done.Store(true)
	w.drain()
	w.close()
	if err := w.failure(); err != nil || aborted.Load() != 0 || freed.Load() != 1 {
		t.Fatalf("failure %v, aborted %d, freed %d", err, aborted.Load(), freed.Load())
	}
}

func TestWatchdogTimeout(t *testing.T) {
	var aborted, freed atomic.Int32
	w := newWatchdog(100*time.Millisecond, "rank 0 of 2", func() error { return nil }, func() { aborted.Add(1) })
	defer w.close()
	w.add(label("Broadcast from 1 of int64 [3]"), func() (bool, error) { return true, nil }, func() { freed.Add(1) })
	w.add(label("AllReduce sum of float32 [8]"), func() (bool, error) { return false, nil }, func() { freed.Add(1) })
	start := time.Now()
	w.drain()
	took := time.Since(start)
	err := w.failure()
	if !errors.Is(err, ErrTimeout) || !errors.Is(err, ErrPeer) || !strings.Contains(err.Error(), "collective #2 (AllReduce sum of float32 [8]) did not complete within 100ms") {
		t.Fatalf("after %v: %v", took, err)
	}
	if took > 5*time.Second {
		t.Errorf("the timeout of 100ms took %v", took)
	}
	<-w.stopped
	if aborted.Load() != 1 || freed.Load() != 2 {
		t.Errorf("aborted %d times, %d of 2 works freed", aborted.Load(), freed.Load())
	}
}

func TestWatchdogAsyncError(t *testing.T) {
	var aborted atomic.Int32
	var failed atomic.Bool
	remote := errors.New("nccl: ncclRemoteError")
	w := newWatchdog(time.Hour, "rank 1 of 2", func() error {
		if failed.Load() {
			return remote
		}
		return nil
	}, func() { aborted.Add(1) })
	defer w.close()
	w.add(label("AllReduce avg of float32 [8]"), func() (bool, error) { return false, nil }, func() {})
	failed.Store(true)
	w.drain()
	<-w.stopped
	err := w.failure()
	if !errors.Is(err, remote) || !errors.Is(err, ErrPeer) || errors.Is(err, ErrTimeout) || aborted.Load() != 1 {
		t.Fatalf("%v (aborted %d)", err, aborted.Load())
	}
}

func TestWatchdogQueryError(t *testing.T) {
	w := newWatchdog(time.Hour, "rank 0 of 2", func() error { return nil }, func() {})
	defer w.close()
	bad := errors.New("cuda: illegal address")
	w.add(label("AllReduce sum of float32 [8]"), func() (bool, error) { return false, bad }, func() {})
	w.drain()
	if err := w.failure(); !errors.Is(err, bad) || !strings.Contains(err.Error(), "collective #1") {
		t.Fatal(err)
	}
}

func TestEnvTimeout(t *testing.T) {
	for v, want := range map[string]time.Duration{"": DefaultTimeout, "off": 0, "0": 0, "90s": 90 * time.Second} {
		t.Setenv(EnvTimeout, v)
		if d, err := envTimeout(); err != nil || d != want {
			t.Errorf("%q: %v %v", v, d, err)
		}
	}
	t.Setenv(EnvTimeout, "soon")
	if _, err := envTimeout(); err == nil || !strings.Contains(err.Error(), "GOCU_DIST_TIMEOUT") {
		t.Errorf("a bad timeout: %v", err)
	}
}

func label(s string) func() string { return func() string { return s } }
