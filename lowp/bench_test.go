package lowp

import (
	"math"
	"math/rand/v2"
	"testing"
)

// The bulk conversions on a million elements, reported per element.
// Inputs are normally distributed values with a spread of magnitudes,
// as activations and weights are, so that branches are as (un)predictable
// as in real data.

const benchN = 1 << 20

func benchInputs() []float32 {
	r := rand.New(rand.NewPCG(1, 2))
	x := make([]float32, benchN)
	for i := range x {
		x[i] = float32(r.NormFloat64() * math.Exp2(float64(r.IntN(12)-8)))
	}
	return x
}

func perElement(b *testing.B) {
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/benchN, "ns/elem")
}

func benchFrom32[T Float](b *testing.B) {
	src := benchInputs()
	dst := make([]T, benchN)
	b.ReportAllocs()
	for b.Loop() {
		FromFloat32s(dst, src)
	}
	perElement(b)
}

func benchFrom64[T Float](b *testing.B) {
	src32 := benchInputs()
	src := make([]float64, benchN)
	for i, f := range src32 {
		src[i] = float64(f) * (1 + 0x1p-30)
	}
	dst := make([]T, benchN)
	b.ReportAllocs()
	for b.Loop() {
		FromFloat64s(dst, src)
	}
	perElement(b)
}

func benchTo32[T Float](b *testing.B) {
	src := make([]T, benchN)
	FromFloat32s(src, benchInputs())
	dst := make([]float32, benchN)
	b.ReportAllocs()
	for b.Loop() {
		ToFloat32s(dst, src)
	}
	perElement(b)
}

func benchTo64[T Float](b *testing.B) {
	src := make([]T, benchN)
	FromFloat32s(src, benchInputs())
	dst := make([]float64, benchN)
	b.ReportAllocs()
	for b.Loop() {
		ToFloat64s(dst, src)
	}
	perElement(b)
}

func BenchmarkFromFloat32s(b *testing.B) {
	b.Run("Float16", benchFrom32[Float16])
	b.Run("BFloat16", benchFrom32[BFloat16])
	b.Run("E4M3", benchFrom32[Float8E4M3])
	b.Run("E5M2", benchFrom32[Float8E5M2])
}

func BenchmarkFromFloat64s(b *testing.B) {
	b.Run("Float16", benchFrom64[Float16])
	b.Run("BFloat16", benchFrom64[BFloat16])
	b.Run("E4M3", benchFrom64[Float8E4M3])
	b.Run("E5M2", benchFrom64[Float8E5M2])
}

func BenchmarkToFloat32s(b *testing.B) {
	b.Run("Float16", benchTo32[Float16])
	b.Run("BFloat16", benchTo32[BFloat16])
	b.Run("E4M3", benchTo32[Float8E4M3])
	b.Run("E5M2", benchTo32[Float8E5M2])
}

func BenchmarkToFloat64s(b *testing.B) {
	b.Run("Float16", benchTo64[Float16])
	b.Run("BFloat16", benchTo64[BFloat16])
	b.Run("E4M3", benchTo64[Float8E4M3])
	b.Run("E5M2", benchTo64[Float8E5M2])
}

// The arithmetic widening that the table replaces, for comparison.
func BenchmarkFloat16Float32Arith(b *testing.B) {
	src := make([]Float16, benchN)
	FromFloat32s(src, benchInputs())
	dst := make([]float32, benchN)
	for b.Loop() {
		for i, x := range src {
			dst[i] = x.Float32()
		}
	}
	perElement(b)
}

// A small call: the fixed cost of the generic dispatch.
func BenchmarkFromFloat32sSmall(b *testing.B) {
	src := benchInputs()[:8]
	dst := make([]Float16, 8)
	b.ReportAllocs()
	for b.Loop() {
		FromFloat32s(dst, src)
	}
}
