package array

import (
	"math"
	"slices"
	"sort"
)

// Integer and discrete draws. They use the same Philox stream as Uniform
// (float64 draws, so the values are the same on every device); those that
// need the drawn values on the host (Permutation, Shuffle, Choice without
// replacement or with weights) wait for the device.

// Integers returns integers drawn uniformly from [lo, hi) (NumPy's
// Generator.integers), of an integer dtype: floor(lo + u*(hi-lo)) for a
// float64 u uniform on [0, 1). hi-lo must be at most 2^53.
func (r *RNG) Integers(dt DType, lo, hi int64, shape ...int) *Array {
	const op = "Integers"
	if r == nil {
		return failed(errorf(op, ErrValue, "nil RNG"))
	}
	if !dt.IsInt() {
		return failed(errorf(op, ErrDType, "Integers draws integers, not %v", dt))
	}
	if hi <= lo {
		return failed(errorf(op, ErrValue, "high (%d) must be larger than low (%d)", hi, lo))
	}
	span := float64(hi) - float64(lo)
	if span > 1<<53 || hi-lo <= 0 {
		return failed(errorf(op, ErrValue, "range [%d, %d) is wider than 2^53", lo, hi))
	}
	if !(scalar{kind: weakInt, i: lo}).fits(dt) || !(scalar{kind: weakInt, i: hi - 1}).fits(dt) {
		return failed(errorf(op, ErrValue, "range [%d, %d) does not fit %v", lo, hi, dt))
	}
	u := r.Uniform(Float64, 0, 1, shape...)
	defer u.Close()
	v := u.Mul(span).Floor().Minimum(span - 1)
	defer v.Close()
	i := v.AsType(Int64)
	defer i.Close()
	s := i.Add(lo)
	if dt == Int64 {
		return s
	}
	defer s.Close()
	return s.AsType(dt)
}

// Bernoulli returns booleans that are true with probability p.
func (r *RNG) Bernoulli(p float64, shape ...int) *Array {
	if r == nil {
		return failed(errorf("Bernoulli", ErrValue, "nil RNG"))
	}
	if !(p >= 0 && p <= 1) {
		return failed(errorf("Bernoulli", ErrValue, "probability %v is not in [0, 1]", p))
	}
	u := r.Uniform(Float64, 0, 1, shape...)
	defer u.Close()
	return u.Lt(p)
}

// BernoulliOf returns booleans of p's shape, each true with the
// probability p holds at its position (torch.bernoulli).
func (r *RNG) BernoulliOf(p *Array) *Array {
	if r == nil {
		return failed(errorf("BernoulliOf", ErrValue, "nil RNG"))
	}
	if _, err := p.use("BernoulliOf"); err != nil {
		return failed(err)
	}
	u := r.Uniform(Float64, 0, 1, p.shape...)
	defer u.Close()
	return u.Lt(p)
}

// hostUniform draws n float64 values uniform on [0, 1) and reads them.
func (r *RNG) hostUniform(n int) ([]float64, error) {
	u := r.Uniform(Float64, 0, 1, n)
	defer u.Close()
	return u.Float64s()
}

// permutation is Fisher-Yates on the host over n drawn values.
func (r *RNG) permutation(n int) ([]int64, error) {
	u, err := r.hostUniform(n)
	if err != nil {
		return nil, err
	}
	p := make([]int64, n)
	for i := range p {
		p[i] = int64(i)
	}
	for i := n - 1; i > 0; i-- {
		j := int(u[i] * float64(i+1))
		p[i], p[j] = p[j], p[i]
	}
	return p, nil
}

// Permutation returns a random permutation of 0..n-1 as int64. It waits
// for the device (the shuffle runs on the host).
func (r *RNG) Permutation(n int) *Array {
	const op = "Permutation"
	if r == nil {
		return failed(errorf(op, ErrValue, "nil RNG"))
	}
	if n < 0 {
		return failed(errorf(op, ErrValue, "negative size %d", n))
	}
	p, err := r.permutation(n)
	if err != nil {
		return failed(err)
	}
	return fromSliceOn(r.dev, p, n)
}

