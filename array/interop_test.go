package array

import (
	"errors"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"testing"

	"github.com/gocu-dev/gocu"
	"github.com/gocu-dev/gocu/cuda"
)

// hostDevices are the devices whose arrays live in host memory.
func hostDevices() []*gocu.Device {
	return []*gocu.Device{gocu.MustOpen("cpu"), gocu.MustOpen("sim")}
}

// AsBuffer shares an array's memory with a buffer, both ways, on the CPU
// and the simulator; contiguous views with an offset work, strided views
// and the wrong element type are refused, and a failed array gives a
// failed buffer carrying its error.
func TestAsBufferHost(t *testing.T) {
	for _, dev := range hostDevices() {
		t.Run(dev.ID(), func(t *testing.T) {
			m := On(dev)
			x := m.Arange(Float32, 12).Reshape(3, 4).Mul(2) // lazy: AsBuffer evaluates it
			b := AsBuffer[float32](x)
			if err := b.Err(); err != nil {
				t.Fatal(err)
			}
			if b.Device() != dev || b.Len() != 12 || len(b.Host()) != 12 {
				t.Fatalf("buffer %v of %d elements (host %d)", b, b.Len(), len(b.Host()))
			}
			for i, v := range b.Host() {
				if v != float32(2*i) {
					t.Fatalf("element %d of the buffer is %v, want %v", i, v, 2*i)
				}
			}
			b.Host()[5] = -1 // a kernel writing the buffer writes the array
			got, err := x.Float32s()
			if err != nil || got[5] != -1 {
				t.Errorf("after writing the buffer, x[5] = %v (%v), want -1", got[5], err)
			}
			// Row 1 is a contiguous view with an offset.
			row := AsBuffer[float32](x.Slice(Idx(1)))
			if row.Err() != nil || row.Len() != 4 || row.Host()[0] != 8 {
				t.Errorf("row 1 as a buffer: %v %v", row.Err(), row.Host())
			}
			// Freeing the buffer releases its hold on the memory, not the array.
			if err := b.Free(); err != nil {
				t.Error(err)
			}
			if _, err := x.Float32s(); err != nil {
				t.Errorf("the array after its buffer was freed: %v", err)
			}
			// Refusals.
			if err := AsBuffer[float32](x.T()).Err(); !errors.Is(err, ErrValue) || !strings.Contains(err.Error(), "not contiguous") {
				t.Errorf("a transposed view: %v, want ErrValue naming the strided view", err)
			}
			if err := AsBuffer[int32](x).Err(); !errors.Is(err, ErrDType) || !strings.Contains(err.Error(), "AsBuffer[float32]") {
				t.Errorf("the wrong element type: %v, want ErrDType naming AsBuffer[float32]", err)
			}
			bad := x.Add(m.Ones(Float32, 5)) // shapes (3,4) and (5,) do not broadcast
			if err := AsBuffer[float32](bad).Err(); !errors.Is(err, ErrShape) || err != bad.Err() {
				t.Errorf("a failed array: buffer error %v, array error %v", err, bad.Err())
			}
			if err := AsBuffer[float32](nil).Err(); !errors.Is(err, ErrValue) {
				t.Errorf("nil array: %v", err)
			}
			// The same through gocu.Arg, as Kernel.Launch calls it.
			a, err := x.KernelArg(dev)
			if fb, ok := a.(*gocu.Buffer[float32]); err != nil || !ok || fb.Len() != 12 {
				t.Errorf("KernelArg: %T %v", a, err)
			}
			other := hostDevices()[0]
			if other == dev {
				other = hostDevices()[1]
			}
			if _, err := x.KernelArg(other); !errors.Is(err, ErrDevice) {
				t.Errorf("KernelArg on another device: %v, want ErrDevice", err)
			}
		})
	}
}

