package frame

import (
	"cmp"
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
)

// opsData is random data with nulls: a wide-range int key (sorted, not
// indexed directly), a small int key, a string key, float and int values.
type opsData struct {
	f     *Frame
	big   []int64
	small []int32
	str   []string
	strOK []bool
	x     []float64
	xOK   []bool
	y     []int64
	n     int
}

func newOpsData(t *testing.T, n int, seed uint64) *opsData {
	r := rand.New(rand.NewPCG(seed, 3))
	d := &opsData{n: n}
	for i := 0; i < n; i++ {
		d.big = append(d.big, (r.Int64N(40)-20)*1_000_000_007)
		d.small = append(d.small, int32(r.IntN(7)))
		d.str = append(d.str, []string{"b", "a", "ccc", "", "dd"}[r.IntN(5)])
		d.strOK = append(d.strOK, r.IntN(10) != 0)
		x := math.Round(r.NormFloat64()*1000) / 8
		if r.IntN(15) == 0 {
			x = math.NaN()
		}
		d.x = append(d.x, x)
		d.xOK = append(d.xOK, r.IntN(8) != 0)
		d.y = append(d.y, r.Int64N(1000)-500)
	}
	d.f = mustFrame(t, mustSeries(t, "big", d.big, nil), mustSeries(t, "small", d.small, nil),
		mustSeries(t, "s", d.str, d.strOK), mustSeries(t, "x", d.x, d.xOK), mustSeries(t, "y", d.y, nil),
		mustSeries(t, "row", rowNumbers(n), nil))
	return d
}

func rowNumbers(n int) []int64 {
	r := make([]int64, n)
	for i := range r {
		r[i] = int64(i)
	}
	return r
}

