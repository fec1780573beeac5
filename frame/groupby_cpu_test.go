package frame

import (
	"cmp"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"testing"
	"time"

	"github.com/gocu-dev/gocu/array"
)

// refKey is one key of a row in the reference group-by.
type refKey struct {
	null bool
	i    int64
	s    string
}

func cmpRefKey(a, b refKey) int {
	switch {
	case a.null != b.null && a.null:
		return 1 // nulls last
	case a.null != b.null:
		return -1
	case a.null:
		return 0
	}
	return cmp.Or(cmp.Compare(a.i, b.i), cmp.Compare(a.s, b.s))
}

// refGroups groups the rows by the key columns of f as pandas does
// (sort=True, dropna unless keepNulls) and returns each group's rows.
func refGroups(t *testing.T, f *Frame, keys []string, keepNulls bool) [][]int {
	t.Helper()
	cols := make([][]refKey, len(keys))
	for j, k := range keys {
		s, err := f.Column(k)
		if err != nil {
			t.Fatal(err)
		}
		cols[j] = make([]refKey, f.Len())
		if s.Kind() == String || s.Kind() == Categorical {
			v, ok, err := s.Strings()
			if err != nil {
				t.Fatal(err)
			}
			for i := range v {
				cols[j][i] = refKey{null: !ok[i], s: v[i]}
			}
			continue
		}
		v, ok, err := s.Int64s()
		if err != nil {
			t.Fatal(err)
		}
		for i := range v {
			cols[j][i] = refKey{null: !ok[i], i: v[i]}
		}
	}
	byKey := map[string][]int{}
	tuple := map[string][]refKey{}
	for i := range f.Len() {
		tup := make([]refKey, len(keys))
		drop := false
		for j := range keys {
			tup[j] = cols[j][i]
			if tup[j].null {
				tup[j].i, tup[j].s = 0, ""
				drop = drop || !keepNulls
			}
		}
		if drop {
			continue
		}
		id := fmt.Sprint(tup)
		byKey[id] = append(byKey[id], i)
		tuple[id] = tup
	}
	ids := make([]string, 0, len(byKey))
	for id := range byKey {
		ids = append(ids, id)
	}
	slices.SortFunc(ids, func(a, b string) int {
		return slices.CompareFunc(tuple[a], tuple[b], cmpRefKey)
	})
	out := make([][]int, len(ids))
	for g, id := range ids {
		out[g] = byKey[id]
	}
	return out
}

// refAgg is aggregation op of the values present (v where ok and not
// NaN) of one group, and whether it is present; sums in float64 with
// Neumaier's compensation, variance in two passes.
func refAgg(op string, v []float64, ok []bool, rows []int) (float64, bool) {
	var xs []float64
	for _, i := range rows {
		if ok[i] && !math.IsNaN(v[i]) {
			xs = append(xs, v[i])
		}
	}
	sum := func(xs []float64) float64 {
		s, c := 0.0, 0.0
		for _, x := range xs {
			t := s + x
			if math.Abs(s) >= math.Abs(x) {
				c += (s - t) + x
			} else {
				c += (x - t) + s
			}
			s = t
		}
		return s + c
	}
	n := float64(len(xs))
	switch op {
	case "count":
		return n, true
	case "sum":
		return sum(xs), true
	case "mean":
		return sum(xs) / n, len(xs) > 0
	case "min", "max":
		if len(xs) == 0 {
			return 0, false
		}
		if op == "min" {
			return slices.Min(xs), true
		}
		return slices.Max(xs), true
	case "var", "std":
		if len(xs) < 2 {
			return 0, false
		}
		m := sum(xs) / n
		d := make([]float64, len(xs))
		for i, x := range xs {
			d[i] = (x - m) * (x - m)
		}
		r := sum(d) / (n - 1)
		if op == "std" {
			r = math.Sqrt(r)
		}
		return r, true
	}
	panic(op)
}

