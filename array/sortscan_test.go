package array

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sort"
	"strings"
	"testing"
)

// ssDTypes are the dtypes the sort and scan tests cover.
var ssDTypes = []DType{Bool, Uint8, Int32, Int64, Float32, Float64}

// ssData draws n values of dt with many ties and, for floats, NaN, ±0
// and ±Inf among them.
func ssData(r *rand.Rand, dt DType, n int) []float64 {
	v := make([]float64, n)
	for i := range v {
		switch dt {
		case Bool:
			v[i] = float64(r.IntN(2))
		case Uint8:
			v[i] = float64(r.IntN(256))
		case Int32, Int64:
			v[i] = float64(r.IntN(41) - 20)
			if r.IntN(10) == 0 {
				v[i] = float64(r.Int32() - math.MaxInt32/2)
			}
		default:
			v[i] = roundTo(dt, float64(r.IntN(21)-10)/4)
			switch r.IntN(40) {
			case 0:
				v[i] = math.NaN()
			case 1:
				v[i] = math.Copysign(0, -1)
			case 2:
				v[i] = math.Inf(1 - 2*r.IntN(2))
			case 3:
				v[i] = roundTo(dt, r.NormFloat64()*1e3)
			}
		}
	}
	return v
}

// ssOrder is Sort's total order: -0 before +0, NaN last.
func ssOrder(a, b float64) int {
	an, bn := math.IsNaN(a), math.IsNaN(b)
	switch {
	case an || bn:
		if an && bn {
			return 0
		}
		if an {
			return 1
		}
		return -1
	case a < b:
		return -1
	case a > b:
		return 1
	}
	sa, sb := math.Signbit(a), math.Signbit(b)
	if sa == sb {
		return 0
	}
	if sa {
		return -1
	}
	return 1
}

// ssRefSort returns the stable sort positions of each row of length L.
func ssRefSort(v []float64, L int, desc bool) []int {
	p := make([]int, len(v))
	for base := 0; base < len(v); base += L {
		row := p[base : base+L]
		for i := range row {
			row[i] = i
		}
		sort.SliceStable(row, func(i, j int) bool {
			c := ssOrder(v[base+row[i]], v[base+row[j]])
			if desc {
				c = -c
			}
			return c < 0
		})
	}
	return p
}

// ssSame compares values exactly, NaN equal to NaN and -0 distinct from +0.
func ssSame(a, b float64) bool {
	if math.IsNaN(a) || math.IsNaN(b) {
		return math.IsNaN(a) && math.IsNaN(b)
	}
	return a == b && math.Signbit(a) == math.Signbit(b)
}

// ssMoveLast returns v (row-major in shape) with axis moved last.
func ssMoveLast(v []float64, shape []int, axis int) ([]float64, []int) {
	outer, L, inner := 1, shape[axis], 1
	for d, n := range shape {
		if d < axis {
			outer *= n
		} else if d > axis {
			inner *= n
		}
	}
	out := make([]float64, len(v))
	k := 0
	for o := 0; o < outer; o++ {
		for j := 0; j < inner; j++ {
			for i := 0; i < L; i++ {
				out[k] = v[(o*L+i)*inner+j]
				k++
			}
		}
	}
	ms := append(append(append([]int{}, shape[:axis]...), shape[axis+1:]...), L)
	return out, ms
}

var ssShapes = []struct {
	shape []int
	axes  []int
}{
	{[]int{0}, []int{0}},
	{[]int{1}, []int{-1}},
	{[]int{37}, []int{0}},
	{[]int{5, 300}, []int{-1, 0}},
	{[]int{3, 4, 5}, []int{0, 1, 2}},
	{[]int{300, 7}, []int{1}},
	{[]int{2, 0, 3}, []int{1, 2}},
	{[]int{70001}, []int{0}},
}

