package nccl

// Tests of the real call path against testdata/fake_nccl.c, a stand-in for
// libnccl with NCCL's C ABI, built with the system C compiler (they skip
// without one). They check what crosses the boundary: the 128-byte unique
// id passed by value, every argument of every call, error strings, and
// Group's cancellation, without a GPU.

import (
	"errors"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"unsafe"

	"github.com/ebitengine/purego"
	"github.com/gocu-dev/gocu/cuda"
)

type fakeLib struct {
	*lib
	last, failNext uintptr
}

var fakeMu sync.Mutex // the fake's state is global: one test at a time

// openFake builds the fake with extra compiler flags and loads it through
// GOCU_NCCL_LIB, as a user would.
func openFake(t *testing.T, flags ...string) (*fakeLib, error) {
	t.Helper()
	cc := ""
	for _, name := range []string{"cc", "gcc", "clang", "clang-16"} {
		if p, err := exec.LookPath(name); err == nil {
			cc = p
			break
		}
	}
	if cc == "" {
		t.Skip("no C compiler to build the fake libnccl")
	}
	so := filepath.Join(t.TempDir(), "libnccl.so.2")
	args := append([]string{"-shared", "-fPIC", "-O1", "-o", so, "testdata/fake_nccl.c"}, flags...)
	if out, err := exec.Command(cc, args...).CombinedOutput(); err != nil {
		t.Fatalf("building the fake: %v\n%s", err, out)
	}
	t.Setenv("GOCU_NCCL_LIB", so)
	l, err := open(spec)
	if err != nil {
		return nil, err
	}
	h, err := purego.Dlopen(so, purego.RTLD_NOW|purego.RTLD_LOCAL)
	if err != nil {
		t.Fatal(err)
	}
	f := &fakeLib{lib: l}
	if f.last, err = purego.Dlsym(h, "fakeLast"); err != nil {
		t.Fatal(err)
	}
	if f.failNext, err = purego.Dlsym(h, "fakeFailNext"); err != nil {
		t.Fatal(err)
	}
	return f, nil
}

