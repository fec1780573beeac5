package cpu

import (
	"math"

	"github.com/gocu-dev/gocu/array/internal/backend"
	"github.com/gocu-dev/gocu/lowp"
)

// AxisOp implements backend.Backend: the axis is moved last, each row is
// evaluated into a float64 buffer, and the row's maximum is subtracted
// before exponentiating (a row whose maximum is infinite uses shift 0, so
// LogSumExp of all -Inf is -Inf and Softmax of it NaN, as SciPy).
func (b *Backend) AxisOp(op *backend.AxisOp) error {
	in := op.In
	r := len(in.Shape)
	perm := make([]int, 0, r)
	for d := 0; d < r; d++ {
		if d != op.Axis {
			perm = append(perm, d)
		}
	}
	perm = append(perm, op.Axis)
	if op.Axis != r-1 && hasIota(in) {
		q, free, err := b.materialize(in)
		if err != nil {
			return err
		}
		defer free()
		in = q
	}
	pin := permuteProgram(in, perm)
	L := in.Shape[op.Axis]
	rows := backend.Size(pin.Shape) / max(L, 1)
	if L == 0 {
		rows = backend.Size(pin.Shape[:r-1])
	}
	if rows == 0 || (L == 0 && op.Kind != backend.LogSumExp) {
		return nil
	}
	outDT := op.Out.Buf.DType()
	ob := asBuffer(op.Out.Buf)
	var ol strided
	if op.Kind == backend.LogSumExp {
		ol = strided{op.Out.Layout.Shape, op.Out.Layout.Strides, op.Out.Layout.Offset}
	} else {
		pl := op.Out.Layout.Permute(perm)
		ol = strided{pl.Shape, pl.Strides, pl.Offset}
	}
	pl := newPlan(pin)
	dt := in.Result()
	grain := max(1, serialBelow/max(L, 1))
	b.parallel(rows, grain, 1, func(lo, hi int) {
		st := pl.newState(blockSize)
		row := make([]float64, L)
		res := makeVec(outDT, max(L, 1))
		for k := lo; k < hi; k++ {
			for j := 0; j < L; j += blockSize {
				m := min(blockSize, L-j)
				v := st.block(k*L+j, m, nil)
				if dt == backend.Float32 {
					castNum(row[j:j+m], v.f32)
				} else {
					copy(row[j:j+m], v.f64)
				}
			}
			if op.Kind == backend.Quantize {
				sc := quantizeRow(row, float32(op.QMax), res.sub(outDT, 0, L), outDT)
				scatterVec(outDT, ob, res.sub(outDT, 0, L), &ol, k*L)
				sb := asBuffer(op.Scale.Buf)
				sb.f32[op.Scale.Layout.Offset+k] = sc
				continue
			}
			mx := math.Inf(-1)
			for _, x := range row {
				if x > mx || x != x {
					mx = x
					if x != x {
						break
					}
				}
			}
			shift := mx
			if math.IsInf(mx, 0) {
				shift = 0
			}
			s := 0.0
			if op.Kind == backend.Softmax {
				for j, x := range row {
					e := math.Exp(x - shift)
					row[j] = e
					s += e
				}
			} else {
				for _, x := range row {
					s += math.Exp(x - shift)
				}
			}
			switch op.Kind {
			case backend.LogSumExp:
				v := shift + math.Log(s)
				if L == 0 {
					v = math.Inf(-1)
				}
				if outDT == backend.Float32 {
					res.f32[0] = float32(v)
				} else {
					res.f64[0] = v
				}
				scatterVec(outDT, ob, res.sub(outDT, 0, 1), &ol, k)
				continue
			case backend.Softmax:
				inv := 1 / s
				for j := range row {
					row[j] *= inv
				}
			case backend.LogSoftmax:
				ls := shift + math.Log(s)
				for j, x := range row {
					row[j] = x - ls
				}
			}
			if outDT == backend.Float32 {
				castNum(res.f32[:L], row)
			} else {
				copy(res.f64, row)
			}
			scatterVec(outDT, ob, res.sub(outDT, 0, L), &ol, k*L)
		}
	})
	return nil
}

// quantizeRow quantizes one row (float32 values, held exactly as float64)
// into q (int8 or an 8-bit float) and returns its scale, as
// backend.AxisOp defines Quantize: all in float32.
func quantizeRow(row []float64, qmax float32, q vec, dt backend.DType) float32 {
	var m float32
	for _, v := range row {
		if a := float32(math.Abs(v)); a > m || a != a {
			m = a
		}
	}
	scale := m / qmax
	switch {
	case scale == 0:
		scale = 1
	case m != m:
		scale = math.Float32frombits(0x7fffffff) // the canonical NaN, whichever the row had
	}
	for j, v := range row {
		y := float32(v) / scale
		switch dt {
		case backend.Int8:
			r := math.RoundToEven(float64(y))
			switch {
			case r != r:
				q.i8[j] = 0
			case r <= -128:
				q.i8[j] = -128
			case r >= 127:
				q.i8[j] = 127
			default:
				q.i8[j] = int8(r)
			}
		case backend.Float8E4M3:
			q.e4m3[j] = lowp.Float8E4M3FromFloat32(y)
		case backend.Float8E5M2:
			q.e5m2[j] = lowp.Float8E5M2FromFloat32(y)
		}
	}
	return scale
}
