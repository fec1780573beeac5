package cudagen

import (
	"fmt"
	"strings"

	"github.com/gocu-dev/gocu/array/internal/backend"
)

// reduceHelpers is the warp-shuffle plumbing shared by reduction kernels.
const reduceHelpers = `
static __device__ __forceinline__ float gocu_shfl(float v, int d) { return __shfl_down_sync(0xffffffffu, v, d); }
static __device__ __forceinline__ double gocu_shfl(double v, int d) { return __shfl_down_sync(0xffffffffu, v, d); }
static __device__ __forceinline__ int gocu_shfl(int v, int d) { return __shfl_down_sync(0xffffffffu, v, d); }
static __device__ __forceinline__ long long gocu_shfl(long long v, int d) { return __shfl_down_sync(0xffffffffu, v, d); }
static __device__ __forceinline__ unsigned char gocu_shfl(unsigned char v, int d) { return (unsigned char)__shfl_down_sync(0xffffffffu, (int)v, d); }
static __device__ __forceinline__ bool gocu_shfl(bool v, int d) { return __shfl_down_sync(0xffffffffu, (int)v, d) != 0; }
`

// ReduceMode is the shape of a reduction kernel.
type ReduceMode uint8

const (
	// ReduceAll reduces every element to one value in one launch: each
	// block reduces grid-stride tiles into a partial (warp shuffles, then
	// shared memory; for contiguous inputs see writeReduceTiles); the last
	// block to finish (an atomic ticket after a memory fence) reduces the
	// partials and writes the result.
	ReduceAll ReduceMode = iota
	// ReduceRows gives each output a group of threads (a warp, or a whole
	// block for long rows) that strides over the reduced elements.
	ReduceRows
	// ReduceCols gives each output one thread that walks the reduced
	// elements: coalesced when the kept dimensions are the fast ones.
	// With a grid of several rows of blocks (gridDim.y), each row of
	// blocks walks one chunk of the reduced elements into partials, and
	// the last block of each column of blocks (an atomic ticket) combines
	// them in chunk order: a tall, narrow input still fills the GPU.
	ReduceCols
)

// ReduceSpec is the specialisation of a reduction.
type ReduceSpec struct {
	Mode    ReduceMode
	Kept    int     // rank of the kept dimensions (Rows, Cols)
	Red     int     // rank of the reduced dimensions (Rows, Cols); for All, the program rank
	In      []Class // per input: Contig (All only), Const or Strided
	Index64 bool
	Vec     int // ReduceAll with contiguous inputs: elements per vector load
	Group   int // ReduceRows: threads per output, 32 or 256
}

func (s ReduceSpec) key() string {
	var b strings.Builder
	fmt.Fprintf(&b, "m%d k%d r%d i%v v%d g%d c", s.Mode, s.Kept, s.Red, s.Index64, s.Vec, s.Group)
	for _, c := range s.In {
		fmt.Fprintf(&b, "%d", c)
	}
	return b.String()
}

// Reduction is a generated reduction: kernels launched in order. The
// ReduceAll kernel uses three scratch buffers: the per-block partials
// (values of AccType and int64 indices, for ArgMax/ArgMin) and a uint32
// ticket that must be zero before the launch and is zero again after it.
type Reduction struct {
	Kernels []*Kernel
	AccType backend.DType
	Indexed bool
}

// accType is the accumulator dtype: float64 for float sums, products and
// means (so float32 rounds once, as on the CPU), int64 for integer ones,
// the element type for max/min/argmax/argmin, bool for any/all.
func accType(op backend.ReduceOp, dt backend.DType) backend.DType {
	switch op {
	case backend.Sum, backend.Prod, backend.Mean:
		if dt.IsFloat() {
			return backend.Float64
		}
		return backend.Int64
	case backend.Any, backend.All:
		return backend.Bool
	}
	return dt
}

