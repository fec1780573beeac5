package array

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/gocu-dev/gocu/array/internal/gpu"

	"github.com/gocu-dev/gocu/array/internal/backend"
	"github.com/gocu-dev/gocu/array/internal/cpu"
	"github.com/gocu-dev/gocu/lowp"
)

// poisonBackend fills every new buffer with garbage (NaN, 0xA5 bytes,
// true) so that an element an operation fails to write shows up as wrong,
// and validates every program it is asked to run.
type poisonBackend struct {
	backend.Backend
	t testing.TB
}

func (p poisonBackend) Alloc(dt backend.DType, n int) (backend.Buffer, error) {
	b, err := p.Backend.Alloc(dt, n)
	if err != nil || n == 0 {
		return b, err
	}
	var src any
	switch dt {
	case backend.Float32:
		s := make([]float32, n)
		for i := range s {
			s[i] = float32(math.NaN())
		}
		src = s
	case backend.Float64:
		s := make([]float64, n)
		for i := range s {
			s[i] = math.NaN()
		}
		src = s
	case backend.Int32:
		s := make([]int32, n)
		for i := range s {
			s[i] = -0x5a5a5a5b
		}
		src = s
	case backend.Int64:
		s := make([]int64, n)
		for i := range s {
			s[i] = -0x5a5a5a5a5a5a5a5b
		}
		src = s
	case backend.Uint8:
		s := make([]uint8, n)
		for i := range s {
			s[i] = 0xa5
		}
		src = s
	case backend.Bool:
		s := make([]bool, n)
		for i := range s {
			s[i] = true
		}
		src = s
	case backend.Int8:
		s := make([]int8, n)
		for i := range s {
			s[i] = -0x5b
		}
		src = s
	case backend.Int16:
		src = fillSlice(n, int16(-0x5a5b))
	case backend.Uint16:
		src = fillSlice(n, uint16(0xa5a5))
	case backend.Uint32:
		src = fillSlice(n, uint32(0xa5a5a5a5))
	case backend.Uint64:
		src = fillSlice(n, uint64(0xa5a5a5a5a5a5a5a5))
	case backend.Float16:
		src = fillSlice(n, lowp.Float16FromBits(0x7e01)) // a NaN no conversion makes
	case backend.BFloat16:
		src = fillSlice(n, lowp.BFloat16FromBits(0x7fa5))
	case backend.Float8E4M3:
		src = fillSlice(n, lowp.Float8E4M3FromBits(0xff))
	case backend.Float8E5M2:
		src = fillSlice(n, lowp.Float8E5M2FromBits(0x7d))
	case backend.Complex64, backend.Complex128:
		return b, poisonComplex(p.Backend, b)
	}
	return b, p.Backend.Write(b, 0, src)
}

func (p poisonBackend) Eval(prog *backend.Program, out backend.Operand) error {
	if err := prog.Validate(); err != nil {
		p.t.Errorf("invalid program %v: %v", prog, err)
	}
	if prog.Result() != out.Buf.DType() {
		p.t.Errorf("program %v produces %v into a %v buffer", prog, prog.Result(), out.Buf.DType())
	}
	return p.Backend.Eval(prog, out)
}

func (p poisonBackend) Reduce(r *backend.Reduction) error {
	if err := r.In.Validate(); err != nil {
		p.t.Errorf("invalid reduction input %v: %v", r.In, err)
	}
	return p.Backend.Reduce(r)
}

func fillSlice[T any](n int, v T) []T {
	s := make([]T, n)
	for i := range s {
		s[i] = v
	}
	return s
}

// backendCase is one engine the shared op tables run on: the CPU backend
// (parallel and serial) and the CUDA backend, which skips without a GPU.
type backendCase struct {
	name string
	dev  func(t testing.TB) *Maker
}

