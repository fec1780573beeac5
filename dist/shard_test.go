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
	"github.com/gocu-dev/gocu/grad"
	"github.com/gocu-dev/gocu/nn"
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

// checkZeRO runs steps of ZeRO-1 AdamW and of data-parallel AdamW (an
// all-reduce, then the optimiser on every replica) on c's local ranks and
// compares the parameters after every step: bitwise when tol is 0, else
// within tol of the parameter's largest magnitude. Each rank keeps
// moments of ShardSize elements, 1/Size() of the parameters.
func checkZeRO(c *dist.Comm, steps int, tol float64) error { return checkZeROClip(c, steps, tol, 0) }

// checkZeROClip is checkZeRO with the gradients clipped to a total norm
// of clip (none when 0): MaxNorm against nn.ClipGradNorm after the
// all-reduce.
func checkZeROClip(c *dist.Comm, steps int, tol, clip float64) error {
	devs := c.Devices()
	n := len(devs)
	uses := func(i int) bool { return c.Rank(i) != 0 }
	ref := make([]*replica, n)
	got := make([]*replica, n)
	refOpt := make([]nn.Optimizer, n)
	reps := make([][]*grad.Var, n)
	for i, dev := range devs {
		ref[i] = newReplica(dev, array.Float32, c.Rank(i))
		got[i] = newReplica(dev, array.Float32, c.Rank(i))
		reps[i] = got[i].params
		refOpt[i] = nn.NewAdamW(ref[i].params, 1e-2, 0.1)
	}
	z, err := dist.NewZeRO1(c, func(p []*grad.Var) nn.Optimizer { return nn.NewAdamW(p, 1e-2, 0.1) }, reps...)
	if err != nil {
		return err
	}
	z.MaxNorm = clip
	total := 0
	for _, p := range reps[0] {
		total += p.Size()
	}
	if k := z.ShardSize(); k != (total+c.Size()-1)/c.Size() {
		return fmt.Errorf("shard of %d elements for %d parameters on %d ranks", k, total, c.Size())
	}
	for i, o := range z.Optimizers() {
		if ps := o.Params(); len(ps) != 1 || ps[0].Size() != z.ShardSize() {
			return fmt.Errorf("local rank %d's optimiser holds %d parameters, want one shard of %d elements", i, len(ps), z.ShardSize())
		}
	}
	for step := range steps {
		for i := range n {
			if err := errors.Join(ref[i].loss(uses(i)).Backward(), got[i].loss(uses(i)).Backward()); err != nil {
				return err
			}
		}
		for j := range ref[0].params {
			gs := make([]*array.Array, n)
			for i := range n {
				p := ref[i].params[j]
				if p.Grad() == nil {
					p.SetGrad(array.On(devs[i]).Zeros(p.DType(), p.Shape()...).Copy())
				}
				gs[i] = p.Grad()
			}
			if err := c.AllReduce(dist.Avg, gs...); err != nil {
				return err
			}
		}
		for i := range n {
			if clip > 0 {
				if _, err := nn.ClipGradNorm(ref[i].params, clip, nil); err != nil {
					return err
				}
			}
			if err := refOpt[i].Step(); err != nil {
				return err
			}
			refOpt[i].ZeroGrad()
		}
		if err := z.Step(); err != nil {
			return err
		}
		z.ZeroGrad()
		for i := range n {
			for j := range ref[i].params {
				want, err1 := ref[i].params[j].Value().AsType(array.Float64).Float64s()
				have, err2 := got[i].params[j].Value().AsType(array.Float64).Float64s()
				if err := errors.Join(err1, err2); err != nil {
					return err
				}
				if !closeRel(have, want, tol) {
					return fmt.Errorf("step %d, rank %d, parameter %d: ZeRO-1 %v, data-parallel Adam %v", step, c.Rank(i), j, have, want)
				}
			}
		}
	}
	return nil
}

func TestZeRO1MatchesAdam(t *testing.T) {
	for _, n := range []int{1, 2, 4} {
		devs := make([]*gocu.Device, n)
		for i := range devs {
			devs[i] = cpu
		}
		c, err := dist.New(devs...)
		if err != nil {
			t.Fatal(err)
		}
		if err := checkZeRO(c, 4, 0); err != nil {
			t.Errorf("%d ranks: %v", n, err)
		}
		c.Close()
	}
}