func rowsOf(t *testing.T, f *Frame) []int64 {
	t.Helper()
	s, err := f.Column("row")
	if err != nil {
		t.Fatal(err)
	}
	v, _, err := s.Int64s()
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func TestSortRandom(t *testing.T) {
	d := newOpsData(t, 4000, 1)
	xNull := func(i int) bool { return !d.xOK[i] || math.IsNaN(d.x[i]) }
	cases := []struct {
		keys []SortKey
		less func(i, j int) int
	}{
		{[]SortKey{Desc("x")}, func(i, j int) int {
			if c := cmp.Compare(b2i(xNull(i)), b2i(xNull(j))); c != 0 || xNull(i) {
				return c
			}
			return cmp.Compare(d.x[j], d.x[i])
		}},
		{[]SortKey{{Name: "s", NullsFirst: true}, Desc("big"), Asc("y")}, func(i, j int) int {
			if c := cmp.Compare(b2i(d.strOK[i]), b2i(d.strOK[j])); c != 0 {
				return c
			}
			if d.strOK[i] {
				if c := strings.Compare(d.str[i], d.str[j]); c != 0 {
					return c
				}
			}
			if c := cmp.Compare(d.big[j], d.big[i]); c != 0 {
				return c
			}
			return cmp.Compare(d.y[i], d.y[j])
		}},
		{[]SortKey{Asc("small"), {Name: "x", NullsFirst: true}}, func(i, j int) int {
			if c := cmp.Compare(d.small[i], d.small[j]); c != 0 {
				return c
			}
			if c := cmp.Compare(b2i(!xNull(i)), b2i(!xNull(j))); c != 0 || xNull(i) {
				return c
			}
			return cmp.Compare(d.x[i], d.x[j])
		}},
	}
	for _, c := range cases {
		want := rowNumbers(d.n)
		slices.SortStableFunc(want, func(a, b int64) int { return c.less(int(a), int(b)) })
		got, err := d.f.Sort(c.keys...)
		if err != nil {
			t.Fatal(err)
		}
		if g := rowsOf(t, got); !slices.Equal(g, want) {
			t.Errorf("%v: rows differ from the stable reference sort", c.keys)
		}
	}
	if _, err := d.f.Sort(Asc("nope")); !errors.Is(err, ErrColumn) {
		t.Errorf("unknown key: %v", err)
	}
	if _, err := d.f.Sort(); !errors.Is(err, ErrValue) {
		t.Errorf("no keys: %v", err)
	}
}

// TestGroupByRandom checks every aggregation against a plain Go
// reference, on sorted (wide-range) and directly indexed keys together.
func TestGroupByRandom(t *testing.T) {
	d := newOpsData(t, 5000, 2)
	type key struct {
		big   int64
		small int32
	}
	groups := map[key][]int{}
	for i := 0; i < d.n; i++ {
		k := key{d.big[i], d.small[i]}
		groups[k] = append(groups[k], i)
	}
	keys := make([]key, 0, len(groups))
	for k := range groups {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		if keys[i].big != keys[j].big {
			return keys[i].big < keys[j].big
		}
		return keys[i].small < keys[j].small
	})
	got, err := d.f.GroupBy("big", "small").Agg(Sum("x").Named("sum"), Mean("x").Named("mean"), Count("x").Named("count"),
		Min("x").Named("min"), Max("y").Named("max"), Var("x").Named("var"), Std("x").Named("std"),
		First("s").Named("first"), Last("x").Named("last"), NUnique("s").Named("nunique"), Median("x").Named("median"))
	if err != nil {
		t.Fatal(err)
	}
	if got.Len() != len(keys) {
		t.Fatalf("%d groups, want %d", got.Len(), len(keys))
	}
	col := func(name string) ([]float64, []bool) {
		s, err := got.Column(name)
		if err != nil {
			t.Fatal(err)
		}
		v, ok, err := s.Float64s()
		if err != nil {
			t.Fatal(err)
		}
		return v, ok
	}
	near := func(name string, g int, v float64, ok bool, want float64, wantOK bool) {
		t.Helper()
		if ok != wantOK || (ok && math.Abs(v-want) > 1e-9*math.Max(1, math.Abs(want))) {
			t.Fatalf("%s of group %v: got %v (%v), want %v (%v)", name, keys[g], v, ok, want, wantOK)
		}
	}
	names := []string{"big", "small", "sum", "mean", "count", "min", "max", "var", "std", "last", "median"}
	cols := map[string][]float64{}
	oks := map[string][]bool{}
	for _, n := range names {
		cols[n], oks[n] = col(n)
	}
	firstS, firstOK, err := must(got.Column("first")).Strings()
	if err != nil {
		t.Fatal(err)
	}
	nuniq, _ := col("nunique")
	for g, k := range keys {
		var xs []float64
		strs := map[string]bool{}
		first, last := "", math.NaN()
		hasFirst := false
		maxY := int64(math.MinInt64)
		for _, i := range groups[k] {
			if d.xOK[i] && !math.IsNaN(d.x[i]) {
				xs = append(xs, d.x[i])
				last = d.x[i]
			}
			if d.strOK[i] {
				strs[d.str[i]] = true
				if !hasFirst {
					first, hasFirst = d.str[i], true
				}
			}
			maxY = max(maxY, d.y[i])
		}
		near("big", g, cols["big"][g], true, float64(k.big), true)
		near("small", g, cols["small"][g], true, float64(k.small), true)
		sum, mean, vr := 0.0, 0.0, 0.0
		for _, x := range xs {
			sum += x
		}
		c := len(xs)
		if c > 0 {
			mean = sum / float64(c)
		}
		for _, x := range xs {
			vr += (x - mean) * (x - mean)
		}
		if c > 1 {
			vr /= float64(c - 1)
		}
		near("sum", g, cols["sum"][g], oks["sum"][g], sum, true)
		near("mean", g, cols["mean"][g], oks["mean"][g], mean, c > 0)
		near("count", g, cols["count"][g], oks["count"][g], float64(c), true)
		near("max", g, cols["max"][g], oks["max"][g], float64(maxY), true)
		near("var", g, cols["var"][g], oks["var"][g], vr, c > 1)
		near("std", g, cols["std"][g], oks["std"][g], math.Sqrt(vr), c > 1)
		near("last", g, cols["last"][g], oks["last"][g], last, c > 0)
		slices.Sort(xs)
		if c > 0 {
			near("min", g, cols["min"][g], oks["min"][g], xs[0], true)
			near("median", g, cols["median"][g], oks["median"][g], (xs[(c-1)/2]+xs[c/2])/2, true)
		} else {
			near("min", g, cols["min"][g], oks["min"][g], 0, false)
			near("median", g, cols["median"][g], oks["median"][g], 0, false)
		}
		if firstOK[g] != hasFirst || firstS[g] != first {
			t.Fatalf("first of %v: got %q %v, want %q %v", k, firstS[g], firstOK[g], first, hasFirst)
		}
		near("nunique", g, nuniq[g], true, float64(len(strs)), true)
	}
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

func TestGroupByErrors(t *testing.T) {
	d := newOpsData(t, 50, 3)
	cases := []struct {
		keys []string
		aggs []Agg
		kind error
		msg  string
	}{
		{[]string{"small"}, []Agg{{Col: "x", Op: "mode"}}, ErrValue, `unknown aggregation "mode"`},
		{[]string{"small"}, []Agg{Sum("s")}, ErrType, `sum of string column "s"`},
		{[]string{"small"}, []Agg{Sum("x"), Mean("x")}, ErrColumn, `two result columns named "x"`},
		{[]string{"smal"}, []Agg{Sum("x")}, ErrColumn, `did you mean "small"`},
		{nil, []Agg{Sum("x")}, ErrValue, "no keys"},
	}
	for _, c := range cases {
		_, err := d.f.GroupBy(c.keys...).Agg(c.aggs...)
		if !errors.Is(err, c.kind) || !strings.Contains(err.Error(), c.msg) {
			t.Errorf("%v %v: got %v, want %q", c.keys, c.aggs, err, c.msg)
		}
	}
}

func TestGroupByNullKeysAndTimestamps(t *testing.T) {
	f := mustFrame(t,
		mustSeries(t, "k", []string{"b", "a", "b", "z", "a"}, []bool{true, true, true, false, true}),
		mustSeries(t, "t", []int64{1, 2, 3, 4, 5}, nil))
	g, err := f.GroupBy("k").Agg(Sum("t"), Count("t").Named("n"))
	if err != nil {
		t.Fatal(err)
	}
	want := "   k  t  n\n0  a  7  2\n1  b  4  2"
	if got := g.String(); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}

func TestJoinKinds(t *testing.T) {
	l := mustFrame(t, mustSeries(t, "k", []string{"a", "b", "c", "a", "x"}, []bool{true, true, true, true, false}),
		mustSeries(t, "v", []int64{1, 2, 3, 4, 5}, nil))
	r := mustFrame(t, mustSeries(t, "k", []string{"a", "c", "c", "d", "q"}, []bool{true, true, true, true, false}),
		mustSeries(t, "v", []float64{0.5, 1.5, 2.5, 3.5, 4.5}, nil))
	cases := []struct {
		how  How
		want string
	}{
		{Inner, "   k  v_x  v_y\n0  a    1  0.5\n1  c    3  1.5\n2  c    3  2.5\n3  a    4  0.5"},
		{Left, "      k  v_x  v_y\n0     a    1  0.5\n1     b    2  NaN\n2     c    3  1.5\n3     c    3  2.5\n4     a    4  0.5\n5  <NA>    5  NaN"},
		{Outer, "      k   v_x  v_y\n0     a     1  0.5\n1     a     4  0.5\n2     b     2  NaN\n3     c     3  1.5\n4     c     3  2.5\n5     d  <NA>  3.5\n6  <NA>     5  NaN\n7  <NA>  <NA>  4.5"},
		{Semi, "   k  v\n0  a  1\n1  c  3\n2  a  4"},
		{Anti, "      k  v\n0     b  2\n1  <NA>  5"},
	}
	for _, c := range cases {
		got, err := l.Join(r, c.how, "k")
		if err != nil {
			t.Fatal(err)
		}
		if s := got.String(); s != c.want {
			t.Errorf("%s join: got\n%s\nwant\n%s", c.how, s, c.want)
		}
	}
	// Errors: key types, unknown kinds and columns.
	num := mustFrame(t, mustSeries(t, "k", []int64{1}, nil))
	if _, err := l.Join(num, Inner, "k"); !errors.Is(err, ErrType) || !strings.Contains(err.Error(), "key \"k\" is string on the left and int64 on the right") {
		t.Errorf("key types: %v", err)
	}
	if _, err := l.Join(r, "cross", "k"); !errors.Is(err, ErrValue) {
		t.Errorf("kind: %v", err)
	}
	if _, err := l.Join(r, Inner, "kk"); !errors.Is(err, ErrColumn) {
		t.Errorf("column: %v", err)
	}
	// An empty right frame.
	empty := mustFrame(t, mustSeries(t, "k", []string{}, nil), mustSeries(t, "w", []float64{}, nil))
	got, err := l.Join(empty, Left, "k")
	if err != nil {
		t.Fatal(err)
	}
	if got.Len() != 5 || must(got.Column("w")).Len() != 5 {
		t.Errorf("left join with an empty frame:\n%v", got)
	}
}

// TestJoinRandom checks a multi-key inner join of wide-range ints and
// strings against nested loops.
func TestJoinRandom(t *testing.T) {
	d := newOpsData(t, 600, 4)
	r := newOpsData(t, 300, 5)
	got, err := d.f.Select("big", "s", "row")
	if err != nil {
		t.Fatal(err)
	}
	right, err := r.f.Select("big", "s", "row")
	if err != nil {
		t.Fatal(err)
	}
	j, err := got.Join(right, Inner, "big", "s")
	if err != nil {
		t.Fatal(err)
	}
	var want [][2]int64
	for i := 0; i < d.n; i++ {
		for k := 0; k < r.n; k++ {
			if d.big[i] == r.big[k] && d.strOK[i] && r.strOK[k] && d.str[i] == r.str[k] {
				want = append(want, [2]int64{int64(i), int64(k)})
			}
		}
	}
	lr, _, _ := must(j.Column("row_x")).Int64s()
	rr, _, _ := must(j.Column("row_y")).Int64s()
	if len(lr) != len(want) {
		t.Fatalf("%d rows, want %d", len(lr), len(want))
	}
	for i := range want {
		if lr[i] != want[i][0] || rr[i] != want[i][1] {
			t.Fatalf("row %d: (%d, %d), want %v", i, lr[i], rr[i], want[i])
		}
	}
}

func TestGroupByMinMaxDTypes(t *testing.T) {
	k := []int64{1, 2, 1, 2, 3, 1}
	valid := []bool{true, true, false, true, false, true}
	f := mustFrame(t, mustSeries(t, "k", k, nil),
		mustSeries(t, "i32", []int32{math.MinInt32, 5, -7, math.MaxInt32, 1, 3}, valid),
		mustSeries(t, "f32", []float32{1.5, -2, 7, 0.25, 3, -1}, valid),
		mustSeries(t, "u8", []uint8{200, 3, 9, 250, 1, 100}, valid),
		mustSeries(t, "b", []bool{false, true, true, false, true, false}, valid))
	g, err := f.GroupBy("k").Agg(Min("i32").Named("i32min"), Max("i32").Named("i32max"), Min("f32").Named("f32min"),
		Max("f32").Named("f32max"), Min("u8").Named("u8min"), Max("u8").Named("u8max"), Max("b").Named("bmax"))
	if err != nil {
		t.Fatal(err)
	}
	want := "" +
		"   k       i32min      i32max  f32min  f32max  u8min  u8max   bmax\n" +
		"0  1  -2147483648           3    -1.0    1.50    100    200  False\n" +
		"1  2            5  2147483647    -2.0    0.25      3    250   True\n" +
		"2  3         <NA>        <NA>     NaN     NaN   <NA>   <NA>   <NA>"
	if got := g.String(); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	// Min and max keep the column's dtype.
	for i, c := range g.cols[1:] {
		src := f.cols[1+min(i/2, 3)]
		if c.DType() != src.DType() {
			t.Errorf("%s: dtype %v, want %v", c.name, c.DType(), src.DType())
		}
	}
}

// TestJoinUniqueRight checks the joins whose right keys are distinct
// (each left row matches at most once) against nested loops.
func TestJoinUniqueRight(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 9))
	nl := 500
	lk, lok := make([]int64, nl), make([]bool, nl)
	for i := range lk {
		lk[i], lok[i] = r.Int64N(40), r.IntN(10) != 0
	}
	rk := []int64{}
	for k := int64(0); k < 50; k += 3 {
		rk = append(rk, k)
	}
	r.Shuffle(len(rk), func(i, j int) { rk[i], rk[j] = rk[j], rk[i] })
	rok := make([]bool, len(rk))
	for i := range rok {
		rok[i] = i != 4
	}
	left := mustFrame(t, mustSeries(t, "k", lk, lok), mustSeries(t, "row", rowNumbers(nl), nil))
	right := mustFrame(t, mustSeries(t, "k", rk, rok), mustSeries(t, "rrow", rowNumbers(len(rk)), nil))
	for _, how := range []How{Inner, Left, Outer} {
		var want [][2]int64
		for i := range lk {
			m := int64(-1)
			for j := range rk {
				if lok[i] && rok[j] && lk[i] == rk[j] {
					m = int64(j)
				}
			}
			if m >= 0 || how != Inner {
				want = append(want, [2]int64{int64(i), m})
			}
		}
		if how == Outer {
			for j := range rk {
				hit := false
				for i := range lk {
					hit = hit || (lok[i] && rok[j] && lk[i] == rk[j])
				}
				if !hit {
					want = append(want, [2]int64{-1, int64(j)})
				}
			}
		}
		j, err := left.Join(right, how, "k")
		if err != nil {
			t.Fatal(err)
		}
		lr, lv, _ := must(j.Column("row")).Int64s()
		rr, rv, _ := must(j.Column("rrow")).Int64s()
		var got [][2]int64
		for i := range lr {
			a, b := lr[i], rr[i]
			if !lv[i] {
				a = -1
			}
			if !rv[i] {
				b = -1
			}
			got = append(got, [2]int64{a, b})
		}
		if how == Outer {
			cmp2 := func(a, b [2]int64) int {
				if c := cmp.Compare(a[0], b[0]); c != 0 {
					return c
				}
				return cmp.Compare(a[1], b[1])
			}
			slices.SortFunc(got, cmp2)
			slices.SortFunc(want, cmp2)
		}
		if !slices.Equal(got, want) {
			t.Errorf("%s join: got %d rows, want %d, or rows differ", how, len(got), len(want))
		}
	}
}

