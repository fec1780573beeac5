// Package features exercises the Go subset the translator supports, one
// construct after another, in kernels whose results tests check.
package features

import (
	"math"

	"github.com/gocu-dev/gocu/gen/testdata/kernels/util"
	"github.com/gocu-dev/gocu/kernel"
)

// Mode selects an operation; its constants use iota.
type Mode uint8

const (
	ModeAdd Mode = iota
	ModeMul
	ModeMax
	modeCount
)

// Celsius is a named float type.
type Celsius float32

// Pair is a struct with padding between its fields.
type Pair struct {
	A int8
	B float64
	C [3]int16
	D bool
}

// Particle embeds a util.Vec3.
type Particle struct {
	util.Vec3
	Mass float32
}

// divmod returns quotient and remainder with named results.
func divmod(a, b int32) (q, r int32) {
	if b == 0 {
		return
	}
	q = a / b
	r = a % b
	return
}

// apply combines x and y according to m.
func apply(m Mode, x, y float32) float32 {
	switch m {
	case ModeAdd:
		return x + y
	case ModeMul:
		return x * y
	case ModeMax, modeCount:
		return max(x, y)
	default:
		return 0
	}
}

// Ops writes, for each i, several results into out[8*i:8*i+8].
//
//gocu:kernel
func Ops(t *kernel.Thread, x []float32, k []int32, out []float32, m Mode, p Pair, temp Celsius) {
	i := int(t.Index())
	if i >= len(x) {
		return
	}
	o := out[8*i : 8*i+8]
	q, r := divmod(k[i], 7)
	o[0] = float32(q)*100 + float32(r)
	o[1] = apply(m, x[i], float32(k[i]))
	o[2] = float32(p.B) + float32(p.C[2]) + float32(p.A)
	if p.D {
		o[2] = -o[2]
	}
	o[3] = float32(temp) * 1.8
	var acc [4]float32
	for j := range acc {
		acc[j] = float32(j) * x[i]
	}
	sum := float32(0)
	for _, v := range acc {
		sum += v
	}
	o[4] = sum
	o[5] = float32(math.Sqrt(float64(x[i]*x[i]))) + kernel.Sqrt(16)
	v := util.Vec3{X: x[i], Y: 1, Z: 2}
	o[6] = v.Dot(v.Scale(2))
	o[7] = float32(util.Clamp(k[i], -5, 5))
}

// Loops exercises loops, labels, switch without a tag and multiple
// assignment.
//
//gocu:kernel
func Loops(t *kernel.Thread, a []int32, out []int32) {
	i := int(t.Index())
	if i >= len(a) {
		return
	}
	n := a[i]
	count := int32(0)
outer:
	for j := int32(0); j < 10; j++ {
		for l := int32(0); l < 10; l++ {
			switch {
			case l > j:
				continue outer
			case (j+l)%3 == 0:
				continue
			case j*l > n:
				break outer
			}
			count++
		}
	}
	x, y := int32(1), int32(2)
	for range 3 {
		x, y = y, x+y
	}
	var w int64
	for w < 100 {
		w += int64(n) | 1
		if w < 0 {
			break
		}
	}
	out[i] = count*1000 + y + int32(w%7)
}

// Bits exercises integer semantics: wrapping, division, shifts and
// conversions.
//
//gocu:kernel
func Bits(t *kernel.Thread, a []int32, b []uint8, out []int64) {
	i := int(t.Index())
	if i >= len(a) || i >= len(b) {
		return
	}
	x, y := a[i], b[i]
	var r [8]int64
	r[0] = int64(x * 65537)
	r[1] = int64(x / (int32(y) - 100))
	r[2] = int64(y*y + 7)
	r[3] = int64(x>>uint(y%40)) ^ int64(uint32(x)<<(y%40))
	r[4] = int64(uint16(x) * uint16(x))
	r[5] = int64(int8(x) / int8(-1|int32(y)&0))
	r[6] = int64(x &^ int32(y))
	r[7] = int64(-x) + int64(^y)
	var s int64
	for j, v := range r {
		s += v << uint(j)
	}
	out[i] = s
}

// Fahrenheit is a method on a named float type.
func (c Celsius) Fahrenheit() float32 { return float32(c)*1.8 + 32 }

// minmax returns the smaller and the larger of a and b.
func minmax(a, b int32) (int32, int32) {
	if a < b {
		return a, b
	}
	return b, a
}

// sorted2 returns minmax's results through a call with several results.
func sorted2(a, b int32) (lo, hi int32) { return minmax(a, b) }

// grid is a local-array helper: it fills a 4x4 array by value and returns
// its trace.
func grid(base float32) float32 {
	const n = 4
	var g [n][n]float32
	for i := range n {
		for j := range n {
			g[i][j] = base + float32(i*n+j)
		}
	}
	h := g // arrays are values
	h[0][0] = -1
	var tr float32
	for i := range g {
		tr += g[i][i]
	}
	return tr + h[0][0]
}

// Misc exercises more constructs; each thread writes out[4*i:4*i+4].
//
//gocu:kernel
func Misc(t *kernel.Thread, k []int32, c []Celsius, out []float32) {
	i := int(t.Index())
	if i >= len(k) {
		return
	}
	lo, hi := sorted2(k[i], k[(i+1)%len(k)])
	o := out[4*i:][:4]
	o[0] = float32(hi-lo) + c[i].Fahrenheit()
	if v, w := minmax(k[i], 7); v < w {
		o[1] = grid(float32(v))
	} else {
		o[1] = grid(float32(w))
	}
	ps := [...]Pair{{A: 1}, {A: 2, B: 0.5}, {D: true}}
	var sum float64
	for j := range ps {
		ps[j].C[j] = int16(j)
		if ps[j].D {
			continue
		}
		sum += ps[j].B + float64(ps[j].A) + float64(ps[j].C[j])
	}
	o[2] = float32(sum)
	d := t.BlockDim
	n := d.Size() + int(t.Rank()%4) + int(t.WarpID())
	switch x := k[i] % 5; {
	case x < -2:
		n++
	case x > 2:
		n--
	}
	acc := 0
	for j, v := range k[:min(len(k), 8)] {
		if j == i {
			continue
		}
		acc += int(v) << uint(j%3)
	}
	o[3] = float32(n) + float32(acc%1000)
}
