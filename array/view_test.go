package array

import (
	"fmt"
	"strings"
	"testing"
)

// Slices of a length-10 axis against Python's list(range(10))[slice].
func TestSliceSemantics(t *testing.T) {
	cases := []struct {
		start, stop, step int
		want              []int
	}{
		{None, None, 2, []int{0, 2, 4, 6, 8}},
		{1, 8, 3, []int{1, 4, 7}},
		{-3, None, 1, []int{7, 8, 9}},
		{None, None, -1, []int{9, 8, 7, 6, 5, 4, 3, 2, 1, 0}},
		{8, 2, -2, []int{8, 6, 4}},
		{-1, -11, -1, []int{9, 8, 7, 6, 5, 4, 3, 2, 1, 0}},
		{100, None, 1, []int{}},
		{-100, 3, 1, []int{0, 1, 2}},
		{5, 5, 1, []int{}},
		{None, 0, -1, []int{9, 8, 7, 6, 5, 4, 3, 2, 1}},
		{None, -100, -1, []int{9, 8, 7, 6, 5, 4, 3, 2, 1, 0}},
		{3, None, -1, []int{3, 2, 1, 0}},
		{-2, None, -3, []int{8, 5, 2}},
		{0, 10, 4, []int{0, 4, 8}},
		{None, 3, 1, []int{0, 1, 2}},
		{20, -20, -7, []int{9, 2}},
	}
	forEachBackend(t, func(t *testing.T, d *Maker) {
		x := d.Arange(Int64, 10)
		for _, c := range cases {
			got := readHost(t, x.Slice(S(c.start, c.stop, c.step)))
			want := make([]float64, len(c.want))
			for i, v := range c.want {
				want[i] = float64(v)
			}
			checkHost(t, fmt.Sprintf("[%d:%d:%d]", c.start, c.stop, c.step), got, []int{len(want)}, want, 0)
		}
		// Slicing of a slice of a transposed array, all views of one buffer.
		m := d.Arange(Float64, 24).Reshape(2, 3, 4)
		v := m.Transpose(2, 0, 1).Slice(S(None, None, -2), Idx(1), S(1, 3))
		// m.T(2,0,1)[::-2, 1, 1:3][i, j] = m[1, 1+j, 3-2i]
		checkHost(t, "nested view", readHost(t, v), []int{2, 2}, []float64{19, 23, 17, 21}, 0)
		if vs, _ := v.use(""); vs.st != mustSnap(t, m).st {
			t.Errorf("slice of a view is not a view")
		}
		// NewAxis and Ellipsis.
		e := m.Slice(Ellipsis, NewAxis, Idx(-1))
		checkHost(t, "ellipsis", readHost(t, e), []int{2, 3, 1}, []float64{3, 7, 11, 15, 19, 23}, 0)
		e2 := m.Slice(Idx(0), Ellipsis)
		checkHost(t, "leading int", readHost(t, e2), []int{3, 4}, seq(0, 12), 0)
		at := m.At(1, -1, 2)
		checkHost(t, "At", readHost(t, at), []int{}, []float64{22}, 0)
	})
}

func seq(lo, hi int) []float64 {
	var v []float64
	for i := lo; i < hi; i++ {
		v = append(v, float64(i))
	}
	return v
}

