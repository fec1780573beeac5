package sim

import (
	"context"
	"fmt"
	"io"
	"math/bits"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gocu-dev/gocu/kernel"
)

// Kernel is a kernel ready to launch: its arguments are already bound.
// Generated launchers build it; Run builds it from a function and its
// arguments by reflection.
type Kernel struct {
	// Name names the kernel in errors.
	Name string
	// Func runs the kernel for one thread with its arguments, typically a
	// closure such as func(t *kernel.Thread) { Gray(t, rgb, gray, n) }.
	Func func(t *kernel.Thread)
	// Checked is the same for the kernel's instrumented twin, which gocu gen
	// writes: the kernel with every element access going through
	// kernel.At or kernel.Index. A checked launch runs it instead of Func.
	Checked func(t *kernel.Thread)
	// Args are the kernel's arguments (after the *kernel.Thread). Checked
	// mode treats the memory of the slices among them (also inside arrays
	// and structs) as global memory, which it checks for races, and names
	// them in errors; without Args, checked mode checks shared memory only.
	Args []any
}

// Launch runs the kernel on the CPU with CUDA semantics: every block of the
// grid, each with the threads of cfg.Block, its blocks in parallel on
// cfg.Workers goroutines in an order shuffled by the seed. It returns nil or
// an *Error: the first error in the launch's block order (errors of blocks
// running in parallel with it are dropped). Launch never panics for a fault
// of the kernel and never waits forever: after the time budget
// (Config.Timeout, GOCU_SIM_TIMEOUT, DefaultTimeout) it returns a
// KindTimeout error naming the threads still running.
func Launch(cfg Config, k Kernel) error {
	return LaunchContext(context.Background(), cfg, k)
}

// LaunchContext is Launch with a context: when ctx is done before the
// launch ends, it returns a KindTimeout error that wraps ctx.Err() and
// names the threads still running, as when the time budget runs out.
func LaunchContext(ctx context.Context, cfg Config, k Kernel) error {
	if t, ok := tracer.Get(); ok {
		return tracedLaunch(ctx, t, cfg, k)
	}
	return launchNow(ctx, cfg, k)
}

func launchNow(ctx context.Context, cfg Config, k Kernel) error {
	l, err := newLaunch(&cfg, &k)
	if err != nil {
		err.Kernel = k.Name
		return err
	}
	if cerr := ctx.Err(); cerr != nil {
		// A context that is done already runs no block.
		return &Error{Kind: KindTimeout, Kernel: l.name, Seed: l.seed, Value: cerr,
			Msg: fmt.Sprintf("launch stopped before it started: %v (0 of %d blocks ran)", cerr, l.nblocks)}
	}
	if e := l.run(ctx); e != nil {
		e.Kernel, e.Seed = l.name, l.seed
		return e
	}
	return nil
}

// launch is the state of one running launch.
type launch struct {
	name     string
	f        func(*kernel.Thread)
	checked  bool
	seed     uint64
	lim      Limits
	grid     kernel.Dim3
	block    kernel.Dim3
	nblocks  uint64
	dyn      int
	order    affine
	tidShift uint
	workers  int

	args     []argRange
	haveArgs bool
	global   *globalShadow
	sites    siteTable
	async    asyncSites // sites of matrix operations and asynchronous copies

	next  atomic.Uint64 // next position in the block order
	stop  atomic.Uint64 // positions from here on are not started
	ran   atomic.Uint64 // blocks that ran to their end
	mu    sync.Mutex
	err   *Error
	errAt uint64

	print  printState // kernel.Printf output
	stdout io.Writer  // where it goes; nil: os.Stdout

	budget  time.Duration // 0: none
	expired atomic.Bool   // the budget ran out or the context is done
	stopped []Party       // threads stopped after expiry, under mu
}

