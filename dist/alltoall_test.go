package dist_test

import (
	"errors"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/gocu-dev/gocu"
	"github.com/gocu-dev/gocu/array"
	"github.com/gocu-dev/gocu/dist"
)

// pieces makes random pieces: ps[i][j] from rank i to rank j, of rows
// rows of width values (width 0: 1-D), some of them empty, as float64
// reference values and as arrays of dt on devs[i].
func pieces(t testing.TB, rng *rand.Rand, devs []*gocu.Device, size int, dt array.DType, width int) (ref [][][]float64, ps [][]*array.Array) {
	t.Helper()
	ref = make([][][]float64, size)
	ps = make([][]*array.Array, size)
	for i := range size {
		ref[i] = make([][]float64, size)
		ps[i] = make([]*array.Array, size)
		for j := range size {
			rows := rng.IntN(40)
			if rng.IntN(4) == 0 {
				rows = 0
			}
			n := rows * max(width, 1)
			v := make([]float64, n)
			for k := range v {
				v[k] = float64(rng.IntN(200) - 100)
				if dt == array.Bool || dt == array.Uint8 {
					v[k] = float64(rng.IntN(2))
				}
			}
			// The reference is what dt holds of the values.
			r, err := array.FromSliceOn(cpu, v).AsType(dt).AsType(array.Float64).Float64s()
			if err != nil {
				t.Fatal(err)
			}
			ref[i][j] = r
			shape := []int{rows}
			if width > 0 {
				shape = append(shape, width)
			}
			if i < len(devs) {
				ps[i][j] = array.FromSliceOn(devs[i], v, shape...).AsType(dt).Copy()
			}
		}
	}
	return ref, ps
}

// checkRecvs compares recvs[i][j] (rank ranks[i]) with ref[j][ranks[i]].
func checkRecvs(t testing.TB, recvs [][]*array.Array, ref [][][]float64, ranks []int, dt array.DType, width int) {
	t.Helper()
	for i, rs := range recvs {
		if len(rs) != len(ref) {
			t.Fatalf("rank %d received %d pieces, want %d", ranks[i], len(rs), len(ref))
		}
		for j, r := range rs {
			want := ref[j][ranks[i]]
			if r.DType() != dt {
				t.Fatalf("rank %d from %d: %v, want %v", ranks[i], j, r.DType(), dt)
			}
			if width > 0 && (r.Ndim() != 2 || r.Shape()[1] != width) {
				t.Fatalf("rank %d from %d: shape %v, want [n %d]", ranks[i], j, r.Shape(), width)
			}
			got, err := r.AsType(array.Float64).Float64s()
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got, want) {
				t.Fatalf("%v rank %d from %d: %v, want %v", dt, ranks[i], j, got, want)
			}
		}
	}
}

func TestAllToAllHost(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for size := 1; size <= 4; size++ {
		devs := slices.Repeat([]*gocu.Device{cpu}, size)
		c, err := dist.New(devs...)
		if err != nil {
			t.Fatal(err)
		}
		for _, dt := range []array.DType{array.Float32, array.Float64, array.Int64, array.Int32, array.Uint8, array.Bool, array.Float16} {
			for _, width := range []int{0, 3} {
				ref, ps := pieces(t, rng, devs, size, dt, width)
				recvs, err := c.AllToAll(ps)
				if err != nil {
					t.Fatalf("%d ranks %v: %v", size, dt, err)
				}
				checkRecvs(t, recvs, ref, []int{0, 1, 2, 3}[:size], dt, width)
			}
		}
		// Every piece empty.
		ps := make([][]*array.Array, size)
		for i := range ps {
			for range size {
				ps[i] = append(ps[i], array.On(cpu).Zeros(array.Int32, 0))
			}
		}
		recvs, err := c.AllToAll(ps)
		if err != nil {
			t.Fatal(err)
		}
		for _, rs := range recvs {
			for _, r := range rs {
				if r.Size() != 0 || r.DType() != array.Int32 {
					t.Fatalf("all empty: got %v %v", r.DType(), r.Shape())
				}
			}
		}
		c.Close()
	}
}

// The hub routes the pieces of ranks in other "processes".
func TestAllToAllHub(t *testing.T) {
	const n = 3
	comms := joinAll(t, n)
	rng := rand.New(rand.NewPCG(3, 4))
	for _, dt := range []array.DType{array.Float64, array.Int32, array.Bool, array.Float8E4M3} {
		ref, ps := pieces(t, rng, slices.Repeat([]*gocu.Device{cpu}, n), n, dt, 2)
		recvs := make([][]*array.Array, n)
		errs := each(comms, func(r int, c *dist.Comm) error {
			got, err := c.AllToAll([][]*array.Array{ps[r]})
			if err == nil {
				recvs[r] = got[0]
			}
			return err
		})
		if err := errors.Join(errs...); err != nil {
			t.Fatalf("%v: %v", dt, err)
		}
		checkRecvs(t, recvs, ref, []int{0, 1, 2}, dt, 2)
	}
	// A rank that sends another dtype: every rank is told.
	errs := each(comms, func(r int, c *dist.Comm) error {
		dt := array.Float32
		if r == 2 {
			dt = array.Int32
		}
		p := array.On(cpu).Zeros(dt, 1)
		_, err := c.AllToAll([][]*array.Array{{p, p, p}})
		return err
	})
	for r, err := range errs {
		if !errors.Is(err, dist.ErrPeer) || !strings.Contains(err.Error(), "disagree") {
			t.Fatalf("rank %d: %v, want the ranks' disagreement", r, err)
		}
	}
	if err := errors.Join(each(comms, func(r int, c *dist.Comm) error { return c.Close() })...); err != nil {
		t.Fatal(err)
	}
}

