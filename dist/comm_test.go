package dist_test

import (
	"context"
	"errors"
	"math"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/gocu-dev/gocu"
	"github.com/gocu-dev/gocu/array"
	"github.com/gocu-dev/gocu/dist"
)

func TestMain(m *testing.M) {
	if os.Getenv(envChild) != "" {
		os.Exit(childMain())
	}
	os.Exit(m.Run())
}

var cpu = gocu.MustOpen("cpu")

// rankData is rank r's input: small integers, whose sums every dtype
// holds exactly, different on every rank and element.
func rankData(r, n int) []float64 {
	x := make([]float64, n)
	for i := range x {
		x[i] = float64((i*7+r*3)%11 - 5)
	}
	return x
}

// want is the reduction of rankData over nranks ranks, in float64 (exact
// for these values), with integer Avg truncated.
func want(op dist.Op, nranks, n int, integer bool) []float64 {
	out := make([]float64, n)
	in := make([][]float64, nranks)
	for r := range in {
		in[r] = rankData(r, n)
	}
	for i := range out {
		acc := in[0][i]
		for r := 1; r < nranks; r++ {
			v := in[r][i]
			switch op {
			case dist.Sum, dist.Avg:
				acc += v
			case dist.Prod:
				acc *= v
			case dist.Max:
				acc = max(acc, v)
			case dist.Min:
				acc = min(acc, v)
			}
		}
		if op == dist.Avg {
			acc /= float64(nranks)
			if integer {
				acc = math.Trunc(acc)
			}
		}
		out[i] = acc
	}
	return out
}

func makeArrays(t *testing.T, devs []*gocu.Device, dt array.DType, shape ...int) []*array.Array {
	t.Helper()
	n := 1
	for _, d := range shape {
		n *= d
	}
	xs := make([]*array.Array, len(devs))
	for r, d := range devs {
		xs[r] = array.FromSliceOn(d, rankData(r, n), shape...).AsType(dt).Copy()
		if err := xs[r].Err(); err != nil {
			t.Fatal(err)
		}
	}
	return xs
}

