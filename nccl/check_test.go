package nccl

import (
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/gocu-dev/gocu/cuda"
)

// These tests need no GPU and no NCCL. The communicator's library has no
// entry points: were a check to let a call through, purego would panic
// ("fn is nil") and the test would fail.

func noLib() *lib { return &lib{version: 22605, major: 2, minor: 26, patch: 5} }

// testComm is rank `rank` of `size` on device 0 with a library that must
// not be called.
func testComm(rank, size int) *Comm {
	return &Comm{lib: noLib(), handle: 0xc0, rank: rank, size: size, ordinal: 0}
}

func buf(size int) mem { return mem{ptr: 0x7000_0000, size: size, device: 0} }

var defStream = stream{isNil: true}

// wantArg checks an ArgError that mentions every fragment.
func wantArg(t *testing.T, err error, fragments ...string) {
	t.Helper()
	if !errors.Is(err, ErrInvalidArgument) {
		t.Fatalf("err = %v, want one matching ErrInvalidArgument", err)
	}
	var ae *ArgError
	if !errors.As(err, &ae) {
		t.Fatalf("err = %T %v, want an *ArgError", err, err)
	}
	for _, f := range fragments {
		if !strings.Contains(err.Error(), f) {
			t.Errorf("%q lacks %q", err.Error(), f)
		}
	}
}

func TestNilComm(t *testing.T) {
	var c *Comm
	m := memOf(nil)
	wantArg(t, c.allReduce(m, m, 1, Float32, Sum, defStream), "ncclAllReduce", "nil *Comm")
	wantArg(t, c.broadcast(m, m, 1, Float32, 0, defStream), "nil *Comm")
	wantArg(t, c.reduce(m, m, 1, Float32, Sum, 0, defStream), "nil *Comm")
	wantArg(t, c.allGather(m, m, 1, Float32, defStream), "nil *Comm")
	wantArg(t, c.reduceScatter(m, m, 1, Float32, Sum, defStream), "nil *Comm")
	wantArg(t, c.sendRecv("ncclSend", m, 1, Float32, 0, defStream), "nil *Comm")
	// The exported methods too: a nil *cuda.Memory and *cuda.Stream are fine
	// to describe.
	wantArg(t, c.AllReduce(nil, nil, 1, Float32, Sum, nil), "nil *Comm")
	wantArg(t, c.Recv(nil, 1, Float32, 0, nil), "ncclRecv", "nil *Comm")
	wantArg(t, c.Destroy(), "ncclCommDestroy")
	wantArg(t, c.Abort(), "ncclCommAbort")
	wantArg(t, c.Finalize(), "ncclCommFinalize")
	wantArg(t, c.AsyncError(), "ncclCommGetAsyncError")
	if c.String() != "nccl.Comm(nil)" {
		t.Error(c.String())
	}
}

func TestUseAfterDestroyAbortOrFailedGroup(t *testing.T) {
	for _, c := range []struct {
		state int32
		frag  string
	}{{stateDestroyed, "was destroyed"}, {stateAborted, "was aborted"}, {stateFailed, "never created"}} {
		comm := testComm(0, 1)
		comm.state.Store(c.state)
		err := comm.AllReduce(nil, nil, 1, Float32, Sum, nil)
		wantArg(t, err, c.frag, "rank 0 of 1 on cuda:0")
		if !errors.Is(err, ErrDestroyed) {
			t.Errorf("%v does not match ErrDestroyed", err)
		}
	}
	// A comm of a failed group is released without calling NCCL, once.
	comm := testComm(0, 1)
	markFailed([]*Comm{comm}, errors.New("boom"))
	if err := comm.AllGather(nil, nil, 1, Int8, nil); !strings.Contains(err.Error(), "boom") {
		t.Errorf("the cause is lost: %v", err)
	}
	if err := comm.Destroy(); err != nil {
		t.Errorf("Destroy of a failed comm: %v", err)
	}
	if err := comm.Destroy(); !errors.Is(err, ErrDestroyed) {
		t.Errorf("second Destroy: %v", err)
	}
}

