package frame

import (
	"math"

	"github.com/gocu-dev/gocu/array"
)

// Keys become int64 codes that order as the keys do. An integer key whose
// range is small (the db-benchmark's keys, dictionary codes, booleans) is
// its own code less its minimum: a direct index, no sort, which on a GPU
// reduces with atomics. Other integer keys go through a hash table
// (hash.go); the rest are ranked by a sort (UniqueAll).

// codeLimit is the largest code space indexed directly for n rows.
func codeLimit(n int) int { return max(2*n, 1<<16) }

// keyCodes returns a's codes and the size of their space, and lo when
// the codes are a less lo.
func keyCodes(a *array.Array, limit int) (*array.Array, int, int64, bool, error) {
	dt := a.DType()
	if a.Size() > 0 && (dt.IsInt() || dt == array.Bool) {
		lo, hi, err := minMax(a)
		if err != nil {
			return nil, 0, 0, false, err
		}
		if r := uint64(hi - lo); r < uint64(limit) {
			c := a.AsType(array.Int64)
			if lo != 0 {
				c = c.Sub(lo)
			}
			return c, int(r) + 1, lo, true, c.Err()
		}
		if useHash(a.Device()) {
			if c, d, ok, err := hashCodes(a, lo, hi); ok { // int32 keys stay int32
				return c, d, 0, false, err
			}
		}
	}
	vals, _, inv, _ := a.UniqueAll()
	return inv, vals.Size(), 0, false, inv.Err()
}

// recode ranks the codes id in [0, size) among those present.
func recode(id *array.Array, size int) (*array.Array, int, error) {
	if useHash(id.Device()) {
		if c, d, ok, err := hashCodes(id, 0, int64(size)-1); ok {
			return c, d, err
		}
	}
	vals, _, inv, _ := id.UniqueAll()
	return inv, vals.Size(), inv.Err()
}

// combineCodes gives rows equal on every key one code, ordered as the
// keys lexicographically, and the size of the code space.
func combineCodes(keys []*array.Array, n int) (*array.Array, int, error) {
	id, size, _, err := combineKeys(keys, n)
	return id, size, err
}

// combineKeys is combineCodes, also returning the codes as the group
// kernels read them: a single int32 or int64 key of small range in place.
func combineKeys(keys []*array.Array, n int) (*array.Array, int, gkey, error) {
	limit := codeLimit(n)
	var id *array.Array
	var gk gkey
	size := 0
	for _, k := range keys {
		code, r, lo, direct, err := keyCodes(k, limit)
		if err != nil {
			return nil, 0, gk, err
		}
		if id == nil {
			id, size = code, r
			if dt := k.DType(); direct && len(keys) == 1 && (dt == array.Int32 || dt == array.Int64) {
				return id, size, gkey{a: k, lo: lo}, nil
			}
			continue
		}
		if size > 0 && r > math.MaxInt64/4/size {
			if id, size, err = recode(id, size); err != nil {
				return nil, 0, gk, err
			}
		}
		id = id.Mul(int64(r)).Add(code)
		size *= r
		if size > limit {
			if id, size, err = recode(id, size); err != nil {
				return nil, 0, gk, err
			}
		}
		if err := id.Err(); err != nil {
			return nil, 0, gk, err
		}
	}
	return id, size, codeKey(id), nil
}

// minMax returns the smallest and largest of the integers a (not empty),
// read from the device together.
func minMax(a *array.Array) (lo, hi int64, err error) {
	v, err := array.Stack(0, a.Min().AsType(array.Int64), a.Max().AsType(array.Int64)).Int64s()
	if err != nil {
		return 0, 0, err
	}
	return v[0], v[1], nil
}
