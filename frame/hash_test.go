package frame

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/gocu-dev/gocu/array"
)

// hashData is a frame with wide integer keys (too wide to index
// directly, so grouping and joining go through the hash table) and nulls
// in keys and values.
func hashData(t *testing.T, n, distinct int, seed uint64, extremes bool) *Frame {
	t.Helper()
	r := rand.New(rand.NewPCG(seed, 7))
	pool := make([]int64, distinct)
	for i := range pool {
		pool[i] = int64(r.Uint64() >> 1)
		if i%2 == 0 {
			pool[i] = -pool[i]
		}
	}
	if extremes && distinct > 2 {
		pool[0], pool[1] = math.MinInt64, math.MaxInt64 // no key is left for empty slots
	}
	w, s, k2, row := make([]int64, n), make([]int32, n), make([]int32, n), make([]int64, n)
	v, i32 := make([]float64, n), make([]int32, n)
	wv, vv, iv := make([]bool, n), make([]bool, n), make([]bool, n)
	for i := range n {
		w[i] = pool[r.IntN(distinct)]
		s[i] = int32(pool[r.IntN(distinct)] >> 33)
		k2[i] = int32(r.IntN(5))
		row[i] = int64(i)
		v[i] = (r.Float64() - 0.3) * 100
		if r.IntN(17) == 0 {
			v[i] = math.NaN()
		}
		i32[i] = int32(r.IntN(2001) - 1000)
		wv[i], vv[i], iv[i] = r.IntN(13) != 0, r.IntN(11) != 0, r.IntN(9) != 0
	}
	return mustFrame(t, mustSeries(t, "w", w, wv), mustSeries(t, "s", s, nil), mustSeries(t, "k2", k2, nil),
		mustSeries(t, "v", v, vv), mustSeries(t, "i", i32, iv), mustSeries(t, "row", row, nil))
}

// inModes runs fn with the hash paths off (GOCU_FRAME_HASH=0), forced
// (1: narrow join keys too) and as the device chooses.
func inModes(t *testing.T, fn func() (*Frame, error)) (off, forced, auto *Frame) {
	t.Helper()
	run := func(mode string) *Frame {
		t.Setenv("GOCU_FRAME_HASH", mode)
		f, err := fn()
		if err != nil {
			t.Fatalf("GOCU_FRAME_HASH=%q: %v", mode, err)
		}
		if err := f.Eval(); err != nil {
			t.Fatal(err)
		}
		return f
	}
	return run("0"), run("1"), run("")
}

// TestHashGroupBy groups by wide integer keys, alone and with others,
// through the hash table and through the sort, and checks both against
// each other (floats to 1e-9: the GPU's atomic sums vary in the last
// bits) and the sums and counts against a reference.
func TestHashGroupBy(t *testing.T) {
	aggs := []Agg{Sum("v").Named("sv"), Mean("v").Named("mv"), Count("v").Named("cv"), Min("v").Named("lo"),
		Max("v").Named("hi"), Var("v").Named("va"), Std("v").Named("sd"), First("v").Named("fv"), Last("i").Named("li"),
		NUnique("i").Named("nu"), Median("v").Named("md"), Sum("i").Named("si"), Min("i").Named("li2"),
		Max("i").Named("hi2"), Count("row").Named("n")}
	for _, extremes := range []bool{false, true} {
		x := hashData(t, 3000, 150, 11, extremes)
		for _, keys := range [][]string{{"w"}, {"s"}, {"w", "k2"}, {"k2", "s", "w"}} {
			for _, keep := range []bool{false, true} {
				t.Run(fmt.Sprintf("%v/keep%v/extremes%v", keys, keep, extremes), func(t *testing.T) {
					off, forced, auto := inModes(t, func() (*Frame, error) {
						g := x.GroupBy(keys...)
						if keep {
							g = g.KeepNulls()
						}
						return g.Agg(aggs...)
					})
					sameValues(t, forced, off)
					sameValues(t, auto, off)
					if len(keys) == 1 && keys[0] == "w" && !keep {
						checkGroupSums(t, x, forced)
					}
				})
			}
		}
	}
}

// checkGroupSums checks a group-by of x by w against sums and counts of
// v computed here, and that the keys come out sorted.
func checkGroupSums(t *testing.T, x, g *Frame) {
	t.Helper()
	_, wv, err := must(x.Column("w")).Float64s()
	if err != nil {
		t.Fatal(err)
	}
	wi, err := must(x.Column("w")).data.Int64s()
	if err != nil {
		t.Fatal(err)
	}
	v, vv, err := must(x.Column("v")).Float64s()
	if err != nil {
		t.Fatal(err)
	}
	sum, cnt := map[int64]float64{}, map[int64]int64{}
	for i, k := range wi {
		if !wv[i] {
			continue
		}
		if _, ok := cnt[k]; !ok {
			cnt[k] = 0
		}
		if vv[i] && !math.IsNaN(v[i]) {
			sum[k] += v[i]
			cnt[k]++
		}
	}
	keys, err := must(g.Column("w")).data.Int64s()
	if err != nil {
		t.Fatal(err)
	}
	if len(keys) != len(cnt) || !slices.IsSorted(keys) {
		t.Fatalf("%d keys (sorted %v), want %d sorted", len(keys), slices.IsSorted(keys), len(cnt))
	}
	sv, _, _ := must(g.Column("sv")).Float64s()
	cv, _ := must(g.Column("cv")).data.Int64s()
	for j, k := range keys {
		if cv[j] != cnt[k] || math.Abs(sv[j]-sum[k]) > 1e-9*(1+math.Abs(sum[k])) {
			t.Fatalf("key %d: sum %v count %d, want %v %d", k, sv[j], cv[j], sum[k], cnt[k])
		}
	}
}

