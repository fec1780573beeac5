package dist_test

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/gocu-dev/gocu"
	"github.com/gocu-dev/gocu/array"
	"github.com/gocu-dev/gocu/dist"
	"github.com/gocu-dev/gocu/grad"
)

// replica is a small MLP on one rank: w1 b1 w2 b2 w3 b3, extra (used by
// some ranks only) and dead (used by none).
type replica struct {
	params []*grad.Var
	x      *grad.Var
	c      *grad.Var
}

// newReplica makes rank's replica on dev: the same parameters on every
// rank (seed), its own input.
func newReplica(dev *gocu.Device, dt array.DType, rank int) *replica {
	m := array.On(dev)
	r := m.NewRNG(7)
	shapes := [][]int{{6, 16}, {16}, {16, 8}, {8}, {8, 3}, {3}, {4}, {2}}
	var ps []*grad.Var
	for _, s := range shapes {
		ps = append(ps, grad.Param(r.Normal(dt, 0, 0.5, s...).Copy()))
	}
	in := m.NewRNG(uint64(100 + rank))
	return &replica{params: ps, x: grad.Const(in.Normal(dt, 0, 1, 5, 6).Copy()), c: grad.Const(in.Normal(dt, 0, 1, 4).Copy())}
}

// loss is the replica's loss; extra joins it when useExtra.
func (m *replica) loss(useExtra bool) *grad.Var {
	p := m.params
	h := m.x.MatMul(p[0]).Add(p[1]).Tanh()
	h = h.MatMul(p[2]).Add(p[3]).Tanh()
	l := h.MatMul(p[4]).Add(p[5]).Square().Sum()
	if useExtra {
		l = l.Add(p[6].Mul(m.c).Sum())
	}
	return l
}

// sgd takes a plain gradient step and clears the gradients.
func (m *replica) sgd() error {
	for _, p := range m.params {
		if g := p.Grad(); g != nil {
			if err := p.Value().Assign(p.Value().Sub(g.Mul(0.1))); err != nil {
				return err
			}
			g.Close()
		}
		p.ZeroGrad()
	}
	return nil
}

// DDP's gradients, over several steps, are bit for bit those of an
// all-reduce of every gradient after the backward pass, with parameters
// some ranks do not use and one no rank uses (reduced as zeros), and
// bucket boundaries anywhere.
func TestDDPMatchesAllReduce(t *testing.T) {
	for _, bucket := range []int{0, 1, 100, 600} {
		for _, sum := range []bool{false, true} {
			t.Run(fmt.Sprintf("bucket=%d,sum=%v", bucket, sum), func(t *testing.T) {
				c, err := dist.New(cpu, cpu, cpu)
				if err != nil {
					t.Fatal(err)
				}
				defer c.Close()
				if err := checkDDP(c, bucket, sum, 0); err != nil {
					t.Fatal(err)
				}
			})
		}
	}
}

// DDP across processes, one rank each, through the host backend's hub.
func TestDDPProcesses(t *testing.T) {
	if testing.Short() {
		t.Skip("starts processes")
	}
	t.Setenv(envCheck, "ddp")
	errs, outs := runRanks(t, gocu.CPU, []string{"cpu", "cpu", "cpu"})
	for r := range errs {
		t.Logf("rank %d: %s", r, strings.TrimSpace(outs[r]))
		if errs[r] != nil {
			t.Errorf("rank %d: %v", r, errs[r])
		}
	}
}