// FromBuffer views a buffer as an array, without a copy.
func TestFromBufferHost(t *testing.T) {
	for _, dev := range hostDevices() {
		t.Run(dev.ID(), func(t *testing.T) {
			r := rand.New(rand.NewPCG(1, uint64(len(dev.ID()))))
			host := make([]float32, 6)
			for i := range host {
				host[i] = r.Float32()
			}
			b, err := gocu.FromSlice(dev, host)
			if err != nil {
				t.Fatal(err)
			}
			a := FromBuffer(b, 2, 3)
			if a.Device() != dev || !sameShape(a.Shape(), []int{2, 3}) {
				t.Fatalf("array on %v of shape %v", a.Device(), a.Shape())
			}
			s, err := a.Sum().Item()
			want := 0.0
			for _, v := range host {
				want += float64(v)
			}
			if err != nil || s != float64(float32(want)) && abs(s-want) > 1e-6 {
				t.Errorf("sum %v (%v), want %v", s, err, want)
			}
			b.Host()[0] = 100 // the buffer's writes show in the array
			if v, _ := a.Slice(Idx(0), Idx(0)).Item(); v != 100 {
				t.Errorf("a[0,0] after writing the buffer: %v", v)
			}
			if err := FromBuffer(b, 4, 2).Err(); !errors.Is(err, ErrShape) {
				t.Errorf("a shape of another size: %v", err)
			}
			if err := FromBuffer[float32](nil).Err(); !errors.Is(err, ErrValue) {
				t.Errorf("nil buffer: %v", err)
			}
			fail := errors.New("upstream failure")
			if err := FromBuffer(gocu.Failed[float32](fail)).Err(); err != fail {
				t.Errorf("failed buffer: %v", err)
			}
			if err := FromBuffer(gocu.Out(make([]float32, 3))).Err(); !errors.Is(err, ErrValue) {
				t.Errorf("an Out buffer: %v", err)
			}
		})
	}
}

// scaleAddSrc is a CUDA C kernel the GPU tests pass arrays to.
const scaleAddSrc = `extern "C" __global__ void scale_add(const float* x, float* y, float s, float c, int n) {
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n) y[i] = s * x[i] + c;
}
extern "C" __global__ void bad_write(float* x, long long off) {
	x[off] = 1.0f; // far outside any allocation: an illegal address
}`