// checkGroupBy runs the aggregations by the CPU path (which must apply
// when host is true) and by the general one, and checks both against
// the reference and each other's dtypes and nulls.
func checkGroupBy(t *testing.T, f *Frame, keys []string, keepNulls bool, host int, aggs []Agg) {
	t.Helper()
	g := f.GroupBy(keys...)
	if keepNulls {
		g = g.KeepNulls()
	}
	fast, ok, err := g.hostAgg("Agg", aggs)
	if err != nil {
		t.Fatal(err)
	}
	if host >= 0 && ok != (host == 1) {
		t.Fatalf("keys %v: CPU path applied %v, want %v", keys, ok, host == 1)
	}
	if !ok {
		if fast, err = g.Agg(aggs...); err != nil {
			t.Fatal(err)
		}
	}
	slow, err := g.agg("Agg", aggs)
	if err != nil {
		t.Fatal(err)
	}
	groups := refGroups(t, f, keys, keepNulls)
	if fast.Len() != len(groups) || slow.Len() != len(groups) {
		t.Fatalf("keys %v: %d and %d groups, want %d", keys, fast.Len(), slow.Len(), len(groups))
	}
	for _, k := range keys {
		a, _ := fast.Column(k)
		b, _ := slow.Column(k)
		as, av, _ := a.Strings()
		bs, bv, _ := b.Strings()
		if a.Kind() == Number {
			af, aok, err := a.Float64s()
			bf, bok, _ := b.Float64s()
			if err != nil || !slices.Equal(af, bf) || !slices.Equal(aok, bok) {
				t.Fatalf("key column %q differs from the general path's", k)
			}
		}
		if !slices.Equal(as, bs) || !slices.Equal(av, bv) || a.Kind() != b.Kind() {
			t.Fatalf("key column %q differs from the general path's", k)
		}
	}
	for _, a := range aggs {
		name := cmp.Or(a.As, a.Col)
		gs, _ := fast.Column(name)
		ss, _ := slow.Column(name)
		if gs.DType() != ss.DType() || gs.Kind() != ss.Kind() || (gs.Valid() == nil) != (ss.Valid() == nil) {
			t.Fatalf("%s(%s): %v %v (nulls %v), general path %v %v (nulls %v)", a.Op, a.Col,
				gs.Kind(), gs.DType(), gs.Valid() != nil, ss.Kind(), ss.DType(), ss.Valid() != nil)
		}
		col, _ := f.Column(a.Col)
		v, vok, err := col.Float64s()
		if err != nil {
			t.Fatal(err)
		}
		got, gok, err := gs.Float64s()
		if err != nil {
			t.Fatal(err)
		}
		for grp, rows := range groups {
			want, wok := refAgg(a.Op, v, vok, rows)
			present := gok[grp] && !math.IsNaN(got[grp])
			tol := 1e-9
			if gs.DType() == array.Float32 {
				tol = 1e-6
			}
			if present != wok || wok && math.Abs(got[grp]-want) > tol*math.Max(1, math.Abs(want)) {
				t.Fatalf("keys %v %s(%s) group %d: got %v (present %v), want %v (present %v)",
					keys, a.Op, a.Col, grp, got[grp], present, want, wok)
			}
		}
	}
}

// hostData is random data for the CPU group-by: keys with nulls and
// negative values, value columns with nulls and NaNs.
func hostData(t *testing.T, r *rand.Rand, n int) *Frame {
	k1, k2, one := make([]int32, n), make([]int64, n), make([]int32, n)
	wide, k1ok := make([]int64, n), make([]bool, n)
	str, sok := make([]string, n), make([]bool, n)
	vi32, vi64 := make([]int32, n), make([]int64, n)
	vf64, vf32, vnull := make([]float64, n), make([]float32, n), make([]float64, n)
	i32ok, f64ok, none := make([]bool, n), make([]bool, n), make([]bool, n)
	for i := range n {
		k1[i], k1ok[i] = int32(r.IntN(48)-7), r.IntN(20) > 0
		k2[i] = int64(r.IntN(101) - 1000)
		one[i] = 5
		wide[i] = r.Int64() - math.MaxInt64/2
		if r.IntN(4) == 0 {
			wide[i] = []int64{math.MinInt64 / 2, 0, math.MaxInt64 / 2}[r.IntN(3)]
		}
		str[i], sok[i] = fmt.Sprint("s", r.IntN(30)), r.IntN(10) > 0
		vi32[i], i32ok[i] = int32(r.IntN(2001)-1000), r.IntN(10) > 0
		vi64[i] = r.Int64N(1<<40) - 1<<39
		vf64[i], f64ok[i] = r.NormFloat64()*100+3, r.IntN(10) > 0
		if r.IntN(50) == 0 {
			vf64[i] = math.NaN()
		}
		vf32[i] = float32(r.Float64()*10 - 5)
		vnull[i] = r.Float64()
	}
	return mustFrame(t,
		mustSeries(t, "k1", k1, k1ok), mustSeries(t, "k2", k2, nil), mustSeries(t, "one", one, nil),
		mustSeries(t, "wide", wide, nil), mustSeries(t, "str", str, sok),
		mustSeries(t, "vi32", vi32, i32ok), mustSeries(t, "vi64", vi64, nil),
		mustSeries(t, "vf64", vf64, f64ok), mustSeries(t, "vf32", vf32, nil), mustSeries(t, "vnull", vnull, none))
}

