package bench

import (
	"cmp"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sort"

	"github.com/gocu-dev/gocu/array"
	"github.com/gocu-dev/gocu/cuda"
)

// The numpy suite: sorting, searching, counting, scans and statistics of
// package array, beside ../shared/anchors/baseline_numpy.py (CuPy and
// torch) on the GPU. Sizes are the peers' on the GPU and 16 times smaller
// on the CPU. Each workload checks its first result against a host
// reference: orders and permutations exactly, sums of small integers
// exactly (any order adds them without rounding), statistics in float64.
//
// Unique synchronises (its size depends on the data): its figure includes
// reading the number of values back.

type npSizes struct {
	n, small int // the long vector (2^26 on the GPU)
	rows     int // rows of the row sort (4096 x 32768 on the GPU)
	cols     int
	mat      int // side of the statistics matrix (8192)
}

var (
	gpuNumpy = npSizes{n: 1 << 26, small: 1 << 16, rows: 4096, cols: 32768, mat: 8192}
	cpuNumpy = npSizes{n: 1 << 22, small: 1 << 14, rows: 256, cols: 32768, mat: 2048}
)

func init() {
	for _, d := range []Device{CUDA, CPU} {
		sz := gpuNumpy
		if d == CPU {
			sz = cpuNumpy
		}
		peers := func(p ...Peer) []Peer {
			if d == CUDA {
				return p
			}
			return nil
		}
		reg := func(name, doc string, p []Peer, setup func(e *Env) (*Case, error)) {
			Register(Workload{Name: name, Doc: doc, Kind: Bandwidth, Devices: d, Suites: []string{"numpy"}, Reps: 10, Warmup: 2,
				Peers: p, Setup: setup})
		}
		n, q := sz.n, sz.n/4
		reg("sort_f32", fmt.Sprintf("array x.Sort(0), %s float32 (stable LSD radix sort)", pow2(n)),
			peers(Peer{"CuPy", "sort_2p26_f32_cupy_ms", Millis}, Peer{"torch", "sort_2p26_f32_torch_ms", Millis}), setupNpSort(sz, n, array.Float32, false))
		reg("sort_i32", fmt.Sprintf("array x.Sort(0), %s int32 (the peers sort uint32)", pow2(n)),
			peers(Peer{"CuPy u32", "sort_2p26_u32_cupy_ms", Millis}), setupNpSort(sz, n, array.Int32, false))
		reg("argsort_f32", fmt.Sprintf("array x.Argsort(0), %s float32 to int64 positions", pow2(n)),
			peers(Peer{"CuPy", "argsort_2p26_f32_cupy_ms", Millis}), setupNpSort(sz, n, array.Float32, true))
		reg("sort_rows_f32", fmt.Sprintf("array x.Sort(1) of %dx%d float32", sz.rows, sz.cols),
			peers(Peer{"torch", "sort_rows_4096x32768_f32_torch_ms", Millis}), setupNpSortRows(sz))
		reg("topk_k100", fmt.Sprintf("array x.TopK(100, true) of %s float32", pow2(q)),
			peers(Peer{"torch", "topk_k100_of_2p24_torch_ms", Millis}), setupNpTopK(1, q, 100))
		reg("topk_rows_k50", "array x.TopK(50, true) of each row of 64x50304 float32",
			peers(Peer{"torch", "topk_rows_k50_64x50304_torch_ms", Millis}), setupNpTopK(64, 50304, 50))
		reg("unique_i32", fmt.Sprintf("array x.Unique() of %s int32 with 65,536 values (synchronises)", pow2(n)),
			peers(Peer{"CuPy", "unique_2p26_i32_65536vals_cupy_ms", Millis}), setupNpUnique(n))
		reg("searchsorted", fmt.Sprintf("array SearchSorted of %s float32 in %s sorted", pow2(q), pow2(q)),
			peers(Peer{"CuPy", "searchsorted_2p24_in_2p24_cupy_ms", Millis}), setupNpSearch(q))
		reg("bincount", fmt.Sprintf("array x.BincountN(nil, 65536) of %s int32", pow2(n)),
			peers(Peer{"CuPy", "bincount_2p26_65536bins_cupy_ms", Millis}), setupNpBincount(n))
		reg("histogram", fmt.Sprintf("array x.Histogram(256, -4, 4) of %s float32", pow2(n)),
			peers(Peer{"CuPy", "histogram_2p26_256bins_cupy_ms", Millis}), setupNpHistogram(n))
		reg("cumsum_f32", fmt.Sprintf("array x.Cumsum(0) of %s float32 (single-pass look-back scan)", pow2(n)),
			peers(Peer{"torch", "cumsum_2p26_f32_torch_ms", Millis}, Peer{"CuPy", "cumsum_2p26_f32_cupy_ms", Millis}), setupNpCumsum(n))
		reg("var_rows", fmt.Sprintf("array x.Var(0, 1) of %d^2 float32", sz.mat),
			peers(Peer{"CuPy", "var_rows_8192sq_cupy_ms", Millis}), setupNpStat(sz.mat, false))
		reg("median_rows", fmt.Sprintf("array x.Median(1) of %d^2 float32", sz.mat),
			peers(Peer{"CuPy", "median_rows_8192sq_cupy_ms", Millis}), setupNpStat(sz.mat, true))
	}
}

