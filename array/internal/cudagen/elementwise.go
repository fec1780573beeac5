package cudagen

import (
	"fmt"
	"strings"

	"github.com/gocu-dev/gocu/array/internal/backend"
)

// Class is how a kernel addresses an operand.
type Class uint8

// Contig operands are read at the flat index, Const ones once per thread,
// Strided ones through per-dimension index arithmetic.
const (
	Contig Class = iota
	Const
	Strided
)

// ElemSpec is the specialisation of an elementwise kernel.
type ElemSpec struct {
	Rank      int     // rank of the (collapsed) program
	In        []Class // per input
	OutContig bool
	Index64   bool // 64-bit index arithmetic (more than 2^31-1 elements or offsets)
	Vec       int  // 1, 2, 4 or 8 elements per vector load/store (8 for types of at most 2 bytes; see vecLayout for strided operands)
}

func (s ElemSpec) key() string {
	var b strings.Builder
	fmt.Fprintf(&b, "r%d o%v i%v v%d c", s.Rank, s.OutContig, s.Index64, s.Vec)
	for _, c := range s.In {
		fmt.Fprintf(&b, "%d", c)
	}
	return b.String()
}

const blockSize = 256

// maxIndex32 is the largest element count a kernel indexes with 32-bit
// ints: loop variables run up to about twice the count (the last
// increment of a tiled loop), which must not overflow.
const maxIndex32 = 1<<30 - 4096

// Tiled reports whether the kernel takes the contiguous path (output and
// inputs contiguous or constant): tiles of Unroll vectors per thread, no
// index arithmetic.
func (s ElemSpec) Tiled() bool {
	if !s.OutContig {
		return false
	}
	for _, c := range s.In {
		if c == Strided {
			return false
		}
	}
	return true
}

// SpecFor picks the specialisation for a program and its output, after
// package array collapsed their dimensions. aligned reports whether an
// operand's first element (buffer address plus offset) is aligned to the
// given number of bytes; the backend answers it from device pointers.
func SpecFor(p *backend.Program, out backend.Operand, aligned func(o backend.Operand, bytes int) bool) ElemSpec {
	s := ElemSpec{Rank: len(p.Shape), OutContig: out.Layout.IsContiguous(), Vec: 1}
	n := p.Size()
	all := []backend.Operand{out}
	for _, in := range p.Inputs {
		c := Strided
		switch {
		case in.Layout.IsConstant():
			c = Const
		case in.Layout.IsContiguous():
			c = Contig
		}
		s.In = append(s.In, c)
		all = append(all, in)
	}
	const lim = 1<<31 - 1
	if n > maxIndex32 {
		s.Index64 = true
	}
	for _, o := range all {
		lo, hi := o.Layout.Extent()
		if lo < -lim || hi > lim {
			s.Index64 = true
		}
	}
	if n < 2*blockSize {
		return s
	}
	tiled := s.Tiled()
	maxSize := out.Buf.DType().Size()
	for i, in := range p.Inputs {
		if s.In[i] != Const {
			maxSize = max(maxSize, in.DType().Size())
		}
	}
	for _, w := range []int{8, 4, 2} {
		if (w == 8 && maxSize > 2) || (w == 4 && maxSize > 4) {
			continue
		}
		ok := aligned(out, w*out.Buf.DType().Size()) && (tiled || vecLayout(out.Layout, w))
		for i, in := range p.Inputs {
			if s.In[i] != Const {
				ok = ok && aligned(in, w*in.DType().Size()) && (tiled || vecLayout(in.Layout, w))
			}
		}
		if ok {
			s.Vec = w
			return s
		}
	}
	return s
}

// vecLayout reports whether the strided path can move l's elements in
// vectors of w: its innermost dimension is contiguous and a multiple of w
// long, and every other stride is a multiple of w (with an aligned first
// element, every vector is then aligned).
func vecLayout(l backend.Layout, w int) bool {
	r := len(l.Shape)
	if r == 0 || l.Shape[r-1]%w != 0 || l.Strides[r-1] != 1 {
		return false
	}
	for _, st := range l.Strides[:r-1] {
		if st%w != 0 {
			return false
		}
	}
	return true
}

// stridedDim is the value of RoleDim parameter d: in a vectorised strided
// kernel, the innermost dimension counts vectors.
func (s ElemSpec) stridedDim(shape []int, d int) int {
	if d == len(shape)-1 && !s.Tiled() {
		return shape[d] / s.Vec
	}
	return shape[d]
}

