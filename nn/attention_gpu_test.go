package nn_test

import (
	"errors"
	"fmt"
	"math"
	"testing"

	"github.com/gocu-dev/gocu/array"
	"github.com/gocu-dev/gocu/grad"
	"github.com/gocu-dev/gocu/nn"
)

// gpuTol is the relative error (relErr) allowed against float64 for a
// dtype: float32 rounding, or bfloat16's 8 bits through two products
// (the CPU's bfloat16 attention measures 3e-3 to 5e-3).
func gpuTol(dt array.DType) float64 {
	if dt == array.Float32 {
		return 1e-5
	}
	return 1e-2
}

// attentionOn runs ScaledDotProductAttention on d in dtype dt from the
// float64 inputs xs (q, k, v) and returns the output and the gradients of
// sum(y·c) for q, k and v.
func attentionOn(t *testing.T, d *array.Maker, dt array.DType, xs []*array.Array, c *array.Array, o *nn.AttentionOptions) [][]float64 {
	t.Helper()
	var vs []*grad.Var
	for _, x := range xs {
		vs = append(vs, grad.Param(x.To(d.Device()).AsType(dt).Copy()))
	}
	if o != nil && o.KeyPadding != nil {
		oc := *o
		oc.KeyPadding = o.KeyPadding.To(d.Device())
		o = &oc
	}
	y := nn.ScaledDotProductAttention(vs[0], vs[1], vs[2], o)
	if err := y.Err(); err != nil {
		t.Fatal(err)
	}
	if y.DType() != dt {
		t.Fatalf("output dtype %v, want %v", y.DType(), dt)
	}
	if err := y.AsType(c.DType()).Mul(c.To(d.Device())).Sum().Backward(); err != nil {
		t.Fatal(err)
	}
	out := [][]float64{f64(t, y.Value())}
	for _, v := range vs {
		out = append(out, f64(t, v.Grad()))
	}
	return out
}

// TestGPUAttention compares ScaledDotProductAttention on the GPU in
// float32 and bfloat16 (forward and backward) with the CPU in float64, on
// the head sizes of the fused kernels (64, 128) and on others.
func TestGPUAttention(t *testing.T) {
	attentionAgainstFloat64(t, testGPU(t), []attnCase{
		{2, 4, 128, 128, 64, true, false},
		{1, 2, 100, 100, 128, true, false},
		{2, 2, 64, 96, 64, false, false},
		{2, 3, 37, 53, 48, true, true},
	})
}

// TestAttentionBFloat16 is TestGPUAttention on the CPU, smaller.
func TestAttentionBFloat16(t *testing.T) {
	attentionAgainstFloat64(t, array.CPU(), []attnCase{
		{1, 2, 24, 24, 64, true, false},
		{2, 1, 9, 13, 8, true, true},
	})
}

type attnCase struct {
	b, h, sq, sk, d int
	causal, pad     bool
}

func attentionAgainstFloat64(t *testing.T, d *array.Maker, cases []attnCase) {
	cpu := array.CPU()
	for _, c := range cases {
		for _, dt := range []array.DType{array.Float32, array.BFloat16} {
			t.Run(fmt.Sprintf("%v/B%d-H%d-Sq%d-Sk%d-D%d-causal%v-pad%v", dt, c.b, c.h, c.sq, c.sk, c.d, c.causal, c.pad), func(t *testing.T) {
				rng := cpu.NewRNG(40)
				var xs []*array.Array
				for _, s := range []int{c.sq, c.sk, c.sk} {
					// Inputs rounded to dt, so that the reference sees the
					// same values.
					xs = append(xs, rng.Normal(array.Float64, 0, 1, c.b, c.h, s, c.d).AsType(dt).AsType(array.Float64))
				}
				w := rng.Normal(array.Float32, 0, 1, c.b, c.h, c.sq, c.d)
				o := &nn.AttentionOptions{Causal: c.causal}
				if c.pad {
					o.KeyPadding = rng.Uniform(array.Float32, 0, 1, c.b, c.sk).Lt(0.3)
				}
				want := attentionOn(t, cpu, array.Float64, xs, w.AsType(array.Float64), o)
				got := attentionOn(t, d, dt, xs, w, o)
				for i, what := range []string{"output", "dq", "dk", "dv"} {
					if e := relErr(got[i], want[i]); e > gpuTol(dt) || math.IsNaN(e) {
						t.Errorf("%s: relative error %.3g against float64 (tolerance %.3g)", what, e, gpuTol(dt))
					}
				}
			})
		}
	}
}

// TestGPUMultiheadAttention compares the layer on the GPU (float32, and
// computing in bfloat16) with the CPU in float64: output and gradients of
// the input and every parameter.
func TestGPUMultiheadAttention(t *testing.T) {
	mhaAgainstFloat64(t, testGPU(t), 256, 4, 96)
}

// TestMultiheadAttentionBFloat16 is TestGPUMultiheadAttention on the CPU.
func TestMultiheadAttentionBFloat16(t *testing.T) {
	mhaAgainstFloat64(t, array.CPU(), 32, 4, 24)
}

