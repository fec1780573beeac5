package linalg

import (
	"slices"
	"sort"
	"strings"

	"github.com/gocu-dev/gocu/array"
)

// Einsum evaluates the Einstein summation subscripts over the operands, as
// numpy.einsum: "ij,jk->ik" is a matrix product, "ii->i" a diagonal,
// "ij->" a sum, "...ij,...jk->...ik" a batched product; without "->" the
// output is the labels that appear once, in alphabetical order. Labels are
// ASCII letters; "..." stands for the same broadcast axes in every
// operand. Size-1 axes broadcast against their label's size.
//
// Operands are contracted two at a time, the pair whose result is
// smallest first; each contraction is one batched matrix product (batch
// labels, then the two operands' own labels, with the summed labels as the
// inner dimension), or a broadcast product when nothing is summed. Views
// become transpose flags of the product where possible, not copies.
func Einsum(subscripts string, operands ...*array.Array) *array.Array {
	const op = "Einsum"
	ins, out, err := parseEinsum(op, subscripts, operands)
	if err != nil {
		return array.Failed(err)
	}
	dt := operands[0].DType()
	for _, x := range operands[1:] {
		dt = array.Promote(dt, x.DType())
	}
	terms := make([]term, len(operands))
	for i, x := range operands {
		terms[i] = term{x: promote(x, dt), labels: ins[i]}
	}
	sizes := map[rune]int{}
	for i, t := range terms {
		for j, l := range t.labels {
			d := t.x.Shape()[j]
			if s, ok := sizes[l]; ok && s != d && s != 1 && d != 1 {
				return array.Failed(shapeErr(op, "operand %d has size %d for label %s, another %d", i, d, labelName(l), s))
			}
			if d != 1 || sizes[l] == 0 {
				sizes[l] = max(sizes[l], d)
			}
		}
	}
	for i := range terms {
		terms[i] = terms[i].broadcast(sizes).diagonal()
	}
	// needed reports whether label l is used by the output or by a term
	// other than skip.
	needed := func(l rune, skip ...int) bool {
		if slices.Contains(out, l) {
			return true
		}
		for i, t := range terms {
			if !slices.Contains(skip, i) && slices.Contains(t.labels, l) {
				return true
			}
		}
		return false
	}
	for i := range terms {
		terms[i] = terms[i].sumOut(func(l rune) bool { return needed(l, i) })
	}
	for len(terms) > 1 {
		bi, bj, best := 0, 1, -1
		for i := range terms {
			for j := i + 1; j < len(terms); j++ {
				n := 1
				for _, l := range union(terms[i].labels, terms[j].labels) {
					if needed(l, i, j) {
						n *= sizes[l]
					}
				}
				if best < 0 || n < best {
					bi, bj, best = i, j, n
				}
			}
		}
		c := contract(terms[bi], terms[bj], func(l rune) bool { return needed(l, bi, bj) })
		terms = append(append(append([]term{}, terms[:bi]...), terms[bi+1:bj]...), terms[bj+1:]...)
		terms = append(terms, c)
	}
	t := terms[0].sumOut(func(l rune) bool { return slices.Contains(out, l) })
	perm := make([]int, len(out))
	for i, l := range out {
		perm[i] = slices.Index(t.labels, l)
	}
	if len(perm) < 2 {
		return t.x
	}
	return t.x.Transpose(perm...)
}

// term is an operand with one label per axis.
type term struct {
	x      *array.Array
	labels []rune
}

// broadcast stretches size-1 axes to their label's size (a view).
func (t term) broadcast(sizes map[rune]int) term {
	s := slices.Clone(t.x.Shape())
	change := false
	for i, l := range t.labels {
		if s[i] != sizes[l] {
			s[i], change = sizes[l], true
		}
	}
	if change {
		t.x = t.x.BroadcastTo(s...)
	}
	return t
}

// diagonal takes the diagonal over each label repeated within the term.
func (t term) diagonal() term {
	for {
		i, j := -1, -1
		for a := range t.labels {
			if b := slices.Index(t.labels[a+1:], t.labels[a]); b >= 0 {
				i, j = a, a+1+b
				break
			}
		}
		if i < 0 {
			return t
		}
		n := t.x.Shape()[i]
		dev := array.On(t.x.Device())
		eye := dev.Eye(t.x.DType(), n)
		// Shape the identity to broadcast over axes i and j only.
		s := make([]int, len(t.labels))
		for k := range s {
			s[k] = 1
		}
		s[i], s[j] = n, n
		t.x = t.x.Mul(eye.Reshape(s...)).Sum(j)
		t.labels = slices.Delete(slices.Clone(t.labels), j, j+1)
	}
}