// checkDDP runs three steps of DDP on c's local ranks and of an all-reduce
// after the backward pass, on float32 replicas, and compares gradients and
// parameters: equal within tol (relative to the largest gradient of the
// parameter), or bitwise when tol is 0. Rank 0 does not use extra.
func checkDDP(c *dist.Comm, bucket int, sum bool, tol float64) error {
	devs := c.Devices()
	n := len(devs)
	uses := func(i int) bool { return c.Rank(i) != 0 }
	ref := make([]*replica, n)
	got := make([]*replica, n)
	reps := make([][]*grad.Var, n)
	for i, dev := range devs {
		ref[i] = newReplica(dev, array.Float32, c.Rank(i))
		got[i] = newReplica(dev, array.Float32, c.Rank(i))
		reps[i] = got[i].params
	}
	d, err := dist.NewDDP(c, dist.DDPOptions{BucketBytes: bucket, Sum: sum}, reps...)
	if err != nil {
		return err
	}
	defer d.Close()
	op := dist.Avg
	if sum {
		op = dist.Sum
	}
	for step := range 3 {
		errs := make([]error, n)
		var wg sync.WaitGroup
		for i := range n {
			if err := ref[i].loss(uses(i)).Backward(); err != nil {
				return err
			}
			// The replicas' passes at once, as on several GPUs.
			wg.Go(func() { errs[i] = got[i].loss(uses(i)).Backward() })
		}
		wg.Wait()
		if err := errors.Join(errs...); err != nil {
			return err
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
			if err := c.AllReduce(op, gs...); err != nil {
				return err
			}
		}
		if err := d.Wait(); err != nil {
			return err
		}
		for i := range n {
			for j := range ref[i].params {
				want, err1 := ref[i].params[j].Grad().AsType(array.Float64).Float64s()
				have, err2 := got[i].params[j].Grad().AsType(array.Float64).Float64s()
				if err := errors.Join(err1, err2); err != nil {
					return err
				}
				if !closeRel(have, want, tol) {
					return fmt.Errorf("step %d, rank %d, parameter %d: DDP %v, all-reduce %v", step, c.Rank(i), j, have, want)
				}
			}
			if err := errors.Join(ref[i].sgd(), got[i].sgd()); err != nil {
				return err
			}
		}
	}
	return nil
}

// closeRel reports whether got equals want within tol times want's
// largest magnitude (bitwise for tol 0).
func closeRel(got, want []float64, tol float64) bool {
	if tol == 0 {
		return slices.Equal(got, want)
	}
	if len(got) != len(want) {
		return false
	}
	scale := 1e-30
	for _, w := range want {
		scale = max(scale, math.Abs(w))
	}
	for i := range got {
		if !(math.Abs(got[i]-want[i]) <= tol*scale) {
			return false
		}
	}
	return true
}

// Buckets hold at most BucketBytes of one dtype, last parameter first, a
// larger parameter alone.
func TestDDPBuckets(t *testing.T) {
	c, err := dist.New(cpu)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	m := newReplica(cpu, array.Float32, 0)
	// Bytes, last first: dead 8, extra 16, b3 12, w3 96, b2 32, w2 512, b1 64, w1 384.
	for _, tc := range []struct {
		bytes int
		want  [][]int
	}{
		{0, [][]int{{7, 6, 5, 4, 3, 2, 1, 0}}},
		{1, [][]int{{7}, {6}, {5}, {4}, {3}, {2}, {1}, {0}}},
		{100, [][]int{{7, 6, 5}, {4}, {3}, {2}, {1}, {0}}},
		{132, [][]int{{7, 6, 5, 4}, {3}, {2}, {1}, {0}}},
		{1000, [][]int{{7, 6, 5, 4, 3, 2, 1}, {0}}},
	} {
		d, err := dist.NewDDP(c, dist.DDPOptions{BucketBytes: tc.bytes}, m.params)
		if err != nil {
			t.Fatal(err)
		}
		if got := d.Buckets(); !slices.EqualFunc(got, tc.want, slices.Equal) {
			t.Errorf("BucketBytes %d: %v, want %v", tc.bytes, got, tc.want)
		}
		d.Close()
	}
	mixed := []*grad.Var{
		grad.Param(array.On(cpu).Zeros(array.Float32, 3)),
		grad.Param(array.On(cpu).Zeros(array.Float64, 3)),
		grad.Param(array.On(cpu).Zeros(array.Float64, 3)),
	}
	d, err := dist.NewDDP(c, dist.DDPOptions{}, mixed)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if got := d.Buckets(); !slices.EqualFunc(got, [][]int{{2, 1}, {0}}, slices.Equal) {
		t.Errorf("mixed dtypes: %v", got)
	}
}

