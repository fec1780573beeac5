package array

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// The integer dtypes added for NumPy parity (int16, uint16, uint32,
// uint64) on every backend, against Go's own fixed-width arithmetic: wraps,
// C conversions, floor division and shifts as NumPy defines them.

type wideInt interface {
	~int16 | ~uint16 | ~uint32 | ~uint64
}

// randInts draws n values over the whole range of T, with the extremes,
// 0 and 1 mixed in (the edges of division, shifts and order).
func randInts[T wideInt](r *rand.Rand, n int) []T {
	var zero T
	mx := ^zero
	if mx < 0 { // signed: ^0 is -1
		mx = T(1)<<(8*widthOf[T]()-1) - 1
	}
	mn := ^mx
	edges := []T{0, 1, mx, mn, mx - 1, mn + 1, mx / 2, mx/2 + 1}
	v := make([]T, n)
	for i := range v {
		if r.IntN(8) == 0 {
			v[i] = edges[r.IntN(len(edges))]
		} else {
			v[i] = T(r.Uint64())
		}
	}
	return v
}

func widthOf[T wideInt]() int {
	var z T
	switch any(z).(type) {
	case int16, uint16:
		return 2
	case uint32:
		return 4
	}
	return 8
}

func signed[T wideInt]() bool {
	var z T
	return ^z < 0
}

// floorDivRef and modRef are NumPy's floor_divide and remainder: Python's
// rounding for signed types, 0 for a zero divisor.
func floorDivRef[T wideInt](a, b T) T {
	if b == 0 {
		return 0
	}
	q := a / b
	if a%b != 0 && (a < 0) != (b < 0) {
		q--
	}
	return q
}

func modRef[T wideInt](a, b T) T {
	if b == 0 {
		return 0
	}
	r := a % b
	if r != 0 && (r < 0) != (b < 0) {
		r += b
	}
	return r
}

// powRef is x**y wrapping in T; a negative exponent (int16 only) gives
// 1/x^-y truncated, as the package documents.
func powRef[T wideInt](x, y T) T {
	if y < 0 {
		switch {
		case x == 1:
			return 1
		case x == ^T(0): // -1
			if y%2 == 0 {
				return 1
			}
			return x
		}
		return 0
	}
	r := T(1)
	for e := uint64(y); e > 0; e >>= 1 {
		if e&1 != 0 {
			r *= x
		}
		x *= x
	}
	return r
}

func readAs[T Elem](t *testing.T, what string, a *Array, dt DType) []T {
	t.Helper()
	if a.DType() != dt {
		t.Fatalf("%s: dtype %v, want %v (%v)", what, a.DType(), dt, a.Err())
	}
	v, err := ToSlice[T](a)
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	return v
}

func checkEq[T comparable](t *testing.T, what string, got, want []T, in ...any) {
	t.Helper()
	isNaN := func(v T) bool { return v != v }
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d values, want %d", what, len(got), len(want))
	}
	bad := 0
	for i := range want {
		if got[i] != want[i] && !(isNaN(got[i]) && isNaN(want[i])) {
			if bad < 5 {
				args := ""
				for _, x := range in {
					args += fmt.Sprintf(" %v", fmt.Sprint(sliceAt(x, i)))
				}
				t.Errorf("%s: element %d (of%s) = %v, want %v", what, i, args, got[i], want[i])
			}
			bad++
		}
	}
	if bad > 0 {
		t.Fatalf("%s: %d of %d wrong", what, bad, len(want))
	}
}

func sliceAt(x any, i int) any {
	switch s := x.(type) {
	case []int16:
		return s[i]
	case []uint16:
		return s[i]
	case []uint32:
		return s[i]
	case []uint64:
		return s[i]
	}
	return "?"
}

func mapRef[T, R any](a, b []T, f func(x, y T) R) []R {
	out := make([]R, len(a))
	for i := range a {
		out[i] = f(a[i], b[i])
	}
	return out
}