// sumOut sums the axes whose labels keep rejects.
func (t term) sumOut(keep func(rune) bool) term {
	var axes []int
	var labels []rune
	for i, l := range t.labels {
		if keep(l) {
			labels = append(labels, l)
		} else {
			axes = append(axes, i)
		}
	}
	if len(axes) > 0 {
		t.x = t.x.Sum(axes...)
		t.labels = labels
	}
	return t
}

// contract multiplies two terms, summing the labels they share that keep
// rejects; the result's labels are the batch (shared, kept) labels, then
// a's own, then b's own.
func contract(a, b term, keep func(rune) bool) term {
	a = a.sumOut(func(l rune) bool { return keep(l) || slices.Contains(b.labels, l) })
	b = b.sumOut(func(l rune) bool { return keep(l) || slices.Contains(a.labels, l) })
	var batch, left, right, inner []rune
	for _, l := range a.labels {
		switch {
		case !slices.Contains(b.labels, l):
			left = append(left, l)
		case keep(l):
			batch = append(batch, l)
		default:
			inner = append(inner, l)
		}
	}
	for _, l := range b.labels {
		if !slices.Contains(a.labels, l) {
			right = append(right, l)
		}
	}
	size := func(t term, ls []rune) []int {
		s := make([]int, len(ls))
		for i, l := range ls {
			s[i] = t.x.Shape()[slices.Index(t.labels, l)]
		}
		return s
	}
	arrange := func(t term, order ...[]rune) *array.Array {
		var perm []int
		for _, ls := range order {
			for _, l := range ls {
				perm = append(perm, slices.Index(t.labels, l))
			}
		}
		if len(perm) < 2 {
			return t.x
		}
		return t.x.Transpose(perm...)
	}
	bs, ls, rs, is := size(a, batch), size(a, left), size(b, right), size(a, inner)
	nb, nl, nr, ni := prod(bs), prod(ls), prod(rs), prod(is)
	var y *array.Array
	if len(inner) == 0 {
		// Nothing summed: a broadcast product.
		x1 := arrange(a, batch, left).Reshape(nb, nl, 1)
		x2 := arrange(b, batch, right).Reshape(nb, 1, nr)
		y = x1.Mul(x2)
	} else {
		x1 := arrange(a, batch, left, inner).Reshape(nb, nl, ni)
		x2 := arrange(b, batch, inner, right).Reshape(nb, ni, nr)
		y = x1.MatMul(x2)
	}
	shape := concat(concat(bs, ls...), rs...)
	return term{x: y.Reshape(shape...), labels: append(append(append([]rune{}, batch...), left...), right...)}
}

func union(a, b []rune) []rune {
	out := slices.Clone(a)
	for _, l := range b {
		if !slices.Contains(out, l) {
			out = append(out, l)
		}
	}
	return out
}

// Ellipsis axes get labels above the letters, numbered from the right.
const ellipsisBase = 0x10000

func labelName(l rune) string {
	if l >= ellipsisBase {
		return "..."
	}
	return string(l)
}

