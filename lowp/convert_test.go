package lowp_test

import (
	"fmt"
	"math"
	"runtime"
	"strconv"
	"sync"
	"testing"

	"github.com/gocu-dev/gocu/lowp"
)

// The reference against facts of the formats, and the package's limits
// against the reference.
func TestReference(t *testing.T) {
	limits := map[string][4]float64{ // max, smallest normal, smallest subnormal, epsilon
		"Float16":    {lowp.MaxFloat16, lowp.SmallestNormalFloat16, lowp.SmallestNonzeroFloat16, lowp.EpsilonFloat16},
		"BFloat16":   {lowp.MaxBFloat16, lowp.SmallestNormalBFloat16, lowp.SmallestNonzeroBFloat16, lowp.EpsilonBFloat16},
		"Float8E4M3": {lowp.MaxFloat8E4M3, lowp.SmallestNormalFloat8E4M3, lowp.SmallestNonzeroFloat8E4M3, lowp.EpsilonFloat8E4M3},
		"Float8E5M2": {lowp.MaxFloat8E5M2, lowp.SmallestNormalFloat8E5M2, lowp.SmallestNonzeroFloat8E5M2, lowp.EpsilonFloat8E5M2},
	}
	for _, f := range formats() {
		l := limits[f.name]
		v := f.vals
		one := -1
		for i, x := range v {
			if x == 1 {
				one = i
			}
		}
		got := [4]float64{v[len(v)-1], v[1<<f.fracBits], v[1], v[one+1] - 1}
		if got != l {
			t.Errorf("%s: max, smallest normal, smallest subnormal, epsilon = %v, the package says %v", f.name, got, l)
		}
	}
	// Every finite value of a narrower format is one of Float16's or
	// BFloat16's, as the formats' definitions imply.
	f16, bf16 := formats()[0], formats()[1]
	for _, f := range formats()[2:] {
		for _, x := range f.vals {
			if f16.vals[f16.round(x)] != x && bf16.vals[bf16.round(x)] != x {
				t.Errorf("%s value %v is in neither 16-bit format", f.name, x)
			}
		}
	}
	if len(f16.vals) != 0x7c00 || len(bf16.vals) != 0x7f80 || len(formats()[2].vals) != 0x7f || len(formats()[3].vals) != 0x7c {
		t.Error("wrong number of finite values")
	}
}

// Every bit pattern of every format widens exactly, to float32 and to
// float64, one at a time and in bulk, and the predicates agree with the
// reference.
func TestWidenEveryPattern(t *testing.T) {
	for _, f := range formats() {
		n := 1 << f.width()
		all := make([]int, n)
		for p := range all {
			all[p] = p
		}
		bulk32, bulk64 := f.to32s(all), f.to64s(all)
		m := &mismatches{what: f.name + " widening"}
		for p := range n {
			v, isNaN := f.decode(p, false)
			want32, want64 := f.widen32(p), f.widen64(p)
			got32, got64 := math.Float32bits(f.to32(p)), math.Float64bits(f.to64(p))
			b32, b64 := math.Float32bits(bulk32[p]), math.Float64bits(bulk64[p])
			if got32 != want32 || got64 != want64 || b32 != want32 || b64 != want64 {
				m.add("%#04x (%v): Float32 %#08x, Float64 %#016x, bulk %#08x %#016x; want %#08x %#016x",
					p, v, got32, got64, b32, b64, want32, want64)
			}
			if f.isNaN(p) != isNaN || f.isInf(p) != math.IsInf(v, 0) || f.signbit(p) != (p&f.signBit() != 0) {
				m.add("%#04x (%v): IsNaN %v, IsInf %v, Signbit %v", p, v, f.isNaN(p), f.isInf(p), f.signbit(p))
			}
		}
		m.report(t, n)
	}
}