func pow2(n int) string {
	k := 0
	for 1<<k < n {
		k++
	}
	if 1<<k == n {
		return fmt.Sprintf("2^%d", k)
	}
	return fmt.Sprint(n)
}

// npCase holds a numpy workload's inputs and its last results.
type npCase struct {
	dev    *array.Maker
	stream *cuda.Stream
	in     []*array.Array
	last   []*array.Array
}

func newNpCase(e *Env) (*npCase, error) {
	d, s, err := arrayDevice(e)
	if err != nil {
		return nil, err
	}
	return &npCase{dev: d, stream: s}, nil
}

func (c *npCase) input(a *array.Array) (*array.Array, error) {
	if err := a.Eval().Err(); err != nil {
		return nil, err
	}
	c.in = append(c.in, a)
	return a, nil
}

// run returns a repetition computing op, keeping its results.
func (c *npCase) run(op func() []*array.Array) func() error {
	return func() error {
		for _, a := range c.last {
			a.Close()
		}
		c.last = op()
		for _, a := range c.last {
			if err := a.Eval().Err(); err != nil {
				return err
			}
		}
		if c.stream == nil {
			return c.dev.Sync()
		}
		return nil
	}
}

func (c *npCase) close() error {
	for _, a := range append(c.last, c.in...) {
		a.Close()
	}
	return c.dev.Sync()
}

// npFloats draws n float32 from a standard normal, in parallel.
func npFloats(r *rand.Rand, n int) []float32 {
	x := make([]float32, n)
	seed := r.Uint64()
	parallel(n, 1<<16, func(lo, hi int) {
		g := rand.New(rand.NewPCG(seed, uint64(lo)))
		for i := lo; i < hi; i++ {
			x[i] = float32(g.NormFloat64())
		}
	})
	return x
}

func npInts(r *rand.Rand, n, hi int) []int32 {
	x := make([]int32, n)
	seed := r.Uint64()
	parallel(n, 1<<16, func(lo, h int) {
		g := rand.New(rand.NewPCG(seed, uint64(lo)))
		for i := lo; i < h; i++ {
			x[i] = int32(g.IntN(hi))
		}
	})
	return x
}

// npMix hashes a value for an order-free multiset comparison.
func npMix(v uint64) uint64 {
	v ^= v >> 33
	v *= 0xff51afd7ed558ccd
	v ^= v >> 33
	return v
}

