package array

import (
	"errors"
	"math"
	"testing"
)

// TestRandomDiscrete: the integer and discrete draws are in range, hit
// every value, have the right frequencies (within 5 standard deviations)
// and are the same on every backend for a seed.
func TestRandomDiscrete(t *testing.T) {
	var first map[string][]float64
	forEachBackend(t, func(t *testing.T, d *Maker) {
		got := map[string][]float64{}
		r := d.NewRNG(7)
		const n = 20000
		x := readHost(t, r.Integers(Int32, -3, 5, n))
		counts := map[float64]int{}
		for _, v := range x.v {
			if v < -3 || v >= 5 || v != math.Floor(v) {
				t.Fatalf("Integers drew %v", v)
			}
			counts[v]++
		}
		for v := -3.0; v < 5; v++ {
			ixNear(t, "Integers", float64(counts[v]), n/8.0, n)
		}
		got["Integers"] = x.v
		b := readHost(t, r.Bernoulli(0.3, n))
		ones := 0.0
		for _, v := range b.v {
			ones += v
		}
		ixNear(t, "Bernoulli", ones, 0.3*n, n)
		got["Bernoulli"] = b.v
		p := readHost(t, r.Permutation(1000))
		seen := make([]bool, 1000)
		for _, v := range p.v {
			if seen[int(v)] {
				t.Fatalf("Permutation repeats %v", v)
			}
			seen[int(v)] = true
		}
		got["Permutation"] = p.v
		w := fromSliceOn(d, []float64{1, 0, 3, 6}, 4)
		c := readHost(t, r.ChoiceIndex(4, n, true, w))
		wc := make([]float64, 4)
		for _, v := range c.v {
			wc[int(v)]++
		}
		for i, f := range []float64{0.1, 0, 0.3, 0.6} {
			ixNear(t, "Choice weights", wc[i], f*n, n)
		}
		got["Choice"] = c.v
		nr := readHost(t, r.ChoiceIndex(4, 3, false, w))
		if nr.v[0] == nr.v[1] || nr.v[1] == nr.v[2] || nr.v[0] == nr.v[2] {
			t.Fatalf("Choice without replacement repeats: %v", nr.v)
		}
		for _, v := range nr.v {
			if v == 1 {
				t.Fatalf("Choice drew a zero weight: %v", nr.v)
			}
		}
		a := fromSliceOn(d, []float32{0, 1, 2, 3, 4, 5}, 3, 2)
		if err := r.Shuffle(a); err != nil {
			t.Fatal(err)
		}
		s := readHost(t, a)
		for i := 0; i < 3; i++ {
			if s.v[2*i+1] != s.v[2*i]+1 {
				t.Fatalf("Shuffle broke a row: %v", s.v)
			}
		}
		if first == nil {
			first = got
		} else {
			for k, v := range got {
				checkHost(t, k+" matches the first backend", host{shape: []int{len(v)}, v: v}, []int{len(first[k])}, first[k], 0)
			}
		}
		if err := r.Integers(Float32, 0, 2, 1).Err(); !errors.Is(err, ErrDType) {
			t.Errorf("Integers of float32: %v", err)
		}
		if err := r.Integers(Uint8, 0, 300, 1).Err(); !errors.Is(err, ErrValue) {
			t.Errorf("Integers past uint8: %v", err)
		}
		if err := r.ChoiceIndex(3, 4, false, nil).Err(); !errors.Is(err, ErrValue) {
			t.Errorf("Choice of too many: %v", err)
		}
		if err := r.ChoiceIndex(4, 4, false, w).Err(); !errors.Is(err, ErrValue) {
			t.Errorf("Choice past the non-zero weights: %v", err)
		}
		if err := r.ChoiceIndex(2, 1, true, fromSliceOn(d, []float64{1, -1}, 2)).Err(); !errors.Is(err, ErrValue) {
			t.Errorf("Choice of negative weights: %v", err)
		}
		if err := r.Bernoulli(1.5, 1).Err(); !errors.Is(err, ErrValue) {
			t.Errorf("Bernoulli(1.5): %v", err)
		}
	})
}

// ixNear checks a count against its expectation within 5 binomial
// standard deviations.
func ixNear(t *testing.T, what string, got, want float64, n int) {
	t.Helper()
	p := want / float64(n)
	sd := math.Sqrt(float64(n) * p * (1 - p))
	if math.Abs(got-want) > 5*sd+1e-9 {
		t.Errorf("%s: count %v, want %v ± %v", what, got, want, 5*sd)
	}
}
