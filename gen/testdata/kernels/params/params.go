// Package params has kernels whose parameters exercise the launchers gocu
// gen writes: names that clash with the launcher's own, a blank parameter,
// every way a value travels to the GPU, and an unexported kernel.
package params

import "github.com/gocu-dev/gocu/kernel"

// Level is a named integer.
type Level int16

// Point is a struct with padding.
type Point struct {
	X int8
	Y int32
	W float64
}

// Scalars writes its parameters into d, as int64 bits, from thread 0.
//
//gocu:kernel
func Scalars(t *kernel.Thread, d []int64, cfg int, _ float32, l uint, on bool, lv Level, p Point, arr [3]int32, f4 kernel.Float4, dim kernel.Dim3) {
	if t.Index() != 0 {
		return
	}
	d[0] = int64(cfg)
	d[1] = int64(l)
	if on {
		d[2] = 1
	}
	d[3] = int64(lv)
	d[4] = int64(p.X)*1000000 + int64(p.Y)
	d[5] = int64(p.W * 4)
	d[6] = int64(arr[0]) + 10*int64(arr[1]) + 100*int64(arr[2])
	d[7] = int64(f4.X + 10*f4.Y + 100*f4.Z + 1000*f4.W)
	d[8] = int64(dim.X) + 10*int64(dim.Y) + 100*int64(dim.Z)
	d[9] = int64(len(d))
}

// scale multiplies x by s in place.
//
//gocu:kernel
func scale(t *kernel.Thread, x []float32, s float32) {
	if i := t.Index(); int(i) < len(x) {
		x[i] *= s
	}
}

// Scale is the exported face of the unexported kernel's launcher.
var Scale = launchScale
