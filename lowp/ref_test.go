package lowp_test

// An independent reference for the conversions: it knows each format only
// by its field widths and special-value rules, lists every value the
// format can hold, and rounds by searching that list, with none of the bit
// tricks of the package.

import (
	"fmt"
	"math"
	"sort"

	"github.com/gocu-dev/gocu/lowp"
)

// spec describes a binary floating-point format.
type spec struct {
	name     string
	expBits  int
	fracBits int
	// ieee: the all-ones exponent holds the infinities (fraction 0) and
	// NaNs. Otherwise (E4M3) it holds finite values and only the pattern
	// with every exponent and fraction bit set is NaN.
	ieee bool
	// saturate: a value beyond the largest finite one gives that value
	// (cvt's .satfinite); otherwise it gives infinity.
	saturate bool
	// nan is the NaN a narrowing conversion gives.
	nan uint16
	// keepNaN: widening a NaN keeps its bits (BFloat16.Float32); otherwise
	// it gives the canonical float32 NaN.
	keepNaN bool
	// nan64: narrowing a float64 NaN keeps its sign and top fraction bits
	// (cvt.rn.f16.f64, cvt.rn.bf16.f64) instead of giving nan.
	nan64 bool
}

func (s *spec) width() int   { return 1 + s.expBits + s.fracBits }
func (s *spec) bias() int    { return 1<<(s.expBits-1) - 1 }
func (s *spec) signBit() int { return 1 << (s.width() - 1) }

// decode returns the value of the bit pattern p, or isNaN. With unbounded,
// the special meaning of the top exponent is ignored, which gives the value
// the pattern after the largest finite one would have if the exponent range
// went on.
func (s *spec) decode(p int, unbounded bool) (v float64, isNaN bool) {
	sign := 1.0
	if p&s.signBit() != 0 {
		sign = -1
	}
	e := p >> s.fracBits & (1<<s.expBits - 1)
	m := p & (1<<s.fracBits - 1)
	allOnes := e == 1<<s.expBits-1
	switch {
	case unbounded:
	case s.ieee && allOnes && m == 0:
		return math.Inf(int(sign)), false
	case s.ieee && allOnes, !s.ieee && allOnes && m == 1<<s.fracBits-1:
		return math.NaN(), true
	}
	if e == 0 {
		return sign * math.Ldexp(float64(m), 1-s.bias()-s.fracBits), false
	}
	return sign * math.Ldexp(float64(1<<s.fracBits+m), e-s.bias()-s.fracBits), false
}

// ref is a spec with its finite non-negative values, in increasing order.
type ref struct {
	*spec
	vals  []float64
	pats  []int
	above float64 // the value after the largest, in an unbounded exponent range
	inf   int     // the +Inf pattern, for ieee formats
}

func newRef(s *spec) *ref {
	r := &ref{spec: s}
	for p := range s.signBit() {
		v, isNaN := s.decode(p, false)
		if isNaN || math.IsInf(v, 0) {
			continue
		}
		r.vals = append(r.vals, v)
		r.pats = append(r.pats, p)
	}
	if !sort.SliceIsSorted(r.vals, func(i, j int) bool { return r.vals[i] < r.vals[j] }) {
		panic(s.name + ": the finite values do not increase with their patterns")
	}
	r.above, _ = s.decode(r.pats[len(r.pats)-1]+1, true)
	r.inf = (1<<s.expBits - 1) << s.fracBits
	return r
}

// round64 is round for a float64 input: the same but for a NaN, which
// keeps its sign in the formats that have nan64.
func (r *ref) round64(x float64) int {
	if math.IsNaN(x) && r.nan64 {
		return int(lowp.NarrowNaN64(math.Float64bits(x), uint(r.fracBits)))
	}
	return r.round(x)
}

// round returns the pattern that x rounds to: to nearest, ties to the even
// pattern, then overflow, saturation and NaN by the spec.
func (r *ref) round(x float64) int {
	i := -1
	return r.roundFrom(x, &i)
}

// roundFrom is round with a search hint: *i is an index of vals at or
// below |x| (or -1: unknown), and is left at the largest such index. A
// sweep in increasing order of |x| then walks the list instead of searching
// it.
func (r *ref) roundFrom(x float64, i *int) int {
	if math.IsNaN(x) {
		return int(r.nan)
	}
	sign := 0
	if math.Signbit(x) {
		sign, x = r.signBit(), -x
	}
	n := len(r.vals)
	if *i < 0 || *i >= n || r.vals[*i] > x {
		*i = sort.Search(n, func(k int) bool { return r.vals[k] > x }) - 1 // vals[0] is 0 <= x
	}
	for *i+1 < n && r.vals[*i+1] <= x {
		*i++
	}
	k := *i
	lo, hi := r.vals[k], r.above
	if k+1 < n {
		hi = r.vals[k+1]
	}
	pat := r.pats[k]
	if x != lo {
		mid := (lo + hi) / 2 // exact: lo and hi have few significant bits
		if x > mid || x == mid && pat&1 == 1 {
			pat++ // the next pattern up: hi's, or past the largest finite one
		}
	}
	if k == n-1 && pat != r.pats[k] { // rounded past the largest finite value
		if r.saturate {
			pat = r.pats[k]
		} else {
			pat = r.inf
		}
	}
	return sign | pat
}

// widen32 returns the float32 bits that widening the pattern p gives.
func (r *ref) widen32(p int) uint32 {
	v, isNaN := r.decode(p, false)
	switch {
	case isNaN && r.keepNaN:
		return uint32(p) << (32 - r.width())
	case isNaN:
		return lowp.NaNFloat32
	}
	if float64(float32(v)) != v {
		panic(fmt.Sprintf("%s %#x = %v is not a float32", r.name, p, v))
	}
	return math.Float32bits(float32(v))
}

// widen64 returns the float64 bits that widening the pattern p gives.
func (r *ref) widen64(p int) uint64 {
	v, isNaN := r.decode(p, false)
	if isNaN {
		// The float32 NaN widened as cvt.f64.f32 does.
		return math.Float64bits(lowp.WidenNaN(r.widen32(p)))
	}
	return math.Float64bits(v)
}