// parseEinsum returns each operand's labels (ellipses expanded) and the
// output's.
func parseEinsum(op, subs string, xs []*array.Array) (ins [][]rune, out []rune, err error) {
	if len(xs) == 0 {
		return nil, nil, valueErr(op, "no operands")
	}
	for i, x := range xs {
		if x == nil {
			return nil, nil, valueErr(op, "operand %d is nil", i)
		}
		if err := x.Err(); err != nil {
			return nil, nil, err
		}
	}
	subs = strings.ReplaceAll(subs, " ", "")
	lhs, rhs, explicit := strings.Cut(subs, "->")
	parts := strings.Split(lhs, ",")
	if len(parts) != len(xs) {
		return nil, nil, valueErr(op, "%q has %d operand subscripts for %d operands", subs, len(parts), len(xs))
	}
	ell := 0 // axes the ellipsis stands for
	ins = make([][]rune, len(parts))
	for i, p := range parts {
		labels, hasEll, err := parseTerm(op, p)
		if err != nil {
			return nil, nil, err
		}
		nd := xs[i].Ndim()
		if !hasEll && len(labels) != nd {
			return nil, nil, shapeErr(op, "operand %d has %d axes but subscripts %q name %d", i, nd, p, len(labels))
		}
		if hasEll {
			e := nd - (len(labels) - 1)
			if e < 0 {
				return nil, nil, shapeErr(op, "operand %d has %d axes, fewer than subscripts %q name", i, nd, p)
			}
			ell = max(ell, e)
			// Ellipsis axes are labelled by their distance from its end,
			// so that an operand with fewer of them broadcasts against the
			// others' last ones, as NumPy aligns them.
			exp := make([]rune, 0, nd)
			for _, l := range labels {
				if l == '.' {
					for k := e; k > 0; k-- {
						exp = append(exp, ellipsisBase+rune(k))
					}
				} else {
					exp = append(exp, l)
				}
			}
			labels = exp
		}
		ins[i] = labels
	}
	var ellOut []rune
	for k := ell; k > 0; k-- {
		ellOut = append(ellOut, ellipsisBase+rune(k))
	}
	if explicit {
		// Without an ellipsis in the output, the ellipsis axes are summed.
		labels, _, err := parseTerm(op, rhs)
		if err != nil {
			return nil, nil, err
		}
		for i, l := range labels {
			if l == '.' {
				labels = slices.Concat(labels[:i], ellOut, labels[i+1:])
				break
			}
		}
		for i, l := range labels {
			if slices.Contains(labels[i+1:], l) {
				return nil, nil, valueErr(op, "output subscript %s repeated in %q", labelName(l), rhs)
			}
			found := false
			for _, in := range ins {
				found = found || slices.Contains(in, l)
			}
			if !found {
				return nil, nil, valueErr(op, "output subscript %s does not appear in the inputs", labelName(l))
			}
		}
		return ins, labels, nil
	}
	count := map[rune]int{}
	for _, in := range ins {
		for _, l := range in {
			count[l]++
		}
	}
	var once []rune
	for l, c := range count {
		if c == 1 && l < ellipsisBase {
			once = append(once, l)
		}
	}
	sort.Slice(once, func(i, j int) bool { return once[i] < once[j] })
	return ins, append(ellOut, once...), nil
}

// parseTerm returns the labels of one operand's subscripts, with '.'
// standing for its ellipsis.
func parseTerm(op, s string) (labels []rune, ellipsis bool, err error) {
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '.':
			if ellipsis || !strings.HasPrefix(s[i:], "...") {
				return nil, false, valueErr(op, "bad ellipsis in %q", s)
			}
			ellipsis = true
			labels = append(labels, '.')
			i += 2
		case c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z':
			labels = append(labels, rune(c))
		default:
			return nil, false, valueErr(op, "invalid subscript %q in %q: labels are ASCII letters", c, s)
		}
	}
	return labels, ellipsis, nil
}

// Tensordot sums the products of a's axes axesA with b's axes axesB, as
// numpy.tensordot(a, b, (axesA, axesB)): the result has a's other axes,
// then b's.
func Tensordot(a, b *array.Array, axesA, axesB []int) *array.Array {
	const op = "Tensordot"
	if a == nil || b == nil {
		return array.Failed(valueErr(op, "nil array"))
	}
	if len(axesA) != len(axesB) {
		return array.Failed(shapeErr(op, "%d axes of a against %d axes of b", len(axesA), len(axesB)))
	}
	la := make([]rune, a.Ndim())
	lb := make([]rune, b.Ndim())
	next := rune('a')
	for i := range la {
		la[i] = next
		next++
	}
	for i := range lb {
		lb[i] = next
		next++
	}
	for i := range axesA {
		x, y := axesA[i], axesB[i]
		if x < 0 {
			x += len(la)
		}
		if y < 0 {
			y += len(lb)
		}
		if x < 0 || x >= len(la) || y < 0 || y >= len(lb) {
			return array.Failed(errorf(op, []error{array.ErrAxis}, "axes %d and %d out of range for shapes %v and %v", axesA[i], axesB[i], a.Shape(), b.Shape()))
		}
		if a.Shape()[x] != b.Shape()[y] {
			return array.Failed(shapeErr(op, "axis %d of a has %d elements, axis %d of b %d", x, a.Shape()[x], y, b.Shape()[y]))
		}
		lb[y] = la[x]
	}
	var outL []rune
	for _, l := range la {
		if !slices.Contains(lb, l) {
			outL = append(outL, l)
		}
	}
	for _, l := range lb {
		if !slices.Contains(la, l) {
			outL = append(outL, l)
		}
	}
	if next > 'z'+1 {
		return array.Failed(shapeErr(op, "too many axes (%d)", a.Ndim()+b.Ndim()))
	}
	return Einsum(string(la)+","+string(lb)+"->"+string(outL), a, b)
}

