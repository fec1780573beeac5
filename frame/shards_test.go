package frame

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gocu-dev/gocu"
	"github.com/gocu-dev/gocu/dist"
)

var hostCPU = gocu.MustOpen("cpu")

// distData is a db-benchmark-like table of n rows on dev: string keys of
// 20 values (id1), int keys of n/8 (id2), categorical keys (id3), float
// keys with NaN (fk), bool keys (bk), and values of several dtypes, with
// nulls in keys and values.
func distData(t testing.TB, dev *gocu.Device, seed uint64, n int) *Frame {
	t.Helper()
	r := rand.New(rand.NewPCG(seed, 7))
	id1, id3 := make([]string, n), make([]string, n)
	id2, v1, ts := make([]int64, n), make([]int64, n), make([]time.Time, n)
	fk, v2 := make([]float64, n), make([]float64, n)
	v3 := make([]float32, n)
	v4 := make([]int32, n)
	bk := make([]bool, n)
	ok1, ok2, okv1, okv2, okv3, okfk := make([]bool, n), make([]bool, n), make([]bool, n), make([]bool, n), make([]bool, n), make([]bool, n)
	for i := range n {
		id1[i] = fmt.Sprintf("id%03d", r.IntN(20))
		id3[i] = fmt.Sprintf("c%d", r.IntN(7))
		id2[i] = int64(r.IntN(max(n/8, 1))) - 5
		fk[i] = float64(r.IntN(9)) / 4
		if fk[i] == 0 && r.IntN(2) == 0 {
			fk[i] = math.Copysign(0, -1)
		}
		if r.IntN(15) == 0 {
			fk[i] = math.NaN()
		}
		bk[i] = r.IntN(3) == 0
		v1[i] = int64(r.IntN(1000)) - 300
		v2[i] = r.NormFloat64() * 100
		if r.IntN(25) == 0 {
			v2[i] = math.NaN()
		}
		v3[i] = float32(r.Float64() * 10)
		v4[i] = int32(r.IntN(50))
		ts[i] = time.Unix(int64(r.IntN(1e6)), 0)
		ok1[i], ok2[i] = r.IntN(20) != 0, r.IntN(20) != 0
		okv1[i], okv2[i], okv3[i], okfk[i] = r.IntN(10) != 0, r.IntN(10) != 0, r.IntN(10) != 0, r.IntN(20) != 0
	}
	col := func(name string, data any, valid []bool) *Series {
		s, err := NewSeriesValid(dev, name, data, valid)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	cat, err := NewCategorical(dev, "id3", id3, nil)
	if err != nil {
		t.Fatal(err)
	}
	f, err := New(dev, col("id1", id1, ok1), col("id2", id2, ok2), cat, col("fk", fk, okfk), col("bk", bk, nil),
		col("v1", v1, okv1), col("v2", v2, okv2), col("v3", v3, okv3), col("v4", v4, nil), col("ts", ts, okv1),
		col("s", id3, okv2))
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func cpuComm(t testing.TB, ranks int) *dist.Comm {
	t.Helper()
	c, err := dist.New(slices.Repeat([]*gocu.Device{hostCPU}, ranks)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// matchFrame compares the columns of got and want (names, kinds, values,
// nulls; NaN as null), floats to a relative tol.
func matchFrame(t *testing.T, what string, got, want *Frame, tol float64) {
	t.Helper()
	if !slices.Equal(got.Names(), want.Names()) {
		t.Fatalf("%s: columns %v, want %v", what, got.Names(), want.Names())
	}
	if got.Len() != want.Len() {
		t.Fatalf("%s: %d rows, want %d", what, got.Len(), want.Len())
	}
	for i, w := range want.cols {
		g := got.cols[i]
		str := w.kind == String || w.kind == Categorical
		if str != (g.kind == String || g.kind == Categorical) || (!str && g.kind != w.kind) || g.DType() != w.DType() && !str {
			t.Fatalf("%s: column %q is %s, want %s", what, w.name, typeName(g), typeName(w))
		}
		if str {
			gs, gv, err := g.Strings()
			if err != nil {
				t.Fatal(err)
			}
			ws, wv, _ := w.Strings()
			for k := range ws {
				if gv[k] != wv[k] || (wv[k] && gs[k] != ws[k]) {
					t.Fatalf("%s: column %q row %d: %q (%v), want %q (%v)", what, w.name, k, gs[k], gv[k], ws[k], wv[k])
				}
			}
			continue
		}
		gf, gv, err := g.Float64s()
		if err != nil {
			t.Fatal(err)
		}
		wf, wv, _ := w.Float64s()
		for k := range wf {
			gp := gv[k] && !math.IsNaN(gf[k])
			wp := wv[k] && !math.IsNaN(wf[k])
			if gp != wp || (wp && math.Abs(gf[k]-wf[k]) > tol*math.Max(1, math.Abs(wf[k]))) {
				t.Fatalf("%s: column %q row %d: %v (present %v), want %v (present %v)", what, w.name, k, gf[k], gp, wf[k], wp)
			}
		}
	}
}

func sortBy(t *testing.T, f *Frame, names ...string) *Frame {
	t.Helper()
	keys := make([]SortKey, len(names))
	for i, n := range names {
		keys[i] = Asc(n)
	}
	g, err := f.Sort(keys...)
	if err != nil {
		t.Fatal(err)
	}
	return g
}

func gather(t *testing.T, s *Shards, err error) *Frame {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
	f, err := s.Gather()
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func TestShardsScatterGather(t *testing.T) {
	f := distData(t, hostCPU, 1, 1000)
	for _, ranks := range []int{1, 2, 3} {
		s, err := Scatter(cpuComm(t, ranks), f)
		if err != nil {
			t.Fatal(err)
		}
		if s.Len() != f.Len() || len(s.Parts()) != ranks {
			t.Fatalf("%d ranks: %d rows in %d parts", ranks, s.Len(), len(s.Parts()))
		}
		matchFrame(t, "gather", gather(t, s, nil), f, 0)
	}
}

// Partition puts every key on one rank and keeps every row, each source's
// rows in order.
func TestShardsPartition(t *testing.T) {
	f := distData(t, hostCPU, 2, 1500)
	for _, ranks := range []int{2, 3} {
		s, err := Scatter(cpuComm(t, ranks), f)
		if err != nil {
			t.Fatal(err)
		}
		for _, keys := range [][]string{{"id1"}, {"id2"}, {"id3"}, {"fk"}, {"id1", "id2"}, {"bk", "v4"}} {
			p, err := s.Partition(keys...)
			if err != nil {
				t.Fatal(err)
			}
			owner := map[string]int{}
			for r, part := range p.Parts() {
				// About 190 distinct int keys spread over every rank.
				if keys[0] == "id2" && len(keys) == 1 && part.Len() < f.Len()/ranks/2 {
					t.Errorf("%d ranks, keys %v: rank %d has %d of %d rows", ranks, keys, r, part.Len(), f.Len())
				}
				cells := make([][]string, len(keys))
				for i, k := range keys {
					c, _ := part.Column(k)
					rows := make([]int, part.Len())
					for j := range rows {
						rows[j] = j
					}
					if cells[i], err = c.cells(rows); err != nil {
						t.Fatal(err)
					}
				}
				for j := range part.Len() {
					key := ""
					for i := range keys {
						key += cells[i][j] + "|"
					}
					if key == "nan|" || strings.Contains(key, "<NA>") {
						key = "null:" + fmt.Sprint(len(keys)) // nulls hash alike, but with the other keys
					}
					if o, ok := owner[key]; ok && o != r && !strings.HasPrefix(key, "null") {
						t.Fatalf("%d ranks, keys %v: key %q on ranks %d and %d", ranks, keys, key, o, r)
					}
					owner[key] = r
				}
			}
			// Every row, each source's in order: sorting by v1, v2 (unique
			// enough with the other columns) gives the input's rows.
			all := []string{"v2", "v1", "v3", "id1", "id2"}
			matchFrame(t, fmt.Sprintf("%d ranks %v", ranks, keys), sortBy(t, gather(t, p, nil), all...), sortBy(t, f, all...), 0)
		}
	}
}

// Group-by on 2 and 3 ranks gives the one-device results.
func TestShardsGroupBy(t *testing.T) {
	f := distData(t, hostCPU, 3, 3000)
	aggs := []Agg{
		Sum("v1").Named("v1_sum"), Sum("v2").Named("v2_sum"), Sum("v3").Named("v3_sum"), Sum("bk").Named("bk_sum"),
		Count("v2").Named("v2_n"), Count("s").Named("s_n"), Mean("v1").Named("v1_mean"), Mean("v3").Named("v3_mean"),
		Min("v2").Named("v2_min"), Max("v1").Named("v1_max"), Min("s").Named("s_min"), Max("ts").Named("ts_max"),
		Min("v3").Named("v3_min"), Max("v4").Named("v4_max"),
		Var("v2").Named("v2_var"), Std("v1").Named("v1_std"), Var("v3").Named("v3_var"),
		First("v2").Named("v2_first"), Last("s").Named("s_last"), First("ts").Named("ts_first"), Last("v1").Named("v1_last"),
	}
	rows := []Agg{NUnique("v1").Named("v1_nu"), Median("v2").Named("v2_med"), First("v2").Named("v2_first"), Sum("v3").Named("v3_sum")}
	for _, ranks := range []int{2, 3} {
		s, err := Scatter(cpuComm(t, ranks), f)
		if err != nil {
			t.Fatal(err)
		}
		for _, keys := range [][]string{{"id1"}, {"id2"}, {"id3"}, {"fk"}, {"bk"}, {"id1", "id2"}, {"id3", "bk"}} {
			for _, keep := range []bool{false, true} {
				for _, as := range [][]Agg{aggs, rows} {
					g, sg := f.GroupBy(keys...), s.GroupBy(keys...)
					if keep {
						g, sg = g.KeepNulls(), sg.KeepNulls()
					}
					want, err := g.Agg(as...)
					if err != nil {
						t.Fatal(err)
					}
					got, err := sg.Agg(as...)
					what := fmt.Sprintf("%d ranks, keys %v, keep nulls %v, %d aggs", ranks, keys, keep, len(as))
					matchFrame(t, what, sortBy(t, gather(t, got, err), keys...), sortBy(t, want, keys...), 1e-6)
				}
			}
		}
	}
}

// joinInputs returns two tables of nl and nr rows with ids lid and rid;
// the right one has float v4 keys against the left's int32, and
// categorical id1 keys against the left's strings.
func joinInputs(t *testing.T, seed uint64, nl, nr int) (l, r *Frame) {
	t.Helper()
	l = distData(t, hostCPU, seed, nl)
	r = distData(t, hostCPU, seed+1, nr)
	lid := make([]int64, l.Len())
	rid := make([]int64, r.Len())
	for i := range lid {
		lid[i] = int64(i)
	}
	for i := range rid {
		rid[i] = int64(i)
	}
	var err error
	if l, err = l.WithColumn(mustSeries(t, "lid", lid, nil).on(hostCPU)); err != nil {
		t.Fatal(err)
	}
	if r, err = r.Select("id1", "id2", "id3", "fk", "v2", "v4", "s"); err != nil {
		t.Fatal(err)
	}
	if r, err = r.WithColumn(mustSeries(t, "rid", rid, nil).on(hostCPU)); err != nil {
		t.Fatal(err)
	}
	v4f, _, err := mustCol(t, r, "v4").Float64s()
	if err != nil {
		t.Fatal(err)
	}
	if r, err = r.WithColumn(mustSeries(t, "v4", v4f, nil).on(hostCPU)); err != nil {
		t.Fatal(err)
	}
	// A categorical id1 on the right against the left's strings.
	ids, ok, err := mustCol(t, r, "id1").Strings()
	if err != nil {
		t.Fatal(err)
	}
	cat, err := NewCategorical(hostCPU, "id1", ids, ok)
	if err != nil {
		t.Fatal(err)
	}
	if r, err = r.WithColumn(cat); err != nil {
		t.Fatal(err)
	}
	return l, r
}

// Joins on 2 and 3 ranks give the one-device rows.
func TestShardsJoin(t *testing.T) {
	l, r := joinInputs(t, 4, 1200, 300)
	for _, ranks := range []int{2, 3} {
		c := cpuComm(t, ranks)
		ls, err := Scatter(c, l)
		if err != nil {
			t.Fatal(err)
		}
		rs, err := Scatter(c, r)
		if err != nil {
			t.Fatal(err)
		}
		for _, on := range [][]string{{"id2"}, {"id1"}, {"id3"}, {"fk"}, {"v4"}, {"id1", "id2"}, {"id1", "id3"}} {
			for _, how := range []How{Inner, Left, Outer, Semi, Anti} {
				want, err := l.Join(r, how, on...)
				if err != nil {
					t.Fatal(err)
				}
				got, err := ls.Join(rs, how, on...)
				order := []string{"lid"}
				if how != Semi && how != Anti {
					order = append(order, "rid")
				}
				what := fmt.Sprintf("%d ranks, %s join on %v", ranks, how, on)
				matchFrame(t, what, sortBy(t, gather(t, got, err), order...), sortBy(t, want, order...), 0)
			}
		}
	}
}

// on moves a test series to dev (mustSeries makes it on testDev).
func (s *Series) on(dev *gocu.Device) *Series {
	f, err := frameTo("test", &Frame{dev: s.dev, n: s.n, cols: []*Series{s}}, dev)
	if err != nil {
		panic(err)
	}
	return f.cols[0]
}

func mustCol(t *testing.T, f *Frame, name string) *Series {
	t.Helper()
	s, err := f.Column(name)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestShardsErrors(t *testing.T) {
	f := distData(t, hostCPU, 6, 100)
	c := cpuComm(t, 2)
	a, b := f.Slice(0, 50), f.Slice(50, 100)
	bad, _ := b.Drop("v4")
	renamed, _ := b.Select("id1", "id2", "id3", "fk", "bk", "v1", "v2", "v3", "ts", "v4", "s")
	v1f, _, _ := mustCol(t, b, "v1").Float64s()
	retyped, _ := b.WithColumn(mustSeries(t, "v1", v1f, nil).on(hostCPU))
	check := func(what string, err error, kind error, says string) {
		t.Helper()
		if err == nil || !errors.Is(err, kind) || !strings.Contains(err.Error(), says) {
			t.Errorf("%s: %v, want %v saying %q", what, err, kind, says)
		}
	}
	_, err := NewShards(c, a, bad)
	check("fewer columns", err, ErrColumn, "has 10 columns")
	_, err = NewShards(c, a, renamed)
	check("other order", err, ErrColumn, `column 8 of frame 1 is "ts", of frame 0 "v4"`)
	_, err = NewShards(c, a, retyped)
	check("other dtype", err, ErrType, `column "v1" is float64 in frame 1`)
	_, err = NewShards(c, a)
	check("one frame", err, ErrValue, "1 frames for 2 ranks")
	_, err = NewShards(nil, a)
	check("nil comm", err, ErrValue, "nil *dist.Comm")
	_, err = NewShards(c, a, nil)
	check("nil frame", err, ErrValue, "frame 1 is nil")
	if sim, err := gocu.Open("sim"); err == nil {
		onSim, err := frameTo("test", b, sim)
		if err != nil {
			t.Fatal(err)
		}
		_, err = NewShards(c, a, onSim)
		check("other device", err, ErrValue, "frame 1 is on sim")
	} else {
		t.Logf("no simulator (%v): the device check is not provoked", err)
	}

	s, err := NewShards(c, a, b)
	if err != nil {
		t.Fatal(err)
	}
	_, err = s.GroupBy("id9").Agg(Sum("v1"))
	check("unknown key", err, ErrColumn, `"id1"`)
	_, err = s.GroupBy("id1").Agg(Sum("v9"))
	check("unknown value", err, ErrColumn, `"v1"`)
	_, err = s.GroupBy("id1").Agg(Sum("s"))
	check("sum of strings", err, ErrType, "sum of string")
	_, err = s.GroupBy("id1").Agg(Mean("s"))
	check("mean of strings", err, ErrType, `mean of string column "s"`)
	_, err = s.GroupBy("id1").Agg(Sum("v1"), Mean("v1"))
	check("two names", err, ErrColumn, "two result columns")
	_, err = s.GroupBy().Agg(Sum("v1"))
	check("no keys", err, ErrValue, "no keys")
	_, err = Scatter(c, nil)
	check("scatter nil", err, ErrValue, "nil frame")
	_, err = s.Partition()
	check("partition without keys", err, ErrValue, "no key columns")
	_, err = s.Join(s, Inner)
	check("join without keys", err, ErrValue, "no key columns")
	_, err = s.Join(nil, Inner, "id1")
	check("join nil", err, ErrValue, "nil right side")
	_, err = s.Partition("nope")
	check("unknown partition key", err, ErrColumn, "nope")
	_, err = s.Join(s, Inner, "nope")
	check("unknown join key", err, ErrColumn, "nope")
	_, err = s.Join(s, "cross", "id1")
	check("unknown join", err, ErrValue, "unknown join")
	r, _ := s.each("test", func(f *Frame) (*Frame, error) {
		g, err := f.Drop("id1")
		if err != nil {
			return nil, err
		}
		v2, _ := f.Column("v2")
		return g.WithColumn(v2.Rename("id1"))
	})
	_, err = s.Join(r, Inner, "id1")
	check("string and number keys", err, ErrType, `key "id1" is string on the left and float64`)
	other, _ := Scatter(cpuComm(t, 2), f)
	_, err = s.Join(other, Inner, "id1")
	check("two comms", err, ErrValue, "two communicators")

	// A communicator of ranks in other processes.
	id, err := dist.NewID(gocu.CPU)
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	comms := make([]*dist.Comm, 2)
	for i := range comms {
		wg.Go(func() {
			var err error
			if comms[i], err = dist.Join(id, 2, i, hostCPU); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	if comms[0] != nil && comms[1] != nil {
		_, err = NewShards(comms[0], a)
		check("remote ranks", err, ErrValue, "every rank in this process")
		wg.Go(func() { comms[1].Close() })
		comms[0].Close()
		wg.Wait()
	}

	// A closed communicator.
	c.Close()
	_, err = s.GroupBy("id1").Agg(Sum("v1"))
	check("closed", err, dist.ErrClosed, "closed")
	_, err = s.Join(s, Inner, "id2")
	check("closed join", err, dist.ErrClosed, "closed")
}
