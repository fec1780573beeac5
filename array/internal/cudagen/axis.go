package cudagen

import (
	"fmt"
	"strings"

	"github.com/gocu-dev/gocu/array/internal/backend"
)

// AxisSpec is the specialisation of a softmax-family kernel: the rank of
// the dimensions other than the axis, and how inputs are addressed.
type AxisSpec struct {
	Outer   int
	In      []Class // Const or Strided
	Index64 bool
	Out     backend.DType // Quantize: the output dtype (int8 or an 8-bit float)
}

// AxisOp generates the softmax, log-softmax or logsumexp kernel: one block
// per row (the elements along the axis for fixed other indices), three
// passes over the row (maximum, sum of exponentials, output) with block
// reductions; float32 sums accumulate in float64.
func AxisOp(kind backend.AxisKind, p *backend.Program, spec AxisSpec) (*Kernel, error) {
	if len(spec.In) != len(p.Inputs) {
		return nil, fmt.Errorf("cudagen: spec has %d input classes for %d inputs", len(spec.In), len(p.Inputs))
	}
	dt := p.Result()
	if !dt.IsFloat() {
		return nil, fmt.Errorf("cudagen: %v of %v", kind, dt)
	}
	key := fmt.Sprintf("%v|%s|o%d i%v c%v", kind, p.Key(), spec.Outer, spec.Index64, spec.In)
	outT := ctype(dt)
	if kind == backend.Quantize {
		if dt != backend.Float32 || (spec.Out != backend.Int8 && !spec.Out.IsFloat8()) {
			return nil, fmt.Errorf("cudagen: quantize %v into %v", dt, spec.Out)
		}
		key += "|" + spec.Out.String()
		outT = ctype(spec.Out)
	}
	name := kernelName("axis", key)
	f, err := elemFunc(name+"_f", p)
	if err != nil {
		return nil, err
	}
	it := "int"
	if spec.Index64 {
		it = "long long"
	}
	T := ctype(dt)
	g := &gen{k: &Kernel{Name: name, Block: blockSize, Grid: GridRows}}
	g.add(fmt.Sprintf("%s* __restrict__ out", outT), Param{Name: "out", Type: Ptr, Role: RoleOut})
	if kind == backend.Quantize {
		g.add("float* __restrict__ scale", Param{Name: "scale", Type: Ptr, Role: RoleScale})
	}
	g.inputs(p)
	g.add("long long rows_", Param{Name: "rows", Type: I64, Role: RoleRows})
	g.add("long long L_", Param{Name: "L", Type: I64, Role: RoleRowLen})
	for d := 0; d < spec.Outer; d++ {
		g.add(fmt.Sprintf("long long kd%d", d), Param{Name: fmt.Sprintf("kd%d", d), Type: I64, Role: RoleDim, Dim: d})
	}
	for i, c := range spec.In {
		if c != Strided {
			continue
		}
		for d := 0; d < spec.Outer; d++ {
			g.add(fmt.Sprintf("long long ks%d_%d", i, d), Param{Name: fmt.Sprintf("ks%d_%d", i, d), Type: I64, Role: RoleStride, Index: i, Dim: d})
		}
		g.add(fmt.Sprintf("long long as%d", i), Param{Name: fmt.Sprintf("as%d", i), Type: I64, Role: RoleRowStride, Index: i})
	}
	if kind != backend.LogSumExp {
		for d := 0; d < spec.Outer; d++ {
			g.add(fmt.Sprintf("long long oks_%d", d), Param{Name: fmt.Sprintf("oks_%d", d), Type: I64, Role: RoleStride, Index: -1, Dim: d})
		}
		g.add("long long oas", Param{Name: "oas", Type: I64, Role: RoleRowStride, Index: -1})
	}
	var b strings.Builder
	b.WriteString(helpersSource + reduceHelpers + f)
	// Block max and block sum helpers (result broadcast to every thread).
	fmt.Fprintf(&b, `static __device__ %[1]s %[2]s_bmax(%[1]s v) {
	__shared__ %[1]s sh[32];
	for (int o = 16; o > 0; o >>= 1) { %[1]s w = gocu_shfl(v, o); if (w > v || w != w) v = w; }
	__syncthreads();
	if ((threadIdx.x & 31) == 0) sh[threadIdx.x >> 5] = v;
	__syncthreads();
	v = sh[0];
	for (int i = 1; i < (int)((blockDim.x + 31) >> 5); i++) { %[1]s w = sh[i]; if (w > v || w != w) v = w; }
	return v;
}
static __device__ double %[2]s_bsum(double v) {
	__shared__ double sh[32];
	for (int o = 16; o > 0; o >>= 1) v += gocu_shfl(v, o);
	__syncthreads();
	if ((threadIdx.x & 31) == 0) sh[threadIdx.x >> 5] = v;
	__syncthreads();
	v = 0.0;
	for (int i = 0; i < (int)((blockDim.x + 31) >> 5); i++) v += sh[i];
	return v;
}
`, T, name)
	fmt.Fprintf(&b, "extern \"C\" __global__ void __launch_bounds__(%d) %s(%s) {\n", blockSize, name, strings.Join(g.params, ", "))
	fmt.Fprintf(&b, "\tconst %[1]s rows = (%[1]s)rows_, L = (%[1]s)L_;\n", it)
	scalarDecls(&b, p, spec.In)
	var extra []string
	if kind != backend.LogSumExp {
		extra = []string{"ob"}
	}
	fmt.Fprintf(&b, "\tfor (%[1]s row = blockIdx.x; row < rows; row += gridDim.x) {\n", it)
	for i, c := range spec.In {
		if c == Strided {
			fmt.Fprintf(&b, "\t\t%s b%d = 0;\n", it, i)
		}
	}
	if kind != backend.LogSumExp {
		fmt.Fprintf(&b, "\t\t%s ob = 0;\n", it)
	}
	// unravel row over the outer dims into b<i> (input strides ks<i>_<d>)
	// and ob (output strides oks_<d>).
	anyStrided := kind != backend.LogSumExp
	for _, c := range spec.In {
		anyStrided = anyStrided || c == Strided
	}
	if spec.Outer > 0 && anyStrided {
		fmt.Fprintf(&b, "\t\t{\n\t\t\t%s rem = row;\n", it)
		for d := spec.Outer - 1; d >= 0; d-- {
			fmt.Fprintf(&b, "\t\t\tconst %s q%d = rem %% (%s)kd%d;\n", it, d, it, d)
			if d > 0 {
				fmt.Fprintf(&b, "\t\t\trem /= (%s)kd%d;\n", it, d)
			}
			for i, c := range spec.In {
				if c == Strided {
					fmt.Fprintf(&b, "\t\t\tb%d += q%d * (%s)ks%d_%d;\n", i, d, it, i, d)
				}
			}
			for _, e := range extra {
				fmt.Fprintf(&b, "\t\t\t%s += q%d * (%s)oks_%d;\n", e, d, it, d)
			}
		}
		b.WriteString("\t\t}\n")
	}
	load := func(i int) string {
		if spec.In[i] == Const {
			return fmt.Sprintf("c%d", i)
		}
		return fmt.Sprintf("in%d[b%d + j * (%s)as%d]", i, i, it, i)
	}
	x := callF(name+"_f", p, load, "0")
	if kind == backend.Quantize {
		fmt.Fprintf(&b, "\t\tfloat m = 0.0f;\n")
		fmt.Fprintf(&b, "\t\tfor (%s j = threadIdx.x; j < L; j += blockDim.x) { const float a = fabsf(%s); if (a > m || a != a) m = a; }\n", it, x)
		fmt.Fprintf(&b, "\t\tm = %s_bmax(m);\n", name)
		fmt.Fprintf(&b, "\t\tconst float sc = %s;\n\t\tif (threadIdx.x == 0) scale[row] = sc;\n", scaleC(spec.Out))
		fmt.Fprintf(&b, "\t\tfor (%s j = threadIdx.x; j < L; j += blockDim.x) out[ob + j * (%s)oas] = %s;\n", it, it, quantConv(spec.Out, "("+x+" / sc)"))
		b.WriteString("\t\t__syncthreads();\n\t}\n}\n")
		g.k.Source = b.String()
		return g.k, nil
	}
	ninf := lowest(dt)
	fmt.Fprintf(&b, "\t\t%s m = %s;\n", T, ninf)
	fmt.Fprintf(&b, "\t\tfor (%s j = threadIdx.x; j < L; j += blockDim.x) { const %s v = %s; if (v > m || v != v) m = v; }\n", it, T, x)
	fmt.Fprintf(&b, "\t\tm = %s_bmax(m);\n", name)
	fmt.Fprintf(&b, "\t\tconst %s shift = %s(m) ? m : (%s)0;\n", T, fn("gocu_isfinite", dt), T)
	b.WriteString("\t\tdouble s = 0.0;\n")
	fmt.Fprintf(&b, "\t\tfor (%s j = threadIdx.x; j < L; j += blockDim.x) s += (double)%s(%s - shift);\n", it, fn("exp", dt), x)
	fmt.Fprintf(&b, "\t\ts = %s_bsum(s);\n", name)
	switch kind {
	case backend.LogSumExp:
		fmt.Fprintf(&b, "\t\tif (threadIdx.x == 0) out[row] = (%s)((double)shift + log(s));\n", T)
	case backend.Softmax:
		b.WriteString("\t\tconst double inv = 1.0 / s;\n")
		fmt.Fprintf(&b, "\t\tfor (%s j = threadIdx.x; j < L; j += blockDim.x) out[ob + j * (%s)oas] = (%s)((double)%s(%s - shift) * inv);\n", it, it, T, fn("exp", dt), x)
	case backend.LogSoftmax:
		b.WriteString("\t\tconst double ls = (double)shift + log(s);\n")
		fmt.Fprintf(&b, "\t\tfor (%s j = threadIdx.x; j < L; j += blockDim.x) out[ob + j * (%s)oas] = (%s)((double)%s - ls);\n", it, it, T, x)
	}
	b.WriteString("\t\t__syncthreads();\n\t}\n}\n")
	g.k.Source = b.String()
	return g.k, nil
}