// stridedStride is the value of a RoleStride parameter: strides count
// vectors in a vectorised strided kernel.
func (s ElemSpec) stridedStride(l backend.Layout, d int) int {
	if s.Tiled() || s.Vec == 1 {
		return l.Strides[d]
	}
	if d == len(l.Shape)-1 {
		return 1
	}
	return l.Strides[d] / s.Vec
}

// Elementwise generates the kernel computing program p (its structure and
// dtypes; shapes, strides and scalar values are parameters) under spec.
func Elementwise(p *backend.Program, spec ElemSpec) (*Kernel, error) {
	if len(spec.In) != len(p.Inputs) {
		return nil, fmt.Errorf("cudagen: spec has %d input classes for %d inputs", len(spec.In), len(p.Inputs))
	}
	if spec.Vec != 1 && spec.Vec != 2 && spec.Vec != 4 && spec.Vec != 8 {
		return nil, fmt.Errorf("cudagen: vector width %d", spec.Vec)
	}
	name := kernelName("ew", p.Key()+"|"+spec.key())
	f, err := elemFunc(name+"_f", p)
	if err != nil {
		return nil, err
	}
	k := &Kernel{Name: name, Block: blockSize, Grid: GridStride}
	it := "int"
	if spec.Index64 {
		it = "long long"
	}
	outDT := p.Result()
	var params []string
	add := func(decl string, prm Param) {
		params = append(params, decl)
		k.Params = append(k.Params, prm)
	}
	add(fmt.Sprintf("%s* __restrict__ out", ctype(outDT)), Param{Name: "out", Type: Ptr, Role: RoleOut})
	for i, in := range p.Inputs {
		add(fmt.Sprintf("const %s* __restrict__ in%d", ctype(in.DType()), i), Param{Name: fmt.Sprintf("in%d", i), Type: Ptr, Role: RoleIn, Index: i})
	}
	for i, s := range p.Scalars {
		t := scalarParamType(s.DType)
		add(fmt.Sprintf("%s sp%d", t, i), Param{Name: fmt.Sprintf("sp%d", i), Type: t, Role: RoleScalar, Index: i})
	}
	add("long long n_", Param{Name: "n", Type: I64, Role: RoleCount})
	strided := !spec.Tiled()
	if strided {
		for d := 0; d < spec.Rank; d++ {
			add(fmt.Sprintf("long long d%d", d), Param{Name: fmt.Sprintf("d%d", d), Type: I64, Role: RoleDim, Dim: d})
		}
		if !spec.Index64 {
			addDivs(add, "d", spec.Rank, RoleDimDiv)
		}
		for i, c := range spec.In {
			if c != Strided {
				continue
			}
			for d := 0; d < spec.Rank; d++ {
				add(fmt.Sprintf("long long st%d_%d", i, d), Param{Name: fmt.Sprintf("st%d_%d", i, d), Type: I64, Role: RoleStride, Index: i, Dim: d})
			}
		}
		if !spec.OutContig {
			for d := 0; d < spec.Rank; d++ {
				add(fmt.Sprintf("long long sto_%d", d), Param{Name: fmt.Sprintf("sto_%d", d), Type: I64, Role: RoleStride, Index: -1, Dim: d})
			}
		}
	}

	var b strings.Builder
	b.WriteString(helpersSource)
	b.WriteString(f)
	fmt.Fprintf(&b, "\nextern \"C\" __global__ void __launch_bounds__(%d) %s(%s) {\n", blockSize, name, strings.Join(params, ", "))
	fmt.Fprintf(&b, "\tconst %s n = (%s)n_;\n", it, it)
	for i, s := range p.Scalars {
		fmt.Fprintf(&b, "\tconst %s s%d = %s;\n", ctype(s.DType), i, scalarFromParam(s.DType, fmt.Sprintf("sp%d", i)))
	}
	for i, c := range spec.In {
		if c == Const {
			fmt.Fprintf(&b, "\tconst %s c%d = in%d[0];\n", ctype(p.Inputs[i].DType()), i, i)
		}
	}
	call := func(load func(i int) string, idx string) string {
		var args []string
		for i := range p.Inputs {
			args = append(args, load(i))
		}
		for i := range p.Scalars {
			args = append(args, fmt.Sprintf("s%d", i))
		}
		args = append(args, "(long long)("+idx+")")
		return fmt.Sprintf("%s_f(%s)", name, strings.Join(args, ", "))
	}
	if !strided {
		writeTiled(&b, p, spec, it, call)
	} else {
		writeStrided(&b, p, spec, it, call)
	}
	b.WriteString("}\n")
	k.Source = b.String()
	return k, nil
}