// accCode writes the accumulator struct and its identity, fold, combine
// and finalize functions for one reduction.
func accCode(prefix string, op backend.ReduceOp, dt, out backend.DType) string {
	A := accType(op, dt)
	at, et := ctype(A), ctype(dt)
	var b strings.Builder
	fmt.Fprintf(&b, "struct %s_acc { %s v; long long i; };\n", prefix, at)
	var ident string
	switch op {
	case backend.Sum, backend.Mean, backend.Any:
		ident = lit(A, 0)
	case backend.Prod, backend.All:
		ident = lit(A, 1)
	case backend.Max, backend.ArgMax:
		ident = lowest(A)
	case backend.Min, backend.ArgMin:
		ident = highest(A)
	}
	fmt.Fprintf(&b, "static __device__ __forceinline__ %s_acc %s_ident() { %s_acc a; a.v = %s; a.i = -1; return a; }\n", prefix, prefix, prefix, ident)
	// combine(a, b): b covers later positions than a only in the fold; the
	// combine must not depend on order, so ties go to the smaller index.
	var comb string
	wrapOp := func(o string) string {
		if A == backend.Int64 {
			return fmt.Sprintf("a.v = (long long)((unsigned long long)a.v %s (unsigned long long)b.v);", o)
		}
		return fmt.Sprintf("a.v = a.v %s b.v;", o)
	}
	switch op {
	case backend.Sum, backend.Mean:
		comb = wrapOp("+")
	case backend.Prod:
		comb = wrapOp("*")
	case backend.Max:
		comb = "if (b.v > a.v) a.v = b.v;"
		if A.IsFloat() {
			comb = "if (b.v > a.v || b.v != b.v) a.v = b.v;"
		}
	case backend.Min:
		comb = "if (b.v < a.v) a.v = b.v;"
		if A.IsFloat() {
			comb = "if (b.v < a.v || b.v != b.v) a.v = b.v;"
		}
	case backend.Any:
		comb = "a.v = a.v || b.v;"
	case backend.All:
		comb = "a.v = a.v && b.v;"
	case backend.ArgMax, backend.ArgMin:
		better := "b.v > a.v"
		if op == backend.ArgMin {
			better = "b.v < a.v"
		}
		nan := ""
		if A.IsFloat() {
			nan = "\n\tconst bool an = a.v != a.v, bn = b.v != b.v;\n\tif (an || bn) { if (bn && (!an || b.i < a.i)) a = b; return; }"
		}
		comb = fmt.Sprintf(`if (b.i < 0) return;
	if (a.i < 0) { a = b; return; }%s
	if (%s || (b.v == a.v && b.i < a.i)) a = b;`, nan, better)
	}
	fmt.Fprintf(&b, "static __device__ __forceinline__ void %s_comb(%s_acc &a, const %s_acc &b) {\n\t%s\n}\n", prefix, prefix, prefix, comb)
	// fold one element at position pos.
	fmt.Fprintf(&b, "static __device__ __forceinline__ void %s_fold(%s_acc &a, %s x, long long pos) {\n\t%s_acc b; b.v = (%s)x; b.i = pos; %s_comb(a, b);\n}\n",
		prefix, prefix, et, prefix, at, prefix)
	var fin string
	switch op {
	case backend.ArgMax, backend.ArgMin:
		fin = "a.i"
	case backend.Mean:
		fin = fmt.Sprintf("(%s)((double)a.v / (double)count)", ctype(out))
	default:
		fin = fmt.Sprintf("(%s)a.v", ctype(out))
	}
	fmt.Fprintf(&b, "static __device__ __forceinline__ %s %s_fin(const %s_acc &a, long long count) { (void)count; return %s; }\n",
		ctype(out), prefix, prefix, fin)
	// Warp and block reductions (the result is valid in lane 0 / thread 0).
	// Positions travel only for ArgMax and ArgMin.
	shflI := "b.i = a.i;"
	if op == backend.ArgMax || op == backend.ArgMin {
		shflI = "b.i = gocu_shfl(a.i, o);"
	}
	fmt.Fprintf(&b, `static __device__ __forceinline__ %[1]s_acc %[1]s_warp(%[1]s_acc a) {
	for (int o = 16; o > 0; o >>= 1) {
		%[1]s_acc b; b.v = gocu_shfl(a.v, o); %[3]s
		%[1]s_comb(a, b);
	}
	return a;
}
static __device__ %[1]s_acc %[1]s_block(%[1]s_acc a) {
	__shared__ %[2]s sv[32];
	__shared__ long long si[32];
	const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
	a = %[1]s_warp(a);
	__syncthreads();
	if (lane == 0) { sv[warp] = a.v; si[warp] = a.i; }
	__syncthreads();
	if (warp == 0) {
		a = %[1]s_ident();
		if (lane < (int)((blockDim.x + 31) >> 5)) { a.v = sv[lane]; a.i = si[lane]; }
		a = %[1]s_warp(a);
	}
	return a;
}
`, prefix, at, shflI)
	return b.String()
}

func lowest(d backend.DType) string {
	switch d {
	case backend.Float32:
		return "__int_as_float(0xff800000)"
	case backend.Float64:
		return "__longlong_as_double(0xfff0000000000000ll)"
	case backend.Int32:
		return "(-2147483647 - 1)"
	case backend.Int64:
		return "(-9223372036854775807ll - 1)"
	case backend.Uint8:
		return "(unsigned char)0"
	}
	return "false"
}

