package lowp

// The canonical NaNs, for the tests of package lowp_test.
const (
	NaNFloat16  = nanFloat16
	NaNBFloat16 = nanBFloat16
	NaNE4M3     = nanE4M3
	NaNE5M2     = nanE5M2
	NaNFloat32  = nanFloat32
	NaNFloat64  = nanFloat64

	NaNFloat16From64  = nanFloat16From64
	NaNBFloat16From64 = nanBFloat16From64
)

// WidenNaN is cvt.f64.f32 of a float32 NaN.
func WidenNaN(b uint32) float64 { return widenNaN(b) }
