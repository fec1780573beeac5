package attn

import (
	"fmt"
	"math"
	"slices"
	"unsafe"

	"github.com/gocu-dev/gocu"
	"github.com/gocu-dev/gocu/array"
	"github.com/gocu-dev/gocu/kernel"
)

// shape is the shape of attention's operands: q, k, v, o and their
// gradients are (Batch, Heads, Seq, Dim), the logsumexp (Batch, Heads,
// Seq).
type shape struct {
	Batch, Heads, Seq, Dim int
}

func (s shape) bh() int     { return s.Batch * s.Heads }
func (s shape) size() int   { return s.bh() * s.Seq * s.Dim }
func (s shape) dims() []int { return []int{s.Batch, s.Heads, s.Seq, s.Dim} }

// MaxHeads is the most Batch·Heads the kernels take (a grid dimension).
const MaxHeads = 65535

// check reports whether the kernels take s, and scale.
func (s shape) check(op string, scale float64) error {
	switch {
	case s.Dim != 64 && s.Dim != 128:
		return fmt.Errorf("attn: %s: head dimension %d: the kernels take 64 or 128: %w", op, s.Dim, array.ErrShape)
	case s.Batch <= 0 || s.Heads <= 0 || s.Seq <= 0:
		return fmt.Errorf("attn: %s: shape %v: batch, heads and sequence must be positive: %w", op, s.dims(), array.ErrShape)
	case s.bh() > MaxHeads:
		return fmt.Errorf("attn: %s: %d batches times %d heads is more than %d: %w", op, s.Batch, s.Heads, MaxHeads, array.ErrShape)
	case s.size() > math.MaxInt32:
		return fmt.Errorf("attn: %s: shape %v has more than 2³¹ elements: %w", op, s.dims(), array.ErrShape)
	case !(scale > 0) || math.IsInf(scale, 1):
		return fmt.Errorf("attn: %s: scale %v: the kernels take a positive finite scale: %w", op, scale, array.ErrValue)
	}
	return nil
}

// operand is a bfloat16 operand's memory, from its first element, and
// the layout of its heads.
type operand struct {
	buf *gocu.Buffer[kernel.BFloat16]
	lay layout
}

// operands checks the arrays xs, their dtypes dts (float32 ones are
// (B, H, S), the others (B, H, S, D) as the first) and scale, and returns
// the shape, the bfloat16 operands in order, and their device. Free the
// operands' buffers when the kernels are queued.
func operands(op string, names []string, xs []*array.Array, dts []array.DType, scale float64) (shape, []operand, *gocu.Device, error) {
	var s shape
	var dev *gocu.Device
	for i, x := range xs {
		name := names[i]
		if x == nil {
			return s, nil, nil, fmt.Errorf("attn: %s: %s is nil: %w", op, name, array.ErrValue)
		}
		if err := x.Err(); err != nil {
			return s, nil, nil, fmt.Errorf("attn: %s: %s: %w", op, name, err)
		}
		if x.DType() != dts[i] {
			return s, nil, nil, fmt.Errorf("attn: %s: %s is %v, want %v: %w", op, name, x.DType(), dts[i], array.ErrDType)
		}
		sh := x.Shape()
		if i == 0 {
			if len(sh) != 4 {
				return s, nil, nil, fmt.Errorf("attn: %s: %s has shape %v, want (batch, heads, seq, dim): %w", op, name, sh, array.ErrShape)
			}
			s = shape{sh[0], sh[1], sh[2], sh[3]}
			dev = x.Device()
		}
		want := s.dims()
		if dts[i] == array.Float32 {
			want = want[:3]
		}
		if !equal(sh, want) {
			return s, nil, nil, fmt.Errorf("attn: %s: %s has shape %v, want %v (from %s): %w", op, name, sh, want, names[0], array.ErrShape)
		}
		if x.Device() != dev {
			return s, nil, nil, fmt.Errorf("attn: %s: %s is on %v, %s on %v: %w", op, name, x.Device(), names[0], dev, array.ErrDevice)
		}
		if dts[i] == array.Float32 && !x.IsContiguous() {
			return s, nil, nil, fmt.Errorf("attn: %s: %s is a strided view: pass %s.Contiguous(): %w", op, name, name, array.ErrValue)
		}
	}
	if err := s.check(op, scale); err != nil {
		return s, nil, nil, err
	}
	var ops []operand
	for i, x := range xs {
		if dts[i] != array.BFloat16 {
			continue
		}
		o, err := view(x)
		if err != nil {
			for _, o := range ops {
				o.buf.Free()
			}
			return s, nil, nil, fmt.Errorf("attn: %s: %s: %w", op, names[i], err)
		}
		ops = append(ops, o)
	}
	return s, ops, dev, nil
}