func highest(d backend.DType) string {
	switch d {
	case backend.Float32:
		return "__int_as_float(0x7f800000)"
	case backend.Float64:
		return "__longlong_as_double(0x7ff0000000000000ll)"
	case backend.Int32:
		return "2147483647"
	case backend.Int64:
		return "9223372036854775807ll"
	case backend.Uint8:
		return "(unsigned char)255"
	}
	return "true"
}

// gen collects a kernel's parameters and declarations.
type gen struct {
	k      *Kernel
	params []string
}

func (g *gen) add(decl string, p Param) {
	g.params = append(g.params, decl)
	g.k.Params = append(g.k.Params, p)
}

func (g *gen) inputs(p *backend.Program) {
	for i, in := range p.Inputs {
		g.add(fmt.Sprintf("const %s* __restrict__ in%d", ctype(in.DType()), i), Param{Name: fmt.Sprintf("in%d", i), Type: Ptr, Role: RoleIn, Index: i})
	}
	for i, s := range p.Scalars {
		t := scalarParamType(s.DType)
		g.add(fmt.Sprintf("%s sp%d", t, i), Param{Name: fmt.Sprintf("sp%d", i), Type: t, Role: RoleScalar, Index: i})
	}
}

func scalarDecls(b *strings.Builder, p *backend.Program, classes []Class) {
	for i, s := range p.Scalars {
		fmt.Fprintf(b, "\tconst %s s%d = %s;\n", ctype(s.DType), i, scalarFromParam(s.DType, fmt.Sprintf("sp%d", i)))
	}
	for i, c := range classes {
		if c == Const {
			fmt.Fprintf(b, "\tconst %s c%d = in%d[0];\n", ctype(p.Inputs[i].DType()), i, i)
		}
	}
}

// unravel writes code adding, for position variable pos over dims named
// dim<d> (rank r), pos's offset along each strided input's strides named
// st<i>_<d> into offset variables off<i>. pos must be below the product of
// the dims. With fast, 32-bit kernels divide through the DivArg parameters
// named dim<"m"><d> (see addDivs).
func unravel(b *strings.Builder, indent, it, pos, dim, st, off string, r int, classes []Class, extra []string, fast bool) {
	any := len(extra) > 0
	for _, c := range classes {
		any = any || c == Strided
	}
	if r == 0 || !any {
		return
	}
	fmt.Fprintf(b, "%s{\n%s\t%s rem = %s;\n", indent, indent, it, pos)
	for d := r - 1; d >= 0; d-- {
		divStep(b, indent+"\t", it, fmt.Sprintf("q%d", d), dim, d, fast)
		for i, c := range classes {
			if c == Strided {
				fmt.Fprintf(b, "%s\t%s%d += q%d * (%s)%s%d_%d;\n", indent, off, i, d, it, st, i, d)
			}
		}
		for _, e := range extra {
			fmt.Fprintf(b, "%s\t%s += q%d * (%s)%s_%d;\n", indent, e, d, it, e+"st", d)
		}
	}
	fmt.Fprintf(b, "%s}\n", indent)
}

// divStep writes code declaring c, the coordinate of rem along dimension
// dim<d>, and leaving the quotient in rem. The outermost dimension (d 0)
// needs no division: rem is already below its size. With fast and a
// 32-bit index, one multiply-high by the magic dim<"m"><d> gives the
// quotient and the remainder follows from it; else % and / do.
func divStep(b *strings.Builder, indent, it, c, dim string, d int, fast bool) {
	switch {
	case d == 0:
		fmt.Fprintf(b, "%sconst %s %s = rem;\n", indent, it, c)
	case fast && it == "int":
		mg := fmt.Sprintf("%sm%d", dim, d)
		fmt.Fprintf(b, "%sconst int %s_q = (int)((__umulhi((unsigned int)rem, (unsigned int)%s) + (unsigned int)rem) >> (unsigned int)(%s >> 32));\n", indent, c, mg, mg)
		fmt.Fprintf(b, "%sconst int %s = rem - %s_q * (int)%s%d;\n%srem = %s_q;\n", indent, c, c, dim, d, indent, c)
	default:
		fmt.Fprintf(b, "%sconst %s %s = rem %% (%s)%s%d;\n", indent, it, c, it, dim, d)
		fmt.Fprintf(b, "%srem /= (%s)%s%d;\n", indent, it, dim, d)
	}
}

// addDivs adds the DivArg parameters dim<"m"><d> of dimensions 1 to r-1
// (the outermost one is never divided by), filled by role.
func addDivs(add func(string, Param), dim string, r int, role Role) {
	for d := 1; d < r; d++ {
		n := fmt.Sprintf("%sm%d", dim, d)
		add("unsigned long long "+n, Param{Name: n, Type: U64, Role: role, Dim: d})
	}
}

