package attn

import (
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/gocu-dev/gocu"
	"github.com/gocu-dev/gocu/array"
	"github.com/gocu-dev/gocu/kernel"
)

// TestArrays runs Forward and Backward on arrays on the simulator (whose
// Empty fills outputs with 0xFF bytes, NaN as bf16 and float32) against
// the reference.
func TestArrays(t *testing.T) {
	d := simDev(t)
	s := shape{2, 1, 80, 64}
	p := newProblem(t, d, newRand(t), s, true, allHeads(s.bh()))
	arr := func(x []kernel.BFloat16) *array.Array { return array.FromSliceOn(d, x, s.dims()...) }
	q, k, v, do := arr(p.q), arr(p.k), arr(p.v), arr(p.do)
	o, lse, err := Forward(q, k, v, p.scale, p.causal)
	must(t, err)
	dq, dk, dv, err := Backward(q, k, v, o, lse, do, p.scale, p.causal)
	must(t, err)
	if got, want := lse.Shape(), s.dims()[:3]; !equal(got, want) || lse.DType() != array.Float32 {
		t.Errorf("lse is %v %v, want float32 %v", lse.DType(), got, want)
	}
	p.reference()
	bf := func(a *array.Array) []kernel.BFloat16 {
		if !equal(a.Shape(), s.dims()) {
			t.Fatalf("shape %v, want %v", a.Shape(), s.dims())
		}
		x, err := array.ToSlice[kernel.BFloat16](a)
		must(t, err)
		return x
	}
	l, err := array.ToSlice[float32](lse)
	must(t, err)
	compare(t, "o", p, bf(o), func(g Result) []float64 { return g.O }, oRtol, oAtol, oFrob)
	compare(t, "lse", p, l, func(g Result) []float64 { return g.LSE }, 1e-5, 1e-5, 1e-5)
	compare(t, "dq", p, bf(dq), func(g Result) []float64 { return g.DQ }, gRtol, gAtol, gFrob)
	compare(t, "dk", p, bf(dk), func(g Result) []float64 { return g.DK }, gRtol, gAtol, gFrob)
	compare(t, "dv", p, bf(dv), func(g Result) []float64 { return g.DV }, gRtol, gAtol, gFrob)
}

// TestErrors provokes each argument error of Forward and Backward.
func TestErrors(t *testing.T) {
	d := simDev(t)
	m := array.On(d)
	r := m.NewRNG(1)
	bf := func(shape ...int) *array.Array { return r.Normal(array.BFloat16, 0, 1, shape...) }
	q, k, v := bf(1, 2, 64, 64), bf(1, 2, 64, 64), bf(1, 2, 64, 64)
	cpu, err := gocu.Open("cpu")
	must(t, err)
	failed := q.Reshape(7)
	for _, c := range []struct {
		name    string
		q, k, v *array.Array
		scale   float64
		want    error
		msg     string
	}{
		{"float32 q", r.Normal(array.Float32, 0, 1, 1, 2, 64, 64), k, v, 1, array.ErrDType, "q is float32, want bfloat16"},
		{"3-d q", bf(2, 64, 64), k, v, 1, array.ErrShape, "want (batch, heads, seq, dim)"},
		{"k of another shape", q, bf(1, 2, 32, 64), v, 1, array.ErrShape, "k has shape [1 2 32 64], want [1 2 64 64]"},
		{"dim 96", bf(1, 2, 64, 96), bf(1, 2, 64, 96), bf(1, 2, 64, 96), 1, array.ErrShape, "head dimension 96"},
		{"empty", bf(1, 0, 64, 64), bf(1, 0, 64, 64), bf(1, 0, 64, 64), 1, array.ErrShape, "must be positive"},
		{"zero scale", q, k, v, 0, array.ErrValue, "scale 0"},
		{"negative scale", q, k, v, -0.125, array.ErrValue, "positive finite scale"},
		{"NaN scale", q, k, v, math.NaN(), array.ErrValue, "scale NaN"},
		{"infinite scale", q, k, v, math.Inf(1), array.ErrValue, "scale +Inf"},
		{"v with a strided last axis", q, k, bf(1, 2, 64, 64).SwapAxes(2, 3), 1, array.ErrValue, "v: a view with strides [8192 4096 1 64]: the last axis is not contiguous"},
		{"nil k", q, nil, v, 1, array.ErrValue, "k is nil"},
		{"v on another device", q, k, array.On(cpu).Zeros(array.BFloat16, 1, 2, 64, 64), 1, array.ErrDevice, "v is on"},
		{"failed v", q, k, failed, 1, array.ErrShape, "attn: Forward: v: "},
		{"misaligned q", bf(8193).Slice(array.S(1, 8193)).Reshape(1, 2, 64, 64), k, v, 1, array.ErrValue, "q: its data starts at an address that is not 16-byte aligned"},
	} {
		_, _, err := Forward(c.q, c.k, c.v, c.scale, false)
		if !errors.Is(err, c.want) || !strings.Contains(err.Error(), c.msg) {
			t.Errorf("%s: Forward: %v, want %v containing %q", c.name, err, c.want, c.msg)
		}
	}

	o, lse, err := Forward(q, k, v, 0.125, true)
	must(t, err)
	for _, c := range []struct {
		name   string
		o, lse *array.Array
		want   error
		msg    string
	}{
		{"bf16 lse", o, bf(1, 2, 64), array.ErrDType, "lse is bfloat16, want float32"},
		{"4-d lse", o, r.Normal(array.Float32, 0, 1, 1, 2, 64, 1), array.ErrShape, "lse has shape [1 2 64 1], want [1 2 64]"},
		{"short o", bf(1, 2, 63, 64), lse, array.ErrShape, "o has shape [1 2 63 64]"},
	} {
		_, _, _, err := Backward(q, k, v, c.o, c.lse, bf(1, 2, 64, 64), 0.125, true)
		if !errors.Is(err, c.want) || !strings.Contains(err.Error(), c.msg) {
			t.Errorf("%s: Backward: %v, want %v containing %q", c.name, err, c.want, c.msg)
		}
	}
	if _, _, _, err := Backward(q, k, v, o, lse, bf(1, 2, 64, 64), -1, true); !errors.Is(err, array.ErrValue) {
		t.Errorf("Backward with scale -1: %v, want ErrValue", err)
	}
}

// TestGPUMisaligned passes a view whose data is not 16-byte aligned on
// the GPU: an error, not a misaligned-address fault that would end the
// context.
func TestGPUMisaligned(t *testing.T) {
	d := needGPU(t)
	x := array.On(d).NewRNG(1).Normal(array.BFloat16, 0, 1, 8193)
	q := x.Slice(array.S(1, 8193)).Reshape(1, 2, 64, 64)
	if _, _, err := Forward(q, q, q, 0.125, false); !errors.Is(err, array.ErrValue) || !strings.Contains(err.Error(), "16-byte aligned") {
		t.Errorf("Forward of a misaligned view: %v, want ErrValue saying 16-byte aligned", err)
	}
	if err := x.Err(); err != nil {
		t.Fatal(err)
	}
}
