package lowp_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/gocu-dev/gocu/lowp"
)

// format is one of the package's formats, seen through plain ints (bit
// patterns) so that one test body covers all four.
type format struct {
	*ref
	from32  func(float32) int
	from64  func(float64) int
	to32    func(int) float32
	to64    func(int) float64
	isNaN   func(int) bool
	isInf   func(int) bool
	signbit func(int) bool
	str     func(int) string
	// The bulk functions, on patterns.
	from32s func([]float32) []int
	from64s func([]float64) []int
	to32s   func([]int) []float32
	to64s   func([]int) []float64
}

func newFormat[T lowp.Float](s *spec, from32 func(float32) T, from64 func(float64) T) *format {
	ints := func(x []T) []int {
		out := make([]int, len(x))
		for i, v := range x {
			out[i] = int(v)
		}
		return out
	}
	ts := func(p []int) []T {
		out := make([]T, len(p))
		for i, v := range p {
			out[i] = T(v)
		}
		return out
	}
	return &format{
		ref:     newRef(s),
		from32:  func(f float32) int { return int(from32(f)) },
		from64:  func(f float64) int { return int(from64(f)) },
		to32:    func(p int) float32 { return T(p).Float32() },
		to64:    func(p int) float64 { return T(p).Float64() },
		isNaN:   func(p int) bool { return T(p).IsNaN() },
		isInf:   func(p int) bool { return T(p).IsInf() },
		signbit: func(p int) bool { return T(p).Signbit() },
		str:     func(p int) string { return T(p).String() },
		from32s: func(src []float32) []int {
			dst := make([]T, len(src))
			lowp.FromFloat32s(dst, src)
			return ints(dst)
		},
		from64s: func(src []float64) []int {
			dst := make([]T, len(src))
			lowp.FromFloat64s(dst, src)
			return ints(dst)
		},
		to32s: func(p []int) []float32 {
			dst := make([]float32, len(p))
			lowp.ToFloat32s(dst, ts(p))
			return dst
		},
		to64s: func(p []int) []float64 {
			dst := make([]float64, len(p))
			lowp.ToFloat64s(dst, ts(p))
			return dst
		},
	}
}

// formats returns the four formats with their references, built once.
var formats = sync.OnceValue(func() []*format {
	return []*format{
		newFormat(&spec{name: "Float16", expBits: 5, fracBits: 10, ieee: true, nan: lowp.NaNFloat16, nan64: true},
			lowp.Float16FromFloat32, lowp.Float16FromFloat64),
		newFormat(&spec{name: "BFloat16", expBits: 8, fracBits: 7, ieee: true, nan: lowp.NaNBFloat16, keepNaN: true, nan64: true},
			lowp.BFloat16FromFloat32, lowp.BFloat16FromFloat64),
		newFormat(&spec{name: "Float8E4M3", expBits: 4, fracBits: 3, saturate: true, nan: lowp.NaNE4M3},
			lowp.Float8E4M3FromFloat32, lowp.Float8E4M3FromFloat64),
		newFormat(&spec{name: "Float8E5M2", expBits: 5, fracBits: 2, ieee: true, saturate: true, nan: lowp.NaNE5M2},
			lowp.Float8E5M2FromFloat32, lowp.Float8E5M2FromFloat64),
	}
})

// exhaustive reports whether LOWP_EXHAUSTIVE asks for the tests over all
// 2^32 float32 inputs (minutes on two cores).
func exhaustive() bool { return os.Getenv("LOWP_EXHAUSTIVE") != "" }

// sweepLows are the low halves that the dense sweep puts under every
// upper half of a float32 bit pattern: every multiple of 0x1000 (the tie
// point of Float16's normal rounding is 0x1000, BFloat16's 0x8000, and
// subnormal results move it up through 0x2000, 0x4000, 0x8000 with any
// kept bits above it), the neighbours of the ties, the extremes, and
// random values. The ties of the 8-bit formats lie in the upper half: low
// half 0 covers them.
func sweepLows() []uint32 {
	lows := []uint32{1, 2, 0x0fff, 0x1001, 0x1fff, 0x2001, 0x3fff, 0x4001, 0x7fff, 0x8001, 0xfffe, 0xffff}
	for l := uint32(0); l < 0x10000; l += 0x1000 {
		lows = append(lows, l)
	}
	r := rand.New(rand.NewPCG(7, 11))
	for range 8 {
		lows = append(lows, r.Uint32N(0x10000))
	}
	return lows
}

// sweep32 returns the dense sweep of float32 inputs, as bit patterns:
// every upper half (both signs, zeros, subnormals, normals, infinities,
// NaNs with payloads) times sweepLows, then random float32 subnormals.
func sweep32() []uint32 {
	lows := sweepLows()
	out := make([]uint32, 0, 1<<16*len(lows)+1<<12)
	for hi := range uint32(1 << 16) {
		for _, lo := range lows {
			out = append(out, hi<<16|lo)
		}
	}
	r := rand.New(rand.NewPCG(13, 17))
	for range 1 << 12 {
		out = append(out, r.Uint32N(1<<23)|r.Uint32N(2)<<31)
	}
	return out
}

// sweep64 returns float64 inputs: the tie points of every format, each
// with its float64 neighbours and with nearby values that float32 would
// round onto the tie (where rounding through float32 goes wrong), random
// values over the whole range of the formats and beyond, and specials.
func sweep64() []float64 {
	var out []float64
	add := func(m float64) {
		out = append(out, m, -m, math.Nextafter(m, math.Inf(1)), math.Nextafter(m, 0))
		for _, d := range []float64{0x1p-26, 0x1p-30, 0x1p-40} {
			out = append(out, m*(1+d), m*(1-d), -m*(1+d))
		}
	}
	for _, f := range formats() {
		v := append(f.vals, f.above)
		for i := 1; i < len(v); i++ {
			add((v[i-1] + v[i]) / 2)
			add(v[i])
		}
	}
	r := rand.New(rand.NewPCG(19, 23))
	for range 1 << 16 {
		out = append(out, math.Ldexp(r.Float64()+0.5, r.IntN(300)-150)*float64(1-2*r.IntN(2)))
	}
	out = append(out, 0, math.Copysign(0, -1), math.Inf(1), math.Inf(-1), math.MaxFloat64, -math.MaxFloat64,
		math.SmallestNonzeroFloat64, -math.SmallestNonzeroFloat64, 0x1p-1022, 1e300, -1e-300,
		math.MaxFloat32, 0x1.fffffffp127, 0x1.ffp127, 0x1.fe8p127)
	for _, b := range []uint64{0x7ff8000000000001, 0xfff8000000000000, 0x7ff0000000000001, 0x7fffffffffffffff, 0xfff0000000000001} {
		out = append(out, math.Float64frombits(b))
	}
	return out
}

// mismatches collects failures and reports the first few and the count.
type mismatches struct {
	what  string
	n     int
	first []string
}

func (m *mismatches) add(format string, args ...any) {
	m.n++
	if len(m.first) < 10 {
		m.first = append(m.first, fmt.Sprintf(format, args...))
	}
}

func (m *mismatches) report(t *testing.T, of int) {
	t.Helper()
	if m.n > 0 {
		t.Errorf("%s: %d of %d differ; first:\n\t%s", m.what, m.n, of, strings.Join(m.first, "\n\t"))
	}
}
