package sim

import (
	"iter"
	"runtime"
	"strconv"
	"strings"

	"github.com/gocu-dev/gocu/kernel"
)

// What a coroutine reports when it gives control back to its block.
type event uint8

const (
	evDone event = iota // its job ended: the thread returned, failed or was aborted
	evSync              // its thread waits at a barrier or a warp operation
)

// A coro is a coroutine (iter.Pull) that runs kernel threads for one
// worker. A thread that reaches a barrier or a warp operation yields to its
// block's scheduler; the block resumes it once the operation completes.
// Coroutines are reused from block to block: each runs jobs in a loop,
// either one thread (barrier mode) or a block's threads one after another
// (the fast path).
type coro struct {
	next  func() (event, bool)
	stop  func()
	yield func(event) bool
	w     *worker
	th    *thread // the thread it runs, or the fast path's reusable thread
	seq   bool    // run the block's threads in sequence (the fast path)
}

func newCoro(w *worker) *coro {
	c := &coro{w: w}
	c.next, c.stop = iter.Pull(func(yield func(event) bool) {
		c.yield = yield
		for {
			c.run()
			if !yield(evDone) {
				return
			}
		}
	})
	return c
}

// resume runs the coroutine until its thread waits or its job ends.
func (c *coro) resume() event {
	ev, ok := c.next()
	if !ok {
		return evDone
	}
	return ev
}

// run runs one job, turning any panic into the block's error.
func (c *coro) run() {
	b := &c.w.b
	th := c.th
	defer func() {
		if r := recover(); r != nil {
			b.recovered(th, r)
		}
	}()
	if c.seq {
		b.runSeq(th)
	} else {
		callKernel(b.f, &th.Thread)
	}
}

// recovered records the panic r of thread th as the block's error. It is
// called from the deferred function that recovered r, so that panicPos
// still sees the panicking stack.
func (b *block) recovered(th *thread, r any) {
	var e *Error
	switch v := r.(type) {
	case abortSignal:
		return
	case failure:
		e = v.err
	case *kernel.Fault:
		e = &Error{Kind: KindUsage, Pos: panicPos(), Op: v.Op, Msg: v.Error()}
		if v.Op == "Reinterpret" || v.Misaligned {
			e.Kind = KindMisaligned
		}
	case runtime.Error:
		e = &Error{Kind: KindPanic, Pos: panicPos(), Value: r}
		msg := v.Error()
		if idx, n, ok := parseBounds(msg); ok {
			e = &Error{Kind: KindOutOfRange, Pos: e.Pos, Op: "index", Index: idx, Length: n}
			if strings.Contains(msg, "slice bounds") {
				e.Op = "slice"
				e.Msg = strings.TrimPrefix(msg, "runtime error: ")
			}
		}
	default:
		e = &Error{Kind: KindPanic, Pos: panicPos(), Value: r}
	}
	if e.Block == (kernel.Dim3{}) && e.Thread == (kernel.Dim3{}) {
		e.Block, e.Thread = th.BlockIdx, th.ThreadIdx
	}
	if b.err == nil {
		b.err = e
	}
}

// parseBounds reads the index and length out of the Go runtime's bounds
// error, such as "index out of range [5] with length 5" or "slice bounds
// out of range [:7] with capacity 5". The length is -1 if the message has
// none.
func parseBounds(msg string) (index, length int, ok bool) {
	if !strings.Contains(msg, "out of range [") {
		return 0, 0, false
	}
	i := strings.Index(msg, "[")
	j := strings.Index(msg[i:], "]")
	if j < 0 {
		return 0, 0, false
	}
	inside := msg[i+1 : i+j]
	// For slice expressions report the bound that failed: the one that is
	// not empty and, for [a:b], the first (the runtime names both only when
	// a > b, which is the a that fails).
	fields := strings.Split(inside, ":")
	num := ""
	for _, f := range fields {
		if f != "" {
			num = f
			break
		}
	}
	idx, err := strconv.Atoi(num)
	if err != nil {
		return 0, 0, false
	}
	length = -1
	rest := msg[i+j+1:]
	for _, w := range []string{" with length ", " with capacity "} {
		if k := strings.Index(rest, w); k >= 0 {
			if n, err := strconv.Atoi(strings.TrimSpace(rest[k+len(w):])); err == nil {
				length = n
			}
		}
	}
	return idx, length, true
}
