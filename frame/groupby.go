package frame

import (
	"math"

	"github.com/gocu-dev/gocu/array"
)

// Agg is one aggregation of a group-by: an operation on a column, named As
// in the result (the column's name when As is empty).
type Agg struct {
	Col string
	Op  string // sum, mean, count, min, max, var, std, first, last, nunique, median
	As  string
}

// Named returns a with the result column named name.
func (a Agg) Named(name string) Agg { a.As = name; return a }

// name is a's result column: As, or the column's name.
func (a Agg) name() string {
	if a.As != "" {
		return a.As
	}
	return a.Col
}

// Sum adds a column's values per group; a group without values sums to 0
// (pandas' min_count=0).
func Sum(col string) Agg { return Agg{Col: col, Op: "sum"} }

// Mean is the mean of the values present, as float64.
func Mean(col string) Agg { return Agg{Col: col, Op: "mean"} }

// Count counts the values present (not null, not NaN), as int64.
func Count(col string) Agg { return Agg{Col: col, Op: "count"} }

// Min is the smallest value present.
func Min(col string) Agg { return Agg{Col: col, Op: "min"} }

// Max is the largest value present.
func Max(col string) Agg { return Agg{Col: col, Op: "max"} }

// Var is the sample variance (ddof 1, as pandas), as float64.
func Var(col string) Agg { return Agg{Col: col, Op: "var"} }

// Std is the sample standard deviation (ddof 1), as float64.
func Std(col string) Agg { return Agg{Col: col, Op: "std"} }

// First is the first value present in row order.
func First(col string) Agg { return Agg{Col: col, Op: "first"} }

// Last is the last value present in row order.
func Last(col string) Agg { return Agg{Col: col, Op: "last"} }

// NUnique counts the distinct values present, as int64.
func NUnique(col string) Agg { return Agg{Col: col, Op: "nunique"} }

// Median is the median of the values present, as float64.
func Median(col string) Agg { return Agg{Col: col, Op: "median"} }

// Grouped is a frame grouped by key columns, ready for Agg.
type Grouped struct {
	f         *Frame
	keys      []string
	keepNulls bool
}

// KeepNulls makes null keys a group of their own, sorted last (pandas'
// dropna=False), instead of dropping their rows.
func (g *Grouped) KeepNulls() *Grouped {
	c := *g
	c.keepNulls = true
	return &c
}

// GroupBy groups the rows by the named key columns (numbers, booleans,
// timestamps, strings or categoricals). Rows with a null key are dropped
// (pandas' dropna=True); the groups come out sorted by their keys.
func (f *Frame) GroupBy(keys ...string) *Grouped { return &Grouped{f: f, keys: keys} }

// groups is the grouping of the rows.
type groups struct {
	f     *Frame       // the frame without rows of null keys
	id    *array.Array // int64 group of each row of f
	first *array.Array // int64 first row of each group
	sizes *array.Array // int64 rows of each group
	n     int          // number of groups
	key   gkey         // id as the group kernels read it
}

// group gives each row of f its group: the keys' values are ranked by
// UniqueAll, key by key, the ranks combined and ranked again.
func group(op string, f *Frame, keys []string, keepNulls bool) (*groups, error) {
	if len(keys) == 0 {
		return nil, errorf(op, ErrValue, "no keys")
	}
	cols := make([]*Series, len(keys))
	var drop *array.Array
	for i, k := range keys {
		s, err := f.col(op, k)
		if err != nil {
			return nil, err
		}
		cols[i] = s
	}
	var arrs []*array.Array
	for _, s := range cols {
		a, null, err := keyArray(op, s)
		if err != nil {
			return nil, err
		}
		if keepNulls && null != nil {
			arrs = append(arrs, null) // nulls after the values
			null = nil
		}
		arrs = append(arrs, a)
		if null != nil {
			if drop == nil {
				drop = null
			} else {
				drop = drop.LogicalOr(null)
			}
		}
	}
	if drop != nil {
		rows := drop.LogicalNot().FlatNonzero()
		var err error
		if f, err = f.Take(rows); err != nil {
			return nil, err
		}
		for i := range arrs {
			arrs[i] = arrs[i].Take(rows, 0)
		}
	}
	g := &groups{f: f}
	n := f.n
	id, size, gk, err := combineKeys(arrs, n)
	if err != nil {
		return nil, wrapErr(op, ErrValue, err, "keys")
	}
	m := array.On(f.dev)
	if size == 0 {
		g.id, g.first, g.sizes = m.Zeros(array.Int64, 0), m.Zeros(array.Int64, 0), m.Zeros(array.Int64, 0)
		return g, nil
	}
	// Compact the code space to the codes present.
	counts := countGroups(id, gk, nil, size)
	present := counts.Gt(0)
	rank := present.AsType(array.Int64).Cumsum(0)
	groups, err := array.ItemOf[int64](rank.Slice(array.Idx(size - 1)))
	if err != nil {
		return nil, wrapErr(op, ErrValue, err, "keys")
	}
	first := firstRows(id, gk, size)
	g.n = int(groups)
	if g.n == size { // every code present: the codes are the groups
		g.id, g.first, g.sizes, g.key = id, first, counts, gk
		return g, id.Err()
	}
	g.first = first.Mask(present)
	g.sizes = counts.Mask(present)
	g.id = rank.Sub(1).Take(id, 0)
	g.key = codeKey(g.id)
	if err := g.id.Err(); err != nil {
		return nil, wrapErr(op, ErrValue, err, "keys")
	}
	return g, nil
}

