package cudagen

import (
	"fmt"
	"strings"

	"github.com/gocu-dev/gocu/array/internal/backend"
)

// Gathers, scatters and mask compaction. An index outside its axis is
// never used: the first one found is recorded in the error words (flag,
// index, axis, length: four int64 the backend keeps zeroed) and the
// backend reports it at its next synchronisation.

// ixBlock is the block size of the indexing kernels.
const ixBlock = 256

// ixHelpers are the device functions the indexing kernels share.
const ixHelpers = `
static __device__ __forceinline__ void gocu_ix_fail(long long* err, long long v, long long ax, long long n) {
	if (atomicCAS((unsigned long long*)err, 0ull, 1ull) == 0ull) {
		err[1] = v;
		err[2] = ax;
		err[3] = n;
	}
}
static __device__ __forceinline__ void gocu_ix_maxf(float* p, float v) {
	unsigned int* a = (unsigned int*)p;
	unsigned int old = *a, assumed;
	do {
		assumed = old;
		float cur = __int_as_float((int)assumed);
		if (!(v > cur || (v != v && cur == cur))) return;
		old = atomicCAS(a, assumed, (unsigned int)__float_as_int(v));
	} while (assumed != old);
}
static __device__ __forceinline__ void gocu_ix_maxd(double* p, double v) {
	unsigned long long* a = (unsigned long long*)p;
	unsigned long long old = *a, assumed;
	do {
		assumed = old;
		double cur = __longlong_as_double((long long)assumed);
		if (!(v > cur || (v != v && cur == cur))) return;
		old = atomicCAS(a, assumed, (unsigned long long)__double_as_longlong(v));
	} while (assumed != old);
}
`

// wordType is the unsigned C type of n bytes (a vector type for 16).
func wordType(n int) string {
	switch n {
	case 1:
		return "unsigned char"
	case 2:
		return "unsigned short"
	case 4:
		return "unsigned int"
	case 8:
		return "unsigned long long"
	}
	return "gocu_i32x4"
}

// ixShape is what a gather or scatter kernel is specialised on.
type ixShape struct {
	rows  bool // a warp per (o, m) row, lanes along I
	o1    bool // O == 1
	i1    bool // I == 1
	idxDT []backend.DType
}

func (s ixShape) key() string {
	k := fmt.Sprintf("r%t_o%t_i%t", s.rows, s.o1, s.i1)
	for _, d := range s.idxDT {
		k += "_" + d.String()
	}
	return k
}

// ixParams declares the index-space parameters shared by gathers and
// scatters, and the per-index-array ones.
func ixParams(g *gen, s ixShape) {
	for _, n := range []string{"O", "M", "I", "N"} {
		g.add("long long "+n, Param{Name: n, Type: I64})
	}
	for j, d := range s.idxDT {
		g.add(fmt.Sprintf("const %s* __restrict__ x%d", ctype(d), j), Param{Name: fmt.Sprintf("x%d", j), Type: Ptr, Role: RoleIn, Index: j})
		for _, n := range []string{"n", "s0", "s1", "s2", "ax"} {
			g.add(fmt.Sprintf("long long %s%d", n, j), Param{Name: fmt.Sprintf("%s%d", n, j), Type: I64})
		}
	}
	g.add("long long* err", Param{Name: "err", Type: Ptr, Role: RoleOut})
}

// ixRow writes the code computing row (the position along the indexed
// axes) of (o, m, i), leaving it on an error.
func ixRow(b *strings.Builder, s ixShape, onBad string) {
	b.WriteString("\t\tlong long row = 0;\n")
	for j := range s.idxDT {
		fmt.Fprintf(b, "\t\t{\n\t\t\tlong long v = (long long)x%d[o * s0%d + m * s1%d + i * s2%d];\n", j, j, j, j)
		fmt.Fprintf(b, "\t\t\tif (v < -n%d || v >= n%d) { gocu_ix_fail(err, v, ax%d, n%d); %s; }\n", j, j, j, j, onBad)
		fmt.Fprintf(b, "\t\t\tif (v < 0) v += n%d;\n\t\t\trow = row * n%d + v;\n\t\t}\n", j, j)
	}
}