func newLaunch(cfg *Config, k *Kernel) (*launch, *Error) {
	if k.Name == "" {
		k.Name = "kernel"
	}
	lim := cfg.limits()
	if e := cfg.check(&lim); e != nil {
		return nil, e
	}
	seed, e := cfg.seed()
	if e != nil {
		return nil, e
	}
	budget, e := cfg.timeout()
	if e != nil {
		return nil, e
	}
	if e := checkAbandoned(k); e != nil {
		return nil, e
	}
	l := &launch{name: k.Name, f: k.Func, seed: seed, lim: lim, dyn: cfg.DynamicSharedBytes,
		grid: shape(cfg.Grid), block: shape(cfg.Block), workers: cfg.workers(), budget: budget, stdout: cfg.Stdout}
	if cfg.checked() {
		if k.Checked == nil {
			return nil, &Error{Kind: KindUsage, Seed: seed, Msg: fmt.Sprintf(
				"checked mode needs the instrumented twin of kernel %s (Kernel.Checked), which gocu gen writes: run go generate, or launch without Config.Checked and GOCU_SIM_CHECKED", k.Name)}
		}
		l.checked, l.f = true, k.Checked
		l.global = new(globalShadow)
	}
	if l.f == nil {
		return nil, &Error{Kind: KindUsage, Msg: "Kernel.Func is nil"}
	}
	if k.Args != nil {
		l.args, l.haveArgs = collectArgs(k.Args), true
	}
	l.nblocks = uint64(l.grid.X) * uint64(l.grid.Y) * uint64(l.grid.Z)
	l.tidShift = uint(bits.Len32(uint32(l.block.Size() - 1)))
	r := rng{seed}
	l.order = newAffine(&r, l.nblocks)
	l.stop.Store(l.nblocks)
	return l, nil
}

// run executes every block and returns the first error. Without a budget
// or a context to watch, the last worker runs on the caller's goroutine;
// otherwise every worker has a goroutine of its own and the caller waits
// for them, the budget and the context (see expire).
func (l *launch) run(ctx context.Context) *Error {
	nw := uint64(max(1, l.workers))
	nw = min(nw, l.nblocks)
	ws := make([]*worker, nw)
	for i := range ws {
		ws[i] = newWorker(l)
	}
	if l.budget <= 0 && ctx.Done() == nil {
		var wg sync.WaitGroup
		for _, w := range ws[:nw-1] {
			wg.Add(1)
			go func() {
				defer wg.Done()
				l.work(w)
			}()
		}
		l.work(ws[nw-1])
		wg.Wait()
		l.finish()
		return l.err
	}
	done := make(chan struct{})
	var left atomic.Int64
	left.Store(int64(nw))
	for _, w := range ws {
		go func() {
			defer func() { // also when the kernel calls runtime.Goexit
				if left.Add(-1) == 0 {
					l.finish()
					close(done)
				}
			}()
			l.work(w)
		}()
	}
	var expiry <-chan time.Time
	if l.budget > 0 {
		t := time.NewTimer(l.budget)
		defer t.Stop()
		expiry = t.C
	}
	select {
	case <-done:
		return l.err
	case <-expiry:
		return l.expire(ws, done, context.DeadlineExceeded, true)
	case <-ctx.Done():
		return l.expire(ws, done, ctx.Err(), false)
	}
}

// finish runs once every worker has returned.
func (l *launch) finish() {
	l.flushPrints()
	if l.global != nil {
		l.global.release()
	}
	releaseAbandoned(l)
}

// work runs blocks until none are left or an earlier one failed.
func (l *launch) work(w *worker) {
	var pos uint64
	running := false
	defer func() {
		// Kernel panics are recovered in the coroutines; what arrives here
		// is a bug of the simulator or a runtime.Goexit in kernel code (as
		// t.FailNow does), which ends this goroutine.
		if r := recover(); r != nil {
			l.fail(pos, &Error{Kind: KindPanic, Value: r, Msg: "internal error of the simulator"})
		} else if running {
			l.fail(pos, &Error{Kind: KindPanic, Msg: "the kernel called runtime.Goexit (as testing's FailNow does); the launch stopped: report failures in a kernel with t.Errorf, not t.Fatal or t.FailNow"})
		}
		w.cur.Store(0)
		w.close()
		l.collectPrints(w)
	}()
	for {
		pos = l.next.Add(1) - 1
		if pos >= l.stop.Load() {
			return
		}
		running = true
		w.cur.Store(pos + 1)
		e := w.b.run(l.order.at(pos), pos)
		w.cur.Store(0)
		running = false
		if e != nil {
			l.fail(pos, e)
		} else {
			l.ran.Add(1)
		}
	}
}

