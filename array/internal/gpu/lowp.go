package gpu

import (
	"errors"
	"fmt"
	"math/bits"
	"sync"

	"github.com/gocu-dev/gocu/array/internal/backend"
	"github.com/gocu-dev/gocu/cublas"
)

// Low-precision matrix products. float16 and bfloat16 go through
// cublasGemmEx with float32 accumulation (MatMul in matmul.go); int8 and
// the 8-bit floats through cuBLASLt, whose tensor-core kernels take only
// one layout: in row-major terms A row-major and B column-major (a
// transposed view of a contiguous N×K matrix), K and N multiples of
// LtMultiple, the matrices' first elements aligned. Package array arranges
// that (with zero padding where K or N is not a multiple) before it calls
// the backend; an int8 product that still does not fit, or that cuBLASLt
// has no algorithm for, runs the generated integer kernel instead.

// LtMultiple is what K and N of an int8 (4) or 8-bit float (16) product
// must be multiples of for cuBLASLt's kernels.
func LtMultiple(in backend.DType) int {
	if in == backend.Int8 {
		return 4
	}
	return 16
}

// FP8Check reports whether a GPU of compute capability major.minor has FP8
// tensor cores (8.9, Ada, and later); its error wraps
// backend.ErrUnsupported.
func FP8Check(major, minor int) error {
	if major*10+minor < 89 {
		return fmt.Errorf("%w: FP8 matrix products need compute capability 8.9 or later (Ada, Hopper); this GPU is sm_%d%d",
			backend.ErrUnsupported, major, minor)
	}
	return nil
}

// SupportsFP8 reports whether the GPU has FP8 tensor cores.
func (b *Backend) SupportsFP8() error {
	major, minor := b.dev.ComputeCapability()
	return FP8Check(major, minor)
}

// blasType is the cudaDataType of a dtype.
func blasType(dt backend.DType) cublas.DataType {
	switch dt {
	case backend.Float64:
		return cublas.R64F
	case backend.Complex64:
		return cublas.C32F
	case backend.Complex128:
		return cublas.C64F
	case backend.Float16:
		return cublas.R16F
	case backend.BFloat16:
		return cublas.R16BF
	case backend.Int8:
		return cublas.R8I
	case backend.Int32:
		return cublas.R32I
	case backend.Float8E4M3:
		return cublas.R8FE4M3
	case backend.Float8E5M2:
		return cublas.R8FE5M2
	}
	return cublas.R32F
}

// ltState is the device's cuBLASLt handle and its plans, by shape.
type ltState struct {
	once  sync.Once
	h     *cublas.LtHandle
	err   error
	mu    sync.Mutex // serialises plan lookups and runs
	plans map[ltKey]*cublas.LtPlan
}

// ltKey is everything an LtPlan depends on.
type ltKey struct {
	in, inB, out           backend.DType
	m, n, k, lda, ldb      int
	batch                  int
	sa, sb, sc             int64
	alignA, alignB, alignC int
}

// maxLtPlans bounds the plan cache; past it the plans are dropped.
const maxLtPlans = 256

var ltStates sync.Map // *Backend -> *ltState

func (b *Backend) ltState() *ltState {
	v, _ := ltStates.LoadOrStore(b, &ltState{})
	return v.(*ltState)
}

// ltHandle returns the device's cuBLASLt handle, made on first use.
func (b *Backend) ltHandle() (*cublas.LtHandle, *ltState, error) {
	st := b.ltState()
	st.once.Do(func() {
		st.err = b.dev.WithContext(func() error {
			h, err := cublas.LtCreate()
			st.h = h
			return err
		})
		st.plans = map[ltKey]*cublas.LtPlan{}
	})
	return st.h, st, st.err
}

// alignOf is the alignment of a device address, up to 256 bytes.
func alignOf(p uint64) int {
	if p == 0 {
		return 256
	}
	return min(1<<bits.TrailingZeros64(p), 256)
}

// LtLayout reports whether cuBLASLt's int8 or FP8 kernels take the
// product's operands as they are (see LtMultiple), and why not.
func LtLayout(m *backend.MatMul) error {
	in := m.A.Buf.DType()
	mul := LtMultiple(in)
	switch {
	case m.A.Trans():
		return fmt.Errorf("gpu: %v product: A must be row-major (got a transposed view)", in)
	case !m.B.Trans() && m.N > 1:
		return fmt.Errorf("gpu: %v product: B must be column-major, a transposed view of an N×K matrix", in)
	case m.K%mul != 0 || m.N%mul != 0:
		return fmt.Errorf("gpu: %v product: K = %d and N = %d must be multiples of %d", in, m.K, m.N, mul)
	case m.A.LD()%mul != 0 || m.B.LD()%mul != 0:
		return fmt.Errorf("gpu: %v product: leading dimensions %d and %d must be multiples of %d", in, m.A.LD(), m.B.LD(), mul)
	}
	return nil
}

// ErrLtLayout marks an int8 or FP8 product whose layout cuBLASLt cannot
// take (package array pads and copies operands so that it never sees it).
var ErrLtLayout = errors.New("gpu: layout not taken by cuBLASLt")

