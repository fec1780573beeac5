package kernel

import "unsafe"

// The functions in this file are called by the instrumented copy of a kernel
// (its "checked twin") that gocu gen writes for the simulator's checked
// mode. Hand-written kernel code does not call them. The twin is the kernel
// with the same signature and body, except that every element access of a
// slice or array goes through At, and every outer index of a
// multi-dimensional array through Index:
//
//	x := s[i]             // x := *kernel.At(t, s, int(i), &site0, kernel.Read)
//	s[i] = v              // *kernel.At(t, s, int(i), &site1, kernel.Write) = v
//	s[i] += v             // *kernel.At(t, s, int(i), &site2, kernel.ReadWrite) += v
//	kernel.AtomicAdd(&s[i], v)
//	                      // kernel.AtomicAdd(kernel.At(t, s, int(i), &site3, kernel.Atomic), v)
//	tile[y][x] = v        // tile is *[16][16]float32 from kernel.Shared:
//	                      // *kernel.At(t, tile[kernel.Index(t, int(y), 16, &site4)][:], int(x), &site4, kernel.Write) = v
//
//	for cond { body }     // for cond { kernel.Loop(t, &site5); body }
//
// Each site is a distinct package-level Site naming the access (or, for
// Loop, the for statement) in the original kernel's source. Local arrays may go through At too (the
// simulator tracks no races on memory that is neither shared nor a kernel
// argument) or through Index alone. Device functions that access memory get
// twins of their own, called from the kernel's twin.

// Site is a position in kernel source, recorded once per instrumented
// access by generated code.
type Site struct {
	File      string
	Line, Col int32
	Expr      string // the source text of the access, such as "tile[ty][tx]"
}

// Access is the kind of a checked memory access.
type Access uint8

// The access kinds.
const (
	Read      Access = iota // the element is read
	Write                   // the element is written
	ReadWrite               // read then written, as in x[i] += v
	Atomic                  // an atomic operation; never a race
)

// At checks that i indexes s, reports the access to the executor, and
// returns the element's address.
func At[T any](t *Thread, s []T, i int, site *Site, acc Access) *T {
	if uint(i) >= uint(len(s)) {
		t.exec("At").OutOfRange(t, i, len(s), unsafe.Pointer(unsafe.SliceData(s)), site)
	}
	p := &s[i]
	t.exec("At").Access(t, unsafe.Pointer(p), unsafe.Sizeof(*p), acc, site)
	return p
}

// Index checks that 0 <= i < n and returns i. Generated code uses it for the
// outer indices of multi-dimensional arrays, which address no element by
// themselves.
func Index(t *Thread, i, n int, site *Site) int {
	if uint(i) >= uint(n) {
		t.exec("Index").OutOfRange(t, i, n, nil, site)
	}
	return i
}

// Loop marks an iteration of a loop: the twin calls it first in every loop
// body, so that the simulator can stop a thread whose launch ran out of its
// time budget at the loop's back-edge, naming the loop's line (plain Go
// code cannot be interrupted otherwise).
func Loop(t *Thread, site *Site) {
	t.exec("Loop").Loop(t, site)
}
