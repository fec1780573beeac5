package array

import (
	"errors"
	"sync/atomic"
	"testing"

	"github.com/gocu-dev/gocu/array/internal/backend"
	"github.com/gocu-dev/gocu/array/internal/cpu"
)

// allocCounter counts the buffers a backend allocates.
type allocCounter struct {
	backend.Backend
	n atomic.Int64
}

func (c *allocCounter) Alloc(dt backend.DType, n int) (backend.Buffer, error) {
	c.n.Add(1)
	return c.Backend.Alloc(dt, n)
}

func TestIntoValues(t *testing.T) {
	forEachBackend(t, func(t *testing.T, d *Maker) {
		r := newRand(t)
		xh := randHost(r, Float32, []int{5, 7}, -2, 2)
		yh := randHost(r, Float32, []int{7}, -2, 2)
		x := fromTyped(d, typed(Float32, xh.v), xh.shape)
		y := fromTyped(d, typed(Float32, yh.v), yh.shape)
		want := make([]float64, len(xh.v))
		for i, v := range xh.v {
			want[i] = float64(float32(float32(v)*2) + float32(yh.v[i%7]))
		}
		if err := x.Mul(2).Add(y).Into(x); err != nil {
			t.Fatal(err)
		}
		checkHost(t, "in place", readHost(t, x), []int{5, 7}, want, 0)
		// Reading dst transposed goes through a temporary.
		sq := fromTyped(d, typed(Float32, xh.v[:25]), []int{5, 5})
		tw := make([]float64, 25)
		for i := 0; i < 5; i++ {
			for j := 0; j < 5; j++ {
				tw[i*5+j] = xh.v[j*5+i] + xh.v[i*5+j]
			}
		}
		if err := sq.T().Add(sq).Into(sq); err != nil {
			t.Fatal(err)
		}
		checkHost(t, "transposed", readHost(t, sq), []int{5, 5}, tw, 1e-6)
		sums := d.Empty(Float32, 5)
		if err := x.ReduceInto(sums, OpSum, 1); err != nil {
			t.Fatal(err)
		}
		sw := make([]float64, 5)
		for i := range sw {
			for j := 0; j < 7; j++ {
				sw[i] += want[i*7+j]
			}
		}
		checkHost(t, "ReduceInto", readHost(t, sums), []int{5}, sw, 1e-6)
		keep := d.Empty(Int64, 1, 7)
		if err := x.ReduceInto(keep, OpArgMax, 0); err != nil {
			t.Fatal(err)
		}
		if err := x.ReduceInto(d.Empty(Float64, 5), OpSum, 1); !errors.Is(err, ErrDType) {
			t.Errorf("ReduceInto of the wrong dtype: %v", err)
		}
		if err := x.ReduceInto(d.Empty(Float32, 7), OpSum, 1); !errors.Is(err, ErrShape) {
			t.Errorf("ReduceInto of the wrong shape: %v", err)
		}
		if err := x.ReduceInto(x.Slice(All, Idx(0)), OpSum, 1); !errors.Is(err, ErrValue) {
			t.Errorf("ReduceInto overlapping or strided: %v", err)
		}
		if err := x.Add(1).Into(d.Empty(Float32, 3)); !errors.Is(err, ErrShape) {
			t.Errorf("Into of the wrong shape: %v", err)
		}
	})
}

// TestIntoNoAlloc: a loop of Into and ReduceInto allocates no buffer.
func TestIntoNoAlloc(t *testing.T) {
	c := &allocCounter{Backend: cpu.New(0)}
	d := newDevice(c, nil)
	x := d.Ones(Float32, 64, 64).Eval()
	y := d.Full(Float32, 0.5, 64).Eval()
	s := d.Empty(Float32, 64).Eval()
	before := c.n.Load()
	for range 10 {
		m := x.Mul(0.5)
		r := m.Add(y)
		m.Close() // else the write into x evaluates it first
		if err := r.Into(x); err != nil {
			t.Fatal(err)
		}
		if err := x.ReduceInto(s, OpSum, 0); err != nil {
			t.Fatal(err)
		}
	}
	if n := c.n.Load() - before; n != 0 {
		t.Fatalf("the loop allocated %d buffers", n)
	}
	got, err := x.Float32s()
	if err != nil || got[0] != 1 {
		t.Fatalf("x = %v, %v", got[:1], err)
	}
}
