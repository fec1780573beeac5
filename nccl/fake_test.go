package nccl

// Tests of the real call path against testdata/fake_nccl.c, a stand-in for
// libnccl with NCCL's C ABI, built with the system C compiler (they skip
// without one). They check what crosses the boundary: the 128-byte unique
// id passed by value, every argument of every call, error strings, and
// Group's cancellation, without a GPU.

import (
	"errors"
	"fmt"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"unsafe"

	"github.com/ebitengine/purego"
	"github.com/gocu-dev/gocu/cuda"
	"github.com/gocu-dev/gocu/internal/dynlib"
)

type fakeLib struct {
	*lib
	last, failNext, warn, failEnd, callLog uintptr
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
	h, err := dynlib.OpenFile(so)
	if err != nil {
		t.Fatal(err)
	}
	f := &fakeLib{lib: l}
	if f.last, err = h.Sym("fakeLast"); err != nil {
		t.Fatal(err)
	}
	for _, s := range []struct {
		name string
		p    *uintptr
	}{{"fakeFailNext", &f.failNext}, {"fakeWarn", &f.warn}, {"fakeFailGroupEnd", &f.failEnd}, {"fakeLog", &f.callLog}} {
		if *s.p, err = h.Sym(s.name); err != nil {
			t.Fatal(err)
		}
	}
	f.log() // calls made while loading
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

// warnNow logs a warning as a call that did not fail would.
func (f *fakeLib) warnNow(msg string) {
	b := append([]byte(msg), 0)
	purego.SyscallN(f.warn, uintptr(unsafe.Pointer(&b[0])))
	runtime.KeepAlive(b)
}

// failGroupEnd makes the next outermost ncclGroupEnd fail.
func (f *fakeLib) failGroupEnd(code Result, msg string) {
	b := append([]byte(msg), 0)
	purego.SyscallN(f.failEnd, uintptr(code), uintptr(unsafe.Pointer(&b[0])))
	runtime.KeepAlive(b)
}

// log returns the names of the NCCL calls made since the last log.
func (f *fakeLib) log() string {
	var b [4096]byte
	purego.SyscallN(f.callLog, uintptr(unsafe.Pointer(&b[0])), uintptr(len(b)))
	s, _, _ := strings.Cut(string(b[:]), "\x00")
	return s
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
	// NCCL never clears its last warning: an error whose call logged none
	// must not carry the old one.
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
	// An async error comes back as an *Error too, with the warning NCCL
	// logged on its own thread.
	f.failWith(RemoteError, "peer 1 closed the connection")
	if err := c.AsyncError(); !errors.Is(err, ErrRemote) || !strings.Contains(err.Error(), "peer 1 closed") {
		t.Errorf("AsyncError: %v", err)
	}
	if err := c.AsyncError(); err != nil {
		t.Errorf("AsyncError with none: %v", err)
	}
	// A failed init returns no comm.
	f.failWith(SystemError, "socket: no route to host")
	if c, err := initRank(f.lib, UniqueID{}, 2, 1, nil, 0); c != nil || !errors.Is(err, ErrSystem) || !strings.Contains(err.Error(), "no route to host") {
		t.Errorf("failed init: %v %v", c, err)
	}
	// The same device twice: the fake refuses as NCCL 2.5-2.29 does, with
	// NCCL's words.
	if _, err := initAll(f.lib, nil2(2), []int32{0, 0}); !errors.Is(err, ErrInvalidUsage) || !strings.Contains(err.Error(), "Duplicate GPU detected") {
		t.Errorf("duplicate device: %v", err)
	}
}

// What the GPU showed with NCCL 2.28.3: a warning left by an earlier call
// that NCCL refused ("Send : comm argument is NULL") was attached to the
// next, unrelated error. Only a warning the failing call logged is
// attached now.
func TestFakeStaleWarningIsNotAttached(t *testing.T) {
	f := fake(t)
	c := f.comm(t, 1, 0)
	// A send on a NULL comm, as the old Group cancellation made.
	if r := Result(dynlibCall(f.lib.send, 0, 0, uintptr(Int8), 0, 0, 0)); r != InvalidArgument {
		t.Fatalf("NULL comm: %v", r)
	}
	f.warnNow("NCCL WARN something unrelated")
	f.failWith(InvalidUsage, "")
	var e *Error
	err := c.allReduce(buf(64), buf(64), 16, Float32, Sum, defStream)
	if !errors.As(err, &e) || e.Detail != "" || strings.Contains(err.Error(), "NULL") || strings.Contains(err.Error(), "unrelated") {
		t.Fatalf("a stale warning was attached: %v", err)
	}
	f.failWith(InvalidUsage, "this call's own warning")
	err = c.allReduce(buf(64), buf(64), 16, Float32, Sum, defStream)
	if !errors.As(err, &e) || e.Detail != "this call's own warning" {
		t.Fatalf("the call's warning is lost: %v", err)
	}
	// AsyncError does not repeat a warning an earlier error carried.
	f.failWith(RemoteError, "")
	if err := c.AsyncError(); !errors.As(err, &e) || e.Detail != "" {
		t.Fatalf("AsyncError repeated a warning: %v", err)
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
}

// twoRanks is a Group function issuing one all-reduce on each of a and b.
func twoRanks(a, b *Comm) func() error {
	return func() error {
		if err := a.allReduce(buf(64), buf(64), 16, Float32, Sum, defStream); err != nil {
			return err
		}
		return b.allReduce(buf(64), buf(64), 16, Float32, Sum, defStream)
	}
}

func TestFakeGroup(t *testing.T) {
	f := fake(t)
	a, b := f.comm(t, 2, 0), f.comm(t, 2, 1)
	f.log()
	before := f.lastCall().launches
	if err := group(f.lib, twoRanks(a, b)); err != nil {
		t.Fatal(err)
	}
	if got := f.lastCall().launches - before; got != 2 {
		t.Errorf("a group of two launched %d", got)
	}
	if got, want := f.log(), "ncclGroupStart ncclAllReduce ncclAllReduce ncclGroupEnd"; got != want {
		t.Errorf("calls %q, want %q", got, want)
	}
	// The recorded call carries its arguments to NCCL.
	if lc := f.lastCall(); lc.name != "ncclAllReduce" || lc.args[5] != uint64(b.handle) || lc.args[2] != 16 {
		t.Errorf("last call %+v", lc)
	}
	// An empty group calls nothing.
	if err := group(f.lib, func() error { return nil }); err != nil || f.log() != "" {
		t.Errorf("empty group: %v, calls %q", err, f.log())
	}
	if len(groups) != 0 || openGroups.Load() != 0 {
		t.Errorf("group state left behind: %v", groups)
	}
}

// A Group whose function fails or panics reaches NCCL not at all: no
// group, no call, nothing launched. This is the fix of what the GPU showed
// with NCCL 2.28.3 (the old cancellation by a deliberately invalid call in
// the group launched the queued work).
func TestFakeGroupCancel(t *testing.T) {
	f := fake(t)
	a, b := f.comm(t, 2, 0), f.comm(t, 2, 1)
	f.log()
	before := f.lastCall().launches
	// fn fails after queuing one rank's half.
	err := group(f.lib, func() error {
		if err := a.allReduce(buf(64), buf(64), 16, Float32, Sum, defStream); err != nil {
			return err
		}
		return b.allReduce(buf(64), buf(8), 16, Float32, Sum, defStream) // recv too small
	})
	if !errors.Is(err, ErrInvalidArgument) || !strings.Contains(err.Error(), "recv holds 8 bytes") {
		t.Errorf("group error: %v", err)
	}
	planned := errors.New("the caller changed its mind")
	if err := group(f.lib, func() error {
		_ = a.allReduce(buf(64), buf(64), 16, Float32, Sum, defStream)
		return planned
	}); err != planned {
		t.Errorf("fn's own error is not returned as it is: %v", err)
	}
	// A panic drops the group too, and goes on.
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
	if got := f.log(); got != "" {
		t.Errorf("a cancelled group called %q", got)
	}
	if got := f.lastCall().launches - before; got != 0 {
		t.Errorf("a cancelled group launched %d", got)
	}
	// And the next group works.
	if err := group(f.lib, twoRanks(a, b)); err != nil {
		t.Fatalf("group after cancelled ones: %v", err)
	}
	if got := f.lastCall().launches - before; got != 2 {
		t.Errorf("launched %d", got)
	}
	if len(groups) != 0 || openGroups.Load() != 0 {
		t.Errorf("group state left behind: %v", groups)
	}
}

func TestFakeNestedGroups(t *testing.T) {
	f := fake(t)
	a, b := f.comm(t, 2, 0), f.comm(t, 2, 1)
	f.log()
	// Inner groups join the outermost: one ncclGroupStart/End.
	err := group(f.lib, func() error {
		if err := group(f.lib, func() error { return a.allReduce(buf(64), buf(64), 16, Float32, Sum, defStream) }); err != nil {
			return err
		}
		return group(f.lib, func() error { return b.allReduce(buf(64), buf(64), 16, Float32, Sum, defStream) })
	})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := f.log(), "ncclGroupStart ncclAllReduce ncclAllReduce ncclGroupEnd"; got != want {
		t.Errorf("calls %q, want %q", got, want)
	}
	// An inner group that fails cancels the outer one, whose error says so.
	inner := errors.New("inner failure")
	err = group(f.lib, func() error {
		_ = group(f.lib, func() error {
			_ = a.allReduce(buf(64), buf(64), 16, Float32, Sum, defStream)
			return inner
		})
		return b.allReduce(buf(64), buf(64), 16, Float32, Sum, defStream)
	})
	if !errors.Is(err, ErrCancelled) || !errors.Is(err, inner) || !strings.Contains(err.Error(), "inner failure") {
		t.Errorf("outer group: %v", err)
	}
	if got := f.log(); got != "" {
		t.Errorf("a cancelled outer group called %q", got)
	}
	if len(groups) != 0 || openGroups.Load() != 0 {
		t.Errorf("group state left behind: %v", groups)
	}
}

// Calls from another goroutine do not join the group: they run at once.
func TestFakeGroupIsPerGoroutine(t *testing.T) {
	f := fake(t)
	a, b := f.comm(t, 2, 0), f.comm(t, 2, 1)
	f.log()
	err := group(f.lib, func() error {
		done := make(chan error)
		go func() { done <- b.allReduce(buf(64), buf(64), 16, Float32, Sum, defStream) }()
		if err := <-done; err != nil {
			return err
		}
		if got := f.log(); got != "ncclAllReduce" {
			return fmt.Errorf("the other goroutine's call: %q", got)
		}
		return a.allReduce(buf(64), buf(64), 16, Float32, Sum, defStream)
	})
	if err != nil {
		t.Fatal(err)
	}
	if got := f.log(); got != "ncclGroupStart ncclAllReduce ncclGroupEnd" {
		t.Errorf("calls %q", got)
	}
}

// NCCL's errors surface when the group is issued: a call NCCL refuses
// (the others still go, as NCCL cannot withdraw them), or ncclGroupEnd.
func TestFakeGroupIssueErrors(t *testing.T) {
	f := fake(t)
	a, b := f.comm(t, 2, 0), f.comm(t, 2, 1)
	f.log()
	before := f.lastCall().launches
	err := group(f.lib, func() error {
		if err := twoRanks(a, b)(); err != nil {
			return err
		}
		f.failWith(InvalidUsage, "AllReduce : invalid usage on rank 0") // the first issued call
		return nil
	})
	var e *Error
	if !errors.As(err, &e) || !errors.Is(err, ErrInvalidUsage) || e.Func != "ncclAllReduce" || e.Detail != "AllReduce : invalid usage on rank 0" ||
		!strings.Contains(err.Error(), "refused 1 of the group's 2 calls") {
		t.Errorf("refused call: %v", err)
	}
	if got := f.lastCall().launches - before; got != 1 {
		t.Errorf("launched %d, want the one NCCL did not refuse", got)
	}
	f.log()
	err = group(f.lib, func() error {
		f.failGroupEnd(InternalError, "ncclGroupEnd: proxy failure")
		return twoRanks(a, b)()
	})
	if !errors.As(err, &e) || !errors.Is(err, ErrInternal) || e.Func != "ncclGroupEnd" || e.Detail != "ncclGroupEnd: proxy failure" {
		t.Errorf("ncclGroupEnd: %v", err)
	}
	if got := f.log(); got != "ncclGroupStart ncclAllReduce ncclAllReduce ncclGroupEnd" {
		t.Errorf("calls %q", got)
	}
}

// InitRank inside a Group: the comm is made when the group is issued, is
// not usable before, and never reaches NCCL if the group is dropped.
func TestFakeGroupThatCreatesComms(t *testing.T) {
	f := fake(t)
	f.log()
	var made []*Comm
	err := group(f.lib, func() error {
		for r := range 2 {
			c, err := initRank(f.lib, UniqueID{1, 2, 3}, 2, r, nil, 0)
			if err != nil {
				return err
			}
			made = append(made, c)
		}
		// Not usable inside the group that creates it.
		err := made[0].allReduce(buf(64), buf(64), 16, Float32, Sum, defStream)
		if !errors.Is(err, ErrInvalidArgument) || !strings.Contains(err.Error(), "created by the Group that is open") {
			t.Errorf("use inside the group: %v", err)
		}
		if err := made[0].Destroy(); !errors.Is(err, ErrInvalidArgument) {
			t.Errorf("Destroy inside the group: %v", err)
		}
		return errors.New("the job was cancelled")
	})
	if err == nil || len(made) != 2 {
		t.Fatalf("err %v, %d comms", err, len(made))
	}
	if got := f.log(); got != "" {
		t.Errorf("a dropped group called %q", got)
	}
	for _, c := range made {
		if err := c.AllReduce(nil, nil, 1, Float32, Sum, nil); !errors.Is(err, ErrDestroyed) || !strings.Contains(err.Error(), "the job was cancelled") {
			t.Errorf("comm of a failed group: %v", err)
		}
		if err := c.Destroy(); err != nil {
			t.Errorf("Destroy of a comm never made: %v", err)
		}
	}
	if got := f.log(); got != "" {
		t.Errorf("Destroy of comms never made called %q", got)
	}
	// In a group that succeeds they are made at its end, with the id.
	made = made[:0]
	if err := group(f.lib, func() error {
		for r := range 2 {
			c, err := initRank(f.lib, UniqueID{1, 2, 3}, 2, r, nil, 0)
			if err != nil {
				return err
			}
			made = append(made, c)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if got := f.log(); got != "ncclGroupStart ncclCommInitRank ncclCommInitRank ncclGroupEnd" {
		t.Errorf("calls %q", got)
	}
	if lc := f.lastCall(); lc.id != (UniqueID{1, 2, 3}) || lc.args[1] != 1 {
		t.Errorf("the id or rank did not reach NCCL: %+v", lc)
	}
	for r, c := range made {
		if c.handle == 0 || c.Rank() != r {
			t.Errorf("comm %d: %v handle %#x", r, c, c.handle)
		}
		if err := c.allReduce(buf(4), buf(4), 1, Float32, Sum, defStream); err != nil {
			t.Error(err)
		}
	}
	// A group whose end fails frees what NCCL made, and the comms say why.
	f.log()
	var bad *Comm
	err = group(f.lib, func() error {
		f.failGroupEnd(SystemError, "bootstrap: connection refused")
		var err error
		bad, err = initRank(f.lib, UniqueID{}, 1, 0, nil, 0)
		return err
	})
	if !errors.Is(err, ErrSystem) {
		t.Fatalf("group end: %v", err)
	}
	if got := f.log(); got != "ncclGroupStart ncclCommInitRank ncclGroupEnd ncclCommAbort" {
		t.Errorf("calls %q", got)
	}
	if err := bad.AllReduce(nil, nil, 1, Float32, Sum, nil); !errors.Is(err, ErrDestroyed) || !strings.Contains(err.Error(), "connection refused") {
		t.Errorf("comm of a failed group end: %v", err)
	}
	// InitAll is not part of a group: it runs at once.
	err = group(f.lib, func() error {
		if _, err := initAll(f.lib, nil2(2), []int32{0, 1}); err != nil {
			return err
		}
		if got := f.log(); got != "ncclCommInitAll" {
			t.Errorf("InitAll inside a group: calls %q", got)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// nil2 is n nil devices: the fake tests run without cuda.
func nil2(n int) []*cudaDevice { return make([]*cudaDevice, n) }

type cudaDevice = cuda.Device

func dynlibCall(sym uintptr, args ...uintptr) uintptr { return dynlib.Call(sym, args...) }