func values(t *testing.T, x *array.Array) []float64 {
	t.Helper()
	v, err := x.AsType(array.Float64).Float64s()
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// closeTo compares with the rounding of a low-precision format (the Avg
// of float16 and bfloat16 scales each term by 1/n in the format).
func closeTo(got, want []float64, tol float64) bool {
	if len(got) != len(want) {
		return false
	}
	for i := range got {
		if math.Abs(got[i]-want[i]) > tol*max(1, math.Abs(want[i])) {
			return false
		}
	}
	return true
}

func TestHostAllReduce(t *testing.T) {
	sim := gocu.MustOpen("sim")
	for _, devs := range [][]*gocu.Device{{cpu}, {cpu, cpu}, {cpu, sim, cpu}, {cpu, cpu, cpu, cpu}} {
		c, err := dist.New(devs...)
		if err != nil {
			t.Fatal(err)
		}
		if c.Backend() != "host" || c.Size() != len(devs) || c.Rank(len(devs)-1) != len(devs)-1 {
			t.Fatalf("%v", c)
		}
		for _, dt := range []array.DType{array.Float32, array.Float64, array.Int32, array.Int64, array.Int8, array.BFloat16, array.Float16} {
			for _, op := range []dist.Op{dist.Sum, dist.Avg, dist.Max, dist.Min, dist.Prod} {
				if op == dist.Prod && len(devs) > 3 && (dt == array.Int8 || dt == array.BFloat16) {
					continue // 5^4 does not fit int8; bfloat16 rounds it
				}
				xs := makeArrays(t, devs, dt, 3, 37)
				if err := c.AllReduce(op, xs...); err != nil {
					t.Fatalf("%d ranks, %v %v: %v", len(devs), dt, op, err)
				}
				integer := dt == array.Int32 || dt == array.Int64 || dt == array.Int8
				w := want(op, len(devs), 3*37, integer)
				tol := 0.0
				switch {
				case dt == array.BFloat16 || dt == array.Float16:
					tol = 1.0 / 64 // 1/n rounded to the format, then the sum
				case op == dist.Avg && dt == array.Float32:
					tol = 1e-6
				case op == dist.Avg && dt == array.Float64:
					tol = 1e-15
				}
				for r, x := range xs {
					if got := values(t, x); !closeTo(got, w, tol) {
						t.Fatalf("%d ranks, %v %v, rank %d: got %v\nwant %v", len(devs), dt, op, r, got[:8], w[:8])
					}
					if !slices.Equal(x.Shape(), []int{3, 37}) || x.DType() != dt {
						t.Fatalf("the array changed: %v %v", x.Shape(), x.DType())
					}
				}
			}
		}
		if err := c.Close(); err != nil {
			t.Fatal(err)
		}
	}
}

func TestHostBroadcast(t *testing.T) {
	devs := []*gocu.Device{cpu, gocu.MustOpen("sim"), cpu}
	c, err := dist.New(devs...)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	for root := range devs {
		xs := makeArrays(t, devs, array.Float32, 100)
		if err := c.Broadcast(root, xs...); err != nil {
			t.Fatal(err)
		}
		for r, x := range xs {
			if got := values(t, x); !slices.Equal(got, rankData(root, 100)) {
				t.Fatalf("root %d, rank %d: %v", root, r, got[:5])
			}
		}
	}
}

func TestChecks(t *testing.T) {
	c, err := dist.New(cpu, cpu)
	if err != nil {
		t.Fatal(err)
	}
	ok := makeArrays(t, []*gocu.Device{cpu, cpu}, array.Float32, 4, 4)
	sim := array.On(gocu.MustOpen("sim")).Zeros(array.Float32, 4, 4).Copy()
	for _, tc := range []struct {
		err  error
		want string
		is   error
	}{
		{c.AllReduce(dist.Sum, ok[0]), "1 arrays for 2 local ranks", nil},
		{c.AllReduce(dist.Sum, ok[0], nil), "array 1 is nil", array.ErrValue},
		{c.AllReduce(dist.Sum, ok[0], array.CPU().Zeros(array.Float32, 4, 5).Copy()), "shape [4 5], array 0 [4 4]", array.ErrShape},
		{c.AllReduce(dist.Sum, ok[0], ok[1].AsType(array.Float64)), "array 1 is float64, array 0 float32", array.ErrDType},
		{c.AllReduce(dist.Sum, ok[0], sim), "array 1 is on sim", array.ErrDevice},
		{c.AllReduce(dist.Sum, ok[0].T(), ok[1].T()), "strided view", array.ErrValue},
		{c.AllReduce(dist.Sum, ok[0].Gt(0), ok[1].Gt(0)), "bool arrays", array.ErrDType},
		{c.AllReduce(dist.Op(9), ok...), "unknown reduction 9", nil},
		{c.AllReduce(dist.Sum, ok[0], array.Failed(array.ErrIndex)), "array 1", array.ErrIndex},
		{c.Broadcast(2, ok...), "root 2 is out of range [0, 2)", nil},
		{c.Group(nil), "nil function", nil},
	} {
		if tc.err == nil || !strings.Contains(tc.err.Error(), tc.want) || (tc.is != nil && !errors.Is(tc.err, tc.is)) {
			t.Errorf("got %v, want %q (%v)", tc.err, tc.want, tc.is)
		}
	}
	// Nothing was changed by a refused call.
	if got := values(t, ok[1]); !slices.Equal(got, rankData(1, 16)) {
		t.Errorf("a refused call wrote: %v", got)
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if err := c.AllReduce(dist.Sum, ok...); !errors.Is(err, dist.ErrClosed) {
		t.Errorf("after Close: %v", err)
	}
	if _, err := dist.New(); err == nil {
		t.Error("New() succeeded")
	}
	if _, err := dist.New(cpu, nil); err == nil {
		t.Error("New with a nil device succeeded")
	}
	if _, err := dist.Join(dist.ID{}, 2, 0, cpu); err == nil || !strings.Contains(err.Error(), "empty id") {
		t.Errorf("Join with no id: %v", err)
	}
	if _, err := dist.Join(dist.ID{}, 2, 2, cpu); err == nil || !strings.Contains(err.Error(), "rank 2 of 2") {
		t.Errorf("Join with a bad rank: %v", err)
	}
}

func TestGroupOnTheHost(t *testing.T) {
	c, err := dist.New(cpu, cpu)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	a := makeArrays(t, c.Devices(), array.Float32, 10)
	b := makeArrays(t, c.Devices(), array.Int64, 3)
	err = c.Group(func() error {
		if err := c.AllReduce(dist.Sum, a...); err != nil {
			return err
		}
		return c.AllReduce(dist.Max, b...)
	})
	if err != nil {
		t.Fatal(err)
	}
	if got := values(t, a[1]); !slices.Equal(got, want(dist.Sum, 2, 10, false)) {
		t.Errorf("%v", got)
	}
	if got := values(t, b[0]); !slices.Equal(got, want(dist.Max, 2, 3, true)) {
		t.Errorf("%v", got)
	}
}

func TestSplit(t *testing.T) {
	for _, tc := range []struct{ n, parts int }{{10, 3}, {1024, 2}, {608, 8}, {2, 4}, {0, 3}, {7, 1}} {
		next := 0
		for i := range tc.parts {
			lo, hi := dist.Split(tc.n, tc.parts, i)
			if lo != next || hi < lo || hi-lo > tc.n/tc.parts+1 || hi-lo < tc.n/tc.parts {
				t.Fatalf("Split(%d, %d, %d) = [%d, %d)", tc.n, tc.parts, i, lo, hi)
			}
			next = hi
		}
		if next != tc.n {
			t.Fatalf("Split(%d, %d) covers %d", tc.n, tc.parts, next)
		}
	}
}

func TestIDText(t *testing.T) {
	id, err := dist.NewID(gocu.CPU)
	if err != nil {
		t.Fatal(err)
	}
	s := id.String()
	if !strings.HasPrefix(s, "host:127.0.0.1:") {
		t.Fatalf("host id %q", s)
	}
	back, err := dist.ParseID(s)
	if err != nil || back.String() != s {
		t.Fatalf("%q: %v %v", s, back, err)
	}
	var u dist.ID
	nccl := "nccl:" + strings.Repeat("0a", 128)
	if err := u.UnmarshalText([]byte(nccl)); err != nil || u.String() != nccl {
		t.Fatalf("%v %v", u, err)
	}
	for _, bad := range []string{"", "nccl:12", "host:", "host:1.2.3.4:5", "tcp:x/y", strings.Repeat("z", 300)} {
		if _, err := dist.ParseID(bad); err == nil {
			t.Errorf("ParseID(%q) succeeded", bad)
		}
	}
	// An NCCL id is for GPUs, a host id for the CPU.
	if _, err := dist.Join(u, 1, 0, cpu); err == nil || !strings.Contains(err.Error(), "NCCL's") {
		t.Errorf("Join of an NCCL id on the CPU: %v", err)
	}
}

// joinAll joins n ranks of one host-backend job from n goroutines.
func joinAll(t *testing.T, n int) []*dist.Comm {
	t.Helper()
	id, err := dist.NewID(gocu.CPU)
	if err != nil {
		t.Fatal(err)
	}
	comms := make([]*dist.Comm, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for r := range n {
		wg.Go(func() { comms[r], errs[r] = dist.Join(id, n, r, cpu) })
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
	return comms
}

// each runs f for every rank at once, as the processes of a job would.
func each(comms []*dist.Comm, f func(r int, c *dist.Comm) error) []error {
	errs := make([]error, len(comms))
	var wg sync.WaitGroup
	for r, c := range comms {
		wg.Go(func() { errs[r] = f(r, c) })
	}
	wg.Wait()
	return errs
}

// The host backend across "processes" (goroutines here, each with its own
// connection to the hub, as processes have).
func TestHubAllReduceAndBroadcast(t *testing.T) {
	const n = 3
	comms := joinAll(t, n)
	for _, dt := range []array.DType{array.Float32, array.Int32, array.Float8E4M3} {
		for _, op := range []dist.Op{dist.Sum, dist.Avg, dist.Max} {
			if dt == array.Float8E4M3 && op == dist.Avg {
				continue // 1/3 in e4m3 is too coarse for the exact check
			}
			xs := make([]*array.Array, n)
			errs := each(comms, func(r int, c *dist.Comm) error {
				xs[r] = array.FromSliceOn(cpu, rankData(r, 50), 5, 10).AsType(dt).Copy()
				return c.AllReduce(op, xs[r])
			})
			if err := errors.Join(errs...); err != nil {
				t.Fatalf("%v %v: %v", dt, op, err)
			}
			w := want(op, n, 50, dt == array.Int32)
			tol := 0.0
			if dt == array.Float32 && op == dist.Avg {
				tol = 1e-6
			}
			for r, x := range xs {
				if got := values(t, x); !closeTo(got, w, tol) {
					t.Fatalf("%v %v rank %d: %v, want %v", dt, op, r, got[:6], w[:6])
				}
			}
		}
	}
	xs := make([]*array.Array, n)
	errs := each(comms, func(r int, c *dist.Comm) error {
		xs[r] = array.FromSliceOn(cpu, rankData(r, 20)).AsType(array.Float64).Copy()
		return c.Broadcast(1, xs[r])
	})
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
	for r, x := range xs {
		if got := values(t, x); !slices.Equal(got, rankData(1, 20)) {
			t.Fatalf("broadcast, rank %d: %v", r, got)
		}
	}
	// The hub's results agree with the in-process host backend's bit for bit.
	local, err := dist.New(cpu, cpu, cpu)
	if err != nil {
		t.Fatal(err)
	}
	ys := makeArrays(t, local.Devices(), array.Float32, 64)
	if err := local.AllReduce(dist.Avg, ys...); err != nil {
		t.Fatal(err)
	}
	errs = each(comms, func(r int, c *dist.Comm) error {
		xs[r] = array.FromSliceOn(cpu, rankData(r, 64)).AsType(array.Float32).Copy()
		return c.AllReduce(dist.Avg, xs[r])
	})
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
	if a, b := values(t, xs[2]), values(t, ys[0]); !slices.Equal(a, b) {
		t.Fatalf("hub %v, local %v", a[:4], b[:4])
	}
	if err := errors.Join(each(comms, func(r int, c *dist.Comm) error { return c.Close() })...); err != nil {
		t.Fatal(err)
	}
}

// A rank that calls another collective, or leaves, is reported to the
// others: nobody hangs.
func TestHubReportsDisagreementAndDeparture(t *testing.T) {
	comms := joinAll(t, 2)
	errs := each(comms, func(r int, c *dist.Comm) error {
		x := array.CPU().Ones(array.Float32, 4+r).Copy()
		return c.AllReduce(dist.Sum, x)
	})
	for r, err := range errs {
		if !errors.Is(err, dist.ErrPeer) || !strings.Contains(err.Error(), "the ranks disagree") {
			t.Errorf("rank %d: %v", r, err)
		}
	}
	// The job goes on after a disagreement.
	errs = each(comms, func(r int, c *dist.Comm) error {
		return c.AllReduce(dist.Sum, array.CPU().Ones(array.Float32, 4).Copy())
	})
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
	// Rank 1 goes away while rank 0 reduces.
	if err := comms[1].Abort(); err != nil {
		t.Fatal(err)
	}
	err := comms[0].AllReduce(dist.Sum, array.CPU().Ones(array.Float32, 4).Copy())
	if !errors.Is(err, dist.ErrPeer) || !strings.Contains(err.Error(), "rank 1 left") {
		t.Errorf("rank 0 after rank 1 left: %v", err)
	}
	_ = comms[0].Close()
}

func TestHubRefusesStrangers(t *testing.T) {
	id, err := dist.NewID(gocu.CPU)
	if err != nil {
		t.Fatal(err)
	}
	wrong, _ := dist.ParseID(strings.Split(id.String(), "/")[0] + "/00ff")
	if _, err := dist.Join(wrong, 1, 0, cpu); !errors.Is(err, dist.ErrPeer) || !strings.Contains(err.Error(), "wrong token") {
		t.Errorf("wrong token: %v", err)
	}
	c, err := dist.Join(id, 1, 0, cpu)
	if err != nil {
		t.Fatal(err)
	}
	x := array.CPU().Full(array.Float32, 2.5, 3).Copy()
	if err := c.AllReduce(dist.Avg, x); err != nil {
		t.Fatal(err)
	}
	if got := values(t, x); !slices.Equal(got, []float64{2.5, 2.5, 2.5}) {
		t.Fatal(got)
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if err := c.AllReduce(dist.Sum, x); !errors.Is(err, dist.ErrClosed) {
		t.Fatalf("after Close: %v", err)
	}
	if s := c.String(); !strings.Contains(s, "host, 1 of 1 ranks here: cpu") {
		t.Errorf("String: %s", s)
	}
}

// A rank that never joins makes the others' Join fail after the hub's
// timeout, naming it, instead of waiting forever.
func TestHubJoinTimeout(t *testing.T) {
	t.Setenv(dist.EnvTimeout, "200ms")
	id, err := dist.NewID(gocu.CPU)
	if err != nil {
		t.Fatal(err)
	}
	_, err = dist.Join(id, 3, 0, cpu)
	if !errors.Is(err, dist.ErrTimeout) || !errors.Is(err, dist.ErrPeer) ||
		!strings.Contains(err.Error(), "ranks 1, 2 of 3 did not join within 200ms of the first (GOCU_DIST_TIMEOUT sets the limit)") {
		t.Errorf("Join without the other ranks: %v", err)
	}
}

// A rank that does not call the collective the others called makes them
// fail after the timeout, naming it; the late rank then fails too.
func TestHubCollectiveTimeout(t *testing.T) {
	t.Setenv(dist.EnvTimeout, "200ms")
	comms := joinAll(t, 3)
	errs := each(comms[:2], func(r int, c *dist.Comm) error {
		return c.AllReduce(dist.Sum, array.CPU().Ones(array.Float32, 4).Copy())
	})
	for r, err := range errs {
		if !errors.Is(err, dist.ErrTimeout) || !strings.Contains(err.Error(), "rank 2 of 3 did not call a collective within 200ms of rank ") ||
			!strings.Contains(err.Error(), "'s AllReduce sum of float32 [4]") {
			t.Errorf("rank %d: %v", r, err)
		}
	}
	if err := comms[2].AllReduce(dist.Sum, array.CPU().Ones(array.Float32, 4).Copy()); err == nil {
		t.Error("the late rank's AllReduce succeeded")
	}
	for _, c := range comms {
		_ = c.Close()
	}
}

// The number of ranks is bounded before anything is allocated for them,
// and GOCU_DIST_TIMEOUT must be a duration.
func TestRankBounds(t *testing.T) {
	id, err := dist.NewID(gocu.CPU)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := dist.Join(id, 1<<62, 0, cpu); err == nil || !strings.Contains(err.Error(), "4611686018427387904 ranks: at most 65536") {
		t.Errorf("Join of 2^62 ranks: %v", err)
	}
	t.Setenv(dist.EnvRank, "0")
	t.Setenv(dist.EnvNRanks, "4611686018427387904")
	t.Setenv(dist.EnvID, id.String())
	if _, _, err := dist.FromEnv(); err == nil || !strings.Contains(err.Error(), "want 1 to 65536 ranks") {
		t.Errorf("FromEnv with 2^62 ranks: %v", err)
	}
	if err := dist.Launch(context.Background(), "true", nil, 1<<62, gocu.CPU, nil); err == nil || !strings.Contains(err.Error(), "want 1 to 65536") {
		t.Errorf("Launch of 2^62 ranks: %v", err)
	}
	t.Setenv(dist.EnvTimeout, "soon")
	if _, err := dist.NewID(gocu.CPU); err == nil || !strings.Contains(err.Error(), `GOCU_DIST_TIMEOUT="soon" is not a duration`) {
		t.Errorf("GOCU_DIST_TIMEOUT=soon: %v", err)
	}
}
