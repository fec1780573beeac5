package cublas

import "math"

// halfBits rounds a float32 to IEEE 754 binary16 bits, to nearest even,
// with overflow to infinity and gradual underflow, as C's (__half)x does.
func halfBits(f float32) uint16 {
	b := math.Float32bits(f)
	sign := uint16(b>>16) & 0x8000
	exp := int(b>>23) & 0xff
	mant := b & 0x7fffff
	switch {
	case exp == 0xff: // Inf or NaN
		if mant != 0 {
			return sign | 0x7e00
		}
		return sign | 0x7c00
	case exp-127 > 15: // too large even before rounding
		return sign | 0x7c00
	}
	e := exp - 127 + 15
	if e <= 0 { // subnormal half (or zero)
		if e < -10 {
			return sign
		}
		m := mant | 0x800000 // implicit bit
		shift := uint(14 - e)
		h := m >> shift
		rem := m & (1<<shift - 1)
		half := uint32(1) << (shift - 1)
		if rem > half || (rem == half && h&1 == 1) {
			h++
		}
		return sign | uint16(h)
	}
	h := uint32(e)<<10 | mant>>13
	rem := mant & 0x1fff
	if rem > 0x1000 || (rem == 0x1000 && h&1 == 1) {
		h++ // may carry into the exponent, up to infinity: that is right
	}
	return sign | uint16(h)
}

// halfToFloat32 widens binary16 bits exactly.
func halfToFloat32(h uint16) float32 {
	sign := uint32(h&0x8000) << 16
	exp := uint32(h>>10) & 0x1f
	mant := uint32(h & 0x3ff)
	switch exp {
	case 0:
		if mant == 0 {
			return math.Float32frombits(sign)
		}
		v := float32(mant) / (1 << 24) // exact: mant has 10 bits
		if sign != 0 {
			v = -v
		}
		return v
	case 0x1f:
		return math.Float32frombits(sign | 0x7f800000 | mant<<13)
	}
	return math.Float32frombits(sign | (exp+127-15)<<23 | mant<<13)
}

// HalfBits converts a float32 to IEEE binary16 bits (round to nearest even),
// for filling R16F matrices.
func HalfBits(f float32) uint16 { return halfBits(f) }

// HalfToFloat32 converts IEEE binary16 bits to float32 exactly.
func HalfToFloat32(h uint16) float32 { return halfToFloat32(h) }
