package sim

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/gocu-dev/gocu/kernel"
)

// Kind classifies an Error.
type Kind uint8

// The kinds of error the simulator reports.
const (
	// KindUsage: the launch or the kernel uses the API wrongly: a nil
	// kernel, arguments that do not match the kernel's parameters, a checked
	// launch of a kernel without an instrumented twin, a shared declaration
	// of a type that is not an array of plain values.
	KindUsage Kind = iota + 1
	// KindLimit: a launch configuration beyond the device's limits, or
	// shared memory beyond the per-block limit (static declarations are
	// summed as the kernel runs, plus the dynamic size).
	KindLimit
	// KindOutOfRange: an index out of range of global, shared or local
	// memory. Index and Length say which.
	KindOutOfRange
	// KindDivergentBarrier: some threads of a block wait at a SyncThreads
	// while others returned from the kernel or wait at a different one.
	KindDivergentBarrier
	// KindWarp: a warp operation reached by only part of the lanes named in
	// its mask, lanes of one mask at different warp operations, or a mask
	// without the calling lane.
	KindWarp
	// KindSharedRace: two threads of a block touched the same shared-memory
	// element with no barrier between them, at least one of them writing
	// (checked mode).
	KindSharedRace
	// KindGlobalRace: the same for global memory, between any two threads
	// of the launch (checked mode).
	KindGlobalRace
	// KindUninitialized: a read of shared memory that no thread of the
	// block has written (checked mode).
	KindUninitialized
	// KindMisaligned: a kernel.Reinterpret that the GPU would reject.
	KindMisaligned
	// KindSharedDecl: the threads of a block executed their shared
	// declarations in different orders or with different types.
	KindSharedDecl
	// KindPanic: the kernel panicked, as with an integer division by zero
	// or a nil dereference. Value holds the panic value.
	KindPanic
	// KindTimeout: the launch ran out of its time budget (Config.Timeout,
	// GOCU_SIM_TIMEOUT) or its context was done. Running lists the threads
	// still running; Value holds context.DeadlineExceeded or the context's
	// error.
	KindTimeout
	// KindAsyncCopy: shared memory read or written while a
	// kernel.CpAsync is still copying into it (before the CpAsyncWait
	// that completes its group). Other names the thread that issued the
	// copy.
	KindAsyncCopy
)

var kindNames = [...]string{
	KindUsage:            "invalid use",
	KindLimit:            "beyond the device limits",
	KindOutOfRange:       "index out of range",
	KindDivergentBarrier: "divergent barrier",
	KindWarp:             "invalid warp operation",
	KindSharedRace:       "shared-memory race",
	KindGlobalRace:       "global-memory race",
	KindUninitialized:    "read of uninitialized shared memory",
	KindMisaligned:       "misaligned reinterpretation",
	KindSharedDecl:       "mismatched shared declarations",
	KindPanic:            "panic",
	KindTimeout:          "time budget exhausted",
	KindAsyncCopy:        "access before an asynchronous copy completed",
}

func (k Kind) String() string {
	if int(k) < len(kindNames) && kindNames[k] != "" {
		return kindNames[k]
	}
	return fmt.Sprintf("Kind(%d)", k)
}

// Sentinel errors, one per Kind, so that errors.Is(err, sim.ErrOutOfRange)
// works on any *Error. ErrRace matches both kinds of race.
var (
	ErrUsage            = errors.New("sim: invalid use")
	ErrLimit            = errors.New("sim: beyond the device limits")
	ErrOutOfRange       = errors.New("sim: index out of range")
	ErrDivergentBarrier = errors.New("sim: divergent barrier")
	ErrWarp             = errors.New("sim: invalid warp operation")
	ErrSharedRace       = errors.New("sim: shared-memory race")
	ErrGlobalRace       = errors.New("sim: global-memory race")
	ErrRace             = errors.New("sim: data race")
	ErrUninitialized    = errors.New("sim: read of uninitialized shared memory")
	ErrMisaligned       = errors.New("sim: misaligned reinterpretation")
	ErrSharedDecl       = errors.New("sim: mismatched shared declarations")
	ErrPanic            = errors.New("sim: kernel panicked")
	ErrTimeout          = errors.New("sim: time budget exhausted")
	ErrAsyncCopy        = errors.New("sim: access before an asynchronous copy completed")
)

