package sim

import "math/bits"

// rng is splitmix64: tiny, fast and good enough to shuffle schedules. Every
// block derives its own from the launch seed and the block's index, so a
// block's schedule does not depend on which worker runs it.
type rng struct{ s uint64 }

func (r *rng) next() uint64 {
	r.s += 0x9e3779b97f4a7c15
	z := r.s
	z = (z ^ z>>30) * 0xbf58476d1ce4e5b9
	z = (z ^ z>>27) * 0x94d049bb133111eb
	return z ^ z>>31
}

// below returns a number in [0, n), n > 0.
func (r *rng) below(n uint64) uint64 {
	hi, _ := bits.Mul64(r.next(), n)
	return hi
}

func (r *rng) shuffle(s []int32) {
	for i := len(s) - 1; i > 0; i-- {
		j := r.below(uint64(i + 1))
		s[i], s[j] = s[j], s[i]
	}
}

// affine is the permutation k -> (a*k + c) mod n of [0, n), with a coprime
// to n. It needs no table, so it orders grids of up to 2^63 blocks, and
// stepping through it costs an addition.
type affine struct{ a, c, n uint64 }

func newAffine(r *rng, n uint64) affine {
	if n <= 1 {
		return affine{a: 1, n: 1}
	}
	for {
		a := 1 + r.below(n-1)
		if gcd(a, n) == 1 {
			return affine{a: a, c: r.below(n), n: n}
		}
	}
}

func (p affine) at(k uint64) uint64 {
	hi, lo := bits.Mul64(p.a, k)
	_, rem := bits.Div64(hi%p.n, lo, p.n)
	rem += p.c
	if rem >= p.n || rem < p.c {
		rem -= p.n
	}
	return rem
}

func gcd(a, b uint64) uint64 {
	for b != 0 {
		a, b = b, a%b
	}
	return a
}

// mix derives an independent seed from a seed and an index.
func mix(seed, i uint64) uint64 {
	r := rng{seed ^ (i+1)*0xd1b54a32d192ed03}
	return r.next()
}
