package frame

import (
	"math"

	"github.com/gocu-dev/gocu/array"
)

// ValueCounts counts the rows of each distinct value of the named
// columns (all columns when none are named), as pandas' value_counts: the
// result has the columns and "count", most frequent first, ties in the
// values' order; rows with a null are not counted.
func (f *Frame) ValueCounts(names ...string) (*Frame, error) {
	const op = "ValueCounts"
	if len(names) == 0 {
		names = f.Names()
	}
	gr, err := group(op, f, names, false)
	if err != nil {
		return nil, err
	}
	cols := make([]*Series, 0, len(names)+1)
	for _, k := range names {
		s, _ := gr.f.col(op, k)
		t, err := s.take(gr.first, nil)
		if err != nil {
			return nil, err
		}
		cols = append(cols, t)
	}
	counts, err := FromArray("count", gr.count(nil), nil)
	if err != nil {
		return nil, err
	}
	g, err := New(f.dev, append(cols, counts)...)
	if err != nil {
		return nil, retag(op, err)
	}
	return g.Sort(Desc("count"))
}

// DropDuplicates keeps the first row of each distinct combination of the
// named columns (all columns when none are named), in the rows' order.
// Nulls equal each other here, as in pandas.
func (f *Frame) DropDuplicates(names ...string) (*Frame, error) {
	const op = "DropDuplicates"
	if len(names) == 0 {
		names = f.Names()
	}
	gr, err := group(op, f, names, true)
	if err != nil {
		return nil, err
	}
	return f.Take(gr.first.Sort(0))
}

// Describe summarises the number columns as pandas' describe: count,
// mean, std, min, the quartiles and max of the values present, one
// column per described column, the statistic's name in "stat".
func (f *Frame) Describe() (*Frame, error) {
	const op = "Describe"
	stats := []string{"count", "mean", "std", "min", "25%", "50%", "75%", "max"}
	names, err := NewSeries(f.dev, "stat", stats)
	if err != nil {
		return nil, err
	}
	cols := []*Series{names}
	for _, s := range f.cols {
		if s.kind != Number || s.data.DType() == array.Bool {
			continue
		}
		x := s.data.AsType(array.Float64)
		if ok := present(s); ok != nil {
			x = x.Mask(ok)
		}
		n := x.Size()
		vals := make([]float64, len(stats))
		vals[0] = float64(n)
		for i := 1; i < len(vals); i++ {
			vals[i] = math.NaN()
		}
		if n > 0 {
			q := func(a *array.Array) float64 {
				v, e := a.Item()
				if e != nil && err == nil {
					err = e
				}
				return v
			}
			vals[1], vals[3], vals[7] = q(x.Mean()), q(x.Min()), q(x.Max())
			if n > 1 {
				vals[2] = q(x.Std(1))
			}
			vals[4], vals[5], vals[6] = q(x.Quantile(0.25)), q(x.Quantile(0.5)), q(x.Quantile(0.75))
			if err != nil {
				return nil, wrapErr(op, ErrValue, err, "column %q", s.name)
			}
		}
		c, err := NewSeries(f.dev, s.name, vals)
		if err != nil {
			return nil, err
		}
		cols = append(cols, c)
	}
	return New(f.dev, cols...)
}