// ixLoop opens the loop over positions: rows mode visits (o, m) by warp
// and i by lane; flat mode visits every (o, m, i) by thread.
func ixLoop(b *strings.Builder, s ixShape) {
	if s.rows {
		b.WriteString("\tconst long long lane = threadIdx.x & 31;\n")
		b.WriteString("\tconst long long warps = ((long long)gridDim.x * blockDim.x) >> 5;\n")
		b.WriteString("\tfor (long long om = ((long long)blockIdx.x * blockDim.x + threadIdx.x) >> 5; om < O * M; om += warps) {\n")
		if s.o1 {
			b.WriteString("\t\tconst long long o = 0, m = om;\n")
		} else {
			b.WriteString("\t\tconst long long o = om / M, m = om - o * M;\n")
		}
		b.WriteString("\t\tconst long long i = 0;\n")
		return
	}
	b.WriteString("\tfor (long long t = (long long)blockIdx.x * blockDim.x + threadIdx.x; t < O * M * I; t += (long long)gridDim.x * blockDim.x) {\n")
	switch {
	case s.i1 && s.o1:
		b.WriteString("\t\tconst long long i = 0, o = 0, m = t;\n")
	case s.i1:
		b.WriteString("\t\tconst long long i = 0, o = t / M, m = t - o * M;\n")
	case s.o1:
		b.WriteString("\t\tconst long long m = t / I, i = t - m * I, o = 0;\n")
	default:
		b.WriteString("\t\tconst long long om = t / I, i = t - om * I, o = om / M, m = om - o * M;\n")
	}
}

// GatherKernel generates the gather of words of wsize bytes (16: gocu_i32x4).
func GatherKernel(wsize int, s ixShape) *Kernel {
	name := kernelName("gather", fmt.Sprintf("%d_%s", wsize, s.key()))
	g := &gen{k: &Kernel{Name: name, Block: ixBlock, Grid: GridStride}}
	w := wordType(wsize)
	g.add(w+"* __restrict__ out", Param{Name: "out", Type: Ptr, Role: RoleOut})
	g.add("const "+w+"* __restrict__ src", Param{Name: "src", Type: Ptr, Role: RoleIn})
	ixParams(g, s)
	var b strings.Builder
	b.WriteString(vectorTypes + ixHelpers)
	fmt.Fprintf(&b, "\nextern \"C\" __global__ void __launch_bounds__(%d) %s(%s) {\n", ixBlock, name, strings.Join(g.params, ", "))
	ixLoop(&b, s)
	if s.rows {
		ixRow(&b, s, "continue")
		b.WriteString("\t\tconst " + w + "* from = src + (o * N + row) * I;\n")
		b.WriteString("\t\t" + w + "* to = out + om * I;\n")
		if wsize == 16 {
			// Component by component: compilers then issue one 128-bit
			// load and store (a struct copy became two 64-bit ones).
			b.WriteString("\t\tfor (long long k = lane; k < I; k += 32) {\n\t\t\tconst gocu_i32x4 v = from[k];\n")
			b.WriteString("\t\t\tgocu_i32x4 r;\n\t\t\tr.x = v.x; r.y = v.y; r.z = v.z; r.w = v.w;\n\t\t\tto[k] = r;\n\t\t}\n\t}\n}\n")
		} else {
			b.WriteString("\t\tfor (long long k = lane; k < I; k += 32) to[k] = from[k];\n\t}\n}\n")
		}
	} else {
		ixRow(&b, s, "continue")
		b.WriteString("\t\tout[t] = src[(o * N + row) * I + i];\n\t}\n}\n")
	}
	g.k.Source = b.String()
	return g.k
}

// scatterUpdate is the C statement combining v into *p.
func scatterUpdate(op backend.ScatterOp, dt backend.DType) (string, error) {
	switch op {
	case backend.ScatterSet:
		return "*p = v;", nil
	case backend.ScatterAdd:
		switch dt {
		case backend.Float32, backend.Float64, backend.Int32:
			return "atomicAdd(p, v);", nil
		case backend.Int64:
			return "atomicAdd((unsigned long long*)p, (unsigned long long)v);", nil
		}
	case backend.ScatterMax:
		switch dt {
		case backend.Float32:
			return "gocu_ix_maxf(p, v);", nil
		case backend.Float64:
			return "gocu_ix_maxd(p, v);", nil
		case backend.Int32, backend.Int64:
			return "atomicMax(p, v);", nil
		}
	}
	return "", fmt.Errorf("cudagen: scatter-%v of %v", op, dt)
}

