package philox

import "math"

// The logarithm and sine/cosine below are written with one rounding per
// operation (explicit float64 conversions forbid fused multiply-add in Go;
// the CUDA version uses the __d*_rn intrinsics) and bit manipulation for
// exponent extraction, so they give the same bits on every IEEE machine.
// Their error is a few ulp, far below what Box-Muller needs.

// logCoef are the coefficients 1/(2k+1) of 2·atanh(s)/(2s) = sum z^k/(2k+1), z = s².
var logCoef = func() [12]float64 {
	var c [12]float64
	for k := range c {
		c[k] = 1 / float64(2*k+1)
	}
	return c
}()

// sinCoef[k] = (-1)^k/(2k+1)!, cosCoef[k] = (-1)^k/(2k)!.
var sinCoef, cosCoef = func() ([10]float64, [10]float64) {
	var s, c [10]float64
	f := 1.0 // running factorial
	for n := 0; n < 20; n++ {
		if n > 0 {
			f *= float64(n)
		}
		sign := 1.0
		if (n/2)%2 == 1 {
			sign = -1
		}
		if n%2 == 0 {
			c[n/2] = sign / f
		} else {
			s[n/2] = sign / f
		}
	}
	return s, c
}()

const (
	ln2   = 0.6931471805599453
	sqrt2 = 1.4142135623730951
	twoPi = 6.283185307179586
)

// Log returns the natural logarithm of a positive, finite, normal u.
func Log(u float64) float64 {
	b := math.Float64bits(u)
	e := int64(b>>52&0x7ff) - 1023
	m := math.Float64frombits(b&(1<<52-1) | 1023<<52) // [1, 2)
	if m > sqrt2 {
		m *= 0.5
		e++
	}
	s := float64(m-1) / float64(m+1)
	z := float64(s * s)
	p := logCoef[len(logCoef)-1]
	for k := len(logCoef) - 2; k >= 0; k-- {
		p = float64(p*z) + logCoef[k]
	}
	return float64(float64(e)*ln2) + float64(float64(2*s)*p)
}

// SinCos2Pi returns sin(2πv) and cos(2πv) for v in [0, 1).
func SinCos2Pi(v float64) (sin, cos float64) {
	q := int(v * 4) // exact: v*4 is a power-of-two scaling
	r := v - float64(q)*0.25
	swap := r > 0.125
	if swap {
		r = 0.25 - r
	}
	x := float64(twoPi * r)
	z := float64(x * x)
	ps := sinCoef[len(sinCoef)-1]
	pc := cosCoef[len(cosCoef)-1]
	for k := len(sinCoef) - 2; k >= 0; k-- {
		ps = float64(ps*z) + sinCoef[k]
		pc = float64(pc*z) + cosCoef[k]
	}
	s, c := float64(x*ps), pc
	if swap {
		s, c = c, s
	}
	switch q {
	case 1:
		return c, -s
	case 2:
		return -s, -c
	case 3:
		return -c, s
	}
	return s, c
}
