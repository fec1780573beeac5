package nccl_test

// Tests on real GPUs with the real libnccl. They skip, saying why, where
// there is no CUDA device or no NCCL. Inputs are random (the seed is
// logged), outputs are poisoned first, and results are compared with a
// float64 reference computed on the host.
//
// Every GPU test's name starts with TestGPU. On the GPU machine (built with
// ../shared/tools/gpu-bundle, which has no Go toolchain):
//
//	cd nccl && ../.gpu/nccl.test -test.run TestGPU -test.v
//	cd nccl && ../.gpu/nccl.test -test.run '^$' -test.bench AllReduce
//
// With a toolchain: go test ./nccl -run TestGPU -v, and
// go test ./nccl -run '^$' -bench AllReduce.

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gocu-dev/gocu/cuda"
	"github.com/gocu-dev/gocu/internal/gputest"
	"github.com/gocu-dev/gocu/nccl"
)

func TestMain(m *testing.M) {
	if os.Getenv(envChild) != "" {
		os.Exit(childMain())
	}
	os.Exit(m.Run())
}

// gpus returns every device, or skips without a GPU or without NCCL.
func gpus(t testing.TB) []*cuda.Device {
	t.Helper()
	gputest.Need(t, cuda.Init())
	gputest.Need(t, nccl.Load())
	devs, err := cuda.Devices()
	if err != nil {
		t.Fatal(err)
	}
	return devs
}

var versionLogged = false

func logVersion(t testing.TB) {
	if versionLogged {
		return
	}
	versionLogged = true
	ma, mi, pa, _ := nccl.Version()
	p, _ := nccl.LibraryPath()
	t.Logf("NCCL %d.%d.%d from %s", ma, mi, pa, p)
}

func newRand(t testing.TB) *rand.Rand {
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	return rand.New(rand.NewPCG(seed, 0x9e3779b97f4a7c15))
}

// world is a communicator with one rank per device of this process, a
// blocking stream per rank (ordered with the copies on the default stream)
// and helpers to move data.
type world struct {
	t       testing.TB
	devs    []*cuda.Device
	comms   []*nccl.Comm
	streams []*cuda.Stream
}

func newWorld(t testing.TB, devs []*cuda.Device) *world {
	t.Helper()
	comms, err := nccl.InitAll(devs)
	if err != nil {
		t.Fatalf("InitAll on %d devices: %v", len(devs), err)
	}
	w := &world{t: t, devs: devs, comms: comms}
	for _, d := range devs {
		s, err := d.NewStream(cuda.StreamDefault)
		if err != nil {
			t.Fatal(err)
		}
		w.streams = append(w.streams, s)
	}
	t.Cleanup(func() {
		for i, c := range w.comms {
			if err := w.streams[i].Synchronize(); err != nil {
				t.Errorf("rank %d: %v", i, err)
			}
			if err := c.Destroy(); err != nil && !errors.Is(err, nccl.ErrDestroyed) {
				t.Errorf("Destroy rank %d: %v", i, err)
			}
			_ = w.streams[i].Close()
		}
	})
	return w
}

// all issues f for every rank inside one group.
func (w *world) all(f func(r int, c *nccl.Comm, s *cuda.Stream) error) {
	w.t.Helper()
	err := nccl.Group(func() error {
		for r, c := range w.comms {
			if err := f(r, c, w.streams[r]); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		w.t.Fatal(err)
	}
	for _, s := range w.streams {
		if err := s.Synchronize(); err != nil {
			w.t.Fatal(err)
		}
	}
}

// upload copies host data to new device memory, freed when the test ends.
func upload[T any](t testing.TB, d *cuda.Device, host []T) *cuda.Memory {
	t.Helper()
	m, err := cuda.AllocSlice[T](d, len(host))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = d.Synchronize(); _ = m.Free() })
	if err := cuda.CopyHtoD(m, host); err != nil {
		t.Fatal(err)
	}
	return m
}

func download[T any](t testing.TB, m *cuda.Memory, n int) []T {
	t.Helper()
	out := make([]T, n)
	if err := cuda.CopyDtoH(out, m); err != nil {
		t.Fatal(err)
	}
	return out
}

func poison32(n int) []float32 {
	p := make([]float32, n)
	for i := range p {
		p[i] = float32(math.NaN())
	}
	return p
}

func randoms(r *rand.Rand, n int) []float32 {
	out := make([]float32, n)
	for i := range out {
		out[i] = float32(r.Float64()*2 - 1)
	}
	return out
}

// reduceRef reduces the ranks' inputs in float64 and returns, per element,
// the result and the error scale Σ|x|.
func reduceRef(in [][]float32, op nccl.RedOp) (ref, scale []float64) {
	n := len(in[0])
	ref, scale = make([]float64, n), make([]float64, n)
	for i := range n {
		acc := float64(in[0][i])
		s := math.Abs(acc)
		for r := 1; r < len(in); r++ {
			x := float64(in[r][i])
			s += math.Abs(x)
			switch op {
			case nccl.Sum, nccl.Avg:
				acc += x
			case nccl.Prod:
				acc *= x
				s = math.Abs(acc)
			case nccl.Max:
				acc = max(acc, x)
			case nccl.Min:
				acc = min(acc, x)
			}
		}
		if op == nccl.Avg {
			acc /= float64(len(in))
			s /= float64(len(in))
		}
		ref[i], scale[i] = acc, s
	}
	return ref, scale
}

