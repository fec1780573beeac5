package frame

import (
	"errors"
	"math"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// The golden files come from pandas 1.5.3 (testdata/golden.py).

func readGolden(t *testing.T, name string) *Frame {
	t.Helper()
	fh, err := os.Open(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	f, err := ReadCSV(testDev, fh, nil)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// sameValues compares got with pandas' want column by column: numbers
// to 1e-9 relative, strings exactly, nulls as nulls (pandas writes NaN
// and null alike).
func sameValues(t *testing.T, got, want *Frame) {
	t.Helper()
	if got.Len() != want.Len() {
		t.Fatalf("%d rows, pandas %d", got.Len(), want.Len())
	}
	for _, w := range want.cols {
		g, err := got.Column(w.name)
		if err != nil {
			t.Fatal(err)
		}
		if w.kind == String || w.kind == Categorical {
			gs, gv, err := g.Strings()
			if err != nil {
				t.Fatal(err)
			}
			ws, wv, _ := w.Strings()
			for i := range ws {
				if gv[i] != wv[i] || (wv[i] && gs[i] != ws[i]) {
					t.Fatalf("column %q row %d: got %q (%v), pandas %q (%v)", w.name, i, gs[i], gv[i], ws[i], wv[i])
				}
			}
			continue
		}
		gf, gv, err := g.Float64s()
		if err != nil {
			t.Fatal(err)
		}
		wf, wv, _ := w.Float64s()
		for i := range wf {
			gp := gv[i] && !math.IsNaN(gf[i])
			wp := wv[i] && !math.IsNaN(wf[i])
			if gp != wp || (wp && math.Abs(gf[i]-wf[i]) > 1e-9*math.Max(1, math.Abs(wf[i]))) {
				t.Fatalf("column %q row %d: got %v (present %v), pandas %v (present %v)", w.name, i, gf[i], gp, wf[i], wp)
			}
		}
	}
}

func TestGoldenGroupBy(t *testing.T) {
	in := readGolden(t, "input.csv")
	got, err := in.GroupBy("id1").Agg(
		Sum("v1").Named("v1_sum"), Mean("v3").Named("v3_mean"), Count("v3").Named("v3_count"),
		Min("v3").Named("v3_min"), Max("v1").Named("v1_max"), Var("v3").Named("v3_var"),
		Std("v3").Named("v3_std"), First("v3").Named("v3_first"), Last("v1").Named("v1_last"),
		NUnique("v1").Named("v1_nunique"), Median("v3").Named("v3_median"),
		Min("id4").Named("id4_min"), NUnique("id4").Named("id4_nunique"))
	if err != nil {
		t.Fatal(err)
	}
	sameValues(t, got, readGolden(t, "groupby_id1.csv"))

	got, err = in.GroupBy("id4", "id2").Agg(Sum("v3").Named("v3_sum"), Count("v1").Named("v1_count"),
		Max("v3").Named("v3_max"), Median("v1").Named("v1_median"))
	if err != nil {
		t.Fatal(err)
	}
	sameValues(t, got, readGolden(t, "groupby_id4_id2.csv"))
}

func TestGoldenSort(t *testing.T) {
	in := readGolden(t, "input.csv")
	got, err := in.Sort(Desc("id2"), Asc("v3"))
	if err != nil {
		t.Fatal(err)
	}
	sameValues(t, got, readGolden(t, "sort_id2d_v3.csv"))
	got, err = in.Sort(SortKey{Name: "id4", NullsFirst: true}, SortKey{Name: "v1", Descending: true, NullsFirst: true})
	if err != nil {
		t.Fatal(err)
	}
	sameValues(t, got, readGolden(t, "sort_id4_v1d_nf.csv"))
}

func TestGoldenJoin(t *testing.T) {
	in := readGolden(t, "input.csv")
	left, err := in.Select("row", "id1")
	if err != nil {
		t.Fatal(err)
	}
	rrow := make([]int64, 10)
	for i := range rrow {
		rrow[i] = int64(i)
	}
	right := mustFrame(t, mustSeries(t, "id1", []int64{1, 2, 2, 3, 5, 8, 8, 8, 11, 12}, nil), mustSeries(t, "rrow", rrow, nil))
	got, err := left.Join(right, Left, "id1")
	if err != nil {
		t.Fatal(err)
	}
	sameValues(t, got, readGolden(t, "join_left.csv"))
	// pandas 1.5.3 orders an inner join by key, in the keys' order of
	// appearance; 2.2 keeps the left order, as Join does: compare sets.
	got, err = left.Join(right, Inner, "id1")
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(tuples(t, got), tuples(t, readGolden(t, "join_inner.csv"))) {
		t.Errorf("inner join differs from pandas'")
	}
	rows, _, _ := got.cols[1].Float64s()
	if !slices.IsSorted(rows) {
		t.Errorf("inner join not in left order")
	}
	// pandas 1.5.3 does not sort an outer join (2.2 does): compare sets.
	got, err = left.Join(right, Outer, "id1")
	if err != nil {
		t.Fatal(err)
	}
	want := readGolden(t, "join_outer.csv")
	if !slices.Equal(tuples(t, got), tuples(t, want)) {
		t.Errorf("outer join differs from pandas'")
	}
	ids, _, _ := got.cols[0].Float64s()
	if !slices.IsSorted(ids) {
		t.Errorf("outer join not sorted by key")
	}

	l2, err := in.Select("row", "id1", "id4")
	if err != nil {
		t.Fatal(err)
	}
	r2 := mustFrame(t, mustSeries(t, "id1", []int32{1, 1, 2, 3, 3, 4}, nil),
		mustSeries(t, "id4", []string{"id1", "id2", "id1", "id3", "id3", "id9"}, nil),
		mustSeries(t, "rrow", rrow[:6], nil))
	got, err = l2.Join(r2, Inner, "id1", "id4")
	if err != nil {
		t.Fatal(err)
	}
	got, err = got.Sort(Asc("rrow"), Asc("row"))
	if err != nil {
		t.Fatal(err)
	}
	want, err = readGolden(t, "join2_inner.csv").Sort(Asc("rrow"), Asc("row"))
	if err != nil {
		t.Fatal(err)
	}
	sameValues(t, got, want)
}

// tuples returns the rows (id1, row, rrow) sorted, nulls as -1.
func tuples(t *testing.T, f *Frame) [][3]float64 {
	var cols [3][]float64
	for k, name := range []string{"id1", "row", "rrow"} {
		s, err := f.Column(name)
		if err != nil {
			t.Fatal(err)
		}
		v, ok, err := s.Float64s()
		if err != nil {
			t.Fatal(err)
		}
		for i := range v {
			if !ok[i] || math.IsNaN(v[i]) {
				v[i] = -1
			}
		}
		cols[k] = v
	}
	out := make([][3]float64, len(cols[0]))
	for i := range out {
		out[i] = [3]float64{cols[0][i], cols[1][i], cols[2][i]}
	}
	slices.SortFunc(out, func(a, b [3]float64) int {
		for k := range a {
			if a[k] != b[k] {
				if a[k] < b[k] {
					return -1
				}
				return 1
			}
		}
		return 0
	})
	return out
}

func TestGoldenTools(t *testing.T) {
	in := readGolden(t, "input.csv")
	vc, err := in.ValueCounts("id4")
	if err != nil {
		t.Fatal(err)
	}
	sameValues(t, vc, readGolden(t, "value_counts_id4.csv"))

	dd, err := in.DropDuplicates("id2", "id4")
	if err != nil {
		t.Fatal(err)
	}
	sameValues(t, dd, readGolden(t, "drop_duplicates_id2_id4.csv"))

	sel, err := in.Select("id1", "v1", "v3")
	if err != nil {
		t.Fatal(err)
	}
	desc, err := sel.Describe()
	if err != nil {
		t.Fatal(err)
	}
	sameValues(t, desc, readGolden(t, "describe.csv"))
}

func TestGoldenStrings(t *testing.T) {
	in := readGolden(t, "input.csv")
	var err error
	for _, c := range []struct {
		name string
		e    *Expr
	}{
		{"len", Col("id4").StrLen()},
		{"has3", Col("id4").StrContains("d3")},
		{"up", Col("id4").StrUpper()},
		{"ends", Col("id4").StrEndsWith("5")},
	} {
		if in, err = in.With(c.name, c.e); err != nil {
			t.Fatal(err)
		}
	}
	sameValues(t, in, readGolden(t, "strings.csv"))
	low, err := in.With("low", Col("up").StrLower().Eq(Col("id4")))
	if err != nil {
		t.Fatal(err)
	}
	g, err := low.Filter(Col("low").Not())
	if err != nil {
		t.Fatal(err)
	}
	if g.Len() != 0 {
		t.Errorf("lower(upper(s)) != s in %d rows", g.Len())
	}
	if _, err := in.With("z", Col("v1").StrLen()); !errors.Is(err, ErrType) {
		t.Errorf("StrLen of numbers: %v", err)
	}
}
