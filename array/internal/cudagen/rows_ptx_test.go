package cudagen

import (
	"regexp"
	"strings"
	"testing"

	"github.com/gocu-dev/gocu/array/internal/backend"
	"github.com/gocu-dev/gocu/array/internal/cpu"
)

// The row quantisation of quantize_rows' rows (8192 float32 into int8),
// compiled for sm_90: the row kernel with 256 threads holding 32 values
// each, the row read from global memory once in 16-byte loads, the
// values stored 4 bytes at a time, one float-to-int conversion per value
// (rintf's was a second) and no double precision.
func TestQuantizeRowKernelPTX(t *testing.T) {
	clangPath(t)
	be := cpu.New(0)
	const L = 8192
	sh := []int{2, L}
	in, _ := be.Alloc(backend.Float32, 2*L)
	out, _ := be.Alloc(backend.Int8, 2*L)
	scale, _ := be.Alloc(backend.Float32, 2)
	p := &backend.Program{Shape: sh, Inputs: []backend.Operand{{Buf: in, Layout: backend.Contiguous(sh)}},
		Nodes: []backend.Node{{Op: backend.OpInput, DType: backend.Float32}}}
	req := &backend.AxisOp{Kind: backend.Quantize, In: p, Axis: 1, QMax: QMax(backend.Int8),
		Out:   backend.Operand{Buf: out, Layout: backend.Contiguous(sh)},
		Scale: backend.Operand{Buf: scale, Layout: backend.Contiguous([]int{2})}}
	pl, err := PlanAxis(req, hostOpts)
	if err != nil {
		t.Fatal(err)
	}
	if len(pl.Launches) != 1 || !strings.HasPrefix(pl.Launches[0].Kernel.Name, "gocu_rows_") {
		t.Fatalf("not planned as one row kernel: %d launches", len(pl.Launches))
	}
	k := pl.Launches[0].Kernel
	if k.Block != 256 || !strings.Contains(k.Source, "float v[32];") {
		t.Fatalf("%s: block %d, not 32 values a thread", k.Name, k.Block)
	}
	ptx := compilePTX(t, k)
	count := func(re string) int { return len(regexp.MustCompile(re).FindAllString(ptx, -1)) }
	if n, all := count(`ld\.global(\.nc)?\.v4\.f32`), count(`ld\.global`); n != 8 || all != 8 {
		t.Errorf("%d 16-byte loads of %d global loads, want 8 of 8: the row is read once", n, all)
	}
	if n := count(`st\.global\.v4\.u8|st\.global\.(u|b)32`); n != 8 {
		t.Errorf("%d 4-byte stores, want 8", n)
	}
	if n := count(`cvt\.rni\.sat\.s32\.f32`); n != 32 {
		t.Errorf("%d float-to-int conversions, want 32 (one per value)", n)
	}
	if n := count(`\.f64`); n != 0 {
		t.Errorf("%d double-precision instructions, want none", n)
	}
}