func TestSortArgsortSS(t *testing.T) {
	forEachBackend(t, func(t *testing.T, d *Maker) {
		r := newRand(t)
		for _, c := range ssShapes {
			for _, dt := range ssDTypes {
				v := ssData(r, dt, prod(c.shape))
				x := fromTyped(d, typed(dt, v), c.shape)
				for _, ax := range c.axes {
					what := fmt.Sprintf("%v%v axis %d", dt, c.shape, ax)
					pos := ax
					if pos < 0 {
						pos += len(c.shape)
					}
					mv, ms := ssMoveLast(v, c.shape, pos)
					L := ms[len(ms)-1]
					var want []int
					if L > 0 {
						want = ssRefSort(mv, L, false)
					}
					s := x.Sort(ax)
					i := x.Argsort(ax)
					if s.DType() != dt || i.DType() != Int64 {
						t.Fatalf("%s: dtypes %v, %v", what, s.DType(), i.DType())
					}
					sv, _ := ssMoveLast(readCase(t, what, s).v, c.shape, pos)
					iv, _ := ssMoveLast(readCase(t, what, i).v, c.shape, pos)
					bad := 0
					for k := range want {
						base := k / max(L, 1) * L
						wv := mv[base+want[k]]
						if !ssSame(sv[k], wv) || iv[k] != float64(want[k]) {
							if bad < 3 {
								t.Errorf("%s: element %d: sorted %v index %v, want %v at %d", what, k, sv[k], iv[k], wv, want[k])
							}
							bad++
						}
					}
					closeAll(s, i)
				}
				x.Close()
			}
		}
	})
}

func TestTopKSS(t *testing.T) {
	forEachBackend(t, func(t *testing.T, d *Maker) {
		r := newRand(t)
		for _, c := range []struct{ rows, L, k int }{{1, 1, 1}, {3, 50, 5}, {64, 503, 50}, {2, 5000, 100}, {4, 7, 0}, {2, 9, 9},
			{1, 200000, 100}, {3, 70000, 1024}, {2, 3000, 1500}} {
			for _, dt := range []DType{Float32, Float64, Int32, Int64, Uint8} {
				v := ssData(r, dt, c.rows*c.L)
				x := fromTyped(d, typed(dt, v), []int{c.rows, c.L})
				for _, largest := range []bool{true, false} {
					what := fmt.Sprintf("TopK(%d, %v) of %v[%d %d]", c.k, largest, dt, c.rows, c.L)
					vals, idx := x.TopK(c.k, largest)
					want := ssRefSort(v, c.L, largest)
					gv, gi := readCase(t, what, vals), readCase(t, what, idx)
					if !sameShape(gv.shape, []int{c.rows, c.k}) || !sameShape(gi.shape, []int{c.rows, c.k}) {
						t.Fatalf("%s: shapes %v %v", what, gv.shape, gi.shape)
					}
					for row := 0; row < c.rows; row++ {
						for j := 0; j < c.k; j++ {
							w := want[row*c.L+j]
							if gi.v[row*c.k+j] != float64(w) || !ssSame(gv.v[row*c.k+j], v[row*c.L+w]) {
								t.Fatalf("%s: row %d slot %d: %v at %v, want %v at %d", what, row, j, gv.v[row*c.k+j], gi.v[row*c.k+j], v[row*c.L+w], w)
							}
						}
					}
					closeAll(vals, idx)
				}
				x.Close()
			}
		}
	})
}