func TestJoinAllMatch(t *testing.T) {
	l := mustFrame(t, mustSeries(t, "k", []int32{3, 1, 3, 2}, nil), mustSeries(t, "v", []float64{0.5, 1.5, 2.5, 3.5}, nil))
	r := mustFrame(t, mustSeries(t, "k", []int32{2, 3, 1}, nil), mustSeries(t, "w", []string{"two", "three", "one"}, nil))
	want := "   k    v      w\n0  3  0.5  three\n1  1  1.5    one\n2  3  2.5  three\n3  2  3.5    two"
	for _, how := range []How{Inner, Left} {
		j, err := l.Join(r, how, "k")
		if err != nil {
			t.Fatal(err)
		}
		if got := j.String(); got != want {
			t.Errorf("%s: got\n%s\nwant\n%s", how, got, want)
		}
	}
}

func TestUnsortedDictionary(t *testing.T) {
	codes := mustSeries(t, "k", []int32{0, 1, 2, 1, 0}, []bool{true, true, true, true, false})
	codes.kind, codes.dict = Categorical, []string{"b", "a", "b"}
	f := mustFrame(t, codes, mustSeries(t, "v", []int64{1, 2, 4, 8, 16}, nil))
	g, err := f.GroupBy("k").Agg(Sum("v"))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := g.String(), "   k   v\n0  a  10\n1  b   5"; got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	s, err := f.Sort(Desc("k"))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := s.String(), "      k   v\n0     b   1\n1     b   4\n2     a   2\n3     a   8\n4  <NA>  16"; got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}