func fake(t *testing.T) *fakeLib {
	t.Helper()
	fakeMu.Lock()
	t.Cleanup(fakeMu.Unlock)
	f, err := openFake(t)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

type lastCall struct {
	name     string
	args     [8]uint64
	id       UniqueID
	launches int
}

func (f *fakeLib) lastCall() lastCall {
	var name [64]byte
	var lc lastCall
	r, _, _ := purego.SyscallN(f.last, uintptr(unsafe.Pointer(&name[0])), uintptr(unsafe.Pointer(&lc.args[0])), uintptr(unsafe.Pointer(&lc.id[0])))
	lc.name, _, _ = strings.Cut(string(name[:]), "\x00")
	lc.launches = int(int32(r))
	return lc
}

// failWith makes the fake's next call return code, with msg as its last
// error.
func (f *fakeLib) failWith(code Result, msg string) {
	b := append([]byte(msg), 0)
	purego.SyscallN(f.failNext, uintptr(code), uintptr(unsafe.Pointer(&b[0])))
	runtime.KeepAlive(b)
}

func (f *fakeLib) comm(t *testing.T, nranks, rank int) *Comm {
	t.Helper()
	id, err := newUniqueID(f.lib)
	if err != nil {
		t.Fatal(err)
	}
	c, err := initRank(f.lib, id, nranks, rank, nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestFakeLoadsAndReportsVersion(t *testing.T) {
	f := fake(t)
	if f.major != 2 || f.minor != 26 || f.patch != 5 || !strings.HasSuffix(f.path, "libnccl.so.2") {
		t.Errorf("version %d.%d.%d from %s", f.major, f.minor, f.patch, f.path)
	}
}

func TestFakeTooOldOrIncomplete(t *testing.T) {
	fakeMu.Lock()
	defer fakeMu.Unlock()
	_, err := openFake(t, "-DFAKE_VERSION=21306")
	if !errors.Is(err, ErrNoLibrary) || !strings.Contains(err.Error(), "NCCL 2.13.6 is too old: gocu needs NCCL 2.14 or newer") {
		t.Errorf("2.13.6: %v", err)
	}
	_, err = openFake(t, "-DNO_RECV")
	if !errors.Is(err, ErrNoLibrary) || !strings.Contains(err.Error(), "symbol ncclRecv not found") {
		t.Errorf("no ncclRecv: %v", err)
	}
}

// The unique id travels by value (128 bytes on the stack on amd64): the
// fake must see exactly the bytes Go passed, and the ranks after it.
func TestFakeInitRankPassesTheIDByValue(t *testing.T) {
	f := fake(t)
	id, err := newUniqueID(f.lib)
	if err != nil {
		t.Fatal(err)
	}
	for i := range id {
		if id[i] != byte(i*7+3) {
			t.Fatalf("ncclGetUniqueId's bytes were not returned: byte %d = %d", i, id[i])
		}
	}
	id[0], id[127] = 0xAB, 0xCD // not what the fake made: the fake must see ours
	c, err := initRank(f.lib, id, 4, 3, nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	lc := f.lastCall()
	if lc.name != "ncclCommInitRank" || lc.id != id || lc.args[0] != 4 || lc.args[1] != 3 {
		t.Fatalf("the fake saw %s nranks %d rank %d id %x...%x", lc.name, lc.args[0], lc.args[1], lc.id[:4], lc.id[124:])
	}
	if c.Rank() != 3 || c.Size() != 4 || c.handle == 0 || c.String() != "nccl.Comm(rank 3 of 4 on cuda:0)" {
		t.Errorf("comm %v handle %#x", c, c.handle)
	}
}

func TestFakeCollectivesPassTheirArguments(t *testing.T) {
	f := fake(t)
	c := f.comm(t, 2, 1)
	h := uint64(c.handle)
	s := stream{handle: 0x5150, device: 0}
	send, recv := mem{ptr: 0x1000, size: 1 << 20}, mem{ptr: 0x2000, size: 1 << 20}
	for _, tc := range []struct {
		run  func() error
		name string
		args []uint64
	}{
		{func() error { return c.allReduce(send, recv, 100, Float32, Avg, s) }, "ncclAllReduce",
			[]uint64{0x1000, 0x2000, 100, 7, 4, h, 0x5150}},
		{func() error { return c.broadcast(send, recv, 33, BFloat16, 1, defStream) }, "ncclBroadcast",
			[]uint64{0x1000, 0x2000, 33, 9, 1, h, 0}},
		// Not the root: send may be nil and goes as NULL.
		{func() error { return c.broadcast(mem{isNil: true}, recv, 33, Int64, 0, s) }, "ncclBroadcast",
			[]uint64{0, 0x2000, 33, 4, 0, h, 0x5150}},
		{func() error { return c.reduce(send, mem{isNil: true}, 5, Float64, Max, 0, s) }, "ncclReduce",
			[]uint64{0x1000, 0, 5, 8, 2, 0, h, 0x5150}},
		{func() error { return c.allGather(send, recv, 1000, Uint8, s) }, "ncclAllGather",
			[]uint64{0x1000, 0x2000, 1000, 1, h, 0x5150}},
		{func() error { return c.reduceScatter(send, recv, 64, Int32, Min, s) }, "ncclReduceScatter",
			[]uint64{0x1000, 0x2000, 64, 2, 3, h, 0x5150}},
		{func() error { return c.sendRecv("ncclSend", send, 7, Float16, 0, s) }, "ncclSend",
			[]uint64{0x1000, 7, 6, 0, h, 0x5150}},
		{func() error { return c.sendRecv("ncclRecv", recv, 7, Uint64, 0, s) }, "ncclRecv",
			[]uint64{0x2000, 7, 5, 0, h, 0x5150}},
		// A zero count needs no buffer.
		{func() error { return c.allReduce(mem{isNil: true}, mem{isNil: true}, 0, Float32, Sum, s) }, "ncclAllReduce",
			[]uint64{0, 0, 0, 7, 0, h, 0x5150}},
	} {
		if err := tc.run(); err != nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		lc := f.lastCall()
		if lc.name != tc.name {
			t.Errorf("called %s, want %s", lc.name, tc.name)
			continue
		}
		for i, want := range tc.args {
			if lc.args[i] != want {
				t.Errorf("%s argument %d = %#x, want %#x", tc.name, i, lc.args[i], want)
			}
		}
	}
}

func TestFakeErrorsCarryNCCLsWords(t *testing.T) {
	f := fake(t)
	c := f.comm(t, 2, 0)
	f.failWith(InvalidUsage, "Duplicate GPU detected : rank 0 and rank 1 both on CUDA device 1000")
	err := c.allReduce(buf(64), buf(64), 16, Float32, Sum, defStream)
	var e *Error
	if !errors.As(err, &e) || !errors.Is(err, ErrInvalidUsage) {
		t.Fatalf("err = %v", err)
	}
	if e.Func != "ncclAllReduce" || e.Comm != "rank 0 of 2 on cuda:0" ||
		e.Msg != "invalid usage (run with NCCL_DEBUG=WARN for details)" || !strings.Contains(e.Detail, "Duplicate GPU") {
		t.Errorf("%#v", e)
	}
	// NCCL never clears its last warning: the next error must not repeat it.
	f.failWith(RemoteError, "")
	err = c.allReduce(buf(64), buf(64), 16, Float32, Sum, defStream)
	if !errors.As(err, &e) || !errors.Is(err, ErrRemote) || e.Detail != "" {
		t.Errorf("second error %v (detail %q)", err, e.Detail)
	}
	// A code NCCL does not know keeps the built-in description.
	f.failWith(Timeout, "")
	err = c.allReduce(buf(64), buf(64), 16, Float32, Sum, defStream)
	if !errors.Is(err, ErrTimeout) || !strings.Contains(err.Error(), "timed out") {
		t.Errorf("timeout: %v", err)
	}
	// An async error comes back as an *Error too.
	f.failWith(RemoteError, "peer 1 closed the connection")
	if err := c.AsyncError(); !errors.Is(err, ErrRemote) || !strings.Contains(err.Error(), "peer 1 closed") {
		t.Errorf("AsyncError: %v", err)
	}
	if err := c.AsyncError(); err != nil {
		t.Errorf("AsyncError with none: %v", err)
	}
	// A failed init returns no comm.
	f.failWith(SystemError, "socket: no route to host")
	if c, err := initRank(f.lib, UniqueID{}, 2, 1, nil, 0); c != nil || !errors.Is(err, ErrSystem) {
		t.Errorf("failed init: %v %v", c, err)
	}
}

func TestFakeDestroyAbortFinalize(t *testing.T) {
	f := fake(t)
	c := f.comm(t, 1, 0)
	if err := c.Finalize(); err != nil || f.lastCall().name != "ncclCommFinalize" {
		t.Errorf("Finalize: %v", err)
	}
	if err := c.Destroy(); err != nil || f.lastCall().name != "ncclCommDestroy" || f.lastCall().args[0] != uint64(c.handle) {
		t.Errorf("Destroy: %v %+v", err, f.lastCall())
	}
	if err := c.Destroy(); !errors.Is(err, ErrDestroyed) {
		t.Errorf("second Destroy: %v", err)
	}
	if err := c.Abort(); !errors.Is(err, ErrDestroyed) {
		t.Errorf("Abort after Destroy: %v", err)
	}
	d := f.comm(t, 1, 0)
	if err := d.Abort(); err != nil || f.lastCall().name != "ncclCommAbort" {
		t.Errorf("Abort: %v", err)
	}
	if err := d.AllReduce(nil, nil, 1, Float32, Sum, nil); !errors.Is(err, ErrDestroyed) {
		t.Errorf("use after Abort: %v", err)
	}
}

func TestFakeInitAll(t *testing.T) {
	f := fake(t)
	comms, err := initAll(f.lib, nil2(2), []int32{0, 1})
	if err != nil {
		t.Fatal(err)
	}
	lc := f.lastCall()
	if lc.name != "ncclCommInitAll" || lc.args[0] != 2 || lc.args[1] != 0 || lc.args[2] != 1 {
		t.Errorf("the fake saw %+v", lc)
	}
	for i, c := range comms {
		if c.Rank() != i || c.Size() != 2 || c.ordinal != i {
			t.Errorf("comm %d: %v", i, c)
		}
	}
	// The same device twice: the fake refuses as NCCL 2.5-2.29 does.
	if _, err := initAll(f.lib, nil2(2), []int32{0, 0}); !errors.Is(err, ErrInvalidUsage) {
		t.Errorf("duplicate device: %v", err)
	}
}

func TestFakeGroup(t *testing.T) {
	f := fake(t)
	a, b := f.comm(t, 2, 0), f.comm(t, 2, 1)
	before := f.lastCall().launches
	both := func() error {
		if err := a.allReduce(buf(64), buf(64), 16, Float32, Sum, defStream); err != nil {
			return err
		}
		return b.allReduce(buf(64), buf(64), 16, Float32, Sum, defStream)
	}
	if err := group(f.lib, both); err != nil {
		t.Fatal(err)
	}
	if got := f.lastCall().launches - before; got != 2 {
		t.Errorf("a group of two launched %d", got)
	}
	// fn fails after queuing one rank's half: nothing may launch.
	before = f.lastCall().launches
	err := group(f.lib, func() error {
		if err := a.allReduce(buf(64), buf(64), 16, Float32, Sum, defStream); err != nil {
			return err
		}
		return b.allReduce(buf(64), buf(8), 16, Float32, Sum, defStream) // recv too small
	})
	if !errors.Is(err, ErrInvalidArgument) || !strings.Contains(err.Error(), "recv holds 8 bytes") {
		t.Errorf("group error: %v", err)
	}
	if got := f.lastCall().launches - before; got != 0 {
		t.Errorf("a cancelled group launched %d", got)
	}
	// And the next group works.
	if err := group(f.lib, both); err != nil {
		t.Fatalf("group after a cancelled one: %v", err)
	}
	// A panic cancels the group too, and goes on.
	before = f.lastCall().launches
	func() {
		defer func() {
			if recover() == nil {
				t.Error("the panic was swallowed")
			}
		}()
		_ = group(f.lib, func() error {
			_ = a.allReduce(buf(64), buf(64), 16, Float32, Sum, defStream)
			panic("boom")
		})
	}()
	if got := f.lastCall().launches - before; got != 0 {
		t.Errorf("a panicking group launched %d", got)
	}
	// An inner group that fails cancels the outer one, whose error says so.
	err = group(f.lib, func() error {
		_ = group(f.lib, func() error { return errors.New("inner failure") })
		return a.allReduce(buf(64), buf(64), 16, Float32, Sum, defStream)
	})
	if !errors.Is(err, ErrInvalidArgument) || !strings.Contains(err.Error(), "inner failure") {
		t.Errorf("outer group: %v", err)
	}
	if len(groups) != 0 {
		t.Errorf("group state left behind: %v", groups)
	}
}

// Communicators made inside a group that fails are never finished by NCCL:
// they must report it instead of reaching NCCL.
func TestFakeGroupThatCreatesComms(t *testing.T) {
	f := fake(t)
	var made []*Comm
	err := group(f.lib, func() error {
		for r := range 2 {
			c, err := initRank(f.lib, UniqueID{}, 2, r, nil, 0)
			if err != nil {
				return err
			}
			made = append(made, c)
		}
		return errors.New("the job was cancelled")
	})
	if err == nil || len(made) != 2 {
		t.Fatalf("err %v, %d comms", err, len(made))
	}
	for _, c := range made {
		if err := c.AllReduce(nil, nil, 1, Float32, Sum, nil); !errors.Is(err, ErrDestroyed) || !strings.Contains(err.Error(), "the job was cancelled") {
			t.Errorf("comm of a failed group: %v", err)
		}
	}
	// In a group that succeeds they are fine.
	var ok *Comm
	if err := group(f.lib, func() error {
		var err error
		ok, err = initRank(f.lib, UniqueID{}, 1, 0, nil, 0)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if err := ok.allReduce(buf(4), buf(4), 1, Float32, Sum, defStream); err != nil {
		t.Error(err)
	}
}

// nil2 is n nil devices: the fake tests run without cuda.
func nil2(n int) []*cudaDevice { return make([]*cudaDevice, n) }

type cudaDevice = cuda.Device
