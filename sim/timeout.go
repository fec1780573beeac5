package sim

import (
	"fmt"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/gocu-dev/gocu/kernel"
)

// The time budget. A launch that is still running when its budget runs out
// (or its context is done) is expired: no further block starts, and every
// thread that enters the simulator afterwards is stopped there with a
// KindTimeout error: at a barrier or warp operation in any mode, and at
// every loop back-edge in checked mode, whose twin calls kernel.Loop first
// in every loop body. A thread spinning in plain Go, as the default mode
// runs it, never enters the simulator and cannot be stopped: Go has no way
// to end another goroutine. After a grace period the launch returns
// anyway, naming such threads and the line where their goroutines are (read
// from a dump of the goroutines' stacks), and leaves them running; their
// launch is abandoned, and later launches whose arguments share memory
// with its arguments are refused until its threads return.

// expireGrace is how long an expired launch waits for its threads to stop.
const expireGrace = 500 * time.Millisecond

// maxRunning bounds the threads a KindTimeout error names.
const maxRunning = 8

// expire stops the launch after its budget ran out (budget is true) or its
// context was done (cause), waits up to expireGrace for its workers, and
// returns the error naming the threads still running. It returns nil only
// when every block ran to its end: a launch cut short is never a success.
func (l *launch) expire(ws []*worker, done <-chan struct{}, cause error, budget bool) *Error {
	l.expired.Store(true)
	l.stop.Store(0) // start no further block
	stuck := false
	t := time.NewTimer(expireGrace)
	select {
	case <-done:
	case <-t.C:
		stuck = true
	}
	t.Stop()
	l.mu.Lock()
	running := append([]Party(nil), l.stopped...)
	prior := l.err
	l.mu.Unlock()
	ran := l.ran.Load()
	if !stuck && len(running) == 0 && (prior != nil || ran == l.nblocks) {
		return prior // the launch ended as the budget ran out
	}
	e := &Error{Kind: KindTimeout, Value: cause}
	if budget {
		e.Msg = fmt.Sprintf("time budget of %v exhausted (Config.Timeout or GOCU_SIM_TIMEOUT sets it)", l.budget)
	} else {
		e.Msg = fmt.Sprintf("launch stopped: %v", cause)
	}

	if stuck {
		lines := l.stackPositions()
		var spinning []Party
		for _, w := range ws {
			pos := w.cur.Load()
			if pos == 0 {
				continue
			}
			p := Party{Block: l.blockCoord(l.order.at(pos - 1)), Op: "running"}
			if th := w.running.Load(); th != nil {
				p.Thread = w.b.threadCoord(loadRank(&th.rank))
			}
			if len(lines) == 1 {
				p.Pos = lines[0]
			}
			spinning = append(spinning, p)
		}
		running = append(running, spinning...)
		if len(lines) > 1 {
			var at []string
			for _, p := range lines {
				at = append(at, p.short())
			}
			e.Msg += fmt.Sprintf(" (the goroutines of threads that cannot be stopped are at %s)", strings.Join(at, ", "))
		}
		if len(spinning) > 0 {
			abandon(l)
		}
	}
	if len(running) > maxRunning {
		e.Msg += fmt.Sprintf(" (%d threads, the first %d named)", len(running), maxRunning)
		running = running[:maxRunning]
	}
	switch {
	case len(running) == 0 && !stuck:
		// The budget ran out between blocks: the rest never started.
		e.Msg += fmt.Sprintf(" after %d of %d blocks ran", ran, l.nblocks)
	case len(running) == 0:
		e.Msg += ": no thread is running, but a worker has not returned"
	case len(running) == 1:
		e.Msg += ": 1 thread still running:"
	default:
		e.Msg += fmt.Sprintf(": %d threads still running:", len(running))
	}
	e.Running = running
	if len(running) > 0 {
		e.Block, e.Thread, e.Pos = running[0].Block, running[0].Thread, running[0].Pos
	}
	if prior != nil {
		e.Msg = "before that, " + strings.TrimPrefix(prior.Error(), "sim: ") + "; then " + e.Msg
	}
	return e
}

// blockCoord returns the BlockIdx of the linear block index idx.
func (l *launch) blockCoord(idx uint64) kernel.Dim3 {
	gx, gy := uint64(l.grid.X), uint64(l.grid.Y)
	return kernel.Dim3{X: int32(idx % gx), Y: int32(idx / gx % gy), Z: int32(idx / (gx * gy))}
}

