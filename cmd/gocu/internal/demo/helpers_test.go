package demo

import (
	"github.com/gocu-dev/gocu"
	"image"
	"math/rand/v2"
	"testing"

	"github.com/gocu-dev/gocu/array"
)

// newRand returns a generator seeded afresh for every run; failures log
// the seed.
func newRand(t testing.TB) *rand.Rand {
	seed := rand.Uint64()
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("random seed %#x", seed)
		}
	})
	return rand.New(rand.NewPCG(seed, 1))
}

// randomImage returns a w x h NRGBA image of random colours with random
// alpha in its last column.
func randomImage(r *rand.Rand, w, h int) *image.NRGBA {
	img := image.NewNRGBA(image.Rect(0, 0, w, h))
	for i := range img.Pix {
		img.Pix[i] = uint8(r.UintN(256))
		if i%4 == 3 && (i/4)%w != w-1 {
			img.Pix[i] = 255
		}
	}
	return img
}

// referencePlanar is array.FromImage's planar RGB of img: an independent
// conversion (through img.At and color.NRGBAModel) to check Planar with.
func referencePlanar(t *testing.T, img image.Image) []uint8 {
	t.Helper()
	a := array.FromImageOn(gocu.MustOpen("cpu"), img, array.CHW, 3)
	data, err := array.ToSlice[uint8](a)
	if err != nil {
		t.Fatal(err)
	}
	return data
}
