package frame

import (
	"github.com/gocu-dev/gocu/array"
)

// How is a join's kind.
type How string

// The kinds of join.
const (
	Inner How = "inner" // rows whose keys match, left order
	Left  How = "left"  // every left row, matched or not, left order
	Outer How = "outer" // every row of both sides, sorted by the keys
	Semi  How = "semi"  // the left rows that have a match, left columns only
	Anti  How = "anti"  // the left rows without a match, left columns only
)

// Join joins f (left) and r (right) on the key columns named on, which
// both frames have. Key dtypes must agree: numbers with numbers (compared
// as float64 when either is a float), timestamps with timestamps, strings
// and categoricals with either. Null keys never match (as SQL and Arrow;
// pandas matches NaN with NaN). The result has the keys once, then the
// other left columns, then the other right columns; names both sides use
// get pandas' suffixes _x and _y. Matches of one left row come in the
// right frame's order. Joins other than outer on integer keys hash the
// smaller side's keys and probe with the other side's (on the CPU only
// keys too wide to index directly); otherwise both sides' keys are ranked
// together. Either way matches are counted per left row and expanded by a
// scan of the counts.
func (f *Frame) Join(r *Frame, how How, on ...string) (*Frame, error) {
	const op = "Join"
	if err := checkJoin(op, how, on); err != nil {
		return nil, err
	}
	if r.dev != f.dev {
		return nil, errorf(op, ErrValue, "frames on %v and %v", f.dev, r.dev)
	}
	nl, nr := f.n, r.n
	var lc, rc *array.Array
	var ncodes int
	var err error
	hashed, unique := false, false
	if how != Outer && useHash(f.dev) {
		if lc, rc, ncodes, unique, hashed, err = hashJoin(op, f, r, on, hashNarrow(f.dev)); err != nil {
			return nil, err
		}
	}
	if !hashed {
		if lc, rc, ncodes, err = joinCodes(op, f, r, on); err != nil {
			return nil, err
		}
	}
	m := array.On(f.dev)
	size := ncodes + 2
	rcount := m.Zeros(array.Int64, size).IndexAdd(0, rc, int64(1))
	matches := rcount.Take(lc, 0) // per left row
	if how == Semi || how == Anti {
		keep := matches.Gt(0)
		if how == Anti {
			keep = keep.LogicalNot()
		}
		return f.Take(keep.FlatNonzero())
	}
	// When no left row has two matches (a foreign key: the right keys are
	// distinct) each output row is one left row: no expansion.
	most := int64(0)
	if nl > 0 {
		if most, err = array.ItemOf[int64](matches.Max()); err != nil {
			return nil, wrapErr(op, ErrValue, err, "counting matches")
		}
	}
	var li, offset *array.Array // nil li: every left row once, in order
	total := nl
	switch {
	case most <= 1 && how == Inner:
		li = matches.Gt(0).FlatNonzero()
		total = li.Size()
		if total == nl {
			li = nil // every left row matched
		}
		offset = m.Zeros(array.Int64, total)
	case most <= 1:
		offset = m.Zeros(array.Int64, nl)
	default:
		mm := matches
		if how != Inner {
			mm = matches.Maximum(int64(1))
		}
		cum := mm.Cumsum(0)
		t, err := array.ItemOf[int64](cum.Slice(array.Idx(nl - 1)))
		if err != nil {
			return nil, wrapErr(op, ErrValue, err, "counting matches")
		}
		total = int(t)
		j := m.Arange(array.Int64, 0, float64(total))
		li = array.SearchSorted(cum, j, true)
		offset = j.Sub(cum.Take(li, 0).Sub(mm.Take(li, 0)))
	}
	at := func(a *array.Array) *array.Array { // a's value at each output row
		if li == nil {
			return a
		}
		return a.Take(li, 0)
	}
	code := at(lc)
	matched := at(matches).Gt(0)
	var ri *array.Array
	if unique {
		// Each code has at most one right row: look it up, no sort.
		rowOf := m.Zeros(array.Int64, size).IndexAdd(0, rc, m.Arange(array.Int64, 0, float64(nr)))
		ri = array.Where(matched, rowOf.Take(code, 0), 0)
	} else {
		rorder := rc.Argsort(0)
		rstart := rcount.Cumsum(0).Sub(rcount)
		ri = array.Where(matched, rstart.Take(code, 0).Add(offset), 0)
		if nr > 0 {
			ri = rorder.Take(ri, 0)
		}
	}
	var noMatch *array.Array
	if how != Inner {
		noMatch = matched.LogicalNot()
	}
	if err := ri.Err(); err != nil {
		return nil, wrapErr(op, ErrValue, err, "matching")
	}
	left := f
	if li != nil {
		if left, err = f.Take(li); err != nil {
			return nil, err
		}
	}
	var right *Frame
	if nr > 0 {
		if right, err = r.takeNull(ri, noMatch); err != nil {
			return nil, err
		}
	} else {
		right = nullFrame(r, total)
	}
	out, err := joinColumns(op, left, right, on)
	if err != nil || how != Outer {
		return out, err
	}
	// Outer: append the right rows no left row matched, then sort by key.
	lcount := m.Zeros(array.Int64, size).IndexAdd(0, lc, int64(1))
	ur := lcount.Take(rc, 0).Eq(0).LogicalAnd(rc.Lt(int64(ncodes))).FlatNonzero()
	urNull := rc.Eq(int64(ncodes + 1)).FlatNonzero() // right rows with null keys
	ur = array.Concat(0, ur, urNull)
	nu := ur.Size()
	if nu == 0 {
		return sortByCode(out, code)
	}
	rightOnly, err := r.Take(ur)
	if err != nil {
		return nil, err
	}
	var leftNull *Frame
	if nl > 0 {
		leftNull, err = f.takeNull(m.Zeros(array.Int64, nu), m.Full(array.Bool, true, nu))
		if err != nil {
			return nil, err
		}
	} else {
		leftNull = nullFrame(f, nu)
	}
	for _, k := range on { // the key comes from the right
		s, _ := rightOnly.col(op, k)
		i := leftNull.index(k)
		leftNull.cols[i] = s
	}
	extra, err := joinColumns(op, leftNull, rightOnly, on)
	if err != nil {
		return nil, err
	}
	all, err := Concat(out, extra)
	if err != nil {
		return nil, err
	}
	return sortByCode(all, array.Concat(0, code, rc.Take(ur, 0)))
}

