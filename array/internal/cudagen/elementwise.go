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
	Vec       int  // 1, 2 or 4 elements per vector load/store (contiguous operands only)
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
	if n > lim {
		s.Index64 = true
	}
	for _, o := range all {
		lo, hi := o.Layout.Extent()
		if lo < -lim || hi > lim {
			s.Index64 = true
		}
	}
	if !s.OutContig || n < 2*blockSize {
		return s
	}
	maxSize := out.Buf.DType().Size()
	for i, in := range p.Inputs {
		if s.In[i] == Strided {
			return s
		}
		if s.In[i] == Contig {
			maxSize = max(maxSize, in.DType().Size())
		}
	}
	for _, w := range []int{4, 2} {
		if w == 4 && maxSize > 4 {
			continue
		}
		ok := aligned(out, w*out.Buf.DType().Size())
		for i, in := range p.Inputs {
			if s.In[i] == Contig {
				ok = ok && aligned(in, w*in.DType().Size())
			}
		}
		if ok {
			s.Vec = w
			return s
		}
	}
	return s
}

// Elementwise generates the kernel computing program p (its structure and
// dtypes; shapes, strides and scalar values are parameters) under spec.
func Elementwise(p *backend.Program, spec ElemSpec) (*Kernel, error) {
	if len(spec.In) != len(p.Inputs) {
		return nil, fmt.Errorf("cudagen: spec has %d input classes for %d inputs", len(spec.In), len(p.Inputs))
	}
	if spec.Vec != 1 && spec.Vec != 2 && spec.Vec != 4 {
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
	strided := !spec.OutContig
	for _, c := range spec.In {
		strided = strided || c == Strided
	}
	if strided {
		for d := 0; d < spec.Rank; d++ {
			add(fmt.Sprintf("long long d%d", d), Param{Name: fmt.Sprintf("d%d", d), Type: I64, Role: RoleDim, Dim: d})
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
	fmt.Fprintf(&b, "\t%s i = (%s)blockIdx.x * (%s)blockDim.x + (%s)threadIdx.x;\n", it, it, it, it)
	fmt.Fprintf(&b, "\tconst %s step = (%s)gridDim.x * (%s)blockDim.x;\n", it, it, it)
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
	if spec.Vec > 1 {
		w := spec.Vec
		comps := []string{"x", "y", "z", "w"}[:w]
		fmt.Fprintf(&b, "\t{\n\t\tconst %s nv = n / %d;\n", it, w)
		fmt.Fprintf(&b, "\t\tfor (%s v = i; v < nv; v += step) {\n", it)
		for i, in := range p.Inputs {
			if spec.In[i] == Contig {
				vt := vtype(in.DType(), w)
				fmt.Fprintf(&b, "\t\t\tconst %s a%d = reinterpret_cast<const %s*>(in%d)[v];\n", vt, i, vt, i)
			}
		}
		ovt := vtype(outDT, w)
		fmt.Fprintf(&b, "\t\t\t%s r;\n", ovt)
		for j, comp := range comps {
			load := func(i int) string {
				if spec.In[i] == Const {
					return fmt.Sprintf("c%d", i)
				}
				if p.Inputs[i].DType() == backend.Bool {
					return fmt.Sprintf("(a%d.%s != 0)", i, comp)
				}
				return fmt.Sprintf("a%d.%s", i, comp)
			}
			val := call(load, fmt.Sprintf("v * %d + %d", w, j))
			if outDT == backend.Bool {
				val = "(unsigned char)" + val
			}
			fmt.Fprintf(&b, "\t\t\tr.%s = %s;\n", comp, val)
		}
		fmt.Fprintf(&b, "\t\t\treinterpret_cast<%s*>(out)[v] = r;\n\t\t}\n", ovt)
		fmt.Fprintf(&b, "\t\ti += nv * %d;\n\t}\n", w)
	}
	fmt.Fprintf(&b, "\tfor (; i < n; i += step) {\n")
	if strided {
		fmt.Fprintf(&b, "\t\t%s rem = i;\n", it)
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
			fmt.Fprintf(&b, "\t\t%s %s = 0;\n", it, o)
		}
		for d := spec.Rank - 1; d >= 0; d-- {
			fmt.Fprintf(&b, "\t\t{\n\t\t\tconst %s c = rem %% (%s)d%d;\n", it, it, d)
			if d > 0 {
				fmt.Fprintf(&b, "\t\t\trem /= (%s)d%d;\n", it, d)
			}
			for i, c := range spec.In {
				if c == Strided {
					fmt.Fprintf(&b, "\t\t\to%d += c * (%s)st%d_%d;\n", i, it, i, d)
				}
			}
			if !spec.OutContig {
				fmt.Fprintf(&b, "\t\t\too += c * (%s)sto_%d;\n", it, d)
			}
			b.WriteString("\t\t}\n")
		}
	}
	load := func(i int) string {
		switch spec.In[i] {
		case Const:
			return fmt.Sprintf("c%d", i)
		case Strided:
			return fmt.Sprintf("in%d[o%d]", i, i)
		}
		return fmt.Sprintf("in%d[i]", i)
	}
	dst := "out[i]"
	if !spec.OutContig {
		dst = "out[oo]"
	}
	fmt.Fprintf(&b, "\t\t%s = %s;\n\t}\n}\n", dst, call(load, "i"))
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
	return fmt.Sprintf("(%s)%s", ctype(d), v)
}
