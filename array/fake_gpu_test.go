//go:build gocu_fakedriver

package array

import (
	"testing"

	"github.com/gocu-dev/gocu/array/internal/gpu"
	"github.com/gocu-dev/gocu/cuda"
)

// With -tags gocu_fakedriver, arrays run on the GPU backend over cuda's
// fake driver: everything the host does for an operation is real (the
// array layer, planning, the plan cache, the caching allocator, the
// launch through the driver-call trampoline) except the driver's own work,
// libm functions that return at once; kernels do nothing.

func fakeGPU(tb testing.TB) *Maker {
	dev, err := cuda.FakeDevice()
	if err != nil {
		tb.Skip(err)
	}
	g, err := gpu.NewFake(dev)
	if err != nil {
		tb.Fatal(err)
	}
	return newDevice(g, g)
}

func TestScopeFakeGPU(t *testing.T) { checkScope(t, fakeGPU(t), false) }

func TestScopeFreesFakeGPU(t *testing.T) { checkScopeFrees(t, fakeGPU(t)) }

func TestOverheadAllocsFakeGPU(t *testing.T) { checkOverheadAllocsGPU(t, fakeGPU(t)) }

// BenchmarkOverheadFakeGPU: BenchmarkOverheadGPU's operations (x.Add(y)
// and x.Add(1) on 16 float32, evaluated and closed; x.Add(y).Into(z)) on
// the fake driver: the Go side of a tiny operation on a GPU, without the
// driver's work.
func BenchmarkOverheadFakeGPU(b *testing.B) {
	for _, c := range overheadCases {
		b.Run(c.name, func(b *testing.B) {
			d := fakeGPU(b)
			x, y, z := d.Ones(Float32, 16).Eval(), d.Ones(Float32, 16).Eval(), d.Zeros(Float32, 16).Eval()
			c.op(x, y, z)
			b.ReportAllocs()
			for b.Loop() {
				c.op(x, y, z)
			}
		})
	}
}

// Operations from several goroutines on shared arrays, through the whole
// GPU host path (run with -race). The fake kernels write nothing, so
// goroutines writing one array exercise only the array layer's locking.
func TestConcurrentOpsFakeGPU(t *testing.T) {
	d := fakeGPU(t)
	x, y := d.Ones(Float32, 16).Eval(), d.Ones(Float32, 16).Eval()
	p := x.Mul(y) // pending, read by every goroutine
	shared := d.Zeros(Float32, 16).Eval()
	done := make(chan error)
	for g := range 4 {
		go func() {
			var err error
			own := d.Zeros(Float32, 16).Eval()
			defer own.Close()
			for i := range 500 {
				z := x.Add(y).Eval()
				w := p.Add(float32(g)).Eval()
				if err == nil {
					err = x.Mul(y).Into(own) // Into's node copy is pooled
				}
				if err == nil {
					err = BinaryInto(own, OpAdd, own, float32(i)) // its node too
				}
				if err == nil {
					err = UnaryInto(shared, OpNeg, x) // flushes the readers of shared
				}
				r := shared.Add(1) // a pending reader of shared
				if i%50 == 0 {
					v := d.Zeros(Float32, 16).Eval()
					err = v.Assign(x)
					v.Close()
				}
				if err == nil {
					err = z.Err()
				}
				z.Close()
				w.Close()
				r.Close()
			}
			done <- err
		}()
	}
	for range 4 {
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	}
	if err := d.Sync(); err != nil {
		t.Fatal(err)
	}
}

// A capture on the fake driver: the graph bookkeeping (buffers touched in
// the capture, frees deferred while the graph lives) with recycled storage
// objects; arrays closed after the capture keep their memory until the
// graph is closed.
func TestCaptureFakeGPU(t *testing.T) {
	d := fakeGPU(t)
	al := d.gpu.Device().Allocator()
	x := d.Ones(Float32, 1<<10).Copy()
	out := d.Zeros(Float32, 1<<10).Copy()
	var tmp *Array
	g, err := d.Capture(func() error {
		tmp = x.Mul(5).Eval()
		z := x.Add(1).Eval() // closed inside the capture
		z.Close()
		return out.Assign(tmp.Add(1))
	})
	if err != nil {
		t.Fatal(err)
	}
	inUse := al.Stats().InUse
	tmp.Close()
	for range 100 {
		closing(x.Add(2).Eval()) // recycles storage objects
	}
	if got := al.Stats().InUse; got != inUse {
		t.Fatalf("in use %d bytes after closing arrays the graph holds, want %d", got, inUse)
	}
	if err := g.Replay(); err != nil {
		t.Fatal(err)
	}
	if err := g.Close(); err != nil {
		t.Fatal(err)
	}
	if got := al.Stats().InUse; got >= inUse {
		t.Fatalf("in use %d bytes after closing the graph, want less than %d", got, inUse)
	}
}

func TestGCPacingFakeGPU(t *testing.T)       { checkGCPacing(t, fakeGPU(t)) }
func TestGCPacingClosedFakeGPU(t *testing.T) { checkGCPacingClosed(t, fakeGPU(t)) }

func TestSyncDebugFakeGPU(t *testing.T) { checkSyncDebug(t, fakeGPU(t)) }

func TestMemoryHistoryFakeGPU(t *testing.T) { checkMemoryHistory(t, fakeGPU(t)) }