func allAggs(cols ...string) []Agg {
	var out []Agg
	for _, c := range cols {
		for _, op := range []string{"sum", "mean", "count", "min", "max", "var", "std"} {
			out = append(out, Agg{Col: c, Op: op, As: op + "_" + c})
		}
	}
	return out
}

func TestHostGroupBy(t *testing.T) {
	if testDev.IsGPU() {
		t.Skip("the CPU path runs on the CPU")
	}
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	r := rand.New(rand.NewPCG(seed, 26))
	aggs := allAggs("vi32", "vi64", "vf64", "vf32", "vnull")
	for _, n := range []int{1, 7, 300_000} {
		f := hostData(t, r, n)
		for _, keep := range []bool{false, true} {
			t.Run(fmt.Sprintf("n%d/keep%v", n, keep), func(t *testing.T) {
				sure := 1 // whether the CPU path applies; a single row may be a null key
				if n == 1 {
					sure = -1
				}
				checkGroupBy(t, f, []string{"k1"}, keep, sure, aggs)
				checkGroupBy(t, f, []string{"k2", "k1"}, keep, sure, aggs)
				checkGroupBy(t, f, []string{"str"}, keep, sure, aggs)
				checkGroupBy(t, f, []string{"one"}, keep, 1, aggs)
				checkGroupBy(t, f, []string{"str", "k2"}, keep, sure, aggs[:7])
				checkGroupBy(t, f, []string{"wide"}, keep, -sure, aggs[:7]) // hashed
			})
		}
	}
}

func TestHostGroupByEdges(t *testing.T) {
	if testDev.IsGPU() {
		t.Skip("the CPU path runs on the CPU")
	}
	r := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 3))
	f := hostData(t, r, 1000)
	aggs := allAggs("vf64", "vi32")
	// An empty frame, and keys that are all null, leave the CPU path.
	checkGroupBy(t, f.Head(0), []string{"k1"}, false, 0, aggs)
	nulls := mustFrame(t, mustSeries(t, "k", []int32{3, 1, 2}, []bool{false, false, false}),
		mustSeries(t, "v", []float64{1, 2, 4}, nil))
	checkGroupBy(t, nulls, []string{"k"}, false, 0, allAggs("v"))
	checkGroupBy(t, nulls, []string{"k"}, true, 0, allAggs("v"))
	// A large common offset: the variance must not cancel away.
	n := 200_000
	k, v := make([]int32, n), make([]float64, n)
	for i := range n {
		k[i], v[i] = int32(r.IntN(3)), 1e9+r.Float64()
	}
	offset := mustFrame(t, mustSeries(t, "k", k, nil), mustSeries(t, "v", v, nil))
	checkGroupBy(t, offset, []string{"k"}, false, 1, allAggs("v"))
	// Float sums do not depend on the cores.
	g := hostData(t, r, 300_000).GroupBy("k1")
	a, _, err := g.hostAgg("Agg", []Agg{Sum("vf64")})
	if err != nil {
		t.Fatal(err)
	}
	av, _, _ := a.cols[1].Float64s()
	for _, procs := range []int{1, 3} {
		old := runtime.GOMAXPROCS(procs)
		b, _, err := g.hostAgg("Agg", []Agg{Sum("vf64")})
		runtime.GOMAXPROCS(old)
		if err != nil {
			t.Fatal(err)
		}
		bv, _, _ := b.cols[1].Float64s()
		if !slices.Equal(av, bv) {
			t.Fatalf("sums on %d cores differ", procs)
		}
	}
}