// TestInteropOrderGPU queues an array operation, a user kernel that reads
// its result and writes another array, and array operations on that, with
// no host synchronisation in between (the backend's count of host waits
// does not move until the final read), and checks the answer.
func TestInteropOrderGPU(t *testing.T) {
	g := testGPU(t)
	dev := g.Device()
	mod, err := dev.Compile(scaleAddSrc)
	if err != nil {
		t.Fatal(err)
	}
	k, err := mod.Kernel("scale_add")
	if err != nil {
		t.Fatal(err)
	}
	const n = 1 << 24
	r := rand.New(rand.NewPCG(7, 7))
	host := make([]float32, n)
	for i := range host {
		host[i] = r.Float32()*2 - 1
	}
	in := fromSliceOn(g, host)
	if err := g.Sync(); err != nil {
		t.Fatal(err)
	}
	for rep := range 3 {
		syncs := g.gpu.Syncs()
		// A long first operation: a kernel that started before it ended
		// would read the poison.
		x := in.Mul(in).Sqrt().Add(in.Exp()).Mul(0.5).Eval()
		y := g.Full(Float32, float32(rep)*1e30, n).Eval() // poison, overwritten by the kernel
		if err := k.Launch(gocu.Grid1D(n, 256), x, y, float32(3), float32(1), int32(n)); err != nil {
			t.Fatal(err)
		}
		z := y.Sub(1).Div(3).Sub(x).Abs().Max() // back to x: zero if the kernel ran in order
		sum := y.Sum()
		if got := g.gpu.Syncs(); got != syncs {
			t.Fatalf("the host waited %d times between the operations", got-syncs)
		}
		d, err := z.Item()
		if err != nil {
			t.Fatal(err)
		}
		if d > 1e-5 {
			t.Errorf("rep %d: max |(y-1)/3 - x| = %g: the kernel and the arrays ran out of order", rep, d)
		}
		var want float64
		for _, v := range host {
			xv := 0.5 * (float64(abs(float64(v))) + expf(v))
			want += 3*xv + 1
		}
		s, _ := sum.Item()
		if rel := abs(s-want) / want; rel > 1e-5 {
			t.Errorf("rep %d: sum %g, want %g (rel %g)", rep, s, want, rel)
		}
	}
	// A failed array gives its error to the launch; so does one on another device.
	bad := in.Add(g.Ones(Float32, 3))
	if err := k.Launch(gocu.Grid1D(n, 256), bad, in, float32(1), float32(0), int32(n)); !errors.Is(err, ErrShape) {
		t.Errorf("launch with a failed array: %v, want its ErrShape", err)
	}
	if err := k.Launch(gocu.Grid1D(4, 256), CPU().Ones(Float32, 4), in, float32(1), float32(0), int32(4)); !errors.Is(err, ErrDevice) {
		t.Errorf("launch with a CPU array: %v, want ErrDevice", err)
	}
	if err := k.Launch(gocu.Grid1D(4, 256), in.Reshape(1<<12, 1<<12).T(), in, float32(1), float32(0), int32(4)); !errors.Is(err, ErrValue) {
		t.Errorf("launch with a strided view: %v, want ErrValue", err)
	}
	// Buffers and arrays share memory on the GPU too.
	buf, err := gocu.FromSlice(dev, host[:1000])
	if err != nil {
		t.Fatal(err)
	}
	defer buf.Free()
	v := FromBuffer(buf, 10, 100)
	s1, err := v.Sum().Item()
	if err != nil {
		t.Fatal(err)
	}
	var want float64
	for _, x := range host[:1000] {
		want += float64(x)
	}
	if abs(s1-want) > 1e-4 {
		t.Errorf("FromBuffer sum %g, want %g", s1, want)
	}
	ab := AsBuffer[float32](v.Mul(2))
	back, err := ab.ToSlice()
	if err != nil {
		t.Fatal(err)
	}
	for i := range back {
		if back[i] != 2*host[i] {
			t.Fatalf("AsBuffer(FromBuffer(b)*2)[%d] = %v, want %v", i, back[i], 2*host[i])
		}
	}
	ab.Free()
}

func expf(v float32) float64 {
	// float32 exp as the GPU computes it is within 2 ulp of this; the
	// tolerances of the test are far wider.
	return float64(float32(math.Exp(float64(v))))
}

// TestUserKernelFaultGPU: an illegal address in a user kernel given arrays
// surfaces at an array's Err, naming the kernel, and sticks. It runs in a
// child process: the fault loses the CUDA context for the whole process.
func TestUserKernelFaultGPU(t *testing.T) {
	if os.Getenv("GOCU_TEST_CHILD") == "userfault" {
		userFaultChild(t)
		return
	}
	testGPU(t)
	cmd := exec.Command(os.Args[0], "-test.run=^TestUserKernelFaultGPU$", "-test.v")
	cmd.Env = append(os.Environ(), "GOCU_TEST_CHILD=userfault")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("child: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "fault named: bad_write") {
		t.Errorf("the child did not report the kernel:\n%s", out)
	}
}

