package main

import (
	"math/rand/v2"
	"testing"

	"github.com/gocu-dev/gocu/array"
)

// The array expression and the lecture kernel give the same bytes on
// random images (every channel value, odd sizes), on the default devices
// (CPU and simulator without a GPU).
func TestExpressionMatchesKernel(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, sz := range [][2]int{{1, 1}, {37, 13}, {256, 255}} {
		w, h := sz[0], sz[1]
		img := testImage(w, h)
		for i := range img.Pix {
			if i%4 != 3 {
				img.Pix[i] = uint8(r.IntN(256))
			}
		}
		chw := array.FromImage(img, array.CHW, 3)
		want, err := grayExpr(chw).Uint8s()
		if err != nil {
			t.Fatal(err)
		}
		rgb, err := chw.Uint8s()
		if err != nil {
			t.Fatal(err)
		}
		got, where, _, err := runKernel(rgb, w*h)
		if err != nil {
			t.Fatal(err)
		}
		for i := range want {
			if got[i] != want[i] {
				px := img.RGBAAt(i%w, i/w)
				t.Fatalf("%dx%d on %s: pixel %d (rgb %d,%d,%d): kernel %d, array %d", w, h, where, i, px.R, px.G, px.B, got[i], want[i])
			}
		}
	}
}