// CheckView returns nil if the kernels read or write the bfloat16 array x
// of shape (batch, heads, seq, dim) in place, or an error saying why not
// (pass a copy then): its last axis must be contiguous, its other strides
// non-negative multiples of 8 elements and its data 16-byte aligned, for
// the kernels' 16-byte copies. A transposed view of a (batch, seq, heads,
// dim) array, such as heads split from a projection, qualifies.
func CheckView(x *array.Array) error {
	o, err := view(x)
	if err != nil {
		return err
	}
	o.buf.Free()
	return nil
}

// view returns the operand of x, a bfloat16 array of 4 axes.
func view(x *array.Array) (operand, error) {
	if x == nil || x.Ndim() != 4 || x.DType() != array.BFloat16 {
		return operand{}, fmt.Errorf("attn: want a bfloat16 array of 4 axes: %w", array.ErrValue)
	}
	b, st, err := array.AsStridedBuffer[kernel.BFloat16](x)
	if err != nil {
		return operand{}, err
	}
	bad := func(format string, args ...any) (operand, error) {
		b.Free()
		return operand{}, fmt.Errorf(format+": pass a copy: %w", append(args, array.ErrValue)...)
	}
	sh := x.Shape()
	if st[3] != 1 && sh[3] > 1 {
		return bad("a view with strides %v: the last axis is not contiguous", st)
	}
	for i := range 3 {
		if sh[i] == 1 {
			st[i] = 0 // never stepped over
		}
	}
	for _, v := range st[:3] {
		if v%8 != 0 || v > math.MaxInt32 {
			return bad("a view with strides %v: the kernels take strides that are multiples of 8 elements below 2³¹, for 16-byte aligned rows", st)
		}
	}
	var p uintptr
	if h := b.Host(); h != nil {
		p = uintptr(unsafe.Pointer(unsafe.SliceData(h)))
	} else {
		dp, err := b.DevicePointer()
		if err != nil {
			b.Free()
			return operand{}, err
		}
		p = uintptr(dp)
	}
	if p%16 != 0 {
		return bad("its data starts at an address that is not 16-byte aligned (a view at an offset not a multiple of 8 elements)")
	}
	return operand{b, layout{int32(st[0]), int32(st[1]), int32(st[2])}}, nil
}

// disjoint reports whether no two elements of an output of shape s and
// layout l share memory, as the kernels' plain stores need.
func disjoint(s shape, l layout) bool {
	ax := []struct{ n, st int }{{s.Batch, int(l.B)}, {s.Heads, int(l.H)}, {s.Seq, int(l.S)}}
	slices.SortFunc(ax, func(a, b struct{ n, st int }) int { return a.st - b.st })
	span := s.Dim
	for _, a := range ax {
		if a.n == 1 {
			continue
		}
		if a.st < span {
			return false
		}
		span = a.st*(a.n-1) + span
	}
	return true
}

// like returns a new array for an output of shape s laid out like x: a
// (batch, heads, seq, dim) view of a (batch, seq, heads, dim) array when
// x's heads interleave (its sequence stride is larger than its head
// stride), a contiguous array otherwise.
func like(m *array.Maker, s shape, x operand) *array.Array {
	if x.lay.S > x.lay.H && s.Heads > 1 {
		e := m.Empty(array.BFloat16, s.Batch, s.Seq, s.Heads, s.Dim)
		defer e.Close() // the view holds the memory
		return e.SwapAxes(1, 2)
	}
	return m.Empty(array.BFloat16, s.dims()...)
}

func freeAll(ops []operand) {
	for _, o := range ops {
		o.buf.Free()
	}
}