func testWideElementwise[T wideInt](t *testing.T, d *Maker) {
	dt := DTypeOf[T]()
	r := newRand(t)
	const n = 3000
	x, y := randInts[T](r, n), randInts[T](r, n)
	bits := uint64(8 * widthOf[T]())
	sh := make([]T, n) // shift counts around the width
	for i := range sh {
		sh[i] = T(r.Uint64N(bits + 4))
	}
	a, b, s := fromSliceOn(d, x, n), fromSliceOn(d, y, n), fromSliceOn(d, sh, n)
	defer closeAll(a, b, s)
	binary := []struct {
		name string
		f    func(a, b *Array) *Array
		ref  func(x, y T) T
		rhs  []T
	}{
		{"Add", (*Array).addA, func(x, y T) T { return x + y }, y},
		{"Sub", (*Array).subA, func(x, y T) T { return x - y }, y},
		{"Mul", (*Array).mulA, func(x, y T) T { return x * y }, y},
		{"FloorDiv", func(a, b *Array) *Array { return a.FloorDiv(b) }, floorDivRef[T], y},
		{"Mod", func(a, b *Array) *Array { return a.Mod(b) }, modRef[T], y},
		{"Maximum", func(a, b *Array) *Array { return a.Maximum(b) }, func(x, y T) T { return max(x, y) }, y},
		{"Minimum", func(a, b *Array) *Array { return a.Minimum(b) }, func(x, y T) T { return min(x, y) }, y},
		{"BitwiseAnd", func(a, b *Array) *Array { return a.BitwiseAnd(b) }, func(x, y T) T { return x & y }, y},
		{"BitwiseOr", func(a, b *Array) *Array { return a.BitwiseOr(b) }, func(x, y T) T { return x | y }, y},
		{"BitwiseXor", func(a, b *Array) *Array { return a.BitwiseXor(b) }, func(x, y T) T { return x ^ y }, y},
		{"LeftShift", func(a, b *Array) *Array { return a.LeftShift(b) }, func(x, c T) T { return x << uint64(c) }, sh},
		{"RightShift", func(a, b *Array) *Array { return a.RightShift(b) }, func(x, c T) T { return x >> uint64(c) }, sh},
		{"Pow", func(a, b *Array) *Array { return a.Pow(b) }, powRef[T], y},
	}
	for _, op := range binary {
		rhs := b
		if &op.rhs[0] == &sh[0] {
			rhs = s
		}
		got := readAs[T](t, op.name, op.f(a, rhs), dt)
		checkEq(t, op.name, got, mapRef(x, op.rhs, op.ref), x, op.rhs)
	}
	compares := []struct {
		name string
		f    func(a, b *Array) *Array
		ref  func(x, y T) bool
	}{
		{"Lt", func(a, b *Array) *Array { return a.Lt(b) }, func(x, y T) bool { return x < y }},
		{"Le", func(a, b *Array) *Array { return a.Le(b) }, func(x, y T) bool { return x <= y }},
		{"Gt", func(a, b *Array) *Array { return a.Gt(b) }, func(x, y T) bool { return x > y }},
		{"Ge", func(a, b *Array) *Array { return a.Ge(b) }, func(x, y T) bool { return x >= y }},
		{"Eq", func(a, b *Array) *Array { return a.Eq(b) }, func(x, y T) bool { return x == y }},
	}
	for _, op := range compares {
		got := readAs[bool](t, op.name, op.f(a, b), Bool)
		checkEq(t, op.name, got, mapRef(x, y, op.ref), x, y)
	}
	unary := []struct {
		name string
		f    func(a *Array) *Array
		ref  func(x T) T
	}{
		{"Neg", (*Array).Neg, func(x T) T { return -x }},
		{"Abs", (*Array).Abs, func(x T) T {
			if x < 0 {
				return -x
			}
			return x
		}},
		{"Sign", (*Array).Sign, func(x T) T {
			switch {
			case x > 0:
				return 1
			case x < 0:
				return ^T(0) // -1, reached only for int16
			}
			return 0
		}},
		{"BitwiseNot", (*Array).BitwiseNot, func(x T) T { return ^x }},
		{"Square", (*Array).Square, func(x T) T { return x * x }},
	}
	for _, op := range unary {
		got := readAs[T](t, op.name, op.f(a), dt)
		checkEq(t, op.name, got, mapRef(x, x, func(v, _ T) T { return op.ref(v) }), x)
	}
	// A weak Go scalar takes the array's dtype (NEP 50).
	got := readAs[T](t, "Add(7)", a.Add(7), dt)
	checkEq(t, "Add(7)", got, mapRef(x, x, func(v, _ T) T { return v + 7 }), x)
	if !signed[T]() {
		if err := a.Add(-1).Err(); err == nil {
			t.Errorf("%v + -1: no error, want NumPy 2's out-of-range error", dt)
		}
	}
	// True division and Sqrt: float64 from exact unsigned conversions.
	q := readAs[float64](t, "Div", a.Div(b), Float64)
	checkEq(t, "Div", q, mapRef(x, y, func(u, v T) float64 { return float64(u) / float64(v) }), x, y)
}