// Widening then narrowing gives every pattern back, every NaN the
// canonical NaN (through float64, the NaN of cvt from float64), and an
// infinity of a saturating format the largest finite value.
func TestRoundTrip(t *testing.T) {
	for _, f := range formats() {
		m := &mismatches{what: f.name + " round trip"}
		for p := range 1 << f.width() {
			want, want64 := p, p
			switch {
			case f.isNaN(p):
				want, want64 = int(f.nan), f.round64(f.to64(p))
			case f.isInf(p) && f.saturate: // E5M2's infinities saturate
				want = p&f.signBit() | f.pats[len(f.pats)-1]
				want64 = want
			}
			if g32, g64 := f.from32(f.to32(p)), f.from64(f.to64(p)); g32 != want || g64 != want64 {
				m.add("%#04x -> %v -> %#04x (via float64: %#04x), want %#04x (%#04x)", p, f.to32(p), g32, g64, want, want64)
			}
		}
		m.report(t, 1<<f.width())
	}
}

// The float32 conversions against the reference over the dense sweep,
// one at a time and in bulk.
func TestFromFloat32Sweep(t *testing.T) {
	bits := sweep32()
	in := make([]float32, len(bits))
	for i, b := range bits {
		in[i] = math.Float32frombits(b)
	}
	for _, f := range formats() {
		t.Run(f.name, func(t *testing.T) {
			t.Parallel()
			bulk := f.from32s(in)
			m := &mismatches{what: f.name + " from float32"}
			for i, x := range in {
				want := f.round(float64(x))
				if got := f.from32(x); got != want || bulk[i] != want {
					m.add("%#08x (%v): %#04x, bulk %#04x, want %#04x", bits[i], x, got, bulk[i], want)
				}
			}
			m.report(t, len(in))
		})
	}
}

// The float64 conversions against the reference, one at a time and in
// bulk: a single rounding, which rounding through float32 would miss.
func TestFromFloat64(t *testing.T) {
	in := sweep64()
	for _, f := range formats() {
		bulk := f.from64s(in)
		m := &mismatches{what: f.name + " from float64"}
		for i, x := range in {
			want := f.round64(x)
			if got := f.from64(x); got != want || bulk[i] != want {
				m.add("%#016x (%v): %#04x, bulk %#04x, want %#04x", math.Float64bits(x), x, got, bulk[i], want)
			}
		}
		m.report(t, len(in))
	}
	// Rounding through float32 does go wrong on these inputs: the test
	// would catch a conversion that did it.
	f16 := formats()[0]
	wrong := 0
	for _, x := range in {
		if f16.from32(float32(x)) != f16.round(x) {
			wrong++
		}
	}
	if wrong == 0 {
		t.Error("no float64 input tells single from double rounding")
	}
}

// All 2^32 float32 inputs, when LOWP_EXHAUSTIVE is set: each format
// against the reference, in parallel over increasing magnitudes (the
// reference walks its list instead of searching it), a negative input
// checked against its positive twin.
func TestFromFloat32Exhaustive(t *testing.T) {
	if !exhaustive() {
		t.Skip("set LOWP_EXHAUSTIVE=1 to check all 2^32 float32 inputs")
	}
	const chunk = 1 << 22
	for _, f := range formats() {
		t.Run(f.name, func(t *testing.T) {
			var mu sync.Mutex
			m := &mismatches{what: f.name + " from float32, all inputs"}
			next := make(chan uint32)
			var wg sync.WaitGroup
			for range runtime.GOMAXPROCS(0) {
				wg.Go(func() {
					for start := range next {
						i := -1
						for a := start; a < start+chunk && a <= 0x7fffffff; a++ {
							x := math.Float32frombits(a)
							want := f.roundFrom(float64(x), &i)
							got, neg := f.from32(x), f.from32(-x)
							wantNeg := want | f.signBit()
							if f.isNaN(want) {
								wantNeg = want
							}
							if got != want || neg != wantNeg {
								mu.Lock()
								m.add("%#08x (%v): %#04x, negated %#04x; want %#04x, %#04x", a, x, got, neg, want, wantNeg)
								mu.Unlock()
							}
						}
					}
				})
			}
			for start := uint32(0); start < 1<<31; start += chunk {
				next <- start
			}
			close(next)
			wg.Wait()
			m.report(t, 1<<32)
		})
	}
}