// Agg computes the aggregations per group. The result has the key
// columns, then one column per aggregation.
func (g *Grouped) Agg(aggs ...Agg) (*Frame, error) {
	const op = "Agg"
	if out, ok, err := g.hostAgg(op, aggs); ok || err != nil {
		return out, err
	}
	return g.agg(op, aggs)
}

// agg is Agg by array operations, on any device.
func (g *Grouped) agg(op string, aggs []Agg) (*Frame, error) {
	gr, err := group(op, g.f, g.keys, g.keepNulls)
	if err != nil {
		return nil, err
	}
	out := make([]*Series, 0, len(g.keys)+len(aggs))
	for _, k := range g.keys {
		s, _ := gr.f.col(op, k)
		t, err := s.take(gr.first, nil)
		if err != nil {
			return nil, err
		}
		out = append(out, t)
	}
	seen := map[string]bool{}
	for _, k := range g.keys {
		seen[k] = true
	}
	for _, a := range aggs {
		name := a.name()
		if seen[name] {
			return nil, errorf(op, ErrColumn, "two result columns named %q: name them with Agg.Named", name)
		}
		seen[name] = true
		s, err := gr.f.col(op, a.Col)
		if err != nil {
			return nil, err
		}
		r, err := gr.agg(op, a, s)
		if err != nil {
			return nil, err
		}
		out = append(out, r.Rename(name))
	}
	return New(g.f.dev, out...)
}

// present is the Bool array of rows whose value is present (not null and
// not NaN), or nil when all are.
func present(s *Series) *array.Array {
	ok := s.valid
	if s.data != nil && s.data.DType().IsFloating() {
		notNaN := s.data.IsNaN().LogicalNot()
		if ok == nil {
			return notNaN
		}
		return ok.LogicalAnd(notNaN)
	}
	return ok
}

func (gr *groups) zeros(dt array.DType) *array.Array {
	return array.On(gr.f.dev).Zeros(dt, gr.n)
}

// count returns the number of present values per group.
func (gr *groups) count(ok *array.Array) *array.Array {
	if ok == nil {
		return gr.sizes
	}
	return countGroups(gr.id, gr.key, ok, gr.n)
}

// masked replaces absent values with fill.
func masked(x, ok *array.Array, fill any) *array.Array {
	if ok == nil {
		return x
	}
	return array.Where(ok, x, fill)
}

