package frame

import (
	"fmt"
	"math"

	"github.com/gocu-dev/gocu/array"
)

// ShardGrouped is a group-by of Shards, made by Shards.GroupBy.
type ShardGrouped struct {
	s         *Shards
	keys      []string
	keepNulls bool
}

// GroupBy groups the rows of every rank by the named key columns, as
// Frame.GroupBy does.
func (s *Shards) GroupBy(keys ...string) *ShardGrouped {
	return &ShardGrouped{s: s, keys: keys}
}

// KeepNulls makes null keys a group of their own, as Grouped.KeepNulls.
func (g *ShardGrouped) KeepNulls() *ShardGrouped {
	c := *g
	c.keepNulls = true
	return &c
}

// partialOps are the aggregations that decompose: each rank reduces its
// rows, and the partial results are combined.
var partialOps = map[string]bool{
	"sum": true, "count": true, "mean": true, "min": true, "max": true,
	"var": true, "std": true, "first": true, "last": true,
}

// Agg computes the aggregations per group, with the results Frame.GroupBy
// gives on the gathered frame. Each group ends up on one rank, the rank
// its keys hash to (see Partition), sorted by key within the rank: sort
// the gathered result to order all groups.
//
// Sum, count, mean, min, max, var, std, first and last reduce each rank's
// rows first and move only the partial results: sums and counts; var and
// std the count, mean and sum of squared deviations of each rank, combined
// as Chan et al. do; first and last each rank's, taken in rank order, the
// order of Gather. NUnique and median move the rows themselves (by
// Partition), then group on each rank. Float sums add in another order
// than on one device, so they may differ in the last bits.
func (g *ShardGrouped) Agg(aggs ...Agg) (*Shards, error) {
	const op = "Agg"
	if len(g.keys) == 0 {
		return nil, errorf(op, ErrValue, "no keys")
	}
	seen := map[string]bool{}
	for _, k := range g.keys {
		seen[k] = true
	}
	partial := true
	for _, a := range aggs {
		name := a.name()
		if seen[name] {
			return nil, errorf(op, ErrColumn, "two result columns named %q: name them with Agg.Named", name)
		}
		seen[name] = true
		if !partialOps[a.Op] {
			partial = false
		}
	}
	if !partial {
		// Move the rows, then group each rank's.
		p, err := g.s.Partition(g.keys...)
		if err != nil {
			return nil, retag(op, err)
		}
		return p.each(op, func(f *Frame) (*Frame, error) {
			return (&Grouped{f: f, keys: g.keys, keepNulls: g.keepNulls}).Agg(aggs...)
		})
	}
	// Each rank's partial results, in columns named by position.
	var pa []Agg
	dts := make([]array.DType, len(aggs))
	for i, a := range aggs {
		s, err := g.s.parts[0].col(op, a.Col)
		if err != nil {
			return nil, err
		}
		switch a.Op {
		case "sum", "mean", "var", "std":
			if s.kind != Number && s.kind != Timestamp {
				return nil, errorf(op, ErrType, "%s of %v column %q", a.Op, s.kind, s.name)
			}
		}
		dts[i] = s.DType()
		name := func(what string) string { return fmt.Sprintf("\x00%d%s", i, what) }
		wide := a.Col
		if dts[i].IsFloating() && dts[i] != array.Float64 {
			wide = "\x00w" + a.Col // see widenSums
		}
		switch a.Op {
		case "sum":
			pa = append(pa, Agg{Col: wide, Op: "sum", As: name("")})
		case "mean":
			pa = append(pa, Agg{Col: wide, Op: "sum", As: name("")}, Agg{Col: a.Col, Op: "count", As: name("n")})
		case "var", "std":
			pa = append(pa, Agg{Col: a.Col, Op: "count", As: name("n")}, Agg{Col: a.Col, Op: "mean", As: name("m")}, Agg{Col: a.Col, Op: "var", As: name("")})
		default:
			pa = append(pa, Agg{Col: a.Col, Op: a.Op, As: name("")})
		}
	}
	parts, err := g.s.each(op, func(f *Frame) (*Frame, error) {
		f, err := widenSums(op, f, aggs)
		if err != nil {
			return nil, err
		}
		return (&Grouped{f: f, keys: g.keys, keepNulls: g.keepNulls}).Agg(pa...)
	})
	if err != nil {
		return nil, err
	}
	moved, err := parts.Partition(g.keys...)
	if err != nil {
		return nil, retag(op, err)
	}
	return moved.each(op, func(f *Frame) (*Frame, error) {
		return combine(op, f, g.keys, g.keepNulls, aggs, dts)
	})
}

// widenSums adds the float columns that are summed, or averaged, as
// float64 (named "\x00w" and the name), so that partial sums keep
// float64's precision as one device's do.
func widenSums(op string, f *Frame, aggs []Agg) (*Frame, error) {
	for _, a := range aggs {
		if a.Op != "sum" && a.Op != "mean" {
			continue
		}
		s, err := f.col(op, a.Col)
		if err != nil {
			return nil, err
		}
		if s.kind == Number && s.data.DType().IsFloating() && s.data.DType() != array.Float64 && f.index("\x00w"+a.Col) < 0 {
			c := *s
			c.name, c.codes = "\x00w"+a.Col, &codesCache{}
			c.data = s.data.AsType(array.Float64)
			if f, err = f.WithColumn(&c); err != nil {
				return nil, err
			}
		}
	}
	return f, nil
}

