// Package philox is the counter-based random generator shared by every
// array backend: Philox4x32-10 (Salmon et al., "Parallel random numbers:
// as easy as 1, 2, 3", SC 2011) and the exact mapping from a (seed,
// counter) pair to uniform and normal floats.
//
// The mapping is defined with IEEE-754 operations that are rounded one at a
// time (no fused multiply-add) and with this package's own logarithm and
// sine/cosine polynomials, so the Go functions here and the CUDA C that
// CUDASource returns produce bit-identical values. The mapping:
//
//   - key = (uint32(seed), uint32(seed>>32)); block j uses the counter
//     (uint32(j), uint32(j>>32), 0, 0) and yields four words x0..x3.
//   - float32 uniform: element e of a fill starting at block c uses block
//     c+e/4, word e%4: u = (x >> 8) * 2^-24, in [0, 1).
//   - float64 uniform: block c+e/2, words (x0,x1) for even e, (x2,x3) for
//     odd e: u = ((hi<<32 | lo) >> 11) * 2^-53, in [0, 1).
//   - normal (float32 and float64): block c+e/2: u1 from (x0,x1) as
//     ((..)>>11 + 1) * 2^-53 in (0, 1], u2 from (x2,x3) in [0, 1);
//     r = sqrt(-2 log u1); even e takes r cos(2 pi u2), odd e r sin(2 pi u2),
//     computed in float64 (then rounded to float32 for float32 output).
//   - uniform on [lo, hi): lo + (hi-lo)*u in float64, rounded to the output
//     type, and moved to the largest value below hi if rounding reached hi;
//     normal: mean + std*z in float64, rounded to the output type.
//
// A fill of n values consumes BlocksFor(dtype, dist, n) blocks; an RNG
// advances its counter by that much, so consecutive fills never overlap.
package philox

import (
	"math"
	"math/bits"
)

const (
	m0 = 0xD2511F53
	m1 = 0xCD9E8D57
	w0 = 0x9E3779B9
	w1 = 0xBB67AE85
)

// Block computes Philox4x32-10 of the counter under the key.
func Block(ctr [4]uint32, key [2]uint32) [4]uint32 { return rounds(ctr, key, 10) }

func rounds(c [4]uint32, k [2]uint32, n int) [4]uint32 {
	for r := 0; r < n; r++ {
		if r > 0 {
			k[0] += w0
			k[1] += w1
		}
		hi0, lo0 := bits.Mul32(m0, c[0])
		hi1, lo1 := bits.Mul32(m1, c[2])
		c = [4]uint32{hi1 ^ c[1] ^ k[0], lo1, hi0 ^ c[3] ^ k[1], lo0}
	}
	return c
}

// At returns the four words of block j of the stream of seed.
func At(seed, j uint64) [4]uint32 {
	return Block([4]uint32{uint32(j), uint32(j >> 32), 0, 0}, [2]uint32{uint32(seed), uint32(seed >> 32)})
}

// PerBlock is how many values one block yields.
func PerBlock(float64Out, normal bool) int {
	if normal || float64Out {
		return 2
	}
	return 4
}

// BlocksFor is the number of blocks a fill of n values consumes.
func BlocksFor(float64Out, normal bool, n int) uint64 {
	p := PerBlock(float64Out, normal)
	return uint64((n + p - 1) / p)
}

// U32 maps a word to a float32 in [0, 1).
func U32(x uint32) float32 { return float32(x>>8) * (1.0 / (1 << 24)) }

// U64 maps two words to a float64 in [0, 1).
func U64(lo, hi uint32) float64 {
	return float64((uint64(hi)<<32|uint64(lo))>>11) * (1.0 / (1 << 53))
}

// U64Open maps two words to a float64 in (0, 1].
func U64Open(lo, hi uint32) float64 {
	return float64((uint64(hi)<<32|uint64(lo))>>11+1) * (1.0 / (1 << 53))
}

// Normals returns the two standard normal values of a block.
func Normals(x [4]uint32) (z0, z1 float64) {
	u1 := U64Open(x[0], x[1])
	u2 := U64(x[2], x[3])
	r := math.Sqrt(float64(-2 * Log(u1)))
	s, c := SinCos2Pi(u2)
	return float64(r * c), float64(r * s)
}

// Uniform32 writes len(dst) float32 values on [lo, hi) starting at block ctr.
func Uniform32(dst []float32, seed, ctr uint64, lo, hi float64) {
	d := hi - lo
	for base := 0; base < len(dst); base += 4 {
		x := At(seed, ctr+uint64(base/4))
		for w := 0; w < 4 && base+w < len(dst); w++ {
			dst[base+w] = scale32(U32(x[w]), lo, d, hi)
		}
	}
}

func scale32(u float32, lo, d, hi float64) float32 {
	v := float32(lo + float64(d*float64(u)))
	if float64(v) >= hi && hi > lo {
		v = math.Nextafter32(float32(hi), float32(math.Inf(-1)))
		for float64(v) >= hi {
			v = math.Nextafter32(v, float32(math.Inf(-1)))
		}
	}
	return v
}

// Uniform64 writes len(dst) float64 values on [lo, hi) starting at block ctr.
func Uniform64(dst []float64, seed, ctr uint64, lo, hi float64) {
	d := hi - lo
	for base := 0; base < len(dst); base += 2 {
		x := At(seed, ctr+uint64(base/2))
		for w := 0; w < 2 && base+w < len(dst); w++ {
			v := lo + float64(d*U64(x[2*w], x[2*w+1]))
			if v >= hi && hi > lo {
				v = math.Nextafter(hi, math.Inf(-1))
			}
			dst[base+w] = v
		}
	}
}

// Normal32 writes len(dst) float32 values of N(mean, std²) starting at block ctr.
func Normal32(dst []float32, seed, ctr uint64, mean, std float64) {
	for base := 0; base < len(dst); base += 2 {
		z0, z1 := Normals(At(seed, ctr+uint64(base/2)))
		dst[base] = float32(mean + float64(std*z0))
		if base+1 < len(dst) {
			dst[base+1] = float32(mean + float64(std*z1))
		}
	}
}

// Normal64 writes len(dst) float64 values of N(mean, std²) starting at block ctr.
func Normal64(dst []float64, seed, ctr uint64, mean, std float64) {
	for base := 0; base < len(dst); base += 2 {
		z0, z1 := Normals(At(seed, ctr+uint64(base/2)))
		dst[base] = mean + float64(std*z0)
		if base+1 < len(dst) {
			dst[base+1] = mean + float64(std*z1)
		}
	}
}
