package gen

import (
	"strings"
	"testing"
)

// TestSemantics checks the C form each Go rule takes. (That the forms
// compute what Go computes is TestHostMatchesGo's and the differential
// tests' job.)
func TestSemantics(t *testing.T) {
	cases := []struct {
		name, decls, params, body string
		want, not                 []string
	}{
		{name: "float32 constants stay float32", params: "x []float32", body: "x[0] = x[1]*0.1 + 2",
			want: []string{"* 0.1f + 2.0f"}, not: []string{"0.1 ", "(double)"}},
		{name: "constant folding is exact", params: "x []float32, y []float64", body: "x[0] = 1.0 / 3\ny[0] = 1.0 / 3",
			want: []string{"= 0.33333334f;", "= 0.3333333333333333;"}},
		{name: "int is 64-bit", params: "x []float32", body: "n := len(x)\nx[0] = float32(n)",
			want: []string{"long long n = x.n;"}},
		{name: "int32 index math stays 32-bit", params: "x []float32, n int32", body: "i := t.Index()\nx[i*n+1] = 0",
			want: []string{"int i = (int)(blockIdx.x * blockDim.x + threadIdx.x);", "(unsigned int)i * (unsigned int)n + 1u"}},
		{name: "division by a variable", params: "k []int32", body: "k[0] = k[1] / k[2]\nk[3] = k[4] % k[5]",
			want: []string{"gocu_div<int>(", "gocu_rem<int>("}},
		{name: "division by a constant", params: "k []int32", body: "k[0] = k[1] / 4\nk[2] = k[3] % 16",
			want: []string{"GOCU_AT(k, 1LL, 0) / 4", "% 16"}, not: []string{"gocu_div", "gocu_rem"}},
		{name: "division by -1 wraps", params: "k []int32", body: "k[0] = k[1] / -1",
			want: []string{"= (int)-(unsigned int)GOCU_AT(k, 1LL, 0);"}},
		{name: "shift past the width", params: "k []int32, u []uint32", body: "k[0] = k[1] << 40\nk[2] = k[3] >> 40\nu[0] = u[1] >> 33",
			want: []string{"GOCU_AT(k, 0LL, 1) = 0;", ">> 31;", "GOCU_AT(u, 0LL, 5) = 0u;"}},
		{name: "variable shift", params: "k []int32, s []uint8", body: "k[0] = k[1] << s[0]\nk[2] = k[3] >> k[4]",
			want: []string{"gocu_shl<int>(", "gocu_shr<int>(", "GOCU_SHCNT("}},
		{name: "uint8 arithmetic wraps", params: "b []uint8", body: "b[0] = b[1] + b[2]",
			want: []string{"GOCU_AT(b, 0LL, 2) = (unsigned char)(GOCU_AT(b, 1LL, 0) + GOCU_AT(b, 2LL, 1));"}},
		{name: "uint8 value wraps", params: "b []uint8, k []int32", body: "k[0] = int32(b[1] * b[2])",
			want: []string{"(int)(unsigned char)(GOCU_AT(b, 1LL, 0) * GOCU_AT(b, 2LL, 1))"}},
		{name: "uint16 product cannot overflow int", params: "h []uint16", body: "h[0] = h[1] * h[2]",
			want: []string{"(unsigned short)((unsigned int)GOCU_AT(h, 1LL, 0) * GOCU_AT(h, 2LL, 1))"}},
		{name: "float to int as on amd64", params: "x []float32, k []int32, u []uint64", body: "k[0] = int32(x[0])\nu[0] = uint64(x[1])",
			want: []string{"gocu_f2i32(", "gocu_f2u64("}},
		{name: "Go min and max", params: "x []float32, k []int32", body: "x[0] = min(x[1], x[2], x[3])\nk[0] = max(k[1], 3)",
			want: []string{"gocu_min_f32(gocu_min_f32(", "gocu_max<int>("}},
		{name: "explicit conversion blocks fusion", params: "x []float32", body: "x[0] = float32(x[1]*x[2]) + x[3]",
			want: []string{"__fmul_rn(GOCU_AT(x, 1LL, 0), GOCU_AT(x, 2LL, 1)) + GOCU_AT(x, 3LL, 2)"}},
		{name: "unroll", params: "x []float32", body: "//gocu:unroll 4\nfor i := 0; i < len(x); i++ {\n\tx[i] = 0\n}",
			want: []string{"#pragma unroll 4\n"}},
		{name: "canonical loop keeps i++", params: "x []float32, n int32", body: "for i := int32(0); i < n; i++ {\n\tx[i] = 0\n}",
			want: []string{"for (int i = 0; i < n; i++) {"}},
		{name: "loop that may wrap", params: "x []float32, n int32", body: "for i := int32(0); i != n; i += 3 {\n\tx[i] = 0\n}",
			want: []string{"i = (int)((unsigned int)i + 3u)"}},
		{name: "swap", params: "x []float32", body: "a, b := x[0], x[1]\na, b = b, a\nx[0], x[1] = a, b",
			want: []string{"float gocu_t = b;", "float gocu_t_1 = a;", "a = gocu_t;", "b = gocu_t_1;"}},
		{name: "labelled continue", params: "x []float32", body: "outer:\nfor i := range 4 {\n\tfor j := range 4 {\n\t\tif j > i {\n\t\t\tcontinue outer\n\t\t}\n\t\tx[0] += 1\n\t}\n}",
			want: []string{"goto gocu_continue;", "gocu_continue:;"}},
		{name: "reinterpret", params: "b []uint8, w []uint32", body: "v := kernel.Reinterpret[uint32](b)\nw[0] = v[1]",
			want: []string{"gocu_slice<unsigned int> v = gocu_reinterpret<unsigned int, unsigned char>(b, 0);"}},
		{name: "float4 loads", params: "x []float32", body: "v := kernel.Reinterpret[kernel.Float4](x)\nv[0] = kernel.Float4{X: v[1].W, W: 1}",
			want: []string{"gocu_slice<float4>", "make_float4(GOCU_AT(v, 1LL, 1).w, 0.0f, 0.0f, 1.0f)"}},
		{name: "static shared", params: "x []float32", body: "a, b := kernel.Shared[[8]float32](t), kernel.Shared[[2][4]int32](t)\na[t.ThreadIdx.X] = 1\nb[1][2] = 2\nt.SyncThreads()\nx[0] = a[0] + float32(b[1][2])",
			want: []string{"__shared__ gocu_array<float, 8> a;", "__shared__ gocu_array<gocu_array<int, 4>, 2> b;", "b.v[1LL].v[2LL] = 2;", "__syncthreads();"}},
		{name: "shared array passed to a function", decls: "func fill(s *[8]float32, v float32) {\n\tfor i := range s {\n\t\ts[i] = v\n\t}\n}",
			params: "x []float32", body: "a := kernel.Shared[[8]float32](t)\nfill(a, 3)\nx[0] = a[7]",
			want: []string{"fill(&a, 3.0f);", "(*s).v[GOCU_AI(i, 8, 0)] = v;", "= a.v[7LL];"}},
		{name: "dynamic shared", params: "x []float32", body: "s := kernel.DynamicShared[float32](t)\ns[0] = x[0]",
			want: []string{"extern __shared__ __align__(16) unsigned char gocu_dynsmem[];", "gocu_slice<float> s = gocu_slice<float>{(float*)gocu_dynsmem"}},
		{name: "atomics", params: "k []int32, u []uint64, f []float64, h []int64", body: "kernel.AtomicAdd(&k[0], 1)\nkernel.AtomicMax(&u[0], 3)\nkernel.AtomicAdd(&f[0], 1.5)\nkernel.AtomicAdd(&h[0], -1)\nkernel.AtomicMin(&f[1], 2)",
			want: []string{"atomicAdd(&GOCU_AT(k, 0LL, 0), 1);", "atomicMax(&GOCU_AT(u, 0LL, 1), 3ull);", "atomicAdd(&GOCU_AT(f, 0LL, 2), 1.5);", "gocu_atomic_add(&GOCU_AT(h, 0LL, 3), -1LL);", "gocu_atomic_min(&GOCU_AT(f, 1LL, 4), 2.0);"}},
		{name: "warp", params: "x []float32", body: "v := kernel.ShflXor(t, kernel.FullMask, x[0], 16)\nif t.All(kernel.FullMask, v > 0) {\n\tx[1] = v\n}",
			want: []string{"__shfl_xor_sync(0xffffffffu, GOCU_AT(x, 0LL, 0), 16)", "__all_sync(0xffffffffu, v > 0.0f) != 0"}},
		{name: "math", params: "x []float32, y []float64", body: "x[0] = kernel.Exp(x[1]) + kernel.FMA(x[2], x[3], x[4])\ny[0] = math.Sqrt(y[1]) + math.Abs(y[2])",
			want: []string{"expf(", "fmaf(", "sqrt(", "fabs("}},
		{name: "bits", decls: "", params: "u []uint32, k []int", body: "k[0] = bits.OnesCount32(u[0]) + bits.LeadingZeros32(u[1])",
			want: []string{"(long long)__popc(", "(long long)__clz((int)"}},
		{name: "extern C entry", params: "x []float32", body: "x[0] = 1",
			want: []string{`extern "C" __global__ void K(float* x_p, long long x_n) {`, "gocu_slice<float> x = {x_p, x_n};"}},
		{name: "names that are C keywords", params: "x []float32", body: "float := x[0]\nint := float * 2\nx[1] = int",
			want: []string{"float float_1 = GOCU_AT(x, 0LL, 0);", "float int_1 = float_1 * 2.0f;"}},
		{name: "shadowing", params: "x []float32", body: "v := x[0]\n{\n\tv := v + 1\n\tx[1] = v\n}\nx[2] = v",
			want: []string{"float v_1 = v + 1.0f;", "GOCU_AT(x, 1LL, 1) = v_1;", "GOCU_AT(x, 2LL, 2) = v;"}},
		{name: "switch", params: "k []int32", body: "switch v := k[0]; v {\ncase 1, 2:\n\tk[1] = 1\ncase 3:\n\tbreak\ndefault:\n\tk[1] = 0\n}",
			want: []string{"if (v == 1 || v == 2) {", "} else if (v == 3) {", "goto gocu_break;", "} else {"}},
		{name: "names of CUDA functions", decls: "func normcdf(x float32) float32 { return x * 2 }\n\nfunc y0(x float64) float64 { return x }", params: "x []float32, y []float64",
			body: "x[0] = normcdf(x[1])\ny[0] = y0(y[1])", want: []string{"k_normcdf(", "k_y0("}},
		{name: "struct by value", decls: "type P struct {\n\tA int8\n\tB float64\n}", params: "x []float32, p P", body: "x[0] = float32(p.B) + float32(p.A)",
			want: []string{"struct P {", "static_assert(sizeof(P) == 16 && alignof(P) == 8", "__builtin_offsetof(P, B) == 8", "P p)"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			src := kernelSrc(c.decls, c.params, c.body)
			if strings.Contains(c.body, "bits.") {
				src = strings.Replace(src, "\"math\"\n", "\"math\"\n\t\"math/bits\"\n", 1)
			}
			p := mustTranslate(t, src)
			body := cbody(p)
			for _, w := range c.want {
				if !strings.Contains(body, w) {
					t.Errorf("missing %q in\n%s", w, body)
				}
			}
			for _, n := range c.not {
				if strings.Contains(body, n) {
					t.Errorf("unexpected %q in\n%s", n, body)
				}
			}
			compileCUDA(t, "semantics", p.CUDA)
		})
	}
}
