package dist

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/gocu-dev/gocu"
)

// The environment of one process of a job, as torchrun's RANK, WORLD_SIZE,
// LOCAL_RANK and MASTER_ADDR.
const (
	EnvID        = "GOCU_DIST_ID"         // the id's text (from NewID in the launcher)
	EnvAddr      = "GOCU_DIST_ADDR"       // or host:port where rank 0 serves the id (Rendezvous)
	EnvRank      = "GOCU_DIST_RANK"       // this process's rank, 0 to NRANKS-1
	EnvNRanks    = "GOCU_DIST_NRANKS"     // the number of ranks (processes)
	EnvLocalRank = "GOCU_DIST_LOCAL_RANK" // the rank among the processes of this host: its GPU (default RANK)
)

// Env is one process's place in a job of one process per rank.
type Env struct {
	ID        ID     // the job's id, or
	Addr      string // the rendezvous address where rank 0 serves it
	Rank      int
	NRanks    int
	LocalRank int // which GPU of the host: cuda:LocalRank
}

// FromEnv reads the process's Env from GOCU_DIST_*; ok is false when
// GOCU_DIST_RANK is not set (the process is not a rank of a job).
func FromEnv() (e Env, ok bool, err error) {
	rs := os.Getenv(EnvRank)
	if rs == "" {
		return Env{}, false, nil
	}
	bad := func(name, v string) error {
		return fmt.Errorf("dist: %s=%q: want a number", name, v)
	}
	if e.Rank, err = strconv.Atoi(rs); err != nil {
		return e, true, bad(EnvRank, rs)
	}
	ns := os.Getenv(EnvNRanks)
	if e.NRanks, err = strconv.Atoi(ns); err != nil {
		return e, true, bad(EnvNRanks, ns)
	}
	if e.NRanks < 1 || e.NRanks > maxRanks {
		return e, true, fmt.Errorf("dist: %s=%d: want 1 to %d ranks", EnvNRanks, e.NRanks, maxRanks)
	}
	if e.Rank < 0 || e.Rank >= e.NRanks {
		return e, true, fmt.Errorf("dist: %s=%d is out of range for %s=%d", EnvRank, e.Rank, EnvNRanks, e.NRanks)
	}
	e.LocalRank = e.Rank
	if ls := os.Getenv(EnvLocalRank); ls != "" {
		if e.LocalRank, err = strconv.Atoi(ls); err != nil || e.LocalRank < 0 {
			return e, true, bad(EnvLocalRank, ls)
		}
	}
	e.Addr = os.Getenv(EnvAddr)
	if s := os.Getenv(EnvID); s != "" {
		if e.ID, err = ParseID(s); err != nil {
			return e, true, fmt.Errorf("dist: %s: %w", EnvID, err)
		}
	} else if e.Addr == "" {
		return e, true, fmt.Errorf("dist: %s is set but neither %s nor %s says where the job's id is", EnvRank, EnvID, EnvAddr)
	}
	return e, true, nil
}

// Vars returns e as environment assignments ("GOCU_DIST_RANK=1", ...).
func (e Env) Vars() []string {
	v := []string{EnvRank + "=" + strconv.Itoa(e.Rank), EnvNRanks + "=" + strconv.Itoa(e.NRanks), EnvLocalRank + "=" + strconv.Itoa(e.LocalRank)}
	if s := e.ID.String(); s != "" {
		v = append(v, EnvID+"="+s)
	}
	if e.Addr != "" {
		v = append(v, EnvAddr+"="+e.Addr)
	}
	return v
}

// Join joins the job on dev: with the id, or through Rendezvous at Addr
// (waiting up to 5 minutes for rank 0).
func (e Env) Join(dev *gocu.Device) (*Comm, error) {
	id := e.ID
	if id.String() == "" {
		var err error
		if id, err = Rendezvous(e.Addr, e.Rank, e.NRanks, dev.Kind(), 5*time.Minute); err != nil {
			return nil, err
		}
	}
	return Join(id, e.NRanks, e.Rank, dev)
}

