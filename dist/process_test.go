package dist_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gocu-dev/gocu"
	"github.com/gocu-dev/gocu/array"
	"github.com/gocu-dev/gocu/dist"
)

// The multi-process recipe on one host: the test makes an id and starts
// its own binary once per rank with the id in the environment; each child
// joins, all-reduces and broadcasts, and checks the results. With the
// host backend this runs in CI; on GPUs (TestGPUProcesses) it is one
// process per GPU through NCCL.

const (
	envChild  = "GOCU_DIST_TEST_CHILD"
	envID     = "GOCU_DIST_TEST_ID"
	envRank   = "GOCU_DIST_TEST_RANK"
	envNRanks = "GOCU_DIST_TEST_NRANKS"
	envDevice = "GOCU_DIST_TEST_DEVICE"
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
	done := make(chan struct{})
	for r, d := range devices {
		cmd := exec.CommandContext(ctx, exe, "-test.run=^$")
		cmd.Env = append(os.Environ(), envChild+"=1", envID+"="+id.String(), envRank+"="+strconv.Itoa(r),
			envNRanks+"="+strconv.Itoa(len(devices)), envDevice+"="+d)
		go func() {
			out, err := cmd.CombinedOutput()
			errs[r], outs[r] = err, string(out)
			done <- struct{}{}
		}()
	}
	for range devices {
		<-done
	}
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

// childMain is one rank: it exits 0 when the collectives gave the right
// results.
func childMain() int {
	fail := func(format string, args ...any) int {
		fmt.Printf(format+"\n", args...)
		return 1
	}
	id, err := dist.ParseID(os.Getenv(envID))
	if err != nil {
		return fail("%v", err)
	}
	rank, _ := strconv.Atoi(os.Getenv(envRank))
	nranks, _ := strconv.Atoi(os.Getenv(envNRanks))
	dev, err := gocu.Open(os.Getenv(envDevice))
	if err != nil {
		return fail("%v", err)
	}
	start := time.Now()
	c, err := dist.Join(id, nranks, rank, dev)
	if err != nil {
		return fail("rank %d: %v", rank, err)
	}
	defer c.Close()
	joined := time.Since(start)
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
	if err := c.Close(); err != nil && !errors.Is(err, dist.ErrClosed) {
		return fail("rank %d: Close: %v", rank, err)
	}
	fmt.Printf("rank %d of %d on %v (%s): joined in %v, all-reduce and broadcast right\n", rank, nranks, dev, c.Backend(), joined.Round(time.Millisecond))
	return 0
}