// ScatterKernel generates a scatter of dtype dt (Set moves words of its
// size).
func ScatterKernel(op backend.ScatterOp, dt backend.DType, s ixShape) (*Kernel, error) {
	upd, err := scatterUpdate(op, dt)
	if err != nil {
		return nil, err
	}
	t := ctype(dt)
	if op == backend.ScatterSet {
		t = wordType(dt.Size())
	}
	name := kernelName("scatter", fmt.Sprintf("%v_%s_%s", op, t, s.key()))
	g := &gen{k: &Kernel{Name: name, Block: ixBlock, Grid: GridStride}}
	g.add(t+"* __restrict__ dst", Param{Name: "dst", Type: Ptr, Role: RoleOut})
	g.add("const "+t+"* __restrict__ val", Param{Name: "val", Type: Ptr, Role: RoleIn})
	for _, n := range []string{"v0", "v1", "v2"} {
		g.add("long long "+n, Param{Name: n, Type: I64})
	}
	ixParams(g, s)
	var b strings.Builder
	b.WriteString(vectorTypes + ixHelpers)
	fmt.Fprintf(&b, "\nextern \"C\" __global__ void __launch_bounds__(%d) %s(%s) {\n", ixBlock, name, strings.Join(g.params, ", "))
	ixLoop(&b, s)
	ixRow(&b, s, "continue")
	if s.rows {
		fmt.Fprintf(&b, "\t\tfor (long long k = lane; k < I; k += 32) {\n\t\t\t%s* p = dst + (o * N + row) * I + k;\n", t)
		fmt.Fprintf(&b, "\t\t\tconst %s v = val[o * v0 + m * v1 + k * v2];\n\t\t\t%s\n\t\t}\n\t}\n}\n", t, upd)
	} else {
		fmt.Fprintf(&b, "\t\t%s* p = dst + (o * N + row) * I + i;\n", t)
		fmt.Fprintf(&b, "\t\tconst %s v = val[o * v0 + m * v1 + i * v2];\n\t\t%s\n\t}\n}\n", t, upd)
	}
	g.k.Source = b.String()
	return g.k, nil
}

// ixShapeOf picks the specialisation of an index space.
func ixShapeOf(O, M, I, wordsPerRow int, idx []backend.Index, o Options) ixShape {
	s := ixShape{o1: O == 1, i1: I == 1}
	free := true
	for _, x := range idx {
		s.idxDT = append(s.idxDT, x.Buf.DType())
		free = free && x.Strides[2] == 0
	}
	// A warp per row when rows are long enough to keep its lanes busy
	// and there are enough of them to fill the GPU.
	s.rows = free && wordsPerRow >= 16 && O*M >= 4*max(o.SMs, 1)
	if s.rows {
		s.i1 = false
	}
	return s
}

// ixArgs appends the index-space and index-array arguments; index array
// j is operand first+j and the error words operand errOp.
func ixArgs(args []Arg, O, M, I, N int, idx []backend.Index, first, errOp int) []Arg {
	args = append(args, i64(O), i64(M), i64(I), i64(N))
	for j, x := range idx {
		args = append(args, ptr(first+j, x.Offset), i64(x.Len), i64(x.Strides[0]), i64(x.Strides[1]), i64(x.Strides[2]), i64(x.Axis))
	}
	return append(args, ptr(errOp, 0))
}

func ixGrid(o Options, k *Kernel, work int) int {
	return o.capped((work+ixBlock-1)/ixBlock, o.perSM(k))
}

// PlanGather plans a gather; errWords is the backend's four zeroed int64
// error words.
func PlanGather(r *backend.Gather, errWords backend.Buffer, o Options) (*Plan, error) {
	if len(r.Idx) < 1 || len(r.Idx) > backend.MaxIndices {
		return nil, fmt.Errorf("cudagen: gather with %d index arrays", len(r.Idx))
	}
	es := r.Src.DType().Size()
	N := 1
	for _, x := range r.Idx {
		N *= x.Len
	}
	// Rows of a free gather move as the widest words the row length and
	// both operands' alignment allow.
	wsize := es
	for _, w := range []int{16, 8, 4, 2} {
		if w > es && r.I*es%w == 0 && o.aligned(r.Src, r.SrcOffset, w) && o.aligned(r.Out, r.OutOffset, w) {
			wsize = w
			break
		}
	}
	s := ixShapeOf(r.O, r.M, r.I, r.I*es/wsize, r.Idx, o)
	if !s.rows {
		wsize = es
	}
	per := wsize / es
	k, err := cached(o, "gather_"+fmt.Sprint(wsize)+s.key(), func() (*Kernel, error) { return GatherKernel(wsize, s), nil })
	if err != nil {
		return nil, err
	}
	ops := []backend.Operand{{Buf: r.Out}, {Buf: r.Src}}
	for _, x := range r.Idx {
		ops = append(ops, backend.Operand{Buf: x.Buf})
	}
	ops = append(ops, backend.Operand{Buf: errWords})
	args := []Arg{ptr(0, r.OutOffset), ptr(1, r.SrcOffset)}
	args = ixArgs(args, r.O, r.M, r.I/per, N, r.Idx, 2, len(ops)-1)
	work := r.O * r.M * r.I
	if s.rows {
		work = r.O * r.M * 32
	}
	return &Plan{Launches: []Launch{{Kernel: k, Grid: [3]int{ixGrid(o, k, work), 1, 1}, Block: ixBlock, Operands: ops, Args: args}}}, nil
}

