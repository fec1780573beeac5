package demo

import (
	"github.com/gocu-dev/gocu/gen/meta"
	"github.com/gocu-dev/gocu/sim"
)

// Registering the checked twins with package sim lets sim.Run run the
// lecture kernels in checked mode, as the tutorial does:
//
//	sim.Run(sim.Config{..., Checked: true}, kernels.TiledMatMulNoSync, a, b, c, m, n, k)
//
// gocu gen's file records its twins with package meta; the interim file
// is used until it exists.
func init() {
	for _, t := range interimTwins {
		tw := t.twin
		if _, k, ok := meta.Lookup(t.fn); ok && k.Checked != nil {
			tw = k.Checked
		}
		if err := sim.RegisterChecked(t.fn, tw); err != nil {
			panic("demo: " + err.Error()) // the generated pairs have equal types
		}
	}
}