func TestUniqueSS(t *testing.T) {
	forEachBackend(t, func(t *testing.T, d *Maker) {
		r := newRand(t)
		for _, shape := range [][]int{{0}, {1}, {200}, {6, 70}, {40000}} {
			for _, dt := range ssDTypes {
				v := ssData(r, dt, prod(shape))
				what := fmt.Sprintf("Unique of %v%v", dt, shape)
				// Reference: distinct values in Sort's order with ±0 as one.
				canon := func(f float64) float64 {
					if f == 0 {
						return 0
					}
					return f
				}
				order := ssRefSort(func() []float64 {
					c := make([]float64, len(v))
					for i := range v {
						c[i] = canon(v[i])
					}
					return c
				}(), max(len(v), 1), false)
				if len(v) == 0 {
					order = nil
				}
				var wv []float64
				var wi, wc []int64
				winv := make([]int64, len(v))
				for k, p := range order {
					cv := canon(v[p])
					if k == 0 || !ssSame(cv, wv[len(wv)-1]) {
						wv = append(wv, cv)
						wi = append(wi, int64(p))
						wc = append(wc, 0)
					}
					wc[len(wc)-1]++
					winv[p] = int64(len(wv) - 1)
				}
				x := fromTyped(d, typed(dt, v), shape)
				vals, index, inv, counts := x.UniqueAll()
				gv := readCase(t, what, vals)
				gi, _ := ToSlice[int64](index)
				ginv, _ := ToSlice[int64](inv)
				gc, _ := ToSlice[int64](counts)
				if len(gv.v) != len(wv) || !slices.Equal(gi, wi) || !slices.Equal(gc, wc) || !slices.Equal(ginv, winv) || !sameShape(inv.Shape(), shape) {
					t.Fatalf("%s: got %d values, index %v, counts %v; want %d, %v, %v (inverse equal %v)", what, len(gv.v), head(gi), head(gc), len(wv), head(wi), head(wc), slices.Equal(ginv, winv))
				}
				only := readCase(t, what, x.Unique())
				for k := range wv {
					if !ssSame(gv.v[k], roundTo(dt, wv[k])) || !ssSame(only.v[k], gv.v[k]) {
						t.Fatalf("%s: value %d = %v (values only: %v), want %v", what, k, gv.v[k], only.v[k], wv[k])
					}
				}
				if len(only.v) != len(wv) {
					t.Fatalf("%s: Unique gives %d values, want %d", what, len(only.v), len(wv))
				}
				// The static form, with room to spare and without.
				for _, size := range []int{len(wv) + 3, len(wv) / 2} {
					sv, si, sinv, sc, cnt := x.UniqueN(size, 7)
					n, err := ItemOf[int64](cnt)
					if err != nil || n != int64(len(wv)) {
						t.Fatalf("%s: UniqueN count %v (%v), want %d", what, n, err, len(wv))
					}
					hv := readCase(t, what, sv)
					hi, _ := ToSlice[int64](si)
					hc, _ := ToSlice[int64](sc)
					hinv, _ := ToSlice[int64](sinv)
					for k := 0; k < size; k++ {
						if k < len(wv) {
							if !ssSame(hv.v[k], roundTo(dt, wv[k])) || hi[k] != wi[k] || hc[k] != wc[k] {
								t.Fatalf("%s: UniqueN(%d) slot %d: %v %d %d", what, size, k, hv.v[k], hi[k], hc[k])
							}
						} else if hv.v[k] != roundTo(dt, 7) || hi[k] != 0 || hc[k] != 0 {
							t.Fatalf("%s: UniqueN(%d) filler slot %d: %v %d %d", what, size, k, hv.v[k], hi[k], hc[k])
						}
					}
					if !slices.Equal(hinv, winv) {
						t.Fatalf("%s: UniqueN inverse differs", what)
					}
					closeAll(sv, si, sinv, sc, cnt)
				}
				closeAll(x, vals, index, inv, counts)
			}
		}
	})
}

func head[T any](s []T) []T { return s[:min(len(s), 8)] }

func TestSearchSortedSS(t *testing.T) {
	forEachBackend(t, func(t *testing.T, d *Maker) {
		r := newRand(t)
		for _, c := range []struct{ n, m int }{{0, 5}, {1, 3}, {100, 0}, {1000, 777}, {5, 4000}} {
			for _, dt := range []DType{Uint8, Int32, Int64, Float32, Float64} {
				a := ssData(r, dt, c.n)
				for i := range a {
					if a[i] == 0 {
						a[i] = 0 // NumPy's searchsorted treats ±0 alike; keep one zero
					}
				}
				slices.SortStableFunc(a, ssOrder)
				v := ssData(r, dt, c.m)
				sx := fromTyped(d, typed(dt, a), []int{c.n})
				vx := fromTyped(d, typed(dt, v), []int{c.m})
				for _, right := range []bool{false, true} {
					what := fmt.Sprintf("SearchSorted(%v[%d], %d, right %v)", dt, c.n, c.m, right)
					got, err := ToSlice[int64](SearchSorted(sx, vx, right))
					if err != nil {
						t.Fatalf("%s: %v", what, err)
					}
					for i, x := range v {
						w := sort.Search(len(a), func(k int) bool {
							c := ssOrder(a[k], x)
							if math.IsNaN(a[k]) || math.IsNaN(x) || a[k] != x {
								if right {
									return c > 0
								}
								return c >= 0
							}
							return !right // equal values (±0 alike)
						})
						if got[i] != int64(w) {
							t.Fatalf("%s: value %v at %d: %d, want %d", what, x, i, got[i], w)
						}
					}
				}
				closeAll(sx, vx)
			}
		}
	})
}