var kindSentinels = [...]error{
	KindUsage: ErrUsage, KindLimit: ErrLimit, KindOutOfRange: ErrOutOfRange,
	KindDivergentBarrier: ErrDivergentBarrier, KindWarp: ErrWarp,
	KindSharedRace: ErrSharedRace, KindGlobalRace: ErrGlobalRace,
	KindUninitialized: ErrUninitialized, KindMisaligned: ErrMisaligned,
	KindSharedDecl: ErrSharedDecl, KindPanic: ErrPanic, KindTimeout: ErrTimeout, KindAsyncCopy: ErrAsyncCopy,
}

// Pos is a position in kernel source.
type Pos struct {
	Func string // the function, with its package path
	File string // the file, as the Go runtime or gocu gen names it
	Line int
	Col  int    // 0 when unknown (the Go runtime records lines only)
	Expr string // the source text of the access, when gocu gen recorded it
}

// IsValid reports whether the position names a line.
func (p Pos) IsValid() bool { return p.Line > 0 }

func (p Pos) String() string {
	if !p.IsValid() {
		return "unknown position"
	}
	s := fmt.Sprintf("%s:%d", p.File, p.Line)
	if p.Col > 0 {
		s += fmt.Sprintf(":%d", p.Col)
	}
	if p.Expr != "" {
		s += " (" + p.Expr + ")"
	}
	return s
}

// short is String with the file's base name, for messages.
func (p Pos) short() string {
	q := p
	q.File = filepath.Base(p.File)
	return q.String()
}

func siteOf(s *kernel.Site) Pos {
	if s == nil {
		return Pos{}
	}
	return Pos{File: s.File, Line: int(s.Line), Col: int(s.Col), Expr: s.Expr}
}

// Party is the second thread named by an error: the other side of a race,
// or the thread elsewhere when a barrier or warp operation diverges.
type Party struct {
	Block, Thread kernel.Dim3
	// Pos is where the thread made its access or waits. For a thread that
	// returned from the kernel it is the last barrier it passed (invalid if
	// it never synchronised).
	Pos Pos
	// Op is what the thread did there: "read", "write", "read-write",
	// "atomic", the name of the barrier or warp operation it waits at, or
	// "returned" for a thread that returned from the kernel.
	Op string
}

// Error is an error found while simulating a kernel. Every error the
// simulator returns is an *Error; use errors.As to inspect it, or errors.Is
// with the sentinel of its kind.
type Error struct {
	Kind   Kind
	Kernel string
	// Seed is the launch's schedule seed: setting GOCU_SIM_SEED to it (or
	// Config.Seed) replays the same block order and thread interleaving.
	Seed uint64
	// Block and Thread locate the thread that failed (BlockIdx and
	// ThreadIdx); both are zero for errors found before any thread ran.
	Block, Thread kernel.Dim3
	// Pos is where it failed: the indexing, the access, the barrier, the
	// panicking line.
	Pos Pos
	// Op is what the thread did at Pos: "read", "write", "read-write",
	// "atomic", "index", or the name of a barrier or warp operation.
	Op string
	// Memory says which memory, when the simulator knows: "global (argument
	// 2)", "shared [16][16]float32 #1" (the second declaration), "dynamic
	// shared", "local".
	Memory string
	// Index and Length are the index and the length for KindOutOfRange
	// (Length is -1 when unknown). For races Index is the element's index
	// within Memory.
	Index, Length int
	// Other is the second thread involved, for races, divergent barriers
	// and warp errors.
	Other *Party
	// Running lists, for KindTimeout, the threads that were still running
	// when the budget ran out (at most 8 are named): Pos is where each was,
	// and Op is "stopped" for a thread the simulator stopped (checked mode
	// stops loops at their back-edge, any mode at a barrier or warp
	// operation) or "running" for one it cannot stop, whose goroutine goes
	// on (see the package documentation, Limits).
	Running []Party
	// Value is the panic value, for KindPanic; for KindTimeout the context's
	// error (context.DeadlineExceeded when the budget ran out).
	Value any
	// Msg adds what the fields do not say, in words.
	Msg string
}

// Is reports whether target is the sentinel of e's kind (or ErrRace for a
// race).
func (e *Error) Is(target error) bool {
	if target == ErrRace {
		return e.Kind == KindSharedRace || e.Kind == KindGlobalRace
	}
	return int(e.Kind) < len(kindSentinels) && kindSentinels[e.Kind] == target
}

// Unwrap returns the panic value of a KindPanic error when it is an error
// (a runtime.Error, or an error the kernel panicked with).
func (e *Error) Unwrap() error {
	if err, ok := e.Value.(error); ok {
		return err
	}
	return nil
}