func (a *Array) addA(b *Array) *Array { return a.Add(b) }
func (a *Array) subA(b *Array) *Array { return a.Sub(b) }
func (a *Array) mulA(b *Array) *Array { return a.Mul(b) }

func TestWideIntElementwise(t *testing.T) {
	forEachBackend(t, func(t *testing.T, d *Maker) {
		t.Run("int16", func(t *testing.T) { testWideElementwise[int16](t, d) })
		t.Run("uint16", func(t *testing.T) { testWideElementwise[uint16](t, d) })
		t.Run("uint32", func(t *testing.T) { testWideElementwise[uint32](t, d) })
		t.Run("uint64", func(t *testing.T) { testWideElementwise[uint64](t, d) })
	})
}

// castRef converts a float to integer T as the package does: toward zero,
// saturated at T's range, NaN to 0.
func castRef[T wideInt](f float64) T {
	var z T
	mx := ^z
	if mx < 0 {
		mx = T(1)<<(8*widthOf[T]()-1) - 1
	}
	mn := ^mx
	switch {
	case f != f:
		return 0
	case f <= float64(mn):
		return mn
	case f >= float64(mx):
		return mx
	}
	if f >= 1<<63 {
		return T(uint64(f))
	}
	return T(int64(f))
}

func testWideCasts[T wideInt](t *testing.T, d *Maker) {
	dt := DTypeOf[T]()
	r := newRand(t)
	const n = 2000
	x := randInts[T](r, n)
	a := fromSliceOn(d, x, n)
	defer a.Close()
	// To floats: C's conversion, one rounding.
	checkEq(t, "AsType(Float64)", readAs[float64](t, "f64", a.AsType(Float64), Float64),
		mapRef(x, x, func(v, _ T) float64 { return float64(v) }), x)
	checkEq(t, "AsType(Float32)", readAs[float32](t, "f32", a.AsType(Float32), Float32),
		mapRef(x, x, func(v, _ T) float32 { return float32(v) }), x)
	// To other integers: C's conversions (wrap, sign or zero extension).
	checkEq(t, "AsType(Int64)", readAs[int64](t, "i64", a.AsType(Int64), Int64),
		mapRef(x, x, func(v, _ T) int64 { return int64(v) }), x)
	checkEq(t, "AsType(Int32)", readAs[int32](t, "i32", a.AsType(Int32), Int32),
		mapRef(x, x, func(v, _ T) int32 { return int32(v) }), x)
	checkEq(t, "AsType(Int8)", readAs[int8](t, "i8", a.AsType(Int8), Int8),
		mapRef(x, x, func(v, _ T) int8 { return int8(v) }), x)
	checkEq(t, "AsType(Uint8)", readAs[uint8](t, "u8", a.AsType(Uint8), Uint8),
		mapRef(x, x, func(v, _ T) uint8 { return uint8(v) }), x)
	checkEq(t, "AsType(Bool)", readAs[bool](t, "bool", a.AsType(Bool), Bool),
		mapRef(x, x, func(v, _ T) bool { return v != 0 }), x)
	for _, to := range []DType{Int16, Uint16, Uint32, Uint64} {
		got, err := ToSlice[float64](a.AsType(to))
		if err != nil {
			t.Fatalf("AsType(%v): %v", to, err)
		}
		for i, v := range x {
			want := wrapTo(to, int64(v), uint64(v))
			if got[i] != want {
				t.Fatalf("%v(%v) as %v = %v, want %v", dt, v, to, got[i], want)
			}
		}
	}
	// From int64: wraps.
	w := make([]int64, n)
	for i := range w {
		w[i] = int64(r.Uint64())
	}
	wa := fromSliceOn(d, w, n)
	checkEq(t, "int64 AsType", readAs[T](t, "from int64", wa.AsType(dt), dt),
		mapRef(w, w, func(v, _ int64) T { return T(v) }))
	// From floats: toward zero, saturating, NaN to 0.
	f := make([]float64, n)
	for i := range f {
		switch r.IntN(6) {
		case 0:
			f[i] = math.NaN()
		case 1:
			f[i] = math.Inf(1 - 2*r.IntN(2))
		default:
			f[i] = (r.Float64()*2.2 - 0.6) * math.Pow(2, float64(8*widthOf[T]()))
		}
	}
	fa := fromSliceOn(d, f, n)
	defer closeAll(wa, fa)
	checkEq(t, "float64 AsType", readAs[T](t, "from float64", fa.AsType(dt), dt),
		mapRef(f, f, func(v, _ float64) T { return castRef[T](v) }))
	f32 := fa.AsType(Float32)
	defer f32.Close()
	fv, _ := ToSlice[float32](f32)
	checkEq(t, "float32 AsType", readAs[T](t, "from float32", f32.AsType(dt), dt),
		mapRef(fv, fv, func(v, _ float32) T { return castRef[T](float64(v)) }))
}

