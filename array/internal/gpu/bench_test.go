package gpu

import (
	"testing"

	"github.com/gocu-dev/gocu/array/internal/backend"
	"github.com/gocu-dev/gocu/array/internal/cudagen"
)

// BenchmarkEvalLookupBind: the GPU backend's Go work for one tiny
// elementwise operation (z = x + y over 16 float32) short of the launch:
// resolving the buffers, the request key, the plan cache lookup and
// binding the arguments. Launch's own Go side is cuda's
// BenchmarkLaunchFakeDriver.
func BenchmarkEvalLookupBind(b *testing.B) {
	be := testBackend()
	w := &world{b: be}
	x, y, z := w.buf(backend.Float32, 16), w.buf(backend.Float32, 16), w.buf(backend.Float32, 16)
	p := &backend.Program{Shape: []int{16},
		Inputs: []backend.Operand{contiguousOperand(x, 16), contiguousOperand(y, 16)},
		Nodes: []backend.Node{{Op: backend.OpInput, DType: backend.Float32},
			{Op: backend.OpInput, DType: backend.Float32, Args: [3]int32{1}},
			{Op: backend.OpAdd, DType: backend.Float32, Args: [3]int32{0, 1}}}}
	out := contiguousOperand(z, 16)
	var arr [8]*Buffer
	bufs, err := be.operands(arr[:0], p, out.Buf)
	if err != nil {
		b.Fatal(err)
	}
	cp, err := cudagen.PlanEval(p, out, testOptions())
	if err != nil {
		b.Fatal(err)
	}
	c := call{bufs: bufs, scalars: p.Scalars}
	pl, err := compilePlan(cp, &c, nil, fakeLoad)
	if err != nil {
		b.Fatal(err)
	}
	var ka [keySize]byte
	be.plans.put(evalKey(ka[:0], p, out, bufs), pl)
	var argv [maxFastArgs]uint64
	b.ReportAllocs()
	for b.Loop() {
		var arr [8]*Buffer
		bufs, err := be.operands(arr[:0], p, out.Buf)
		if err != nil {
			b.Fatal(err)
		}
		var ka [keySize]byte
		k := evalKey(ka[:0], p, out, bufs)
		got := be.plans.get(k)
		if got == nil {
			b.Fatal("no plan")
		}
		c := call{bufs: bufs, scalars: p.Scalars}
		l := &got.launches[0]
		got.bind(l, &c, 0, 0, argv[:len(l.args)])
	}
}