func TestBufferChecks(t *testing.T) {
	c := testComm(0, 2)
	small := buf(15)
	wantArg(t, c.allReduce(buf(16), small, 4, Float32, Sum, defStream), "recv holds 15 bytes, the call needs 16")
	wantArg(t, c.allReduce(small, buf(16), 4, Float32, Sum, defStream), "send holds 15 bytes")
	wantArg(t, c.allReduce(mem{isNil: true}, buf(16), 4, Float32, Sum, defStream), "send is nil")
	freed := buf(64)
	freed.freed = true
	err := c.allReduce(buf(64), freed, 4, Float32, Sum, defStream)
	wantArg(t, err, "recv was freed")
	if !errors.Is(err, cuda.ErrFreed) {
		t.Errorf("%v does not match cuda.ErrFreed", err)
	}
	other := buf(64)
	other.device = 1
	wantArg(t, c.allReduce(other, buf(64), 4, Float32, Sum, defStream), "send is on cuda:1", "on cuda:0")
	// Sizes follow the type: 4 float64 need 32 bytes.
	wantArg(t, c.allReduce(buf(32), buf(31), 4, Float64, Sum, defStream), "needs 32")
	wantArg(t, c.allReduce(buf(8), buf(7), 4, BFloat16, Sum, defStream), "needs 8")
	// AllGather's recv holds size*sendCount; ReduceScatter's send too.
	wantArg(t, c.allGather(buf(16), buf(31), 4, Float32, defStream), "recv holds 31 bytes, the call needs 32")
	wantArg(t, c.reduceScatter(buf(31), buf(16), 4, Float32, Sum, defStream), "send holds 31 bytes, the call needs 32")
	wantArg(t, c.sendRecv("ncclSend", buf(3), 1, Float32, 1, defStream), "ncclSend", "buf holds 3 bytes")
	// Broadcast reads send on the root only, Reduce writes recv on the root
	// only: a nil one elsewhere is fine, a too small one on the root is not.
	wantArg(t, c.broadcast(mem{isNil: true}, buf(16), 4, Float32, 0, defStream), "send is nil")
	wantArg(t, c.reduce(buf(16), mem{isNil: true}, 4, Float32, Sum, 0, defStream), "recv is nil")
	wantArg(t, c.broadcast(buf(16), buf(16), 4, Float32, 2, defStream), "root 2 is out of range [0, 2)")
	wantArg(t, c.reduce(buf(16), buf(16), 4, Float32, Sum, -1, defStream), "root -1 is out of range")
	wantArg(t, c.sendRecv("ncclRecv", buf(16), 4, Float32, 2, defStream), "peer 2 is out of range")
}

func TestCountChecks(t *testing.T) {
	c := testComm(0, 4)
	wantArg(t, c.allReduce(buf(16), buf(16), -1, Float32, Sum, defStream), "count is negative (-1)")
	wantArg(t, c.allReduce(buf(16), buf(16), math.MaxInt/2, Float32, Sum, defStream), "overflows")
	wantArg(t, c.allReduce(buf(16), buf(16), math.MaxInt, Int8, Sum, defStream), "needs")
	// size*sendCount overflows even though sendCount alone does not.
	wantArg(t, c.allGather(buf(16), buf(16), math.MaxInt/2, Int8, defStream), "overflows")
	wantArg(t, c.reduceScatter(buf(16), buf(16), math.MaxInt/2, Int8, Sum, defStream), "overflows")
	wantArg(t, c.sendRecv("ncclSend", buf(16), -5, Int8, 0, defStream), "negative")
}

func TestTypeOpAndStreamChecks(t *testing.T) {
	c := testComm(0, 2)
	wantArg(t, c.allReduce(buf(16), buf(16), 4, DataType(99), Sum, defStream), "unknown data type 99")
	wantArg(t, c.allReduce(buf(16), buf(16), 4, Float32, RedOp(7), defStream), "unknown reduction 7")
	wantArg(t, c.reduceScatter(buf(16), buf(16), 1, Float32, RedOp(-1), defStream), "unknown reduction -1")
	c.lib = &lib{version: 22300, major: 2, minor: 23}
	err := c.allGather(buf(16), buf(32), 16, Float8E4M3, defStream)
	if !errors.Is(err, ErrNotSupported) {
		t.Errorf("FP8 on NCCL 2.23: %v", err)
	}
	c.lib = noLib()
	closed := stream{handle: 0x5, device: 0, closed: true}
	err = c.allReduce(buf(16), buf(16), 4, Float32, Sum, closed)
	wantArg(t, err, "the stream was closed")
	if !errors.Is(err, cuda.ErrClosed) {
		t.Errorf("%v does not match cuda.ErrClosed", err)
	}
	wantArg(t, c.broadcast(buf(16), buf(16), 4, Float32, 0, stream{handle: 0x5, device: 3}), "the stream is on cuda:3")
}

func TestCreationChecks(t *testing.T) {
	id := UniqueID{}
	wantArg(t, func() error { _, err := InitRank(id, 2, 0, nil); return err }(), "ncclCommInitRank", "nil device")
	for _, c := range []struct{ n, r int }{{0, 0}, {-1, 0}, {2, 2}, {2, -1}} {
		wantArg(t, checkRanks("ncclCommInitRank", c.n, c.r), "ncclCommInitRank")
	}
	if err := checkRanks("ncclCommInitRank", 8, 7); err != nil {
		t.Error(err)
	}
	wantArg(t, func() error { _, err := InitAll(nil); return err }(), "ncclCommInitAll", "no devices")
	wantArg(t, func() error { _, err := InitAll([]*cuda.Device{nil}); return err }(), "devices[0] is nil")
	wantArg(t, Group(nil), "nil function")
}

func TestMemOf(t *testing.T) {
	if m := memOf(nil); !m.isNil {
		t.Error("memOf(nil)")
	}
	if s := streamOf(nil); !s.isNil {
		t.Error("streamOf(nil)")
	}
}