func setupNpSort(sz npSizes, n int, dt array.DType, arg bool) func(e *Env) (*Case, error) {
	return func(e *Env) (*Case, error) {
		n := size(e, n, sz.small)
		c, err := newNpCase(e)
		if err != nil {
			return nil, err
		}
		xf := npFloats(e.Rand, n)
		var xs []float64
		var x *array.Array
		if dt == array.Int32 {
			xi := make([]int32, n)
			for i, f := range xf {
				xi[i] = int32(f * 1e8)
			}
			x, err = c.input(array.FromSliceOn(c.dev.Device(), xi, n))
			xs = make([]float64, n)
			for i, v := range xi {
				xs[i] = float64(v)
			}
		} else {
			x, err = c.input(array.FromSliceOn(c.dev.Device(), xf, n))
			xs = make([]float64, n)
			for i, v := range xf {
				xs[i] = float64(v)
			}
		}
		if err != nil {
			return nil, errs(err, c.close())
		}
		op := func() []*array.Array { return []*array.Array{x.Sort(0)} }
		bytes := 8 * float64(n)
		if arg {
			op = func() []*array.Array { return []*array.Array{x.Argsort(0)} }
			bytes = 12 * float64(n)
		}
		return &Case{Run: c.run(op), Close: c.close, Stream: c.stream, Bytes: bytes,
			Check: func() error {
				if arg {
					p, err := c.last[0].Int64s()
					if err != nil {
						return err
					}
					return npCheckPerm(xs, p)
				}
				got, err := c.last[0].AsType(array.Float64).Float64s()
				if err != nil {
					return err
				}
				var hg, hw uint64
				for i := range got {
					if i > 0 && got[i] < got[i-1] {
						return fmt.Errorf("sort: element %d = %v after %v", i, got[i], got[i-1])
					}
					hg += npMix(math.Float64bits(got[i]))
					hw += npMix(math.Float64bits(xs[i]))
				}
				if hg != hw {
					return fmt.Errorf("sort: the values are not those of the input")
				}
				return nil
			}}, nil
	}
}

// npCheckPerm checks that p is the stable sorting permutation of x.
func npCheckPerm(x []float64, p []int64) error {
	if len(p) != len(x) {
		return fmt.Errorf("argsort: %d positions for %d values", len(p), len(x))
	}
	seen := make([]bool, len(x))
	for i, q := range p {
		if q < 0 || int(q) >= len(x) || seen[q] {
			return fmt.Errorf("argsort: position %d = %d is not a permutation", i, q)
		}
		seen[q] = true
		if i > 0 {
			a, b := x[p[i-1]], x[q]
			if b < a || (a == b && q < p[i-1]) {
				return fmt.Errorf("argsort: positions %d, %d out of order", p[i-1], q)
			}
		}
	}
	return nil
}

func setupNpSortRows(sz npSizes) func(e *Env) (*Case, error) {
	return func(e *Env) (*Case, error) {
		rows, cols := size(e, sz.rows, 16), size(e, sz.cols, 1000)
		c, err := newNpCase(e)
		if err != nil {
			return nil, err
		}
		xh := npFloats(e.Rand, rows*cols)
		x, err := c.input(array.FromSliceOn(c.dev.Device(), xh, rows, cols))
		if err != nil {
			return nil, errs(err, c.close())
		}
		return &Case{Run: c.run(func() []*array.Array { return []*array.Array{x.Sort(1)} }), Close: c.close, Stream: c.stream,
			Bytes: 8 * float64(rows*cols),
			Check: func() error {
				got, err := c.last[0].Float32s()
				if err != nil {
					return err
				}
				want := slices.Clone(xh)
				parallel(rows, 1, func(lo, hi int) {
					for r := lo; r < hi; r++ {
						slices.Sort(want[r*cols : (r+1)*cols])
					}
				})
				return checkElems("sorted rows", got, rows*cols, func(i int) (float32, float64) { return want[i], 0 })
			}}, nil
	}
}

