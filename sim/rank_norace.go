//go:build !race

package sim

import "sync/atomic"

// storeRank and loadRank publish the rank of the thread a worker runs to
// the report of a launch that ran out of time, which reads it from another
// goroutine while the thread may be spinning forever, so nothing can order
// the two. An atomic store per thread would double the fast path's cost
// (4 to 8 ns per thread), so the store is plain: the Go memory model
// guarantees that a word-sized read observes a value some write stored,
// and the store cannot be deferred past the call into the kernel that
// follows it. The race detector sees atomic stores (rank_race.go).
func storeRank(p *int32, r int32) { *p = r }

func loadRank(p *int32) int32 { return atomic.LoadInt32(p) }