// scalarFromParam converts a scalar parameter (double or long long) to its dtype.
func scalarFromParam(d backend.DType, v string) string {
	switch d {
	case backend.Bool:
		return "(" + v + " != 0)"
	case backend.Float64, backend.Int64:
		return v
	}
	if d.IsLowp() {
		return fmt.Sprintf("%s(gocu_to_odd32(%s))", lowpNarrow[d], v)
	}
	return fmt.Sprintf("(%s)%s", ctype(d), v)
}

// Unroll is how many vectors (or elements, without vectors) each thread of
// a contiguous elementwise or full-reduction kernel loads per tile before
// it uses any of them: with 16-byte vectors that is 64 bytes per operand in
// flight per thread, enough to cover memory latency even at half occupancy.
const Unroll = 4

// writeTiled writes the contiguous path: the output and every input are
// contiguous (or constant), so element i of each lies at index i. The
// vectors of W = spec.Vec elements are processed in tiles of
// blockDim.x*Unroll vectors: thread t of a block takes vectors
// base+t, base+t+blockDim.x, ... (coalesced), loads all of them first and
// then computes and stores. No division or modulo in the loop. The few
// elements past the last whole vector are done one per thread at the end.
func writeTiled(b *strings.Builder, p *backend.Program, spec ElemSpec, it string, call func(func(int) string, string) string) {
	w := spec.Vec
	outDT := p.Result()
	ovt := ctype(outDT)
	if w > 1 {
		ovt = vtype(outDT, w)
	}
	fmt.Fprintf(b, "\tconst %s nv = n / %d;\n", it, w)
	fmt.Fprintf(b, "\tconst %s tile = (%s)blockDim.x * %d;\n", it, it, Unroll)
	if w > 1 {
		fmt.Fprintf(b, "\t%s* __restrict__ outv = reinterpret_cast<%s*>(out);\n", ovt, ovt)
	}
	for i, in := range p.Inputs {
		if spec.In[i] == Contig && w > 1 {
			vt := vtype(in.DType(), w)
			fmt.Fprintf(b, "\tconst %s* __restrict__ inv%d = reinterpret_cast<const %s*>(in%d);\n", vt, i, vt, i)
		}
	}
	fmt.Fprintf(b, "\tfor (%[1]s base = (%[1]s)blockIdx.x * tile + (%[1]s)threadIdx.x; base < nv; base += (%[1]s)gridDim.x * tile) {\n", it)
	for u := 0; u < Unroll; u++ {
		fmt.Fprintf(b, "\t\tconst %s q%d = base + (%s)blockDim.x * %d;\n\t\tconst bool ok%d = q%d < nv;\n", it, u, it, u, u, u)
	}
	for i, in := range p.Inputs {
		if spec.In[i] != Contig {
			continue
		}
		for u := 0; u < Unroll; u++ {
			if w > 1 {
				vt := vtype(in.DType(), w)
				fmt.Fprintf(b, "\t\t%s a%d_%d = {};\n\t\tif (ok%d) a%d_%d = inv%d[q%d];\n", vt, i, u, u, i, u, i, u)
			} else {
				fmt.Fprintf(b, "\t\t%s a%d_%d = {};\n\t\tif (ok%d) a%d_%d = in%d[q%d];\n", ctype(in.DType()), i, u, u, i, u, i, u)
			}
		}
	}
	comps := vecComps[:w]
	for u := 0; u < Unroll; u++ {
		fmt.Fprintf(b, "\t\tif (ok%d) {\n", u)
		if w == 1 {
			load := func(i int) string {
				if spec.In[i] == Const {
					return fmt.Sprintf("c%d", i)
				}
				return fmt.Sprintf("a%d_%d", i, u)
			}
			fmt.Fprintf(b, "\t\t\tout[q%d] = %s;\n\t\t}\n", u, call(load, fmt.Sprintf("q%d", u)))
			continue
		}
		fmt.Fprintf(b, "\t\t\t%s r;\n", ovt)
		for j, comp := range comps {
			load := func(i int) string {
				if spec.In[i] == Const {
					return fmt.Sprintf("c%d", i)
				}
				if p.Inputs[i].DType() == backend.Bool {
					return fmt.Sprintf("(a%d_%d.%s != 0)", i, u, comp)
				}
				return fmt.Sprintf("a%d_%d.%s", i, u, comp)
			}
			val := call(load, fmt.Sprintf("q%d * %d + %d", u, w, j))
			if outDT == backend.Bool {
				val = "(unsigned char)" + val
			}
			fmt.Fprintf(b, "\t\t\tr.%s = %s;\n", comp, val)
		}
		fmt.Fprintf(b, "\t\t\toutv[q%d] = r;\n\t\t}\n", u)
	}
	b.WriteString("\t}\n")
	if w > 1 {
		load := func(i int) string {
			if spec.In[i] == Const {
				return fmt.Sprintf("c%d", i)
			}
			return fmt.Sprintf("in%d[i]", i)
		}
		fmt.Fprintf(b, "\tfor (%[1]s i = nv * %[2]d + (%[1]s)blockIdx.x * (%[1]s)blockDim.x + (%[1]s)threadIdx.x; i < n; i += (%[1]s)gridDim.x * (%[1]s)blockDim.x)\n", it, w)
		fmt.Fprintf(b, "\t\tout[i] = %s;\n", call(load, "i"))
	}
}