// wrapTo is C's conversion of an integer (as int64 and uint64 bits) to
// integer dtype to, as a float64.
func wrapTo(to DType, i int64, u uint64) float64 {
	switch to {
	case Int16:
		return float64(int16(i))
	case Uint16:
		return float64(uint16(u))
	case Uint32:
		return float64(uint32(u))
	}
	return float64(u)
}

func TestWideIntCasts(t *testing.T) {
	forEachBackend(t, func(t *testing.T, d *Maker) {
		t.Run("int16", func(t *testing.T) { testWideCasts[int16](t, d) })
		t.Run("uint16", func(t *testing.T) { testWideCasts[uint16](t, d) })
		t.Run("uint32", func(t *testing.T) { testWideCasts[uint32](t, d) })
		t.Run("uint64", func(t *testing.T) { testWideCasts[uint64](t, d) })
	})
}

func testWideReduceSort[T wideInt](t *testing.T, d *Maker) {
	dt := DTypeOf[T]()
	r := newRand(t)
	const rows, cols = 7, 301
	x := randInts[T](r, rows*cols)
	a := fromSliceOn(d, x, rows, cols)
	defer a.Close()
	// Sums wrap in NumPy's accumulator: int64 for int16, uint64 for the
	// unsigned types.
	sumDT := Uint64
	if signed[T]() {
		sumDT = Int64
	}
	var su uint64
	for _, v := range x {
		if signed[T]() {
			su += uint64(int64(v))
		} else {
			su += uint64(v)
		}
	}
	s := a.Sum()
	if s.DType() != sumDT {
		t.Fatalf("Sum: dtype %v, want %v", s.DType(), sumDT)
	}
	sv, err := ToSlice[uint64](s.AsType(Uint64))
	if err != nil || sv[0] != su {
		t.Fatalf("Sum = %v (%v), want %d", sv, err, su)
	}
	// Row extremes and their positions, in T's own order.
	mx := readAs[T](t, "Max", a.Max(1), dt)
	mn := readAs[T](t, "Min", a.Min(1), dt)
	am := readAs[int64](t, "ArgMax", a.ArgMax(1), Int64)
	ai := readAs[int64](t, "ArgMin", a.ArgMin(1), Int64)
	for i := range rows {
		row := x[i*cols : (i+1)*cols]
		if mx[i] != slices.Max(row) || mn[i] != slices.Min(row) {
			t.Fatalf("row %d: max %v min %v, want %v %v", i, mx[i], mn[i], slices.Max(row), slices.Min(row))
		}
		if int(am[i]) != slices.Index(row, slices.Max(row)) || int(ai[i]) != slices.Index(row, slices.Min(row)) {
			t.Fatalf("row %d: argmax %d argmin %d", i, am[i], ai[i])
		}
	}
	mean := readAs[float64](t, "Mean", a.Mean(), Float64)
	var ref float64
	for _, v := range x {
		ref += float64(v)
	}
	ref /= float64(len(x))
	if !near(mean[0], ref, 1e-12) {
		t.Fatalf("Mean = %v, want %v", mean[0], ref)
	}
	// Sorts and searches along rows.
	sorted := readAs[T](t, "Sort", a.Sort(-1), dt)
	idx := readAs[int64](t, "Argsort", a.Argsort(-1), Int64)
	want := slices.Clone(x)
	for i := range rows {
		row := want[i*cols : (i+1)*cols]
		perm := make([]int64, cols)
		for j := range perm {
			perm[j] = int64(j)
		}
		slices.SortStableFunc(perm, func(p, q int64) int { return cmp.Compare(row[p], row[q]) })
		checkEq(t, "Argsort", idx[i*cols:(i+1)*cols], perm)
		slices.Sort(row)
	}
	checkEq(t, "Sort", sorted, want)
	tv, ti := a.TopK(5, true)
	tvs, tis := readAs[T](t, "TopK", tv, dt), readAs[int64](t, "TopK idx", ti, Int64)
	for i := range rows {
		row := x[i*cols : (i+1)*cols]
		for j := range 5 {
			if w := want[(i+1)*cols-1-j]; tvs[i*5+j] != w || row[tis[i*5+j]] != w {
				t.Fatalf("TopK row %d #%d: %v at %d, want %v", i, j, tvs[i*5+j], tis[i*5+j], w)
			}
		}
	}
	u := readAs[T](t, "Unique", a.Unique(), dt)
	wu := slices.Compact(slices.Sorted(slices.Values(x)))
	checkEq(t, "Unique", u, wu)
	firstRow := fromSliceOn(d, want[:cols], cols)
	q := x[cols : 2*cols]
	pos := readAs[int64](t, "SearchSorted", SearchSorted(firstRow, fromSliceOn(d, q, cols), false), Int64)
	for i, v := range q {
		w, _ := slices.BinarySearch(want[:cols], v)
		if int(pos[i]) != w {
			t.Fatalf("SearchSorted(%v) = %d, want %d", v, pos[i], w)
		}
	}
	cm := readAs[T](t, "Cummax", a.Cummax(1), dt)
	for i := range rows {
		m := x[i*cols]
		for j := range cols {
			m = max(m, x[i*cols+j])
			if cm[i*cols+j] != m {
				t.Fatalf("Cummax [%d,%d] = %v, want %v", i, j, cm[i*cols+j], m)
			}
		}
	}
	cs := a.Cumsum(1)
	csv, err := ToSlice[uint64](cs.AsType(Uint64))
	if err != nil || cs.DType() != sumDT {
		t.Fatalf("Cumsum: %v, dtype %v", err, cs.DType())
	}
	for i := range rows {
		var acc uint64
		for j := range cols {
			v := x[i*cols+j]
			if signed[T]() {
				acc += uint64(int64(v))
			} else {
				acc += uint64(v)
			}
			if csv[i*cols+j] != acc {
				t.Fatalf("Cumsum [%d,%d] = %d, want %d", i, j, csv[i*cols+j], acc)
			}
		}
	}
	// Take by random indices.
	ix := make([]int64, 500)
	for i := range ix {
		ix[i] = int64(r.IntN(cols))
	}
	tk := readAs[T](t, "Take", a.Take(fromSliceOn(d, ix, len(ix)), 1), dt)
	for i := range rows {
		for j, k := range ix {
			if tk[i*len(ix)+j] != x[i*cols+int(k)] {
				t.Fatalf("Take [%d,%d]", i, j)
			}
		}
	}
}

