//go:build race

package sim

import "sync/atomic"

// storeRank and loadRank publish the rank of the thread a worker runs to
// the report of a launch that ran out of time (see rank_norace.go). Under
// the race detector the store is atomic too.
func storeRank(p *int32, r int32) { atomic.StoreInt32(p, r) }

func loadRank(p *int32) int32 { return atomic.LoadInt32(p) }