// combine reduces the partial results f (every rank's for the groups of
// this rank) per group into the aggregations asked for.
// dts[i] is the dtype of aggs[i]'s column.
func combine(op string, f *Frame, keys []string, keepNulls bool, aggs []Agg, dts []array.DType) (*Frame, error) {
	gr, err := group(op, f, keys, keepNulls)
	if err != nil {
		return nil, err
	}
	out := make([]*Series, 0, len(keys)+len(aggs))
	for _, k := range keys {
		s, _ := gr.f.col(op, k)
		t, err := s.take(gr.first, nil)
		if err != nil {
			return nil, err
		}
		out = append(out, t)
	}
	col := func(i int, what string) *Series {
		s, _ := gr.f.col(op, fmt.Sprintf("\x00%d%s", i, what))
		return s
	}
	for i, a := range aggs {
		name := a.name()
		var r *Series
		switch a.Op {
		case "sum", "count":
			if r, err = gr.agg(op, Agg{Op: "sum"}, col(i, "")); err != nil {
				return nil, err
			}
			if a.Op == "sum" && dts[i] == array.Float32 {
				r.data = r.data.AsType(array.Float32) // summed in float64, as on one device
			}
		case "mean":
			sum := gr.sum(col(i, "").data, nil, col(i, "").data.DType())
			n := gr.sum(col(i, "n").data, nil, array.Int64)
			r = &Series{kind: Number, n: gr.n, dev: gr.f.dev}
			r.data = sum.AsType(array.Float64).Div(n)
			r.valid = n.Gt(0)
		case "var", "std":
			r = combineVar(gr, col(i, "n"), col(i, "m"), col(i, ""), a.Op == "std")
		default: // min, max, first, last
			if r, err = gr.agg(op, Agg{Op: a.Op}, col(i, "")); err != nil {
				return nil, err
			}
		}
		if r.data != nil {
			if err := r.data.Err(); err != nil {
				return nil, wrapErr(op, ErrValue, err, "%s of %q", a.Op, a.Col)
			}
		}
		r.codes = &codesCache{}
		out = append(out, r.Rename(name))
	}
	return New(f.dev, out...)
}

// combineVar merges each rank's count n, mean m and variance v (null
// below two values) of a group: the mean of all is the weighted mean, and
// the squared deviations add those of each rank and n(m-mean)² (Chan,
// Golub and LeVeque).
func combineVar(gr *groups, n, m, v *Series, std bool) *Series {
	cnt := n.data
	has := cnt.Gt(0)
	mean := array.Where(has, m.data, 0.0)
	m2 := v.data.Mul(cnt.Sub(1))
	if v.valid != nil {
		m2 = array.Where(v.valid, m2, 0.0)
	}
	total := gr.sum(cnt, nil, array.Int64)
	mu := gr.sum(mean.Mul(cnt), nil, array.Float64).Div(total)
	d := mean.Sub(mu.Take(gr.id, 0))
	ss := gr.sum(array.Where(has, m2.Add(d.Mul(d).Mul(cnt)), 0.0), nil, array.Float64)
	r := &Series{kind: Number, n: gr.n, dev: gr.f.dev}
	r.valid = total.Gt(1)
	x := ss.Div(total.Sub(1))
	if std {
		x = x.Sqrt()
	}
	r.data = array.Where(r.valid, x, math.NaN())
	return r
}

// each runs fn on every rank's frame and returns the results as Shards.
func (s *Shards) each(op string, fn func(*Frame) (*Frame, error)) (*Shards, error) {
	out := &Shards{comm: s.comm, parts: make([]*Frame, len(s.parts))}
	err := ranks(len(s.parts), func(r int) error {
		var err error
		out.parts[r], err = fn(s.parts[r])
		return err
	})
	if err != nil {
		return nil, retag(op, err)
	}
	return out, nil
}

// Join joins s (left) and r (right), two Shards of one Comm, on the key
// columns named on, with the rows Frame.Join gives on the gathered frames.
// Both sides are partitioned by the keys (see Partition), so that matching
// rows meet on one rank, then joined rank by rank: a rank's result has
// its rows in the order Frame.Join gives for that rank's rows (for outer
// joins, sorted by key within the rank), rank 0's first. Sort the
// gathered result to compare it with a join on one device.
func (s *Shards) Join(r *Shards, how How, on ...string) (*Shards, error) {
	const op = "Join"
	if r == nil {
		return nil, errorf(op, ErrValue, "nil right side")
	}
	if r.comm != s.comm {
		return nil, errorf(op, ErrValue, "the sides are on two communicators, %v and %v", s.comm, r.comm)
	}
	if err := checkJoin(op, how, on); err != nil {
		return nil, err
	}
	float, err := floatKeys(op, s.parts[0], r.parts[0], on)
	if err != nil {
		return nil, err
	}
	for _, k := range on {
		a, _ := s.parts[0].col(op, k)
		b, _ := r.parts[0].col(op, k)
		if (a.kind == String || a.kind == Categorical) != (b.kind == String || b.kind == Categorical) {
			return nil, errorf(op, ErrType, "key %q is %s on the left and %s on the right", k, typeName(a), typeName(b))
		}
	}
	left, err := s.partition(op, on, float)
	if err != nil {
		return nil, err
	}
	right, err := r.partition(op, on, float)
	if err != nil {
		return nil, err
	}
	out := &Shards{comm: s.comm, parts: make([]*Frame, len(s.parts))}
	err = ranks(len(out.parts), func(i int) error {
		var err error
		out.parts[i], err = left.parts[i].Join(right.parts[i], how, on...)
		return err
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}