// fail records the error of the block at position pos and stops starting
// blocks after it. Blocks before it may still fail; the earliest error in
// the block order wins, so that a seed reproduces the same report.
func (l *launch) fail(pos uint64, e *Error) {
	l.mu.Lock()
	if e.Kind == KindTimeout {
		// A thread stopped after the budget ran out: expire reports it
		// with the others.
		if len(l.stopped) < maxRunning {
			l.stopped = append(l.stopped, Party{Block: e.Block, Thread: e.Thread, Pos: e.Pos, Op: "stopped"})
		}
		l.mu.Unlock()
		l.stop.Store(0)
		return
	}
	if l.err == nil || pos < l.errAt {
		l.err, l.errAt = e, pos
	}
	l.mu.Unlock()
	for {
		s := l.stop.Load()
		if pos >= s || l.stop.CompareAndSwap(s, pos) {
			return
		}
	}
}

// worker runs blocks on one goroutine.
type worker struct {
	// cur is the position in the block order, plus one, of the block the
	// worker runs (0: none), and running the thread running in it, for the
	// report of a launch that ran out of time.
	cur     atomic.Uint64
	running atomic.Pointer[thread]

	l      *launch
	b      block
	runner *coro
	runTh  thread
	ths    []*thread // barrier-mode threads by rank, made on first use
	idle   []*coro
	all    []*coro
	arena  arena

	shadow []entry                 // checked mode: shared memory, by arena offset
	pages  [pageCacheSize]struct { // checked mode: global shadow pages used last
		p  *page
		pn uintptr
	}
	siteCache [siteCacheSize]struct {
		s *kernel.Site
		i uint32
	}
	prints []printed // kernel.Printf output of the worker's blocks
}

func newWorker(l *launch) *worker {
	w := &worker{l: l}
	n := int32(l.block.Size())
	w.b = block{w: w, l: l, f: l.f, n: n, bx: l.block.X, by: l.block.Y,
		state: make([]uint8, n), threads: make([]*thread, n), wep: make([]uint32, (n+31)/32)}
	if l.dyn > 0 { // else made on the first static declaration
		w.arena.init(l.dyn, l.lim.MaxStaticShared)
		w.b.next = w.arena.dyn
	}
	w.runTh = thread{b: &w.b}
	w.runTh.BlockDim, w.runTh.GridDim = l.block, l.grid
	kernel.Bind(&w.runTh.Thread, &w.runTh)
	w.runner = newCoro(w)
	w.runner.th = &w.runTh
	w.runTh.co = w.runner
	w.all = append(w.all, w.runner)
	return w
}

// thread returns the barrier-mode thread of rank r.
func (w *worker) thread(r int32) *thread {
	if w.ths == nil {
		w.ths = make([]*thread, w.b.n)
	}
	th := w.ths[r]
	if th == nil {
		th = &thread{b: &w.b}
		th.BlockDim, th.GridDim = w.l.block, w.l.grid
		th.setRank(r)
		kernel.Bind(&th.Thread, th)
		w.ths[r] = th
	}
	return th
}

// coro returns an idle coroutine.
func (w *worker) coro() *coro {
	if n := len(w.idle); n > 0 {
		c := w.idle[n-1]
		w.idle = w.idle[:n-1]
		return c
	}
	c := newCoro(w)
	w.all = append(w.all, c)
	return c
}

// close ends the worker's coroutines.
func (w *worker) close() {
	for _, c := range w.all {
		c.stop()
	}
	w.all, w.idle = nil, nil
}
