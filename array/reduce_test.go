package array

import (
	"fmt"
	"math"
	"testing"
)

// refReduce reduces host values over axes (sorted), returning the kept shape.
func refReduce(op ReduceOp, h host, axes []int) ([]int, []float64) {
	red := make([]bool, len(h.shape))
	for _, a := range axes {
		red[a] = true
	}
	var kshape []int
	for d, n := range h.shape {
		if !red[d] {
			kshape = append(kshape, n)
		}
	}
	nk := 1
	for _, n := range kshape {
		nk *= n
	}
	type accT struct {
		v     float64
		idx   int
		count int
		init  bool
	}
	acc := make([]accT, nk)
	// Position along the reduced axes, row-major over them.
	forIndex(h.shape, func(flat int, idx []int) {
		k, pos := 0, 0
		for d, i := range idx {
			if red[d] {
				pos = pos*h.shape[d] + i
			} else {
				k = k*h.shape[d] + i
			}
		}
		x := h.v[flat]
		a := &acc[k]
		switch op {
		case OpSum, OpMean:
			a.v += x
		case OpProd:
			if !a.init {
				a.v = 1
			}
			a.v *= x
		case OpMax, OpArgMax:
			if !a.init || x > a.v || (math.IsNaN(x) && !math.IsNaN(a.v)) {
				if !(a.init && math.IsNaN(a.v)) {
					a.v, a.idx = x, pos
				}
			}
		case OpMin, OpArgMin:
			if !a.init || x < a.v || (math.IsNaN(x) && !math.IsNaN(a.v)) {
				if !(a.init && math.IsNaN(a.v)) {
					a.v, a.idx = x, pos
				}
			}
		case OpAny:
			if x != 0 {
				a.v = 1
			}
		case OpAll:
			if !a.init {
				a.v = 1
			}
			if x == 0 {
				a.v = 0
			}
		}
		a.init = true
		a.count++
	})
	out := make([]float64, nk)
	for k, a := range acc {
		switch op {
		case OpMean:
			out[k] = a.v / float64(a.count)
			if a.count == 0 {
				out[k] = math.NaN()
			}
		case OpArgMax, OpArgMin:
			out[k] = float64(a.idx)
		case OpProd, OpAll:
			if !a.init {
				out[k] = 1
			} else {
				out[k] = a.v
			}
		default:
			out[k] = a.v
		}
	}
	if kshape == nil {
		kshape = []int{}
	}
	return kshape, out
}

var reduceAxes = []struct {
	shape []int
	axes  [][]int
}{
	{[]int{}, [][]int{nil}},
	{[]int{7}, [][]int{nil, {0}, {-1}}},
	{[]int{3, 4}, [][]int{nil, {0}, {1}, {0, 1}}},
	{[]int{2, 3, 4}, [][]int{{0}, {1}, {2}, {0, 2}, {1, 2}, nil}},
	{[]int{2, 1, 3, 2, 2}, [][]int{{0, 3}, {1}, {4}, {2, 4}}},
	{[]int{2, 2, 1, 3, 2, 2}, [][]int{{5}, {0, 2, 4}, nil}},
	{[]int{0, 3}, [][]int{{0}, {1}, nil}},
	{[]int{3, 1000}, [][]int{{1}, {0}}},       // long rows
	{[]int{700, 3}, [][]int{{0}, {1}}},        // long columns
	{[]int{40000}, [][]int{nil}},              // parallel full reduction
	{[]int{200, 300}, [][]int{{0}, {1}, nil}}, // parallel partial reductions
}

func TestReductions(t *testing.T) {
	ops := []ReduceOp{OpSum, OpProd, OpMax, OpMin, OpMean, OpArgMax, OpArgMin, OpAny, OpAll}
	forEachBackend(t, func(t *testing.T, d *Maker) {
		r := newRand(t)
		for ci, rc := range reduceAxes {
			for _, dt := range allDTypes {
				lo, hi := -4.0, 4.0
				h := randHost(r, dt, rc.shape, lo, hi)
				kind := layoutKinds[ci%len(layoutKinds)]
				x := makeArray(t, d, dt, h, kind)
				for _, axes := range rc.axes {
					for _, op := range ops {
						if (op == OpArgMax || op == OpArgMin) && len(axes) > 1 {
							continue
						}
						if op == OpProd && h.size() > 50 {
							continue // products of many values overflow; covered below
						}
						for _, keep := range []bool{false, true} {
							what := fmt.Sprintf("%v(%v%v %v, axes %v, keep %v)", op, dt, rc.shape, kind, axes, keep)
							norm, _ := normAxes("", axes, len(rc.shape))
							inDT, outDT := reduceTypes(op, dt)
							hin := host{shape: h.shape, v: make([]float64, len(h.v))}
							for i, v := range h.v {
								hin.v[i] = roundTo(inDT, v)
							}
							nR := 1
							for _, a := range norm {
								nR *= rc.shape[a]
							}
							y := x.Reduce(op, keep, axes...)
							if nR == 0 && (op == OpMax || op == OpMin || op == OpArgMax || op == OpArgMin) {
								if !isKind(y.Err(), ErrValue) {
									t.Errorf("%s: want ErrValue, got %v", what, y.Err())
								}
								continue
							}
							if y.DType() != outDT {
								t.Fatalf("%s: dtype %v, want %v (%v)", what, y.DType(), outDT, y.Err())
							}
							kshape, want := refReduce(op, hin, norm)
							for i := range want {
								want[i] = roundTo(outDT, want[i])
							}
							if keep {
								kshape = append([]int{}, rc.shape...)
								for _, a := range norm {
									kshape[a] = 1
								}
							}
							tol := reduceTol.of(outDT)
							if op == OpMax || op == OpMin || op == OpArgMax || op == OpArgMin || op == OpAny || op == OpAll {
								tol = 0
							}
							checkHost(t, what, readCase(t, what, y), kshape, want, tol)
						}
					}
				}
			}
		}
	})
}

