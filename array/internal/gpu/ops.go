package gpu

import (
	"errors"

	"github.com/gocu-dev/gocu/array/internal/backend"
	"github.com/gocu-dev/gocu/array/internal/cudagen"
	"github.com/gocu-dev/gocu/cuda"
)

// keySize is the stack space for a request key; longer keys spill to the heap.
const keySize = 512

// operands resolves a program's input buffers followed by extra ones into
// dst (a caller's stack array when it is large enough).
func (b *Backend) operands(dst []*Buffer, p *backend.Program, extra ...backend.Buffer) ([]*Buffer, error) {
	if p != nil {
		for _, in := range p.Inputs {
			g, err := b.buf(in.Buf)
			if err != nil {
				return nil, err
			}
			dst = append(dst, g)
		}
	}
	for _, x := range extra {
		g, err := b.buf(x)
		if err != nil {
			return nil, err
		}
		dst = append(dst, g)
	}
	return dst, nil
}

// Eval implements backend.Backend: one generated kernel (a device-to-device
// copy for a plain contiguous copy).
func (b *Backend) Eval(p *backend.Program, out backend.Operand) error {
	if err := b.failed(); err != nil {
		return err
	}
	n := p.Size()
	if n == 0 {
		return nil
	}
	var arr [8]*Buffer
	bufs, err := b.operands(arr[:0], p, out.Buf)
	if err != nil {
		return err
	}
	if p.IsCopy() && p.Inputs[0].Layout.IsContiguous() && out.Layout.IsContiguous() {
		return b.copy(bufs[len(bufs)-1], out.Layout.Offset, bufs[0], p.Inputs[0].Layout.Offset, n)
	}
	var ka [keySize]byte
	k := evalKey(ka[:0], p, out, bufs)
	c := call{bufs: bufs, scalars: p.Scalars}
	return b.execute(k, &c, func() (*cudagen.Plan, error) { return cudagen.PlanEval(p, out, b.options()) })
}

// copy queues a device-to-device copy of n elements (cuMemcpyDtoDAsync, the
// copy engine's peak).
func (b *Backend) copy(dst *Buffer, doff int, src *Buffer, soff, n int) error {
	d, err := dst.view(doff, n)
	if err != nil {
		return err
	}
	s, err := src.view(soff, n)
	if err != nil {
		return err
	}
	return b.note(cuda.CopyDtoDAsync(d, s, n*dst.dt.Size(), b.stream))
}

// Reduce implements backend.Backend.
func (b *Backend) Reduce(r *backend.Reduction) error {
	if err := b.failed(); err != nil {
		return err
	}
	var arr [8]*Buffer
	bufs, err := b.operands(arr[:0], r.In, r.Out.Buf)
	if err != nil {
		return err
	}
	var ka [keySize]byte
	k := reduceKey(ka[:0], r, bufs)
	c := call{bufs: bufs, scalars: r.In.Scalars}
	err = b.execute(k, &c, func() (*cudagen.Plan, error) { return cudagen.PlanReduce(r, b.options()) })
	if errors.Is(err, cudagen.ErrMaterialize) {
		return b.materialize(r.In, func(q *backend.Program) error {
			rq := *r
			rq.In = q
			return b.Reduce(&rq)
		})
	}
	return err
}

// AxisOp implements backend.Backend.
func (b *Backend) AxisOp(a *backend.AxisOp) error {
	if err := b.failed(); err != nil {
		return err
	}
	var arr [8]*Buffer
	bufs, err := b.operands(arr[:0], a.In, a.Out.Buf)
	if err != nil {
		return err
	}
	var ka [keySize]byte
	k := axisKey(ka[:0], a, bufs)
	c := call{bufs: bufs, scalars: a.In.Scalars}
	err = b.execute(k, &c, func() (*cudagen.Plan, error) { return cudagen.PlanAxis(a, b.options()) })
	if errors.Is(err, cudagen.ErrMaterialize) {
		return b.materialize(a.In, func(q *backend.Program) error {
			aq := *a
			aq.In = q
			return b.AxisOp(&aq)
		})
	}
	return err
}

// materialize evaluates an index program (Arange, Eye) into a temporary
// buffer and runs then with a program that reads it: reductions visit
// elements in an order the flat index does not follow.
func (b *Backend) materialize(p *backend.Program, then func(q *backend.Program) error) error {
	dt := p.Result()
	tmp, err := b.Alloc(dt, p.Size())
	if err != nil {
		return err
	}
	defer b.Free(tmp) // stream-ordered: after the kernels that read it
	lay := backend.Contiguous(p.Shape)
	if err := b.Eval(p, backend.Operand{Buf: tmp, Layout: lay}); err != nil {
		return err
	}
	q := &backend.Program{Shape: p.Shape, Inputs: []backend.Operand{{Buf: tmp, Layout: lay}},
		Nodes: []backend.Node{{Op: backend.OpInput, DType: dt}}}
	return then(q)
}

// Random implements backend.Backend: the Philox fill kernel, bit for bit
// the CPU backend's values.
func (b *Backend) Random(r *backend.Random) error {
	if err := b.failed(); err != nil {
		return err
	}
	var arr [1]*Buffer
	bufs, err := b.operands(arr[:0], nil, r.Out.Buf)
	if err != nil {
		return err
	}
	var ka [64]byte
	k := randomKey(ka[:0], r, bufs)
	c := call{bufs: bufs, rnd: r}
	return b.execute(k, &c, func() (*cudagen.Plan, error) { return cudagen.PlanRandom(r, b.options()) })
}

// Request keys. Each starts with the request kind and covers everything
// the plan depends on: structure, dtypes, shapes, strides, offsets, the
// alignment of every operand and which operands share a buffer; never
// scalar values, random parameters or addresses, which are bound per call.

func evalKey(k []byte, p *backend.Program, out backend.Operand, bufs []*Buffer) []byte {
	k = append(k, 'E')
	k = appendProgram(k, p, bufs)
	k = appendLayout(k, &out.Layout)
	k = append(k, align(bufs[len(bufs)-1], out.Layout.Offset))
	return appendAliases(k, bufs)
}

func reduceKey(k []byte, r *backend.Reduction, bufs []*Buffer) []byte {
	k = append(k, 'R', byte(r.Op), byte(r.Out.Buf.DType()))
	k = appendInt(k, len(r.Axes))
	for _, a := range r.Axes {
		k = appendInt(k, a)
	}
	k = appendProgram(k, r.In, bufs)
	k = appendLayout(k, &r.Out.Layout)
	k = append(k, align(bufs[len(bufs)-1], r.Out.Layout.Offset))
	return appendAliases(k, bufs)
}

func axisKey(k []byte, a *backend.AxisOp, bufs []*Buffer) []byte {
	k = append(k, 'A', byte(a.Kind))
	k = appendInt(k, a.Axis)
	k = appendProgram(k, a.In, bufs)
	k = appendLayout(k, &a.Out.Layout)
	k = append(k, align(bufs[len(bufs)-1], a.Out.Layout.Offset))
	return appendAliases(k, bufs)
}

func randomKey(k []byte, r *backend.Random, bufs []*Buffer) []byte {
	k = append(k, 'N', byte(r.Out.Buf.DType()), byte(r.Dist))
	k = appendLayout(k, &r.Out.Layout)
	return append(k, align(bufs[0], r.Out.Layout.Offset))
}
