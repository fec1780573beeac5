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
	_, err := b.eval(p, out, false)
	return err
}

// EvalPrepare implements backend.Preparer: Eval, and the plan it ran with
// what the plan depends on beyond the program's structure (the buffers'
// dtypes, alignment and aliasing) for EvalPrepared to check.
func (b *Backend) EvalPrepare(p *backend.Program, out backend.Operand) (backend.Prepared, error) {
	h, err := b.eval(p, out, true)
	if h == nil {
		return nil, err // no untyped nil pointer in the interface
	}
	return h, err
}

// eval is Eval, returning the plan's handle if asked to (and there is one).
func (b *Backend) eval(p *backend.Program, out backend.Operand, prepare bool) (*prepared, error) {
	if err := b.failed(); err != nil {
		return nil, err
	}
	n := p.Size()
	if n == 0 {
		return nil, nil
	}
	var arr [8]*Buffer
	bufs, err := b.operands(arr[:0], p, out.Buf)
	if err != nil {
		return nil, err
	}
	if p.IsCopy() && p.Inputs[0].Layout.IsContiguous() && out.Layout.IsContiguous() {
		return nil, b.copy(bufs[len(bufs)-1], out.Layout.Offset, bufs[0], p.Inputs[0].Layout.Offset, n)
	}
	var ka [keySize]byte
	k := evalKey(ka[:0], p, out, bufs)
	c := call{bufs: bufs, scalars: p.Scalars}
	pl, err := b.execute(k, &c, func() (*cudagen.Plan, error) { return cudagen.PlanEval(p, out, b.options()) })
	if !prepare || pl == nil || err != nil || len(bufs) > maxPrepared {
		return nil, err
	}
	// Every request with the plan's key has the same handle: made once.
	if h := pl.prep.Load(); h != nil {
		return h, nil
	}
	h := &prepared{p: pl, nin: len(p.Inputs)}
	for i, g := range bufs {
		off := out.Layout.Offset
		if i < len(p.Inputs) {
			off = p.Inputs[i].Layout.Offset
		}
		h.bufs[i] = preparedBuf{dt: g.dt, off: off, align: align(g, off), alias: uint8(aliasOf(bufs, i))}
	}
	pl.prep.Store(h)
	return h, nil
}

// maxPrepared is the most buffers (inputs and output) of a prepared plan.
const maxPrepared = 8

// prepared is EvalPrepare's handle: a plan and, for each of its buffers
// (the inputs, then the output), what the plan's key says of it.
type prepared struct {
	p    *plan
	nin  int
	bufs [maxPrepared]preparedBuf
}

type preparedBuf struct {
	dt    backend.DType
	align byte
	alias uint8 // the first buffer index holding the same buffer
	off   int   // element offset of the operand
}

// aliasOf is the first index of bufs holding bufs[i].
func aliasOf(bufs []*Buffer, i int) int {
	j := 0
	for j < i && bufs[j] != bufs[i] {
		j++
	}
	return j
}

// EvalPrepared implements backend.Preparer.
func (b *Backend) EvalPrepared(hp backend.Prepared, ins []backend.Buffer, scalars []backend.Scalar, out backend.Buffer) (bool, error) {
	h, _ := hp.(*prepared)
	if h == nil || len(ins) != h.nin {
		return false, nil
	}
	if err := b.failed(); err != nil {
		return true, err
	}
	var arr [maxPrepared]*Buffer
	bufs := arr[:len(ins)+1]
	for i := range bufs {
		x := out
		if i < len(ins) {
			x = ins[i]
		}
		g, err := b.buf(x)
		if err != nil {
			return true, err
		}
		bufs[i] = g
		hb := &h.bufs[i]
		if g.dt != hb.dt || align(g, hb.off) != hb.align || aliasOf(bufs, i) != int(hb.alias) {
			return false, nil
		}
	}
	c := call{bufs: bufs, scalars: scalars}
	if err := b.run(h.p, &c); err != errStale {
		return true, err
	}
	return false, nil // planned again by Eval
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
	_, err = b.execute(k, &c, func() (*cudagen.Plan, error) { return cudagen.PlanReduce(r, b.options()) })
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
	extra := []backend.Buffer{a.Out.Buf}
	if a.Kind == backend.Quantize {
		extra = append(extra, a.Scale.Buf) // the scales the kernel writes
	}
	bufs, err := b.operands(arr[:0], a.In, extra...)
	if err != nil {
		return err
	}
	var ka [keySize]byte
	k := axisKey(ka[:0], a, bufs)
	c := call{bufs: bufs, scalars: a.In.Scalars}
	_, err = b.execute(k, &c, func() (*cudagen.Plan, error) { return cudagen.PlanAxis(a, b.options()) })
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
	_, err = b.execute(k, &c, func() (*cudagen.Plan, error) { return cudagen.PlanRandom(r, b.options()) })
	return err
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
	k = append(k, 'A', byte(a.Kind), byte(a.Out.Buf.DType()))
	k = appendInt(k, a.Axis)
	k = appendProgram(k, a.In, bufs)
	k = appendLayout(k, &a.Out.Layout)
	out := len(a.In.Inputs)
	k = append(k, align(bufs[out], a.Out.Layout.Offset))
	if a.Kind == backend.Quantize {
		k = appendLayout(k, &a.Scale.Layout)
		k = append(k, align(bufs[out+1], a.Scale.Layout.Offset))
	}
	return appendAliases(k, bufs)
}

func randomKey(k []byte, r *backend.Random, bufs []*Buffer) []byte {
	k = append(k, 'N', byte(r.Out.Buf.DType()), byte(r.Dist))
	k = appendLayout(k, &r.Out.Layout)
	return append(k, align(bufs[0], r.Out.Layout.Offset))
}