func callF(name string, p *backend.Program, load func(i int) string, idx string) string {
	var args []string
	for i := range p.Inputs {
		args = append(args, load(i))
	}
	for i := range p.Scalars {
		args = append(args, fmt.Sprintf("s%d", i))
	}
	args = append(args, "(long long)("+idx+")")
	return fmt.Sprintf("%s(%s)", name, strings.Join(args, ", "))
}

// Reduce generates the kernels of a reduction of program p (whose result
// dtype is the reduced element type) into outputs of dtype out.
func Reduce(op backend.ReduceOp, p *backend.Program, out backend.DType, spec ReduceSpec) (*Reduction, error) {
	if len(spec.In) != len(p.Inputs) {
		return nil, fmt.Errorf("cudagen: spec has %d input classes for %d inputs", len(spec.In), len(p.Inputs))
	}
	dt := p.Result()
	key := fmt.Sprintf("%v|%v|%v|%s|%s", op, dt, out, p.Key(), spec.key())
	name := kernelName("red", key)
	f, err := elemFunc(name+"_f", p)
	if err != nil {
		return nil, err
	}
	it := "int"
	if spec.Index64 {
		it = "long long"
	}
	red := &Reduction{AccType: accType(op, dt), Indexed: op == backend.ArgMax || op == backend.ArgMin}
	common := helpersSource + reduceHelpers + f + accCode(name, op, dt, out)
	switch spec.Mode {
	case ReduceAll:
		red.Kernels = []*Kernel{reduceAll(name, out, red.AccType, red.Indexed, p, spec, it, common)}
	case ReduceRows, ReduceCols:
		red.Kernels = []*Kernel{reduceKeep(name, p, out, red.AccType, red.Indexed, spec, it, common)}
	default:
		return nil, fmt.Errorf("cudagen: reduce mode %d", spec.Mode)
	}
	return red, nil
}

// finalUnroll is how many partials each thread of the last block loads
// before it combines them.
const finalUnroll = 4

