package dist_test

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/gocu-dev/gocu"
	"github.com/gocu-dev/gocu/array"
	"github.com/gocu-dev/gocu/dist"
)

// checkScatterGather runs ReduceScatter and AllGather on c's local ranks
// and compares with the exact reference: sends of k·Size() elements
// shaped [Size(), k] (2-D, to test that shapes only need equal sizes).
func checkScatterGather(c *dist.Comm, dt array.DType, op dist.Op, k int) error {
	devs := c.Devices()
	n := c.Size()
	sends := make([]*array.Array, len(devs))
	recvs := make([]*array.Array, len(devs))
	for i, d := range devs {
		sends[i] = array.FromSliceOn(d, rankData(c.Rank(i), n*k), n, k).AsType(dt).Copy()
		recvs[i] = array.On(d).Full(dt, 99, k).Copy() // poisoned
	}
	if err := c.ReduceScatter(op, sends, recvs); err != nil {
		return err
	}
	integer := dt == array.Int32 || dt == array.Int64
	full := want(op, n, n*k, integer)
	tol := 0.0
	if op == dist.Avg && !integer {
		tol = 1e-6
		if dt == array.BFloat16 {
			tol = 1.0 / 64
		}
	}
	for i := range devs {
		r := c.Rank(i)
		got, err := recvs[i].AsType(array.Float64).Float64s()
		if err != nil {
			return err
		}
		if w := full[r*k : (r+1)*k]; !closeTo(got, w, tol) {
			return fmt.Errorf("ReduceScatter %v %v rank %d: %v, want %v", dt, op, r, got, w)
		}
	}
	gs := make([]*array.Array, len(devs))
	for i, d := range devs {
		sends[i] = array.FromSliceOn(d, rankData(c.Rank(i), k), k).AsType(dt).Copy()
		gs[i] = array.On(d).Full(dt, 99, k, n).Copy()
	}
	if err := c.AllGather(sends, gs); err != nil {
		return err
	}
	var all []float64
	for r := range n {
		all = append(all, rankData(r, k)...)
	}
	for i := range devs {
		got, err := gs[i].AsType(array.Float64).Float64s()
		if err != nil {
			return err
		}
		if !slices.Equal(got, all) {
			return fmt.Errorf("AllGather %v rank %d: %v, want %v", dt, c.Rank(i), got, all)
		}
	}
	return nil
}

func TestHostReduceScatterAllGather(t *testing.T) {
	for _, n := range []int{1, 2, 4} {
		devs := make([]*gocu.Device, n)
		for i := range devs {
			devs[i] = cpu
		}
		c, err := dist.New(devs...)
		if err != nil {
			t.Fatal(err)
		}
		for _, dt := range []array.DType{array.Float32, array.Float64, array.Int32, array.BFloat16} {
			for _, op := range []dist.Op{dist.Sum, dist.Avg, dist.Max, dist.Min, dist.Prod} {
				if err := checkScatterGather(c, dt, op, 5); err != nil {
					t.Errorf("%d ranks: %v", n, err)
				}
			}
		}
		c.Close()
	}
}

// The hub across goroutines, each a rank with its own connection.
func TestHubReduceScatterAllGather(t *testing.T) {
	const n = 3
	id, err := dist.NewID(gocu.CPU)
	if err != nil {
		t.Fatal(err)
	}
	comms := make([]*dist.Comm, n)
	errs := each(comms, func(r int, _ *dist.Comm) error {
		var err error
		comms[r], err = dist.Join(id, n, r, cpu)
		return err
	})
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
	errs = each(comms, func(r int, c *dist.Comm) error {
		for _, op := range []dist.Op{dist.Sum, dist.Avg, dist.Max} {
			if err := checkScatterGather(c, array.Float32, op, 7); err != nil {
				return err
			}
		}
		return c.Close()
	})
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
}

func TestReduceScatterAllGatherErrors(t *testing.T) {
	c, err := dist.New(cpu, cpu)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	m := array.On(cpu)
	f := func(n int) []*array.Array {
		return []*array.Array{m.Zeros(array.Float32, n).Copy(), m.Zeros(array.Float32, n).Copy()}
	}
	d := func(n int) []*array.Array {
		return []*array.Array{m.Zeros(array.Float64, n).Copy(), m.Zeros(array.Float64, n).Copy()}
	}
	same := f(4)
	for _, tc := range []struct {
		name string
		err  error
		want string
	}{
		{"rs sizes", c.ReduceScatter(dist.Sum, f(6), f(4)), "send has 6 elements, recv 4: want 2 ranks × 4"},
		{"ag sizes", c.AllGather(f(4), f(4)), "recv has 4 elements, send 4: want 2 ranks × 4"},
		{"dtypes", c.ReduceScatter(dist.Sum, f(8), d(4)), "send is float32, recv float64"},
		{"one rank's", c.AllGather(f(2)[:1], f(4)), "1 arrays for 2 local ranks"},
		{"op", c.ReduceScatter(dist.Op(42), f(8), f(4)), "unknown reduction"},
		{"same", c.ReduceScatter(dist.Sum, same, same), "want 2 ranks × 4"},
	} {
		if tc.err == nil || !strings.Contains(tc.err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", tc.name, tc.err, tc.want)
		}
	}
}
