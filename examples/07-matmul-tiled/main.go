// Command 07-matmul-tiled runs the tiled matmul, which stages 16x16 tiles
// of a and b in shared memory, on the GPU or the simulator; then it shows
// the simulator's checked mode catching the race that appears when the
// second SyncThreads is left out.
package main

import (
	"fmt"
	"log"
	"math"
	"math/rand/v2"

	"github.com/gocu-dev/gocu"
	"github.com/gocu-dev/gocu/internal/lecture"
	"github.com/gocu-dev/gocu/internal/units"
	"github.com/gocu-dev/gocu/kernel"
	"github.com/gocu-dev/gocu/sim"
)

func main() {
	dev, err := gocu.Default()
	if err != nil {
		log.Fatal(err)
	}
	size := lecture.DefaultSize(dev)
	s := int32(size)
	r := rand.New(rand.NewPCG(1, 2))
	a, b := lecture.RandomMatrix(r, size, size), lecture.RandomMatrix(r, size, size)
	da, _ := gocu.FromSlice(dev, a)
	db, _ := gocu.FromSlice(dev, b)
	dc, err := gocu.FromSlice(dev, lecture.Fill(make([]float32, size*size), float32(math.NaN())))
	if err != nil {
		log.Fatal(err)
	}
	defer da.Free()
	defer db.Free()
	defer dc.Free()

	// The blocks must be Tile x Tile: each thread loads one element of
	// each tile.
	cfg := gocu.Grid2D(size, size, lecture.Tile, lecture.Tile)
	d, err := lecture.Time(dev, 3, func() error { return lecture.LaunchTiledMatMul(dev, cfg, da, db, dc, s, s, s) })
	if err != nil {
		log.Fatal(err)
	}
	c, err := dc.ToSlice()
	if err != nil {
		log.Fatal(err)
	}
	check, err := lecture.CheckMatMul(a, b, c, size, size, size, 1<<16, r)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("lecture.TiledMatMul on %v, %d^3: %v, %s; checked %v\n",
		dev, size, d, units.FLOPRate(2*math.Pow(float64(size), 3)/d.Seconds()), check)

	// Without its second SyncThreads the kernel runs to the end in the
	// simulator's default mode, and its result is wrong: the simulator
	// interleaves the threads of a block in the order that exposes the
	// race, but it cannot see memory accesses, so it cannot say where.
	const m, n, k = 64, 64, 64
	a, b, c = lecture.RandomMatrix(r, m, k), lecture.RandomMatrix(r, k, n), make([]float32, m*n)
	scfg := sim.Config{Grid: kernel.Dim3{X: n / Tile, Y: m / Tile},
		Block: kernel.Dim3{X: Tile, Y: Tile}, Seed: 1, Workers: 1}
	if err := sim.Run(scfg, TiledMatMulNoSync, a, b, c, int32(m), int32(n), int32(k)); err != nil {
		log.Fatal(err)
	}
	_, err = lecture.CheckMatMul(a, b, c, m, n, k, m*n, r)
	fmt.Printf("\nTiledMatMulNoSync: %v\n", err)

	// Checked mode runs the kernel's instrumented twin, which gocu gen
	// writes, and reports two threads touching one element of shared
	// memory with no barrier between them.
	scfg.Checked = true
	err = sim.Run(scfg, TiledMatMulNoSync, a, b, c, int32(m), int32(n), int32(k))
	fmt.Printf("\nTiledMatMulNoSync, checked:\n%v\n", err)
	if err := sim.Run(scfg, lecture.TiledMatMul, a, b, c, int32(m), int32(n), int32(k)); err != nil {
		log.Fatal(err)
	}
	fmt.Println("\nTiledMatMul, checked: no race")
}