func reduceAll(name string, out, acc backend.DType, indexed bool, p *backend.Program, spec ReduceSpec, it, common string) *Kernel {
	g := &gen{k: &Kernel{Name: name + "_all", Block: blockSize, Grid: GridStride}}
	g.add(fmt.Sprintf("%s* __restrict__ out", ctype(out)), Param{Name: "out", Type: Ptr, Role: RoleOut})
	// The partials are written by every block and read by the last one:
	// not __restrict__, and read back through volatile loads (L2, not
	// the incoherent L1).
	g.add(fmt.Sprintf("%s* pv", ctype(acc)), Param{Name: "pv", Type: Ptr, Role: RolePartial, Index: 0})
	g.add("long long* pi", Param{Name: "pi", Type: Ptr, Role: RolePartial, Index: 1})
	g.add("int* ticket", Param{Name: "ticket", Type: Ptr, Role: RolePartial, Index: 2})
	g.inputs(p)
	g.add("long long n_", Param{Name: "n", Type: I64, Role: RoleCount})
	strided := false
	for _, c := range spec.In {
		strided = strided || c == Strided
	}
	if strided {
		for d := 0; d < spec.Red; d++ {
			g.add(fmt.Sprintf("long long d%d", d), Param{Name: fmt.Sprintf("d%d", d), Type: I64, Role: RoleDim, Dim: d})
		}
		if !spec.Index64 {
			addDivs(g.add, "d", spec.Red, RoleDimDiv)
		}
		for i, c := range spec.In {
			if c == Strided {
				for d := 0; d < spec.Red; d++ {
					g.add(fmt.Sprintf("long long st%d_%d", i, d), Param{Name: fmt.Sprintf("st%d_%d", i, d), Type: I64, Role: RoleStride, Index: i, Dim: d})
				}
			}
		}
	}
	var b strings.Builder
	b.WriteString(common)
	fmt.Fprintf(&b, "extern \"C\" __global__ void __launch_bounds__(%d) %s(%s) {\n", blockSize, g.k.Name, strings.Join(g.params, ", "))
	fmt.Fprintf(&b, "\tconst %s n = (%s)n_;\n", it, it)
	scalarDecls(&b, p, spec.In)
	fmt.Fprintf(&b, "\t%s_acc a = %s_ident();\n", name, name)
	f := name + "_f"
	if !strided {
		writeReduceTiles(&b, name, acc, p, spec, it)
	} else {
		fmt.Fprintf(&b, "\tconst %[1]s step = (%[1]s)gridDim.x * (%[1]s)blockDim.x;\n", it)
		fmt.Fprintf(&b, "\tfor (%[1]s i = (%[1]s)blockIdx.x * (%[1]s)blockDim.x + (%[1]s)threadIdx.x; i < n; i += step) {\n", it)
		for i, c := range spec.In {
			if c == Strided {
				fmt.Fprintf(&b, "\t\t%s o%d = 0;\n", it, i)
			}
		}
		unravel(&b, "\t\t", it, "i", "d", "st", "o", spec.Red, spec.In, nil, !spec.Index64)
		load := func(i int) string {
			switch spec.In[i] {
			case Const:
				return fmt.Sprintf("c%d", i)
			case Strided:
				return fmt.Sprintf("in%d[o%d]", i, i)
			}
			return fmt.Sprintf("in%d[i]", i)
		}
		fmt.Fprintf(&b, "\t\t%s_fold(a, %s, (long long)i);\n\t}\n", name, callF(f, p, load, "i"))
	}
	// The block's partial, then the last block (the one that draws the
	// final ticket, after every other block's partial is visible: each
	// fences before it takes its ticket) reduces the partials, writes the
	// result and resets the ticket for the next launch.
	fmt.Fprintf(&b, "\ta = %s_block(a);\n", name)
	b.WriteString("\t__shared__ bool last;\n")
	// Only ArgMax and ArgMin carry positions through the partials.
	b.WriteString("\tif (threadIdx.x == 0) {\n\t\tpv[blockIdx.x] = a.v;\n")
	if indexed {
		b.WriteString("\t\tpi[blockIdx.x] = a.i;\n")
	}
	b.WriteString("\t\t__threadfence();\n")
	b.WriteString("\t\tlast = atomicAdd(ticket, 1) == (int)gridDim.x - 1;\n\t}\n\t__syncthreads();\n\tif (!last) return;\n\t__threadfence();\n")
	// The last block's pass is on the critical path: each thread issues
	// all its loads of partials (a few: the grid is about one wave)
	// before it combines any, so their latency is paid once.
	fmt.Fprintf(&b, "\ta = %s_ident();\n", name)
	fmt.Fprintf(&b, "\tfor (unsigned int k = threadIdx.x; k < gridDim.x; k += %d) {\n", finalUnroll*blockSize)
	for u := 0; u < finalUnroll; u++ {
		fmt.Fprintf(&b, "\t\t%[1]s_acc c%[2]d = %[1]s_ident();\n\t\tif (k + %[3]d < gridDim.x) {\n\t\t\tc%[2]d.v = ((volatile %[4]s*)pv)[k + %[3]d];\n", name, u, u*blockSize, ctype(acc))
		if indexed {
			fmt.Fprintf(&b, "\t\t\tc%[1]d.i = ((volatile long long*)pi)[k + %[2]d];\n", u, u*blockSize)
		}
		b.WriteString("\t\t}\n")
	}
	for u := 0; u < finalUnroll; u++ {
		fmt.Fprintf(&b, "\t\t%s_comb(a, c%d);\n", name, u)
	}
	b.WriteString("\t}\n")
	fmt.Fprintf(&b, "\ta = %s_block(a);\n", name)
	fmt.Fprintf(&b, "\tif (threadIdx.x == 0) {\n\t\tout[0] = %s_fin(a, (long long)n);\n\t\t*ticket = 0;\n\t}\n}\n", name)
	g.k.Source = b.String()
	return g.k
}