// Points that the formats' definitions and CUDA's documentation fix,
// spelled out, so that a failure reads as a statement about the format.
func TestDocumentedPoints(t *testing.T) {
	inf, nan := math.Inf(1), math.NaN()
	f16 := func(f float64) uint16 { return lowp.Float16FromFloat32(float32(f)).Bits() }
	bf16 := func(f float64) uint16 { return lowp.BFloat16FromFloat32(float32(f)).Bits() }
	e4 := func(f float64) uint8 { return lowp.Float8E4M3FromFloat32(float32(f)).Bits() }
	e5 := func(f float64) uint8 { return lowp.Float8E5M2FromFloat32(float32(f)).Bits() }
	for _, c := range []struct {
		what      string
		got, want uint64
	}{
		{"half 1", uint64(f16(1)), 0x3c00},
		{"half 65504 is the largest finite", uint64(f16(65504)), 0x7bff},
		{"half: just below 65520 rounds down", uint64(f16(65519.996)), 0x7bff},
		{"half: 65520 is the tie, to even, which is infinity", uint64(f16(65520)), 0x7c00},
		{"half -inf", uint64(f16(-inf)), 0xfc00},
		{"half NaN", uint64(f16(nan)), lowp.NaNFloat16},
		{"half smallest subnormal", uint64(f16(0x1p-24)), 0x0001},
		{"half: 2^-25 is the tie with 0, to even", uint64(f16(0x1p-25)), 0x0000},
		{"half: above 2^-25 rounds up", uint64(f16(0x1.000002p-25)), 0x0001},
		{"half -0", uint64(f16(math.Copysign(0, -1))), 0x8000},
		{"half: a tiny negative rounds to -0", uint64(f16(-1e-30)), 0x8000},
		{"bf16 1", uint64(bf16(1)), 0x3f80},
		{"bf16: the float32 max rounds to infinity", uint64(bf16(math.MaxFloat32)), 0x7f80},
		{"bf16: a float32 subnormal stays subnormal", uint64(bf16(0x1p-133)), 0x0001},
		{"bf16 NaN", uint64(bf16(nan)), lowp.NaNBFloat16},
		{"e4m3 448 is the largest finite", uint64(e4(448)), 0x7e},
		{"e4m3: 464 (the tie with 480, a NaN pattern) saturates", uint64(e4(464)), 0x7e},
		{"e4m3: 1e9 saturates", uint64(e4(1e9)), 0x7e},
		{"e4m3: +inf saturates", uint64(e4(inf)), 0x7e},
		{"e4m3: -inf saturates", uint64(e4(-inf)), 0xfe},
		{"e4m3 NaN", uint64(e4(nan)), lowp.NaNE4M3},
		{"e4m3 -NaN", uint64(e4(math.Copysign(nan, -1))), lowp.NaNE4M3},
		{"e4m3 smallest subnormal", uint64(e4(0x1p-9)), 0x01},
		{"e4m3 smallest normal", uint64(e4(0x1p-6)), 0x08},
		{"e5m2 57344 is the largest finite", uint64(e5(57344)), 0x7b},
		{"e5m2: 61440 (the tie with infinity) saturates", uint64(e5(61440)), 0x7b},
		{"e5m2: +inf saturates", uint64(e5(inf)), 0x7b},
		{"e5m2: -inf saturates", uint64(e5(-inf)), 0xfb},
		{"e5m2 NaN", uint64(e5(nan)), lowp.NaNE5M2},
		{"e5m2 smallest subnormal", uint64(e5(0x1p-16)), 0x01},
		{"e5m2 is the upper byte of half", uint64(e5(1.5)), uint64(f16(1.5) >> 8)},
		{"half from float64 rounds once", uint64(lowp.Float16FromFloat64(1 + 0x1p-11 + 0x1p-40).Bits()), 0x3c01},
		{"bf16 from float64 rounds once", uint64(lowp.BFloat16FromFloat64(1 + 0x1p-8 + 0x1p-40).Bits()), 0x3f81},
	} {
		if c.got != c.want {
			t.Errorf("%s: got %#x, want %#x", c.what, c.got, c.want)
		}
	}
	if !lowp.Float8E5M2FromBits(0x7c).IsInf() || !lowp.Float8E5M2FromBits(0x7d).IsNaN() || lowp.Float8E4M3FromBits(0x7e).IsNaN() {
		t.Error("E5M2 infinity and NaN, E4M3 largest finite")
	}
}