func setupNpTopK(rows, cols, k int) func(e *Env) (*Case, error) {
	return func(e *Env) (*Case, error) {
		cols := size(e, cols, 5000)
		c, err := newNpCase(e)
		if err != nil {
			return nil, err
		}
		xh := npFloats(e.Rand, rows*cols)
		x, err := c.input(array.FromSliceOn(c.dev.Device(), xh, rows, cols))
		if err != nil {
			return nil, errs(err, c.close())
		}
		return &Case{Run: c.run(func() []*array.Array { v, i := x.TopK(k, true); return []*array.Array{v, i} }), Close: c.close, Stream: c.stream,
			Bytes: 4 * float64(rows*cols),
			Check: func() error {
				got, err := c.last[0].Float32s()
				if err != nil {
					return err
				}
				idx, err := c.last[1].Int64s()
				if err != nil {
					return err
				}
				want := make([]float32, rows*k)
				for r := range rows {
					row := slices.Clone(xh[r*cols : (r+1)*cols])
					slices.SortFunc(row, func(a, b float32) int { return cmp.Compare(b, a) })
					copy(want[r*k:], row[:k])
					for j := range k {
						if xh[r*cols+int(idx[r*k+j])] != got[r*k+j] {
							return fmt.Errorf("topk: row %d slot %d: index %d holds %v, not %v", r, j, idx[r*k+j], xh[r*cols+int(idx[r*k+j])], got[r*k+j])
						}
					}
				}
				return checkElems("top k", got, rows*k, func(i int) (float32, float64) { return want[i], 0 })
			}}, nil
	}
}

func setupNpUnique(n int) func(e *Env) (*Case, error) {
	return func(e *Env) (*Case, error) {
		n := size(e, n, 1<<16)
		c, err := newNpCase(e)
		if err != nil {
			return nil, err
		}
		xh := npInts(e.Rand, n, 1<<16)
		x, err := c.input(array.FromSliceOn(c.dev.Device(), xh, n))
		if err != nil {
			return nil, errs(err, c.close())
		}
		return &Case{Run: c.run(func() []*array.Array { return []*array.Array{x.Unique()} }), Close: c.close, Stream: c.stream,
			Bytes: 8 * float64(n),
			Check: func() error {
				vals, err := c.last[0].Int32s()
				if err != nil {
					return err
				}
				want := map[int32]bool{}
				for _, v := range xh {
					want[v] = true
				}
				if len(vals) != len(want) {
					return fmt.Errorf("unique: %d values, want %d", len(vals), len(want))
				}
				for i, v := range vals {
					if (i > 0 && v <= vals[i-1]) || !want[v] {
						return fmt.Errorf("unique: value %d is %d", i, v)
					}
				}
				return nil
			}}, nil
	}
}

func setupNpSearch(n int) func(e *Env) (*Case, error) {
	return func(e *Env) (*Case, error) {
		n := size(e, n, 1<<16)
		c, err := newNpCase(e)
		if err != nil {
			return nil, err
		}
		ah := npFloats(e.Rand, n)
		slices.Sort(ah)
		vh := npFloats(e.Rand, n)
		a, err := c.input(array.FromSliceOn(c.dev.Device(), ah, n))
		if err != nil {
			return nil, errs(err, c.close())
		}
		v, err := c.input(array.FromSliceOn(c.dev.Device(), vh, n))
		if err != nil {
			return nil, errs(err, c.close())
		}
		return &Case{Run: c.run(func() []*array.Array { return []*array.Array{array.SearchSorted(a, v, false)} }), Close: c.close, Stream: c.stream,
			Bytes: 12 * float64(n),
			Check: func() error {
				got, err := c.last[0].Int64s()
				if err != nil {
					return err
				}
				var bad error
				parallel(n, 1<<14, func(lo, hi int) {
					for i := lo; i < hi; i++ {
						if w := sort.Search(n, func(k int) bool { return ah[k] >= vh[i] }); got[i] != int64(w) {
							bad = fmt.Errorf("searchsorted: value %d: %d, want %d", i, got[i], w)
						}
					}
				})
				return bad
			}}, nil
	}
}

func setupNpBincount(n int) func(e *Env) (*Case, error) {
	return func(e *Env) (*Case, error) {
		n := size(e, n, 1<<16)
		c, err := newNpCase(e)
		if err != nil {
			return nil, err
		}
		xh := npInts(e.Rand, n, 1<<16)
		x, err := c.input(array.FromSliceOn(c.dev.Device(), xh, n))
		if err != nil {
			return nil, errs(err, c.close())
		}
		return &Case{Run: c.run(func() []*array.Array { return []*array.Array{x.BincountN(nil, 1<<16)} }), Close: c.close, Stream: c.stream,
			Bytes: 4 * float64(n),
			Check: func() error {
				got, err := c.last[0].Int64s()
				if err != nil {
					return err
				}
				want := make([]int64, 1<<16)
				for _, v := range xh {
					want[v]++
				}
				if !slices.Equal(got, want) {
					return fmt.Errorf("bincount: counts differ")
				}
				return nil
			}}, nil
	}
}