// TestConcurrentReaders groups one frame from several goroutines: the
// string column's encoding is made once and shared (run with -race).
func TestConcurrentReaders(t *testing.T) {
	d := newOpsData(t, 2000, 6)
	want, err := d.f.GroupBy("s").Agg(Sum("y"))
	if err != nil {
		t.Fatal(err)
	}
	fresh, err := d.f.Take(d.f.cols[0].data.Argsort(0))
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	errs := make([]error, 4)
	outs := make([]*Frame, 4)
	for i := range 4 {
		wg.Go(func() { outs[i], errs[i] = fresh.GroupBy("s").Agg(Sum("y")) })
	}
	wg.Wait()
	for i := range outs {
		if errs[i] != nil {
			t.Fatal(errs[i])
		}
		if outs[i].String() != want.String() {
			t.Errorf("goroutine %d: got\n%v\nwant\n%v", i, outs[i], want)
		}
	}
}

// TestEmptyFrame runs every operation on a frame of no rows.
func TestEmptyFrame(t *testing.T) {
	f := mustFrame(t, mustSeries(t, "k", []int64{}, nil), mustSeries(t, "s", []string{}, nil), mustSeries(t, "x", []float64{}, nil))
	check := func(name string, g *Frame, err error) {
		t.Helper()
		if err != nil {
			t.Errorf("%s: %v", name, err)
			return
		}
		if g.Len() != 0 {
			t.Errorf("%s: %d rows", name, g.Len())
		}
		_ = g.String()
	}
	g, err := f.GroupBy("k").Agg(Sum("x"), Mean("x").Named("m"), Median("x").Named("md"), First("s"), NUnique("x").Named("nu"), Min("x").Named("mn"))
	check("GroupBy", g, err)
	g, err = f.GroupBy("s").Agg(Count("x"))
	check("GroupBy strings", g, err)
	g, err = f.Sort(Asc("s"), Desc("x"))
	check("Sort", g, err)
	g, err = f.Filter(Col("x").Gt(0))
	check("Filter", g, err)
	for _, how := range []How{Inner, Left, Outer, Semi, Anti} {
		g, err = f.Join(f, how, "k")
		check("Join "+string(how), g, err)
	}
	g, err = f.ValueCounts("k")
	check("ValueCounts", g, err)
	g, err = f.DropDuplicates()
	check("DropDuplicates", g, err)
	if d, err := f.Describe(); err != nil || d.Len() != 8 {
		t.Errorf("Describe: %v", err)
	}
}

func TestJoinOneSideEmpty(t *testing.T) {
	full := mustFrame(t, mustSeries(t, "k", []int64{2, 1, 2}, nil), mustSeries(t, "a", []string{"x", "y", "z"}, nil))
	empty := mustFrame(t, mustSeries(t, "k", []int64{}, nil), mustSeries(t, "b", []float64{}, nil))
	rows := map[How][2]int{Inner: {0, 0}, Left: {3, 0}, Outer: {3, 3}, Semi: {0, 0}, Anti: {3, 0}}
	for how, want := range rows {
		g, err := full.Join(empty, how, "k")
		if err != nil || g.Len() != want[0] {
			t.Errorf("full %s empty: %v rows, err %v", how, g, err)
			continue
		}
		_ = g.String()
		g, err = empty.Join(full, how, "k")
		if err != nil || g.Len() != want[1] {
			t.Errorf("empty %s full: %v, err %v", how, g, err)
			continue
		}
		_ = g.String()
	}
}