func TestWideIntReduceSort(t *testing.T) {
	forEachBackend(t, func(t *testing.T, d *Maker) {
		t.Run("int16", func(t *testing.T) { testWideReduceSort[int16](t, d) })
		t.Run("uint16", func(t *testing.T) { testWideReduceSort[uint16](t, d) })
		t.Run("uint32", func(t *testing.T) { testWideReduceSort[uint32](t, d) })
		t.Run("uint64", func(t *testing.T) { testWideReduceSort[uint64](t, d) })
	})
}

// The new dtypes round-trip through .npy with every bit, written with
// NumPy's descr ('<i2', '<u2', '<u4', '<u8').
func TestWideIntNPY(t *testing.T) {
	forEachBackend(t, func(t *testing.T, d *Maker) {
		r := newRand(t)
		check := func(dt DType, descr string, a *Array, want func(b *Array)) {
			var buf bytes.Buffer
			if err := a.WriteNPY(&buf); err != nil {
				t.Fatalf("%v: %v", dt, err)
			}
			if !strings.Contains(buf.String(), "'descr': '"+descr+"'") {
				t.Fatalf("%v: header %q lacks descr %s", dt, buf.String()[:64], descr)
			}
			b, err := d.ReadNPY(&buf)
			if err != nil {
				t.Fatalf("%v: %v", dt, err)
			}
			want(b)
		}
		x16 := randInts[int16](r, 60)
		check(Int16, "<i2", fromSliceOn(d, x16, 3, 20).Transpose(), func(b *Array) {
			checkEq(t, "int16", readAs[int16](t, "int16", b.Transpose().Reshape(-1), Int16), x16)
		})
		u16 := randInts[uint16](r, 60)
		check(Uint16, "<u2", fromSliceOn(d, u16, 60), func(b *Array) { checkEq(t, "uint16", readAs[uint16](t, "uint16", b, Uint16), u16) })
		u32 := randInts[uint32](r, 60)
		check(Uint32, "<u4", fromSliceOn(d, u32, 60), func(b *Array) { checkEq(t, "uint32", readAs[uint32](t, "uint32", b, Uint32), u32) })
		u64 := randInts[uint64](r, 60)
		check(Uint64, "<u8", fromSliceOn(d, u64, 6, 10), func(b *Array) {
			checkEq(t, "uint64", readAs[uint64](t, "uint64", b.Reshape(-1), Uint64), u64)
		})
	})
}