func setupNpHistogram(n int) func(e *Env) (*Case, error) {
	return func(e *Env) (*Case, error) {
		n := size(e, n, 1<<16)
		c, err := newNpCase(e)
		if err != nil {
			return nil, err
		}
		xh := npFloats(e.Rand, n)
		x, err := c.input(array.FromSliceOn(c.dev.Device(), xh, n))
		if err != nil {
			return nil, errs(err, c.close())
		}
		return &Case{Run: c.run(func() []*array.Array { h, edges := x.Histogram(256, -4, 4); return []*array.Array{h, edges} }),
			Close: c.close, Stream: c.stream, Bytes: 4 * float64(n),
			Check: func() error {
				got, err := c.last[0].Int64s()
				if err != nil {
					return err
				}
				want := make([]int64, 256)
				for _, v := range xh {
					f := float64(v)
					if f < -4 || f > 4 {
						continue
					}
					k := sort.Search(256, func(k int) bool { return -4+float64(k+1)*(8.0/256) > f })
					want[min(k, 255)]++
				}
				if !slices.Equal(got, want) {
					return fmt.Errorf("histogram: counts differ")
				}
				return nil
			}}, nil
	}
}

func setupNpCumsum(n int) func(e *Env) (*Case, error) {
	return func(e *Env) (*Case, error) {
		n := size(e, n, 1<<16)
		c, err := newNpCase(e)
		if err != nil {
			return nil, err
		}
		// Small integers: every partial sum is exact in float32, whatever
		// order the scan adds in.
		xh := randInts(e.Rand, n)
		x, err := c.input(array.FromSliceOn(c.dev.Device(), xh, n))
		if err != nil {
			return nil, errs(err, c.close())
		}
		return &Case{Run: c.run(func() []*array.Array { return []*array.Array{x.Cumsum(0)} }), Close: c.close, Stream: c.stream,
			Bytes: 8 * float64(n),
			Check: func() error {
				got, err := c.last[0].Float32s()
				if err != nil {
					return err
				}
				want := make([]float32, n)
				s := float32(0)
				for i, v := range xh {
					s += v
					want[i] = s
				}
				return checkElems("cumsum", got, n, func(i int) (float32, float64) { return want[i], 0 })
			}}, nil
	}
}

func setupNpStat(m int, median bool) func(e *Env) (*Case, error) {
	return func(e *Env) (*Case, error) {
		m := size(e, m, 256)
		c, err := newNpCase(e)
		if err != nil {
			return nil, err
		}
		xh := npFloats(e.Rand, m*m)
		x, err := c.input(array.FromSliceOn(c.dev.Device(), xh, m, m))
		if err != nil {
			return nil, errs(err, c.close())
		}
		op := func() []*array.Array { return []*array.Array{x.Var(0, 1)} }
		if median {
			op = func() []*array.Array { return []*array.Array{x.Median(1)} }
		}
		return &Case{Run: c.run(op), Close: c.close, Stream: c.stream, Bytes: 4 * float64(m*m),
			Check: func() error {
				got, err := c.last[0].Float32s()
				if err != nil {
					return err
				}
				want := make([]float32, m)
				parallel(m, 1, func(lo, hi int) {
					for r := lo; r < hi; r++ {
						row := xh[r*m : (r+1)*m]
						if median {
							s := slices.Clone(row)
							slices.Sort(s)
							want[r] = (s[m/2-1] + s[m/2]) / 2
							continue
						}
						mean := 0.0
						for _, v := range row {
							mean += float64(v)
						}
						mean /= float64(m)
						ss := 0.0
						for _, v := range row {
							ss += (float64(v) - mean) * (float64(v) - mean)
						}
						want[r] = float32(ss / float64(m))
					}
				})
				return checkElems("row statistic", got, m, func(i int) (float32, float64) { return want[i], 1e-5 })
			}}, nil
	}
}
