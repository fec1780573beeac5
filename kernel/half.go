package kernel

import "github.com/gocu-dev/gocu/lowp"

// The low-precision floating-point types of NVIDIA GPUs, for kernel code.
// They are package lowp's types (the one pure-Go, bit-exact implementation
// of the formats), so that a kernel's inputs and outputs are the very
// values the arrays and the host code hold. Each holds its bit pattern;
// arithmetic is done in float32, as with CUDA's cuda_fp16.h and
// cuda_bf16.h on most operations:
//
//	x := q[i].Float32() * scale           // __bfloat162float
//	o[i] = kernel.ToBFloat16(x)           // __float2bfloat16_rn
//
// Go's operators on these types act on the bit patterns (they are unsigned
// integers underneath), so gocu gen rejects +, -, *, /, <, <=, > and >= on
// them, and conversions to other numeric types; == and != compare bits, and
// uint16(h) and kernel.Half(bits) reinterpret them. The simulator rounds
// exactly as the GPU does, through package lowp.
type (
	// Half is IEEE binary16 (CUDA __half).
	Half = lowp.Float16
	// BFloat16 is bfloat16 (CUDA __nv_bfloat16).
	BFloat16 = lowp.BFloat16
	// FP8E4M3 is the OCP 8-bit format E4M3 (CUDA __nv_fp8_e4m3), a storage
	// type: convert to float32 to compute.
	FP8E4M3 = lowp.Float8E4M3
	// FP8E5M2 is the OCP 8-bit format E5M2 (CUDA __nv_fp8_e5m2).
	FP8E5M2 = lowp.Float8E5M2
)

// Bits16 is the set of 16-bit element types that the matrix loads
// (LdMatrix) move: Half, BFloat16 and uint16.
type Bits16 interface{ ~uint16 }

// ToHalf rounds x to the nearest Half, ties to even (CUDA __float2half_rn,
// PTX cvt.rn.f16.f32).
func ToHalf(x float32) Half { return lowp.Float16FromFloat32(x) }

// ToBFloat16 rounds x to the nearest BFloat16, ties to even (CUDA
// __float2bfloat16_rn, PTX cvt.rn.bf16.f32).
func ToBFloat16(x float32) BFloat16 { return lowp.BFloat16FromFloat32(x) }

// ToFP8E4M3 rounds x to E4M3, saturating to ±448 (PTX
// cvt.rn.satfinite.e4m3x2.f32).
func ToFP8E4M3(x float32) FP8E4M3 { return lowp.Float8E4M3FromFloat32(x) }

// ToFP8E5M2 rounds x to E5M2, saturating to ±57344 (PTX
// cvt.rn.satfinite.e5m2x2.f32).
func ToFP8E5M2(x float32) FP8E5M2 { return lowp.Float8E5M2FromFloat32(x) }

// Half2 is two Halfs moved together in one 4-byte access (CUDA __half2,
// 4-byte aligned). X is the low half of the word, at the lower address.
type Half2 struct{ X, Y Half }

// BFloat16x2 is two BFloat16s moved together in one 4-byte access (CUDA
// __nv_bfloat162, 4-byte aligned).
type BFloat16x2 struct{ X, Y BFloat16 }

// Half8 is eight Halfs moved in one 16-byte access, like Float4 for
// float32: view a []Half as []Half8 with Reinterpret. CUDA aligns it to 16
// bytes.
type Half8 [8]Half

// BFloat16x8 is eight BFloat16s moved in one 16-byte access.
type BFloat16x8 [8]BFloat16

// ToHalf2 rounds x and y to a Half2 (CUDA __floats2half2_rn, PTX
// cvt.rn.f16x2.f32).
func ToHalf2(x, y float32) Half2 { return Half2{ToHalf(x), ToHalf(y)} }

// ToBFloat16x2 rounds x and y to a BFloat16x2 (CUDA __floats2bfloat162_rn,
// PTX cvt.rn.bf16x2.f32).
func ToBFloat16x2(x, y float32) BFloat16x2 { return BFloat16x2{ToBFloat16(x), ToBFloat16(y)} }

// Float2 widens both halves exactly (CUDA __half22float2).
func (h Half2) Float2() Float2 { return Float2{h.X.Float32(), h.Y.Float32()} }

// Float2 widens both halves exactly (CUDA __bfloat1622float2).
func (h BFloat16x2) Float2() Float2 { return Float2{h.X.Float32(), h.Y.Float32()} }

// Bits returns the pair as one 32-bit register, X in the low half: the
// form the matrix fragments hold (FragA, FragB).
func (h Half2) Bits() uint32 { return uint32(h.X) | uint32(h.Y)<<16 }

// Bits returns the pair as one 32-bit register, X in the low half.
func (h BFloat16x2) Bits() uint32 { return uint32(h.X) | uint32(h.Y)<<16 }

// PackHalf2 rounds lo and hi to Half and packs them into one register, lo
// in the low 16 bits (PTX cvt.rn.f16x2.f32 d, hi, lo): the element pair of
// an A or B fragment, such as a softmax probability pair in attention.
func PackHalf2(lo, hi float32) uint32 { return ToHalf2(lo, hi).Bits() }

// PackBFloat16x2 rounds lo and hi to BFloat16 and packs them into one
// register, lo in the low 16 bits (PTX cvt.rn.bf16x2.f32 d, hi, lo).
func PackBFloat16x2(lo, hi float32) uint32 { return ToBFloat16x2(lo, hi).Bits() }

// Half2FromBits splits a register into its two Halfs, the low 16 bits
// into X.
func Half2FromBits(r uint32) Half2 { return Half2{Half(r), Half(r >> 16)} }

// BFloat16x2FromBits splits a register into its two BFloat16s, the low 16
// bits into X.
func BFloat16x2FromBits(r uint32) BFloat16x2 { return BFloat16x2{BFloat16(r), BFloat16(r >> 16)} }