func TestBincountHistogramSS(t *testing.T) {
	forEachBackend(t, func(t *testing.T, d *Maker) {
		r := newRand(t)
		for _, n := range []int{0, 1, 1000, 100000} {
			for _, dt := range []DType{Bool, Uint8, Int32, Int64} {
				hi := map[DType]int{Bool: 2, Uint8: 256, Int32: 70000, Int64: 5000}[dt]
				v := make([]float64, n)
				w := make([]float64, n)
				for i := range v {
					v[i] = float64(r.IntN(hi))
					w[i] = r.NormFloat64()
				}
				x := fromTyped(d, typed(dt, v), []int{n})
				wx := fromSliceOn(d, w, n)
				for _, weighted := range []bool{false, true} {
					what := fmt.Sprintf("Bincount(%v[%d], weights %v)", dt, n, weighted)
					var wa *Array
					if weighted {
						wa = wx
					}
					got := readCase(t, what, x.Bincount(wa, 3))
					size := 3
					for _, e := range v {
						size = max(size, int(e)+1)
					}
					want := make([]float64, size)
					for i, e := range v {
						if weighted {
							want[int(e)] += w[i]
						} else {
							want[int(e)]++
						}
					}
					checkHost(t, what, got, []int{size}, want, 1e-9)
					// The static form drops values past its length.
					gn := readCase(t, what, x.BincountN(wa, 100))
					checkHost(t, what+" N", gn, []int{100}, append(want, make([]float64, 100)...)[:100], 1e-9)
				}
				closeAll(x, wx)
			}
			for _, dt := range []DType{Float32, Float64, Int32} {
				v := make([]float64, n)
				for i := range v {
					v[i] = roundTo(dt, r.NormFloat64()*3)
					if dt == Int32 {
						v[i] = float64(r.IntN(20) - 10)
					}
				}
				if n > 10 && dt != Int32 {
					v[0], v[1], v[2] = math.NaN(), -2, 2 // NaN dropped, both edges counted
				}
				x := fromTyped(d, typed(dt, v), []int{n})
				for _, bins := range []int{1, 7, 256, 5000} {
					what := fmt.Sprintf("Histogram(%v[%d], %d)", dt, n, bins)
					lo, hi := -2.0, 2.0
					c, e := x.Histogram(bins, lo, hi)
					want := make([]float64, bins)
					edges := make([]float64, bins+1)
					for k := range edges {
						edges[k] = lo + float64(k)*((hi-lo)/float64(bins))
					}
					edges[bins] = hi
					for _, f := range v {
						if !(f >= lo && f <= hi) {
							continue
						}
						k := sort.Search(bins, func(k int) bool { return edges[k+1] > f })
						want[min(k, bins-1)]++
					}
					checkHost(t, what, readCase(t, what, c), []int{bins}, want, 0)
					we := make([]float64, len(edges))
					for k, v := range edges {
						we[k] = v
						if dt == Float32 {
							we[k] = roundTo(Float32, v) // NumPy: edges in the input's float dtype
						}
					}
					checkHost(t, what+" edges", readCase(t, what, e), []int{bins + 1}, we, 1e-15)
					closeAll(c, e)
				}
				x.Close()
			}
		}
	})
}

