package backend

import (
	"fmt"
	"strconv"
	"strings"
)

// Buffer is a backend's block of device (or host) memory holding Len
// elements of one DType. Only the backend that allocated it may use it.
type Buffer interface {
	DType() DType
	Len() int
}

// Operand is a strided view of a buffer.
type Operand struct {
	Buf    Buffer
	Layout Layout
}

// DType is the element type of the operand's buffer.
func (o Operand) DType() DType { return o.Buf.DType() }

// Node is one operation of a Program. Args index earlier nodes, except for
// leaves, whose Args[0] indexes Program.Inputs (OpInput) or Program.Scalars
// (OpScalar).
type Node struct {
	Op    Op
	DType DType
	Args  [3]int32
}

// Program is a fused elementwise computation over Shape: a DAG of Nodes in
// topological order whose last node is the result. Every input's Layout has
// the program's Shape (broadcasting already applied through zero strides).
// Scalars are run-time parameters: two programs that differ only in scalar
// values or in shapes and strides share one Key, so one compiled kernel.
type Program struct {
	Shape   []int
	Inputs  []Operand
	Scalars []Scalar
	Nodes   []Node
}

// Result is the dtype the program produces.
func (p *Program) Result() DType { return p.Nodes[len(p.Nodes)-1].DType }

// Size is the number of output elements.
func (p *Program) Size() int { return Size(p.Shape) }

// IsCopy reports whether the program is a plain read of one input without
// conversion (a copy or a layout change).
func (p *Program) IsCopy() bool {
	return len(p.Nodes) == 1 && p.Nodes[0].Op == OpInput
}

// Validate checks the structural invariants a backend relies on; package
// array's tests run it over every program they build.
func (p *Program) Validate() error {
	if len(p.Nodes) == 0 {
		return fmt.Errorf("backend: empty program")
	}
	for i, in := range p.Inputs {
		if len(in.Layout.Shape) != len(p.Shape) || len(in.Layout.Strides) != len(p.Shape) {
			return fmt.Errorf("backend: input %d has rank %d, program %d", i, len(in.Layout.Shape), len(p.Shape))
		}
		for d := range p.Shape {
			if in.Layout.Shape[d] != p.Shape[d] {
				return fmt.Errorf("backend: input %d shape %v, program %v", i, in.Layout.Shape, p.Shape)
			}
		}
	}
	for i, n := range p.Nodes {
		if !n.DType.Valid() {
			return fmt.Errorf("backend: node %d (%v) has no dtype", i, n.Op)
		}
		switch n.Op {
		case OpInput:
			if int(n.Args[0]) >= len(p.Inputs) || p.Inputs[n.Args[0]].DType() != n.DType {
				return fmt.Errorf("backend: node %d reads a missing or mistyped input", i)
			}
			continue
		case OpScalar:
			if int(n.Args[0]) >= len(p.Scalars) || p.Scalars[n.Args[0]].DType != n.DType {
				return fmt.Errorf("backend: node %d reads a missing or mistyped scalar", i)
			}
			continue
		case OpIota:
			if n.DType != Int64 {
				return fmt.Errorf("backend: iota must be int64")
			}
			continue
		}
		ar := n.Op.Arity()
		if ar == 0 {
			return fmt.Errorf("backend: node %d has invalid op %d", i, n.Op)
		}
		for a := 0; a < ar; a++ {
			if n.Args[a] < 0 || int(n.Args[a]) >= i {
				return fmt.Errorf("backend: node %d (%v) argument %d is not an earlier node", i, n.Op, a)
			}
		}
		arg := p.Nodes[n.Args[0]].DType
		switch {
		case n.Op == OpCast:
			if !CastDefined(arg, n.DType) {
				return fmt.Errorf("backend: node %d: no direct cast from %v to %v", i, arg, n.DType)
			}
		case n.Op == OpWhere:
			arg = p.Nodes[n.Args[1]].DType
			if p.Nodes[n.Args[0]].DType != Bool || p.Nodes[n.Args[2]].DType != arg || n.DType != arg {
				return fmt.Errorf("backend: node %d: where(%v, %v, %v) -> %v", i, p.Nodes[n.Args[0]].DType, arg, p.Nodes[n.Args[2]].DType, n.DType)
			}
		case n.Op.IsCompare() || n.Op.IsPredicate():
			if n.DType != Bool {
				return fmt.Errorf("backend: node %d (%v) must produce bool", i, n.Op)
			}
		default:
			if n.DType != arg {
				return fmt.Errorf("backend: node %d (%v) computes %v from %v", i, n.Op, n.DType, arg)
			}
		}
		if ar == 2 && p.Nodes[n.Args[1]].DType != arg {
			return fmt.Errorf("backend: node %d (%v) mixes %v and %v", i, n.Op, arg, p.Nodes[n.Args[1]].DType)
		}
		if !Supports(n.Op, arg) {
			return fmt.Errorf("backend: node %d: %v is not defined for %v", i, n.Op, arg)
		}
	}
	return nil
}

// Key describes the program's structure: nodes, dtypes, and the dtypes of
// inputs and scalars, but not shapes, strides or scalar values. Backends
// that compile programs add their own specialisation (rank, contiguity,
// index width) to it.
func (p *Program) Key() string {
	var b strings.Builder
	for _, n := range p.Nodes {
		b.WriteString(n.Op.String())
		b.WriteByte(':')
		b.WriteString(n.DType.String())
		if n.Op.IsLeaf() {
			if n.Op != OpIota {
				b.WriteByte('#')
				b.WriteString(strconv.Itoa(int(n.Args[0])))
			}
		} else {
			for a := 0; a < n.Op.Arity(); a++ {
				b.WriteByte(',')
				b.WriteString(strconv.Itoa(int(n.Args[a])))
			}
		}
		b.WriteByte(';')
	}
	return b.String()
}

// String renders the program as an expression, for error messages and debugging.
func (p *Program) String() string {
	var rec func(i int) string
	rec = func(i int) string {
		n := p.Nodes[i]
		switch n.Op {
		case OpInput:
			return fmt.Sprintf("in%d:%v", n.Args[0], n.DType)
		case OpScalar:
			return fmt.Sprintf("s%d:%v", n.Args[0], n.DType)
		case OpIota:
			return "iota"
		case OpCast:
			return fmt.Sprintf("%v(%s)", n.DType, rec(int(n.Args[0])))
		}
		args := make([]string, n.Op.Arity())
		for a := range args {
			args[a] = rec(int(n.Args[a]))
		}
		return fmt.Sprintf("%v(%s)", n.Op, strings.Join(args, ", "))
	}
	return rec(len(p.Nodes) - 1)
}