// ltMatMul runs an int8 or 8-bit float product through cuBLASLt.
func (b *Backend) ltMatMul(m *backend.MatMul, bufs []*Buffer) error {
	in, out := m.A.Buf.DType(), m.C.Buf.DType() // B may be the other 8-bit float
	fp8 := in.IsFloat8()
	if fp8 {
		if err := b.SupportsFP8(); err != nil {
			return err
		}
	}
	if m.K == 0 { // an empty sum: C = 0
		v, err := bufs[2].view(m.C.Offset, backend.Size(m.Batch)*m.M*m.N)
		if err != nil {
			return err
		}
		return b.note(v.MemsetD8Async(0, b.stream))
	}
	if err := LtLayout(m); err != nil {
		if in == backend.Int8 {
			return b.intMatMul(m, bufs)
		}
		return fmt.Errorf("%w: %v", ErrLtLayout, err)
	}
	var sa, sb uint64 // 0: no scale (cuBLASLt takes a null scale pointer as 1)
	for i, s := range []backend.Operand{m.ScaleA, m.ScaleB} {
		if s.Buf == nil {
			continue
		}
		g, err := b.buf(s.Buf)
		if err != nil {
			return err
		}
		p := g.ptr + uint64(s.Layout.Offset*4)
		if i == 0 {
			sa = p
		} else {
			sb = p
		}
	}
	if _, err := b.handle(); err != nil { // the workspace
		return fmt.Errorf("gpu: cuBLAS: %w", err)
	}
	lt, st, err := b.ltHandle()
	if err != nil {
		return fmt.Errorf("gpu: cuBLASLt: %w", err)
	}
	size, sizeC := uint64(in.Size()), uint64(out.Size())
	pa := bufs[0].ptr + uint64(m.A.Offset)*size
	pb := bufs[1].ptr + uint64(m.B.Offset)*size
	pc := bufs[2].ptr + uint64(m.C.Offset)*sizeC
	dims := batchDims(m)
	var inner batchDim
	if k := len(dims); k > 0 && dims[k-1].sa >= 0 && dims[k-1].sb >= 0 {
		inner, dims = dims[k-1], dims[:k-1]
	} else {
		inner = batchDim{n: 1, sc: m.M * m.N}
	}
	// Row-major C = A·B is column-major Cᵀ = Bᵀ·Aᵀ: cuBLASLt's A is our B,
	// stored column-major K×N (ld = B's column stride) and transposed; its
	// B is our A, stored column-major K×M (ld = A's row stride).
	desc := cublas.LtMatmul{
		TransA: cublas.Trans, TransB: cublas.NoTrans,
		M: m.N, N: m.M, K: m.K,
		TypeA: blasType(m.B.Buf.DType()), TypeB: blasType(in), TypeC: blasType(out), TypeD: blasType(out),
		LDA: m.B.LD(), LDB: m.A.LD(), LDC: m.N, LDD: m.N,
		Compute: cublas.Compute32F, ScaleType: cublas.R32F,
		WorkspaceBytes: workspaceBytes,
	}
	if in == backend.Int8 {
		desc.Compute, desc.ScaleType = cublas.Compute32I, cublas.R32I
	}
	if inner.n > 1 {
		desc.Batch = inner.n
		desc.StrideA, desc.StrideB = int64(inner.sb), int64(inner.sa)
		desc.StrideC, desc.StrideD = int64(inner.sc), int64(inner.sc)
	}
	idx := make([]int, len(dims))
	st.mu.Lock()
	err = b.dev.WithContext(func() error {
		for {
			oa, ob, oc := 0, 0, 0
			for d, i := range idx {
				oa += i * dims[d].sa
				ob += i * dims[d].sb
				oc += i * dims[d].sc
			}
			A := pb + uint64(ob)*size
			B := pa + uint64(oa)*size
			C := pc + uint64(oc)*sizeC
			d := desc
			// Every matrix of a batch must be as aligned as the plan says.
			d.Align = [4]int{alignOf(A | uint64(d.StrideA)*size), alignOf(B | uint64(d.StrideB)*size),
				alignOf(C | uint64(d.StrideC)*sizeC), alignOf(C | uint64(d.StrideD)*sizeC)}
			key := ltKey{in: in, inB: m.B.Buf.DType(), out: out, m: d.M, n: d.N, k: d.K, lda: d.LDA, ldb: d.LDB, batch: d.Batch,
				sa: d.StrideA, sb: d.StrideB, sc: d.StrideC, alignA: d.Align[0], alignB: d.Align[1], alignC: d.Align[2]}
			p := st.plans[key]
			if p == nil {
				var err error
				if p, err = lt.Plan(d); err != nil {
					return err
				}
				if len(st.plans) >= maxLtPlans {
					for k, old := range st.plans {
						old.Destroy()
						delete(st.plans, k)
					}
				}
				st.plans[key] = p
			}
			if err := p.Run(cublas.LtArgs{A: A, B: B, C: C, D: C, ScaleA: sa, ScaleB: sb, Alpha: 1, Beta: 0,
				Workspace: uint64(b.blasWS.Ptr()), WorkspaceBytes: workspaceBytes, Stream: b.stream.Handle()}); err != nil {
				return b.note(err)
			}
			d0 := len(idx) - 1
			for ; d0 >= 0; d0-- {
				idx[d0]++
				if idx[d0] < dims[d0].n {
					break
				}
				idx[d0] = 0
			}
			if d0 < 0 {
				return nil
			}
		}
	})
	st.mu.Unlock()
	if err != nil && in == backend.Int8 && errors.Is(err, cublas.StatusNotSupported) {
		return b.intMatMul(m, bufs) // no IMMA algorithm: the generated kernel
	}
	return err
}
