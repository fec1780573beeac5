package array

import (
	"sync"

	"github.com/gocu-dev/gocu/array/internal/backend"
	"github.com/gocu-dev/gocu/array/internal/philox"
)

// RNG draws random arrays from the counter-based Philox4x32-10 generator.
// The values depend only on the seed and on the sequence of draws, never on
// the device: the same seed gives bit-identical arrays on the CPU and on a
// GPU. Each draw advances a counter by the Philox blocks it used. An RNG is
// safe for concurrent use (draws are serialised).
type RNG struct {
	mu   sync.Mutex
	dev  *Maker
	seed uint64
	ctr  uint64
}

// NewRNG returns a generator on the default device.
func NewRNG(seed uint64) *RNG { return Default().NewRNG(seed) }

// NewRNG returns a generator whose arrays live on d.
func (m *Maker) NewRNG(seed uint64) *RNG { return &RNG{dev: m, seed: seed} }

// Seed returns the generator's seed.
func (r *RNG) Seed() uint64 { return r.seed }

// Counter returns the position in the stream (in Philox blocks).
func (r *RNG) Counter() uint64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.ctr
}

// SetCounter moves to a position of the stream (to replay draws).
func (r *RNG) SetCounter(c uint64) {
	r.mu.Lock()
	r.ctr = c
	r.mu.Unlock()
}

func (r *RNG) draw(op string, dt DType, dist backend.Dist, p0, p1 float64, shape []int) *Array {
	if r == nil {
		return failed(errorf(op, ErrValue, "nil RNG"))
	}
	if err := r.dev.check(op); err != nil {
		return failed(err)
	}
	if dt.IsComplex() && dist == backend.Normal {
		return r.complexNormal(op, dt, p0, p1, shape)
	}
	if !dt.IsFloating() {
		return failed(errorf(op, ErrDType, "random values need float32 or float64 (or a low-precision float), not %v", dt))
	}
	if dt.IsLowp() {
		// Drawn in float32 (the same stream position and values as a
		// float32 draw), then rounded to the format.
		return narrowResult(r.draw(op, Float32, dist, p0, p1, shape), dt)
	}
	if err := checkShape(op, dt, shape); err != nil {
		return failed(err)
	}
	n := backend.Size(shape)
	st, err := r.dev.alloc(op, dt, shape)
	if err != nil {
		return failed(err)
	}
	r.mu.Lock()
	ctr := r.ctr
	r.ctr += philox.BlocksFor(dt == Float64, dist == backend.Normal, n)
	r.mu.Unlock()
	lay := backend.Contiguous(shape)
	if n > 0 {
		err = r.dev.be.Random(&backend.Random{Out: backend.Operand{Buf: st.buf, Layout: backend.Contiguous([]int{n})},
			Dist: dist, Seed: r.seed, Counter: ctr, P0: p0, P1: p1})
		if err != nil {
			st.release()
			return failed(deviceErr(op, err))
		}
	}
	return r.dev.wrap(st, lay, dt)
}

// Uniform returns values drawn uniformly from [lo, hi). Low-precision
// float dtypes draw float32 values and round them to the format (so a
// value may round up to hi).
func (r *RNG) Uniform(dt DType, lo, hi float64, shape ...int) *Array {
	return r.draw("Uniform", dt, backend.Uniform, lo, hi, shape)
}

// Normal returns values drawn from the normal distribution N(mean, std²)
// (Box-Muller on Philox output).
func (r *RNG) Normal(dt DType, mean, std float64, shape ...int) *Array {
	return r.draw("Normal", dt, backend.Normal, mean, std, shape)
}

// Rand returns float32 values uniform on [0, 1).
func (r *RNG) Rand(shape ...int) *Array { return r.Uniform(Float32, 0, 1, shape...) }

// Randn returns float32 standard normal values.
func (r *RNG) Randn(shape ...int) *Array { return r.Normal(Float32, 0, 1, shape...) }