// aligned reports whether element off of buffer b is aligned to n bytes.
func (o Options) aligned(b backend.Buffer, off, n int) bool {
	if o.Aligned == nil {
		return false
	}
	return o.Aligned(backend.Operand{Buf: b, Layout: backend.Layout{Offset: off}}, n)
}

// PlanScatter plans a scatter.
func PlanScatter(r *backend.Scatter, errWords backend.Buffer, o Options) (*Plan, error) {
	if len(r.Idx) < 1 || len(r.Idx) > backend.MaxIndices {
		return nil, fmt.Errorf("cudagen: scatter with %d index arrays", len(r.Idx))
	}
	N := 1
	for _, x := range r.Idx {
		N *= x.Len
	}
	s := ixShapeOf(r.O, r.M, r.I, r.I, r.Idx, o)
	dt := r.Dst.DType()
	k, err := cached(o, fmt.Sprintf("scatter_%v_%v_%s", r.Op, dt, s.key()), func() (*Kernel, error) { return ScatterKernel(r.Op, dt, s) })
	if err != nil {
		return nil, err
	}
	ops := []backend.Operand{{Buf: r.Dst}, {Buf: r.Val}}
	for _, x := range r.Idx {
		ops = append(ops, backend.Operand{Buf: x.Buf})
	}
	ops = append(ops, backend.Operand{Buf: errWords})
	args := []Arg{ptr(0, r.DstOffset), ptr(1, r.ValOffset), i64(r.ValStrides[0]), i64(r.ValStrides[1]), i64(r.ValStrides[2])}
	args = ixArgs(args, r.O, r.M, r.I, N, r.Idx, 2, len(ops)-1)
	work := r.O * r.M * r.I
	if s.rows {
		work = r.O * r.M * 32
	}
	return &Plan{Launches: []Launch{{Kernel: k, Grid: [3]int{ixGrid(o, k, work), 1, 1}, Block: ixBlock, Operands: ops, Args: args}}}, nil
}

// nzTile is the mask elements one block of the nonzero kernels handles.
const nzTile = 16 * ixBlock

