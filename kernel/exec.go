package kernel

import (
	"reflect"
	"unsafe"
)

// Executor runs kernel threads and gives meaning to the operations that need
// more than one thread: barriers, warp operations and shared memory.
// Package sim implements it. Kernel code never calls it; it is exported only
// so that an executor outside this package can be plugged in with Bind.
type Executor interface {
	// Barrier blocks t until every thread of its block has reached the same
	// barrier, then returns the number of threads that passed pred true.
	Barrier(t *Thread, kind SyncKind, pred bool) int32
	// Warp performs a warp-level operation among the lanes named in mask:
	// shuffles exchange bits (values are passed as their bit patterns,
	// zero-extended to 64 bits); votes return a lane mask or a 0/1 result.
	Warp(t *Thread, op WarpOp, mask uint32, bits uint64, arg int32) uint64
	// Shared returns the block's allocation for the next static shared
	// declaration executed by t: the k-th Shared call of every thread of a
	// block gets the same memory, and the executor checks that it has the
	// same type.
	Shared(t *Thread, decl SharedDecl) unsafe.Pointer
	// DynamicShared returns the block's dynamic shared memory, sized at
	// launch.
	DynamicShared(t *Thread) []byte
	// Access reports a memory access made by code that gocu gen instruments
	// for the simulator's checked mode (see At). addr is the element's
	// address and size its width in bytes.
	Access(t *Thread, addr unsafe.Pointer, size uintptr, acc Access, site *Site)
	// OutOfRange is called by the checked-mode hooks when an index is out
	// of range. base is the address of the indexed memory (the slice's first
	// element), or nil when unknown, as for Index. It does not return.
	OutOfRange(t *Thread, index, length int, base unsafe.Pointer, site *Site)
	// Loop is called by the checked-mode hooks at the start of every loop
	// iteration (see Loop); an executor that stops a launch does not
	// return from it.
	Loop(t *Thread, site *Site)
}

// SyncKind says which variant of SyncThreads reached a barrier.
type SyncKind uint8

// The SyncThreads variants.
const (
	SyncPlain SyncKind = iota // __syncthreads
	SyncCount                 // __syncthreads_count
	SyncAnd                   // __syncthreads_and
	SyncOr                    // __syncthreads_or
)

// WarpOp names a warp-level operation.
type WarpOp uint8

// The warp operations.
const (
	WarpSync   WarpOp = iota // __syncwarp
	ShflIdx                  // __shfl_sync: arg is the source lane
	ShflUpOp                 // __shfl_up_sync: arg is delta
	ShflDownOp               // __shfl_down_sync: arg is delta
	ShflXorOp                // __shfl_xor_sync: arg is the lane mask
	VoteBallot               // __ballot_sync
	VoteAny                  // __any_sync
	VoteAll                  // __all_sync
	// WarpCollective is a warp-wide matrix operation (MatrixExecutor's
	// Collective): an MMA or an LdMatrix.
	WarpCollective
)

// SharedDecl describes one static shared-memory declaration.
type SharedDecl struct {
	Type reflect.Type // the array type, such as [16][16]float32
}

// Bind attaches an executor to a thread. Executors call it before running
// kernel code with t; kernel code never does.
func Bind(t *Thread, ex Executor) { t.ex = ex }

// A Fault is the panic value of a kernel-package operation that cannot
// proceed: a Reinterpret the GPU would reject, or an operation that needs an
// executor called from plain Go. In plain Go it panics like any bug; the
// simulator reports it as an error naming the thread and the source line.
type Fault struct {
	Op  string // the operation, such as "Reinterpret" or "SyncThreads"
	Msg string
	// Misaligned marks an address the GPU would reject as misaligned (a
	// fragment load or an asynchronous copy); the simulator reports it as
	// such, like a misaligned Reinterpret.
	Misaligned bool
}

func (f *Fault) Error() string { return "kernel." + f.Op + ": " + f.Msg }

func noExecutor(op string) *Fault {
	return &Fault{Op: op, Msg: "this operation needs an executor: launch the kernel with package sim or gocu instead of calling it directly"}
}
