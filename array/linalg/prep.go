package linalg

import (
	"runtime"
	"sync"

	"github.com/gocu-dev/gocu"
	"github.com/gocu-dev/gocu/array"
)

// floatOf returns the dtype a linalg function computes x in: float32 and
// float64 stay, integers and bools become float64 (as NumPy promotes
// them); the storage floats (float16, bfloat16, 8-bit) are refused, as
// NumPy refuses float16.
func floatOf(op string, x *array.Array) (array.DType, error) {
	if x == nil {
		return 0, valueErr(op, "nil array")
	}
	if err := x.Err(); err != nil {
		return 0, err
	}
	switch dt := x.DType(); dt {
	case array.Float32, array.Float64:
		return dt, nil
	case array.Bool, array.Uint8, array.Int8, array.Int32, array.Int64:
		return array.Float64, nil
	default:
		return 0, dtypeErr(op, "array type %v is unsupported in linalg (use AsType(array.Float32))", dt)
	}
}

// promote converts x to dt (a no-op when it has that dtype already).
func promote(x *array.Array, dt array.DType) *array.Array {
	if x.DType() == dt {
		return x
	}
	return x.AsType(dt)
}

// matrixArg checks that x is a stack of matrices, with at least 2 axes,
// and returns it in its computing dtype with its batch shape and size.
func matrixArg(op string, x *array.Array, square bool) (a *array.Array, batch []int, m, n int, err error) {
	dt, err := floatOf(op, x)
	if err != nil {
		return nil, nil, 0, 0, err
	}
	s := x.Shape()
	if len(s) < 2 {
		return nil, nil, 0, 0, shapeErr(op, "%d-dimensional array given; array must be at least two-dimensional", len(s))
	}
	m, n = s[len(s)-2], s[len(s)-1]
	if square && m != n {
		return nil, nil, 0, 0, errorf(op, []error{ErrNotSquare, ErrLinAlg, array.ErrShape}, "last 2 dimensions of the array must be square, not %d×%d", m, n)
	}
	return promote(x, dt), s[:len(s)-2], m, n, nil
}

func prod(s []int) int {
	p := 1
	for _, v := range s {
		p *= v
	}
	return p
}

func concat(a []int, b ...int) []int {
	return append(append(make([]int, 0, len(a)+len(b)), a...), b...)
}

// isGPU reports whether x lives on a GPU device.
func isGPU(x *array.Array) bool {
	d := x.Device()
	return d != nil && d.IsGPU()
}

// host reads x in row-major order as float64 (waiting for the device).
func host(x *array.Array) ([]float64, error) { return array.ToSlice[float64](x) }

// fromHost makes an array of dtype dt and shape on dev from float64
// values, rounding to float32 on the host when dt is Float32.
func fromHost(dev *gocu.Device, dt array.DType, data []float64, shape ...int) *array.Array {
	if dt == array.Float32 {
		f := make([]float32, len(data))
		for i, v := range data {
			f[i] = float32(v)
		}
		return array.FromSliceOn(dev, f, shape...)
	}
	return array.FromSliceOn(dev, data, shape...)
}

// parallel runs f(i) for i in [0, n) on all cores: batches of small
// matrices spread over goroutines, one large matrix runs inline (gonum's
// BLAS parallelises its big products itself).
func parallel(n int, f func(i int)) {
	w := min(n, runtime.GOMAXPROCS(0))
	if w <= 1 {
		for i := range n {
			f(i)
		}
		return
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	next := 0
	for range w {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				mu.Lock()
				i := next
				next++
				mu.Unlock()
				if i >= n {
					return
				}
				f(i)
			}
		}()
	}
	wg.Wait()
}

// firstFailure returns the smallest index whose entry is set, or -1.
func firstFailure(bad []bool) int {
	for i, b := range bad {
		if b {
			return i
		}
	}
	return -1
}