func mhaAgainstFloat64(t *testing.T, d *array.Maker, dim, heads, seq int) {
	run := func(d *array.Maker, cast array.DType, compute array.DType) [][]float64 {
		m := nn.NewMultiheadAttention(d.NewRNG(41), dim, heads)
		m.Causal, m.Compute = true, compute
		if err := nn.Cast(m, cast); err != nil {
			t.Fatal(err)
		}
		// Biases away from zero, so that their gradients are checked.
		for _, p := range []*grad.Var{m.InProjBias, m.OutProj.Bias} {
			if err := p.SetValue(d.NewRNG(43).Normal(array.Float32, 0, 1, p.Shape()...).AsType(cast).Copy()); err != nil {
				t.Fatal(err)
			}
		}
		x := grad.Param(d.NewRNG(42).Normal(array.Float32, 0, 1, 2, seq, dim).AsType(cast).Copy())
		y := m.Forward(x)
		if err := y.Square().Mean().Backward(); err != nil {
			t.Fatal(err)
		}
		if y.DType() != cast {
			t.Fatalf("output dtype %v, want %v", y.DType(), cast)
		}
		out := [][]float64{f64(t, y.Value()), f64(t, x.Grad())}
		for _, p := range nn.Params(m) {
			if p.Grad().DType() != cast {
				t.Fatalf("gradient dtype %v, want %v", p.Grad().DType(), cast)
			}
			out = append(out, f64(t, p.Grad()))
		}
		return out
	}
	want := run(array.CPU(), array.Float64, 0)
	for _, compute := range []array.DType{0, array.BFloat16} {
		got := run(d, array.Float32, compute)
		tol := gpuTol(array.Float32)
		if compute != 0 {
			tol = gpuTol(compute)
		}
		for i, what := range []string{"output", "dx", "in_proj_weight", "in_proj_bias", "out_proj.weight", "out_proj.bias"} {
			e := relErr(got[i], want[i])
			if e > tol || math.IsNaN(e) {
				t.Errorf("compute %v: %s: relative error %.3g against float64 (tolerance %.3g)", compute, what, e, tol)
			} else if compute != 0 && e < 1e-5 {
				t.Errorf("compute %v: %s: relative error %.3g: the products did not run in %v", compute, what, e, compute)
			}
		}
	}
}

// TestGPUEmbedding compares the GPU's gather and scatter-add with the
// CPU's, and checks that a bad id, negative or too large, is reported.
func TestGPUEmbedding(t *testing.T) {
	gpu := testGPU(t)
	for _, dt := range []array.DType{array.Int64, array.Int32, array.Uint8} {
		var got [2][][]float64
		for k, d := range []*array.Maker{array.CPU(), gpu} {
			e := nn.NewEmbeddingPadding(d.NewRNG(43), 300, 64, 0)
			ids := d.NewRNG(44).Integers(array.Int64, 0, 256, 8, 128).AsType(dt)
			y := e.Forward(grad.Const(ids))
			c := d.NewRNG(45).Normal(array.Float32, 0, 1, 8, 128, 64)
			if err := y.Mul(c).Sum().Backward(); err != nil {
				t.Fatal(err)
			}
			got[k] = [][]float64{f64(t, y.Value()), f64(t, e.Weight.Grad())}
		}
		near(t, fmt.Sprintf("embedding of %v ids", dt), got[1][0], got[0][0], 0)
		near(t, fmt.Sprintf("embedding gradient of %v ids", dt), got[1][1], got[0][1], 1e-5)
	}

	e := nn.NewEmbedding(gpu.NewRNG(46), 10, 4)
	for _, ids := range [][]int64{{1, 10}, {-1, 2}} {
		y := e.Forward(grad.Const(array.FromSliceOn(gpu.Device(), ids)))
		_, err := y.Value().Float64s()
		if !errors.Is(err, array.ErrIndex) {
			t.Errorf("ids %v: error %v, want ErrIndex", ids, err)
		}
	}
}

// BenchmarkGPUAttention times ScaledDotProductAttention forward and
// backward in bfloat16, causal, in the shape of the reference table
// (B4 H16 S4096 D128 is too large for the composed operations' S×S
// scores at batch 4: this is S1024) and GPT-2's (B16 H12 S1024 D64).
// It reports TFLOP/s counting the causal half, as FlashAttention does.
func BenchmarkGPUAttention(b *testing.B) {
	gpu := testGPU(b)
	for _, c := range []struct{ b, h, s, d int }{{4, 16, 1024, 128}, {16, 12, 1024, 64}} {
		b.Run(fmt.Sprintf("B%d-H%d-S%d-D%d", c.b, c.h, c.s, c.d), func(b *testing.B) {
			rng := gpu.NewRNG(47)
			var qkv []*grad.Var
			for range 3 {
				qkv = append(qkv, grad.Param(rng.Normal(array.BFloat16, 0, 1, c.b, c.h, c.s, c.d).Copy()))
			}
			g := rng.Normal(array.BFloat16, 0, 1, c.b, c.h, c.s, c.d).Copy()
			step := func() {
				y := nn.ScaledDotProductAttention(qkv[0], qkv[1], qkv[2], &nn.AttentionOptions{Causal: true})
				if err := y.BackwardWith(g); err != nil {
					b.Fatal(err)
				}
				for _, v := range qkv {
					v.Grad().Close()
					v.ZeroGrad()
				}
			}
			step()
			if err := gpu.Sync(); err != nil {
				b.Fatal(err)
			}
			b.ResetTimer()
			for range b.N {
				step()
			}
			if err := gpu.Sync(); err != nil {
				b.Fatal(err)
			}
			// Forward 2 products, backward 5, each 2·B·H·S²·D, halved by the mask.
			flops := 7 * 2 * float64(c.b*c.h*c.s*c.s*c.d) / 2
			b.ReportMetric(flops*float64(b.N)/b.Elapsed().Seconds()/1e12, "TFLOP/s")
		})
	}
}
