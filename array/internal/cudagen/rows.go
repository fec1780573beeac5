package cudagen

import (
	"fmt"
	"strings"

	"github.com/gocu-dev/gocu/array/internal/backend"
)

// The row kernel: softmax, log-softmax and row quantisation along the last
// axis of a contiguous float32 program, with each row read from memory
// once. A block of rowThreads threads takes a row; each thread loads its
// NV vectors of W elements (consecutive threads, consecutive vectors:
// coalesced) into registers, evaluates the program on them, and the passes
// the operation needs (maximum, sum of exponentials, output) run over the
// registers, with block reductions between them. So the row costs one read
// and one write, where the general axis kernel (axis.go) reads it once per
// pass. It is used for rows of up to rowThreads*maxRowElems elements
// (16384); longer rows, other axes and strided operands take the general
// kernel.

const (
	rowThreads     = 256
	maxRowElems    = 64      // NV*W, values each thread holds in registers
	rowBlocksPerSM = 1 << 14 // the grid's cap, per SM: far past any resident count
)

// RowSpec is the specialisation of a row kernel.
type RowSpec struct {
	Kind    backend.AxisKind
	Out     backend.DType // the output dtype: float32, or the quantisation type
	In      []Class       // Contig or Const
	W       int           // elements per vector access: 1 or 4
	NV      int           // vectors per thread: a power of two
	Index64 bool
}

func (s RowSpec) key() string {
	return fmt.Sprintf("%v|%v|w%d n%d i%v c%s", s.Kind, s.Out, s.W, s.NV, s.Index64, fmtClasses(s.In))
}

