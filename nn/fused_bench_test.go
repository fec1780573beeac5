package nn_test

import (
	"testing"

	"github.com/gocu-dev/gocu/array"
	"github.com/gocu-dev/gocu/grad"
	"github.com/gocu-dev/gocu/nn"
)

// BenchmarkFusedGPU is the forward and backward pass of each fused op at
// GPT-2's sizes (16384 rows: batch 16, context 1024) in bfloat16, fused
// and composed (GOCU_NOFUSE), with the upstream gradient given:
//
//	go test -run X -bench FusedGPU ./nn
func BenchmarkFusedGPU(b *testing.B) {
	gpu := testGPU(b)
	const rows, dim, vocab = 16384, 768, 50304
	bf := array.BFloat16
	rng := gpu.NewRNG(1)
	ln := nn.NewLayerNorm(gpu, dim)
	ln.Out = bf
	bias := grad.Param(rng.Normal(array.Float32, 0, 1, 4*dim))
	labels := rng.Integers(array.Int64, 0, vocab, rows).Copy()
	for _, c := range []struct {
		name  string
		shape []int
		dt    array.DType
		f     func(x *grad.Var) *grad.Var
	}{
		{"layernorm", []int{rows, dim}, array.Float32, ln.Forward},
		{"biasgelu", []int{rows, 4 * dim}, bf, func(x *grad.Var) *grad.Var { return nn.BiasGELU(x, bias, true, bf) }},
		{"classifier", []int{rows, vocab}, bf, func(x *grad.Var) *grad.Var { return nn.CrossEntropy(x, labels) }},
	} {
		for _, mode := range []string{"fused", "composed"} {
			b.Run(c.name+"/"+mode, func(b *testing.B) {
				if mode == "composed" {
					b.Setenv("GOCU_NOFUSE", "1")
					if c.name == "classifier" {
						c.dt = array.Float32 // the composed loss's precision
					}
				}
				x := grad.Param(rng.Normal(array.Float32, 0, 1, c.shape...).AsType(c.dt).Copy())
				run := func() {
					s := gpu.NewScope()
					defer s.Close()
					x.ZeroGrad()
					y := c.f(x)
					g := gpu.Ones(y.DType(), y.Shape()...)
					if err := y.BackwardWith(g); err != nil {
						b.Fatal(err)
					}
				}
				run()
				if err := gpu.Sync(); err != nil {
					b.Fatal(err)
				}
				b.ResetTimer()
				for range b.N {
					run()
				}
				if err := gpu.Sync(); err != nil {
					b.Fatal(err)
				}
			})
		}
	}
}

// BenchmarkBiasGradGPU is a bias's gradient in a GPT-2 step: the column
// sums of a 16384x768 gradient, bfloat16 widened to float32 (the q, k and
// v biases) and float32 (the projections'), three each per layer:
//
//	go test -run X -bench BiasGradGPU ./nn
func BenchmarkBiasGradGPU(b *testing.B) {
	gpu := testGPU(b)
	for _, dt := range []array.DType{array.BFloat16, array.Float32} {
		b.Run(dt.String(), func(b *testing.B) {
			g := gpu.NewRNG(2).Normal(array.Float32, 0, 1, 16384, 768).AsType(dt).Copy()
			run := func() {
				db := g.AsType(array.Float32).Sum(0).Copy()
				db.Close()
			}
			run()
			if err := gpu.Sync(); err != nil {
				b.Fatal(err)
			}
			b.ResetTimer()
			for range b.N {
				run()
			}
			if err := gpu.Sync(); err != nil {
				b.Fatal(err)
			}
		})
	}
}