// stackPositions reads, from a dump of every goroutine's stack, where the
// goroutines running this launch's kernel are: the innermost frame outside
// the runtime of each goroutine that runs kernel code (called from
// callKernel) with a frame of the kernel's function or its checked twin.
// It returns the distinct positions.
func (l *launch) stackPositions() []Pos {
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) || len(buf) >= 64<<20 {
			buf = buf[:n]
			break
		}
		buf = make([]byte, 2*len(buf))
	}
	var named, all []Pos
	for _, g := range strings.Split(string(buf), "\n\n") {
		top, first, inKernel, mine := Pos{}, Pos{}, false, false
		lines := strings.Split(g, "\n")
		for i := 1; i+1 < len(lines); i++ {
			fn := lines[i]
			if strings.HasPrefix(fn, "\t") || !strings.HasPrefix(lines[i+1], "\t") {
				continue
			}
			if j := strings.LastIndex(fn, "("); j > 0 {
				fn = fn[:j]
			}
			switch short := fn[strings.LastIndex(fn, "/")+1:]; {
			case fn == "github.com/gocu-dev/gocu/sim.callKernel":
				inKernel = true
			case strings.HasSuffix(short, "."+l.name) || strings.HasSuffix(short, ".gocuChecked_"+l.name):
				mine = true
			}
			if !inKernel && !top.IsValid() && !libraryFrame(fn) {
				top = fileLine(fn, lines[i+1])
			}
			if !inKernel && !first.IsValid() && !strings.HasPrefix(fn, "runtime.") {
				first = fileLine(fn, lines[i+1])
			}
		}
		if !top.IsValid() {
			top = first
		}
		if !inKernel || !top.IsValid() {
			continue
		}
		all = appendPos(all, top)
		if mine {
			named = appendPos(named, top)
		}
	}
	if len(named) > 0 {
		return named
	}
	return all
}

// libraryFrame reports whether the function fn (as a stack dump names it)
// belongs to the standard library or to package kernel, whose frames are
// skipped to find the kernel's own line: the standard library's import
// paths have no dot in their first element (but "main" is the user's).
func libraryFrame(fn string) bool {
	if strings.HasPrefix(fn, "github.com/gocu-dev/gocu/kernel.") {
		return true
	}
	path := fn
	slash := strings.LastIndex(path, "/")
	if i := strings.Index(path[slash+1:], "."); i >= 0 {
		path = path[:slash+1+i]
	}
	elem, _, _ := strings.Cut(path, "/")
	return elem != "main" && !strings.Contains(elem, ".")
}

// fileLine parses a stack dump's "\tfile:line +0x1f" line.
func fileLine(fn, s string) Pos {
	s = strings.TrimSpace(s)
	if i := strings.LastIndex(s, " +0x"); i >= 0 {
		s = s[:i]
	}
	i := strings.LastIndex(s, ":")
	if i < 0 {
		return Pos{}
	}
	n, err := strconv.Atoi(s[i+1:])
	if err != nil {
		return Pos{}
	}
	return Pos{Func: fn, File: s[:i], Line: n}
}

func appendPos(ps []Pos, p Pos) []Pos {
	for _, q := range ps {
		if q == p {
			return ps
		}
	}
	return append(ps, p)
}

// Abandoned launches: launches that returned after their budget with
// threads still running in plain Go. Their arguments' memory may still be
// written, so later launches that share it are refused until they end.
var abandoned struct {
	mu       sync.Mutex
	launches map[*launch]bool // true: abandoned; false: finished first
}

// abandon records l as abandoned, unless its workers have just finished.
func abandon(l *launch) {
	abandoned.mu.Lock()
	defer abandoned.mu.Unlock()
	if abandoned.launches == nil {
		abandoned.launches = map[*launch]bool{}
	}
	if _, finished := abandoned.launches[l]; finished {
		delete(abandoned.launches, l)
		return
	}
	abandoned.launches[l] = true
}

// releaseAbandoned is called when every worker of l has returned.
func releaseAbandoned(l *launch) {
	if !l.expired.Load() {
		return
	}
	abandoned.mu.Lock()
	defer abandoned.mu.Unlock()
	if abandoned.launches[l] {
		delete(abandoned.launches, l)
		return
	}
	if abandoned.launches == nil {
		abandoned.launches = map[*launch]bool{}
	}
	abandoned.launches[l] = false // finished before expire could abandon it
}

// checkAbandoned refuses a launch whose arguments share memory with the
// arguments of an abandoned launch whose threads still run.
func checkAbandoned(k *Kernel) *Error {
	if k.Args == nil {
		return nil
	}
	abandoned.mu.Lock()
	defer abandoned.mu.Unlock()
	if len(abandoned.launches) == 0 {
		return nil
	}
	rs := collectArgs(k.Args)
	for a, live := range abandoned.launches {
		if !live {
			continue
		}
		for _, r := range rs {
			for _, o := range a.args {
				if r.lo < o.hi && o.lo < r.hi {
					return &Error{Kind: KindUsage, Msg: fmt.Sprintf(
						"argument %d shares memory with argument %d of a launch of kernel %s that ran out of time: a thread of it still runs (it cannot be stopped) and may still write that memory",
						r.arg, o.arg, a.name)}
				}
			}
		}
	}
	return nil
}