// RowKernel generates the row kernel of program p (a float32 result).
func RowKernel(p *backend.Program, spec RowSpec) (*Kernel, error) {
	if p.Result() != backend.Float32 {
		return nil, fmt.Errorf("cudagen: row kernel of %v", p.Result())
	}
	if len(spec.In) != len(p.Inputs) || (spec.W != 1 && spec.W != 4) || spec.NV < 1 || spec.NV*spec.W > maxRowElems {
		return nil, fmt.Errorf("cudagen: row spec %+v", spec)
	}
	switch spec.Kind {
	case backend.Softmax, backend.LogSoftmax:
		if spec.Out != backend.Float32 {
			return nil, fmt.Errorf("cudagen: %v into %v", spec.Kind, spec.Out)
		}
	case backend.Quantize:
		if spec.Out != backend.Int8 && !spec.Out.IsFloat8() {
			return nil, fmt.Errorf("cudagen: quantize into %v", spec.Out)
		}
	default:
		return nil, fmt.Errorf("cudagen: row kernel of %v", spec.Kind)
	}
	name := kernelName("rows", p.Key()+"|"+spec.key())
	f, err := elemFunc(name+"_f", p)
	if err != nil {
		return nil, err
	}
	it := "int"
	if spec.Index64 {
		it = "long long"
	}
	W, NV := spec.W, spec.NV
	g := &gen{k: &Kernel{Name: name, Block: rowThreads, Grid: GridRows}}
	g.add(fmt.Sprintf("%s* __restrict__ out", ctype(spec.Out)), Param{Name: "out", Type: Ptr, Role: RoleOut})
	if spec.Kind == backend.Quantize {
		g.add("float* __restrict__ scale", Param{Name: "scale", Type: Ptr, Role: RoleScale})
	}
	g.inputs(p)
	g.add("long long rows_", Param{Name: "rows", Type: I64, Role: RoleRows})
	g.add("long long L_", Param{Name: "L", Type: I64, Role: RoleRowLen})

	var b strings.Builder
	b.WriteString(helpersSource + reduceHelpers + f)
	fmt.Fprintf(&b, `static __device__ float %[1]s_bmax(float v) {
	__shared__ float sh[32];
	for (int o = 16; o > 0; o >>= 1) { float w = gocu_shfl(v, o); if (w > v || w != w) v = w; }
	__syncthreads();
	if ((threadIdx.x & 31) == 0) sh[threadIdx.x >> 5] = v;
	__syncthreads();
	v = sh[0];
	for (int i = 1; i < %[2]d / 32; i++) { float w = sh[i]; if (w > v || w != w) v = w; }
	return v;
}
static __device__ double %[1]s_bsum(double v) {
	__shared__ double sh[32];
	for (int o = 16; o > 0; o >>= 1) v += gocu_shfl(v, o);
	__syncthreads();
	if ((threadIdx.x & 31) == 0) sh[threadIdx.x >> 5] = v;
	__syncthreads();
	v = 0.0;
	for (int i = 0; i < %[2]d / 32; i++) v += sh[i];
	return v;
}
`, name, rowThreads)
	// At least 4 resident blocks per SM (64 registers a thread) keep
	// enough rows in flight to cover memory latency; the longest rows
	// (64 values a thread) get 2 so that they do not spill.
	minBlocks := 4
	if NV*W > 32 {
		minBlocks = 2
	}
	fmt.Fprintf(&b, "extern \"C\" __global__ void __launch_bounds__(%d, %d) %s(%s) {\n", rowThreads, minBlocks, name, strings.Join(g.params, ", "))
	fmt.Fprintf(&b, "\tconst %[1]s rows = (%[1]s)rows_, L = (%[1]s)L_;\n", it)
	scalarDecls(&b, p, spec.In)
	fmt.Fprintf(&b, "\tfor (%[1]s row = (%[1]s)blockIdx.x; row < rows; row += (%[1]s)gridDim.x) {\n", it)
	fmt.Fprintf(&b, "\t\tconst %s base = row * L;\n", it)
	fmt.Fprintf(&b, "\t\tfloat v[%d];\n", NV*W)
	// j(u) is the first element of vector u of this thread.
	jOf := func(u string) string {
		return fmt.Sprintf("(((%s)(%s) * %d + (%s)threadIdx.x) * %d)", it, u, rowThreads, it, W)
	}
	comps := vecComps[:W]
	vt := func(d backend.DType) string {
		if W == 1 {
			return ctype(d)
		}
		return vtype(d, W)
	}
	b.WriteString("#pragma unroll\n")
	fmt.Fprintf(&b, "\t\tfor (int u = 0; u < %d; u++) {\n", NV)
	fmt.Fprintf(&b, "\t\t\tconst %s j = %s;\n", it, jOf("u"))
	b.WriteString("\t\t\tif (j < L) {\n")
	for i, c := range spec.In {
		if c == Contig {
			fmt.Fprintf(&b, "\t\t\t\tconst %[1]s a%[2]d = *reinterpret_cast<const %[1]s*>(in%[2]d + base + j);\n", vt(p.Inputs[i].DType()), i)
		}
	}
	for c := 0; c < W; c++ {
		load := func(i int) string {
			if spec.In[i] == Const {
				return fmt.Sprintf("c%d", i)
			}
			s := fmt.Sprintf("a%d", i)
			if W > 1 {
				s += "." + comps[c]
			}
			if p.Inputs[i].DType() == backend.Bool {
				s = "(" + s + " != 0)"
			}
			return s
		}
		fmt.Fprintf(&b, "\t\t\t\tv[u * %d + %d] = %s;\n", W, c, callF(name+"_f", p, load, fmt.Sprintf("base + j + %d", c)))
	}
	b.WriteString("\t\t\t} else {\n")
	fmt.Fprintf(&b, "\t\t\t\tfor (int c = 0; c < %d; c++) v[u * %d + c] = 0.0f;\n", W, W)
	b.WriteString("\t\t\t}\n\t\t}\n")
	// each loops over this thread's valid values as x (an lvalue: v[k]).
	each := func(body string) {
		b.WriteString("#pragma unroll\n")
		fmt.Fprintf(&b, "\t\tfor (int u = 0; u < %d; u++) {\n", NV)
		fmt.Fprintf(&b, "\t\t\tif (%s < L) {\n", jOf("u"))
		b.WriteString("#pragma unroll\n")
		fmt.Fprintf(&b, "\t\t\t\tfor (int c = 0; c < %d; c++) { float &x = v[u * %d + c]; %s }\n", W, W, body)
		b.WriteString("\t\t\t}\n\t\t}\n")
	}
	// store writes this thread's vectors, element c of vector u being expr
	// (in terms of x = v[u*W+c]).
	store := func(expr string) {
		ot := vt(spec.Out)
		b.WriteString("#pragma unroll\n")
		fmt.Fprintf(&b, "\t\tfor (int u = 0; u < %d; u++) {\n", NV)
		fmt.Fprintf(&b, "\t\t\tconst %s j = %s;\n", it, jOf("u"))
		b.WriteString("\t\t\tif (j < L) {\n")
		fmt.Fprintf(&b, "\t\t\t\t%s r;\n", ot)
		for c := 0; c < W; c++ {
			dst := "r"
			if W > 1 {
				dst += "." + comps[c]
			}
			fmt.Fprintf(&b, "\t\t\t\t{ const float x = v[u * %d + %d]; %s = %s; }\n", W, c, dst, expr)
		}
		fmt.Fprintf(&b, "\t\t\t\t*reinterpret_cast<%s*>(out + base + j) = r;\n", ot)
		b.WriteString("\t\t\t}\n\t\t}\n")
	}
	switch spec.Kind {
	case backend.Quantize:
		b.WriteString("\t\tfloat m = 0.0f;\n")
		each("const float a = fabsf(x); if (a > m || a != a) m = a;")
		fmt.Fprintf(&b, "\t\tm = %s_bmax(m);\n", name)
		fmt.Fprintf(&b, "\t\tconst float sc = %s;\n\t\tif (threadIdx.x == 0) scale[row] = sc;\n", scaleC(spec.Out))
		store(quantConv(spec.Out, "(x / sc)"))
	default:
		b.WriteString("\t\tfloat m = __int_as_float(0xff800000);\n")
		each("if (x > m || x != x) m = x;")
		fmt.Fprintf(&b, "\t\tm = %s_bmax(m);\n", name)
		b.WriteString("\t\tconst float shift = gocu_isfinitef(m) ? m : 0.0f;\n\t\tdouble s = 0.0;\n")
		if spec.Kind == backend.Softmax {
			each("x = expf(x - shift); s += (double)x;")
		} else {
			each("s += (double)expf(x - shift);")
		}
		fmt.Fprintf(&b, "\t\ts = %s_bsum(s);\n", name)
		if spec.Kind == backend.Softmax {
			b.WriteString("\t\tconst double inv = 1.0 / s;\n")
			store("(float)((double)x * inv)")
		} else {
			b.WriteString("\t\tconst double ls = (double)shift + log(s);\n")
			store("(float)((double)x - ls)")
		}
	}
	b.WriteString("\t\t__syncthreads();\n\t}\n}\n")
	g.k.Source = b.String()
	return g.k, nil
}

