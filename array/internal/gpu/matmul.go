package gpu

import (
	"fmt"

	"github.com/gocu-dev/gocu/array/internal/backend"
	"github.com/gocu-dev/gocu/array/internal/cudagen"
	"github.com/gocu-dev/gocu/cublas"
)

// workspaceBytes is cuBLAS's workspace, from the caching allocator: 32 MiB,
// what PyTorch gives cuBLAS on Hopper (CUBLAS_WORKSPACE_CONFIG :4096:8), so
// that no GEMM is slowed by a small workspace and none allocates.
const workspaceBytes = 32 << 20

// maxBatch is the most matrices one strided batched call computes.
const maxBatch = 65535

// handle returns the device's cuBLAS handle, made on first use, bound to
// the stream with its workspace.
func (b *Backend) handle() (*cublas.Handle, error) {
	b.blasOnce.Do(func() {
		ws, err := b.dev.AllocOn(b.stream, workspaceBytes)
		if err != nil {
			b.blasErr = err
			return
		}
		b.blasErr = b.dev.WithContext(func() error {
			h, err := cublas.Create()
			if err != nil {
				return err
			}
			// SetStream resets the workspace to cuBLAS's own, so it
			// comes first.
			if err := h.SetStream(b.stream.Handle()); err != nil {
				_ = h.Destroy()
				return err
			}
			if err := h.SetWorkspace(uint64(ws.Ptr()), workspaceBytes); err != nil {
				_ = h.Destroy()
				return err
			}
			b.blas = h
			return nil
		})
		if b.blasErr != nil {
			_ = ws.Free()
			return
		}
		b.blasWS = ws
	})
	return b.blas, b.blasErr
}

// batchDim is one (merged) batch dimension: its length and the element
// strides of A, B and C along it.
type batchDim struct {
	n          int
	sa, sb, sc int
}

// MatMul implements backend.Backend: cuBLAS for floats, a generated tiled
// kernel for integers and bool.
func (b *Backend) MatMul(m *backend.MatMul) error {
	if err := b.failed(); err != nil {
		return err
	}
	var arr [3]*Buffer
	bufs, err := b.operands(arr[:0], nil, m.A.Buf, m.B.Buf, m.C.Buf)
	if err != nil {
		return err
	}
	dt := m.C.Buf.DType()
	in := m.A.Buf.DType()
	nb := backend.Size(m.Batch)
	if nb == 0 || m.M == 0 || m.N == 0 {
		return nil
	}
	if in == backend.Int8 || in.IsFloat8() {
		return b.ltMatMul(m, bufs)
	}
	if !dt.IsFloat() && !in.IsLowp() && !dt.IsComplex() {
		return b.intMatMul(m, bufs)
	}
	if m.K == 0 { // an empty sum: C = 0
		v, err := bufs[2].view(m.C.Offset, nb*m.M*m.N)
		if err != nil {
			return err
		}
		return b.note(v.MemsetD8Async(0, b.stream))
	}
	h, err := b.handle()
	if err != nil {
		return fmt.Errorf("gpu: cuBLAS: %w", err)
	}

	// Row-major C = A·B is column-major Cᵀ = Bᵀ·Aᵀ: cuBLAS's first
	// operand is B, whose row-major storage is Bᵀ column-major (NoTrans),
	// or, for a transposed view (column-major storage), B itself (Trans).
	// float16 and bfloat16 operands accumulate in float32 (Compute32F).
	t, ct := cublas.R32F, cublas.Compute32F
	switch {
	case dt == backend.Float64:
		t, ct = cublas.R64F, cublas.Compute64F
	case dt == backend.Complex64:
		t = cublas.C32F // Cgemm: full FP32 even where TF32 is allowed
	case dt == backend.Complex128:
		t, ct = cublas.C64F, cublas.Compute64F
	case in == backend.Float16:
		t = cublas.R16F
	case in == backend.BFloat16:
		t = cublas.R16BF
	case m.Precision == backend.TF32:
		ct = cublas.Compute32FFastTF32
	}
	tc := blasType(dt)
	opA, opB := cublas.NoTrans, cublas.NoTrans
	if m.A.Trans() {
		opA = cublas.Trans
	}
	if m.B.Trans() {
		opB = cublas.Trans
	}
	g := cublas.GemmArgs{
		TransA: opB, TransB: opA,
		M: m.N, N: m.M, K: m.K,
		Alpha: 1, Beta: 0,
		TypeA: t, LDA: m.B.LD(),
		TypeB: t, LDB: m.A.LD(),
		TypeC: tc, LDC: m.N,
		Compute: ct, Algo: cublas.GemmDefault,
	}
	size, sizeC := uint64(in.Size()), uint64(dt.Size())
	pa := bufs[0].ptr + uint64(m.A.Offset)*size
	pb := bufs[1].ptr + uint64(m.B.Offset)*size
	pc := bufs[2].ptr + uint64(m.C.Offset)*sizeC

	dims := batchDims(m)
	// The innermost batch dimension goes to one strided batched call when
	// cuBLAS can take its strides (not negative); the others are looped.
	var inner batchDim
	if k := len(dims); k > 0 && dims[k-1].sa >= 0 && dims[k-1].sb >= 0 {
		inner, dims = dims[k-1], dims[:k-1]
	} else {
		inner = batchDim{n: 1, sc: m.M * m.N}
	}
	idx := make([]int, len(dims))
	return b.dev.WithContext(func() error {
		for {
			oa, ob, oc := 0, 0, 0
			for d, i := range idx {
				oa += i * dims[d].sa
				ob += i * dims[d].sb
				oc += i * dims[d].sc
			}
			for start := 0; start < inner.n; start += maxBatch {
				cnt := min(maxBatch, inner.n-start)
				g.A = pb + uint64((ob+start*inner.sb)*int(size))
				g.B = pa + uint64((oa+start*inner.sa)*int(size))
				g.C = pc + uint64((oc+start*inner.sc)*int(sizeC))
				var err error
				if cnt == 1 {
					err = h.GemmEx(g)
				} else {
					g.StrideA, g.StrideB, g.StrideC = int64(inner.sb), int64(inner.sa), int64(inner.sc)
					g.Batch = cnt
					err = h.GemmStridedBatchedEx(g)
				}
				if err != nil {
					return b.note(err)
				}
			}
			// Next outer index (odometer).
			d := len(idx) - 1
			for ; d >= 0; d-- {
				idx[d]++
				if idx[d] < dims[d].n {
					break
				}
				idx[d] = 0
			}
			if d < 0 {
				return nil
			}
		}
	})
}

