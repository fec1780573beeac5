package nccl

import (
	"errors"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/gocu-dev/gocu/cuda"
	"github.com/gocu-dev/gocu/internal/dynlib"
)

// Group runs fn and issues the NCCL calls it made together, between
// ncclGroupStart and ncclGroupEnd, when fn returns nil:
//
//   - one process driving several GPUs issues a collective on every rank
//     inside one Group (otherwise the first call waits for ranks that were
//     never called, and hangs);
//   - Send and Recv between the same ranks, or to and from the same rank,
//     go in one Group (otherwise they deadlock);
//   - InitRank for several ranks in one process goes in one Group;
//   - several collectives in one Group are launched at once, which is
//     cheaper than one by one.
//
// Inside fn the calls are checked at once, as outside (an invalid argument
// is an error from the call itself, before NCCL sees anything), and
// recorded; nothing reaches NCCL while fn runs. If fn returns an error or
// panics, the recorded calls are dropped, so no rank is left waiting for a
// partner that was never called: Group returns fn's error (or the panic
// goes on) and NCCL never saw the group. Communicators used in it stay
// usable.
//
// The group is per goroutine: Group locks the calling goroutine to its OS
// thread while fn runs and the calls are issued (NCCL's group state is per
// thread), and only the calls fn makes on that goroutine join it. A call
// from another goroutine runs at once, on its own.
//
// Collectives, Send, Recv and InitRank join the group. InitRank inside a
// Group returns a Comm that is created when the group is issued: use it
// after Group has returned nil (before that, a call on it is an error
// matching ErrInvalidArgument); if the group is dropped or fails, the Comm
// reports ErrDestroyed, and Destroy releases it without calling NCCL. The
// other calls (InitAll, Destroy, Abort, Finalize, AsyncError) run at once
// even inside fn.
//
// Groups nest: an inner Group's calls join the outermost one, which issues
// them all. An inner Group whose fn fails returns that error, and the
// outermost Group then issues nothing and returns an error matching
// ErrCancelled that names the inner failure.
//
// NCCL's own errors surface when the group is issued, as Group's error: a
// failure of ncclGroupEnd (NCCL's word on the whole group, including the
// creation of its communicators), or a call NCCL itself refuses although
// gocu's checks passed. NCCL cannot withdraw calls it has queued (2.28
// launches the rest of the group even when it refused one call early), so
// the remaining calls are still issued, so that every rank's half of a
// collective is there, and the error says so; if a collective then does
// not complete, Abort its communicators.
func Group(fn func() error) (err error) {
	const name = "ncclGroupStart"
	if fn == nil {
		return argErr(name, "nil function")
	}
	l, err := load()
	if err != nil {
		return err
	}
	return group(l, fn)
}

// ErrCancelled is returned by a Group that issued nothing because a Group
// nested in it failed; the error names the inner failure (and errors.Is
// matches it too).
var ErrCancelled = errors.New("nccl: the group was cancelled: nothing was issued")

func group(l *lib, fn func() error) error {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	g := enterGroup()
	done := false
	defer func() {
		if !done { // fn panicked: drop the group and let the panic go on
			g.leave(errors.New("nccl: the function given to Group panicked"))
		}
	}()
	ferr := fn()
	done = true
	if ferr != nil {
		g.leave(ferr)
		return ferr
	}
	calls, created, cancelled, outer := g.close()
	if !outer {
		return nil
	}
	if cancelled != nil {
		err := fmt.Errorf("%w: a nested Group failed: %w", ErrCancelled, cancelled)
		markFailed(created, err)
		return err
	}
	err := l.issue(calls)
	if err != nil {
		abortCreated(created)
		markFailed(created, err)
		return err
	}
	for _, c := range created {
		c.state.CompareAndSwap(statePending, stateLive)
	}
	return nil
}

// call is one NCCL call recorded in a Group.
type call struct {
	fn   string
	comm *Comm
	sym  uintptr // 0: ncclCommInitRank
	args []uintptr
}