// Float32 sums are accurate: 2^20 values whose float32 running sum would
// lose several digits.
func TestFloat32SumAccuracy(t *testing.T) {
	forEachBackend(t, func(t *testing.T, d *Maker) {
		n := 1 << 20
		v := make([]float32, n)
		exact := 0.0
		for i := range v {
			v[i] = 1 + float32(i%1000)*1e-4
			exact += float64(v[i])
		}
		x := fromSliceOn(d, v)
		got, err := ItemOf[float32](x.Sum())
		if err != nil {
			t.Fatal(err)
		}
		if math.Abs(float64(got)-exact)/exact > 1e-7 {
			t.Errorf("sum = %v, exact %v (rel err %g)", got, exact, math.Abs(float64(got)-exact)/exact)
		}
		naive := float32(0)
		for _, e := range v {
			naive += e
		}
		t.Logf("float32 running sum error %g, gocu %g", math.Abs(float64(naive)-exact)/exact, math.Abs(float64(got)-exact)/exact)
		m, _ := ItemOf[float64](x.Mean())
		if math.Abs(m-exact/float64(n)) > 1e-6 {
			t.Errorf("mean %v, want %v", m, exact/float64(n))
		}
	})
}

func TestReductionNaNsAndEmpty(t *testing.T) {
	nan := math.NaN()
	forEachBackend(t, func(t *testing.T, d *Maker) {
		x := fromSliceOn(d, []float64{1, nan, 3, nan, 5, 0}, 2, 3)
		checkHost(t, "max", readHost(t, x.Max(1)), []int{2}, []float64{nan, nan}, 0)
		checkHost(t, "max0", readHost(t, x.Max(0)), []int{3}, []float64{nan, nan, 3}, 0)
		checkHost(t, "argmax", readHost(t, x.ArgMax(1)), []int{2}, []float64{1, 0}, 0)
		checkHost(t, "argmin flat", readHost(t, x.ArgMin()), []int{}, []float64{1}, 0)
		checkHost(t, "sum", readHost(t, x.Sum(0)), []int{3}, []float64{nan, nan, 3}, 0)
		e := d.Zeros(Float32, 0, 4)
		checkHost(t, "sum empty", readHost(t, e.Sum(0)), []int{4}, []float64{0, 0, 0, 0}, 0)
		checkHost(t, "prod empty", readHost(t, e.Prod(0)), []int{4}, []float64{1, 1, 1, 1}, 0)
		checkHost(t, "mean empty", readHost(t, e.Mean(0)), []int{4}, []float64{nan, nan, nan, nan}, 0)
		checkHost(t, "any empty", readHost(t, e.Any()), []int{}, []float64{0}, 0)
		checkHost(t, "all empty", readHost(t, e.All()), []int{}, []float64{1}, 0)
		checkHost(t, "sum of empty axis 1", readHost(t, e.Sum(1)), []int{0}, nil, 0)
		// ArgMax ties keep the first index, also across parallel chunks.
		big := d.Zeros(Float32, 100000).Add(1)
		checkHost(t, "argmax ties", readHost(t, big.ArgMax()), []int{}, []float64{0}, 0)
		// Integer sums wrap in int64; uint8 sums do not overflow.
		u := d.Full(Uint8, 255, 1000)
		checkHost(t, "uint8 sum", readHost(t, u.Sum()), []int{}, []float64{255000}, 0)
		// A 0-d array reduces to itself.
		s := d.Scalar(2.5)
		checkHost(t, "0-d sum", readHost(t, s.Sum()), []int{}, []float64{2.5}, 0)
		checkHost(t, "0-d argmax", readHost(t, s.ArgMax()), []int{}, []float64{0}, 0)
	})
}

