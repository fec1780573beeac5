package lecture_test

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/gocu-dev/gocu"
	"github.com/gocu-dev/gocu/internal/lecture"
)

// BenchmarkCheckedCost measures what checked mode (race and
// uninitialised-read detection) costs over the default mode on small
// launches of the tiled matmul, the kind a missing barrier breaks: the
// figure behind the README's advice on which mode catches what.
func BenchmarkCheckedCost(b *testing.B) {
	dev, err := gocu.Open("sim")
	if err != nil {
		b.Fatal(err)
	}
	for _, n := range []int{32, 64, 128} {
		r := rand.New(rand.NewPCG(uint64(n), 1))
		a, bm := make([]float32, n*n), make([]float32, n*n)
		for i := range a {
			a[i], bm[i] = r.Float32(), r.Float32()
		}
		da, _ := gocu.FromSlice(dev, a)
		db, _ := gocu.FromSlice(dev, bm)
		dc, _ := gocu.Alloc[float32](dev, n*n)
		for _, checked := range []bool{false, true} {
			mode := "default"
			if checked {
				mode = "checked"
			}
			b.Run(fmt.Sprintf("%dx%dx%d/%s", n, n, n, mode), func(b *testing.B) {
				cfg := gocu.Grid2D(n, n, lecture.Tile, lecture.Tile)
				cfg.Checked = checked
				for b.Loop() {
					if err := lecture.LaunchTiledMatMul(dev, cfg, da, db, dc, int32(n), int32(n), int32(n)); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}