// ScatterAdd, ScatterMax and IndexAdd into the new dtypes run in int32 or
// int64 and wrap back, duplicates included; MatMul wraps likewise.
func testWideScatterMatMul[T wideInt](t *testing.T, d *Maker) {
	dt := DTypeOf[T]()
	r := newRand(t)
	const rows, cols, m = 5, 9, 40
	x, src := randInts[T](r, rows*cols), randInts[T](r, rows*m)
	idx := make([]int64, rows*m)
	for i := range idx {
		idx[i] = int64(r.IntN(cols)) // many duplicates
	}
	a, s, ix := fromSliceOn(d, x, rows, cols), fromSliceOn(d, src, rows, m), fromSliceOn(d, idx, rows, m)
	defer closeAll(a, s, ix)
	add, mx := slices.Clone(x), slices.Clone(x)
	for i := range rows {
		for j := range m {
			k := i*cols + int(idx[i*m+j])
			add[k] += src[i*m+j]
			mx[k] = max(mx[k], src[i*m+j])
		}
	}
	checkEq(t, "ScatterAdd", readAs[T](t, "ScatterAdd", a.ScatterAdd(1, ix, s), dt), add)
	if dt != Uint64 {
		checkEq(t, "ScatterMax", readAs[T](t, "ScatterMax", a.ScatterMax(1, ix, s), dt), mx)
	}
	ia := slices.Clone(x)
	sel := idx[:m]
	for i := range rows {
		for j, k := range sel {
			ia[i*cols+int(k)] += src[i*m+j]
		}
	}
	checkEq(t, "IndexAdd", readAs[T](t, "IndexAdd", a.IndexAdd(1, fromSliceOn(d, sel, m), s), dt), ia)
	// (rows, cols) @ (cols, rows), wrapping in T.
	b := a.T()
	mm := readAs[T](t, "MatMul", a.MatMul(b), dt)
	for i := range rows {
		for j := range rows {
			var acc T
			for k := range cols {
				acc += x[i*cols+k] * x[j*cols+k]
			}
			if mm[i*rows+j] != acc {
				t.Fatalf("MatMul [%d,%d] = %v, want %v", i, j, mm[i*rows+j], acc)
			}
		}
	}
}