// Reductions of fused expressions and of Arange/Eye (index programs) in a
// permuted order.
func TestReduceExpressions(t *testing.T) {
	forEachBackend(t, func(t *testing.T, d *Maker) {
		x := d.Arange(Float64, 12).Reshape(3, 4)
		checkHost(t, "sum(x*x, 0)", readHost(t, x.Mul(x).Sum(0)), []int{4}, []float64{80, 107, 140, 179}, 0)
		checkHost(t, "eye sum 0", readHost(t, d.Eye(Float32, 3).Sum(0)), []int{3}, []float64{1, 1, 1}, 0)
		checkHost(t, "eye argmax 0", readHost(t, d.Eye(Float32, 4).ArgMax(0)), []int{4}, []float64{0, 1, 2, 3}, 0)
		checkHost(t, "arange sum", readHost(t, d.Arange(Int32, 100).Sum()), []int{}, []float64{4950}, 0)
	})
}

func TestSoftmaxFamily(t *testing.T) {
	forEachBackend(t, func(t *testing.T, d *Maker) {
		r := newRand(t)
		for ci, shape := range [][]int{{5}, {3, 4}, {2, 3, 4}, {2, 1, 3}, {4, 1500}, {0, 3}, {3, 0}} {
			for _, dt := range []DType{Float32, Float64, Int32} {
				h := randHost(r, dt, shape, -30, 30)
				kind := layoutKinds[ci%len(layoutKinds)]
				x := makeArray(t, d, dt, h, kind)
				for axis := -len(shape); axis < len(shape); axis++ {
					ax := (axis + len(shape)) % len(shape)
					outDT := floatFor(dt)
					what := fmt.Sprintf("%v%v %v axis %d", dt, shape, kind, axis)
					// Reference along the axis.
					L := shape[ax]
					sm := make([]float64, len(h.v))
					lse := map[int]float64{}
					forIndex(shape, func(flat int, idx []int) {
						if idx[ax] != 0 {
							return
						}
						stride := 1
						for k := ax + 1; k < len(shape); k++ {
							stride *= shape[k]
						}
						m := math.Inf(-1)
						for j := 0; j < L; j++ {
							m = math.Max(m, h.v[flat+j*stride])
						}
						s := 0.0
						for j := 0; j < L; j++ {
							s += math.Exp(h.v[flat+j*stride] - m)
						}
						for j := 0; j < L; j++ {
							sm[flat+j*stride] = math.Exp(h.v[flat+j*stride]-m) / s
						}
						lse[flat] = m + math.Log(s)
					})
					checkHost(t, "Softmax "+what, readCase(t, "Softmax "+what, x.Softmax(axis)), shape, roundAll(outDT, sm), reduceTol.of(outDT))
					ls := make([]float64, len(sm))
					for i, v := range sm {
						ls[i] = math.Log(v)
					}
					checkHost(t, "LogSoftmax "+what, readCase(t, "LogSoftmax "+what, x.LogSoftmax(axis)), shape, roundAll(outDT, ls), reduceTol.of(outDT)*10)
					var kshape []int
					for k, n := range shape {
						if k != ax {
							kshape = append(kshape, n)
						}
					}
					var want []float64
					forIndex(shape, func(flat int, idx []int) {
						if idx[ax] == 0 {
							want = append(want, roundTo(outDT, lse[flat]))
						}
					})
					if L == 0 {
						want = make([]float64, len(want))
						for i := range want {
							want[i] = math.Inf(-1)
						}
						if len(want) == 0 {
							want = make([]float64, backendSize(kshape))
							for i := range want {
								want[i] = math.Inf(-1)
							}
						}
					}
					checkHost(t, "LogSumExp "+what, readCase(t, "LogSumExp "+what, x.LogSumExp(axis)), kshape, want, reduceTol.of(outDT))
				}
			}
		}
		// Stability: huge logits neither overflow nor give NaN.
		big := fromSliceOn(d, []float32{1000, 1001, 1002, -1e30})
		checkHost(t, "softmax big", readHost(t, big.Softmax(0)), []int{4}, roundAll(Float32, []float64{0.09003057317038046, 0.24472847105479764, 0.6652409557748219, 0}), 1e-6)
		checkHost(t, "lse big", readHost(t, big.LogSumExp(0)), []int{}, []float64{roundTo(Float32, 1002.4076059644443)}, 1e-6)
		inf := fromSliceOn(d, []float64{math.Inf(-1), math.Inf(-1)})
		checkHost(t, "lse -inf", readHost(t, inf.LogSumExp(0)), []int{}, []float64{math.Inf(-1)}, 0)
	})
}

func roundAll(dt DType, v []float64) []float64 {
	out := make([]float64, len(v))
	for i, x := range v {
		out[i] = roundTo(dt, x)
	}
	return out
}

func backendSize(s []int) int {
	n := 1
	for _, d := range s {
		n *= d
	}
	return n
}
