package frame

import (
	"github.com/gocu-dev/gocu/array"
)

// SortKey names a column to sort by and how.
type SortKey struct {
	Name       string
	Descending bool
	NullsFirst bool // nulls (and NaN) first; by default they come last
}

// Asc sorts by name, smallest first, nulls last.
func Asc(name string) SortKey { return SortKey{Name: name} }

// Desc sorts by name, largest first, nulls last.
func Desc(name string) SortKey { return SortKey{Name: name, Descending: true} }

// keyArray returns a column as an array that sorts as the column does
// (codes in a sorted dictionary for strings, int8 for booleans) and its
// null flags (true where null or NaN), or nil without nulls.
func keyArray(op string, s *Series) (*array.Array, *array.Array, error) {
	var k *array.Array
	switch s.kind {
	case String, Categorical:
		c, err := s.sortedCodes()
		if err != nil {
			return nil, nil, retag(op, err)
		}
		k = c.data
	default:
		k = s.data
		if k.DType() == array.Bool {
			k = k.AsType(array.Int8)
		}
	}
	var null *array.Array
	if s.valid != nil {
		null = s.valid.LogicalNot()
	}
	if k.DType().IsFloating() {
		// -0 + 0 is +0: equal zeros keep their order, as in pandas.
		k = k.Add(0.0)
		nan := k.IsNaN()
		if null != nil {
			null = null.LogicalOr(nan)
		} else {
			null = nan
		}
	}
	if null != nil {
		// A column without a null or NaN spares a pass of every sort.
		anyNull, err := array.ItemOf[bool](null.Any())
		if err != nil {
			return nil, nil, wrapErr(op, ErrValue, err, "column %q", s.name)
		}
		if !anyNull {
			return k, nil, k.Err()
		}
		k = array.Where(null, 0, k) // nulls equal, so they keep their order
	}
	return k, null, k.Err()
}

// Sort returns the rows ordered by the keys, the first key most
// significant, stably: rows with equal keys keep their order (pandas'
// kind="stable"). pandas treats NaN as null, so does Sort.
func (f *Frame) Sort(keys ...SortKey) (*Frame, error) {
	const op = "Sort"
	if len(keys) == 0 {
		return nil, errorf(op, ErrValue, "no sort keys")
	}
	arrs := make([]*array.Array, len(keys))
	nulls := make([]*array.Array, len(keys))
	for i, k := range keys {
		s, err := f.col(op, k.Name)
		if err != nil {
			return nil, err
		}
		if arrs[i], nulls[i], err = keyArray(op, s); err != nil {
			return nil, err
		}
	}
	perm, err := sortPerm(f, arrs, nulls, keys)
	if err != nil {
		return nil, wrapErr(op, ErrValue, err, "sorting")
	}
	return f.Take(perm)
}

// sortPerm returns the permutation that sorts by the key arrays: one
// stable argsort per key, from the last key to the first.
func sortPerm(f *Frame, arrs, nulls []*array.Array, keys []SortKey) (*array.Array, error) {
	var perm *array.Array // nil: the identity
	take := func(a *array.Array) *array.Array {
		if perm == nil {
			return a
		}
		return a.Take(perm, 0)
	}
	apply := func(order *array.Array) {
		if perm == nil {
			perm = order
		} else {
			perm = perm.Take(order, 0)
		}
	}
	for i := len(keys) - 1; i >= 0; i-- {
		k := take(arrs[i])
		if keys[i].Descending {
			_, o := k.SortDescending(0)
			apply(o)
		} else {
			apply(k.Argsort(0))
		}
		if nulls[i] != nil {
			flag := take(nulls[i])
			if keys[i].NullsFirst {
				flag = flag.LogicalNot()
			}
			apply(flag.AsType(array.Int8).Argsort(0))
		}
		if err := perm.Err(); err != nil {
			return nil, err
		}
	}
	if perm == nil {
		perm = array.On(f.dev).Arange(array.Int64, 0, float64(f.n))
	}
	return perm, perm.Err()
}