// Outer returns the outer product of a and b, flattened first, as
// numpy.outer: shape (a.Size(), b.Size()).
func Outer(a, b *array.Array) *array.Array {
	if a == nil || b == nil {
		return array.Failed(valueErr("Outer", "nil array"))
	}
	return a.Ravel().ExpandDims(1).Mul(b.Ravel().ExpandDims(0))
}

// Inner returns the sums of products over the last axes of a and b, as
// numpy.inner: shape a.shape[:-1] + b.shape[:-1]; a scalar operand
// multiplies.
func Inner(a, b *array.Array) *array.Array {
	if a == nil || b == nil {
		return array.Failed(valueErr("Inner", "nil array"))
	}
	if a.Ndim() == 0 || b.Ndim() == 0 {
		return a.Mul(b)
	}
	return Tensordot(a, b, []int{-1}, []int{-1})
}

// Vdot returns the dot product of a and b flattened, as numpy.vdot (a
// 0-d array); they must have as many elements.
func Vdot(a, b *array.Array) *array.Array {
	const op = "Vdot"
	if a == nil || b == nil {
		return array.Failed(valueErr(op, "nil array"))
	}
	if a.Size() != b.Size() {
		return array.Failed(shapeErr(op, "%v and %v have different sizes", a.Shape(), b.Shape()))
	}
	return Einsum("i,i->", a.Ravel(), b.Ravel())
}

// Kron returns the Kronecker product of a and b, as numpy.kron: the
// operand with fewer axes gets leading axes of length 1, and the result's
// axis i has a.shape[i]·b.shape[i] elements.
func Kron(a, b *array.Array) *array.Array {
	if a == nil || b == nil {
		return array.Failed(valueErr("Kron", "nil array"))
	}
	nd := max(a.Ndim(), b.Ndim())
	pad := func(x *array.Array) []int {
		s := make([]int, nd-x.Ndim(), nd)
		for i := range s {
			s[i] = 1
		}
		return append(s, x.Shape()...)
	}
	sa, sb := pad(a), pad(b)
	ia := make([]int, 0, 2*nd)
	ib := make([]int, 0, 2*nd)
	out := make([]int, nd)
	for i := range nd {
		ia = append(ia, sa[i], 1)
		ib = append(ib, 1, sb[i])
		out[i] = sa[i] * sb[i]
	}
	return a.Reshape(ia...).Mul(b.Reshape(ib...)).Reshape(out...)
}

// ExplicitEinsum returns subscripts in explicit form for the operands:
// the output after "->" spelled out and each ellipsis replaced by letters
// the subscripts do not use ("...ij,...jk" for two 3-D operands becomes
// "Aij,Ajk->Aik"). Einsum gives the same result for both forms; package
// grad differentiates the explicit one.
func ExplicitEinsum(subscripts string, operands ...*array.Array) (string, error) {
	ins, out, err := parseEinsum("Einsum", subscripts, operands)
	if err != nil {
		return "", err
	}
	used := map[rune]bool{}
	for _, in := range ins {
		for _, l := range in {
			used[l] = true
		}
	}
	free := []rune("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz")
	letter := map[rune]rune{}
	name := func(l rune) (rune, error) {
		if l < ellipsisBase {
			return l, nil
		}
		if c, ok := letter[l]; ok {
			return c, nil
		}
		for len(free) > 0 && used[free[0]] {
			free = free[1:]
		}
		if len(free) == 0 {
			return 0, valueErr("Einsum", "too many axes for letter subscripts")
		}
		letter[l], free = free[0], free[1:]
		return letter[l], nil
	}
	var b strings.Builder
	write := func(ls []rune) error {
		for _, l := range ls {
			c, err := name(l)
			if err != nil {
				return err
			}
			b.WriteRune(c)
		}
		return nil
	}
	for i, in := range ins {
		if i > 0 {
			b.WriteByte(',')
		}
		if err := write(in); err != nil {
			return "", err
		}
	}
	b.WriteString("->")
	if err := write(out); err != nil {
		return "", err
	}
	return b.String(), nil
}