func TestScansSS(t *testing.T) {
	forEachBackend(t, func(t *testing.T, d *Maker) {
		r := newRand(t)
		shapes := []struct {
			shape []int
			axes  []int
		}{{[]int{0}, []int{0}}, {[]int{1}, []int{0}}, {[]int{1000}, []int{-1}}, {[]int{3, 4, 5}, []int{0, 1, 2}},
			{[]int{7, 3000}, []int{1, 0}}, {[]int{1<<20 + 5}, []int{0}}, {[]int{2, 0, 4}, []int{0, 1}}}
		kinds := []struct {
			name string
			f    func(*Array, int) *Array
		}{{"Cumsum", (*Array).Cumsum}, {"Cumprod", (*Array).Cumprod}, {"Cummax", (*Array).Cummax}, {"Cummin", (*Array).Cummin}}
		for _, c := range shapes {
			for _, dt := range ssDTypes {
				n := prod(c.shape)
				v := make([]float64, n)
				for i := range v {
					switch {
					case dt == Bool:
						v[i] = float64(r.IntN(2))
					case dt.IsFloat():
						v[i] = roundTo(dt, 0.5+r.Float64())
						if r.IntN(5000) == 0 {
							v[i] = math.NaN()
						}
					default:
						v[i] = float64(r.IntN(3) + 1)
					}
				}
				x := fromTyped(d, typed(dt, v), c.shape)
				for _, ax := range c.axes {
					pos := (ax + len(c.shape)) % len(c.shape)
					outer, L, inner := 1, c.shape[pos], 1
					for k, m := range c.shape {
						if k < pos {
							outer *= m
						} else if k > pos {
							inner *= m
						}
					}
					for ki, k := range kinds {
						if ki == 1 && L > 40 && !dt.IsFloat() {
							continue // integer products wrap: TestCumsumWrapSS
						}
						what := fmt.Sprintf("%s(%v%v, %d)", k.name, dt, c.shape, ax)
						got := readCase(t, what, k.f(x, ax))
						want := make([]float64, n)
						rtol := 0.0
						for o := 0; o < outer; o++ {
							for j := 0; j < inner; j++ {
								acc := 0.0
								for i := 0; i < L; i++ {
									e := v[(o*L+i)*inner+j]
									switch {
									case i == 0:
										acc = e
									case ki == 0:
										acc += e
									case ki == 1:
										acc *= e
									case ki == 2:
										if math.IsNaN(e) || e > acc {
											acc = e
										}
									default:
										if math.IsNaN(e) || e < acc {
											acc = e
										}
									}
									if math.IsNaN(acc) || math.IsNaN(e) {
										acc = math.NaN()
									}
									want[(o*L+i)*inner+j] = acc
								}
							}
						}
						if dt.IsFloat() && ki < 2 {
							rtol = float64(L) * map[DType]float64{Float32: 1e-7, Float64: 1e-15}[dt] * 4
						}
						wdt := dt
						if ki < 2 {
							_, wdt = reduceTypes(OpSum, dt)
						}
						for i := range want {
							want[i] = roundTo(wdt, want[i])
						}
						checkHost(t, what, got, c.shape, want, rtol)
					}
				}
				x.Close()
			}
		}
	})
}

// TestCumsumWrapSS: integer sums and products wrap as fixed-width ints.
func TestCumsumWrapSS(t *testing.T) {
	forEachBackend(t, func(t *testing.T, d *Maker) {
		r := newRand(t)
		for _, n := range []int{10, 5000, 100003} {
			v := make([]int64, n)
			for i := range v {
				v[i] = int64(r.Uint64())
			}
			x := fromSliceOn(d, v, n)
			sum, _ := ToSlice[int64](x.Cumsum(0))
			prodv, _ := ToSlice[int64](x.Cumprod(0))
			var s, p int64
			for i, e := range v {
				if i == 0 {
					s, p = e, e
				} else {
					s, p = s+e, p*e
				}
				if sum[i] != s || prodv[i] != p {
					t.Fatalf("n %d element %d: sum %d prod %d, want %d %d", n, i, sum[i], prodv[i], s, p)
				}
			}
			x.Close()
		}
	})
}

func TestStatisticsSS(t *testing.T) {
	forEachBackend(t, func(t *testing.T, d *Maker) {
		r := newRand(t)
		for _, c := range []struct {
			shape []int
			axes  []int
		}{{[]int{50}, nil}, {[]int{6, 33}, []int{1}}, {[]int{6, 33}, []int{0}}, {[]int{4, 5, 6}, []int{0, 2}}, {[]int{3, 8}, nil}} {
			for _, dt := range []DType{Float32, Float64, Int32} {
				n := prod(c.shape)
				v := make([]float64, n)
				for i := range v {
					if dt == Int32 {
						v[i] = float64(r.IntN(100))
					} else {
						v[i] = roundTo(dt, r.NormFloat64()*10+5)
					}
				}
				x := fromTyped(d, typed(dt, v), c.shape)
				groups, outShape := ssGroups(c.shape, c.axes)
				tol := map[DType]float64{Float32: 2e-5, Float64: 1e-12, Int32: 1e-12}[dt]
				for _, ddof := range []int{0, 1} {
					wv, ws := make([]float64, len(groups)), make([]float64, len(groups))
					for g, idx := range groups {
						m := 0.0
						for _, i := range idx {
							m += v[i]
						}
						m /= float64(len(idx))
						s := 0.0
						for _, i := range idx {
							s += (v[i] - m) * (v[i] - m)
						}
						wv[g] = s / float64(len(idx)-ddof)
						ws[g] = math.Sqrt(wv[g])
					}
					what := fmt.Sprintf("Var(%v%v, ddof %d, axes %v)", dt, c.shape, ddof, c.axes)
					checkHost(t, what, readCase(t, what, x.Var(ddof, c.axes...)), outShape, wv, tol)
					checkHost(t, "Std"+what[3:], readCase(t, what, x.Std(ddof, c.axes...)), outShape, ws, tol)
				}
				for _, q := range []float64{0, 0.25, 0.5, 0.9, 1} {
					want := make([]float64, len(groups))
					for g, idx := range groups {
						s := make([]float64, len(idx))
						for k, i := range idx {
							s[k] = v[i]
						}
						slices.Sort(s)
						p := q * float64(len(s)-1)
						lo := int(math.Floor(p))
						hi := min(lo+1, len(s)-1)
						want[g] = s[lo] + (s[hi]-s[lo])*(p-float64(lo))
					}
					what := fmt.Sprintf("Quantile(%v%v, %v, axes %v)", dt, c.shape, q, c.axes)
					checkHost(t, what, readCase(t, what, x.Quantile(q, c.axes...)), outShape, want, tol)
					if q == 0.5 {
						checkHost(t, "Median", readCase(t, what, x.Median(c.axes...)), outShape, want, tol)
					}
					if q == 0.9 {
						checkHost(t, "Percentile", readCase(t, what, x.Percentile(90, c.axes...)), outShape, want, tol)
					}
				}
				x.Close()
			}
		}
		// A NaN makes the median NaN.
		m := readHost(t, d.Arange(Float64, 7).Div(0.0).Median())
		if !math.IsNaN(m.v[0]) {
			t.Errorf("median with 0/0: %v, want NaN", m.v[0])
		}
	})
}

