package frame

import (
	"errors"
	"math"
	"math/rand/v2"
	"testing"
)

// randFrame has float x, int y with nulls, bool b with nulls and string k.
func randFrame(t testing.TB, n int, seed uint64) (*Frame, []float64, []int64, []bool, []bool, []bool, []string) {
	r := rand.New(rand.NewPCG(seed, 7))
	x := make([]float64, n)
	y := make([]int64, n)
	yv := make([]bool, n)
	b := make([]bool, n)
	bv := make([]bool, n)
	k := make([]string, n)
	for i := range x {
		x[i] = r.NormFloat64() * 10
		y[i] = r.Int64N(200) - 100
		yv[i] = r.IntN(5) != 0
		b[i] = r.IntN(2) == 0
		bv[i] = r.IntN(4) != 0
		k[i] = string(rune('a' + r.IntN(6)))
	}
	f := mustFrame(t, mustSeries(t, "x", x, nil), mustSeries(t, "y", y, yv), mustSeries(t, "b", b, bv), mustSeries(t, "k", k, nil))
	return f, x, y, yv, b, bv, k
}

func TestWithExpr(t *testing.T) {
	f, x, y, yv, _, _, _ := randFrame(t, 5000, 1)
	g, err := f.With("z", Col("x").Mul(Col("y")).Add(1).Div(2))
	if err != nil {
		t.Fatal(err)
	}
	z, _ := g.Column("z")
	got, valid, err := z.Float64s()
	if err != nil {
		t.Fatal(err)
	}
	for i := range x {
		want := (x[i]*float64(y[i]) + 1) / 2
		if valid[i] != yv[i] || (valid[i] && math.Abs(got[i]-want) > 1e-12*math.Max(1, math.Abs(want))) {
			t.Fatalf("row %d: got %v %v, want %v %v", i, got[i], valid[i], want, yv[i])
		}
	}
	if _, err := f.With("z", Col("xx").Add(1)); !errors.Is(err, ErrColumn) {
		t.Errorf("unknown column: %v", err)
	}
	if _, err := f.With("z", Col("k").Add(1)); !errors.Is(err, ErrType) {
		t.Errorf("string arithmetic: %v", err)
	}
}

func TestFilterNulls(t *testing.T) {
	f, x, y, yv, b, bv, k := randFrame(t, 5000, 2)
	// (y > 10 or b) and k != "c": Kleene logic, null rows dropped.
	g, err := f.Filter(Col("y").Gt(10).Or(Col("b")).And(Col("k").Ne("c")))
	if err != nil {
		t.Fatal(err)
	}
	var want []float64
	for i := range x {
		// three-valued: 0 false, 1 true, 2 null
		p := 2
		if yv[i] {
			p = b2i(y[i] > 10)
		}
		q := 2
		if bv[i] {
			q = b2i(b[i])
		}
		or := 2
		switch {
		case p == 1 || q == 1:
			or = 1
		case p == 0 && q == 0:
			or = 0
		}
		and := or
		if k[i] == "c" {
			and = 0
		}
		if and == 1 {
			want = append(want, x[i])
		}
	}
	xs, _ := g.Column("x")
	got, _, err := xs.Float64s()
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(want) {
		t.Fatalf("%d rows, want %d", len(got), len(want))
	}
	for i := range got {
		if got[i] != want[i] {
			t.Fatalf("row %d: %v, want %v", i, got[i], want[i])
		}
	}
	ks, _ := g.Column("k")
	if strs, _, _ := ks.Strings(); len(strs) != len(want) {
		t.Errorf("strings column: %d rows", len(strs))
	}
	if _, err := f.Filter(Col("x").Add(1)); !errors.Is(err, ErrType) {
		t.Errorf("non-boolean filter: %v", err)
	}
}

func TestExprNullFunctions(t *testing.T) {
	f := mustFrame(t, mustSeries(t, "a", []float64{1, math.NaN(), 3, 4}, []bool{true, true, false, true}))
	g, err := f.With("n", Col("a").IsNull())
	if err != nil {
		t.Fatal(err)
	}
	g, err = g.With("f", Col("a").FillNull(0.5))
	if err != nil {
		t.Fatal(err)
	}
	g, err = g.With("c", Lit(2).Lt(Col("a")))
	if err != nil {
		t.Fatal(err)
	}
	// NaN compares false, as in pandas; a null compares null.
	want := "" +
		"     a      n    f      c\n" +
		"0  1.0  False  1.0  False\n" +
		"1  NaN   True  0.5  False\n" +
		"2  NaN   True  0.5   <NA>\n" +
		"3  4.0  False  4.0   True"
	if got := g.String(); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}
