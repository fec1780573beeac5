package nccl

import (
	"fmt"
	"runtime"
	"sync"

	"github.com/gocu-dev/gocu/internal/dynlib"
)

// Group runs fn between ncclGroupStart and ncclGroupEnd, so that the NCCL
// calls fn makes are issued together when it returns:
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
// NCCL keeps the group state per OS thread, and goroutines move between
// threads, so Group locks the calling goroutine to its thread until
// ncclGroupEnd has returned: every NCCL call of the group must be made by fn
// itself, on the calling goroutine. A call from another goroutine does not
// join the group; it runs at once, on its own.
//
// If fn returns an error or panics, Group cancels the group: it makes one
// deliberately invalid NCCL call inside it, which makes ncclGroupEnd fail
// and launch nothing, so no rank is left waiting for a partner that was
// never called. Group then returns fn's error (or re-panics). The
// communicators used in the group stay usable; any that InitRank or
// InitAll created inside it are not (NCCL never finishes them) and return
// ErrDestroyed. Groups nest; the work is issued when the outermost ends,
// and an inner Group that fails makes the outer one fail.
//
// The calls in a group are checked as they are made, and NCCL's own errors
// may surface only at ncclGroupEnd, as Group's error.
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

func group(l *lib, fn func() error) (err error) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if r := Result(dynlib.Call(l.groupStart)); r != Success {
		return l.error("ncclGroupStart", r, "")
	}
	g := enterGroup()
	done := false
	defer func() {
		if done {
			return
		}
		// fn panicked: end the group without launching it, then let the
		// panic go on.
		l.cancelGroup()
		dynlib.Call(l.groupEnd)
		g.leave(fmt.Errorf("nccl: the function given to Group panicked"))
	}()
	ferr := fn()
	done = true
	if ferr != nil {
		l.cancelGroup()
		dynlib.Call(l.groupEnd)
		g.leave(ferr)
		return ferr
	}
	err = l.error("ncclGroupEnd", Result(dynlib.Call(l.groupEnd)), "")
	if err != nil && g.cancelled != nil {
		err = fmt.Errorf("%w (the group was cancelled because an inner Group failed: %v)", err, g.cancelled)
	}
	g.leave(err)
	return err
}

// cancelGroup makes the open group fail at ncclGroupEnd: a send on a NULL
// communicator is refused by NCCL (2.14 and newer) with ncclInvalidArgument,
// which it records as the group's error; ncclGroupEnd then frees the
// group's queued work without launching it.
func (l *lib) cancelGroup() {
	dynlib.Call(l.send, 0, 0, uintptr(Int8), 0, 0, 0)
}

// groupState is what Group knows about the group open on one OS thread.
type groupState struct {
	tid       int
	depth     int
	created   []*Comm // comms InitRank/InitAll made inside the group
	cancelled error   // an inner Group failed
}

var (
	groupsMu sync.Mutex
	groups   = map[int]*groupState{} // by OS thread id
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
	}
	g.depth++
	return g
}

// leave closes one group level; err is why it failed, or nil.
func (g *groupState) leave(err error) {
	groupsMu.Lock()
	defer groupsMu.Unlock()
	g.depth--
	if g.depth > 0 {
		if err != nil && g.cancelled == nil {
			g.cancelled = err
		}
		return
	}
	delete(groups, g.tid)
	if err != nil {
		markFailed(g.created, err)
	}
}

// noteCreated records comms made inside an open group on this thread, so
// that they can be marked failed if the group fails.
func noteCreated(comms ...*Comm) {
	tid := gettid()
	groupsMu.Lock()
	defer groupsMu.Unlock()
	if g := groups[tid]; g != nil {
		g.created = append(g.created, comms...)
	}
}