// reduceKeep writes the Rows or Cols kernel: outputs k over the kept
// dimensions (kd<d>, input strides ks<i>_<d>), reduced positions r over
// the reduced ones (rd<d>, rs<i>_<d>); the output is contiguous.
func reduceKeep(name string, p *backend.Program, out, acc backend.DType, indexed bool, spec ReduceSpec, it, common string) *Kernel {
	suffix := "_rows"
	grid := GridRows
	if spec.Mode == ReduceCols {
		suffix, grid = "_cols", GridStride
	}
	g := &gen{k: &Kernel{Name: name + suffix, Block: blockSize, Grid: grid}}
	g.add(fmt.Sprintf("%s* __restrict__ out", ctype(out)), Param{Name: "out", Type: Ptr, Role: RoleOut})
	g.inputs(p)
	g.add("long long nk_", Param{Name: "nk", Type: I64, Role: RoleRows})
	g.add("long long nr_", Param{Name: "nr", Type: I64, Role: RoleRedCount})
	for d := 0; d < spec.Kept; d++ {
		g.add(fmt.Sprintf("long long kd%d", d), Param{Name: fmt.Sprintf("kd%d", d), Type: I64, Role: RoleDim, Dim: d})
	}
	for d := 0; d < spec.Red; d++ {
		g.add(fmt.Sprintf("long long rd%d", d), Param{Name: fmt.Sprintf("rd%d", d), Type: I64, Role: RoleRedDim, Dim: d})
	}
	fast := false
	for _, c := range spec.In {
		fast = fast || (c == Strided && !spec.Index64)
	}
	if fast {
		addDivs(g.add, "kd", spec.Kept, RoleDimDiv)
		addDivs(g.add, "rd", spec.Red, RoleRedDimDiv)
	}
	for i, c := range spec.In {
		if c != Strided {
			continue
		}
		for d := 0; d < spec.Kept; d++ {
			g.add(fmt.Sprintf("long long ks%d_%d", i, d), Param{Name: fmt.Sprintf("ks%d_%d", i, d), Type: I64, Role: RoleStride, Index: i, Dim: d})
		}
		for d := 0; d < spec.Red; d++ {
			g.add(fmt.Sprintf("long long rs%d_%d", i, d), Param{Name: fmt.Sprintf("rs%d_%d", i, d), Type: I64, Role: RoleRedStride, Index: i, Dim: d})
		}
	}
	if spec.Mode == ReduceCols {
		// Partials of the split grid: written by every block, read by the
		// last one of its column, so not __restrict__.
		g.add(fmt.Sprintf("%s* pv", ctype(acc)), Param{Name: "pv", Type: Ptr, Role: RolePartial, Index: 0})
		g.add("long long* pi", Param{Name: "pi", Type: Ptr, Role: RolePartial, Index: 1})
		g.add("int* ticket", Param{Name: "ticket", Type: Ptr, Role: RolePartial, Index: 2})
	}
	var b strings.Builder
	b.WriteString(common)
	fmt.Fprintf(&b, "extern \"C\" __global__ void __launch_bounds__(%d) %s(%s) {\n", blockSize, g.k.Name, strings.Join(g.params, ", "))
	fmt.Fprintf(&b, "\tconst %[1]s nk = (%[1]s)nk_, nr = (%[1]s)nr_;\n", it)
	scalarDecls(&b, p, spec.In)
	load := func(i int) string {
		if spec.In[i] == Const {
			return fmt.Sprintf("c%d", i)
		}
		return fmt.Sprintf("in%d[b%d + o%d]", i, i, i)
	}
	baseOffsets := func(indent string) {
		for i, c := range spec.In {
			if c == Strided {
				fmt.Fprintf(&b, "%s%s b%d = 0;\n", indent, it, i)
			}
		}
		unravel(&b, indent, it, "k", "kd", "ks", "b", spec.Kept, spec.In, nil, fast)
	}
	inner := func(indent, r string) {
		for i, c := range spec.In {
			if c == Strided {
				fmt.Fprintf(&b, "%s%s o%d = 0;\n", indent, it, i)
			}
		}
		unravel(&b, indent, it, r, "rd", "rs", "o", spec.Red, spec.In, nil, fast)
		fmt.Fprintf(&b, "%s%s_fold(a, %s, (long long)%s);\n", indent, name, callF(name+"_f", p, load, "0"), r)
	}
	if spec.Mode == ReduceCols {
		fmt.Fprintf(&b, "\tif (gridDim.y == 1) {\n")
		fmt.Fprintf(&b, "\tfor (%[1]s k = (%[1]s)blockIdx.x * (%[1]s)blockDim.x + (%[1]s)threadIdx.x; k < nk; k += (%[1]s)gridDim.x * (%[1]s)blockDim.x) {\n", it)
		baseOffsets("\t\t")
		fmt.Fprintf(&b, "\t\t%[1]s_acc a = %[1]s_ident();\n", name)
		fmt.Fprintf(&b, "\t\tfor (%s r = 0; r < nr; r++) {\n", it)
		inner("\t\t\t", "r")
		fmt.Fprintf(&b, "\t\t}\n\t\tout[k] = %s_fin(a, (long long)nr);\n\t}\n\treturn;\n\t}\n", name)
		// Split: block (x, y) walks chunk y of the reduced elements for
		// the columns of block x; the grid covers every column once.
		fmt.Fprintf(&b, "\tconst %[1]s k = (%[1]s)blockIdx.x * (%[1]s)blockDim.x + (%[1]s)threadIdx.x;\n", it)
		fmt.Fprintf(&b, "\tconst %[1]s per = (nr + (%[1]s)gridDim.y - 1) / (%[1]s)gridDim.y;\n", it)
		fmt.Fprintf(&b, "\tconst %[1]s r0 = (%[1]s)blockIdx.y * per, r1 = r0 + per < nr ? r0 + per : nr;\n", it)
		fmt.Fprintf(&b, "\t%[1]s_acc a = %[1]s_ident();\n\tif (k < nk) {\n", name)
		baseOffsets("\t\t")
		fmt.Fprintf(&b, "\t\tfor (%s r = r0; r < r1; r++) {\n", it)
		inner("\t\t\t", "r")
		b.WriteString("\t\t}\n")
		fmt.Fprintf(&b, "\t\tpv[(long long)blockIdx.y * nk + k] = a.v;\n")
		if indexed {
			fmt.Fprintf(&b, "\t\tpi[(long long)blockIdx.y * nk + k] = a.i;\n")
		}
		b.WriteString("\t}\n")
		// Each thread fences its partial before thread 0 takes the
		// ticket; the last block reads every chunk's partial from L2.
		b.WriteString("\t__threadfence();\n\t__syncthreads();\n\t__shared__ bool last;\n")
		b.WriteString("\tif (threadIdx.x == 0) last = atomicAdd(&ticket[blockIdx.x], 1) == (int)gridDim.y - 1;\n")
		b.WriteString("\t__syncthreads();\n\tif (!last) return;\n\t__threadfence();\n\tif (k < nk) {\n")
		fmt.Fprintf(&b, "\t\ta = %s_ident();\n", name)
		b.WriteString("\t\tfor (unsigned int c = 0; c < gridDim.y; c++) {\n")
		fmt.Fprintf(&b, "\t\t\t%[1]s_acc e;\n\t\t\te.v = ((volatile %[2]s*)pv)[(long long)c * nk + k];\n", name, ctype(acc))
		if indexed {
			b.WriteString("\t\t\te.i = ((volatile long long*)pi)[(long long)c * nk + k];\n")
		} else {
			b.WriteString("\t\t\te.i = -1;\n")
		}
		fmt.Fprintf(&b, "\t\t\t%s_comb(a, e);\n\t\t}\n", name)
		fmt.Fprintf(&b, "\t\tout[k] = %s_fin(a, (long long)nr);\n\t}\n", name)
		b.WriteString("\tif (threadIdx.x == 0) ticket[blockIdx.x] = 0;\n}\n")
		g.k.Source = b.String()
		return g.k
	}
	group := spec.Group
	if group != 32 {
		group = blockSize
	}
	fmt.Fprintf(&b, "\tconst int per = %d / %d, lane = threadIdx.x %% %d;\n", blockSize, group, group)
	fmt.Fprintf(&b, "\tfor (%[1]s k = (%[1]s)blockIdx.x * per + (%[1]s)(threadIdx.x / %[2]d); k - (%[1]s)(threadIdx.x / %[2]d) < nk; k += (%[1]s)gridDim.x * per) {\n", it, group)
	b.WriteString("\t\tconst bool live = k < nk;\n")
	fmt.Fprintf(&b, "\t\t%[1]s_acc a = %[1]s_ident();\n\t\tif (live) {\n", name)
	baseOffsets("\t\t\t")
	fmt.Fprintf(&b, "\t\t\tfor (%s r = lane; r < nr; r += %d) {\n", it, group)
	inner("\t\t\t\t", "r")
	b.WriteString("\t\t\t}\n\t\t}\n")
	if group == 32 {
		fmt.Fprintf(&b, "\t\ta = %s_warp(a);\n", name)
	} else {
		fmt.Fprintf(&b, "\t\ta = %s_block(a);\n", name)
	}
	fmt.Fprintf(&b, "\t\tif (live && lane == 0) out[k] = %s_fin(a, (long long)nr);\n", name)
	if group != 32 {
		b.WriteString("\t\t__syncthreads();\n")
	}
	b.WriteString("\t}\n}\n")
	g.k.Source = b.String()
	return g.k
}