// ssGroups lists, for each output element of a reduction over axes (all
// if nil), the input positions it reduces, and the output shape.
func ssGroups(shape, axes []int) ([][]int, []int) {
	red := make([]bool, len(shape))
	if axes == nil {
		for i := range red {
			red[i] = true
		}
	}
	for _, a := range axes {
		red[a] = true
	}
	var outShape []int
	for i, n := range shape {
		if !red[i] {
			outShape = append(outShape, n)
		}
	}
	if outShape == nil {
		outShape = []int{}
	}
	groups := make([][]int, prod(outShape))
	forIndex(shape, func(flat int, idx []int) {
		g := 0
		for i, n := range shape {
			if !red[i] {
				g = g*n + idx[i]
			}
		}
		groups[g] = append(groups[g], flat)
	})
	return groups, outShape
}

func TestNanReductionsSS(t *testing.T) {
	forEachBackend(t, func(t *testing.T, d *Maker) {
		r := newRand(t)
		for _, dt := range []DType{Float32, Float64} {
			shape := []int{5, 40}
			v := make([]float64, 200)
			for i := range v {
				v[i] = roundTo(dt, r.NormFloat64())
				if r.IntN(4) == 0 || i/40 == 3 {
					v[i] = math.NaN() // row 3 is all NaN
				}
			}
			x := fromTyped(d, typed(dt, v), shape)
			groups, os := ssGroups(shape, []int{1})
			ref := func(f func(vals []float64, pos []int) float64) []float64 {
				out := make([]float64, len(groups))
				for g, idx := range groups {
					var vals []float64
					var pos []int
					for k, i := range idx {
						if !math.IsNaN(v[i]) {
							vals = append(vals, v[i])
							pos = append(pos, k)
						}
					}
					out[g] = f(vals, pos)
				}
				return out
			}
			sum := func(s []float64, _ []int) float64 {
				t := 0.0
				for _, e := range s {
					t += e
				}
				return t
			}
			mean := func(s []float64, p []int) float64 { return sum(s, p) / float64(len(s)) }
			ext := func(isMax bool) func(s []float64, _ []int) float64 {
				return func(s []float64, _ []int) float64 {
					if len(s) == 0 {
						return math.NaN()
					}
					if isMax {
						return slices.Max(s)
					}
					return slices.Min(s)
				}
			}
			arg := func(s []float64, p []int) float64 {
				if len(s) == 0 {
					return -1
				}
				return float64(p[slices.Index(s, slices.Max(s))])
			}
			vr := func(s []float64, p []int) float64 {
				m := mean(s, p)
				t := 0.0
				for _, e := range s {
					t += (e - m) * (e - m)
				}
				if len(s) <= 1 {
					return math.NaN() // NumPy: no degrees of freedom left
				}
				return t / float64(len(s)-1)
			}
			tol := map[DType]float64{Float32: 1e-5, Float64: 1e-12}[dt]
			for _, c := range []struct {
				name string
				got  *Array
				want []float64
			}{
				{"NanSum", x.NanSum(1), ref(sum)}, {"NanMean", x.NanMean(1), ref(mean)}, {"NanMax", x.NanMax(1), ref(ext(true))},
				{"NanMin", x.NanMin(1), ref(ext(false))}, {"NanArgMax", x.NanArgMax(1), ref(arg)}, {"NanVar", x.NanVar(1, 1), ref(vr)},
				{"NanStd", x.NanStd(1, 1), func() []float64 {
					w := ref(vr)
					for i := range w {
						w[i] = math.Sqrt(w[i])
					}
					return w
				}()},
			} {
				checkHost(t, c.name+" "+dt.String(), readCase(t, c.name, c.got), os, c.want, tol)
			}
			x.Close()
		}
	})
}

