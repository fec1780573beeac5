package nccl

import (
	"errors"
	"strings"
	"testing"

	"github.com/gocu-dev/gocu/cuda"
	"github.com/gocu-dev/gocu/internal/dynlib"
	"github.com/gocu-dev/gocu/internal/gputest"
)

// TestGPUErrorFromNCCL provokes an error in NCCL itself by going around
// the package's checks (a data type NCCL does not know), and checks that
// it comes back as a typed *Error with NCCL's words, and that the
// communicator and the process go on working. It needs a GPU and NCCL.
func TestGPUErrorFromNCCL(t *testing.T) {
	gputest.Need(t, cuda.Init())
	gputest.Need(t, Load())
	dev, err := cuda.DeviceAt(0)
	if err != nil {
		t.Fatal(err)
	}
	comms, err := InitAll([]*cuda.Device{dev})
	if err != nil {
		t.Fatal(err)
	}
	c := comms[0]
	defer c.Destroy()
	m, err := cuda.AllocSlice[float32](dev, 4)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Free()
	if err := cuda.CopyHtoD(m, []float32{1, 2, 3, 4}); err != nil {
		t.Fatal(err)
	}
	err = c.run("ncclAllReduce", c.lib.allReduce, uintptr(m.Ptr()), uintptr(m.Ptr()), 4, 99, uintptr(Sum), c.handle, 0)
	var e *Error
	if !errors.As(err, &e) || !errors.Is(err, ErrInvalidArgument) {
		t.Fatalf("an unknown type: %v", err)
	}
	t.Logf("NCCL's error: %v", err)
	if e.Func != "ncclAllReduce" || e.Comm != "rank 0 of 1 on cuda:0" || e.Msg == "" {
		t.Errorf("%#v", e)
	}
	if e.Detail == "" {
		t.Log("NCCL gave no last-error text (ncclGetLastError was empty or repeated)")
	}
	if err := c.AllReduce(m, m, 4, Float32, Sum, nil); err != nil {
		t.Fatalf("after the error: %v", err)
	}
	got := make([]float32, 4)
	if err := cuda.CopyDtoH(got, m); err != nil {
		t.Fatal(err)
	}
	if got[3] != 4 {
		t.Fatalf("after the error: %v", got)
	}
	if err := c.AsyncError(); err != nil {
		t.Errorf("AsyncError: %v", err)
	}
}

// TestGPUStaleWarningIsNotAttached repeats what NCCL 2.28.3 showed on the
// H100: a warning logged by an earlier refused call ("Send : comm argument
// is NULL") came back as the detail of the next error, InitAll with one
// device twice. The detail must now be that call's own warning or none.
func TestGPUStaleWarningIsNotAttached(t *testing.T) {
	gputest.Need(t, cuda.Init())
	l, err := load()
	gputest.Need(t, err)
	dev, err := cuda.DeviceAt(0)
	if err != nil {
		t.Fatal(err)
	}
	_ = withDevice(dev, func() error {
		r := Result(dynlib.Call(l.send, 0, 0, uintptr(Int8), 0, 0, 0))
		t.Logf("send on a NULL comm: %v; NCCL's last warning now %q", r, l.lastText())
		return nil
	})
	comms, err := InitAll([]*cuda.Device{dev, dev})
	if err == nil {
		t.Logf("this NCCL accepts two ranks on one GPU")
		for _, c := range comms {
			_ = c.Destroy()
		}
		return
	}
	t.Logf("InitAll(dev0, dev0): %v", err)
	if strings.Contains(err.Error(), "comm argument is NULL") {
		t.Fatalf("the earlier call's warning was attached: %v", err)
	}
}
