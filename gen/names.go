package gen

import (
	"fmt"
	"strings"
	"unicode"
)

// reserved are names a generated identifier must not take: C++ keywords,
// CUDA built-ins, the math and atomic functions the output calls, and names
// the CUDA headers define. Every name starting with gocu_, GOCU_, __ or an
// underscore and a capital is reserved as well (see isReserved).
var reserved = map[string]bool{}

func init() {
	for _, list := range []string{
		// C++20 keywords and alternative tokens.
		`alignas alignof and and_eq asm auto bitand bitor bool break case catch char char8_t char16_t
		char32_t class compl concept const consteval constexpr constinit const_cast continue co_await
		co_return co_yield decltype default delete do double dynamic_cast else enum explicit export
		extern false final float for friend goto if import inline int long module mutable namespace new
		noexcept not not_eq nullptr operator or or_eq override private protected public register
		reinterpret_cast requires restrict return short signed sizeof static static_assert static_cast
		struct switch template this thread_local throw true try typedef typeid typename union unsigned
		using virtual void volatile wchar_t while xor xor_eq main NULL offsetof`,
		// CUDA built-in variables, types and functions.
		`threadIdx blockIdx blockDim gridDim warpSize dim3 uint3 size_t ptrdiff_t uint ushort ulong
		char1 char2 char3 char4 uchar1 uchar2 uchar3 uchar4 short1 short2 short3 short4 ushort1 ushort2
		ushort3 ushort4 int1 int2 int3 int4 uint1 uint2 uint4 long1 long2 long3 long4 ulong1
		ulong2 ulong3 ulong4 longlong1 longlong2 longlong3 longlong4 ulonglong1 ulonglong2 ulonglong3
		ulonglong4 float1 float2 float3 float4 double1 double2 double3 double4 half nv_bfloat16
		make_float2 make_float4 make_int4 make_uint4 make_uchar4 printf malloc free memcpy memset assert
		atomicAdd atomicSub atomicExch atomicMin atomicMax atomicCAS atomicInc atomicDec atomicAnd
		atomicOr atomicXor clock clock64 min max abs llabs labs umin umax llmin llmax ullmin ullmax`,
		// C math (float and double).
		`sqrt sqrtf rsqrt rsqrtf cbrt cbrtf exp expf exp2 exp2f exp10 exp10f expm1 expm1f log logf log2
		log2f log10 log10f log1p log1pf sin sinf cos cosf tan tanf asin asinf acos acosf atan atanf
		atan2 atan2f sinh sinhf cosh coshf tanh tanhf asinh asinhf acosh acoshf atanh atanhf erf erff
		erfc erfcf tgamma tgammaf lgamma lgammaf floor floorf ceil ceilf trunc truncf round roundf rint
		rintf nearbyint nearbyintf fabs fabsf pow powf fmod fmodf remainder remainderf fma fmaf fmin
		fminf fmax fmaxf hypot hypotf copysign copysignf nextafter nextafterf ldexp ldexpf frexp
		frexpf modf modff signbit isnan isinf isfinite sincos sincosf fdim fdimf erfinv`,
		`__popc __popcll __clz __clzll __ffs __ffsll __brev __brevll`,
	} {
		for _, w := range strings.Fields(list) {
			reserved[w] = true
		}
	}
}

func isReserved(s string) bool { return reserved[s] || reservedPrefix(s) }

// reservedPrefix reports names in the translator's namespace (gocu_,
// GOCU_) or the implementation's (a leading underscore).
func reservedPrefix(s string) bool {
	return strings.HasPrefix(s, "gocu_") || strings.HasPrefix(s, "GOCU_") || strings.HasPrefix(s, "_")
}

// sanitize makes a Go identifier a valid ASCII C identifier: other letters
// become _uXXXX.
func sanitize(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch {
		case r < 128 && (r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r)):
			b.WriteRune(r)
		default:
			fmt.Fprintf(&b, "_u%04x", r)
		}
	}
	if b.Len() == 0 {
		return "x"
	}
	return b.String()
}

// names hands out unique C identifiers. A child scope sees the names of its
// parent, so that a local never hides a global the code also refers to.
type names struct {
	parent *names
	used   map[string]bool
}

func newNames(parent *names) *names { return &names{parent: parent, used: map[string]bool{}} }

func (n *names) taken(s string) bool {
	for p := n; p != nil; p = p.parent {
		if p.used[s] {
			return true
		}
	}
	return isReserved(s)
}

// take returns want, or want with the smallest suffix _1, _2, ... that
// makes it unique, and marks it used.
func (n *names) take(want string) string {
	want = sanitize(want)
	if reservedPrefix(want) {
		want = "v" + want
	}
	s := want
	for i := 1; n.taken(s); i++ {
		s = fmt.Sprintf("%s_%d", want, i)
	}
	n.used[s] = true
	return s
}

// takeInternal hands out a name in the reserved gocu_ namespace, for
// temporaries and labels the translator introduces: unique against every
// name in scope, but not rejected for its prefix.
func (n *names) takeInternal(want string) string {
	s := want
	for i := 1; ; i++ {
		free := !reserved[s]
		for p := n; p != nil && free; p = p.parent {
			free = !p.used[s]
		}
		if free {
			break
		}
		s = fmt.Sprintf("%s_%d", want, i)
	}
	n.used[s] = true
	return s
}
