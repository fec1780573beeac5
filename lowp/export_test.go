package lowp

// The canonical NaNs, for the tests of package lowp_test.
const (
	NaNFloat16  = nanFloat16
	NaNBFloat16 = nanBFloat16
	NaNE4M3     = nanE4M3
	NaNE5M2     = nanE5M2
	NaNFloat32  = nanFloat32
	NaNFloat64  = nanFloat64
)

// NarrowNaN64 is cvt.rn.f16.f64 (frac 10) or cvt.rn.bf16.f64 (frac 7) of a
// float64 NaN.
func NarrowNaN64(b uint64, frac uint) uint16 { return narrowNaN64(b, frac) }

// WidenNaN is cvt.f64.f32 of a float32 NaN.
func WidenNaN(b uint32) float64 { return widenNaN(b) }
