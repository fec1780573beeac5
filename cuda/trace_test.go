package cuda_test

import (
	"sync"
	"testing"

	"github.com/gocu-dev/gocu/cuda"
)

// recorder is a Tracer that keeps what it saw.
type recorder struct {
	mu    sync.Mutex
	begun []cuda.TraceOp
	ended []cuda.TraceOp
}

func (r *recorder) Begin(op *cuda.TraceOp) {
	r.mu.Lock()
	defer r.mu.Unlock()
	op.Data = len(r.begun)
	r.begun = append(r.begun, *op)
}

func (r *recorder) End(op *cuda.TraceOp) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.ended = append(r.ended, *op)
}

func TestTracerSeesLaunchesAndCopies(t *testing.T) {
	f := cuda.FakeFunction(t, "saxpy", 0)
	m := cuda.FakeMemory(f, 4096)
	rec := &recorder{}
	if prev := cuda.SetTracer(rec); prev != nil {
		t.Fatalf("a tracer was already installed: %T", prev)
	}
	defer cuda.SetTracer(nil)

	cfg := cuda.Config{Grid: cuda.Dim3{X: 3, Y: 2}, Block: cuda.Dim3{X: 64}, SharedMem: 256}
	if err := f.Launch(cfg, m, int32(1)); err != nil {
		t.Fatal(err)
	}
	host := make([]float32, 100)
	if err := cuda.CopyHtoD(m, host); err != nil {
		t.Fatal(err)
	}
	if err := cuda.CopyDtoHAsync(host[:10], m, nil); err != nil {
		t.Fatal(err)
	}
	if err := m.MemsetD32(7); err != nil {
		t.Fatal(err)
	}
	if len(rec.begun) != 4 || len(rec.ended) != 4 {
		t.Fatalf("tracer saw %d begins and %d ends, want 4 of each", len(rec.begun), len(rec.ended))
	}
	k := rec.ended[0]
	def := f.Device().DefaultStream()
	if k.Kind != cuda.KernelOp || k.Name != "saxpy" || k.Grid != (cuda.Dim3{3, 2, 1}) || k.Block != (cuda.Dim3{64, 1, 1}) ||
		k.SharedMem != 256 || k.Stream != def || k.Device != f.Device() || k.Failed || k.Data != 0 {
		t.Errorf("launch traced as %+v", k)
	}
	want := []struct {
		kind  cuda.OpKind
		bytes int
		sync  bool
	}{{cuda.CopyHtoDOp, 400, true}, {cuda.CopyDtoHOp, 40, false}, {cuda.MemsetOp, 4096, true}}
	for i, w := range want {
		op := rec.ended[i+1]
		if op.Kind != w.kind || op.Bytes != w.bytes || op.Sync != w.sync || op.Stream != def || op.Data != i+1 {
			t.Errorf("operation %d traced as %+v, want %v of %d bytes, sync %v", i+1, op, w.kind, w.bytes, w.sync)
		}
	}

	// Operations the checks refuse never reach the driver, nor the tracer.
	if err := cuda.CopyHtoD(m, make([]float32, 2000)); err == nil {
		t.Fatal("an oversized copy was accepted")
	}
	if len(rec.begun) != 4 {
		t.Errorf("a refused copy was traced")
	}
}

func TestTracerMarksFailedLaunch(t *testing.T) {
	f := cuda.FakeFunction(t, "bad", 700)
	rec := &recorder{}
	cuda.SetTracer(rec)
	defer cuda.SetTracer(nil)
	if err := f.Launch(cuda.Config{Grid: cuda.Dim3{X: 1}, Block: cuda.Dim3{X: 1}}); err == nil {
		t.Fatal("the launch did not fail")
	}
	if len(rec.ended) != 1 || !rec.ended[0].Failed {
		t.Errorf("a failed launch was traced as %+v", rec.ended)
	}
}

func TestOpKindString(t *testing.T) {
	for k, want := range map[cuda.OpKind]string{cuda.KernelOp: "kernel", cuda.GraphOp: "graph", cuda.CopyHtoDOp: "memcpy HtoD",
		cuda.CopyDtoHOp: "memcpy DtoH", cuda.CopyDtoDOp: "memcpy DtoD", cuda.MemsetOp: "memset", 99: "OpKind(99)"} {
		if k.String() != want {
			t.Errorf("%d: %q, want %q", k, k.String(), want)
		}
	}
}

// BenchmarkLaunchFakeDriverTraced is BenchmarkLaunchFakeDriver with a
// tracer that does nothing: the cost of the hook itself.
func BenchmarkLaunchFakeDriverTraced(b *testing.B) {
	f := cuda.FakeFunction(b, "k", 0)
	m := cuda.FakeMemory(f, 4096)
	cfg := cuda.Config{Grid: cuda.Dim3{X: 1}, Block: cuda.Dim3{X: 1}}
	cuda.SetTracer(nopTracer{})
	defer cuda.SetTracer(nil)
	b.ReportAllocs()
	for b.Loop() {
		_ = f.Launch(cfg, m, int32(1))
	}
}

type nopTracer struct{}

func (nopTracer) Begin(*cuda.TraceOp) {}
func (nopTracer) End(*cuda.TraceOp)   {}