var backendCases = []backendCase{
	{"cpu", func(t testing.TB) *Maker {
		return &Maker{be: poisonBackend{cpu.New(64 << 20), t}}
	}},
	{"cpu-serial", func(t testing.TB) *Maker {
		b := cpu.New(0)
		b.SetWorkers(1)
		return &Maker{be: poisonBackend{b, t}}
	}},
	{"cuda", func(t testing.TB) *Maker {
		g := testGPU(t)
		return &Maker{be: poisonBackend{g.be, t}, gpu: g.gpu}
	}},
}

// forEachBackend runs f once per backend as a subtest. With a GPU the
// tests that use it run in parallel with each other: most of their time is
// NVRTC compiling the many kernels the op tables need, which parallelises.
func forEachBackend(t *testing.T, f func(t *testing.T, d *Maker)) {
	if gpuErr() == nil {
		t.Parallel()
	}
	forEachBackendAlone(t, f)
}

// forEachBackendAlone is forEachBackend for a test that provokes index
// errors on the GPU: the device's error flag is reported at the next
// synchronisation of any array on it, so no other test may run meanwhile.
// A top-level test that is not parallel runs before the parallel ones.
func forEachBackendAlone(t *testing.T, f func(t *testing.T, d *Maker)) {
	for _, bc := range backendCases {
		t.Run(bc.name, func(t *testing.T) { f(t, bc.dev(t)) })
	}
}

// host is an array's logical values in row-major order, exactly (every
// value of the test dtypes fits a float64 here).
type host struct {
	shape []int
	v     []float64
}

func (h host) size() int { return backend.Size(h.shape) }

func newRand(t testing.TB) *rand.Rand {
	seed := uint64(len(t.Name())) * 0x9e3779b97f4a7c15
	for _, c := range t.Name() {
		seed = seed*31 + uint64(c)
	}
	return rand.New(rand.NewPCG(seed, 42))
}

// randHost draws values suited to the dtype: floats uniform in [lo, hi)
// rounded to the dtype, integers uniform in their test range, bools fair.
func randHost(r *rand.Rand, dt DType, shape []int, lo, hi float64) host {
	h := host{shape: append([]int{}, shape...), v: make([]float64, backend.Size(shape))}
	for i := range h.v {
		switch dt {
		case Float32:
			h.v[i] = float64(float32(lo + (hi-lo)*r.Float64()))
		case Float64:
			h.v[i] = lo + (hi-lo)*r.Float64()
		case Bool:
			h.v[i] = float64(r.IntN(2))
		default:
			l, u := math.Max(lo, intMin(dt)), math.Min(hi, intMax(dt))
			h.v[i] = math.Floor(l + (u-l+1)*r.Float64())
			h.v[i] = math.Min(h.v[i], u)
		}
	}
	return h
}

func intMin(dt DType) float64 {
	switch dt {
	case Uint8:
		return 0
	case Int32:
		return math.MinInt32
	}
	return -1 << 62
}

func intMax(dt DType) float64 {
	switch dt {
	case Uint8:
		return 255
	case Int32:
		return math.MaxInt32
	}
	return 1 << 62
}

func typed(dt DType, v []float64) any {
	switch dt {
	case Bool:
		s := make([]bool, len(v))
		for i, x := range v {
			s[i] = x != 0
		}
		return s
	case Uint8:
		s := make([]uint8, len(v))
		for i, x := range v {
			s[i] = uint8(x)
		}
		return s
	case Int32:
		s := make([]int32, len(v))
		for i, x := range v {
			s[i] = int32(x)
		}
		return s
	case Int64:
		s := make([]int64, len(v))
		for i, x := range v {
			s[i] = int64(x)
		}
		return s
	case Float32:
		s := make([]float32, len(v))
		for i, x := range v {
			s[i] = float32(x)
		}
		return s
	}
	return append([]float64{}, v...)
}

