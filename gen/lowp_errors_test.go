package gen

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

// Go's operators on kernel.Half, BFloat16 and the FP8 types would act on
// their bit patterns (they are unsigned integers in Go), and so would Go's
// numeric conversions: gocu gen rejects each, at the operator's position,
// and says what to write instead. /*ERR*/ marks the position, as in
// errorCases.
const lowpParams = "x, h []kernel.Half, b []kernel.BFloat16, e []kernel.FP8E4M3, e5 []kernel.FP8E5M2, f []float32, i []int32"

var lowpErrorCases = []errorCase{
	{name: "half +", body: "x[0] = /*ERR*/h[0] + h[1]",
		msg: "the operator + on kernel.Half (Go applies it to the bit pattern) is not supported in a kernel: compute in float32: x.Float32() + y.Float32(), and round back with kernel.ToHalf"},
	{name: "bfloat16 -", body: "b[0] = /*ERR*/b[0] - b[1]",
		msg: "the operator - on kernel.BFloat16 (Go applies it to the bit pattern) is not supported in a kernel: compute in float32: x.Float32() - y.Float32(), and round back with kernel.ToBFloat16"},
	{name: "fp8 *", body: "e[0] = /*ERR*/e[0] * e[1]",
		msg: "the operator * on kernel.FP8E4M3 (Go applies it to the bit pattern) is not supported in a kernel: compute in float32: x.Float32() * y.Float32(), and round back with kernel.ToFP8E4M3"},
	{name: "half /", body: "x[0] = /*ERR*/h[0] / h[1]",
		msg: "the operator / on kernel.Half (Go applies it to the bit pattern) is not supported in a kernel: compute in float32: x.Float32() / y.Float32(), and round back with kernel.ToHalf"},
	{name: "bfloat16 <", body: "if /*ERR*/b[0] < b[1] {\n\tb[0] = b[1]\n}",
		msg: "the operator < on kernel.BFloat16 (Go applies it to the bit pattern) is not supported in a kernel: compare in float32: x.Float32() < y.Float32()"},
	{name: "fp8 >=", body: "if /*ERR*/e5[0] >= e5[1] {\n\tf[0] = 1\n}",
		msg: "the operator >= on kernel.FP8E5M2 (Go applies it to the bit pattern) is not supported in a kernel: compare in float32: x.Float32() >= y.Float32()"},
	{name: "half negation", body: "x[0] = /*ERR*/-h[0]",
		msg: "the operator - on kernel.Half (Go applies it to the bit pattern) is not supported in a kernel: compute in float32: kernel.ToHalf(-x.Float32())"},
	{name: "half %", body: "x[0] = /*ERR*/h[0] % h[1]",
		msg: "the operator % on kernel.Half (Go applies it to the bit pattern) is not supported in a kernel: compute in float32: kernel.Mod(x.Float32(), y.Float32()), and round back with kernel.ToHalf"},
	{name: "bfloat16 shift", body: "b[0] = /*ERR*/b[0] >> 1",
		msg: "the operator >> on kernel.BFloat16 (Go applies it to the bit pattern) is not supported in a kernel: work on the bits: uint16(x) >> ..., and kernel.BFloat16(bits) to go back"},
	{name: "half complement", body: "x[0] = /*ERR*/^h[0]",
		msg: "the operator ^ on kernel.Half (Go applies it to the bit pattern) is not supported in a kernel: work on the bits: kernel.Half(^uint16(x))"},
	{name: "half +=", body: "/*ERR*/h[0] += h[1]",
		msg: "the assignment += on kernel.Half (Go applies it to the bit pattern) is not supported in a kernel: compute in float32: x = kernel.ToHalf(x.Float32() + y.Float32())"},
	{name: "bfloat16 *=", body: "/*ERR*/b[0] *= b[1]",
		msg: "the assignment *= on kernel.BFloat16 (Go applies it to the bit pattern) is not supported in a kernel: compute in float32: x = kernel.ToBFloat16(x.Float32() * y.Float32())"},
	{name: "half ++", body: "/*ERR*/h[0]++",
		msg: "the statement ++ on kernel.Half (Go applies it to the bit pattern) is not supported in a kernel: compute in float32: x = kernel.ToHalf(x.Float32() + 1)"},
	{name: "half to float32", body: "f[0] = /*ERR*/float32(h[0])",
		msg: "the conversion between kernel.Half and float32 (Go converts the bit pattern as an integer) is not supported in a kernel: use x.Float32() and kernel.ToHalf(f) for values, or uint16(x) and kernel.Half(bits) for bit patterns"},
	{name: "float32 to bfloat16", body: "b[0] = /*ERR*/kernel.BFloat16(f[0])",
		msg: "the conversion between kernel.BFloat16 and float32 (Go converts the bit pattern as an integer) is not supported in a kernel: use x.Float32() and kernel.ToBFloat16(f) for values, or uint16(x) and kernel.BFloat16(bits) for bit patterns"},
	{name: "fp8 to int32", body: "i[0] = /*ERR*/int32(e[0])",
		msg: "the conversion between kernel.FP8E4M3 and int32 (Go converts the bit pattern as an integer) is not supported in a kernel: use x.Float32() and kernel.ToFP8E4M3(f) for values, or uint8(x) and kernel.FP8E4M3(bits) for bit patterns"},
	{name: "int32 to half", body: "x[0] = /*ERR*/kernel.Half(i[0])",
		msg: "the conversion between kernel.Half and int32 (Go converts the bit pattern as an integer) is not supported in a kernel: use x.Float32() and kernel.ToHalf(f) for values, or uint16(x) and kernel.Half(bits) for bit patterns"},
	{name: "half to float64", body: "f[0] = float32(/*ERR*/float64(h[0]))",
		msg: "the conversion between kernel.Half and float64 (Go converts the bit pattern as an integer) is not supported in a kernel: use x.Float32() and kernel.ToHalf(f) for values, or uint16(x) and kernel.Half(bits) for bit patterns"},
}