func (gr *groups) agg(op string, a Agg, s *Series) (*Series, error) {
	ok := present(s)
	numeric := s.kind == Number || s.kind == Timestamp
	str := s.kind == String || s.kind == Categorical
	res := &Series{kind: Number, n: gr.n, dev: gr.f.dev}
	var x *array.Array
	if numeric {
		x = s.data
	}
	cnt := func() *array.Array { return gr.count(ok) }
	emptyNull := func(c *array.Array) {
		if ok != nil {
			res.valid = c.Gt(0)
		}
	}
	switch a.Op {
	case "count":
		res.data = cnt()
	case "sum", "mean", "var", "std":
		if !numeric {
			return nil, errorf(op, ErrType, "%s of %v column %q", a.Op, s.kind, s.name)
		}
		acc := array.Float64
		if !x.DType().IsFloating() {
			acc = array.Int64
		}
		sum := gr.sum(x, ok, acc)
		if a.Op == "sum" {
			res.data = sum
			if x.DType() == array.Float32 {
				res.data = sum.AsType(array.Float32)
			}
			break
		}
		c := cnt()
		mean := sum.AsType(array.Float64).Div(c)
		if a.Op == "mean" {
			res.data = mean
			res.valid = c.Gt(0)
			break
		}
		d := x.AsType(array.Float64).Sub(mean.Take(gr.id, 0))
		ss := gr.sum(d.Mul(d), ok, array.Float64)
		v := ss.Div(c.Sub(1))
		res.valid = c.Gt(1)
		if a.Op == "std" {
			v = v.Sqrt()
		}
		res.data = array.Where(res.valid, v, math.NaN())
	case "min", "max":
		if numeric {
			if e := gr.extreme(x, ok, a.Op == "max"); e != nil {
				res.data, res.kind = e, s.kind
				emptyNull(cnt())
				if res.valid != nil {
					res.data = array.Where(res.valid, res.data, zeroOf(res.data.DType()))
				}
				break
			}
		}
		var k *array.Array
		switch {
		case str:
			c, err := s.sortedCodes()
			if err != nil {
				return nil, err
			}
			k = c.data.AsType(array.Int64)
			res.kind, res.dict = Categorical, c.dict
		case x.DType() == array.Float32 || x.DType() == array.Float64 || x.DType() == array.Int64:
			k = x
		case x.DType() == array.Int32:
			k = x.AsType(array.Int64) // -MinInt32 does not fit an int32
			if a.Op == "max" {
				k = x
			}
		case x.DType().IsFloating():
			k = x.AsType(array.Float32)
		default:
			k = x.AsType(array.Int64)
		}
		if a.Op == "min" {
			k = k.Neg()
		}
		var low any
		switch k.DType() {
		case array.Int64:
			low = int64(math.MinInt64)
		case array.Int32:
			low = int32(math.MinInt32)
		default:
			low = math.Inf(-1)
		}
		init := array.On(gr.f.dev).Full(k.DType(), low, gr.n)
		m := init.ScatterMax(0, gr.id, masked(k, ok, low))
		if a.Op == "min" {
			m = m.Neg()
		}
		switch {
		case str:
			m = m.AsType(array.Int32)
		case x.DType().IsFloating() || x.DType() != array.Bool:
			m = m.AsType(x.DType())
		default:
			m = m.Gt(0)
		}
		res.data = m
		if numeric {
			res.kind = s.kind
		}
		emptyNull(cnt())
		if res.valid != nil {
			res.data = array.Where(res.valid, res.data, zeroOf(res.data.DType()))
		}
	case "first", "last":
		n := gr.f.n
		pos := array.On(gr.f.dev).Arange(array.Int64, 0, float64(n))
		var p *array.Array
		if a.Op == "last" {
			init := array.On(gr.f.dev).Full(array.Int64, -1, gr.n)
			p = init.ScatterMax(0, gr.id, masked(pos, ok, int64(-1)))
		} else {
			init := array.On(gr.f.dev).Full(array.Int64, -int64(n)-1, gr.n)
			p = init.ScatterMax(0, gr.id, masked(pos.Neg(), ok, -int64(n)-1)).Neg()
		}
		var null *array.Array
		if ok != nil {
			null = p.Lt(0).LogicalOr(p.Ge(n))
			p = array.Where(null, 0, p)
		}
		if n == 0 {
			return s.take(p, nil)
		}
		return s.take(p, null)
	case "nunique":
		var k *array.Array
		if str {
			c, err := s.sortedCodes()
			if err != nil {
				return nil, err
			}
			k = c.data
		} else {
			k = x
		}
		id := gr.id
		if ok != nil {
			k, id = k.Mask(ok), id.Mask(ok)
		}
		res.data = gr.zeros(array.Int64)
		if k.Size() > 0 {
			vals, _, inv, _ := k.UniqueAll()
			nv := int64(vals.Size())
			pairs := id.Mul(nv).Add(inv).Unique()
			res.data = res.data.IndexAdd(0, pairs.FloorDiv(nv), int64(1))
		}
	case "median":
		if !numeric {
			return nil, errorf(op, ErrType, "median of %v column %q", s.kind, s.name)
		}
		v, id := x.AsType(array.Float64), gr.id
		if ok != nil {
			v, id = v.Mask(ok), id.Mask(ok)
		}
		c := gr.zeros(array.Int64).IndexAdd(0, id, int64(1))
		res.valid = c.Gt(0)
		if v.Size() == 0 {
			res.data = array.On(gr.f.dev).Full(array.Float64, math.NaN(), gr.n)
			break
		}
		o := v.Argsort(0)
		o = o.Take(id.Take(o, 0).Argsort(0), 0)
		sorted := v.Take(o, 0)
		start := c.Cumsum(0).Sub(c)
		lo := array.Where(res.valid, start.Add(c.Sub(1).FloorDiv(2)), 0)
		hi := array.Where(res.valid, start.Add(c.FloorDiv(2)), 0)
		med := sorted.Take(lo, 0).Add(sorted.Take(hi, 0)).Div(2)
		res.data = array.Where(res.valid, med, math.NaN())
	default:
		return nil, errorf(op, ErrValue, "unknown aggregation %q (sum, mean, count, min, max, var, std, first, last, nunique, median)", a.Op)
	}
	if err := res.data.Err(); err != nil {
		return nil, wrapErr(op, ErrValue, err, "%s of %q", a.Op, s.name)
	}
	if res.valid != nil {
		if err := res.valid.Err(); err != nil {
			return nil, wrapErr(op, ErrValue, err, "%s of %q", a.Op, s.name)
		}
	}
	return res, nil
}

func zeroOf(dt array.DType) any {
	if dt == array.Bool {
		return false
	}
	return 0
}