func fromTyped(d *Maker, data any, shape []int) *Array {
	if len(shape) == 0 {
		return fromTyped(d, data, []int{1}).Reshape()
	}
	switch s := data.(type) {
	case []bool:
		return fromSliceOn(d, s, shape...)
	case []uint8:
		return fromSliceOn(d, s, shape...)
	case []int32:
		return fromSliceOn(d, s, shape...)
	case []int64:
		return fromSliceOn(d, s, shape...)
	case []float32:
		return fromSliceOn(d, s, shape...)
	}
	return fromSliceOn(d, data.([]float64), shape...)
}

// layoutKind is how an operand is laid out in memory.
type layoutKind int

const (
	contiguous layoutKind = iota
	transposed            // a Transpose() view of the reversed-shape array
	stepped               // every other element along each axis of a bigger array
	reversed              // a [::-1] view along every axis
)

var layoutKinds = []layoutKind{contiguous, transposed, stepped, reversed}

func (k layoutKind) String() string {
	return [...]string{"contiguous", "transposed", "stepped", "reversed"}[k]
}

// makeArray returns an array with h's logical values laid out as kind.
func makeArray(t testing.TB, d *Maker, dt DType, h host, kind layoutKind) *Array {
	t.Helper()
	r := len(h.shape)
	var a *Array
	switch {
	case kind == contiguous || r == 0:
		a = fromTyped(d, typed(dt, h.v), h.shape)
	case kind == transposed:
		rs := make([]int, r)
		for i := range rs {
			rs[i] = h.shape[r-1-i]
		}
		src := make([]float64, len(h.v))
		forIndex(rs, func(flat int, idx []int) {
			orig := make([]int, r)
			for i := range idx {
				orig[r-1-i] = idx[i]
			}
			src[flat] = h.v[flatIndex(h.shape, orig)]
		})
		a = fromTyped(d, typed(dt, src), rs).Transpose()
	case kind == stepped:
		big := make([]int, r)
		for i, n := range h.shape {
			big[i] = 2 * n
		}
		src := make([]float64, backend.Size(big))
		for i := range src {
			src[i] = 77 // poison in the skipped elements
		}
		forIndex(h.shape, func(flat int, idx []int) {
			bi := make([]int, r)
			for i := range idx {
				bi[i] = 2 * idx[i]
			}
			src[flatIndex(big, bi)] = h.v[flat]
		})
		idx := make([]Index, r)
		for i := range idx {
			idx[i] = S(None, None, 2)
		}
		a = fromTyped(d, typed(dt, src), big).Slice(idx...)
	case kind == reversed:
		src := make([]float64, len(h.v))
		for i := range src {
			src[i] = h.v[len(h.v)-1-i]
		}
		idx := make([]Index, r)
		for i := range idx {
			idx[i] = S(None, None, -1)
		}
		a = fromTyped(d, typed(dt, src), h.shape).Slice(idx...)
	}
	if err := a.Err(); err != nil {
		t.Fatalf("makeArray %v %v %v: %v", dt, h.shape, kind, err)
	}
	if got := a.Shape(); !sameShape(got, h.shape) {
		t.Fatalf("makeArray %v: shape %v, want %v", kind, got, h.shape)
	}
	return a
}

func flatIndex(shape, idx []int) int {
	f := 0
	for i, n := range shape {
		f = f*n + idx[i]
	}
	return f
}

func forIndex(shape []int, f func(flat int, idx []int)) {
	n := backend.Size(shape)
	idx := make([]int, len(shape))
	for flat := 0; flat < n; flat++ {
		f(flat, idx)
		for d := len(shape) - 1; d >= 0; d-- {
			idx[d]++
			if idx[d] < shape[d] {
				break
			}
			idx[d] = 0
		}
	}
}

// broadcastHost returns h's values broadcast to shape.
func broadcastHost(h host, shape []int) []float64 {
	out := make([]float64, backend.Size(shape))
	k := len(shape) - len(h.shape)
	forIndex(shape, func(flat int, idx []int) {
		src := make([]int, len(h.shape))
		for i := range src {
			if h.shape[i] != 1 {
				src[i] = idx[k+i]
			}
		}
		out[flat] = h.v[flatIndex(h.shape, src)]
	})
	return out
}