// writeStrided writes the general path: a grid-stride loop over the
// elements that unravels each flat index into per-operand offsets. With
// spec.Vec > 1 it loops over vectors instead: the planner passes the
// innermost dimension and every stride in vectors (see vecLayout).
func writeStrided(b *strings.Builder, p *backend.Program, spec ElemSpec, it string, call func(func(int) string, string) string) {
	w := spec.Vec
	outDT := p.Result()
	fmt.Fprintf(b, "\tconst %[1]s step = (%[1]s)gridDim.x * (%[1]s)blockDim.x;\n", it)
	nv := "n"
	if w > 1 {
		nv = "nv"
		fmt.Fprintf(b, "\tconst %s nv = n / %d;\n", it, w)
		ovt := vtype(outDT, w)
		fmt.Fprintf(b, "\t%s* __restrict__ outv = reinterpret_cast<%s*>(out);\n", ovt, ovt)
		for i, in := range p.Inputs {
			if spec.In[i] != Const {
				vt := vtype(in.DType(), w)
				fmt.Fprintf(b, "\tconst %s* __restrict__ inv%d = reinterpret_cast<const %s*>(in%d);\n", vt, i, vt, i)
			}
		}
	}
	fmt.Fprintf(b, "\tfor (%[1]s i = (%[1]s)blockIdx.x * (%[1]s)blockDim.x + (%[1]s)threadIdx.x; i < %[2]s; i += step) {\n", it, nv)
	fmt.Fprintf(b, "\t\t%s rem = i;\n", it)
	var offs []string
	for i, c := range spec.In {
		if c == Strided {
			offs = append(offs, fmt.Sprintf("o%d", i))
		}
	}
	if !spec.OutContig {
		offs = append(offs, "oo")
	}
	for _, o := range offs {
		fmt.Fprintf(b, "\t\t%s %s = 0;\n", it, o)
	}
	for d := spec.Rank - 1; d >= 0; d-- {
		b.WriteString("\t\t{\n")
		divStep(b, "\t\t\t", it, "c", "d", d, !spec.Index64)
		for i, c := range spec.In {
			if c == Strided {
				fmt.Fprintf(b, "\t\t\to%d += c * (%s)st%d_%d;\n", i, it, i, d)
			}
		}
		if !spec.OutContig {
			fmt.Fprintf(b, "\t\t\too += c * (%s)sto_%d;\n", it, d)
		}
		b.WriteString("\t\t}\n")
	}
	at := func(i int) string {
		if spec.In[i] == Strided {
			return fmt.Sprintf("o%d", i)
		}
		return "i"
	}
	dst := "i"
	if !spec.OutContig {
		dst = "oo"
	}
	if w == 1 {
		load := func(i int) string {
			if spec.In[i] == Const {
				return fmt.Sprintf("c%d", i)
			}
			return fmt.Sprintf("in%d[%s]", i, at(i))
		}
		fmt.Fprintf(b, "\t\tout[%s] = %s;\n\t}\n", dst, call(load, "i"))
		return
	}
	for i, in := range p.Inputs {
		if spec.In[i] != Const {
			fmt.Fprintf(b, "\t\tconst %s a%d = inv%d[%s];\n", vtype(in.DType(), w), i, i, at(i))
		}
	}
	fmt.Fprintf(b, "\t\t%s r;\n", vtype(outDT, w))
	for j, comp := range vecComps[:w] {
		load := func(i int) string {
			if spec.In[i] == Const {
				return fmt.Sprintf("c%d", i)
			}
			if p.Inputs[i].DType() == backend.Bool {
				return fmt.Sprintf("(a%d.%s != 0)", i, comp)
			}
			return fmt.Sprintf("a%d.%s", i, comp)
		}
		val := call(load, fmt.Sprintf("i * %d + %d", w, j))
		if outDT == backend.Bool {
			val = "(unsigned char)" + val
		}
		fmt.Fprintf(b, "\t\tr.%s = %s;\n", comp, val)
	}
	fmt.Fprintf(b, "\t\toutv[%s] = r;\n\t}\n", dst)
}
