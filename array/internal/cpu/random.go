package cpu

import (
	"fmt"

	"github.com/gocu-dev/gocu/array/internal/backend"
	"github.com/gocu-dev/gocu/array/internal/philox"
)

// Random implements backend.Backend with package philox; workers take
// ranges aligned to whole Philox blocks, so the values do not depend on the
// number of workers.
func (b *Backend) Random(r *backend.Random) error {
	ob := asBuffer(r.Out.Buf)
	n := r.Out.Layout.Size()
	off := r.Out.Layout.Offset
	f64 := ob.dt == backend.Float64
	if !ob.dt.IsFloat() || !r.Out.Layout.IsContiguous() {
		return fmt.Errorf("cpu: random fill needs a contiguous float buffer")
	}
	per := philox.PerBlock(f64, r.Dist == backend.Normal)
	b.parallel(n, serialBelow/4, per*64, func(lo, hi int) {
		ctr := r.Counter + uint64(lo/per)
		switch {
		case r.Dist == backend.Uniform && !f64:
			philox.Uniform32(ob.f32[off+lo:off+hi], r.Seed, ctr, r.P0, r.P1)
		case r.Dist == backend.Uniform:
			philox.Uniform64(ob.f64[off+lo:off+hi], r.Seed, ctr, r.P0, r.P1)
		case !f64:
			philox.Normal32(ob.f32[off+lo:off+hi], r.Seed, ctr, r.P0, r.P1)
		default:
			philox.Normal64(ob.f64[off+lo:off+hi], r.Seed, ctr, r.P0, r.P1)
		}
	})
	return nil
}