// The bulk functions convert min(len(dst), len(src)) elements and return
// that count, leaving the rest of dst alone.
func TestBulkLengths(t *testing.T) {
	src := []float32{1, 2, 3, 4}
	dst := []lowp.BFloat16{9, 9, 9, 9, 9, 9}
	if n := lowp.FromFloat32s(dst, src); n != 4 || dst[3].Float32() != 4 || dst[4] != 9 {
		t.Errorf("FromFloat32s: %d, %v", n, dst)
	}
	if n := lowp.FromFloat32s(dst[:2], src); n != 2 || dst[2].Float32() != 3 {
		t.Errorf("FromFloat32s into a shorter slice: %d, %v", n, dst)
	}
	out := []float64{-1, -1, -1}
	if n := lowp.ToFloat64s(out, dst[:2]); n != 2 || out[1] != 2 || out[2] != -1 {
		t.Errorf("ToFloat64s: %d, %v", n, out)
	}
	if n := lowp.ToFloat32s(nil, dst); n != 0 {
		t.Errorf("ToFloat32s into nil: %d", n)
	}
	e := make([]lowp.Float8E4M3, 2)
	if n := lowp.FromFloat64s(e, []float64{0.5, -1000, 7}); n != 2 || e[0].Float32() != 0.5 || e[1].Float32() != -448 {
		t.Errorf("FromFloat64s: %d, %v", n, e)
	}
}

// Bulk conversion allocates nothing, whatever the format.
func TestBulkAllocates(t *testing.T) {
	src := make([]float32, 64)
	h, b := make([]lowp.Float16, 64), make([]lowp.Float8E5M2, 64)
	if a := testing.AllocsPerRun(10, func() {
		lowp.FromFloat32s(h, src)
		lowp.FromFloat32s(b, src)
		lowp.ToFloat32s(src, h)
		lowp.ToFloat32s(src, b)
	}); a != 0 {
		t.Errorf("%v allocations per run", a)
	}
}

// String is strconv's shortest formatting of the float32 value, and the
// fmt verbs act on that value.
func TestFormatting(t *testing.T) {
	for _, f := range formats() {
		for p := range 1 << f.width() {
			if got, want := f.str(p), strconv.FormatFloat(float64(f.to32(p)), 'g', -1, 32); got != want {
				t.Fatalf("%s %#04x: String %q, want %q", f.name, p, got, want)
			}
		}
	}
	h := lowp.Float16FromFloat32(-2.5)
	for _, verb := range []string{"%v", "%s", "%.3f", "%8.2e", "%-9g|", "%+v", "%G", "%x"} {
		if got, want := fmt.Sprintf(verb, h), fmt.Sprintf(verb, float32(-2.5)); got != want {
			t.Errorf("%s: %q, want %q", verb, got, want)
		}
	}
	if got := fmt.Sprint([]lowp.Float8E5M2{0x3c, 0x7c, 0xfe}); got != "[1 +Inf NaN]" {
		t.Errorf("a slice prints as %s", got)
	}
}