// Buckets are reduced while the backward pass runs: when the first
// layer's weight (among the last gradients) is ready, buckets of the
// later layers are reduced already. With two local ranks a bucket is
// reduced once both passes made it.
func TestDDPOverlaps(t *testing.T) {
	c, err := dist.New(cpu, cpu)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ms := []*replica{newReplica(cpu, array.Float32, 0), newReplica(cpu, array.Float32, 1)}
	at := -1
	// Registered before DDP's hook, so it runs first.
	rm := ms[1].params[0].OnGradReady(func(*grad.Var) { at = ddpLaunched() })
	defer rm()
	d, err := dist.NewDDP(c, dist.DDPOptions{BucketBytes: 100}, ms[0].params[:7], ms[1].params[:7]) // without dead
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	ddpLaunched = d.Launched
	defer func() { ddpLaunched = nil }()
	n := len(d.Buckets())
	for r, m := range ms {
		if err := m.loss(true).Backward(); err != nil {
			t.Fatal(err)
		}
		if r == 0 && d.Launched() != 0 {
			t.Errorf("reduced %d buckets before rank 1's pass", d.Launched())
		}
	}
	if at < 1 || at >= n || d.Launched() != n {
		t.Errorf("at w1's gradient %d of %d buckets were reduced, want some but not all; after the pass %d", at, n, d.Launched())
	}
	if err := d.Wait(); err != nil {
		t.Fatal(err)
	}
	if d.Launched() != 0 {
		t.Errorf("Wait did not start a new step: %d", d.Launched())
	}
}

var ddpLaunched func() int

func TestDDPErrors(t *testing.T) {
	c, err := dist.New(cpu, cpu)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	a, b := newReplica(cpu, array.Float32, 0), newReplica(cpu, array.Float32, 1)
	for _, tc := range []struct {
		name string
		opts dist.DDPOptions
		reps [][]*grad.Var
		want string
	}{
		{"one replica", dist.DDPOptions{}, [][]*grad.Var{a.params}, "1 replicas for 2 local ranks"},
		{"lengths", dist.DDPOptions{}, [][]*grad.Var{a.params, b.params[1:]}, "replica 1 has 7 parameters"},
		{"shapes", dist.DDPOptions{}, [][]*grad.Var{a.params, append([]*grad.Var{b.params[1]}, b.params[1:]...)}, "replica 1, parameter 0 is float32 [16]"},
		{"const", dist.DDPOptions{}, [][]*grad.Var{a.params, append([]*grad.Var{a.x}, b.params[1:]...)}, "not a parameter"},
		{"bucket", dist.DDPOptions{BucketBytes: -1}, [][]*grad.Var{a.params, b.params}, "negative"},
	} {
		if _, err := dist.NewDDP(c, tc.opts, tc.reps...); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", tc.name, err, tc.want)
		}
	}
	d, err := dist.NewDDP(c, dist.DDPOptions{}, a.params, b.params)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	for range 2 {
		if err := a.loss(true).Backward(); err != nil {
			t.Fatal(err)
		}
	}
	if err := b.loss(true).Backward(); err != nil {
		t.Fatal(err)
	}
	if err := d.Wait(); err == nil || !strings.Contains(err.Error(), "second gradient before Wait") {
		t.Errorf("two passes before Wait: %v", err)
	}
	c2, _ := dist.New(cpu)
	c2.Close()
	if _, err := dist.NewDDP(c2, dist.DDPOptions{}, a.params); !errors.Is(err, dist.ErrClosed) {
		t.Errorf("a closed Comm: %v", err)
	}
}