func TestAxesReductionsSS(t *testing.T) {
	forEachBackend(t, func(t *testing.T, d *Maker) {
		r := newRand(t)
		shape := []int{3, 4, 5}
		v := make([]float64, 60)
		for i := range v {
			v[i] = float64(float32(r.NormFloat64()))
		}
		v[17] = 0
		x := fromSliceOn(d, v, shape...)
		for _, axes := range [][]int{{0, 2}, {1, 2}, {0, 1, 2}, {-1}} {
			norm, _ := normAxes("", axes, 3)
			groups, os := ssGroups(shape, norm)
			am, lse, cnt := make([]float64, len(groups)), make([]float64, len(groups)), make([]float64, len(groups))
			soft := make([]float64, 60)
			for g, idx := range groups {
				best, m, s := 0, math.Inf(-1), 0.0
				for k, i := range idx {
					if v[i] > v[idx[best]] {
						best = k
					}
					m = math.Max(m, v[i])
					if v[i] != 0 {
						cnt[g]++
					}
				}
				for _, i := range idx {
					s += math.Exp(v[i] - m)
				}
				for _, i := range idx {
					soft[i] = math.Exp(v[i]-m) / s
				}
				am[g], lse[g] = float64(best), m+math.Log(s)
			}
			what := fmt.Sprint("axes ", axes)
			checkHost(t, "ArgMax "+what, readCase(t, what, x.ArgMax(axes...)), os, am, 0)
			checkHost(t, "LogSumExpAxes "+what, readCase(t, what, x.LogSumExpAxes(axes...)), os, lse, 1e-6)
			checkHost(t, "SoftmaxAxes "+what, readCase(t, what, x.SoftmaxAxes(axes...)), shape, soft, 1e-6)
			checkHost(t, "CountNonzero "+what, readCase(t, what, x.CountNonzero(axes...)), os, cnt, 0)
		}
		// IsClose and AllClose, with infinities and NaN.
		a := fromSliceOn(d, []float64{1, 1, math.Inf(1), math.Inf(1), math.NaN(), 0, 1e-9}, 7)
		b := fromSliceOn(d, []float64{1 + 1e-6, 1.1, math.Inf(1), math.Inf(-1), math.NaN(), 1e-9, 0}, 7)
		for _, eq := range []bool{false, true} {
			got := readHost(t, IsClose(a, b, 1e-5, 1e-8, eq))
			want := []float64{1, 0, 1, 0, 0, 1, 1}
			if eq {
				want[4] = 1
			}
			checkHost(t, fmt.Sprint("IsClose equalNaN ", eq), got, []int{7}, want, 0)
		}
		if ok, err := AllClose(a, a, 1e-5, 1e-8, true); !ok || err != nil {
			t.Errorf("AllClose(a, a) = %v, %v", ok, err)
		}
		if ok, err := AllClose(a, b, 1e-5, 1e-8, true); ok || err != nil {
			t.Errorf("AllClose(a, b) = %v, %v", ok, err)
		}
		// Diff, twice, along each axis, and of bools.
		for ax := range 3 {
			got := readHost(t, x.Diff(2, ax))
			want := readHost(t, x.Slice(ssAt(ax, S(2, None))...).Sub(x.Slice(ssAt(ax, S(1, -1))...).Mul(2)).Add(x.Slice(ssAt(ax, S(None, -2))...)))
			checkHost(t, fmt.Sprint("Diff axis ", ax), got, want.shape, want.v, 1e-12)
		}
		bd := readHost(t, fromSliceOn(d, []bool{true, true, false, true}, 4).Diff(1, 0))
		checkHost(t, "Diff of bool", bd, []int{3}, []float64{0, 1, 1}, 0)
		x.Close()
	})
}