func TestAllToAllErrors(t *testing.T) {
	c, err := dist.New(cpu, cpu)
	if err != nil {
		t.Fatal(err)
	}
	m := array.On(cpu)
	x := m.Zeros(array.Float32, 3)
	deep := m.Zeros(array.Float32, slices.Repeat([]int{1}, 17)...)
	cases := []struct {
		name  string
		sends [][]*array.Array
		err   error
		says  string
	}{
		{"ranks", [][]*array.Array{{x, x}}, nil, "1 lists of pieces for 2 local ranks"},
		{"pieces", [][]*array.Array{{x, x}, {x}}, nil, "local rank 1 has 1 pieces for 2 ranks"},
		{"nil", [][]*array.Array{{x, nil}, {x, x}}, array.ErrValue, "nil"},
		{"dtype", [][]*array.Array{{x, x}, {x, m.Zeros(array.Int64, 3)}}, array.ErrDType, "is int64"},
		{"shape", [][]*array.Array{{x, m.Zeros(array.Float32, 3, 2)}, {x, x}}, array.ErrShape, "beyond the first axis"},
		{"axes", [][]*array.Array{{deep, deep}, {deep, deep}}, array.ErrShape, "17 axes: at most 16"},
		{"scalar", [][]*array.Array{{m.Scalar(float32(1)), x}, {x, x}}, array.ErrShape, "scalar"},
		{"complex", [][]*array.Array{{m.Zeros(array.Complex64, 2), m.Zeros(array.Complex64, 2)}, {m.Zeros(array.Complex64, 2), m.Zeros(array.Complex64, 2)}}, array.ErrDType, "ViewAsReal"},
	}
	for _, tc := range cases {
		_, err := c.AllToAll(tc.sends)
		if err == nil || (tc.err != nil && !errors.Is(err, tc.err)) || !strings.Contains(err.Error(), tc.says) {
			t.Errorf("%s: %v, want %v saying %q", tc.name, err, tc.err, tc.says)
		}
	}
	err = c.Group(func() error {
		_, err := c.AllToAll([][]*array.Array{{x, x}, {x, x}})
		return err
	})
	if err == nil || !strings.Contains(err.Error(), "inside Group") {
		t.Errorf("inside Group: %v", err)
	}
	c.Close()
	if _, err := c.AllToAll([][]*array.Array{{x, x}, {x, x}}); !errors.Is(err, dist.ErrClosed) {
		t.Errorf("closed: %v, want ErrClosed", err)
	}
}

// Every GPU of the host, from one process: random pieces, empty ones too,
// against the pieces sent.
func TestGPUAllToAll(t *testing.T) {
	devs := gpus(t)
	if len(devs) < 2 {
		t.Skipf("%d GPU: needs 2 or more", len(devs))
	}
	c, err := dist.New(devs...)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	rng := rand.New(rand.NewPCG(5, 6))
	ranks := make([]int, len(devs))
	for i := range ranks {
		ranks[i] = i
	}
	for _, dt := range []array.DType{array.Float32, array.Float64, array.Int64, array.Int32, array.Uint8, array.Bool, array.BFloat16} {
		for _, width := range []int{0, 5} {
			ref, ps := pieces(t, rng, devs, len(devs), dt, width)
			recvs, err := c.AllToAll(ps)
			if err != nil {
				t.Fatalf("%v: %v", dt, err)
			}
			checkRecvs(t, recvs, ref, ranks, dt, width)
		}
	}
}

// BenchmarkGPUAllToAll exchanges 64 MiB of float32 from every GPU, an
// equal part for each rank.
func BenchmarkGPUAllToAll(b *testing.B) {
	devs := gpus(b)
	if len(devs) < 2 {
		b.Skipf("%d GPU: needs 2 or more", len(devs))
	}
	c, err := dist.New(devs...)
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	const n = 16 << 20
	ps := make([][]*array.Array, len(devs))
	for i, d := range devs {
		x := array.On(d).Ones(array.Float32, n)
		for j := range devs {
			lo, hi := dist.Split(n, len(devs), j)
			ps[i] = append(ps[i], x.Slice(array.S(lo, hi)))
		}
	}
	b.SetBytes(4 * n * int64(len(devs)))
	for b.Loop() {
		rs, err := c.AllToAll(ps)
		if err != nil {
			b.Fatal(err)
		}
		for i := range rs {
			if err := array.On(devs[i]).Sync(); err != nil {
				b.Fatal(err)
			}
		}
	}
}