func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString("sim: ")
	if e.Kernel != "" {
		fmt.Fprintf(&b, "kernel %s: ", e.Kernel)
	}
	if e.ranThreads() {
		fmt.Fprintf(&b, "block %s thread %s: ", dim(e.Block), dim(e.Thread))
	}
	switch e.Kind {
	case KindOutOfRange:
		if e.Length >= 0 {
			fmt.Fprintf(&b, "index %d out of range [0:%d]", e.Index, e.Length)
		} else {
			// The runtime names no length for a negative index.
			fmt.Fprintf(&b, "index %d out of range", e.Index)
		}
		if e.Memory != "" {
			fmt.Fprintf(&b, " of %s", e.Memory)
		}
		if e.Msg != "" {
			fmt.Fprintf(&b, " (%s)", e.Msg)
		}
		fmt.Fprintf(&b, " at %s", e.Pos.short())
	case KindSharedRace, KindGlobalRace:
		fmt.Fprintf(&b, "%s on %s element %d", e.Kind, e.Memory, e.Index)
		if e.Msg != "" {
			fmt.Fprintf(&b, " %s", e.Msg)
		}
		fmt.Fprintf(&b, ": %s at %s", e.Op, e.Pos.short())
		if o := e.Other; o != nil {
			fmt.Fprintf(&b, " conflicts with the %s by block %s thread %s at %s", o.Op, dim(o.Block), dim(o.Thread), o.Pos.short())
		}
		if e.Kind == KindSharedRace {
			b.WriteString(" with no SyncThreads between them")
		} else {
			b.WriteString(", unordered within the launch")
		}
	case KindDivergentBarrier:
		fmt.Fprintf(&b, "divergent barrier: waits at %s at %s", e.Op, e.Pos.short())
		if o := e.Other; o != nil {
			if o.Op == "returned" {
				fmt.Fprintf(&b, ", but thread %s returned from the kernel", dim(o.Thread))
				if o.Pos.IsValid() {
					fmt.Fprintf(&b, " (it last synchronised at %s)", o.Pos.short())
				} else {
					b.WriteString(" without reaching any barrier")
				}
			} else {
				fmt.Fprintf(&b, ", but thread %s waits at %s at %s", dim(o.Thread), o.Op, o.Pos.short())
			}
		}
		if e.Msg != "" {
			fmt.Fprintf(&b, "; %s", e.Msg)
		}
	case KindPanic:
		fmt.Fprintf(&b, "panic: %v at %s", e.Value, e.Pos.short())
	case KindTimeout:
		b.WriteString(e.Msg)
		for i, p := range e.Running {
			if i > 0 {
				b.WriteString(";")
			}
			fmt.Fprintf(&b, " block %s thread %s", dim(p.Block), dim(p.Thread))
			if p.Pos.IsValid() {
				fmt.Fprintf(&b, " at %s", p.Pos.short())
			}
			if p.Op == "stopped" {
				b.WriteString(" (stopped)")
			} else {
				b.WriteString(" (cannot be stopped: its goroutine keeps running and may still write the launch's memory)")
			}
		}
	default:
		fmt.Fprintf(&b, "%s", e.Kind)
		if e.Msg != "" {
			fmt.Fprintf(&b, ": %s", e.Msg)
		}
		if e.Pos.IsValid() {
			fmt.Fprintf(&b, " at %s", e.Pos.short())
		}
		if o := e.Other; o != nil {
			if o.Op == "returned" {
				fmt.Fprintf(&b, "; thread %s returned from the kernel", dim(o.Thread))
			} else {
				fmt.Fprintf(&b, "; thread %s is at %s at %s", dim(o.Thread), o.Op, o.Pos.short())
			}
		}
	}
	if e.Seed != 0 {
		fmt.Fprintf(&b, " [seed %d: GOCU_SIM_SEED=%d replays this schedule]", e.Seed, e.Seed)
	}
	return b.String()
}

// ranThreads reports whether the error is about a running thread, as
// opposed to a launch rejected up front.
func (e *Error) ranThreads() bool {
	if e.Kind == KindTimeout { // names its threads itself
		return false
	}
	return e.Kind != KindUsage && e.Kind != KindLimit || e.Pos.IsValid()
}

func dim(d kernel.Dim3) string { return fmt.Sprintf("(%d,%d,%d)", d.X, d.Y, d.Z) }

func accessName(a kernel.Access) string {
	switch a {
	case kernel.Read:
		return "read"
	case kernel.Write:
		return "write"
	case kernel.ReadWrite:
		return "read-write"
	case kernel.Atomic:
		return "atomic"
	}
	return fmt.Sprintf("access(%d)", a)
}