func TestWideIntScatterMatMul(t *testing.T) {
	forEachBackend(t, func(t *testing.T, d *Maker) {
		t.Run("int16", func(t *testing.T) { testWideScatterMatMul[int16](t, d) })
		t.Run("uint16", func(t *testing.T) { testWideScatterMatMul[uint16](t, d) })
		t.Run("uint32", func(t *testing.T) { testWideScatterMatMul[uint32](t, d) })
		t.Run("uint64", func(t *testing.T) { testWideScatterMatMul[uint64](t, d) })
	})
}

// A Go integer outside the array's dtype compares exactly (NumPy 2),
// uint64's high values included.
func TestWideIntCompareOutOfRange(t *testing.T) {
	d := CPU()
	u := fromSliceOn(d, []uint64{0, 1 << 63, math.MaxUint64}, 3)
	for _, c := range []struct {
		name string
		got  *Array
		want []bool
	}{
		{"uint64 > -1", u.Gt(-1), []bool{true, true, true}},
		{"uint64 == -1", u.Eq(-1), []bool{false, false, false}},
		{"uint16 < 70000", fromSliceOn(d, []uint16{0, 65535}, 2).Lt(70000), []bool{true, true}},
		{"int16 > -40000", fromSliceOn(d, []int16{-32768, 5}, 2).Gt(-40000), []bool{true, true}},
		{"uint32 >= 1<<40", fromSliceOn(d, []uint32{math.MaxUint32}, 1).Ge(1 << 40), []bool{false}},
	} {
		checkEq(t, c.name, readAs[bool](t, c.name, c.got, Bool), c.want)
	}
	if err := u.Add(-1).Err(); !errors.Is(err, ErrValue) {
		t.Errorf("uint64 + -1: %v, want ErrValue", err)
	}
	if err := fromSliceOn(d, []int16{1}, 1).Mul(40000).Err(); !errors.Is(err, ErrValue) {
		t.Errorf("int16 * 40000: %v, want ErrValue", err)
	}
}