// Shuffle permutes a along axis 0 in place (NumPy's Generator.shuffle).
// It waits for the device.
func (r *RNG) Shuffle(a *Array) error {
	const op = "Shuffle"
	if _, err := a.use(op); err != nil {
		return err
	}
	if len(a.shape) == 0 {
		return errorf(op, ErrShape, "cannot shuffle a 0-d array")
	}
	p := r.Permutation(a.shape[0])
	defer p.Close()
	s := a.Take(p, 0)
	defer s.Close()
	return a.Assign(s)
}

// ChoiceIndex draws size indices from 0..n-1 (NumPy's Generator.choice
// of an integer): with or without replacement, uniformly or with weights
// (n non-negative values, normalised here; nil for uniform). Only the
// uniform draw with replacement stays on the device; the others wait for
// it.
func (r *RNG) ChoiceIndex(n, size int, replace bool, weights *Array) *Array {
	const op = "Choice"
	if r == nil {
		return failed(errorf(op, ErrValue, "nil RNG"))
	}
	if n < 0 || size < 0 {
		return failed(errorf(op, ErrValue, "negative population %d or size %d", n, size))
	}
	if n == 0 && size > 0 {
		return failed(errorf(op, ErrValue, "a cannot be empty unless no samples are taken"))
	}
	if !replace && size > n {
		return failed(errorf(op, ErrValue, "cannot take a larger sample (%d) than the population (%d) when replace is false", size, n))
	}
	if weights == nil {
		if replace {
			if size == 0 {
				return r.dev.Zeros(Int64, 0)
			}
			return r.Integers(Int64, 0, int64(n), size)
		}
		p, err := r.permutation(n)
		if err != nil {
			return failed(err)
		}
		return fromSliceOn(r.dev, p[:size], size)
	}
	if _, err := weights.use(op); err != nil {
		return failed(err)
	}
	if len(weights.shape) != 1 || weights.shape[0] != n {
		return failed(errorf(op, ErrShape, "weights have shape %s, want (%d,)", shapeString(weights.shape), n))
	}
	w, err := ToSlice[float64](weights)
	if err != nil {
		return failed(err)
	}
	total, nonzero := 0.0, 0
	for _, x := range w {
		if !(x >= 0) || math.IsInf(x, 0) {
			return failed(errorf(op, ErrValue, "weights must be finite and non-negative, got %v", x))
		}
		total += x
		if x > 0 {
			nonzero++
		}
	}
	if total == 0 {
		return failed(errorf(op, ErrValue, "weights sum to zero"))
	}
	if !replace && nonzero < size {
		return failed(errorf(op, ErrValue, "fewer non-zero weights (%d) than size (%d)", nonzero, size))
	}
	u, err := r.hostUniform(size)
	if err != nil {
		return failed(err)
	}
	out := make([]int64, size)
	if replace {
		cdf := make([]float64, n)
		acc := 0.0
		for i, x := range w {
			acc += x / total
			cdf[i] = acc
		}
		for i, v := range u {
			j := sort.SearchFloat64s(cdf, v)
			for j < n-1 && (cdf[j] <= v || w[j] == 0) {
				j++
			}
			out[i] = int64(min(j, n-1))
		}
		return fromSliceOn(r.dev, out, size)
	}
	// Without replacement: the size largest keys u^(1/w) of one draw per
	// element (Efraimidis and Spirakis), drawn over the n elements.
	uk, err := r.hostUniform(n)
	if err != nil {
		return failed(err)
	}
	keys := make([]float64, n)
	order := make([]int, n)
	for i := range keys {
		order[i] = i
		keys[i] = math.Inf(-1)
		if w[i] > 0 {
			keys[i] = math.Log(uk[i]) / w[i]
		}
	}
	slices.SortStableFunc(order, func(a, b int) int {
		switch {
		case keys[a] > keys[b]:
			return -1
		case keys[a] < keys[b]:
			return 1
		}
		return 0
	})
	for i := range out {
		out[i] = int64(order[i])
	}
	return fromSliceOn(r.dev, out, size)
}

// Choice draws size elements of a along axis 0 (ChoiceIndex over its
// length, then Take).
func (r *RNG) Choice(a *Array, size int, replace bool, weights *Array) *Array {
	if _, err := a.use("Choice"); err != nil {
		return failed(err)
	}
	if len(a.shape) == 0 {
		return failed(errorf("Choice", ErrShape, "a must be at least 1-dimensional"))
	}
	idx := r.ChoiceIndex(a.shape[0], size, replace, weights)
	defer idx.Close()
	return a.Take(idx, 0)
}
