package gen

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/gocu-dev/gocu/gen/testdata/kernels/tensor"
	"github.com/gocu-dev/gocu/kernel"
	"github.com/gocu-dev/gocu/lowp"
	"github.com/gocu-dev/gocu/meta"
)

// TestGPUTensor runs the tensor test kernels on the GPU: the conversions
// must give lowp's bits exactly (the inline PTX against the pure-Go
// implementation), and the three MMAs through CpAsync and LdMatrix the
// float64 product within float32 summation noise.
func TestGPUTensor(t *testing.T) {
	needGPU(t)
	r := rand.New(rand.NewPCG(7, 8))
	specials := []float32{0, float32(math.Copysign(0, -1)), 1, -1, 65504, 65520, 448, 464, 57344, 1e-8, 1e-40, 3.4e38,
		float32(math.Inf(1)), float32(math.Inf(-1)), float32(math.NaN()), 1 + 0x1p-11, 1 + 0x1p-8, 1 + 0x3p-9}
	const n = 4096
	x := make([]float32, n)
	for i := range x {
		if i < len(specials) {
			x[i] = specials[i]
		} else {
			x[i] = float32(r.NormFloat64() * math.Pow(2, float64(r.IntN(40)-20)))
		}
	}
	m, k, _ := meta.Lookup(tensor.Convert)
	out, _, err := gpuLaunch(m.Source, k.Entry, nil, kernel.Dim3{X: n / 128, Y: 1, Z: 1}, kernel.Dim3{X: 128, Y: 1, Z: 1}, 0,
		[]any{x, make([]kernel.Half, n), make([]kernel.BFloat16, n), make([]kernel.FP8E4M3, n), make([]kernel.FP8E5M2, n), make([]float32, 12*n), make([]uint32, 2*n)})
	if err != nil {
		t.Fatal(err)
	}
	h, b, e4, e5 := out[1].([]kernel.Half), out[2].([]kernel.BFloat16), out[3].([]kernel.FP8E4M3), out[4].([]kernel.FP8E5M2)
	bad := 0
	for i, v := range x {
		if h[i] != lowp.Float16FromFloat32(v) || b[i] != lowp.BFloat16FromFloat32(v) || e4[i] != lowp.Float8E4M3FromFloat32(v) || e5[i] != lowp.Float8E5M2FromFloat32(v) {
			if bad++; bad <= 10 {
				t.Errorf("x=%g (%#08x): GPU f16 %#04x bf16 %#04x e4m3 %#02x e5m2 %#02x; lowp %#04x %#04x %#02x %#02x", v, math.Float32bits(v),
					h[i], b[i], e4[i], e5[i], lowp.Float16FromFloat32(v), lowp.BFloat16FromFloat32(v), lowp.Float8E4M3FromFloat32(v), lowp.Float8E5M2FromFloat32(v))
			}
		}
	}
	// The rest of each row is Go's run of the same kernel on the executor.
	want := make([]float32, 12*n)
	wantBits := make([]uint32, 2*n)
	launch(t, tensor.Convert, kernel.Dim3{X: n / 128, Y: 1, Z: 1}, kernel.Dim3{X: 128, Y: 1, Z: 1}, 0,
		x, make([]kernel.Half, n), make([]kernel.BFloat16, n), make([]kernel.FP8E4M3, n), make([]kernel.FP8E5M2, n), want, wantBits)
	got, gotBits := out[5].([]float32), out[6].([]uint32)
	for i := range want {
		if math.Float32bits(got[i]) != math.Float32bits(want[i]) && !(got[i] != got[i] && want[i] != want[i]) {
			if bad++; bad <= 20 {
				t.Errorf("Convert out[%d] (x=%g, field %d) = %g, Go gives %g", i, x[i/12], i%12, got[i], want[i])
			}
		}
	}
	for i := range wantBits {
		if gotBits[i] != wantBits[i] {
			if bad++; bad <= 30 {
				t.Errorf("Convert bits[%d] (x=%g) = %#08x, Go gives %#08x", i, x[i/2], gotBits[i], wantBits[i])
			}
		}
	}

	// Tile: one warp's bf16, fp16 and tf32 products.
	a, bb := make([]kernel.BFloat16, 256), make([]kernel.BFloat16, 128)
	ah, bh := make([]kernel.Half, 256), make([]kernel.Half, 128)
	for i := range a {
		a[i], ah[i] = kernel.ToBFloat16(float32(r.NormFloat64())), kernel.ToHalf(float32(r.NormFloat64()))
	}
	for i := range bb {
		bb[i], bh[i] = kernel.ToBFloat16(float32(r.NormFloat64())), kernel.ToHalf(float32(r.NormFloat64()))
	}
	m, k, _ = meta.Lookup(tensor.Tile)
	out, _, err = gpuLaunch(m.Source, k.Entry, nil, kernel.Dim3{X: 1, Y: 1, Z: 1}, kernel.Dim3{X: 32, Y: 1, Z: 1}, 0,
		[]any{a, bb, ah, bh, make([]float32, 128), make([]float32, 128), make([]float32, 128)})
	if err != nil {
		t.Fatal(err)
	}
	for which, kk := range map[int]int{4: 16, 5: 16, 6: 8} {
		c := out[which].([]float32)
		for i := range 16 {
			for j := range 8 {
				s := 0.0
				for l := range kk {
					if which == 5 {
						s += float64(ah[i*16+l].Float32()) * float64(bh[l*8+j].Float32())
					} else {
						s += float64(a[i*16+l].Float32()) * float64(bb[l*8+j].Float32())
					}
				}
				if d := math.Abs(float64(c[i*8+j]) - s); d > 1e-5*(1+math.Abs(s)) {
					if bad++; bad <= 40 {
						t.Errorf("Tile output %d [%d][%d] = %g, want %g", which, i, j, c[i*8+j], s)
					}
				}
			}
		}
	}
}
