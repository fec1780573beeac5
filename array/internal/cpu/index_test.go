package cpu

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/gocu-dev/gocu/array/internal/backend"
)

// scatterCase is a scatter by one index array of O x M updates of I
// elements into O x n rows.
type scatterCase struct {
	O, M, I, n int
	scalar     bool // one value for every update
	i32        bool // Int32 indices
}

// refScatter is the serial definition: updates in (o, m, i) order.
func refScatter[W word](op backend.ScatterOp, c scatterCase, idx []int64, dst, val []W) {
	for o := range c.O {
		for m := range c.M {
			r := idx[o*c.M+m]
			if r < 0 {
				r += int64(c.n)
			}
			for i := range c.I {
				d := &dst[(o*c.n+int(r))*c.I+i]
				v := val[0]
				if !c.scalar {
					v = val[(o*c.M+m)*c.I+i]
				}
				switch op {
				case backend.ScatterAdd:
					*d += v
				case backend.ScatterMax:
					if v > *d || v != v {
						*d = v
					}
				default:
					*d = v
				}
			}
		}
	}
}

// fillRand writes random values with many ties, signed zeros and NaN for a
// float W.
func fillRand[W word](r *rand.Rand, w []W) {
	for i := range w {
		x := r.NormFloat64() * 100
		switch r.IntN(50) {
		case 0:
			x = math.NaN()
		case 1:
			x = math.Copysign(0, -1)
		case 2:
			x = 0
		case 3:
			x = 7
		}
		switch p := any(&w[i]).(type) {
		case *float32:
			*p = float32(x)
		case *float64:
			*p = x
		case *int32:
			*p = int32(r.Uint32())
		case *int64:
			*p = int64(r.Uint64())
		case *uint8:
			*p = uint8(r.Uint32())
		case *uint16:
			*p = uint16(r.Uint32())
		}
	}
}

func sameBits[W word](a, b W) bool {
	switch x := any(a).(type) {
	case float32:
		return math.Float32bits(x) == math.Float32bits(any(b).(float32))
	case float64:
		return math.Float64bits(x) == math.Float64bits(any(b).(float64))
	}
	return a == b
}

// runScatter scatters through be and compares with refScatter bit for bit.
func runScatter[W word](t *testing.T, be *Backend, r *rand.Rand, dt backend.DType, op backend.ScatterOp, c scatterCase) {
	t.Helper()
	idx := make([]int64, c.O*c.M)
	for i := range idx {
		// Few hot rows, so updates collide, and negative indices.
		v := int64(r.IntN(c.n))
		if r.IntN(4) == 0 {
			v = int64(r.IntN(min(c.n, 5)))
		}
		if r.IntN(3) == 0 {
			v -= int64(c.n)
		}
		idx[i] = v
	}
	nv := c.O * c.M * c.I
	if c.scalar {
		nv = 1
	}
	want := make([]W, c.O*c.n*c.I)
	val := make([]W, nv)
	fillRand(r, want)
	fillRand(r, val)
	dbuf, _ := be.Alloc(dt, len(want))
	vbuf, _ := be.Alloc(dt, len(val))
	copy(words[W](asBuffer(dbuf)), want)
	copy(words[W](asBuffer(vbuf)), val)
	ix := backend.Index{Len: c.n, Strides: [3]int{c.M, 1, 0}}
	if c.I == 1 && r.IntN(2) == 0 {
		ix.Strides[2] = 1 // as ScatterAdd passes it; with I 1 it is unused
	}
	if c.i32 {
		ix.Buf, _ = be.Alloc(backend.Int32, len(idx))
		for i, v := range idx {
			asBuffer(ix.Buf).i32[i] = int32(v)
		}
	} else {
		ix.Buf, _ = be.Alloc(backend.Int64, len(idx))
		copy(asBuffer(ix.Buf).i64, idx)
	}
	s := &backend.Scatter{Op: op, Dst: dbuf, Val: vbuf, O: c.O, M: c.M, I: c.I, Idx: []backend.Index{ix}}
	if !c.scalar {
		s.ValStrides = [3]int{c.M * c.I, c.I, 1}
	}
	refScatter(op, c, idx, want, val)
	if err := be.Scatter(s); err != nil {
		t.Fatalf("%v %v %+v: %v", op, dt, c, err)
	}
	got := words[W](asBuffer(dbuf))
	for i := range want {
		if !sameBits(got[i], want[i]) {
			t.Fatalf("%v %v %+v: element %d is %v, want %v", op, dt, c, i, got[i], want[i])
		}
	}

	// A bad index fails with the first of them and no other error.
	bad := r.IntN(len(idx))
	for _, k := range []int{bad, min(bad+c.M/3, len(idx)-1)} {
		if c.i32 {
			asBuffer(ix.Buf).i32[k] = int32(c.n + k)
		} else {
			asBuffer(ix.Buf).i64[k] = int64(c.n + k)
		}
	}
	var ie *backend.IndexError
	if err := be.Scatter(s); !errors.As(err, &ie) || ie.Index != int64(c.n+bad) {
		t.Fatalf("%v %v %+v: bad index %d gave %v", op, dt, c, c.n+bad, err)
	}
}

// TestScatterParallel checks the parallel scatters against the serial
// definition on large inputs with many duplicate indices.
func TestScatterParallel(t *testing.T) {
	r := rand.New(rand.NewPCG(uint64(rand.Int64()), 11))
	cases := []scatterCase{
		{O: 1, M: 200_000, I: 1, n: 100},
		{O: 1, M: 200_000, I: 1, n: 100_000},
		{O: 1, M: 150_000, I: 1, n: 1_000_000},
		{O: 1, M: 150_000, I: 1, n: 3, i32: true},
		{O: 1, M: 100_000, I: 1, n: 1000, scalar: true},
		{O: 2, M: 60_000, I: 3, n: 500},
		{O: 3, M: 50_000, I: 2, n: 70_000, i32: true},
		{O: 5, M: 20_000, I: 1, n: 40},
		{O: 1, M: 3000, I: 100, n: 5000},
	}
	for _, workers := range []int{1, 2, 3, 4, 8} {
		be := New(0)
		be.workers = workers
		for _, c := range cases {
			for _, op := range []backend.ScatterOp{backend.ScatterAdd, backend.ScatterMax, backend.ScatterSet} {
				t.Run(fmt.Sprintf("w%d/%v/%d_%d_%d_%d", workers, op, c.O, c.M, c.I, c.n), func(t *testing.T) {
					runScatter[float64](t, be, r, backend.Float64, op, c)
					runScatter[float32](t, be, r, backend.Float32, op, c)
					runScatter[int64](t, be, r, backend.Int64, op, c)
					runScatter[int32](t, be, r, backend.Int32, op, c)
					if op == backend.ScatterSet {
						runScatter[uint16](t, be, r, backend.Float16, op, c)
						runScatter[uint8](t, be, r, backend.Uint8, op, c)
					}
				})
			}
		}
	}
}
