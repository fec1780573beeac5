package lecture_test

import (
	"errors"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/gocu-dev/gocu"
	"github.com/gocu-dev/gocu/array"
	"github.com/gocu-dev/gocu/internal/lecture"
)

// TestLauncherTakesArrays passes arrays to a generated launcher where the
// kernel takes slices: an array of the slice's element type runs, and one
// of another dtype fails the launch, naming the argument.
func TestLauncherTakesArrays(t *testing.T) {
	for _, name := range []string{"cpu", "sim"} {
		dev, err := gocu.Open(name)
		if err != nil {
			t.Fatal(err)
		}
		const n = 1000
		r := rand.New(rand.NewPCG(uint64(n), 7))
		rgb := make([]uint8, 3*n)
		for i := range rgb {
			rgb[i] = uint8(r.UintN(256))
		}
		in := array.FromSliceOn(dev, rgb)
		out := array.FromSliceOn(dev, lecture.Fill(make([]uint8, n), 0xA5)) // poisoned
		if err := lecture.LaunchGray(dev, gocu.Auto(n), in, out, n); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		got, err := array.ToSlice[uint8](out)
		if err != nil {
			t.Fatal(err)
		}
		want := lecture.GrayReference(rgb, n)
		for i := range want {
			if got[i] != want[i] {
				t.Fatalf("%s: gray[%d] = %d, want %d", name, i, got[i], want[i])
			}
		}

		wrong := array.FromSliceOn(dev, make([]float32, n))
		err = lecture.LaunchGray(dev, gocu.Auto(n), in, wrong, n)
		if want := "gocu: launch of Gray: argument 2 (gray): *array.Array gives float32 elements, the kernel's parameter is []uint8"; err == nil || err.Error() != want {
			t.Errorf("%s: a float32 array for []uint8: %v\nwant %s", name, err, want)
		}
		strided := array.FromSliceOn(dev, rgb, 3, n).T()
		err = lecture.LaunchGray(dev, gocu.Auto(n), strided, out, n)
		if err == nil || !strings.Contains(err.Error(), "argument 1 (rgb)") || !strings.Contains(err.Error(), "Contiguous") {
			t.Errorf("%s: a strided array: %v", name, err)
		}
		var nilSlice gocu.Slice[uint8]
		if err := lecture.LaunchGray(dev, gocu.Auto(n), nilSlice, out, n); err == nil || !strings.Contains(err.Error(), "argument 1 (rgb): nil") {
			t.Errorf("%s: a nil argument: %v", name, err)
		}
		var b *gocu.Buffer[uint8]
		if err := lecture.LaunchGray(dev, gocu.Auto(n), b, out, n); err == nil || errors.Is(err, gocu.ErrStale) {
			t.Errorf("%s: a nil *Buffer: %v", name, err)
		}
	}
}