// sortByCode orders the rows by their key code, stably.
func sortByCode(f *Frame, code *array.Array) (*Frame, error) {
	return f.Take(code.Argsort(0))
}

// nullFrame returns a frame of f's columns with n rows, all null.
func nullFrame(f *Frame, n int) *Frame {
	g := &Frame{dev: f.dev, n: n, cols: make([]*Series, len(f.cols))}
	m := array.On(f.dev)
	for i, c := range f.cols {
		s := &Series{name: c.name, kind: c.kind, n: n, dev: f.dev, dict: c.dict, valid: m.Full(array.Bool, false, n)}
		if c.kind == String {
			s.offs = make([]int64, n+1)
		} else {
			s.data = m.Zeros(c.data.DType(), n)
		}
		g.cols[i] = s
	}
	return g
}

// joinColumns puts the keys, the other left and the other right columns
// side by side, suffixing names both sides use.
func joinColumns(op string, left, right *Frame, on []string) (*Frame, error) {
	isKey := map[string]bool{}
	for _, k := range on {
		isKey[k] = true
	}
	var cols []*Series
	for _, k := range on {
		s, _ := left.col(op, k)
		cols = append(cols, s)
	}
	leftNames := map[string]bool{}
	for _, c := range left.cols {
		leftNames[c.name] = true
	}
	rightNames := map[string]bool{}
	for _, c := range right.cols {
		rightNames[c.name] = true
	}
	for _, c := range left.cols {
		if isKey[c.name] {
			continue
		}
		if rightNames[c.name] {
			c = c.Rename(c.name + "_x")
		}
		cols = append(cols, c)
	}
	for _, c := range right.cols {
		if isKey[c.name] {
			continue
		}
		if leftNames[c.name] {
			c = c.Rename(c.name + "_y")
		}
		cols = append(cols, c)
	}
	return New(left.dev, cols...)
}

// joinCodes ranks both sides' keys together: equal keys get equal codes
// in [0, n); left rows with a null key get n, right rows n+1.
func joinCodes(op string, f, r *Frame, on []string) (lc, rc *array.Array, n int, err error) {
	var lnull, rnull *array.Array
	or := func(a, b *array.Array) *array.Array {
		if a == nil {
			return b
		}
		if b == nil {
			return a
		}
		return a.LogicalOr(b)
	}
	keys := make([]*array.Array, len(on))
	for i, k := range on {
		ls, err := f.col(op, k)
		if err != nil {
			return nil, nil, 0, err
		}
		rs, err := r.col(op+" (right frame)", k)
		if err != nil {
			return nil, nil, 0, err
		}
		la, ra, err := keyPair(op, ls, rs)
		if err != nil {
			return nil, nil, 0, err
		}
		_, ln, err := keyArray(op, ls)
		if err != nil {
			return nil, nil, 0, err
		}
		_, rn, err := keyArray(op, rs)
		if err != nil {
			return nil, nil, 0, err
		}
		lnull, rnull = or(lnull, ln), or(rnull, rn)
		keys[i] = array.Concat(0, la, ra)
	}
	id, n, err := combineCodes(keys, f.n+r.n)
	if err != nil {
		return nil, nil, 0, wrapErr(op, ErrValue, err, "keys")
	}
	lc = id.Slice(array.S(0, f.n))
	rc = id.Slice(array.S(f.n, f.n+r.n))
	if lnull != nil {
		lc = array.Where(lnull, int64(n), lc)
	}
	if rnull != nil {
		rc = array.Where(rnull, int64(n+1), rc)
	}
	return lc, rc, n, nil
}

