package array

import (
	"errors"
	"math"
	"strings"
	"testing"
)

// ixWantErr reads a and checks that it fails with kind and a message
// containing want (on a GPU an index error surfaces at the read).
func ixWantErr(t *testing.T, what string, a *Array, kind error, want string) {
	t.Helper()
	_, err := ToSlice[float64](a)
	if err == nil {
		t.Fatalf("%s: no error", what)
	}
	if !errors.Is(err, kind) {
		t.Errorf("%s: error %v is not %v", what, err, kind)
	}
	var ae *Error
	if !errors.As(err, &ae) {
		t.Errorf("%s: error %T is not an *Error", what, err)
	}
	if !strings.Contains(err.Error(), want) {
		t.Errorf("%s: error %q does not say %q", what, err, want)
	}
}

func TestIndexingErrors(t *testing.T) {
	forEachBackendAlone(t, func(t *testing.T, d *Maker) {
		a := fromSliceOn(d, []float32{1, 2, 3, 4, 5, 6, 7, 8}, 2, 4)
		bad := fromSliceOn(d, []int64{1, 9, 0}, 3)
		ixWantErr(t, "Take", a.Take(bad, 1), ErrIndex, "index 9 is out of bounds for axis 1 with size 4")
		neg := fromSliceOn(d, []int32{-3}, 1)
		ixWantErr(t, "Take negative", a.Take(neg, -2), ErrIndex, "index -3 is out of bounds for axis 0 with size 2")
		// The device flag was cleared: the next operation works.
		ok := fromSliceOn(d, []int64{-1, 0}, 2)
		got, err := a.Take(ok, 1).Float32s()
		if err != nil || len(got) != 4 || got[0] != 4 || got[1] != 1 || got[2] != 8 || got[3] != 5 {
			t.Fatalf("Take after an index error: %v, %v", got, err)
		}
		ixWantErr(t, "Fancy", a.Slice(All, Fancy(fromSliceOn(d, []int64{0, 4}, 2))), ErrIndex, "index 4 is out of bounds for axis 1 with size 4")
		ixWantErr(t, "Fancy first", a.Slice(Fancy(fromSliceOn(d, []int64{2}, 1)), Fancy(fromSliceOn(d, []int64{0}, 1))), ErrIndex, "index 2 is out of bounds for axis 0 with size 2")
		c := a.Copy()
		err = c.Put(fromSliceOn(d, []int64{8}, 1), 1.0)
		if err == nil {
			_, err = c.Float32s() // on a GPU the flag is read here
		}
		if !errors.Is(err, ErrIndex) || !strings.Contains(err.Error(), "index 8 is out of bounds for axis 0 with size 8") {
			t.Errorf("Put: %v", err)
		}
		ixWantErr(t, "ScatterAdd", a.ScatterAdd(0, fromSliceOn(d, []int64{0, 1, 2, 0}, 1, 4), a), ErrIndex, "index 2 is out of bounds for axis 0 with size 2")

		fidx := fromSliceOn(d, []float32{0, 1}, 2)
		ixWantErr(t, "float indices", a.Take(fidx, 0), ErrDType, "arrays used as indices must be of integer type, got float32")
		ixWantErr(t, "bool Take", a.Take(fromSliceOn(d, []bool{true, false}, 2), 0), ErrDType, "integer type, got bool")
		ixWantErr(t, "float Fancy", a.Slice(Fancy(fidx)), ErrDType, "integer type")
		ixWantErr(t, "mask shape", a.Mask(fromSliceOn(d, []bool{true, false, true}, 3)), ErrShape,
			"boolean index did not match indexed array along axis 0; size of axis is 2 but size of corresponding boolean axis is 3")
		ixWantErr(t, "mask dtype", a.Mask(fromSliceOn(d, []int32{1, 0}, 2)), ErrDType, "a mask must be bool, got int32")
		ixWantErr(t, "Fancy mask shape", a.Slice(All, Fancy(fromSliceOn(d, []bool{true}, 1))), ErrShape, "along axis 1; size of axis is 4")
		if err := a.Copy().SetMask(fromSliceOn(d, []bool{true}, 1), 1); !errors.Is(err, ErrShape) {
			t.Errorf("SetMask of a wrong mask: %v", err)
		}
		if err := a.Copy().SetMask(fromSliceOn(d, []bool{true, false}, 2), fromSliceOn(d, []float32{1, 2, 3}, 3)); !errors.Is(err, ErrShape) {
			t.Errorf("SetMask of wrong values: %v", err)
		}
		u64 := fromSliceOn(d, []uint64{1, 2}, 2)
		ixWantErr(t, "ScatterMax uint64", u64.ScatterMax(0, fromSliceOn(d, []int64{0}, 1), u64), ErrDType, "scatter-max is not defined for uint64")
		ixWantErr(t, "ScatterAdd uint16 scalar", fromSliceOn(d, []uint16{1, 2}, 2).ScatterAdd(0, fromSliceOn(d, []int64{0}, 1), -1), ErrValue,
			"-1 is out of range for uint16")
		ixWantErr(t, "TakeAlongAxis rank", a.TakeAlongAxis(ok, 1), ErrShape, "same number of dimensions")
		ixWantErr(t, "Take axis", a.Take(ok, 2), ErrAxis, "axis 2 is out of bounds")
		ixWantErr(t, "IndexSelect 2-D", a.IndexSelect(0, fromSliceOn(d, []int64{0, 1}, 1, 2)), ErrShape, "indices must be 1-D")
		ixWantErr(t, "Fancy broadcast", a.Slice(Fancy(fromSliceOn(d, []int64{0, 1}, 2)), Fancy(fromSliceOn(d, []int64{0, 1, 2}, 3))), ErrIndex,
			"could not be broadcast together with shapes (2,) (3,)")
		ixWantErr(t, "Nonzero 0-d", a.Sum().Nonzero()[0], ErrShape, "0-d")
		ixWantErr(t, "Split", a.Split(3, 1)[0], ErrValue, "equal division")
		ixWantErr(t, "Pad reflect empty", d.Zeros(Float32, 0, 2).Pad([][2]int{{1, 1}, {0, 0}}, PadReflect, nil), ErrValue, "empty axis")
		ixWantErr(t, "Repeat", a.Repeat([]int{1}, 1), ErrShape, "1 repeats for an axis of length 4")
	})
}