// batchDims returns the batch dimensions of a product with size-1
// dimensions dropped and neighbours merged where all three operands step
// through them evenly (C is contiguous over the batch).
func batchDims(m *backend.MatMul) []batchDim {
	var dims []batchDim
	sc := m.M * m.N
	scs := make([]int, len(m.Batch))
	for d := len(m.Batch) - 1; d >= 0; d-- {
		scs[d] = sc
		sc *= m.Batch[d]
	}
	for d, n := range m.Batch {
		if n == 1 {
			continue
		}
		cur := batchDim{n: n, sa: m.A.BatchStrides[d], sb: m.B.BatchStrides[d], sc: scs[d]}
		if k := len(dims); k > 0 {
			p := &dims[k-1]
			if p.sa == cur.sa*n && p.sb == cur.sb*n && p.sc == cur.sc*n {
				p.n *= n
				p.sa, p.sb, p.sc = cur.sa, cur.sb, cur.sc
				continue
			}
		}
		dims = append(dims, cur)
	}
	return dims
}

// intMatMul runs the generated integer (or bool) product.
func (b *Backend) intMatMul(m *backend.MatMul, bufs []*Buffer) error {
	var ka [keySize]byte
	k := matmulKey(ka[:0], m, bufs)
	c := call{bufs: bufs}
	_, err := b.execute(k, &c, func() (*cudagen.Plan, error) { return cudagen.PlanIntMatMul(m, b.options()) })
	return err
}

func matmulKey(k []byte, m *backend.MatMul, bufs []*Buffer) []byte {
	k = append(k, 'M', byte(m.C.Buf.DType()), byte(m.A.Buf.DType()))
	k = appendInt(k, m.M)
	k = appendInt(k, m.N)
	k = appendInt(k, m.K)
	k = appendInt(k, len(m.Batch))
	for _, n := range m.Batch {
		k = appendInt(k, n)
	}
	for _, x := range [...]*backend.Matrix{&m.A, &m.B, &m.C} {
		k = appendInt(k, x.Offset)
		k = appendInt(k, x.RowStride)
		k = appendInt(k, x.ColStride)
		k = appendInt(k, len(x.BatchStrides))
		for _, s := range x.BatchStrides {
			k = appendInt(k, s)
		}
	}
	return appendAliases(k, bufs)
}