// TestHashJoin joins on wide integer keys with repeats on both sides and
// null keys, through the hash table and through the sort, and checks the
// pairs of rows, in order, against a nested loop.
func TestHashJoin(t *testing.T) {
	for _, c := range []struct {
		nl, nr   int
		extremes bool
	}{{1200, 300, false}, {1200, 300, true}, {250, 900, false}} {
		l := hashData(t, c.nl, 200, 21, c.extremes)
		r0 := hashData(t, c.nr, 200, 21, c.extremes) // the same key pool
		cols := r0.Columns()
		cols[len(cols)-1] = cols[len(cols)-1].Rename("rrow")
		r := mustFrame(t, cols...)
		for _, on := range [][]string{{"w"}, {"s"}, {"w", "k2"}, {"s", "k2"}} {
			for _, how := range []How{Inner, Left, Semi, Anti} {
				t.Run(fmt.Sprintf("%s/%v/%d-%d/extremes%v", how, on, c.nl, c.nr, c.extremes), func(t *testing.T) {
					off, forced, auto := inModes(t, func() (*Frame, error) { return l.Join(r, how, on...) })
					sameValues(t, forced, off)
					sameValues(t, auto, off)
					checkJoinRows(t, l, r, forced, how, on)
				})
			}
		}
	}
}

// checkJoinRows checks the pairs of left and right rows of j (columns row
// and rrow) against a nested loop: left order, then right order.
func checkJoinRows(t *testing.T, l, r, j *Frame, how How, on []string) {
	t.Helper()
	type key struct {
		vals  [3]int64
		valid bool
	}
	keysOf := func(f *Frame) []key {
		ks := make([]key, f.Len())
		for i := range ks {
			ks[i].valid = true
		}
		for c, name := range on {
			s := must(f.Column(name))
			v, err := s.data.Int64s()
			if err != nil {
				t.Fatal(err)
			}
			var valid []bool
			if s.valid != nil {
				valid, _ = s.valid.Bools()
			}
			for i := range ks {
				ks[i].vals[c] = v[i]
				if valid != nil && !valid[i] {
					ks[i].valid = false
				}
			}
		}
		return ks
	}
	lk, rk := keysOf(l), keysOf(r)
	var wantL, wantR []int64
	for i, a := range lk {
		matched := false
		for k, b := range rk {
			if a.valid && b.valid && a.vals == b.vals {
				matched = true
				if how == Inner || how == Left {
					wantL, wantR = append(wantL, int64(i)), append(wantR, int64(k))
				}
			}
		}
		switch {
		case how == Left && !matched:
			wantL, wantR = append(wantL, int64(i)), append(wantR, -1)
		case how == Semi && matched, how == Anti && !matched:
			wantL = append(wantL, int64(i))
		}
	}
	gotL, err := must(j.Column("row")).data.Int64s()
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(gotL, wantL) {
		t.Fatalf("left rows %v...(%d), want %v...(%d)", gotL[:min(len(gotL), 8)], len(gotL), wantL[:min(len(wantL), 8)], len(wantL))
	}
	if how == Semi || how == Anti {
		return
	}
	rr := must(j.Column("rrow"))
	gotR, rv, err := rr.Float64s()
	if err != nil {
		t.Fatal(err)
	}
	for i := range wantR {
		got := int64(gotR[i])
		if !rv[i] {
			got = -1
		}
		if got != wantR[i] {
			t.Fatalf("row %d: right row %d, want %d", i, got, wantR[i])
		}
	}
}

// TestTakeStringsParallel gathers a string column of more rows than one
// core's share, with repeats, nulls and empty strings, and checks every
// row.
func TestTakeStringsParallel(t *testing.T) {
	const n = 70_000
	r := rand.New(rand.NewPCG(31, 32))
	words, valid := make([]string, n), make([]bool, n)
	for i := range words {
		words[i] = fmt.Sprintf("w%d-%s", i, strings.Repeat("x", r.IntN(4)))
		if i%9 == 0 {
			words[i] = ""
		}
		valid[i] = i%13 != 0
	}
	f := mustFrame(t, mustSeries(t, "s", words, valid))
	idx := make([]int64, 3*n)
	for i := range idx {
		idx[i] = int64(r.IntN(n))
	}
	g, err := f.Take(array.FromSliceOn(testDev, idx))
	if err != nil {
		t.Fatal(err)
	}
	got, gv, err := must(g.Column("s")).Strings()
	if err != nil {
		t.Fatal(err)
	}
	for k, i := range idx {
		if gv[k] != valid[i] || (valid[i] && got[k] != words[i]) {
			t.Fatalf("row %d: %q (%v), want %q (%v)", k, got[k], gv[k], words[i], valid[i])
		}
	}
}