func userFaultChild(t *testing.T) {
	g := testGPU(t)
	mod, err := g.Device().Compile(scaleAddSrc)
	if err != nil {
		t.Fatal(err)
	}
	k, err := mod.Kernel("bad_write")
	if err != nil {
		t.Fatal(err)
	}
	x := g.Ones(Float32, 1024).Eval()
	if err := k.Launch(gocu.Config{Grid: gocu.Dim3{X: 1}, Block: gocu.Dim3{X: 1}}, x, int64(1)<<40); err != nil {
		t.Fatalf("launch: %v (the fault should surface later)", err)
	}
	y := x.Mul(2)
	err = y.Err()
	for i := 0; err == nil && i < 100; i++ { // Err does not wait: give the GPU time to fault
		runtime.Gosched()
		err = g.Sync()
		if err == nil {
			err = y.Err()
		}
	}
	if !errors.Is(err, cuda.ErrContextLost) || !errors.Is(err, ErrDevice) {
		t.Fatalf("after the fault: %v, want a lost context", err)
	}
	if !strings.Contains(err.Error(), "bad_write") {
		t.Fatalf("the error does not name the kernel: %v", err)
	}
	t.Logf("fault named: bad_write: %v", err)
	// It sticks: every later operation reports it, none crashes.
	if err := g.Ones(Float32, 8).Err(); !errors.Is(err, cuda.ErrContextLost) {
		t.Errorf("a new array after the fault: %v", err)
	}
	if _, err := x.Float32s(); !errors.Is(err, cuda.ErrContextLost) {
		t.Errorf("reading after the fault: %v", err)
	}
}

// AsStridedBuffer gives a strided view's span with its strides, on the
// CPU and the simulator; negative strides and the wrong type are refused.
func TestAsStridedBufferHost(t *testing.T) {
	for _, dev := range hostDevices() {
		t.Run(dev.ID(), func(t *testing.T) {
			m := On(dev)
			x := m.Arange(Float32, 24).Reshape(2, 3, 4)
			v := x.Slice(S(0, 2), S(1, 3), S(1, 4)).Transpose(2, 0, 1) // (3, 2, 2)
			b, st, err := AsStridedBuffer[float32](v)
			if err != nil {
				t.Fatal(err)
			}
			defer b.Free()
			if b.Len() != 19 || len(st) != 3 || st[0] != 1 || st[1] != 12 || st[2] != 4 {
				t.Fatalf("buffer of %d elements, strides %v; want 19 and [1 12 4]", b.Len(), st)
			}
			h := b.Host()
			for i := range 3 {
				for j := range 2 {
					for k := range 2 {
						want := float32(12*j + 4*(1+k) + 1 + i)
						if got := h[i*st[0]+j*st[1]+k*st[2]]; got != want {
							t.Errorf("element (%d,%d,%d) = %v, want %v", i, j, k, got, want)
						}
					}
				}
			}
			if _, _, err := AsStridedBuffer[float32](x.Flip(1)); !errors.Is(err, ErrValue) || !strings.Contains(err.Error(), "negative stride") {
				t.Errorf("a flipped view: %v, want ErrValue naming the negative stride", err)
			}
			if _, _, err := AsStridedBuffer[int32](v); !errors.Is(err, ErrDType) {
				t.Errorf("the wrong element type: %v, want ErrDType", err)
			}
			if _, _, err := AsStridedBuffer[float32](nil); err == nil {
				t.Error("a nil array: no error")
			}
		})
	}
}

// TestAsStridedBufferGPU is TestAsStridedBufferHost's view on the GPU:
// the buffer, read back, holds the view's elements at its strides.
func TestAsStridedBufferGPU(t *testing.T) {
	g := testGPU(t)
	x := g.Arange(Float32, 24).Reshape(2, 3, 4)
	v := x.Slice(S(0, 2), S(1, 3), S(1, 4)).Transpose(2, 0, 1)
	b, st, err := AsStridedBuffer[float32](v)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Free()
	h, err := b.ToSlice()
	if err != nil {
		t.Fatal(err)
	}
	if len(h) != 19 || st[0] != 1 || st[1] != 12 || st[2] != 4 {
		t.Fatalf("buffer of %d elements, strides %v; want 19 and [1 12 4]", len(h), st)
	}
	for i := range 3 {
		for j := range 2 {
			for k := range 2 {
				if got, want := h[i+12*j+4*k], float32(12*j+4*(1+k)+1+i); got != want {
					t.Errorf("element (%d,%d,%d) = %v, want %v", i, j, k, got, want)
				}
			}
		}
	}
}
