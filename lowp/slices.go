package lowp

import "math"

// Float is the set of the package's formats. Generic code over it can call
// the methods every format has.
type Float interface {
	Float16 | BFloat16 | Float8E4M3 | Float8E5M2
	Float32() float32
	Float64() float64
	IsNaN() bool
	IsInf() bool
	Signbit() bool
	String() string
}

// FromFloat32s rounds src[i] into dst[i] for every i below min(len(dst),
// len(src)), with the rules of the format's FromFloat32 function, and
// returns that count, like copy. It is meant for converting large arrays:
// call it on parts of them from several goroutines to use several cores.
func FromFloat32s[T Float](dst []T, src []float32) int {
	n := min(len(dst), len(src))
	src = src[:n]
	switch d := any(dst[:n]).(type) {
	case []Float16:
		for i, f := range src {
			d[i] = Float16FromFloat32(f)
		}
	case []BFloat16:
		for i, f := range src {
			d[i] = BFloat16FromFloat32(f)
		}
	case []Float8E4M3:
		for i, f := range src {
			d[i] = Float8E4M3FromFloat32(f)
		}
	case []Float8E5M2:
		for i, f := range src {
			d[i] = Float8E5M2FromFloat32(f)
		}
	}
	return n
}

// FromFloat64s is FromFloat32s for float64 sources, each element rounded
// once, with the rules of the format's FromFloat64 function.
func FromFloat64s[T Float](dst []T, src []float64) int {
	n := min(len(dst), len(src))
	src = src[:n]
	switch d := any(dst[:n]).(type) {
	case []Float16:
		for i, f := range src {
			d[i] = Float16FromFloat64(f)
		}
	case []BFloat16:
		for i, f := range src {
			d[i] = BFloat16FromFloat64(f)
		}
	case []Float8E4M3:
		for i, f := range src {
			d[i] = Float8E4M3FromFloat64(f)
		}
	case []Float8E5M2:
		for i, f := range src {
			d[i] = Float8E5M2FromFloat64(f)
		}
	}
	return n
}

// ToFloat32s widens src[i] into dst[i] for every i below min(len(dst),
// len(src)), exactly, as the format's Float32 method does, and returns that
// count.
func ToFloat32s[T Float](dst []float32, src []T) int {
	n := min(len(dst), len(src))
	dst = dst[:n]
	switch s := any(src[:n]).(type) {
	case []Float16:
		t := float16Table()
		for i, x := range s {
			dst[i] = math.Float32frombits(t[x])
		}
	case []BFloat16:
		for i, x := range s {
			dst[i] = x.Float32()
		}
	case []Float8E4M3:
		for i, x := range s {
			dst[i] = math.Float32frombits(e4m3Table[x])
		}
	case []Float8E5M2:
		for i, x := range s {
			dst[i] = math.Float32frombits(e5m2Table[x])
		}
	}
	return n
}

// ToFloat64s widens src[i] into dst[i] for every i below min(len(dst),
// len(src)), exactly, as the format's Float64 method does, and returns that
// count.
func ToFloat64s[T Float](dst []float64, src []T) int {
	n := min(len(dst), len(src))
	dst = dst[:n]
	switch s := any(src[:n]).(type) {
	case []Float16:
		t := float16Table()
		for i, x := range s {
			f := float64(math.Float32frombits(t[x]))
			if x.IsNaN() {
				f = widenNaN(t[x])
			}
			dst[i] = f
		}
	case []BFloat16:
		for i, x := range s {
			dst[i] = x.Float64()
		}
	case []Float8E4M3:
		for i, x := range s {
			dst[i] = x.Float64()
		}
	case []Float8E5M2:
		for i, x := range s {
			dst[i] = x.Float64()
		}
	}
	return n
}
