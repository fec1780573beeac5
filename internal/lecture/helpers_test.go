package lecture_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/gocu-dev/gocu/internal/lecture"
	"github.com/gocu-dev/gocu/kernel"
	"github.com/gocu-dev/gocu/meta"
)

const Tile = lecture.Tile

// newRand returns a generator seeded from the test's name, different for
// every test but reproducible, and logs nothing: the inputs are random, the
// references are computed from them.
func newRand(t testing.TB) *rand.Rand {
	var h uint64 = 14695981039346656037
	for _, c := range t.Name() {
		h = (h ^ uint64(c)) * 1099511628211
	}
	return rand.New(rand.NewPCG(h, rand.Uint64()))
}

func randBytes(r *rand.Rand, n int) []uint8 {
	b := make([]uint8, n)
	for i := range b {
		b[i] = uint8(r.UintN(256))
	}
	return b
}

func randFloats(r *rand.Rand, n int) []float32 {
	x := make([]float32, n)
	for i := range x {
		x[i] = float32(r.NormFloat64())
	}
	return x
}

// nanFilled returns n NaNs: any element a kernel fails to write stays NaN
// and fails the comparison.
func nanFilled(n int) []float32 {
	x := make([]float32, n)
	for i := range x {
		x[i] = float32(math.NaN())
	}
	return x
}

func cdiv(a, b int) int32 { return int32((a + b - 1) / b) }

func dim(x, y int32) kernel.Dim3 { return kernel.Dim3{X: x, Y: y, Z: 1} }

// relClose reports whether got is within tol*scale of want.
func relClose(got float32, want, scale, tol float64) bool {
	return math.Abs(float64(got)-want) <= tol*scale
}

// twinOf returns the checked twin gocu gen wrote for the kernel fn (found
// through package meta, where the generated file registers it), typed as
// the kernel, so that tests call it directly.
func twinOf[F any](fn F) F {
	_, k, ok := meta.Lookup(fn)
	if !ok {
		panic(fmt.Sprintf("%T is not a kernel registered by gocu gen: run go generate", fn))
	}
	return k.Checked.(F)
}

var (
	grayChecked        = twinOf(lecture.Gray)
	tiledMatMulChecked = twinOf(lecture.TiledMatMul)
	histogramChecked   = twinOf(lecture.Histogram)
	sumChecked         = twinOf(lecture.Sum)
)