// issue makes the recorded calls between ncclGroupStart and ncclGroupEnd.
// A call NCCL refuses does not stop the others (see Group).
func (l *lib) issue(calls []call) error {
	if len(calls) == 0 {
		return nil
	}
	before := l.mark()
	if r := Result(dynlib.Call(l.groupStart)); r != Success {
		return l.error("ncclGroupStart", r, "", before)
	}
	var first error
	refused := 0
	for _, c := range calls {
		var err error
		if c.sym == 0 {
			err = c.comm.initNow()
		} else {
			err = c.comm.run(c.fn, c.sym, c.args...)
		}
		if err != nil {
			refused++
			if first == nil {
				first = err
			}
		}
	}
	before = l.mark()
	endErr := l.error("ncclGroupEnd", Result(dynlib.Call(l.groupEnd)), "", before)
	if first != nil {
		first = fmt.Errorf("%w (NCCL refused %d of the group's %d calls when the group was issued; it cannot withdraw the others, which ncclGroupEnd launched: abort the communicators if a collective does not complete)", first, refused, len(calls))
	}
	return errors.Join(first, endErr)
}

// groupState is what Group knows about the group open on one OS thread.
type groupState struct {
	tid       int
	depth     int
	calls     []call
	created   []*Comm // comms InitRank made inside the group
	cancelled error   // an inner Group failed
}

var (
	groupsMu   sync.Mutex
	groups     = map[int]*groupState{} // by OS thread id
	openGroups atomic.Int32            // len(groups), read without the lock
)

// enterGroup records one more open group on the calling (locked) thread.
func enterGroup() *groupState {
	tid := gettid()
	groupsMu.Lock()
	defer groupsMu.Unlock()
	g := groups[tid]
	if g == nil {
		g = &groupState{tid: tid}
		groups[tid] = g
		openGroups.Add(1)
	}
	g.depth++
	return g
}

// openGroup returns the group open on the calling goroutine's thread, or
// nil. Outside any group it costs an atomic load.
func openGroup() *groupState {
	if openGroups.Load() == 0 {
		return nil
	}
	tid := gettid()
	groupsMu.Lock()
	defer groupsMu.Unlock()
	return groups[tid]
}

// record adds a call to the group; only the goroutine that owns the group
// calls it.
func (g *groupState) record(c call) { g.calls = append(g.calls, c) }

// close ends one group level whose function succeeded. For the outermost
// it removes the state and returns what to issue (outer true).
func (g *groupState) close() (calls []call, created []*Comm, cancelled error, outer bool) {
	groupsMu.Lock()
	defer groupsMu.Unlock()
	g.depth--
	if g.depth > 0 {
		return nil, nil, nil, false
	}
	g.remove()
	return g.calls, g.created, g.cancelled, true
}

// leave ends one group level whose function failed with err: the
// outermost drops the calls and fails the comms it was creating; an inner
// one dooms the outer group.
func (g *groupState) leave(err error) {
	groupsMu.Lock()
	g.depth--
	if g.depth > 0 {
		if g.cancelled == nil {
			g.cancelled = err
		}
		groupsMu.Unlock()
		return
	}
	g.remove()
	groupsMu.Unlock()
	markFailed(g.created, err)
}

// remove forgets the state; groupsMu is held.
func (g *groupState) remove() {
	delete(groups, g.tid)
	openGroups.Add(-1)
}

// abortCreated frees what NCCL made of comms whose group failed: an init
// that failed leaves its communicator to the caller, who frees it with
// ncclCommAbort.
func abortCreated(comms []*Comm) {
	for _, c := range comms {
		if h := c.handle; h != 0 {
			_ = withDevice(c.dev, func() error { dynlib.Call(c.lib.commAbort, h); return nil })
		}
	}
}

// withDevice runs f on a locked OS thread with dev's primary context
// current. A nil dev (the package's own tests) only locks the thread.
func withDevice(dev *cuda.Device, f func() error) error {
	if dev == nil {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		return f()
	}
	return dev.WithContext(f)
}