// ssAt is the index list selecting s along axis ax.
func ssAt(ax int, s Index) []Index {
	idx := make([]Index, ax+1)
	for i := range ax {
		idx[i] = All
	}
	idx[ax] = s
	return idx
}

func TestSortScanErrorsSS(t *testing.T) {
	d := CPU()
	x := d.Ones(Float32, 3, 4)
	i := d.Ones(Int32, 5)
	s0 := d.Scalar(1.0)
	for _, c := range []struct {
		name string
		got  *Array
		kind error
		msg  string
	}{
		{"sort axis", x.Sort(2), ErrAxis, "axis 2 is out of bounds"},
		{"sort 0-d", s0.Sort(0), ErrAxis, "at least one dimension"},
		{"argsort axis", x.Argsort(-3), ErrAxis, "out of bounds"},
		{"topk k", func() *Array { v, _ := x.TopK(5, true); return v }(), ErrValue, "k = 5 out of range"},
		{"topk negative", func() *Array { _, i := x.TopK(-1, false); return i }(), ErrValue, "out of range"},
		{"partition kth", x.Partition(4, 1), ErrIndex, "kth 4 out of bounds"},
		{"cumsum axis", x.Cumsum(2), ErrAxis, "out of bounds"},
		{"cumsum 0-d", s0.Cumsum(0), ErrAxis, "at least one dimension"},
		{"diff order", x.Diff(-1, 0), ErrValue, "non-negative"},
		{"search 2-d", SearchSorted(x, x, false), ErrShape, "must be 1-D"},
		{"bincount float", x.Reshape(-1).Bincount(nil, 0), ErrDType, "must be integer"},
		{"bincount 2-d", x.AsType(Int32).Bincount(nil, 0), ErrShape, "must be 1-D"},
		{"bincount negative", d.Full(Int32, -2, 3).Bincount(nil, 0), ErrValue, "non-negative, got -2"},
		{"bincount weights", i.Bincount(d.Ones(Float64, 4), 0), ErrShape, "weights of shape (4,)"},
		{"bincount minlength", i.Bincount(nil, -1), ErrValue, "minLength"},
		{"histogram bins", func() *Array { c, _ := x.Histogram(0, 0, 1); return c }(), ErrValue, "bins must be positive"},
		{"histogram range", func() *Array { c, _ := x.Histogram(3, 2, 1); return c }(), ErrValue, "max must be larger than min"},
		{"histogram inf", func() *Array { c, _ := x.Histogram(3, 0, math.Inf(1)); return c }(), ErrValue, "not finite"},
		{"quantile q", x.Quantile(1.5), ErrValue, "not in [0, 1]"},
		{"percentile p", x.Percentile(-1), ErrValue, "not in [0, 100]"},
		{"var axis", x.Var(0, 5), ErrAxis, "out of bounds"},
		{"uniqueN size", func() *Array { v, _, _, _, _ := x.UniqueN(-1, 0); return v }(), ErrValue, "negative size"},
		{"sortby shapes", SortBy(x, i, 0), ErrShape, "keys of shape (3,4) and values of shape (5,)"},
		{"sortby axis", SortBy(x, x, 2), ErrAxis, "out of bounds"},
		{"nanquantile q", x.NanQuantile(-0.1), ErrValue, "not in [0, 1]"},
		{"nanpercentile p", x.NanPercentile(101), ErrValue, "not in [0, 100]"},
		{"histogram range args", func() *Array { c, _ := x.Histogram(3, 1); return c }(), ErrValue, "range takes 2 values"},
		{"logsumexp axes", x.LogSumExpAxes(0, 0), ErrAxis, "repeated axis"},
		{"softmax axes", x.SoftmaxAxes(3), ErrAxis, "out of bounds"},
		{"bincountN length", i.BincountN(nil, -2), ErrValue, "negative length"},
	} {
		err := c.got.Err()
		if !errors.Is(err, c.kind) || err == nil || !strings.Contains(err.Error(), c.msg) {
			t.Errorf("%s: error %v, want %v containing %q", c.name, err, c.kind, c.msg)
		}
	}
}