// NonzeroKernels generates the three kernels of Nonzero: per-tile counts,
// a one-block scan of them (which writes the total), and the ordered
// write of each tile's positions.
func NonzeroKernels() [3]*Kernel {
	var ks [3]*Kernel
	count := &gen{k: &Kernel{Name: "gocu_nonzero_count", Block: ixBlock, Grid: GridRows}}
	count.add("const unsigned char* __restrict__ mask", Param{Name: "mask", Type: Ptr, Role: RoleIn})
	count.add("long long n", Param{Name: "n", Type: I64, Role: RoleCount})
	count.add("long long* __restrict__ counts", Param{Name: "counts", Type: Ptr, Role: RolePartial})
	var b strings.Builder
	fmt.Fprintf(&b, "extern \"C\" __global__ void __launch_bounds__(%d) gocu_nonzero_count(%s) {\n", ixBlock, strings.Join(count.params, ", "))
	fmt.Fprintf(&b, `	__shared__ int total;
	if (threadIdx.x == 0) total = 0;
	__syncthreads();
	const long long base = (long long)blockIdx.x * %d;
	int c = 0;
	for (long long k = base + threadIdx.x; k < base + %d && k < n; k += blockDim.x) c += mask[k] != 0;
	atomicAdd(&total, c);
	__syncthreads();
	if (threadIdx.x == 0) counts[blockIdx.x] = total;
}
`, nzTile, nzTile)
	count.k.Source = b.String()
	ks[0] = count.k

	scan := &gen{k: &Kernel{Name: "gocu_nonzero_scan", Block: ixBlock, Grid: GridOne}}
	scan.add("long long* __restrict__ counts", Param{Name: "counts", Type: Ptr, Role: RolePartial})
	scan.add("long long tiles", Param{Name: "tiles", Type: I64, Role: RoleRows})
	scan.add("long long* __restrict__ count", Param{Name: "count", Type: Ptr, Role: RoleOut})
	b.Reset()
	fmt.Fprintf(&b, "extern \"C\" __global__ void __launch_bounds__(%d) gocu_nonzero_scan(%s) {\n", ixBlock, strings.Join(scan.params, ", "))
	fmt.Fprintf(&b, `	__shared__ long long s[%[1]d];
	long long carry = 0;
	for (long long base = 0; base < tiles; base += %[1]d) {
		const long long k = base + threadIdx.x;
		const long long v = k < tiles ? counts[k] : 0;
		s[threadIdx.x] = v;
		__syncthreads();
		for (int d = 1; d < %[1]d; d <<= 1) {
			long long add = threadIdx.x >= d ? s[threadIdx.x - d] : 0;
			__syncthreads();
			s[threadIdx.x] += add;
			__syncthreads();
		}
		if (k < tiles) counts[k] = carry + s[threadIdx.x] - v;
		carry += s[%[2]d];
		__syncthreads();
	}
	if (threadIdx.x == 0) count[0] = carry;
}
`, ixBlock, ixBlock-1)
	scan.k.Source = b.String()
	ks[1] = scan.k

	write := &gen{k: &Kernel{Name: "gocu_nonzero_write", Block: ixBlock, Grid: GridRows}}
	write.add("const unsigned char* __restrict__ mask", Param{Name: "mask", Type: Ptr, Role: RoleIn})
	write.add("long long n", Param{Name: "n", Type: I64, Role: RoleCount})
	write.add("const long long* __restrict__ offsets", Param{Name: "offsets", Type: Ptr, Role: RolePartial})
	write.add("long long* __restrict__ out", Param{Name: "out", Type: Ptr, Role: RoleOut})
	write.add("long long cap", Param{Name: "cap", Type: I64})
	b.Reset()
	fmt.Fprintf(&b, "extern \"C\" __global__ void __launch_bounds__(%d) gocu_nonzero_write(%s) {\n", ixBlock, strings.Join(write.params, ", "))
	fmt.Fprintf(&b, `	__shared__ int warpSums[%d];
	const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
	const long long base = (long long)blockIdx.x * %d;
	long long off = offsets[blockIdx.x];
	for (long long chunk = base; chunk < base + %d && chunk < n; chunk += %d) {
		const long long k = chunk + threadIdx.x;
		const bool f = k < n && mask[k] != 0;
		const unsigned int bal = __ballot_sync(0xffffffffu, f);
		if (lane == 0) warpSums[warp] = __popc(bal);
		__syncthreads();
		int before = 0, all = 0;
		for (int w = 0; w < %d; w++) {
			before += w < warp ? warpSums[w] : 0;
			all += warpSums[w];
		}
		const long long pos = off + before + __popc(bal & ((1u << lane) - 1u));
		if (f && pos < cap) out[pos] = k;
		off += all;
		__syncthreads();
	}
}
`, ixBlock/32, nzTile, nzTile, ixBlock, ixBlock/32)
	write.k.Source = b.String()
	ks[2] = write.k
	return ks
}

// PlanNonzero plans a Nonzero request (N > 0).
func PlanNonzero(r *backend.Nonzero, o Options) (*Plan, error) {
	ks, err := cached(o, "nonzero", func() ([3]*Kernel, error) { return NonzeroKernels(), nil })
	if err != nil {
		return nil, err
	}
	tiles := (r.N + nzTile - 1) / nzTile
	if tiles > 1<<31-1 {
		return nil, fmt.Errorf("cudagen: nonzero of %d elements", r.N)
	}
	ops := []backend.Operand{{Buf: r.Mask}, {Buf: r.Out}, {Buf: r.Count}}
	p := &Plan{Scratch: []Scratch{{DType: backend.Int64, Len: tiles}}}
	counts := Arg{Type: Ptr, Operand: -1}
	p.Launches = []Launch{
		{Kernel: ks[0], Grid: [3]int{tiles, 1, 1}, Block: ixBlock, Operands: ops, Args: []Arg{ptr(0, r.MaskOffset), i64(r.N), counts}},
		{Kernel: ks[1], Grid: [3]int{1, 1, 1}, Block: ixBlock, Operands: ops, Args: []Arg{counts, i64(tiles), ptr(2, r.CountOffset)}},
	}
	if r.Cap > 0 { // else only the count is wanted
		p.Launches = append(p.Launches, Launch{Kernel: ks[2], Grid: [3]int{tiles, 1, 1}, Block: ixBlock, Operands: ops,
			Args: []Arg{ptr(0, r.MaskOffset), i64(r.N), counts, ptr(1, r.OutOffset), i64(r.Cap)}})
	}
	return p, nil
}