// readHost evaluates an array and returns its values (as float64).
func readHost(t testing.TB, a *Array) host {
	t.Helper()
	return readCase(t, "", a)
}

// readCase is readHost naming the case in a failure (on the GPU, the
// case that faulted).
func readCase(t testing.TB, what string, a *Array) host {
	t.Helper()
	v, err := ToSlice[float64](a)
	if err != nil {
		if what != "" {
			t.Fatalf("%s: read: %v", what, err)
		}
		t.Fatalf("read: %v", err)
	}
	return host{shape: a.Shape(), v: v}
}

// roundTo rounds a float64 reference value the way storing it in dt does.
func roundTo(dt DType, x float64) float64 {
	switch dt {
	case Float32:
		return float64(float32(x))
	case Bool:
		if x != 0 {
			return 1
		}
		return 0
	case Uint8:
		return float64(uint8(int64(x)))
	case Int32:
		return float64(int32(int64(x)))
	}
	return x
}

// tolerance is the documented per-dtype relative tolerance of an operation
// class against a float64 reference (see doc.go).
type tolerance struct{ f32, f64 float64 }

var (
	exact     = tolerance{0, 0}
	simpleTol = tolerance{1e-6, 1e-14} // + - * / and the like, conversions
	transTol  = tolerance{2e-6, 1e-13} // exp, log, sin, tanh, pow, ...
	reduceTol = tolerance{2e-6, 1e-12} // sums, means, softmax
	matmulTol = tolerance{1e-5, 1e-12} // relative to sum |a||b|
)

func (tl tolerance) of(dt DType) float64 {
	switch dt {
	case Float32:
		return tl.f32
	case Float64:
		return tl.f64
	}
	return 0
}

// near compares one value with a tolerance relative to max(|want|, 1), so
// absolute below 1; NaN equals NaN, infinities must match exactly.
func near(got, want, rtol float64) bool {
	if math.IsNaN(want) {
		return math.IsNaN(got)
	}
	if math.IsInf(want, 0) || rtol == 0 {
		return got == want
	}
	return math.Abs(got-want) <= rtol*math.Max(math.Abs(want), 1)
}

func checkHost(t testing.TB, what string, got host, wantShape []int, want []float64, rtol float64) {
	t.Helper()
	if !sameShape(got.shape, wantShape) {
		t.Fatalf("%s: shape %v, want %v", what, got.shape, wantShape)
	}
	bad := 0
	for i := range want {
		if !near(got.v[i], want[i], rtol) {
			if bad < 5 {
				t.Errorf("%s: element %d = %v, want %v", what, i, got.v[i], want[i])
			}
			bad++
		}
	}
	if bad > 0 {
		t.Fatalf("%s: %d of %d elements wrong", what, bad, len(want))
	}
}

// newDevice returns a Maker over a backend of the test's choice, on no
// gocu device.
func newDevice(be backend.Backend, g *gpu.Backend) *Maker {
	m := &Maker{be: be, gpu: g}
	m.prep, _ = be.(backend.Preparer)
	m.precision.Store(-1)
	return m
}

// saturate is the reference cast of a float to integer dtype d: toward
// zero, clamped to d's range, NaN to 0.
func saturate(f float64, d DType) int64 {
	if math.IsNaN(f) {
		return 0
	}
	mn, mx := int64(math.MinInt64), int64(math.MaxInt64)
	switch d {
	case Uint8:
		mn, mx = 0, math.MaxUint8
	case Int8:
		mn, mx = math.MinInt8, math.MaxInt8
	case Int32:
		mn, mx = math.MinInt32, math.MaxInt32
	}
	switch t := math.Trunc(f); {
	case t <= float64(mn):
		return mn
	case t >= float64(mx):
		return mx
	default:
		return int64(t)
	}
}
