package dist_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gocu-dev/gocu"
	"github.com/gocu-dev/gocu/array"
	"github.com/gocu-dev/gocu/dist"
)

// The multi-process recipe on one host: the test makes an id and starts
// its own binary once per rank with the job's environment (dist.Env); each
// child joins, all-reduces and broadcasts, and checks the results. With the
// host backend this runs in CI; on GPUs (TestGPUProcesses) it is one
// process per GPU through NCCL.

const (
	envChild    = "GOCU_DIST_TEST_CHILD"     // run childMain instead of the tests
	envDevice   = "GOCU_DIST_TEST_DEVICE"    // cpu or sim; unset: cuda:LOCAL_RANK
	envFailRank = "GOCU_DIST_TEST_FAIL_RANK" // this rank fails after joining
	envStopRank = "GOCU_DIST_TEST_STOP_RANK" // this rank stops itself (SIGSTOP) after joining
	envKillRank = "GOCU_DIST_TEST_KILL_RANK" // this rank kills itself (SIGKILL) after joining
	envHangRank = "GOCU_DIST_TEST_HANG_RANK" // this rank stops calling collectives after one (hangMain)
	envCheck    = "GOCU_DIST_TEST_CHECK"     // ddp or zero: run that check instead of the collectives
)

// runRanks starts one child per device name (rank r on devices[r]) and
// returns each child's exit error and output.
func runRanks(t *testing.T, kind gocu.Kind, devices []string) ([]error, []string) {
	t.Helper()
	id, err := dist.NewID(kind)
	if err != nil {
		t.Fatal(err)
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	errs := make([]error, len(devices))
	outs := make([]string, len(devices))
	var wg sync.WaitGroup
	for r, d := range devices {
		cmd := exec.CommandContext(ctx, exe, "-test.run=^$")
		cmd.Env = append(os.Environ(), envChild+"=1", envDevice+"="+d)
		cmd.Env = append(cmd.Env, dist.Env{ID: id, Rank: r, NRanks: len(devices), LocalRank: r}.Vars()...)
		wg.Go(func() {
			out, err := cmd.CombinedOutput()
			errs[r], outs[r] = err, string(out)
		})
	}
	wg.Wait()
	return errs, outs
}

func TestProcesses(t *testing.T) {
	if testing.Short() {
		t.Skip("starts processes")
	}
	errs, outs := runRanks(t, gocu.CPU, []string{"cpu", "cpu", "sim"})
	for r := range errs {
		t.Logf("rank %d: %s", r, strings.TrimSpace(outs[r]))
		if errs[r] != nil {
			t.Errorf("rank %d: %v", r, errs[r])
		}
	}
}

// Launch starts the ranks, shows rank 0's output and reports a failed rank
// with its output; the other ranks do not hang (the host backend reports
// the departed rank to them).
func TestLaunch(t *testing.T) {
	if testing.Short() {
		t.Skip("starts processes")
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv(envChild, "1")
	t.Setenv(envDevice, "cpu")
	var out strings.Builder
	if err := dist.Launch(context.Background(), exe, []string{"-test.run=^$"}, 3, gocu.CPU, &out); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "rank 0 of 3 on cpu (host)") || strings.Contains(out.String(), "rank 1") ||
		(os.Getenv("NCCL_NVLS_ENABLE") == "" && !strings.Contains(out.String(), "NCCL_NVLS_ENABLE=0")) {
		t.Errorf("rank 0's output: %q", out.String())
	}
	t.Setenv(envFailRank, "1")
	out.Reset()
	start := time.Now()
	err = dist.Launch(context.Background(), exe, []string{"-test.run=^$"}, 3, gocu.CPU, &out)
	if err == nil || !strings.Contains(err.Error(), "--- rank 1: exit status 1") || !strings.Contains(err.Error(), "rank 1 fails on purpose") {
		t.Fatalf("a failed rank: %v", err)
	}
	t.Logf("%v (after %v)", err, time.Since(start).Round(time.Millisecond))
}

func TestEnv(t *testing.T) {
	t.Setenv(dist.EnvRank, "")
	if _, ok, err := dist.FromEnv(); ok || err != nil {
		t.Fatalf("no rank: %v %v", ok, err)
	}
	id, _ := dist.ParseID("host:127.0.0.1:9/abc")
	for _, v := range (dist.Env{ID: id, Rank: 2, NRanks: 4, LocalRank: 0}).Vars() {
		name, val, _ := strings.Cut(v, "=")
		t.Setenv(name, val)
	}
	e, ok, err := dist.FromEnv()
	if !ok || err != nil || e.Rank != 2 || e.NRanks != 4 || e.LocalRank != 0 || e.ID.String() != id.String() {
		t.Fatalf("%+v %v %v", e, ok, err)
	}
	t.Setenv(dist.EnvLocalRank, "")
	if e, _, _ := dist.FromEnv(); e.LocalRank != 2 {
		t.Errorf("LOCAL_RANK defaults to RANK: %+v", e)
	}
	for _, bad := range [][2]string{{dist.EnvRank, "x"}, {dist.EnvRank, "4"}, {dist.EnvNRanks, ""}, {dist.EnvID, "nope"}} {
		t.Run(bad[0]+"="+bad[1], func(t *testing.T) {
			t.Setenv(bad[0], bad[1])
			if _, ok, err := dist.FromEnv(); !ok || err == nil {
				t.Errorf("%v %v", ok, err)
			}
		})
	}
	t.Setenv(dist.EnvID, "")
	if _, _, err := dist.FromEnv(); err == nil || !strings.Contains(err.Error(), "GOCU_DIST_ADDR") {
		t.Errorf("no id and no address: %v", err)
	}
}

// Rendezvous: rank 0 serves the id at an address, the others fetch it
// (here before rank 0 listens: they retry), and all join with it.
func TestRendezvous(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	const n = 3
	comms := make([]*dist.Comm, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for r := range n {
		wg.Go(func() {
			if r == 0 {
				time.Sleep(300 * time.Millisecond)
			}
			e := dist.Env{Addr: addr, Rank: r, NRanks: n, LocalRank: r}
			comms[r], errs[r] = e.Join(cpu)
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
	xs := make([]*array.Array, n)
	errs = each(comms, func(r int, c *dist.Comm) error {
		xs[r] = array.FromSliceOn(cpu, rankData(r, 9)).Copy()
		return c.AllReduce(dist.Sum, xs[r])
	})
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
	if got := values(t, xs[1]); !slices.Equal(got, want(dist.Sum, n, 9, false)) {
		t.Fatal(got)
	}
	each(comms, func(r int, c *dist.Comm) error { return c.Close() })
	if _, err := dist.Rendezvous(addr, 1, 2, gocu.CPU, 500*time.Millisecond); err == nil || !strings.Contains(err.Error(), "no rank 0") {
		t.Errorf("nobody at the address: %v", err)
	}
}

// childMain is one rank: it exits 0 when the collectives gave the right
// results.
func childMain() int {
	fail := func(format string, args ...any) int {
		fmt.Printf(format+"\n", args...)
		return 1
	}
	e, ok, err := dist.FromEnv()
	if !ok || err != nil {
		return fail("child: no job in the environment: %v", err)
	}
	name := os.Getenv(envDevice)
	if name == "" {
		name = "cuda:" + strconv.Itoa(e.LocalRank)
	}
	dev, err := gocu.Open(name)
	if err != nil {
		return fail("%v", err)
	}
	start := time.Now()
	c, err := e.Join(dev)
	if err != nil {
		return fail("rank %d: %v", e.Rank, err)
	}
	defer c.Close()
	joined := time.Since(start)
	if os.Getenv(envFailRank) == strconv.Itoa(e.Rank) {
		return fail("rank %d fails on purpose", e.Rank)
	}
	if os.Getenv(envStopRank) == strconv.Itoa(e.Rank) {
		stopSelf()
	}
	if os.Getenv(envKillRank) == strconv.Itoa(e.Rank) {
		killSelf()
	}
	if os.Getenv(envHangRank) != "" {
		return hangMain(e, c, dev)
	}
	if what := os.Getenv(envCheck); what != "" {
		return checkMain(what, e, c)
	}
	rank, nranks := e.Rank, e.NRanks
	const n = 1 << 16
	x := array.FromSliceOn(dev, rankData(rank, n)).AsType(array.Float32).Copy()
	y := array.FromSliceOn(dev, rankData(rank, 10)).AsType(array.Int64).Copy()
	err = c.Group(func() error {
		if err := c.AllReduce(dist.Sum, x); err != nil {
			return err
		}
		return c.Broadcast(nranks-1, y)
	})
	if err != nil {
		return fail("rank %d: %v", rank, err)
	}
	got, err := x.AsType(array.Float64).Float64s()
	if err != nil {
		return fail("rank %d: %v", rank, err)
	}
	if w := want(dist.Sum, nranks, n, false); !slices.Equal(got, w) {
		return fail("rank %d: all-reduce %v, want %v", rank, got[:5], w[:5])
	}
	if b, err := y.AsType(array.Float64).Float64s(); err != nil || !slices.Equal(b, rankData(nranks-1, 10)) {
		return fail("rank %d: broadcast %v %v", rank, b, err)
	}
	for _, op := range []dist.Op{dist.Sum, dist.Avg} {
		if err := checkScatterGather(c, array.Float32, op, 1000); err != nil {
			return fail("rank %d: %v", rank, err)
		}
	}
	if err := c.Close(); err != nil {
		return fail("rank %d: Close: %v", rank, err)
	}
	fmt.Printf("rank %d of %d on %v (%s): joined in %v, all-reduce, broadcast, reduce-scatter and all-gather right; NCCL_NVLS_ENABLE=%s\n", rank, nranks, dev, c.Backend(), joined.Round(time.Millisecond), os.Getenv("NCCL_NVLS_ENABLE"))
	return 0
}

// A rank stopped (SIGSTOP) after joining makes the others time out with an
// error naming it, and the launcher ends the job instead of waiting forever.
func TestLaunchStoppedRank(t *testing.T) {
	if testing.Short() {
		t.Skip("starts processes")
	}
	if !canStop {
		t.Skip("no SIGSTOP on this system")
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv(envChild, "1")
	t.Setenv(envDevice, "cpu")
	t.Setenv(envStopRank, "2")
	t.Setenv(dist.EnvTimeout, "1s")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	err = dist.Launch(ctx, exe, []string{"-test.run=^$"}, 3, gocu.CPU, nil)
	if ctx.Err() != nil {
		t.Fatalf("the launcher waited for the stopped rank: %v", err)
	}
	if err == nil || !strings.Contains(err.Error(), "rank 2 of 3 did not call a collective within 1s") {
		t.Fatalf("a stopped rank: %v", err)
	}
	if !errors.Is(err, dist.ErrTimeout) || !strings.HasPrefix(err.Error(), "dist: rank 2 of 3 stopped answering") {
		t.Fatalf("the launcher does not name the stopped rank first: %v", err)
	}
}

// A rank killed (SIGKILL) after joining: the others get ErrPeer from the
// host backend at once, and the launcher names the killed rank.
func TestLaunchKilledRank(t *testing.T) {
	if testing.Short() {
		t.Skip("starts processes")
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv(envChild, "1")
	t.Setenv(envDevice, "cpu")
	t.Setenv(envKillRank, "1")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	err = dist.Launch(ctx, exe, []string{"-test.run=^$"}, 3, gocu.CPU, nil)
	if ctx.Err() != nil {
		t.Fatalf("the launcher waited: %v", err)
	}
	if err == nil || !strings.Contains(err.Error(), "(rank 1 first)") || !strings.Contains(err.Error(), "--- rank 1: signal: killed") {
		t.Fatalf("a killed rank: %v", err)
	}
}

// runHung runs a job in which rank hang stops calling collectives after
// the first: every other rank must get ErrTimeout within a bounded time
// (hangMain checks it); the hung rank is killed once they are done.
func runHung(t *testing.T, kind gocu.Kind, devices []string, hang int) {
	t.Helper()
	t.Setenv(dist.EnvTimeout, "2s")
	t.Setenv(envHangRank, strconv.Itoa(hang))
	id, err := dist.NewID(kind)
	if err != nil {
		t.Fatal(err)
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	hctx, hcancel := context.WithCancel(ctx)
	defer hcancel()
	errs := make([]error, len(devices))
	outs := make([]string, len(devices))
	var wg, others sync.WaitGroup
	for r, d := range devices {
		c := ctx
		if r == hang {
			c = hctx
		} else {
			others.Add(1)
		}
		cmd := exec.CommandContext(c, exe, "-test.run=^$")
		cmd.Env = append(os.Environ(), envChild+"=1", envDevice+"="+d)
		cmd.Env = append(cmd.Env, dist.Env{ID: id, Rank: r, NRanks: len(devices), LocalRank: r}.Vars()...)
		wg.Go(func() {
			out, err := cmd.CombinedOutput()
			errs[r], outs[r] = err, string(out)
			if r != hang {
				others.Done()
			}
		})
	}
	others.Wait()
	hcancel()
	wg.Wait()
	if ctx.Err() != nil {
		t.Fatal("the ranks hung")
	}
	for r := range devices {
		t.Logf("rank %d: %s", r, strings.TrimSpace(outs[r]))
		if r != hang && errs[r] != nil {
			t.Errorf("rank %d: %v", r, errs[r])
		}
	}
}

// A rank that stops calling collectives (alive, not exited) on the host
// backend: the others get ErrTimeout naming it within the timeout.
func TestHungRank(t *testing.T) {
	if testing.Short() {
		t.Skip("starts processes")
	}
	runHung(t, gocu.CPU, []string{"cpu", "cpu", "cpu"}, 1)
}

// hangMain is a rank of runHung's job. After one all-reduce, the hung rank
// sleeps; the others all-reduce again, read the result (which returns once
// the watchdog aborted the communicator, on GPUs) and must find
// ErrTimeout, in the call or in Comm.Err, within a bound.
func hangMain(e dist.Env, c *dist.Comm, dev *gocu.Device) int {
	x := array.FromSliceOn(dev, rankData(e.Rank, 1<<10)).AsType(array.Float32).Copy()
	if err := c.AllReduce(dist.Sum, x); err != nil {
		fmt.Printf("rank %d: the first all-reduce: %v\n", e.Rank, err)
		return 1
	}
	if _, err := x.Float32s(); err != nil {
		fmt.Printf("rank %d: %v\n", e.Rank, err)
		return 1
	}
	if os.Getenv(envHangRank) == strconv.Itoa(e.Rank) {
		fmt.Printf("rank %d stops calling collectives\n", e.Rank)
		time.Sleep(time.Hour)
		return 1
	}
	start := time.Now()
	err := c.AllReduce(dist.Sum, x)
	if err == nil {
		_, rerr := x.Float32s()
		if err = c.Err(); err == nil {
			err = rerr
		}
	}
	took := time.Since(start)
	if !errors.Is(err, dist.ErrTimeout) || !errors.Is(err, dist.ErrPeer) {
		fmt.Printf("rank %d: after %v: %v, want ErrTimeout\n", e.Rank, took, err)
		return 1
	}
	if c.Backend() == "host" && !strings.Contains(err.Error(), "rank "+os.Getenv(envHangRank)) {
		fmt.Printf("rank %d: the error does not name the hung rank: %v\n", e.Rank, err)
		return 1
	}
	if took > 20*time.Second {
		fmt.Printf("rank %d: ErrTimeout after %v, more than the 2s timeout allows\n", e.Rank, took)
		return 1
	}
	if err := c.AllReduce(dist.Sum, x); !errors.Is(err, dist.ErrTimeout) {
		fmt.Printf("rank %d: a collective after the timeout: %v, want the same error\n", e.Rank, err)
		return 1
	}
	fmt.Printf("rank %d: ErrTimeout after %v: %v\n", e.Rank, took.Round(time.Millisecond), err)
	return 0
}

// checkMain runs one of the checks that tests run in one process, as one
// rank of a job.
func checkMain(what string, e dist.Env, c *dist.Comm) int {
	tol := 0.0
	if c.Backend() == "nccl" {
		tol = 1e-5
	}
	var err error
	switch what {
	case "ddp":
		err = checkDDP(c, 100, false, tol)
	case "zero":
		err = checkZeRO(c, 3, tol)
	default:
		err = fmt.Errorf("unknown check %q", what)
	}
	if err != nil {
		fmt.Printf("rank %d: %s: %v\n", e.Rank, what, err)
		return 1
	}
	if err := c.Close(); err != nil {
		fmt.Printf("rank %d: Close: %v\n", e.Rank, err)
		return 1
	}
	fmt.Printf("rank %d of %d (%s): %s right\n", e.Rank, e.NRanks, c.Backend(), what)
	return 0
}
