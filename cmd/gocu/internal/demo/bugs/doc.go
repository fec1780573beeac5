// Package bugs holds three kernels that are wrong on purpose, for gocu
// demo: each keeps a classic GPU bug, so that the simulator's report of
// it, and the GPU's debug mode, can be seen and tested. TiledMatMulNoSync
// leaves out a barrier (a shared-memory race), AddOffByOne has its guard
// off by one (an out-of-range index) and BlockSumDivergent puts a barrier
// inside a divergent branch. go generate runs gocu gen, which writes
// zz_gocu_bugs.go: the launchers (LaunchAddOffByOne...), the CUDA C++ and
// the checked twins that the simulator's checked mode runs.
//
// The "want:" comments in broken.go mark the lines the reports name; the
// tests hold the reports to them.
package bugs

//go:generate go tool gocu-gen

import "github.com/gocu-dev/gocu/internal/lecture"

// Tile is the side of TiledMatMulNoSync's square tiles and blocks, the
// lecture's.
const Tile = lecture.Tile