func TestLowpOperatorsRejected(t *testing.T) {
	for _, c := range lowpErrorCases {
		t.Run(c.name, func(t *testing.T) {
			src := kernelSrc("", lowpParams, c.body)
			p, err := translate(t, strings.Replace(src, "/*ERR*/", "", 1))
			if err == nil {
				t.Fatalf("translated without error:\n%s", cbody(p))
			}
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("not a translation error: %v", err)
			}
			i := strings.Index(src, "/*ERR*/")
			line := strings.Count(src[:i], "\n") + 1
			col := i - strings.LastIndex(src[:i], "\n")
			want := fmt.Sprintf("k.go:%d:%d: %s", line, col, c.msg)
			for _, d := range e.Diagnostics {
				if d.String() == want {
					return
				}
			}
			t.Errorf("diagnostics\n%v\ndo not include\n%s", err, want)
		})
	}
}

// What the messages suggest translates: float32 arithmetic and
// comparisons through Float32 and the To functions, equality, and the bit
// patterns through the unsigned integer of the type's width.
func TestLowpSuggestionsAccepted(t *testing.T) {
	for _, body := range []string{
		"x[0] = kernel.ToHalf(h[0].Float32() + h[1].Float32())",
		"if b[0].Float32() < b[1].Float32() {\n\tb[0] = b[1]\n}",
		"x[0] = kernel.ToHalf(-h[0].Float32())",
		"h[0] = kernel.ToHalf(h[0].Float32() + 1)",
		"e[0] = kernel.ToFP8E4M3(kernel.Mod(e[0].Float32(), e[1].Float32()))",
		"b[0] = kernel.BFloat16(uint16(b[0]) >> 1)",
		"x[0] = kernel.Half(^uint16(h[0]))",
		"i[0] = int32(uint8(e[0]))",
		"if h[0] == h[1] && b[0] != b[1] {\n\tf[0] = 1\n}",
	} {
		if _, err := translate(t, kernelSrc("", lowpParams, body)); err != nil {
			t.Errorf("%q: %v", body, err)
		}
	}
}
