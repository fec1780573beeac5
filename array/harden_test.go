package array_test

import (
	"errors"
	"math"
	"math/big"
	"slices"
	"strings"
	"testing"

	"github.com/gocu-dev/gocu"
	"github.com/gocu-dev/gocu/array"
)

// Arange of an integer dtype adds the step in int64 and converts, as NumPy
// adds it in the dtype: it wraps where a narrow dtype overflows, and it is
// exact past 2^53, where float64 is not (the arguments are float64s, so
// they must be exact in float64 themselves).
func TestArangeIntegers(t *testing.T) {
	cpu := array.CPU()
	for _, c := range []struct {
		dt                DType
		start, stop, step int64
	}{
		{array.Int8, 125, 130, 1},
		{array.Int8, -126, -133, -2},
		{array.Uint8, 250, 262, 3},
		{array.Int32, math.MaxInt32 - 2, math.MaxInt32 + 3, 1},
		{array.Int64, 1 << 53, 1<<53 + 2, 1},
		{array.Int64, 1<<53 + 2, 1<<53 + 10, 1},
		{array.Int64, 1 << 62, 1<<62 + 5*1024, 1024},
		{array.Int64, -(1 << 54), -(1<<54 + 16), -4},
	} {
		got, err := cpu.Arange(c.dt, float64(c.start), float64(c.stop), float64(c.step)).Int64s()
		if err != nil {
			t.Fatalf("Arange(%v, %d, %d, %d): %v", c.dt, c.start, c.stop, c.step, err)
		}
		// The reference: exact values, converted as Go converts (wrapping).
		var want []int64
		for v := big.NewInt(c.start); ; v.Add(v, big.NewInt(c.step)) {
			if c.step > 0 && v.Cmp(big.NewInt(c.stop)) >= 0 || c.step < 0 && v.Cmp(big.NewInt(c.stop)) <= 0 {
				break
			}
			want = append(want, wrap(c.dt, v.Int64()))
		}
		if !slices.Equal(got, want) {
			t.Errorf("Arange(%v, %d, %d, %d) = %v, want %v", c.dt, c.start, c.stop, c.step, got, want)
		}
	}
	// Fractions still go through float64, as before.
	if got, err := cpu.Arange(array.Int32, 0.5, 3).Int64s(); err != nil || !slices.Equal(got, []int64{0, 1, 2}) {
		t.Errorf("Arange(Int32, 0.5, 3) = %v, %v", got, err)
	}
}

// DType is array.DType, short for the table above.
type DType = array.DType

func wrap(dt DType, v int64) int64 {
	switch dt {
	case array.Int8:
		return int64(int8(v))
	case array.Uint8:
		return int64(uint8(v))
	case array.Int32:
		return int64(int32(v))
	}
	return v
}

// pySlice is Python's slice(start, stop, step).indices(n) and the
// positions it selects, computed with big integers (no overflow).
func pySlice(n, start, stop, step int) []int {
	if step == array.None {
		step = 1
	}
	b := big.NewInt
	N, S := b(int64(n)), b(int64(step))
	clamp := func(v int, def *big.Int, lo, hi *big.Int) *big.Int {
		if v == array.None {
			return def
		}
		x := b(int64(v))
		if x.Sign() < 0 {
			x.Add(x, N)
		}
		if x.Cmp(lo) < 0 {
			return lo
		}
		if x.Cmp(hi) > 0 {
			return hi
		}
		return x
	}
	var lo, hi *big.Int
	if step > 0 {
		lo, hi = clamp(start, b(0), b(0), N), clamp(stop, N, b(0), N)
	} else {
		m1 := b(int64(n - 1))
		lo, hi = clamp(start, m1, b(-1), m1), clamp(stop, b(-1), b(-1), m1)
	}
	var pos []int
	for x := new(big.Int).Set(lo); step > 0 && x.Cmp(hi) < 0 || step < 0 && x.Cmp(hi) > 0; x.Add(x, S) {
		pos = append(pos, int(x.Int64()))
	}
	return pos
}

// Slice with any start, stop and step, huge ones included, selects what
// Python selects and never crashes.
func TestSliceHugeSteps(t *testing.T) {
	huge := []int{array.None, math.MinInt + 1, math.MinInt + 2, -7, -5, -1, 0, 1, 2, 3, 5, 7, math.MaxInt - 1, math.MaxInt}
	steps := []int{array.None, math.MinInt + 1, -math.MaxInt / 2, -3, -1, 1, 2, 4, math.MaxInt / 2, math.MaxInt}
	tried := 0
	for _, n := range []int{0, 1, 3, 5} {
		data := make([]float64, n)
		for i := range data {
			data[i] = float64(10*i + 1)
		}
		x := array.FromSliceOn(gocu.MustOpen("cpu"), data)
		for _, start := range huge {
			for _, stop := range huge {
				for _, step := range steps {
					tried++
					pos := pySlice(n, start, stop, step)
					y := x.Slice(array.S(start, stop, step))
					got, err := y.Float64s()
					if err != nil {
						t.Fatalf("n=%d S(%d, %d, %d): %v", n, start, stop, step, err)
					}
					want := make([]float64, len(pos))
					for i, p := range pos {
						want[i] = data[p]
					}
					if !slices.Equal(y.Shape(), []int{len(pos)}) || !slices.Equal(got, want) {
						t.Fatalf("n=%d S(%d, %d, %d) = %v %v, want %v", n, start, stop, step, y.Shape(), got, want)
					}
				}
			}
		}
	}
	t.Logf("%d slices", tried)
}

// Every method of a zero Array (declared, not made) fails with a clear
// error instead of overflowing the stack, and so do operations that take
// one as an operand.
func TestZeroArray(t *testing.T) {
	var z array.Array
	x := array.CPU().Ones(array.Float32, 2)
	for name, y := range map[string]*array.Array{
		"Add": z.Add(1), "Sum": z.Sum(), "Reshape": z.Reshape(2), "Slice": z.Slice(array.S(1)),
		"MatMul": z.MatMul(x), "AsType": z.AsType(array.Int8), "Copy": z.Copy(), "ReLU": z.ReLU(),
		"Add operand": x.Add(&z), "Transpose": z.T(),
	} {
		if err := y.Err(); !errors.Is(err, array.ErrValue) || !strings.Contains(err.Error(), "zero Array: make arrays with a Maker") {
			t.Errorf("%s: %v", name, err)
		}
	}
	if _, err := z.Float64s(); !errors.Is(err, array.ErrValue) {
		t.Errorf("Float64s: %v", err)
	}
	if err := z.Err(); !errors.Is(err, array.ErrValue) {
		t.Errorf("Err: %v", err)
	}
	if err := z.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
}

// Squeeze of an axis longer than 1 and a Reshape whose size overflows are
// ErrValue, as the documentation says (and NumPy's ValueError), and
// ErrShape as before.
func TestShapeValueErrors(t *testing.T) {
	x := array.CPU().Zeros(array.Float32, 3, 2)
	for name, y := range map[string]*array.Array{"Squeeze": x.Squeeze(0), "Reshape": x.Reshape(1<<62, 4)} {
		if err := y.Err(); !errors.Is(err, array.ErrValue) || !errors.Is(err, array.ErrShape) {
			t.Errorf("%s: %v", name, err)
		}
	}
}