// near checks got against the reference with float32 rounding of nranks
// additions (and the division of Avg).
func near(t testing.TB, what string, got []float32, ref, scale []float64, nranks int) {
	t.Helper()
	tol := float64(nranks+3) * 0x1p-23
	for i, g := range got {
		if math.IsNaN(float64(g)) || math.Abs(float64(g)-ref[i]) > tol*scale[i]+1e-30 {
			t.Fatalf("%s: element %d = %v, want %v (allowed error %.3g)", what, i, g, ref[i], tol*scale[i])
		}
	}
}

// TestGPUSingleRank runs every collective on a one-rank communicator on
// device 0, where each is a copy (Avg divides by one), out of place and in
// place, on a created stream and on the default stream.
func TestGPUSingleRank(t *testing.T) {
	devs := gpus(t)
	logVersion(t)
	testCollectives(t, devs[:1])
}

// TestGPUAllDevices runs every collective across all the GPUs of the host
// from this one process (InitAll), with a Group per collective.
func TestGPUAllDevices(t *testing.T) {
	devs := gpus(t)
	if len(devs) < 2 {
		t.Skipf("%d GPU: the multi-rank test needs 2 or more", len(devs))
	}
	logVersion(t)
	testCollectives(t, devs)
}

func testCollectives(t *testing.T, devs []*cuda.Device) {
	w := newWorld(t, devs)
	rng := newRand(t)
	const n = 4099 // odd, so no size is a multiple of a vector width
	nr := len(devs)
	in := make([][]float32, nr)
	send := make([]*cuda.Memory, nr)
	recv := make([]*cuda.Memory, nr)
	big := make([]*cuda.Memory, nr) // nr*n elements
	for r, d := range devs {
		in[r] = randoms(rng, n)
		send[r] = upload(t, d, in[r])
		recv[r] = upload(t, d, poison32(n))
		big[r] = upload(t, d, poison32(nr*n))
	}
	repoison := func(ms []*cuda.Memory, count int) {
		for _, m := range ms {
			if err := cuda.CopyHtoD(m, poison32(count)); err != nil {
				t.Fatal(err)
			}
		}
	}

	for _, op := range []nccl.RedOp{nccl.Sum, nccl.Prod, nccl.Max, nccl.Min, nccl.Avg} {
		repoison(recv, n)
		w.all(func(r int, c *nccl.Comm, s *cuda.Stream) error {
			return c.AllReduce(send[r], recv[r], n, nccl.Float32, op, s)
		})
		ref, scale := reduceRef(in, op)
		for r := range devs {
			near(t, fmt.Sprintf("AllReduce %v rank %d", op, r), download[float32](t, recv[r], n), ref, scale, nr)
		}
	}

	root := nr - 1
	repoison(recv, n)
	w.all(func(r int, c *nccl.Comm, s *cuda.Stream) error {
		if r != root {
			return c.Broadcast(nil, recv[r], n, nccl.Float32, root, s) // send is not read off the root
		}
		return c.Broadcast(send[r], recv[r], n, nccl.Float32, root, s)
	})
	for r := range devs {
		if got := download[float32](t, recv[r], n); !slices.Equal(got, in[root]) {
			t.Fatalf("Broadcast from %d: rank %d differs", root, r)
		}
	}

	root = 0
	repoison(recv, n)
	w.all(func(r int, c *nccl.Comm, s *cuda.Stream) error {
		return c.Reduce(send[r], recv[r], n, nccl.Float32, nccl.Sum, root, s)
	})
	ref, scale := reduceRef(in, nccl.Sum)
	near(t, "Reduce", download[float32](t, recv[root], n), ref, scale, nr)
	for r := range devs {
		if r != root && !allNaN(download[float32](t, recv[r], n)) {
			t.Errorf("Reduce wrote recv on rank %d, which is not the root", r)
		}
	}

	w.all(func(r int, c *nccl.Comm, s *cuda.Stream) error {
		return c.AllGather(send[r], big[r], n, nccl.Float32, s)
	})
	want := slices.Concat(in...)
	for r := range devs {
		if got := download[float32](t, big[r], nr*n); !slices.Equal(got, want) {
			t.Fatalf("AllGather: rank %d differs", r)
		}
	}

	// ReduceScatter: rank r's input is the gathered data shifted by r, so
	// every block of the result differs.
	bigIn := make([][]float32, nr)
	for r := range devs {
		bigIn[r] = randoms(rng, nr*n)
		if err := cuda.CopyHtoD(big[r], bigIn[r]); err != nil {
			t.Fatal(err)
		}
	}
	repoison(recv, n)
	w.all(func(r int, c *nccl.Comm, s *cuda.Stream) error {
		return c.ReduceScatter(big[r], recv[r], n, nccl.Float32, nccl.Sum, s)
	})
	ref, scale = reduceRef(bigIn, nccl.Sum)
	for r := range devs {
		near(t, fmt.Sprintf("ReduceScatter rank %d", r), download[float32](t, recv[r], n), ref[r*n:(r+1)*n], scale[r*n:(r+1)*n], nr)
	}

	// In place, on the default stream (nil), on a view: the middle n
	// elements of 3n, whose neighbours must keep their poison.
	wide := make([]*cuda.Memory, nr)
	views := make([]*cuda.Memory, nr)
	for r, d := range devs {
		wide[r] = upload(t, d, poison32(3*n))
		v, err := wide[r].View(4*n, 4*n)
		if err != nil {
			t.Fatal(err)
		}
		views[r] = v
		if err := cuda.CopyHtoD(v, in[r]); err != nil {
			t.Fatal(err)
		}
	}
	if err := nccl.Group(func() error {
		for r, c := range w.comms {
			if err := c.AllReduce(views[r], views[r], n, nccl.Float32, nccl.Sum, nil); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	ref, scale = reduceRef(in, nccl.Sum)
	for r, d := range devs {
		if err := d.Synchronize(); err != nil {
			t.Fatal(err)
		}
		got := download[float32](t, wide[r], 3*n)
		near(t, "in-place AllReduce on the default stream", got[n:2*n], ref, scale, nr)
		if !allNaN(got[:n]) || !allNaN(got[2*n:]) {
			t.Fatalf("in-place AllReduce wrote outside its view on rank %d", r)
		}
	}

	// Send/Recv in a ring, in one group: rank r sends to r+1 and receives
	// from r-1 (with one rank, to and from itself).
	repoison(recv, n)
	w.all(func(r int, c *nccl.Comm, s *cuda.Stream) error {
		if err := c.Send(send[r], n, nccl.Float32, (r+1)%nr, s); err != nil {
			return err
		}
		return c.Recv(recv[r], n, nccl.Float32, (r+nr-1)%nr, s)
	})
	for r := range devs {
		if got := download[float32](t, recv[r], n); !slices.Equal(got, in[(r+nr-1)%nr]) {
			t.Fatalf("Send/Recv ring: rank %d did not get rank %d's data", r, (r+nr-1)%nr)
		}
	}
	for r, c := range w.comms {
		if err := c.AsyncError(); err != nil {
			t.Errorf("rank %d: AsyncError after the collectives: %v", r, err)
		}
	}
}

func allNaN(x []float32) bool {
	for _, v := range x {
		if !math.IsNaN(float64(v)) {
			return false
		}
	}
	return true
}

// TestGPUDataTypes all-reduces (sums) each data type across all GPUs (one
// rank with one GPU) with small integer values, which every type holds
// exactly, and all-gathers the FP8 types where NCCL has them.
func TestGPUDataTypes(t *testing.T) {
	devs := gpus(t)
	logVersion(t)
	w := newWorld(t, devs)
	nr := len(devs)
	const n = 1001
	// value(r, i) is a small integer; every partial sum over up to 8 ranks
	// is exact in every type: at most 32 in magnitude (bf16 holds integers
	// to 256, int8 to 127), and for FP8 at most 8 (e5m2 holds integers to
	// 8 exactly, e4m3 to 16).
	value := func(dt nccl.DataType, r, i int) int {
		if dt == nccl.Float8E4M3 || dt == nccl.Float8E5M2 {
			return (i+r)%3 - 1
		}
		return (i+r)%9 - 4
	}
	sum := func(dt nccl.DataType, i int) int {
		s := 0
		for r := range nr {
			s += value(dt, r, i)
		}
		return s
	}
	for _, dt := range []nccl.DataType{nccl.Int8, nccl.Uint8, nccl.Int32, nccl.Uint32, nccl.Int64, nccl.Uint64,
		nccl.Float16, nccl.Float32, nccl.Float64, nccl.BFloat16, nccl.Float8E4M3, nccl.Float8E5M2} {
		t.Run(dt.String(), func(t *testing.T) {
			if !dt.Supported() {
				t.Skipf("%v needs a newer NCCL", dt)
			}
			unsigned := dt == nccl.Uint8 || dt == nccl.Uint32 || dt == nccl.Uint64
			fp8 := dt == nccl.Float8E4M3 || dt == nccl.Float8E5M2
			enc := func(v int) []byte { return encode(dt, v) }
			bufs := make([]*cuda.Memory, nr)
			for r, d := range devs {
				var host []byte
				for i := range n {
					v := value(dt, r, i)
					if unsigned {
						v += 4 // 0..8, sums stay unsigned
					}
					host = append(host, enc(v)...)
				}
				bufs[r] = upload(t, d, host)
			}
			major, _ := devs[0].ComputeCapability()
			if fp8 && major < 9 {
				// Reductions of FP8 need sm_90; NCCL must refuse cleanly.
				err := nccl.Group(func() error {
					for r, c := range w.comms {
						if err := c.AllReduce(bufs[r], bufs[r], n, dt, nccl.Sum, w.streams[r]); err != nil {
							return err
						}
					}
					return nil
				})
				t.Logf("FP8 all-reduce on %s (NCCL needs sm_90 for FP8 reductions): %v", devs[0].Arch(), err)
				return
			}
			w.all(func(r int, c *nccl.Comm, s *cuda.Stream) error {
				return c.AllReduce(bufs[r], bufs[r], n, dt, nccl.Sum, s)
			})
			for r := range devs {
				got := download[byte](t, bufs[r], n*dt.Size())
				for i := range n {
					want := sum(dt, i)
					if unsigned {
						want += 4 * nr
					}
					if g := got[i*dt.Size() : (i+1)*dt.Size()]; !slices.Equal(g, enc(want)) {
						t.Fatalf("rank %d element %d: bytes %x, want %x (%d)", r, i, g, enc(want), want)
					}
				}
			}
		})
	}
}

// encode returns v in dt's bytes (little endian), for small integers.
func encode(dt nccl.DataType, v int) []byte {
	var b []byte
	switch dt {
	case nccl.Int8, nccl.Uint8:
		return []byte{byte(v)}
	case nccl.Int32, nccl.Uint32:
		return le(uint64(uint32(int32(v))), 4)
	case nccl.Int64, nccl.Uint64:
		return le(uint64(int64(v)), 8)
	case nccl.Float32:
		return le(uint64(math.Float32bits(float32(v))), 4)
	case nccl.Float64:
		return le(math.Float64bits(float64(v)), 8)
	case nccl.BFloat16:
		return le(uint64(math.Float32bits(float32(v))>>16), 2)
	case nccl.Float16:
		return le(uint64(smallFloat(v, 5, 10)), 2)
	case nccl.Float8E4M3:
		return []byte{byte(smallFloat(v, 4, 3))}
	case nccl.Float8E5M2:
		return []byte{byte(smallFloat(v, 5, 2))}
	}
	return b
}

func le(x uint64, n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(x >> (8 * i))
	}
	return b
}

// smallFloat encodes an integer that the format holds exactly, with ebits
// exponent bits and mbits mantissa bits (bias 2^(ebits-1)-1).
func smallFloat(v, ebits, mbits int) uint32 {
	if v == 0 {
		return 0
	}
	var sign uint32
	if v < 0 {
		sign, v = 1, -v
	}
	e := 0
	for 1<<(e+1) <= v {
		e++
	}
	mant := uint32((v - 1<<e) << mbits >> e)
	bias := 1<<(ebits-1) - 1
	return sign<<(ebits+mbits) | uint32(e+bias)<<mbits | mant
}

// TestGPUInitRank creates communicators with NewUniqueID and InitRank in
// this process: one rank alone (then Finalize and Destroy), one rank per
// GPU from one goroutine each, and one rank per GPU inside one Group.
func TestGPUInitRank(t *testing.T) {
	devs := gpus(t)
	check := func(what string, comms []*nccl.Comm) {
		t.Helper()
		nr := len(comms)
		xs := make([]*cuda.Memory, nr)
		for r, c := range comms {
			if c.Rank() != r || c.Size() != nr || c.Device() != devs[r] {
				t.Fatalf("%s: comm %d is %v", what, r, c)
			}
			xs[r] = upload(t, devs[r], []float32{float32(r + 1), 1})
		}
		if err := nccl.Group(func() error {
			for r, c := range comms {
				if err := c.AllReduce(xs[r], xs[r], 2, nccl.Float32, nccl.Sum, nil); err != nil {
					return err
				}
			}
			return nil
		}); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		for r := range comms {
			if got := download[float32](t, xs[r], 2); got[0] != float32(nr*(nr+1)/2) || got[1] != float32(nr) {
				t.Fatalf("%s: rank %d got %v", what, r, got)
			}
		}
	}

	id, err := nccl.NewUniqueID()
	if err != nil {
		t.Fatal(err)
	}
	c, err := nccl.InitRank(id, 1, 0, devs[0])
	if err != nil {
		t.Fatalf("InitRank alone: %v", err)
	}
	check("one rank", []*nccl.Comm{c})
	if err := c.Finalize(); err != nil {
		t.Errorf("Finalize: %v", err)
	}
	if err := c.Destroy(); err != nil {
		t.Errorf("Destroy after Finalize: %v", err)
	}

	nr := len(devs)
	comms := make([]*nccl.Comm, nr)
	errs := make(chan error, nr)
	id, _ = nccl.NewUniqueID()
	for r := range devs {
		go func() {
			var err error
			comms[r], err = nccl.InitRank(id, nr, r, devs[r])
			errs <- err
		}()
	}
	for range devs {
		if err := <-errs; err != nil {
			t.Fatalf("InitRank from %d goroutines: %v", nr, err)
		}
	}
	check(fmt.Sprintf("%d goroutines", nr), comms)
	for _, c := range comms {
		if err := c.Destroy(); err != nil {
			t.Error(err)
		}
	}

	id, _ = nccl.NewUniqueID()
	if err := nccl.Group(func() error {
		for r := range devs {
			var err error
			if comms[r], err = nccl.InitRank(id, nr, r, devs[r]); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		t.Fatalf("InitRank for %d ranks in one Group: %v", nr, err)
	}
	check(fmt.Sprintf("%d ranks in one Group", nr), comms)
	for _, c := range comms {
		if err := c.Destroy(); err != nil {
			t.Error(err)
		}
	}
}

// TestGPUGroupCancel: a Group whose function fails (or panics, or whose
// nested Group fails) after a collective launches nothing (the output
// keeps its poison), and the communicator goes on working. With NCCL
// 2.28.3 the former cancellation (an invalid call inside the group) let
// ncclGroupEnd launch the queued work: "the cancelled group ran: [1 2 3 4]".
func TestGPUGroupCancel(t *testing.T) {
	devs := gpus(t)
	w := newWorld(t, devs[:1])
	in := []float32{1, 2, 3, 4}
	send := upload(t, devs[0], in)
	recv := upload(t, devs[0], poison32(4))
	planned := errors.New("the caller changed its mind")
	err := nccl.Group(func() error {
		if err := w.comms[0].AllReduce(send, recv, 4, nccl.Float32, nccl.Sum, w.streams[0]); err != nil {
			return err
		}
		return planned
	})
	if !errors.Is(err, planned) {
		t.Fatalf("Group returned %v", err)
	}
	if err := w.streams[0].Synchronize(); err != nil {
		t.Fatal(err)
	}
	if got := download[float32](t, recv, 4); !allNaN(got) {
		t.Fatalf("the cancelled group ran: %v", got)
	}
	// A panic drops the group too; so does a nested Group that fails.
	func() {
		defer func() { _ = recover() }()
		_ = nccl.Group(func() error {
			_ = w.comms[0].AllReduce(send, recv, 4, nccl.Float32, nccl.Sum, w.streams[0])
			panic("boom")
		})
	}()
	err = nccl.Group(func() error {
		_ = nccl.Group(func() error {
			_ = w.comms[0].AllReduce(send, recv, 4, nccl.Float32, nccl.Sum, w.streams[0])
			return planned
		})
		return nil
	})
	if !errors.Is(err, nccl.ErrCancelled) || !errors.Is(err, planned) {
		t.Fatalf("outer Group of a failed inner one: %v", err)
	}
	// A communicator created in a dropped Group never reaches NCCL.
	id, err := nccl.NewUniqueID()
	if err != nil {
		t.Fatal(err)
	}
	var made *nccl.Comm
	err = nccl.Group(func() error {
		var err error
		if made, err = nccl.InitRank(id, 1, 0, devs[0]); err != nil {
			return err
		}
		return planned
	})
	if !errors.Is(err, planned) || made == nil {
		t.Fatalf("Group with InitRank: %v", err)
	}
	if err := made.AllReduce(send, recv, 4, nccl.Float32, nccl.Sum, nil); !errors.Is(err, nccl.ErrDestroyed) {
		t.Fatalf("comm of a dropped Group: %v", err)
	}
	if err := made.Destroy(); err != nil {
		t.Fatalf("Destroy of a comm never made: %v", err)
	}
	if err := w.streams[0].Synchronize(); err != nil {
		t.Fatal(err)
	}
	if got := download[float32](t, recv, 4); !allNaN(got) {
		t.Fatalf("a dropped group ran: %v", got)
	}
	w.all(func(r int, c *nccl.Comm, s *cuda.Stream) error {
		return c.AllReduce(send, recv, 4, nccl.Float32, nccl.Sum, s)
	})
	if got := download[float32](t, recv, 4); !slices.Equal(got, in) {
		t.Fatalf("after the cancelled group: %v", got)
	}
}

// TestGPUAbort: create, use, abort, and create again in the same process.
func TestGPUAbort(t *testing.T) {
	devs := gpus(t)
	in := []float32{1, 2, 3, 4}
	for round := range 3 {
		comms, err := nccl.InitAll(devs[:1])
		if err != nil {
			t.Fatalf("round %d: InitAll: %v", round, err)
		}
		c := comms[0]
		x := upload(t, devs[0], in)
		if err := c.AllReduce(x, x, 4, nccl.Float32, nccl.Sum, nil); err != nil {
			t.Fatalf("round %d: %v", round, err)
		}
		if err := devs[0].Synchronize(); err != nil {
			t.Fatal(err)
		}
		if got := download[float32](t, x, 4); !slices.Equal(got, in) {
			t.Fatalf("round %d: %v", round, got)
		}
		if err := c.Abort(); err != nil {
			t.Fatalf("round %d: Abort: %v", round, err)
		}
		if err := c.AllReduce(x, x, 4, nccl.Float32, nccl.Sum, nil); !errors.Is(err, nccl.ErrDestroyed) {
			t.Fatalf("round %d: use after Abort: %v", round, err)
		}
	}
}

// TestGPUSeveralRanksOneGPU finds out what this NCCL does with two ranks
// of one communicator on one GPU, in one process (InitAll with device 0
// twice) and in two processes. It passes either way and logs the answer;
// a refusal must be a clean error that leaves the process usable.
func TestGPUSeveralRanksOneGPU(t *testing.T) {
	devs := gpus(t)
	logVersion(t)
	ma, mi, pa, _ := nccl.Version()
	dev := devs[0]

	comms, err := nccl.InitAll([]*cuda.Device{dev, dev})
	if err != nil {
		var e *nccl.Error
		if !errors.As(err, &e) {
			t.Fatalf("InitAll(dev0, dev0) failed with %T, not an *nccl.Error: %v", err, err)
		}
		t.Logf("RESULT NCCL %d.%d.%d, one process, InitAll with device 0 twice: refused: %v", ma, mi, pa, err)
	} else {
		x := []*cuda.Memory{upload(t, dev, []float32{1, 2}), upload(t, dev, []float32{10, 20})}
		err := nccl.Group(func() error {
			for r, c := range comms {
				if err := c.AllReduce(x[r], x[r], 2, nccl.Float32, nccl.Sum, nil); err != nil {
					return err
				}
			}
			return nil
		})
		if err == nil {
			err = syncTimeout(dev, 30*time.Second)
		}
		var got []float32
		if err == nil {
			got = download[float32](t, x[1], 2)
		}
		t.Logf("RESULT NCCL %d.%d.%d, one process, InitAll with device 0 twice: accepted; all-reduce: err %v, got %v (want [11 22])", ma, mi, pa, err, got)
		for _, c := range comms {
			_ = c.Destroy()
		}
	}
	// The process is still usable.
	w := newWorld(t, devs[:1])
	x := upload(t, dev, []float32{5})
	w.all(func(r int, c *nccl.Comm, s *cuda.Stream) error {
		return c.AllReduce(x, x, 1, nccl.Float32, nccl.Sum, s)
	})
	if got := download[float32](t, x, 1); got[0] != 5 {
		t.Fatalf("after the one-GPU attempt: %v", got)
	}

	// Two processes on one GPU; with NCCL 2.30 and newer also with
	// NCCL_MULTI_RANK_GPU_ENABLE=1, which that version reads.
	envs := [][]string{nil}
	if ma > 2 || mi >= 30 {
		envs = append(envs, []string{"NCCL_MULTI_RANK_GPU_ENABLE=1"})
	}
	for _, env := range envs {
		res := runChildren(t, []int{0, 0}, env, 90*time.Second)
		t.Logf("RESULT NCCL %d.%d.%d, two processes on device 0 %v: %s", ma, mi, pa, env, res.summary())
		for _, o := range res.outs {
			if o.code == 0 || o.code == childInitFailed {
				continue
			}
			if env != nil {
				// Opted in: NCCL's documentation warns of hangs; report them.
				t.Logf("with %v a child neither worked nor failed cleanly (exit %d):\n%s", env, o.code, o.text)
				continue
			}
			t.Errorf("a child neither worked nor failed cleanly (exit %d):\n%s", o.code, o.text)
		}
	}
}

// syncTimeout waits for the device, failing after d (a hang with two ranks
// on one GPU is what NCCL's documentation warns of).
func syncTimeout(dev *cuda.Device, d time.Duration) error {
	done := make(chan error, 1)
	go func() { done <- dev.Synchronize() }()
	select {
	case err := <-done:
		return err
	case <-time.After(d):
		return fmt.Errorf("the device did not finish within %v (hang)", d)
	}
}

// TestGPUProcessPerGPU is the multi-node recipe on one host: this test
// makes a unique id and starts the test binary once per GPU, passing the
// id in an environment variable; each child creates its rank with
// InitRank, all-reduces and all-gathers, and checks the result.
func TestGPUProcessPerGPU(t *testing.T) {
	devs := gpus(t)
	logVersion(t)
	ords := make([]int, len(devs))
	for i := range ords {
		ords[i] = i
	}
	res := runChildren(t, ords, nil, 180*time.Second)
	t.Logf("%d processes: %s", len(ords), res.summary())
	for r, o := range res.outs {
		if o.code != 0 {
			t.Errorf("rank %d exited %d:\n%s", r, o.code, o.text)
		}
	}
}

// The child protocol: the parent sets these variables and starts its own
// test binary, whose TestMain runs childMain instead of the tests.
const (
	envChild  = "GOCU_NCCL_TEST_CHILD"
	envID     = "GOCU_NCCL_TEST_ID"
	envRank   = "GOCU_NCCL_TEST_RANK"
	envNRanks = "GOCU_NCCL_TEST_NRANKS"
	envDevice = "GOCU_NCCL_TEST_DEVICE"

	childInitFailed = 3 // InitRank returned an error (a clean refusal)
)

type childOut struct {
	code int
	text string
}

type childResults struct{ outs []childOut }

func (c childResults) summary() string {
	var b strings.Builder
	for r, o := range c.outs {
		last := strings.TrimSpace(o.text)
		if i := strings.LastIndexByte(last, '\n'); i >= 0 {
			last = last[i+1:]
		}
		fmt.Fprintf(&b, "\n  rank %d: exit %d: %s", r, o.code, last)
	}
	return b.String()
}

// runChildren starts one child per entry of devices (rank r on device
// devices[r]) with a fresh unique id, and waits for all of them.
func runChildren(t *testing.T, devices []int, env []string, limit time.Duration) childResults {
	t.Helper()
	id, err := nccl.NewUniqueID()
	if err != nil {
		t.Fatalf("NewUniqueID: %v", err)
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	outs := make([]childOut, len(devices))
	done := make(chan int, len(devices))
	for r, d := range devices {
		cmd := exec.CommandContext(ctx, exe, "-test.run=^$")
		cmd.Env = append(os.Environ(), env...)
		cmd.Env = append(cmd.Env, envChild+"=1", envID+"="+id.String(),
			envRank+"="+strconv.Itoa(r), envNRanks+"="+strconv.Itoa(len(devices)), envDevice+"="+strconv.Itoa(d))
		go func() {
			out, err := cmd.CombinedOutput()
			code := 0
			var ee *exec.ExitError
			if errors.As(err, &ee) {
				code = ee.ExitCode()
			} else if err != nil {
				code = -1
				out = append(out, []byte("\n"+err.Error())...)
			}
			if ctx.Err() != nil {
				out = append(out, []byte(fmt.Sprintf("\nkilled after %v (hang)", limit))...)
			}
			outs[r] = childOut{code: code, text: string(out)}
			done <- r
		}()
	}
	for range devices {
		<-done
	}
	return childResults{outs: outs}
}

// childMain is one rank of TestGPUProcessPerGPU or of the two-process
// one-GPU test. It prints what it did and exits 0 when the results are
// right, childInitFailed when InitRank failed, 1 otherwise.
func childMain() int {
	out := bufio.NewWriter(os.Stdout)
	defer out.Flush()
	fail := func(code int, format string, args ...any) int {
		fmt.Fprintf(out, format+"\n", args...)
		return code
	}
	id, err := nccl.ParseUniqueID(os.Getenv(envID))
	if err != nil {
		return fail(1, "child: %v", err)
	}
	rank, _ := strconv.Atoi(os.Getenv(envRank))
	nranks, _ := strconv.Atoi(os.Getenv(envNRanks))
	ord, _ := strconv.Atoi(os.Getenv(envDevice))
	dev, err := cuda.DeviceAt(ord)
	if err != nil {
		return fail(1, "child: %v", err)
	}
	start := time.Now()
	c, err := nccl.InitRank(id, nranks, rank, dev)
	if err != nil {
		return fail(childInitFailed, "rank %d on cuda:%d: InitRank failed cleanly: %v", rank, ord, err)
	}
	defer c.Destroy()
	initTime := time.Since(start)
	s, err := dev.NewStream(cuda.StreamNonBlocking)
	if err != nil {
		return fail(1, "child: %v", err)
	}
	defer s.Close()
	const n = 1 << 20
	x := make([]float32, n)
	for i := range x {
		x[i] = float32((rank + 1) * (1 + i%7)) // small integers: the sum is exact
	}
	buf, err := cuda.AllocSlice[float32](dev, n)
	if err != nil {
		return fail(1, "child: %v", err)
	}
	gathered, err := cuda.AllocSlice[float32](dev, nranks)
	if err != nil {
		return fail(1, "child: %v", err)
	}
	if err := cuda.CopyHtoD(buf, x); err != nil {
		return fail(1, "child: %v", err)
	}
	if err := dev.Synchronize(); err != nil { // the copy, before a non-blocking stream reads it
		return fail(1, "child: %v", err)
	}
	if err := c.AllReduce(buf, buf, n, nccl.Float32, nccl.Sum, s); err != nil {
		return fail(1, "rank %d: AllReduce: %v", rank, err)
	}
	// Each rank contributes its rank number, from the first element of a view.
	one, _ := buf.View(0, 4)
	if err := s.Synchronize(); err != nil {
		return fail(1, "rank %d: %v", rank, err)
	}
	if err := cuda.CopyDtoH(x, buf); err != nil {
		return fail(1, "child: %v", err)
	}
	tri := nranks * (nranks + 1) / 2
	for i, v := range x {
		if want := float32(tri * (1 + i%7)); v != want {
			return fail(1, "rank %d: AllReduce element %d = %v, want %v", rank, i, v, want)
		}
	}
	if err := cuda.CopyHtoD(one, []float32{float32(rank)}); err != nil {
		return fail(1, "child: %v", err)
	}
	if err := dev.Synchronize(); err != nil {
		return fail(1, "child: %v", err)
	}
	if err := c.AllGather(one, gathered, 1, nccl.Float32, s); err != nil {
		return fail(1, "rank %d: AllGather: %v", rank, err)
	}
	if err := s.Synchronize(); err != nil {
		return fail(1, "rank %d: %v", rank, err)
	}
	g := make([]float32, nranks)
	if err := cuda.CopyDtoH(g, gathered); err != nil {
		return fail(1, "child: %v", err)
	}
	for r, v := range g {
		if v != float32(r) {
			return fail(1, "rank %d: AllGather got %v", rank, g)
		}
	}
	if err := c.AsyncError(); err != nil {
		return fail(1, "rank %d: AsyncError: %v", rank, err)
	}
	return fail(0, "rank %d of %d on cuda:%d: ok (InitRank %v, all-reduce of %d floats and all-gather right)", rank, nranks, ord, initTime.Round(time.Millisecond), n)
}

// BenchmarkAllReduce measures float32 sum all-reduce across all GPUs of the
// host from one process (one rank per GPU, out of place), at sizes from
// 8 B to 1 GiB: the median GPU time of one all-reduce, timed with CUDA
// events on every rank's stream after a warm-up, and the bandwidths as
// nccl-tests computes them: algbw = bytes/time, busbw = algbw*2(n-1)/n
// (0 with one GPU). The 8 B figure is the latency.
func BenchmarkAllReduce(b *testing.B) {
	devs := gpus(b)
	logVersion(b)
	w := newWorld(b, devs)
	nr := len(devs)
	const maxBytes = 1 << 30
	send := make([]*cuda.Memory, nr)
	recv := make([]*cuda.Memory, nr)
	start := make([]*cuda.Event, nr)
	end := make([]*cuda.Event, nr)
	for r, d := range devs {
		var err error
		if send[r], err = d.Alloc(maxBytes); err != nil {
			b.Fatal(err)
		}
		if recv[r], err = d.Alloc(maxBytes); err != nil {
			b.Fatal(err)
		}
		if err := send[r].MemsetD32(math.Float32bits(1)); err != nil {
			b.Fatal(err)
		}
		if start[r], err = d.NewEvent(cuda.EventDefault); err != nil {
			b.Fatal(err)
		}
		if end[r], err = d.NewEvent(cuda.EventDefault); err != nil {
			b.Fatal(err)
		}
	}
	b.Cleanup(func() {
		for r, d := range devs {
			_ = d.Synchronize()
			_ = send[r].Free()
			_ = recv[r].Free()
			_ = start[r].Close()
			_ = end[r].Close()
		}
	})
	sizes := []int{8}
	for s := 16; s <= maxBytes; s *= 4 {
		sizes = append(sizes, s)
	}
	for _, size := range sizes {
		count := size / 4
		b.Run(byteSize(size), func(b *testing.B) {
			op := func() error {
				return nccl.Group(func() error {
					for r, c := range w.comms {
						if err := c.AllReduce(send[r], recv[r], count, nccl.Float32, nccl.Sum, w.streams[r]); err != nil {
							return err
						}
					}
					return nil
				})
			}
			warm := 20
			if size >= 64<<20 {
				warm = 5
			}
			for range warm {
				if err := op(); err != nil {
					b.Fatal(err)
				}
			}
			for _, s := range w.streams {
				if err := s.Synchronize(); err != nil {
					b.Fatal(err)
				}
			}
			var times []float64 // seconds
			for b.Loop() {
				for r := range devs {
					if err := start[r].Record(w.streams[r]); err != nil {
						b.Fatal(err)
					}
				}
				if err := op(); err != nil {
					b.Fatal(err)
				}
				slowest := 0.0
				for r := range devs {
					if err := end[r].Record(w.streams[r]); err != nil {
						b.Fatal(err)
					}
				}
				for r := range devs {
					if err := end[r].Synchronize(); err != nil {
						b.Fatal(err)
					}
					d, err := cuda.Elapsed(start[r], end[r])
					if err != nil {
						b.Fatal(err)
					}
					slowest = max(slowest, d.Seconds())
				}
				times = append(times, slowest)
			}
			slices.Sort(times)
			med := times[len(times)/2]
			algbw := float64(size) / med / 1e9
			busbw := algbw * 2 * float64(nr-1) / float64(nr)
			b.ReportMetric(med*1e6, "us/allreduce")
			b.ReportMetric(algbw, "algGB/s")
			b.ReportMetric(busbw, "busGB/s")
			b.ReportMetric(float64(nr), "ranks")
		})
	}
}

func byteSize(n int) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%dGiB", n>>30)
	case n >= 1<<20:
		return fmt.Sprintf("%dMiB", n>>20)
	case n >= 1<<10:
		return fmt.Sprintf("%dKiB", n>>10)
	}
	return fmt.Sprintf("%dB", n)
}