// keyPair returns two key columns as arrays of one dtype that compare as
// the keys do.
func keyPair(op string, l, r *Series) (*array.Array, *array.Array, error) {
	lstr := l.kind == String || l.kind == Categorical
	rstr := r.kind == String || r.kind == Categorical
	switch {
	case lstr && rstr:
		return commonCodes(l, r)
	case lstr != rstr || l.kind != r.kind:
		return nil, nil, errorf(op, ErrType, "key %q is %s on the left and %s on the right", l.name, typeName(l), typeName(r))
	}
	la, ra := l.data, r.data
	if la.DType().IsFloating() || ra.DType().IsFloating() {
		return la.AsType(array.Float64), ra.AsType(array.Float64), nil
	}
	return la.AsType(array.Int64), ra.AsType(array.Int64), nil
}

func typeName(s *Series) string {
	if s.kind == Number {
		return s.data.DType().String()
	}
	return s.kind.String()
}

// Concat stacks frames with the same column names and kinds vertically.
// Numbers of different dtypes promote as array.Concat does;
// categoricals with different dictionaries are re-encoded.
func Concat(frames ...*Frame) (*Frame, error) {
	const op = "Concat"
	if len(frames) == 0 {
		return nil, errorf(op, ErrValue, "no frames")
	}
	first := frames[0]
	cols := make([]*Series, len(first.cols))
	for i, c := range first.cols {
		parts := []*Series{c}
		for _, g := range frames[1:] {
			if g.dev != first.dev {
				return nil, errorf(op, ErrValue, "frames on %v and %v", first.dev, g.dev)
			}
			s, err := g.col(op, c.name)
			if err != nil {
				return nil, err
			}
			parts = append(parts, s)
		}
		s, err := concatSeries(op, parts)
		if err != nil {
			return nil, err
		}
		cols[i] = s
	}
	for _, g := range frames[1:] {
		if len(g.cols) != len(first.cols) {
			return nil, errorf(op, ErrColumn, "frames of %d and %d columns", len(first.cols), len(g.cols))
		}
	}
	return New(first.dev, cols...)
}

func concatSeries(op string, parts []*Series) (*Series, error) {
	c0 := parts[0]
	out := &Series{name: c0.name, kind: c0.kind, dev: c0.dev}
	anyNull := false
	for _, p := range parts {
		same := p.kind == c0.kind || (p.kind == String || p.kind == Categorical) == (c0.kind == String || c0.kind == Categorical)
		if !same {
			return nil, errorf(op, ErrType, "column %q is %s and %s", c0.name, typeName(c0), typeName(p))
		}
		out.n += p.n
		anyNull = anyNull || p.valid != nil
	}
	switch {
	case c0.kind == String || c0.kind == Categorical:
		var all []string
		var valid []bool
		for _, p := range parts {
			s, v, err := p.Strings()
			if err != nil {
				return nil, err
			}
			all, valid = append(all, s...), append(valid, v...)
		}
		if !anyNull {
			valid = nil
		}
		if c0.kind == Categorical {
			s, err := NewCategorical(c0.dev, c0.name, all, valid)
			return s, err
		}
		return NewSeriesValid(c0.dev, c0.name, all, valid)
	}
	arrs := make([]*array.Array, len(parts))
	for i, p := range parts {
		arrs[i] = p.data
	}
	out.data = array.Concat(0, arrs...)
	if anyNull {
		vs := make([]*array.Array, len(parts))
		for i, p := range parts {
			vs[i] = p.valid
			if vs[i] == nil {
				vs[i] = array.On(p.dev).Full(array.Bool, true, p.n)
			}
		}
		out.valid = array.Concat(0, vs...)
	}
	if err := out.data.Err(); err != nil {
		return nil, wrapErr(op, ErrType, err, "column %q", c0.name)
	}
	return out, nil
}

// checkJoin checks a join's kind and that it has keys.
func checkJoin(op string, how How, on []string) error {
	switch how {
	case Inner, Left, Outer, Semi, Anti:
	default:
		return errorf(op, ErrValue, "unknown join %q (inner, left, outer, semi, anti)", how)
	}
	if len(on) == 0 {
		return errorf(op, ErrValue, "no key columns")
	}
	return nil
}
