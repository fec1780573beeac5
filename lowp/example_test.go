package lowp_test

import (
	"fmt"

	"github.com/gocu-dev/gocu/lowp"
)

// Each format rounds 0.1 to its nearest value; widening back is exact.
func Example() {
	x := float32(0.1)
	h := lowp.Float16FromFloat32(x)
	b := lowp.BFloat16FromFloat32(x)
	e4 := lowp.Float8E4M3FromFloat32(x)
	e5 := lowp.Float8E5M2FromFloat32(x)
	fmt.Printf("Float16    %#04x %v\n", h.Bits(), h)
	fmt.Printf("BFloat16   %#04x %v\n", b.Bits(), b)
	fmt.Printf("Float8E4M3 %#02x %v\n", e4.Bits(), e4)
	fmt.Printf("Float8E5M2 %#02x %v\n", e5.Bits(), e5)
	fmt.Println(h.Float32() == 0.099975586)
	// Output:
	// Float16    0x2e66 0.099975586
	// BFloat16   0x3dcd 0.100097656
	// Float8E4M3 0x1d 0.1015625
	// Float8E5M2 0x2e 0.09375
	// true
}

// Float16 overflows to infinity; the 8-bit formats saturate.
func Example_overflow() {
	for _, x := range []float32{70000, -1e30} {
		fmt.Println(lowp.Float16FromFloat32(x), lowp.Float8E4M3FromFloat32(x), lowp.Float8E5M2FromFloat32(x))
	}
	// Output:
	// +Inf 448 57344
	// -Inf -448 -57344
}

func ExampleFloat16FromFloat32() {
	fmt.Println(lowp.Float16FromFloat32(1.0009765625))  // 1 + 2^-10: a Float16
	fmt.Println(lowp.Float16FromFloat32(1.00048828125)) // 1 + 2^-11: a tie, to even
	fmt.Println(lowp.Float16FromFloat32(1e-8))          // below half the smallest subnormal
	fmt.Println(lowp.Float16FromFloat32(65519))         // below the overflow threshold 65520
	// Output:
	// 1.0009766
	// 1
	// 0
	// 65504
}

// A float64 is rounded once: rounding it to float32 first would make it a
// tie and round it down.
func ExampleFloat16FromFloat64() {
	x := 1 + 0x1p-11 + 0x1p-30
	fmt.Println(lowp.Float16FromFloat64(x))
	fmt.Println(lowp.Float16FromFloat32(float32(x)))
	// Output:
	// 1.0009766
	// 1
}

func ExampleFloat8E4M3FromFloat32() {
	for _, x := range []float32{3.3, 460, 1e9, float32(0x1p-10)} {
		e := lowp.Float8E4M3FromFloat32(x)
		fmt.Printf("%v -> %#02x = %v\n", x, e.Bits(), e)
	}
	// Output:
	// 3.3 -> 0x45 = 3.25
	// 460 -> 0x7e = 448
	// 1e+09 -> 0x7e = 448
	// 0.0009765625 -> 0x00 = 0
}

func ExampleFromFloat32s() {
	src := []float32{1, 0.5, 1e-3, 3e5}
	dst := make([]lowp.BFloat16, len(src))
	lowp.FromFloat32s(dst, src)
	back := make([]float32, len(dst))
	lowp.ToFloat32s(back, dst)
	fmt.Println(dst)
	fmt.Println(back)
	// Output:
	// [1 0.5 0.0009994507 299008]
	// [1 0.5 0.0009994507 299008]
}

// The fmt verbs act on the float32 value.
func ExampleFloat16_Format() {
	h := lowp.Float16FromFloat32(3.14159)
	fmt.Printf("%v %.2f %8.3e %#04x\n", h, h, h, h.Bits())
	// Output:
	// 3.140625 3.14 3.141e+00 0x4248
}