func equal(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// Forward computes o = softmax(q kᵀ · scale) v for bfloat16 arrays q, k
// and v of shape (batch, heads, seq, dim) with dim 64 or 128, masking the
// keys after each query when causal, and lse, the natural logarithm of
// each row's softmax denominator (float32, (batch, heads, seq)), which
// Backward takes. q, k and v may be strided views that CheckView accepts,
// read in place; o is laid out like q: when q is a transposed view of a
// (batch, seq, heads, dim) array, o is one too, so that
// o.SwapAxes(1, 2).Reshape(batch, seq, heads·dim) needs no copy. The
// arrays must be on one device: a GPU, or the simulator (slowly); scale
// must be positive. The work is queued on the device's default stream;
// errors in the arguments are returned at once, with array's sentinels
// (ErrShape, ErrDType, ErrValue, ErrDevice). With GOCU_ATTN_WGMMA=1 or 2
// (WGMMAEnv), head dimension 128 runs on the warpgroup-MMA kernel on GPUs
// of compute capability 9.0 and on the simulator.
func Forward(q, k, v *array.Array, scale float64, causal bool) (o, lse *array.Array, err error) {
	const op = "Forward"
	bf := array.BFloat16
	s, in, dev, err := operands(op, []string{"q", "k", "v"}, []*array.Array{q, k, v}, []array.DType{bf, bf, bf}, scale)
	if err != nil {
		return nil, nil, err
	}
	defer freeAll(in)
	m := array.On(dev)
	o = like(m, s, in[0])
	lse = m.Empty(array.Float32, s.dims()[:3]...)
	out, err := view(o)
	if err == nil {
		defer out.buf.Free()
		err = forwardStrided(dev, in[0].buf, in[1].buf, in[2].buf, out.buf, lse,
			[4]layout{in[0].lay, in[1].lay, in[2].lay, out.lay}, s, float32(scale), causal, false)
	}
	if err != nil {
		o.Close()
		lse.Close()
		return nil, nil, err
	}
	return o, lse, nil
}

// Backward computes the gradients dq, dk and dv of attention given the
// gradient do of its output: q, k, v, o and do are bfloat16 arrays of
// shape (batch, heads, seq, dim) and lse is float32 (batch, heads, seq),
// o and lse as Forward returned them for the same scale and causal. The
// gradients are bfloat16, accumulated in float32, each laid out like its
// input as Forward lays out o. The bfloat16 arrays may be strided views
// that CheckView accepts; lse must be contiguous. Its requirements and
// errors are Forward's. GOCU_ATTN_WGMMA=1 or 2 selects warpgroup-MMA kernels
// as for Forward; they are deterministic unless GOCU_ATTN_WGMMA_ATOMIC=1
// (WGMMAAtomicEnv) also adds dq's parts with float32 atomics.
func Backward(q, k, v, o, lse, do *array.Array, scale float64, causal bool) (dq, dk, dv *array.Array, err error) {
	const op = "Backward"
	bf := array.BFloat16
	s, in, dev, err := operands(op, []string{"q", "k", "v", "o", "lse", "do"}, []*array.Array{q, k, v, o, lse, do},
		[]array.DType{bf, bf, bf, bf, array.Float32, bf}, scale)
	if err != nil {
		return nil, nil, nil, err
	}
	defer freeAll(in)
	m := array.On(dev)
	dq, dk, dv = like(m, s, in[0]), like(m, s, in[1]), like(m, s, in[2])
	dvec := m.Empty(array.Float32, s.dims()[:3]...)
	var outs []operand
	for _, x := range []*array.Array{dq, dk, dv} {
		var g operand
		if g, err = view(x); err != nil {
			break
		}
		outs = append(outs, g)
	}
	defer freeAll(outs)
	if err == nil {
		ls := [8]layout{in[0].lay, in[1].lay, in[2].lay, in[3].lay, in[4].lay, outs[0].lay, outs[1].lay, outs[2].lay}
		err = backwardStrided(dev, in[0].buf, in[1].buf, in[2].buf, in[3].buf, lse, in[4].buf, dvec,
			outs[0].buf, outs[1].buf, outs[2].buf, ls, s, float32(scale), causal, false)
	}
	dvec.Close() // freed in stream order, after the kernels
	if err != nil {
		dq.Close()
		dk.Close()
		dv.Close()
		return nil, nil, nil, err
	}
	return dq, dk, dv, nil
}

type bf16s = gocu.Slice[kernel.BFloat16]
type f32s = gocu.Slice[float32]

// tiles is the launch of the forward and backward kernels: a block per 64
// rows of each head.
func tiles(s shape, mem int, checked bool) gocu.Config {
	return gocu.Config{Grid: gocu.Dim3{X: int32((s.Seq + tileQ - 1) / tileQ), Y: int32(s.bh())}, Block: gocu.Dim3{X: threads},
		Shared: mem, Checked: checked}
}

// contiguous is the layout of a contiguous (batch, heads, seq, dim) array.
func (s shape) contiguous() layout {
	return layout{int32(s.Heads * s.Seq * s.Dim), int32(s.Seq * s.Dim), int32(s.Dim)}
}

// forward launches the forward kernel for s (checked already) on
// contiguous operands.
func forward(d *gocu.Device, q, k, v, o bf16s, lse f32s, s shape, scale float32, causal, checked bool) error {
	c := s.contiguous()
	return forwardStrided(d, q, k, v, o, lse, [4]layout{c, c, c, c}, s, scale, causal, checked)
}

// forwardStrided launches the forward kernel for s (checked already) on
// q, k, v and o laid out by ls.
func forwardStrided(d *gocu.Device, q, k, v, o bf16s, lse f32s, ls [4]layout, s shape, scale float32, causal, checked bool) error {
	if !disjoint(s, ls[3]) {
		return fmt.Errorf("attn: o's layout %v writes elements over each other: %w", ls[3], array.ErrValue)
	}
	if useWGMMA(d, s) {
		return forwardWGMMA(d, q, k, v, o, lse, ls, s, scale, causal, checked)
	}
	seq, heads := int32(s.Seq), int32(s.Heads)
	if s.Dim == 64 {
		return launchFwd64(d, tiles(s, fwd64Mem, checked), q, k, v, o, lse, ls[0], ls[1], ls[2], ls[3], heads, seq, scale, causal)
	}
	return launchFwd128(d, tiles(s, fwd128Mem, checked), q, k, v, o, lse, ls[0], ls[1], ls[2], ls[3], heads, seq, scale, causal)
}

// backward launches the three backward kernels for s (checked already) on
// contiguous operands, with dvec, float32 of (batch, heads, seq), as
// workspace.
func backward(d *gocu.Device, q, k, v, o bf16s, lse f32s, do bf16s, dvec f32s, dq, dk, dv bf16s, s shape, scale float32, causal, checked bool) error {
	c := s.contiguous()
	return backwardStrided(d, q, k, v, o, lse, do, dvec, dq, dk, dv, [8]layout{c, c, c, c, c, c, c, c}, s, scale, causal, checked)
}

// backwardStrided is backward on operands laid out by ls: q, k, v, o,
// do, dq, dk and dv in order.
func backwardStrided(d *gocu.Device, q, k, v, o bf16s, lse f32s, do bf16s, dvec f32s, dq, dk, dv bf16s, ls [8]layout, s shape, scale float32, causal, checked bool) error {
	for i, name := range []string{"dq", "dk", "dv"} {
		if !disjoint(s, ls[5+i]) {
			return fmt.Errorf("attn: %s's layout %v writes elements over each other: %w", name, ls[5+i], array.ErrValue)
		}
	}
	ql, kl, vl, ol, dol, dql, dkl, dvl := ls[0], ls[1], ls[2], ls[3], ls[4], ls[5], ls[6], ls[7]
	rows := s.bh() * s.Seq
	seq, heads := int32(s.Seq), int32(s.Heads)
	prep := gocu.Config{Grid: gocu.Dim3{X: int32((rows + warps - 1) / warps)}, Block: gocu.Dim3{X: threads}, Checked: checked}
	if err := launchBwdPrep(d, prep, o, do, dvec, ol, dol, heads, seq, int32(rows), int32(s.Dim)); err != nil {
		return err
	}
	if useWGMMA(d, s) {
		if useAtomic() {
			return backwardAllWG(d, q, k, v, lse, do, dvec, dq, dk, dv, ls, s, scale, causal, checked)
		}
		return backwardWG(d, q, k, v, lse, do, dvec, dq, dk, dv, ls, s, scale, causal, checked)
	}
	if s.Dim == 64 {
		if err := launchBwdKV64(d, tiles(s, bwd64Mem, checked), q, k, v, do, lse, dvec, dk, dv, ql, kl, vl, dol, dkl, dvl, heads, seq, scale, causal); err != nil {
			return err
		}
		return launchBwdQ64(d, tiles(s, bwd64Mem, checked), q, k, v, do, lse, dvec, dq, ql, kl, vl, dol, dql, heads, seq, scale, causal)
	}
	if err := launchBwdKV128(d, tiles(s, bwd128Mem, checked), q, k, v, do, lse, dvec, dk, dv, ql, kl, vl, dol, dkl, dvl, heads, seq, scale, causal); err != nil {
		return err
	}
	return launchBwdQ128(d, tiles(s, bwd128Mem, checked), q, k, v, do, lse, dvec, dq, ql, kl, vl, dol, dql, heads, seq, scale, causal)
}
