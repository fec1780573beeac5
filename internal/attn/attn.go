package attn

import (
	"fmt"
	"math"
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

// operands checks the arrays xs, their dtypes dts (float32 ones are
// (B, H, S), the others (B, H, S, D) as the first) and scale, and returns
// the shape and their device.
func operands(op string, names []string, xs []*array.Array, dts []array.DType, scale float64) (shape, *gocu.Device, error) {
	var s shape
	var dev *gocu.Device
	for i, x := range xs {
		name := names[i]
		if x == nil {
			return s, nil, fmt.Errorf("attn: %s: %s is nil: %w", op, name, array.ErrValue)
		}
		if err := x.Err(); err != nil {
			return s, nil, fmt.Errorf("attn: %s: %s: %w", op, name, err)
		}
		if x.DType() != dts[i] {
			return s, nil, fmt.Errorf("attn: %s: %s is %v, want %v: %w", op, name, x.DType(), dts[i], array.ErrDType)
		}
		sh := x.Shape()
		if i == 0 {
			if len(sh) != 4 {
				return s, nil, fmt.Errorf("attn: %s: %s has shape %v, want (batch, heads, seq, dim): %w", op, name, sh, array.ErrShape)
			}
			s = shape{sh[0], sh[1], sh[2], sh[3]}
			dev = x.Device()
		}
		want := s.dims()
		if dts[i] == array.Float32 {
			want = want[:3]
		}
		if !equal(sh, want) {
			return s, nil, fmt.Errorf("attn: %s: %s has shape %v, want %v (from %s): %w", op, name, sh, want, names[0], array.ErrShape)
		}
		if x.Device() != dev {
			return s, nil, fmt.Errorf("attn: %s: %s is on %v, %s on %v: %w", op, name, x.Device(), names[0], dev, array.ErrDevice)
		}
		if !x.IsContiguous() {
			return s, nil, fmt.Errorf("attn: %s: %s is a strided view: pass %s.Contiguous(): %w", op, name, name, array.ErrValue)
		}
	}
	if err := s.check(op, scale); err != nil {
		return s, nil, err
	}
	for i, x := range xs {
		if dts[i] == array.BFloat16 {
			if err := aligned(x); err != nil {
				return s, nil, fmt.Errorf("attn: %s: %s: %w", op, names[i], err)
			}
		}
	}
	return s, dev, nil
}

// aligned checks that x's data starts 16 bytes aligned, as the kernels'
// 16-byte copies need: a view that starts at an element offset not a
// multiple of 8 does not.
func aligned(x *array.Array) error {
	b := array.AsBuffer[kernel.BFloat16](x)
	defer b.Free()
	if err := b.Err(); err != nil {
		return err
	}
	var p uintptr
	if h := b.Host(); h != nil {
		p = uintptr(unsafe.Pointer(unsafe.SliceData(h)))
	} else {
		dp, err := b.DevicePointer()
		if err != nil {
			return err
		}
		p = uintptr(dp)
	}
	if p%16 != 0 {
		return fmt.Errorf("its data starts at an address that is not 16-byte aligned (a view at an offset not a multiple of 8 elements): pass a copy: %w", array.ErrValue)
	}
	return nil
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
// Backward takes. The arrays must be contiguous and on one device: a GPU,
// or the simulator (slowly); scale must be positive. The work is queued on
// the device's default stream; errors in the arguments are returned at
// once, with array's sentinels (ErrShape, ErrDType, ErrValue, ErrDevice).
func Forward(q, k, v *array.Array, scale float64, causal bool) (o, lse *array.Array, err error) {
	const op = "Forward"
	bf := array.BFloat16
	s, dev, err := operands(op, []string{"q", "k", "v"}, []*array.Array{q, k, v}, []array.DType{bf, bf, bf}, scale)
	if err != nil {
		return nil, nil, err
	}
	m := array.On(dev)
	o = m.Empty(bf, s.dims()...)
	lse = m.Empty(array.Float32, s.dims()[:3]...)
	if err := forward(dev, q, k, v, o, lse, s, float32(scale), causal, false); err != nil {
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
// gradients are bfloat16, accumulated in float32. Its requirements and
// errors are Forward's.
func Backward(q, k, v, o, lse, do *array.Array, scale float64, causal bool) (dq, dk, dv *array.Array, err error) {
	const op = "Backward"
	bf := array.BFloat16
	s, dev, err := operands(op, []string{"q", "k", "v", "o", "lse", "do"}, []*array.Array{q, k, v, o, lse, do},
		[]array.DType{bf, bf, bf, bf, array.Float32, bf}, scale)
	if err != nil {
		return nil, nil, nil, err
	}
	m := array.On(dev)
	dq, dk, dv = m.Empty(bf, s.dims()...), m.Empty(bf, s.dims()...), m.Empty(bf, s.dims()...)
	dvec := m.Empty(array.Float32, s.dims()[:3]...)
	err = backward(dev, q, k, v, o, lse, do, dvec, dq, dk, dv, s, float32(scale), causal, false)
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

// forward launches the forward kernel for s (checked already).
func forward(d *gocu.Device, q, k, v, o bf16s, lse f32s, s shape, scale float32, causal, checked bool) error {
	seq := int32(s.Seq)
	if s.Dim == 64 {
		return launchFwd64(d, tiles(s, fwd64Mem, checked), q, k, v, o, lse, seq, scale, causal)
	}
	return launchFwd128(d, tiles(s, fwd128Mem, checked), q, k, v, o, lse, seq, scale, causal)
}

// backward launches the three backward kernels for s (checked already),
// with dvec, float32 of (batch, heads, seq), as workspace.
func backward(d *gocu.Device, q, k, v, o bf16s, lse f32s, do bf16s, dvec f32s, dq, dk, dv bf16s, s shape, scale float32, causal, checked bool) error {
	rows := s.bh() * s.Seq
	prep := gocu.Config{Grid: gocu.Dim3{X: int32((rows + warps - 1) / warps)}, Block: gocu.Dim3{X: threads}, Checked: checked}
	if err := launchBwdPrep(d, prep, o, do, dvec, int32(rows), int32(s.Dim)); err != nil {
		return err
	}
	seq := int32(s.Seq)
	if s.Dim == 64 {
		if err := launchBwdKV64(d, tiles(s, bwd64Mem, checked), q, k, v, do, lse, dvec, dk, dv, seq, scale, causal); err != nil {
			return err
		}
		return launchBwdQ64(d, tiles(s, bwd64Mem, checked), q, k, v, do, lse, dvec, dq, seq, scale, causal)
	}
	if err := launchBwdKV128(d, tiles(s, bwd128Mem, checked), q, k, v, do, lse, dvec, dk, dv, seq, scale, causal); err != nil {
		return err
	}
	return launchBwdQ128(d, tiles(s, bwd128Mem, checked), q, k, v, do, lse, dvec, dq, seq, scale, causal)
}