// writeReduceTiles writes the first pass of a full reduction of
// contiguous (or constant) inputs. The vectors of w elements form tiles of
// blockSize*Unroll vectors; block b takes full tiles b, b+gridDim.x, ...
// (the planner sizes the grid so that every block gets the same number),
// each thread loading its Unroll vectors of a tile with no bounds checks
// before it uses any (64 bytes in flight per thread with 16-byte vectors)
// and combining the tile's elements as a balanced tree (depth log2 of
// Unroll*w instead of a chain through one accumulator), then into its
// accumulator. Addresses advance by a pointer increment per tile: no
// per-element index arithmetic. The vectors past the last full tile go one
// per thread over the whole grid, then the elements past the last vector.
func writeReduceTiles(b *strings.Builder, name string, acc backend.DType, p *backend.Program, spec ReduceSpec, it string) {
	w := max(spec.Vec, 1)
	tile := blockSize * Unroll
	f := name + "_f"
	comps := []string{"x", "y", "z", "w"}
	vt := func(i int) string {
		if w > 1 {
			return vtype(p.Inputs[i].DType(), w)
		}
		return ctype(p.Inputs[i].DType())
	}
	// loadOf is component j of input i's value v (a vector when w > 1).
	loadOf := func(v string, j int) func(i int) string {
		return func(i int) string {
			if spec.In[i] == Const {
				return fmt.Sprintf("c%d", i)
			}
			if w == 1 {
				return fmt.Sprintf("%s%d", v, i)
			}
			s := fmt.Sprintf("%s%d.%s", v, i, comps[j])
			if p.Inputs[i].DType() == backend.Bool {
				s = "(" + s + " != 0)"
			}
			return s
		}
	}
	fmt.Fprintf(b, "\tconst %s nv = n / %d;\n", it, w)
	fmt.Fprintf(b, "\tconst %s full = nv / %d;\n", it, tile)
	for i := range p.Inputs {
		if spec.In[i] == Contig {
			fmt.Fprintf(b, "\tconst %[1]s* __restrict__ v%[2]d = reinterpret_cast<const %[1]s*>(in%[2]d) + ((unsigned long long)blockIdx.x * %[3]d + threadIdx.x);\n", vt(i), i, tile)
		}
	}
	fmt.Fprintf(b, "\tfor (%[1]s t = (%[1]s)blockIdx.x; t < full; t += (%[1]s)gridDim.x) {\n", it)
	for i := range p.Inputs {
		if spec.In[i] != Contig {
			continue
		}
		for u := 0; u < Unroll; u++ {
			fmt.Fprintf(b, "\t\tconst %s a%d_%d = v%d[%d];\n", vt(i), u, i, i, u*blockSize)
		}
	}
	// Element positions (for ArgMax/ArgMin and index programs; dead code
	// otherwise).
	fmt.Fprintf(b, "\t\tconst long long q = (long long)t * %d + threadIdx.x;\n", tile)
	leaves := 0
	for u := 0; u < Unroll; u++ {
		for j := 0; j < w; j++ {
			pos := fmt.Sprintf("(q + %d) * %d + %d", u*blockSize, w, j)
			fmt.Fprintf(b, "\t\t%[1]s_acc l%[2]d; l%[2]d.v = (%[3]s)%[4]s; l%[2]d.i = %[5]s;\n",
				name, leaves, ctype(acc), callF(f, p, loadOf(fmt.Sprintf("a%d_", u), j), pos), pos)
			leaves++
		}
	}
	for s := 1; s < leaves; s *= 2 {
		for x := 0; x+s < leaves; x += 2 * s {
			fmt.Fprintf(b, "\t\t%s_comb(l%d, l%d);\n", name, x, x+s)
		}
	}
	fmt.Fprintf(b, "\t\t%s_comb(a, l0);\n", name)
	for i := range p.Inputs {
		if spec.In[i] == Contig {
			fmt.Fprintf(b, "\t\tv%d += (unsigned long long)gridDim.x * %d;\n", i, tile)
		}
	}
	b.WriteString("\t}\n")
	fmt.Fprintf(b, "\tfor (%[1]s r = full * %[2]d + (%[1]s)blockIdx.x * %[3]d + (%[1]s)threadIdx.x; r < nv; r += (%[1]s)gridDim.x * %[3]d) {\n", it, tile, blockSize)
	for i := range p.Inputs {
		if spec.In[i] == Contig {
			fmt.Fprintf(b, "\t\tconst %[1]s e%[2]d = reinterpret_cast<const %[1]s*>(in%[2]d)[r];\n", vt(i), i)
		}
	}
	for j := 0; j < w; j++ {
		pos := fmt.Sprintf("(long long)r * %d + %d", w, j)
		fmt.Fprintf(b, "\t\t%s_fold(a, %s, %s);\n", name, callF(f, p, loadOf("e", j), pos), pos)
	}
	b.WriteString("\t}\n")
	if w > 1 {
		load := func(i int) string {
			if spec.In[i] == Const {
				return fmt.Sprintf("c%d", i)
			}
			return fmt.Sprintf("in%d[i]", i)
		}
		fmt.Fprintf(b, "\tfor (%[1]s i = nv * %[2]d + (%[1]s)blockIdx.x * %[3]d + (%[1]s)threadIdx.x; i < n; i += (%[1]s)gridDim.x * %[3]d)\n", it, w, blockSize)
		fmt.Fprintf(b, "\t\t%s_fold(a, %s, (long long)i);\n", name, callF(f, p, load, "i"))
	}
}