// TestIndexingRandom checks gathers, scatters and nonzero on sizes past
// the kernels' tiles against float64 references computed here, on fresh
// random inputs (outputs are poisoned by the test backends).
func TestIndexingRandom(t *testing.T) {
	forEachBackend(t, func(t *testing.T, d *Maker) {
		r := newRand(t)
		const rows, cols, n = 300, 40, 5000
		src := randHost(r, Float32, []int{rows, cols}, -2, 2)
		idx := make([]int64, n)
		for i := range idx {
			idx[i] = int64(r.IntN(2*rows) - rows) // negatives too, many duplicates
		}
		a := fromTyped(d, typed(Float32, src.v), src.shape)
		x := fromSliceOn(d, idx, n)
		pos := func(i int64) int {
			if i < 0 {
				return int(i) + rows
			}
			return int(i)
		}
		want := make([]float64, n*cols)
		for i, j := range idx {
			copy(want[i*cols:(i+1)*cols], src.v[pos(j)*cols:(pos(j)+1)*cols])
		}
		checkHost(t, "Take rows", readHost(t, a.Take(x, 0)), []int{n, cols}, want, 0)
		x32 := x.AsType(Int32)
		checkHost(t, "Take rows int32", readHost(t, a.Take(x32, -2)), []int{n, cols}, want, 0)

		// One column gathered element by element (the flat kernel).
		col := make([]int64, n)
		for i := range col {
			col[i] = int64(r.IntN(cols))
		}
		xc := fromSliceOn(d, col, n, 1)
		wantCol := make([]float64, rows*n)
		for i := 0; i < rows; i++ {
			for j, c := range col {
				wantCol[i*n+j] = src.v[i*cols+int(c)]
			}
		}
		checkHost(t, "Take columns", readHost(t, a.Take(xc.Reshape(n), 1)), []int{rows, n}, wantCol, 0)

		// Scatter-add with many duplicates against a float64 sum.
		upd := randHost(r, Float32, []int{n, cols}, -1, 1)
		u := fromTyped(d, typed(Float32, upd.v), upd.shape)
		base := randHost(r, Float32, []int{rows, cols}, -1, 1)
		b := fromTyped(d, typed(Float32, base.v), base.shape)
		sum := append([]float64{}, base.v...)
		for i, j := range idx {
			for k := 0; k < cols; k++ {
				sum[pos(j)*cols+k] += upd.v[i*cols+k]
			}
		}
		checkHost(t, "IndexAdd", readHost(t, b.IndexAdd(0, x, u)), []int{rows, cols}, sum, 1e-5)
		b64 := b.AsType(Float64)
		checkHost(t, "IndexAdd float64", readHost(t, b64.IndexAdd(0, x, u.AsType(Float64))), []int{rows, cols}, sum, 1e-12)

		// ScatterMax along axis 1 with a full index array.
		mi := make([]int64, rows*cols)
		for i := range mi {
			mi[i] = int64(r.IntN(cols))
		}
		mx := append([]float64{}, base.v...)
		for i := 0; i < rows; i++ {
			for k := 0; k < cols; k++ {
				p := i*cols + int(mi[i*cols+k])
				mx[p] = math.Max(mx[p], src.v[i*cols+k])
			}
		}
		checkHost(t, "ScatterMax", readHost(t, b.ScatterMax(1, fromSliceOn(d, mi, rows, cols), a)), []int{rows, cols}, mx, 0)

		// Nonzero over many tiles, and the static form.
		const m = 6 * 16667
		mask := make([]bool, m)
		var nz []float64
		for i := range mask {
			mask[i] = r.Float64() < 0.3
			if mask[i] {
				nz = append(nz, float64(i))
			}
		}
		mk := fromSliceOn(d, mask, m)
		checkHost(t, "FlatNonzero", readHost(t, mk.FlatNonzero()), []int{len(nz)}, nz, 0)
		st := mk.Reshape(6, m/6).NonzeroStatic(len(nz)+5, -1)
		wantR := make([]float64, len(nz)+5)
		wantC := make([]float64, len(nz)+5)
		cols2 := m / 6
		for i := range wantR {
			if i < len(nz) {
				wantR[i], wantC[i] = float64(int(nz[i])/cols2), float64(int(nz[i])%cols2)
			} else {
				wantR[i], wantC[i] = -1, -1
			}
		}
		checkHost(t, "NonzeroStatic rows", readHost(t, st[0]), []int{len(wantR)}, wantR, 0)
		checkHost(t, "NonzeroStatic cols", readHost(t, st[1]), []int{len(wantC)}, wantC, 0)
		vals := randHost(r, Float32, []int{m}, -1, 1)
		va := fromTyped(d, typed(Float32, vals.v), vals.shape)
		sel := make([]float64, len(nz))
		for i, p := range nz {
			sel[i] = vals.v[int(p)]
		}
		checkHost(t, "Mask", readHost(t, va.Mask(mk)), []int{len(nz)}, sel, 0)
		// Empty inputs.
		e := d.Zeros(Float32, 0, 3)
		checkHost(t, "Take of empty", readHost(t, e.Take(fromSliceOn(d, []int64{}, 0), 0)), []int{0, 3}, nil, 0)
		checkHost(t, "Nonzero of empty", readHost(t, e.FlatNonzero()), []int{0}, nil, 0)
	})
}

// TestNonzeroStaticNoSync: the static-size forms queue their work without
// making the host wait.
func TestNonzeroStaticNoSync(t *testing.T) {
	g := testGPU(t)
	r := g.NewRNG(1)
	m := r.Rand(1 << 16).Lt(0.5).Eval()
	x := r.Rand(1 << 16).Eval()
	if err := g.Sync(); err != nil {
		t.Fatal(err)
	}
	waits := g.gpu.Syncs()
	a := m.NonzeroStatic(1000, -1)
	b := x.MaskStatic(m, 1000, 0.0)
	c := m.ArgWhereStatic(10, 0)
	for _, y := range append(a, b, c) {
		y.Eval()
	}
	if g.gpu.Syncs() != waits {
		t.Fatalf("static forms made the host wait %d times", g.gpu.Syncs()-waits)
	}
	if _, err := b.Float32s(); err != nil {
		t.Fatal(err)
	}
}