// TestZeRO1Clip checks MaxNorm against nn.ClipGradNorm of the averaged
// gradients, which the loss (a sum of squares) makes far larger than 0.5.
func TestZeRO1Clip(t *testing.T) {
	for _, n := range []int{1, 3} {
		devs := make([]*gocu.Device, n)
		for i := range devs {
			devs[i] = gocu.MustOpen("cpu")
		}
		c, err := dist.New(devs...)
		if err != nil {
			t.Fatal(err)
		}
		if err := checkZeROClip(c, 4, 1e-5, 0.5); err != nil {
			t.Errorf("%d ranks: %v", n, err)
		}
		c.Close()
	}
}

// ZeRO-1 across processes, one rank each, through the hub.
func TestZeRO1Processes(t *testing.T) {
	if testing.Short() {
		t.Skip("starts processes")
	}
	t.Setenv(envCheck, "zero")
	errs, outs := runRanks(t, gocu.CPU, []string{"cpu", "cpu", "cpu", "cpu"})
	for r := range errs {
		t.Logf("rank %d: %s", r, strings.TrimSpace(outs[r]))
		if errs[r] != nil {
			t.Errorf("rank %d: %v", r, errs[r])
		}
	}
}

func TestZeRO1Errors(t *testing.T) {
	c, err := dist.New(cpu, cpu)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	adam := func(p []*grad.Var) nn.Optimizer { return nn.NewAdam(p, 1e-3) }
	a, b := newReplica(cpu, array.Float32, 0), newReplica(cpu, array.Float32, 1)
	f64 := grad.Param(array.On(cpu).Zeros(array.Float64, 3))
	for _, tc := range []struct {
		name string
		opt  func([]*grad.Var) nn.Optimizer
		reps [][]*grad.Var
		want string
	}{
		{"nil", nil, [][]*grad.Var{a.params, b.params}, "nil optimiser"},
		{"one replica", adam, [][]*grad.Var{a.params}, "1 replicas for 2 local ranks"},
		{"empty", adam, [][]*grad.Var{nil, nil}, "no parameters"},
		{"dtypes", adam, [][]*grad.Var{a.params, append(slices.Clone(b.params[:7]), f64)}, "parameter 7 is float64"},
		{"shapes", adam, [][]*grad.Var{a.params, append([]*grad.Var{b.params[1]}, b.params[1:]...)}, "replica 1, parameter 0 has shape [16]"},
		{"const", adam, [][]*grad.Var{a.params, append([]*grad.Var{a.x}, b.params[1:]...)}, "not a parameter"},
	} {
		if _, err := dist.NewZeRO1(c, tc.opt, tc.reps...); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", tc.name, err, tc.want)
		}
	}
}

// DDP and ZeRO1 on a closed communicator say so.
func TestDDPZeRO1Closed(t *testing.T) {
	c, err := dist.New(cpu, cpu)
	if err != nil {
		t.Fatal(err)
	}
	a, b := newReplica(cpu, array.Float32, 0), newReplica(cpu, array.Float32, 1)
	d, err := dist.NewDDP(c, dist.DDPOptions{BucketBytes: 1}, a.params, b.params)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	x, y := newReplica(cpu, array.Float32, 0), newReplica(cpu, array.Float32, 1)
	z, err := dist.NewZeRO1(c, func(p []*grad.Var) nn.Optimizer { return nn.NewAdam(p, 1e-3) }, x.params, y.params)
	if err != nil {
		t.Fatal(err)
	}
	c.Close()
	if err := errors.Join(a.loss(true).Backward(), b.loss(true).Backward()); err != nil {
		t.Fatal(err)
	}
	if err := d.Wait(); !errors.Is(err, dist.ErrClosed) {
		t.Errorf("DDP.Wait: %v", err)
	}
	if err := errors.Join(x.loss(true).Backward(), y.loss(true).Backward()); err != nil {
		t.Fatal(err)
	}
	if err := z.Step(); !errors.Is(err, dist.ErrClosed) {
		t.Errorf("ZeRO1.Step: %v", err)
	}
}
