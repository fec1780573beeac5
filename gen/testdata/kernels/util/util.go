// Package util holds device functions and types that kernels of other
// packages call: gocu gen translates them with the kernels that reach them.
package util

import "github.com/gocu-dev/gocu/kernel"

// Vec3 is a small vector passed by value.
type Vec3 struct{ X, Y, Z float32 }

// Dot returns the dot product of v and w.
func (v Vec3) Dot(w Vec3) float32 { return v.X*w.X + v.Y*w.Y + v.Z*w.Z }

// Scale returns v scaled by s.
func (v Vec3) Scale(s float32) Vec3 { return Vec3{v.X * s, v.Y * s, v.Z * s} }

// limit is unexported; Clamp's checked copy inlines it.
const limit = 1 << 20

// Clamp limits x to [lo, hi].
func Clamp(x, lo, hi int32) int32 {
	return min(max(x, lo), hi, limit)
}

// SumRow adds the n elements of row r of an n-column matrix.
func SumRow(m []float32, r, n int32) float32 {
	var s float32
	for i := range n {
		s += m[r*n+i]
	}
	return s
}

// Lane returns the thread's lane; it takes the thread itself.
func Lane(t *kernel.Thread) int32 { return t.LaneID() }

// Lerp interpolates between a and b; a generic device function that kernels
// of other packages instantiate.
func Lerp[T kernel.Float](a, b, w T) T { return a + w*(b-a) }

// Smooth is a table that kernels of other packages read: gocu gen puts it
// in their module's constant memory.
var Smooth = [3]float32{0.25, 0.5, 0.25}
