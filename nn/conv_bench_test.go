package nn_test

import (
	"testing"
	"time"

	"github.com/gocu-dev/gocu/array"
	"github.com/gocu-dev/gocu/grad"
	"github.com/gocu-dev/gocu/nn"
)

// BenchmarkConv2dStep: forward and backward of a 3×3 convolution, 64 to
// 64 channels on 32 images of 32×32 (dense and depthwise), and of a 3×3
// max pool, on the CPU and the GPU; GFLOP/s counts the convolution's
// three products.
func BenchmarkConv2dStep(b *testing.B) {
	for _, dev := range []string{"cpu", "gpu"} {
		b.Run(dev, func(b *testing.B) {
			d := array.CPU()
			if dev == "gpu" {
				d = testGPU(b)
			}
			for _, c := range []struct {
				name   string
				groups int
			}{{"dense", 1}, {"depthwise", 64}, {"maxpool", 0}} {
				b.Run(c.name, func(b *testing.B) {
					const n, ch, hw = 32, 64, 32
					rng := d.NewRNG(1)
					var m nn.Module = &nn.MaxPool2d{K: 3, Stride: 2, Padding: 1}
					if c.groups > 0 {
						m = nn.NewConv2dWith(rng, ch, ch, [2]int{3, 3}, &nn.Conv2dOptions{Padding: [2]int{1, 1}, Groups: c.groups})
					}
					x := grad.Param(rng.Normal(array.Float32, 0, 1, n, ch, hw, hw))
					ps := append(nn.Params(m), x)
					step := func() {
						for _, p := range ps {
							p.ZeroGrad()
						}
						if err := m.Forward(x).Square().Mean().Backward(); err != nil {
							b.Fatal(err)
						}
					}
					step()
					if err := d.Sync(); err != nil {
						b.Fatal(err)
					}
					b.ResetTimer()
					t0 := time.Now()
					for range b.N {
						step()
					}
					if err := d.Sync(); err != nil {
						b.Fatal(err)
					}
					if c.groups > 0 {
						flops := 3 * 2 * float64(n*ch*hw*hw*ch/c.groups*9)
						b.ReportMetric(flops*float64(b.N)/time.Since(t0).Seconds()/1e9, "GFLOP/s")
					}
				})
			}
		})
	}
}