// Rendezvous hands the job's id to every rank through one TCP address that
// all of them reach, as torch's MASTER_ADDR: rank 0 makes the id (NewID of
// kind), listens at addr and serves the id's text to the other nranks-1
// ranks, in the background; the others connect, retrying until timeout,
// and read it. It is the out-of-band channel for jobs that span hosts
// (addr is then rank 0's host and a free port). Anyone who reaches addr
// gets the id: use it on a trusted network.
func Rendezvous(addr string, rank, nranks int, kind gocu.Kind, timeout time.Duration) (ID, error) {
	if rank == 0 {
		id, err := NewID(kind)
		if err != nil {
			return ID{}, err
		}
		ln, err := net.Listen("tcp", addr)
		if err != nil {
			return ID{}, fmt.Errorf("dist: Rendezvous: %w", err)
		}
		go func() {
			defer ln.Close()
			for served := 0; served < nranks-1; {
				c, err := ln.Accept()
				if err != nil {
					return
				}
				_ = c.SetDeadline(time.Now().Add(10 * time.Second))
				if _, err := fmt.Fprintf(c, "%s\n", id); err == nil {
					served++
				}
				c.Close()
			}
		}()
		return id, nil
	}
	deadline := time.Now().Add(timeout)
	for {
		c, err := net.DialTimeout("tcp", addr, 10*time.Second)
		if err == nil {
			_ = c.SetDeadline(time.Now().Add(10 * time.Second))
			line, rerr := bufio.NewReader(c).ReadString('\n')
			c.Close()
			if rerr == nil {
				return ParseID(line)
			}
			err = rerr
		}
		if time.Now().After(deadline) {
			return ID{}, fmt.Errorf("dist: Rendezvous: rank %d found no rank 0 at %s within %v: %w", rank, addr, timeout, err)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// Launch runs a job of nranks processes on this host, as torchrun does:
// it makes the id for devices of kind (NewID: for GPUs this process asks
// NCCL, it opens no GPU), starts exe with args nranks times, each with its
// Env in the environment (rank r is LocalRank r: cuda:r) and NVLink
// multicast off (NCCL_NVLS_ENABLE=0, unless set: the lent H200 machines
// need it, see nvls below), copies rank 0's
// output to out, and waits for all. When one fails the others are
// stopped, and the error names the rank and ends with its last lines of
// output (of every rank that failed: one that fails makes the others fail
// too, when they find it gone). A rank that stops answering (stopped or
// hung, not exited) makes the others time out (GOCU_DIST_TIMEOUT): Launch
// then waits a few seconds for every rank to end, names those that have
// not, and ends them; the error matches ErrTimeout. It recognises a rank
// that timed out by ErrTimeout's text in its output: print errors.
// ctx stops the job.
func Launch(ctx context.Context, exe string, args []string, nranks int, kind gocu.Kind, out io.Writer) error {
	if nranks < 1 || nranks > maxRanks {
		return fmt.Errorf("dist: Launch: %d ranks: want 1 to %d", nranks, maxRanks)
	}
	id, err := NewID(kind)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	type result struct {
		rank int
		err  error
	}
	done := make(chan result, nranks)
	tails := make([]*tail, nranks)
	for r := range nranks {
		cmd := exec.CommandContext(ctx, exe, args...)
		cmd.Env = append(os.Environ(), Env{ID: id, Rank: r, NRanks: nranks, LocalRank: r}.Vars()...)
		if _, set := os.LookupEnv("NCCL_NVLS_ENABLE"); !set {
			cmd.Env = append(cmd.Env, "NCCL_NVLS_ENABLE=0")
		}
		tails[r] = &tail{}
		if r == 0 && out != nil {
			cmd.Stdout = io.MultiWriter(out, tails[r])
		} else {
			cmd.Stdout = tails[r]
		}
		cmd.Stderr = cmd.Stdout
		if err := cmd.Start(); err != nil {
			cancel()
			return fmt.Errorf("dist: Launch: rank %d: %w", r, err)
		}
		go func() { done <- result{r, cmd.Wait()} }()
	}
	var failed []result
	exited := make([]bool, nranks)
	var grace <-chan time.Time
	var suspects []int
	cancelled := false
	stop := func() {
		if !cancelled {
			cancel() // a job with a failed rank cannot go on
			cancelled = true
		}
	}
	for running := nranks; running > 0; {
		select {
		case res := <-done:
			running--
			exited[res.rank] = true
			if res.err == nil {
				continue
			}
			var ee *exec.ExitError
			if cancelled && errors.As(res.err, &ee) && !ee.Exited() {
				continue // stopped by us after another rank failed
			}
			failed = append(failed, res)
			if !strings.Contains(tails[res.rank].String(), timeoutText) {
				stop()
			} else if grace == nil && !cancelled {
				// The rank timed out waiting for another: give the others
				// time to time out too, and name those that do not.
				grace = time.After(launchGrace)
			}
		case <-grace:
			grace = nil
			for r, x := range exited {
				if !x {
					suspects = append(suspects, r)
				}
			}
			stop()
		}
	}
	if len(failed) == 0 {
		return nil
	}
	var b strings.Builder
	for _, f := range failed {
		fmt.Fprintf(&b, "\n--- rank %d: %v\n%s", f.rank, f.err, tails[f.rank].String())
	}
	if len(suspects) > 0 {
		ok := func(r int) bool { return !slices.Contains(suspects, r) }
		who := "it was"
		if len(suspects) > 1 {
			who = "they were"
		}
		return fmt.Errorf("dist: %s of %d stopped answering: %d ranks timed out waiting for a collective (%s), and %s still running %v later, neither failed nor done: stopped or hung; the job was ended: %w%s",
			missing(nranks, ok), nranks, len(failed), EnvTimeout, who, launchGrace, ErrTimeout, b.String())
	}
	return fmt.Errorf("dist: %d of %d ranks failed (rank %d first): %w%s", len(failed), nranks, failed[0].rank, failed[0].err, b.String())
}

// nvls: NCCL's NVLink SHARP (multicast) needs the fabric manager's
// multicast support, which the lent multi-GPU machines lack: NCCL then
// fails to create communicators. Launch turns it off in the ranks it
// starts; a process driving several GPUs itself must be started with
// NCCL_NVLS_ENABLE=0 (NCCL reads the C environment, which os.Setenv does
// not change without cgo).

// timeoutText is in the output of a rank that reported ErrTimeout.
var timeoutText = ErrTimeout.Error()

// launchGrace is how long Launch waits, after a rank timed out, for the
// others to end before it names those still running.
const launchGrace = 5 * time.Second

// tail keeps the last lines written to it.
type tail struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (t *tail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.b.Write(p)
	if t.b.Len() > 64<<10 {
		keep := t.b.Bytes()[t.b.Len()-32<<10:]
		t.b = *bytes.NewBuffer(append([]byte(nil), keep...))
	}
	return len(p), nil
}

// String returns the last 20 lines.
func (t *tail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	lines := strings.Split(strings.TrimRight(t.b.String(), "\n"), "\n")
	if len(lines) > 20 {
		lines = lines[len(lines)-20:]
	}
	return strings.Join(lines, "\n")
}