// planRows plans a with the row kernel when it qualifies (see RowKernel);
// ok is false when the general axis kernel must run.
func planRows(a *backend.AxisOp, rows, L int, o Options) (pl *Plan, ok bool, err error) {
	p := a.In
	r := len(p.Shape)
	if (a.Kind != backend.Softmax && a.Kind != backend.LogSoftmax && a.Kind != backend.Quantize) ||
		p.Result() != backend.Float32 || a.Axis != r-1 || !a.Out.Layout.IsContiguous() || L == 0 {
		return nil, false, nil
	}
	spec := RowSpec{Kind: a.Kind, Out: a.Out.Buf.DType(), W: 4, Index64: index64(p, a.Out)}
	for _, in := range p.Inputs {
		switch {
		case in.Layout.IsConstant():
			spec.In = append(spec.In, Const)
		case in.Layout.IsContiguous():
			spec.In = append(spec.In, Contig)
		default:
			return nil, false, nil
		}
	}
	aligned := func(op backend.Operand) bool {
		return o.Aligned != nil && o.Aligned(op, 4*op.Buf.DType().Size())
	}
	if L%4 != 0 || !aligned(a.Out) {
		spec.W = 1
	}
	for i, in := range p.Inputs {
		if spec.In[i] == Contig && !aligned(in) {
			spec.W = 1
		}
	}
	per := (L + rowThreads*spec.W - 1) / (rowThreads * spec.W)
	spec.NV = 1
	for spec.NV < per {
		spec.NV *= 2
	}
	if spec.NV*spec.W > maxRowElems {
		return nil, false, nil
	}
	k, err := cached(o, "rows|"+p.Key()+"|"+spec.key(), func() (*Kernel, error) { return RowKernel(p, spec) })
	if err != nil {
		return nil, false, err
	}
	// One block per row, not a resident grid looping over rows: the
	// scheduler then overlaps one row's stores with the next row's loads
	// (on an H200, quantize_rows went from 62% to 72% of a copy, softmax
	// from 89% to 98%). Past the cap blocks loop.
	l := Launch{Kernel: k, Block: k.Block, Grid: [3]int{o.capped(rows, rowBlocksPerSM), 1, 1}, Scalars: p.Scalars}
	l.Operands = append(append(l.Operands, p.Inputs...), a.Out)
	if a.Kind == backend.Quantize {
		l.Operands = append(l.Operands, a.Scale)
	}
	outIdx := len(p.Inputs)
	for _, prm := range k.Params {
		var arg Arg
		switch prm.Role {
		case RoleOut:
			arg = ptr(outIdx, a.Out.Layout.Offset)
		case RoleScale:
			arg = ptr(outIdx+1, a.Scale.Layout.Offset)
		case RoleIn:
			arg = ptr(prm.Index, p.Inputs[prm.Index].Layout.Offset)
		case RoleScalar:
			arg = scalarArg(p.Scalars[prm.Index])
		case RoleRows:
			arg = i64(rows)
		case RoleRowLen:
			arg = i64(L)
		default:
			return nil, false, fmt.Errorf("cudagen: row parameter role %d", prm.Role)
		}
		l.Args = append(l.Args, arg)
	}
	return &Plan{Launches: []Launch{l}}, true, nil
}