func mustSnap(t *testing.T, a *Array) snap {
	s, err := a.force("")
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// Reshape is a view when strides allow (NumPy's rule) and a copy otherwise.
func TestReshapeViewOrCopy(t *testing.T) {
	forEachBackend(t, func(t *testing.T, d *Maker) {
		x := d.Arange(Float32, 24).Reshape(2, 3, 4)
		base := mustSnap(t, x).st
		views := []*Array{
			x.Reshape(6, 4), x.Reshape(-1), x.Reshape(4, -1, 2), x.Reshape(1, 24, 1),
			x.Slice(All, S(0, 2)).Reshape(2, 8), // merges the two inner axes
			x.T().Reshape(2, 2, 3, 2),           // splits the unit-stride axis
			x.Slice(All, All, S(None, None, 2)).Reshape(12),
			x.Slice(Idx(0)).T().Reshape(2, 2, 3),
		}
		for i, v := range views {
			if s := mustSnap(t, v); s.st != base {
				t.Errorf("reshape %d copied", i)
			}
		}
		checkHost(t, "sliced reshape", readHost(t, views[4]), []int{2, 8}, []float64{0, 1, 2, 3, 4, 5, 6, 7, 12, 13, 14, 15, 16, 17, 18, 19}, 0)
		checkHost(t, "stepped reshape", readHost(t, views[6]), []int{12}, []float64{0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22}, 0)
		// Copies: merging across a transposed pair, or across a gap.
		copies := []*Array{x.T().Reshape(-1), x.Slice(All, S(0, 2)).Reshape(16)}
		for i, c := range copies {
			if s := mustSnap(t, c); s.st == base {
				t.Errorf("reshape %d should copy", i)
			}
		}
		want := make([]float64, 24)
		forIndex([]int{4, 3, 2}, func(flat int, idx []int) {
			want[flat] = float64(idx[2]*12 + idx[1]*4 + idx[0])
		})
		checkHost(t, "T().Reshape(-1)", readHost(t, copies[0]), []int{24}, want, 0)
		checkHost(t, "0-d", readHost(t, x.Slice(Idx(1), Idx(2), Idx(3)).Reshape()), []int{}, []float64{23}, 0)
		checkHost(t, "empty", readHost(t, d.Zeros(Float32, 0, 5).Reshape(5, 0, 3)), []int{5, 0, 3}, nil, 0)
	})
}

func TestShapeOps(t *testing.T) {
	forEachBackend(t, func(t *testing.T, d *Maker) {
		x := d.Arange(Int32, 6).Reshape(1, 2, 1, 3)
		checkHost(t, "squeeze", readHost(t, x.Squeeze()), []int{2, 3}, seq(0, 6), 0)
		checkHost(t, "squeeze axis", readHost(t, x.Squeeze(-2)), []int{1, 2, 3}, seq(0, 6), 0)
		checkHost(t, "unsqueeze", readHost(t, x.Squeeze().ExpandDims(-1)), []int{2, 3, 1}, seq(0, 6), 0)
		checkHost(t, "expand 0", readHost(t, x.Squeeze().ExpandDims(0)), []int{1, 2, 3}, seq(0, 6), 0)
		checkHost(t, "swap", readHost(t, x.Squeeze().SwapAxes(0, 1)), []int{3, 2}, []float64{0, 3, 1, 4, 2, 5}, 0)
		checkHost(t, "moveaxis", readHost(t, x.MoveAxis(3, 0)), []int{3, 1, 2, 1}, []float64{0, 3, 1, 4, 2, 5}, 0)
		checkHost(t, "permute", readHost(t, x.Transpose(3, 1, 0, 2)), []int{3, 2, 1, 1}, []float64{0, 3, 1, 4, 2, 5}, 0)
		b := x.Squeeze().Slice(Idx(1)).BroadcastTo(2, 3)
		checkHost(t, "broadcastTo", readHost(t, b), []int{2, 3}, []float64{3, 4, 5, 3, 4, 5}, 0)
		if st := b.Strides(); st[0] != 0 {
			t.Errorf("broadcast strides %v", st)
		}
		bs := Broadcast(d.Ones(Float32, 3, 1), d.Zeros(Float32, 4))
		if !sameShape(bs[0].Shape(), []int{3, 4}) || !sameShape(bs[1].Shape(), []int{3, 4}) {
			t.Errorf("Broadcast shapes %v %v", bs[0].Shape(), bs[1].Shape())
		}
		r := x.Squeeze().Slice(All, S(None, None, -1))
		f := r.Flatten()
		checkHost(t, "flatten", readHost(t, f), []int{6}, []float64{2, 1, 0, 5, 4, 3}, 0)
		if mustSnap(t, f).st == mustSnap(t, x).st {
			t.Errorf("Flatten shares memory")
		}
		if mustSnap(t, x.Ravel()).st != mustSnap(t, x).st {
			t.Errorf("Ravel of a contiguous array copied")
		}
		c := r.Contiguous()
		if !c.IsContiguous() || r.IsContiguous() {
			t.Errorf("contiguity: %v %v", c.IsContiguous(), r.IsContiguous())
		}
		checkHost(t, "contiguous", readHost(t, c), []int{2, 3}, []float64{2, 1, 0, 5, 4, 3}, 0)
		if st := c.Strides(); st[0] != 3 || st[1] != 1 {
			t.Errorf("contiguous strides %v", st)
		}
		if last, err := x.Dim(-1); x.Ndim() != 4 || x.Size() != 6 || last != 3 || err != nil || x.Device() != d.Device() {
			t.Errorf("accessors: %d %d %d %v", x.Ndim(), x.Size(), last, err)
		}
	})
}

// Assign writes through views; pending expressions that read the memory
// keep the values they had when they were created.
func TestAssign(t *testing.T) {
	forEachBackend(t, func(t *testing.T, d *Maker) {
		x := d.Zeros(Float32, 3, 4)
		y := x.Add(1) // pending, reads x
		if err := x.Slice(Idx(1)).Assign(d.Arange(Float32, 4)); err != nil {
			t.Fatal(err)
		}
		if err := x.Slice(All, Idx(0)).Assign(7); err != nil {
			t.Fatal(err)
		}
		if err := x.Slice(S(None, None, -1), S(3, 4)).Assign(fromSliceOn(d, []float64{1.5, 2.5, 3.5}, 3, 1)); err != nil {
			t.Fatal(err)
		}
		checkHost(t, "x", readHost(t, x), []int{3, 4}, []float64{7, 0, 0, 3.5, 7, 1, 2, 2.5, 7, 0, 0, 1.5}, 0)
		checkHost(t, "y saw the old x", readHost(t, y), []int{3, 4}, []float64{1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1}, 0)
		// Overlapping source and destination: x[1:] = x[:-1] along axis 1.
		r := d.Arange(Int32, 6)
		if err := r.Slice(S(1, None)).Assign(r.Slice(S(None, -1))); err != nil {
			t.Fatal(err)
		}
		checkHost(t, "overlap", readHost(t, r), []int{6}, []float64{0, 0, 1, 2, 3, 4}, 0)
		// In place from an expression of itself.
		if err := r.Assign(r.Mul(2)); err != nil {
			t.Fatal(err)
		}
		checkHost(t, "r *= 2", readHost(t, r), []int{6}, []float64{0, 0, 2, 4, 6, 8}, 0)
		if err := d.Ones(Float32, 3).BroadcastTo(2, 3).Assign(1); !isKind(err, ErrValue) {
			t.Errorf("assign to broadcast view: %v", err)
		}
		if err := x.Assign(d.Ones(Float32, 2, 4)); !isKind(err, ErrShape) {
			t.Errorf("assign (2,4) into (3,4): %v", err)
		}
		if err := d.Ones(Uint8, 2).Assign(300); !isKind(err, ErrValue) {
			t.Errorf("assign 300 to uint8: %v", err)
		}
	})
}

func TestCreation(t *testing.T) {
	forEachBackend(t, func(t *testing.T, d *Maker) {
		checkHost(t, "zeros", readHost(t, d.Zeros(Int32, 2, 2)), []int{2, 2}, []float64{0, 0, 0, 0}, 0)
		checkHost(t, "ones", readHost(t, d.Ones(Bool, 3)), []int{3}, []float64{1, 1, 1}, 0)
		checkHost(t, "full", readHost(t, d.Full(Float64, 2.5, 2)), []int{2}, []float64{2.5, 2.5}, 0)
		checkHost(t, "full 0-d", readHost(t, d.Full(Int64, int64(1)<<60)), []int{}, []float64{1 << 60}, 0)
		checkHost(t, "full float to int", readHost(t, d.Full(Int32, 2.9, 1)), []int{1}, []float64{2}, 0)
		checkHost(t, "arange", readHost(t, d.Arange(Float64, 1, 2, 0.25)), []int{4}, []float64{1, 1.25, 1.5, 1.75}, 0)
		checkHost(t, "arange neg", readHost(t, d.Arange(Int32, 5, 0, -2)), []int{3}, []float64{5, 3, 1}, 0)
		checkHost(t, "arange empty", readHost(t, d.Arange(Float32, 3, 1)), []int{0}, nil, 0)
		checkHost(t, "linspace", readHost(t, d.Linspace(Float32, -1, 1, 5)), []int{5}, []float64{-1, -0.5, 0, 0.5, 1}, 0)
		checkHost(t, "linspace 1", readHost(t, d.Linspace(Float64, 3, 9, 1)), []int{1}, []float64{3}, 0)
		lp := readHost(t, d.Linspace(Float64, 0, 1, 49))
		if lp.v[48] != 1 {
			t.Errorf("linspace end %v", lp.v[48])
		}
		checkHost(t, "eye", readHost(t, d.Eye(Uint8, 3)), []int{3, 3}, []float64{1, 0, 0, 0, 1, 0, 0, 0, 1}, 0)
		checkHost(t, "eye 0", readHost(t, d.Eye(Float32, 0)), []int{0, 0}, nil, 0)
		e := d.Empty(Float64, 2, 3)
		if !sameShape(e.Shape(), []int{2, 3}) || e.Err() != nil {
			t.Errorf("empty: %v %v", e.Shape(), e.Err())
		}
		checkHost(t, "scalar", readHost(t, d.Scalar(int32(7))), []int{}, []float64{7}, 0)
		if d.Scalar(1.5).DType() != Float64 || d.Scalar(3).DType() != Int64 || d.Scalar(true).DType() != Bool {
			t.Errorf("scalar dtypes")
		}
		type celsius float32
		c := fromSliceOn(d, []celsius{1.5, -2})
		if c.DType() != Float32 {
			t.Errorf("named float32 type gives %v", c.DType())
		}
		back, err := ToSlice[celsius](c)
		if err != nil || back[1] != -2 {
			t.Errorf("ToSlice[celsius] = %v, %v", back, err)
		}
		i64, _ := ToSlice[int64](fromSliceOn(d, []float32{1.9, -1.9, 300}))
		if i64[0] != 1 || i64[1] != -1 || i64[2] != 300 {
			t.Errorf("ToSlice converting: %v", i64)
		}
		v, err := ItemOf[int32](d.Full(Int32, 5))
		if err != nil || v != 5 {
			t.Errorf("ItemOf %v %v", v, err)
		}
	})
}

// The same seed gives the same values whatever the number of workers and
// however the draws are split, and consecutive draws do not overlap.
func TestRNG(t *testing.T) {
	forEachBackend(t, func(t *testing.T, d *Maker) {
		for _, dt := range []DType{Float32, Float64} {
			for _, normal := range []bool{false, true} {
				draw := func(r *RNG, n int) []float64 {
					var a *Array
					if normal {
						a = r.Normal(dt, 1, 2, n)
					} else {
						a = r.Uniform(dt, -1, 3, n)
					}
					return readHost(t, a).v
				}
				whole := draw(d.NewRNG(7), 100000)
				// Two draws whose first ends on a Philox block boundary.
				r := d.NewRNG(7)
				first := draw(r, 40000)
				second := draw(r, 60000)
				for i := range first {
					if first[i] != whole[i] {
						t.Fatalf("%v normal=%v: first draw differs at %d", dt, normal, i)
					}
				}
				for i := range second {
					if second[i] != whole[40000+i] {
						t.Fatalf("%v normal=%v: second draw differs at %d", dt, normal, i)
					}
				}
				var s, s2 float64
				for _, v := range whole {
					if !normal && (v < -1 || v >= 3) {
						t.Fatalf("uniform value %v outside [-1,3)", v)
					}
					s += v
					s2 += v * v
				}
				n := float64(len(whole))
				mean, vr := s/n, s2/n-(s/n)*(s/n)
				wm, wv := 1.0, 4.0
				if !normal {
					wm, wv = 1, 16.0/12
				}
				if abs(mean-wm) > 0.03 || abs(vr-wv)/wv > 0.03 {
					t.Errorf("%v normal=%v: mean %v var %v, want %v %v", dt, normal, mean, vr, wm, wv)
				}
				other := draw(d.NewRNG(8), 10)
				if other[0] == whole[0] && other[1] == whole[1] {
					t.Errorf("seeds 7 and 8 agree")
				}
			}
		}
		r := d.NewRNG(3)
		r.Rand(5)
		if r.Counter() != 2 {
			t.Errorf("counter after 5 float32 uniforms = %d, want 2 blocks", r.Counter())
		}
		r.SetCounter(0)
		a := readHost(t, r.Rand(5)).v
		b := readHost(t, d.NewRNG(3).Rand(5)).v
		for i := range a {
			if a[i] != b[i] {
				t.Fatalf("SetCounter replay differs")
			}
		}
		if r.Seed() != 3 || NewRNG(3).Randn(2).DType() != Float32 {
			t.Errorf("Seed/Randn")
		}
	})
}

func abs(x float64) float64 {
	if x < 0 {
		return -x
	}
	return x
}

func TestConcatStack(t *testing.T) {
	forEachBackend(t, func(t *testing.T, d *Maker) {
		a := d.Arange(Int32, 6).Reshape(2, 3)
		b := d.Arange(Float32, 3).Reshape(1, 3).Mul(0.5) // pending, promotes
		c := Concat(0, a, b, a.Slice(S(None, None, -1)))
		if c.DType() != Float64 {
			t.Fatalf("dtype %v", c.DType())
		}
		checkHost(t, "concat 0", readHost(t, c), []int{5, 3}, []float64{0, 1, 2, 3, 4, 5, 0, 0.5, 1, 3, 4, 5, 0, 1, 2}, 0)
		c1 := Concat(-1, a, a.T().T())
		checkHost(t, "concat 1", readHost(t, c1), []int{2, 6}, []float64{0, 1, 2, 0, 1, 2, 3, 4, 5, 3, 4, 5}, 0)
		s := Stack(1, d.Arange(Int64, 3), d.Arange(Int64, 3).Mul(10))
		checkHost(t, "stack", readHost(t, s), []int{3, 2}, []float64{0, 0, 1, 10, 2, 20}, 0)
		if err := Concat(0, a, d.Ones(Int32, 2, 2)).Err(); !isKind(err, ErrShape) || !strings.Contains(err.Error(), "differ outside axis 0") {
			t.Errorf("mismatched concat: %v", err)
		}
		if err := Concat(0).Err(); !isKind(err, ErrValue) {
			t.Errorf("empty concat: %v", err)
		}
		if err := Stack(0, a, b).Err(); !isKind(err, ErrShape) {
			t.Errorf("stack of different shapes: %v", err)
		}
		if err := Concat(2, a, a).Err(); !isKind(err, ErrAxis) {
			t.Errorf("concat axis 2: %v", err)
		}
	})
}
